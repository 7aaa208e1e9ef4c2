/* build.h — from a checked IR graph to driver objects: the loaded code
 * (modules and functions, checked against the signatures), one launch
 * description per kernel node, the effective kind of every edge (PDL safety),
 * and the CUgraph itself.  Each piece is separate so that `cudag bench` can
 * launch the same descriptions on a stream, or build the graph another way. */
#ifndef CUDAG_BUILD_H
#define CUDAG_BUILD_H

#include "cudag.h"
#include "lib/driver.h"

#include <stdint.h>

typedef struct cudag__diag cudag__diag;
typedef struct cudag__built cudag__built;
typedef struct cudag__code cudag__code;
typedef struct cudag__gpu cudag__gpu;
typedef struct cudag__launches cudag__launches;

/* Everything in this header expects gpu->ctx to be current on the calling
 * thread. */

/* ---- code: modules and functions ------------------------------------- */

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

/* ---- launch descriptions ---------------------------------------------- */

/*
 * Describes every kernel node of g's tree (l->k in the flat numbering,
 * ir/graph.h topo.tree) with the buffers' device pointers bufs[]
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
 * downstream kernel (the kernel kind's pdl_wait step) cannot honour a programmatic or
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

#endif /* CUDAG_BUILD_H */
