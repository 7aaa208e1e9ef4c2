/* build.h — from a checked IR graph to driver objects: the loaded code
 * (modules and functions, checked against the signatures), one launch
 * description per kernel node, the effective kind of every edge (PDL safety),
 * and the CUgraph itself.  Each piece is separate so that `cudag bench` can
 * launch the same descriptions on a stream, or build the graph another way. */
#ifndef CUDAG_BUILD_H
#define CUDAG_BUILD_H

#include "driver.h"
#include "ir.h"
#include "values.h"

/* The device side an exec works in.  Everything in this header expects ctx
 * to be current on the calling thread. */
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

/*
 * Loads every module that a kernel node needs: a fatbin, cubin or PTX file
 * with cuLibraryLoadFromFile; a CUDA source compiled for the device with
 * NVRTC through the compile cache (CUDAG_NO_CACHE in flags: without it) and
 * loaded with cuLibraryLoadData.  Then looks up each used signature's
 * symbol (or takes the program's handle), checks its parameters with
 * cuFuncGetParamInfo (the count from the code where the CPU can read it),
 * and records its attributes.  Compile errors and warnings go to d (whose
 * first error is err's); other errors carry the position of the first node
 * that uses the kernel (else the signature's or module's).  On error
 * everything loaded so far is released and *c is zeroed.
 */
int cudag__code_load(const cudag__gpu *gpu, const cudag_graph *g,
                     unsigned flags, cudag__diag *d, cudag__code *c,
                     cudag_error *err);

/* Unloads and frees; accepts a zeroed or partly loaded *c; leaves it zeroed. */
void cudag__code_free(const cudag__gpu *gpu, cudag__code *c);

/* True when signature `sig`'s loaded code may be the downstream end of a
 * programmatic or launch-order edge: declared pdl, and code built for sm_90 or
 * newer (a PTX JIT from an older virtual architecture lost the wait). */
bool cudag__code_can_wait(const cudag_graph *g, const cudag__code *c,
                          uint32_t sig);

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
     * priority when has_priority (kind_kernel.c sets both on the node). */
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

/*
 * Describes every kernel node of g's tree (l->k in the flat numbering,
 * ir.h topo.tree) with the buffers' device pointers bufs[]
 * (one per buffer).  Raises a function's dynamic shared memory limit when a
 * node asks for more than 48 KiB, and refuses more than the device allows
 * (CUDAG_ELIMIT at the node's smem).  On error *l is zeroed.
 */
int cudag__launch_prepare(const cudag__gpu *gpu, const cudag_graph *g,
                          cudag__code *c, const CUdeviceptr *bufs,
                          cudag__launches *l, cudag_error *err);
void cudag__launch_free(cudag__launches *l);

/* ---- edges ------------------------------------------------------------- */

/*
 * Decides how each edge of g's tree is built (kinds[i] for edge i of the
 * flat numbering): as written, or
 * downgraded to full when the device (compute capability < 9.0) or the
 * downstream kernel (cudag__code_can_wait) cannot honour a programmatic or
 * launch-order edge.  Each downgrade is reported to d as a warning naming the
 * edge and its position, or, with CUDAG_STRICT in flags, as a CUDAG_EPDL
 * error.  CUDAG_NO_PDL builds every such edge full, silently.  Returns the
 * status of d's first error; *downgraded counts the warnings' edges.
 */
int cudag__edge_kinds(const cudag__gpu *gpu, const cudag_graph *g,
                      const cudag__code *c, unsigned flags, cudag__diag *d,
                      uint8_t *kinds, unsigned *downgraded);

/* ---- the CUgraph -------------------------------------------------------- */

/* How cudag__build lays out the dependencies. */
enum {
    CUDAG__BUILD_EDGES = 0,     /* the edges, with kinds[] */
    CUDAG__BUILD_ALL_FULL = 1,  /* the edges, every one full */
    CUDAG__BUILD_SERIAL = 2     /* one chain in topological order: consecutive
                                   nodes keep the kind (kinds[]) of an edge
                                   written between them, others are full */
};

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

/*
 * Creates the CUgraph: one node per IR node in index order, then the
 * dependencies one edge at a time in a deterministic order (the checker's
 * CSR order by (from, to)); each sub-graph likewise into the driver graph
 * its node made (a conditional body), with each graph's own topological
 * order in SERIAL mode.  l and kinds cover the tree's flat numbering; kinds
 * may be NULL for all-full.  starts: per condition, the default value to
 * build with (CUDAG_COND_NO_DEFAULT: none), or NULL for the declared ones.
 * Driver failures name the node or edge and carry its position.  On error
 * *b is zeroed and nothing is left to free.
 */
int cudag__build(const cudag__gpu *gpu, const cudag_graph *g,
                 const cudag__launches *l, const CUdeviceptr *bufs,
                 const uint8_t *kinds, const int64_t *starts, int mode,
                 cudag__built *b, cudag_error *err);
void cudag__built_free(const cudag__gpu *gpu, cudag__built *b);

/* The node (flat numbering) whose handle is h, or CUDAG__NONE. */
uint32_t cudag__built_find(const cudag__built *b, CUgraphNode h);

/* The driver parameters of a memset or memcpy node for buffers at bufs[]. */
void cudag__memset_params(const cudag_graph *g, const cudag__node *n,
                          const CUdeviceptr *bufs, CUDA_MEMSET_NODE_PARAMS *p);
void cudag__memcpy_params(const cudag_graph *g, const cudag__node *n,
                          const CUdeviceptr *bufs, CUDA_MEMCPY3D *p);

/* The kernel node parameters of a launch description. */
void cudag__kernel_params(const cudag__launch *k, CUDA_KERNEL_NODE_PARAMS *p);

#endif /* CUDAG_BUILD_H */
