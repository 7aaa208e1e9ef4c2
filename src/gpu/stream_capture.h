/* stream_capture.h — work recorded on a stream by stream capture, turned into a
 * child-graph node: how gemm nodes record cuBLASLt's kernels and capture
 * nodes the program's own work (capture.c). */
#ifndef CUDAG_CAPTURE_H
#define CUDAG_CAPTURE_H

#include "cudag.h"
#include "lib/driver.h"

typedef struct cudag__gpu cudag__gpu;
typedef struct cudag__node cudag__node;

/* Records work on stream s.  Returns CUDAG_OK, or a status with err filled
 * (naming what failed). */
typedef int (*cudag__record_fn)(void *user, CUstream s, cudag_error *err);

/* Calls fn(user, s, err) on a fresh stream s of gpu's context while it is
 * being captured (stream_capture.c's capture: what breaks a capture, how
 * errors name node n), then adds the recorded graph to `graph` (which
 * copies it) as one child-graph node with no dependencies, its handle in
 * *out. */
int cudag__capture_node(const cudag__gpu *gpu, const cudag__node *n,
                        cudag__record_fn fn, void *user, CUgraph graph,
                        CUgraphNode *out, cudag_error *err);

/* The same capture, then the recorded graph given to child-graph node h of
 * the instantiated graph ge (cuGraphExecChildGraphNodeSetParams: the same
 * topology as instantiated, new parameters).  ge is left as it was when
 * this fails. */
int cudag__capture_update(const cudag__gpu *gpu, const cudag__node *n,
                          cudag__record_fn fn, void *user, CUgraphExec ge,
                          CUgraphNode h, cudag_error *err);

#endif /* CUDAG_CAPTURE_H */
