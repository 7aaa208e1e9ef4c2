/* gpu.h — the device side's objects: the device and its context, the code
 * loaded for a graph, the launch description of each kernel node and the
 * CUgraph built.  Its own file, below the kinds, because the kinds' steps
 * take and fill these types while build.h, which makes them, calls the
 * kinds: the types here, the functions in build/build.h. */
#ifndef CUDAG_GPU_H
#define CUDAG_GPU_H

#include "base/alloc.h"
#include "lib/driver.h"

#include <stdbool.h>
#include <stdint.h>

struct cudag__code_entry;

/* The device side an exec works in.  Everything build.h does with it
 * expects ctx to be current on the calling thread. */
typedef struct cudag__gpu {
    const cudag__drv *drv;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    int cc_major, cc_minor;     /* compute capability */
    int smem_optin;             /* most shared memory a block may opt in to */
    int driver_version;         /* cuDriverGetVersion; 0 when unknown */
    char name[256];             /* the device's name */
} cudag__gpu;

/* ---- code: modules and functions ------------------------------------- */

typedef struct cudag__code {
    uint32_t nmodules, nsigs;
    CUlibrary *libs;            /* per module; NULL when no node needs it */
    CUfunction *funcs;          /* per signature; NULL when no node uses it */
    int *static_smem;           /* per signature: static shared bytes */
    int *smem_set;              /* per signature: dynamic limit raised to */
    int *binary_version;        /* per signature: CU_FUNC_ATTRIBUTE_… ×10+minor */
    int *ptx_version;           /* per signature: 0 for SASS-only code */
    /* Per signature: the symbol NVRTC lowered its expression to (NULL: the
     * signature's symbol), and its entry point as the CPU read it from the
     * code (parameters, waits; NULL when unknown).  Both point into arena. */
    const char **symbols;
    const struct cudag__code_entry **entries;
    cudag__arena arena;
    unsigned compiled, cached;  /* source modules compiled / read from the
                                   compile cache */
    /* Per module: where its code came from (cudag_module_origin) and the
     * host time that took (compile or cache read, and the driver's load). */
    uint8_t *origin;
    uint64_t *load_ns;
    bool cache_warned;          /* an unwritable cache was reported */
} cudag__code;

/* ---- launch descriptions ---------------------------------------------- */

/* Everything cuGraphAddKernelNode or cuLaunchKernelEx needs for one kernel
 * node.  params[i] points at vals[i], whose first bytes hold parameter i as
 * the kernel reads it. */
typedef struct cudag__launch {
    CUfunction fn;
    unsigned grid[3], block[3], smem;
    uint32_t nparams;
    void **params;
    uint64_t *vals;
    uint32_t *pbuf;             /* per param: buffer index of a pointer arg */
    uint64_t *poff;             /* per param: its offset in elements */
    /* Launch attributes: cluster dimensions ({0, 0, 0}: none) and the
     * priority when has_priority (kinds/kernel.c sets both on the node). */
    unsigned cluster[3];
    int priority;
    bool has_priority;
} cudag__launch;

typedef struct cudag__launches {
    uint32_t nnodes;
    cudag__launch *k;           /* per node of the tree; zeroed for nodes
                                   that launch no kernel */
    /* The per-parameter arrays of every node, one allocation each. */
    void **params;
    uint64_t *vals;
    uint32_t *pbuf;
    uint64_t *poff;
    /* Some node has a priority: the exec is instantiated with
     * CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, without which the
     * driver ignores the nodes' priorities. */
    bool priorities;
} cudag__launches;

/* ---- the CUgraph -------------------------------------------------------- */

/* What a node's driver objects use for as long as the built graph, or an
 * exec instantiated from it, lives (a gemm's workspace): a list the built
 * graph owns.  A kind embeds it first in a struct of its own. */
typedef struct cudag__keep {
    struct cudag__keep *next;
    uint32_t node;              /* the IR node it belongs to */
    /* Frees what k holds, and k; its context is current. */
    void (*release)(const cudag__gpu *gpu, struct cudag__keep *k);
} cudag__keep;

typedef struct cudag__built {
    CUgraph graph;
    CUgraphNode *nodes;         /* per node of the tree (flat numbering) */
    uint32_t nnodes;
    CUgraphConditionalHandle *handles;  /* per condition */
    cudag__keep *keep;          /* released after the graph is destroyed */
} cudag__built;

#endif /* CUDAG_GPU_H */
