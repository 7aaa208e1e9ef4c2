/* stream_capture.c — records work on a stream into a CUDA graph by stream capture
 * and adds it as a child-graph node (or gives it to one in an instantiated
 * graph), turning what the driver says about a broken capture into a
 * sentence that names the node. */
#include "gpu/stream_capture.h"
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <string.h>

/* What a failed capture most likely means, for the message. */
static const char *capture_hint(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        return ": something in it synchronized or allocated (a stream or "
               "device synchronize, a blocking copy, cuMemAlloc, an event "
               "query), which a capture cannot hold";
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
        return ": work forked onto another stream was not joined back into "
               "the captured stream";
    case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
        return ": the capture was ended elsewhere (the work must return with "
               "the stream still capturing)";
    default:
        return "";
    }
}

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
static int capture(const cudag__gpu *gpu, const cudag__node *n,
                   cudag__record_fn fn, void *user, CUgraph *child,
                   cudag_error *err)
{
    const cudag__drv *d = gpu->drv;
    *child = NULL;
    CUstream s = NULL;
    CUresult r = d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, n->pos,
                              "cuStreamCreate: a stream to capture node '%s' "
                              "on",
                              n->name);
    int rc = CUDAG_OK;
    r = d->cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS) {
        rc = cudag__cu_fail(err, d, r, n->pos,
                            "cuStreamBeginCapture for node '%s'", n->name);
        goto out;
    }
    cudag_error why;
    cudag__error_clear(&why);
    rc = fn(user, s, &why);
    /* The capture ends whatever fn did, so that nothing stays capturing. */
    CUgraph got = NULL;
    r = d->cuStreamEndCapture(s, &got);
    if (r != CUDA_SUCCESS) {
        /* A broken capture makes the work's later calls fail too: the
         * capture's reason comes first, what fn said after it. */
        char then[1100] = "";
        if (rc != CUDAG_OK)
            snprintf(then, sizeof then, " (then %s)", why.message);
        rc = cudag__cu_fail(err, d, r, n->pos,
                            "cuStreamEndCapture: the work of node '%s' could "
                            "not be captured%s%s",
                            n->name, capture_hint(r), then);
    } else if (rc != CUDAG_OK) {
        if (err)
            *err = why;
        cudag__error_prefix(err, n->pos, "node '%s'", n->name);
    }
    if (rc == CUDAG_OK && !got)
        rc = cudag__fail_at(err, CUDAG_ECUDA, n->pos,
                            "cuStreamEndCapture: node '%s' captured no graph",
                            n->name);
    if (rc == CUDAG_OK)
        *child = got;
    else if (got)
        (void)d->cuGraphDestroy(got);
out:
    (void)d->cuStreamDestroy(s);
    return rc;
}

int cudag__capture_node(const cudag__gpu *gpu, const cudag__node *n,
                        cudag__record_fn fn, void *user, CUgraph graph,
                        CUgraphNode *out, cudag_error *err)
{
    CUgraph child;
    int rc = capture(gpu, n, fn, user, &child, err);
    if (rc != CUDAG_OK)
        return rc;
    CUresult r =
        gpu->drv->cuGraphAddChildGraphNode(out, graph, NULL, 0, child);
    if (r != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, gpu->drv, r, n->pos,
                            "cuGraphAddChildGraphNode for node '%s'", n->name);
    /* The node holds a copy. */
    (void)gpu->drv->cuGraphDestroy(child);
    return rc;
}

int cudag__capture_update(const cudag__gpu *gpu, const cudag__node *n,
                          cudag__record_fn fn, void *user, CUgraphExec ge,
                          CUgraphNode h, cudag_error *err)
{
    CUgraph child;
    int rc = capture(gpu, n, fn, user, &child, err);
    if (rc != CUDAG_OK)
        return rc;
    CUresult r = gpu->drv->cuGraphExecChildGraphNodeSetParams(ge, h, child);
    if (r != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, gpu->drv, r, n->pos,
                            "cuGraphExecChildGraphNodeSetParams: node '%s'",
                            n->name);
    (void)gpu->drv->cuGraphDestroy(child);
    return rc;
}
