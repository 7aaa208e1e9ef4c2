/* capture.h — work recorded on a stream by stream capture, turned into a
 * child-graph node: how gemm nodes record cuBLASLt's kernels and capture
 * nodes the program's own work (capture.c). */
#ifndef CUDAG_CAPTURE_H
#define CUDAG_CAPTURE_H

#include "build.h"

/* Records work on stream s.  Returns CUDAG_OK, or a status with err filled
 * (naming what failed). */
typedef int (*cudag__record_fn)(void *user, CUstream s, cudag_error *err);

/*
 * Calls fn(user, s, err) on a fresh stream s of gpu's context while it is
 * being captured (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: a synchronizing call
 * or an allocation on this thread breaks the capture), and returns what was
 * recorded in *child, a graph the caller destroys.  Errors name node n and
 * carry its position: fn's own failure (its message kept, prefixed with the
 * node), or the driver refusing the capture, with the reason a capture
 * cannot hold in words.  On error *child is NULL and the stream, the capture
 * and any partial graph are gone.
 */
int cudag__capture(const cudag__gpu *gpu, const cudag__node *n,
                   cudag__record_fn fn, void *user, CUgraph *child,
                   cudag_error *err);

/* cudag__capture, then the recorded graph added to `graph` (which copies
 * it) as one child-graph node with no dependencies, its handle in *out. */
int cudag__capture_node(const cudag__gpu *gpu, const cudag__node *n,
                        cudag__record_fn fn, void *user, CUgraph graph,
                        CUgraphNode *out, cudag_error *err);

/* cudag__capture, then the recorded graph given to child-graph node h of
 * the instantiated graph ge (cuGraphExecChildGraphNodeSetParams: the same
 * topology as instantiated, new parameters).  ge is left as it was when
 * this fails. */
int cudag__capture_update(const cudag__gpu *gpu, const cudag__node *n,
                          cudag__record_fn fn, void *user, CUgraphExec ge,
                          CUgraphNode h, cudag_error *err);

#endif /* CUDAG_CAPTURE_H */
