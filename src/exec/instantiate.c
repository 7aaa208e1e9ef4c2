/* instantiate.c — a graph instantiated: the device, its context and stream
 * opened, the code loaded, the buffers allocated (init.c), the CUgraph built
 * and instantiated; the exec destroyed; and a device's primary context
 * retained for a caller (cudag_device_retain / _release).  Its own file: the
 * stages that make an exec and the one that unmakes it. */
#include "exec/instantiate.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "gpu/gpu.h"
#include "build/build.h"
#include "exec/exec.h"
#include "exec/init.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

/* ---- instantiation stages ---------------------------------------------------- */

/* The CUdevice of ordinal `device`, refused with the machine's count when
 * there is none. */
static int find_device(const cudag__drv *d, int device, CUdevice *dev,
                       cudag_error *err)
{
    int count = 0;
    CUresult r;
    if ((r = d->cuDeviceGetCount(&count)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuDeviceGetCount");
    if (device < 0 || device >= count)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "there is no CUDA device %d (this machine "
                              "has %d)",
                              device, count);
    if ((r = d->cuDeviceGet(dev, device)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuDeviceGet(%d)",
                              device);
    return CUDAG_OK;
}

/* The driver and device `device` for cudag_device_retain / _release. */
static int device_of(int device, const cudag__drv **d, CUdevice *dev,
                     cudag_error *err)
{
    cudag__error_clear(err);
    int rc = cudag__driver(d, err);
    return rc == CUDAG_OK ? find_device(*d, device, dev, err) : rc;
}

int cudag_device_retain(int device, cudag_error *err)
{
    const cudag__drv *d;
    CUdevice dev;
    int rc = device_of(device, &d, &dev, err);
    if (rc != CUDAG_OK)
        return rc;
    CUcontext ctx;
    CUresult r = d->cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuDevicePrimaryCtxRetain(device %d)", device);
    return CUDAG_OK;
}

int cudag_device_release(int device, cudag_error *err)
{
    const cudag__drv *d;
    CUdevice dev;
    int rc = device_of(device, &d, &dev, err);
    if (rc != CUDAG_OK)
        return rc;
    CUresult r = d->cuDevicePrimaryCtxRelease(dev);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuDevicePrimaryCtxRelease(device %d)", device);
    return CUDAG_OK;
}

/* Opens the device, context and stream.  *pushed tells whether the
 * context was made current (and must be popped), whatever the result. */
static int open_device(cudag_exec *x, const cudag_exec_options *o,
                       bool *pushed, cudag_error *err)
{
    *pushed = false;
    const cudag__drv *d = x->gpu.drv;
    CUresult r;
    if (o->context) {
        x->gpu.ctx = (CUcontext)o->context;
        r = d->cuCtxPushCurrent(x->gpu.ctx);
        if (r != CUDA_SUCCESS) {
            x->gpu.ctx = NULL;
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                  "cuCtxPushCurrent: the context passed in "
                                  "cudag_exec_options");
        }
        *pushed = true;
        if ((r = d->cuCtxGetDevice(&x->gpu.dev)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuCtxGetDevice");
    } else {
        int rc = find_device(d, o->device, &x->gpu.dev, err);
        if (rc != CUDAG_OK)
            return rc;
        CUcontext ctx = NULL;
        if ((r = d->cuDevicePrimaryCtxRetain(&ctx, x->gpu.dev)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                  "cuDevicePrimaryCtxRetain(device %d)",
                                  o->device);
        x->gpu.ctx = ctx;
        x->own_ctx = true;
        if ((r = d->cuCtxPushCurrent(ctx)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuCtxPushCurrent");
        *pushed = true;
    }
    static const struct {
        CUdevice_attribute a;
        const char *name;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
         "COMPUTE_CAPABILITY_MAJOR"},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
         "COMPUTE_CAPABILITY_MINOR"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
    };
    int *dst[] = {&x->gpu.cc_major, &x->gpu.cc_minor, &x->gpu.smem_optin};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((r = d->cuDeviceGetAttribute(dst[i], attrs[i].a, x->gpu.dev)) !=
            CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                  "cuDeviceGetAttribute(%s)", attrs[i].name);
    if ((r = d->cuDeviceGetName(x->gpu.name, (int)sizeof x->gpu.name - 1,
                                x->gpu.dev)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuDeviceGetName");
    if ((r = d->cuDriverGetVersion(&x->gpu.driver_version)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuDriverGetVersion");
    if (o->stream) {
        x->gpu.stream = (CUstream)o->stream;
    } else {
        CUstream s = NULL;
        /* Non-blocking: replays must not wait for, nor hold up, work the
         * host program puts on the legacy default stream. */
        if ((r = d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuStreamCreate");
        x->gpu.stream = s;
        x->own_stream = true;
    }
    return CUDAG_OK;
}

/* Builds the CUgraph of graph g into *b, with launch descriptions *l and
 * edge kinds decided (and reported) here.  On error nothing is left. */
int cudag__exec_build(cudag_exec *x, const cudag_graph *g, cudag__launches *l,
                      cudag__built *b, unsigned *downgraded, cudag_error *err)
{
    memset(l, 0, sizeof *l);
    memset(b, 0, sizeof *b);
    uint8_t *kinds = cudag__calloc((size_t)cudag__tree_nedges(g) + 1, 1);
    if (!kinds)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory building the graph");
    int rc = cudag__launch_prepare(&x->gpu, g, &x->code, x->bufs, l, err);
    if (rc == CUDAG_OK) {
        cudag_options co;
        memset(&co, 0, sizeof co);
        co.size = sizeof co;
        co.diag = x->diag;
        co.diag_user = x->diag_user;
        co.flags = x->flags;
        cudag__diag dg;
        cudag__diag_init(&dg, &co, err);
        cudag__edge_kinds(&x->gpu, g, &x->code, x->flags, &dg, kinds,
                          downgraded);
        rc = cudag__diag_finish(&dg);
    }
    if (rc == CUDAG_OK)
        rc = cudag__build(&x->gpu, g, l, x->bufs, kinds, x->starts,
                          x->flags & CUDAG_SERIALIZE ? CUDAG__BUILD_SERIAL
                                                     : CUDAG__BUILD_EDGES,
                          b, err);
    cudag__free(kinds);
    if (rc != CUDAG_OK)
        cudag__launch_free(l);
    return rc;
}

static const char *instantiate_result(CUgraphInstantiateResult r)
{
    switch (r) {
    case CUDA_GRAPH_INSTANTIATE_SUCCESS:
        return "success";
    case CUDA_GRAPH_INSTANTIATE_ERROR:
        return "CUDA_GRAPH_INSTANTIATE_ERROR";
    case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE:
        return "CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE";
    case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
        return "CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED";
    case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
        return "CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED";
    default:
        return "an unknown instantiate result";
    }
}

cuuint64_t cudag__instantiate_flags(const cudag_exec *x)
{
    /* Node priorities count only with their flag; a graph without them is
     * instantiated as before. */
    return (x->flags & CUDAG_DEVICE_LAUNCH
                ? CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH
                : 0) |
           (x->launch.priorities ? CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY
                                 : 0);
}

const char *cudag__instantiate_hint(const cudag_exec *x)
{
    return x->flags & CUDAG_DEVICE_LAUNCH
               ? "; a graph instantiated for device launch "
                 "(CUDAG_DEVICE_LAUNCH) may hold only kernel, memset, memcpy "
                 "and child-graph nodes"
               : "";
}

static int instantiate(cudag_exec *x, cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    CUDA_GRAPH_INSTANTIATE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.flags = cudag__instantiate_flags(x);
    CUgraphExec ge = NULL;
    CUresult r = d->cuGraphInstantiateWithParams(&ge, x->built.graph, &p);
    if (r != CUDA_SUCCESS || p.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) {
        if (r == CUDA_SUCCESS) {
            /* Not documented to happen; never keep a half-made exec. */
            if (ge)
                d->cuGraphExecDestroy(ge);
            r = CUDA_ERROR_UNKNOWN;
        }
        uint32_t n = cudag__built_find(&x->built, p.hErrNode_out);
        if (n != CUDAG__NONE)
            return cudag__cu_fail(err, d, r, cudag__tree_node(x->g, n)->pos,
                                  "cuGraphInstantiateWithParams failed (%s) at "
                                  "node '%s'%s",
                                  instantiate_result(p.result_out),
                                  cudag__tree_node(x->g, n)->name,
                                  cudag__instantiate_hint(x));
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuGraphInstantiateWithParams failed (%s)%s",
                              instantiate_result(p.result_out),
                              cudag__instantiate_hint(x));
    }
    x->gexec = ge;
    if ((r = d->cuGraphUpload(ge, x->gpu.stream)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuGraphUpload");
    /* Initial contents were copied on the same stream: when this returns,
     * the exec is ready and the timing covers the upload. */
    if ((r = d->cuStreamSynchronize(x->gpu.stream)) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuStreamSynchronize");
    return CUDAG_OK;
}

/* cudag_instantiate's arguments checked, and the caller's options copied
 * into *o. */
static int take_args(const cudag_graph *g, const cudag_exec_options *opts,
                     cudag_exec **out, cudag_exec_options *o,
                     cudag_error *err)
{
    cudag__error_clear(err);
    if (!out)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_instantiate: out is NULL");
    *out = NULL;
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_instantiate: graph is NULL");
    if (g->parent)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_instantiate: graph '%s' is a body of "
                              "graph '%s': instantiate '%s'",
                              g->name, g->root->name, g->root->name);
    if (!g->checked)
        return cudag__fail_at(err, CUDAG_ESTATE, CUDAG__NOPOS,
                              "graph '%s' has not passed cudag_check()",
                              g->name);
    /* Options from a caller built against an older, smaller struct: take
     * what it has; size 0 means this version's struct (as for loading). */
    memset(o, 0, sizeof *o);
    if (opts) {
        size_t n = opts->size && opts->size < sizeof *o ? opts->size
                                                        : sizeof *o;
        memcpy(o, opts, n);
    }
    return CUDAG_OK;
}

/* A new exec of g with options o and driver d: its per-buffer and
 * per-condition arrays allocated, the conditions' starts their defaults;
 * nothing opened yet.  NULL, with nothing left, when out of memory. */
static cudag_exec *exec_new(const cudag_graph *g, const cudag_exec_options *o,
                            const cudag__drv *d)
{
    cudag_exec *x = cudag__calloc(1, sizeof *x);
    if (x) {
        x->bufs = cudag__calloc(g->nbuffers, sizeof *x->bufs);
        x->alloc = cudag__calloc(g->nbuffers, sizeof *x->alloc);
        x->starts = cudag__calloc((size_t)g->nconds + 1, sizeof *x->starts);
    }
    if (!x || !x->bufs || !x->alloc || !x->starts) {
        if (x) {
            cudag__free(x->bufs);
            cudag__free(x->alloc);
            cudag__free(x->starts);
        }
        cudag__free(x);
        return NULL;
    }
    x->orig = x->g = g;
    x->nbuffers = g->nbuffers;
    for (uint32_t i = 0; i < g->nconds; i++)
        x->starts[i] = g->conds[i].has_default ? (int64_t)g->conds[i].value
                                               : CUDAG_COND_NO_DEFAULT;
    x->gpu.drv = d;
    x->flags = o->flags;
    x->timeout_ms = o->timeout_ms;
    x->diag = o->diag;
    x->diag_user = o->diag_user;
    return x;
}

/* Loads the code of x's graph.  Compile errors (many, with notes) and
 * warnings go through a diagnostic sink whose first error is err. */
static int load_code(cudag_exec *x, cudag_error *err)
{
    cudag_options co;
    memset(&co, 0, sizeof co);
    co.size = sizeof co;
    co.diag = x->diag;
    co.diag_user = x->diag_user;
    co.flags = x->flags & CUDAG_WERROR;
    cudag__diag dg;
    cudag__diag_init(&dg, &co, err);
    int rc = cudag__code_load(&x->gpu, x->g, x->flags, &dg, &x->code, err);
    if (dg.nerr)
        cudag__diag_finish(&dg);    /* err->count */
    return rc;
}

/* The stages that make exec x, in order: the device opened, the code
 * loaded, the buffers allocated and initialised, the CUgraph built,
 * instantiated and uploaded; each in an NVTX range and timed into x->stats
 * (the first from t0, which counts opening the driver).  The context is
 * left as it was. */
static int exec_stages(cudag_exec *x, const cudag_exec_options *o,
                       uint64_t t0, cudag_error *err)
{
    const cudag_graph *g = x->g;
    bool pushed;
    int rc = open_device(x, o, &pushed, err);
    uint64_t t1 = cudag__now_ns();
    x->stats.driver_ns = t1 - t0;
    if (rc == CUDAG_OK) {
        cudag__nvtx_push(o->flags, g->name, "load modules");
        rc = load_code(x, err);
        cudag__nvtx_pop(o->flags);
    }
    uint64_t t2 = cudag__now_ns();
    x->stats.load_ns = t2 - t1;
    if (rc == CUDAG_OK) {
        cudag__nvtx_push(o->flags, g->name, "allocate and initialise buffers");
        rc = cudag__alloc_buffers(x, err);
        cudag__nvtx_pop(o->flags);
    }
    uint64_t t3 = cudag__now_ns();
    x->stats.alloc_ns = t3 - t2;
    if (rc == CUDAG_OK) {
        cudag__nvtx_push(o->flags, g->name, "build CUgraph");
        rc = cudag__exec_build(x, g, &x->launch, &x->built,
                               &x->stats.downgraded_edges, err);
        cudag__nvtx_pop(o->flags);
    }
    uint64_t t4 = cudag__now_ns();
    x->stats.build_ns = t4 - t3;
    if (rc == CUDAG_OK) {
        cudag__nvtx_push(o->flags, g->name, "instantiate and upload");
        rc = instantiate(x, err);
        cudag__nvtx_pop(o->flags);
    }
    x->stats.instantiate_ns = cudag__now_ns() - t4;
    if (pushed)
        cudag__exec_leave(x);
    return rc;
}

int cudag_instantiate(const cudag_graph *g, const cudag_exec_options *opts,
                      cudag_exec **out, cudag_error *err)
{
    cudag_exec_options o = {0};
    int rc = take_args(g, opts, out, &o, err);
    if (rc != CUDAG_OK)
        return rc;
    uint64_t t0 = cudag__now_ns();
    const cudag__drv *d;
    cudag__nvtx_push(o.flags, g->name, "instantiate");
    rc = cudag__driver(&d, err);
    if (rc != CUDAG_OK) {
        cudag__nvtx_pop(o.flags);
        return rc;
    }
    cudag_exec *x = exec_new(g, &o, d);
    if (!x) {
        cudag__nvtx_pop(o.flags);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory instantiating graph '%s'",
                              g->name);
    }
    rc = exec_stages(x, &o, t0, err);
    cudag__nvtx_pop(o.flags);
    if (rc != CUDAG_OK) {
        cudag_exec_destroy(x);
        return rc;
    }
    *out = x;
    return CUDAG_OK;
}

/* A lost exec's replay still runs: waiting for it would never return, and
 * freeing what it uses (cuMemFree, cuLibraryUnload, cuGraphExecDestroy,
 * the primary context's release) could wait for it too or pull memory from
 * under it.  So the exec forgets those handles, which stay with the context
 * until the process ends, as do the records of a gemm node's workspace
 * (the built graphs' keep lists, freed by a release that frees device
 * memory).  What remains to release does not wait: the template graphs,
 * events and the stream (the driver defers their release to the end of
 * their work), and host memory. */
static void forget_running(cudag_exec *x)
{
    x->gexec = x->full.gexec = x->serial.gexec = NULL;
    x->built.keep = x->full.built.keep = x->serial.built.keep = NULL;
    for (uint32_t b = 0; b < x->nbuffers; b++)
        x->alloc[b] = 0;
    if (x->code.libs)
        for (uint32_t m = 0; m < x->code.nmodules; m++)
            x->code.libs[m] = NULL;
    x->own_ctx = false;
}

void cudag_exec_destroy(cudag_exec *x)
{
    if (!x)
        return;
    const cudag__drv *d = x->gpu.drv;
    if (x->lost)
        forget_running(x);
    if (d && x->gpu.ctx) {
        /* Teardown goes on through failures: each release is independent,
         * and a handle half-released is better than one leaked whole. */
        bool pushed = d->cuCtxPushCurrent(x->gpu.ctx) == CUDA_SUCCESS;
        if (x->gpu.stream && !x->lost)
            (void)d->cuStreamSynchronize(x->gpu.stream);
        cudag__exec_drop_replays(x);
        for (int i = 0; i < 2; i++)
            if (x->timing[i])
                (void)d->cuEventDestroy(x->timing[i]);
        if (x->gexec)
            (void)d->cuGraphExecDestroy(x->gexec);
        cudag__built_free(&x->gpu, &x->built);
        for (uint32_t b = 0; b < x->nbuffers; b++)
            if (x->alloc[b])
                (void)d->cuMemFree(x->alloc[b]);
        cudag__code_free(&x->gpu, &x->code);
        if (x->own_stream && x->gpu.stream)
            (void)d->cuStreamDestroy(x->gpu.stream);
        if (pushed)
            cudag__exec_leave(x);
        if (x->own_ctx)
            (void)d->cuDevicePrimaryCtxRelease(x->gpu.dev);
    }
    cudag__free(x->kinds);      /* set only with a context: never both */
    cudag__free(x->pdl_in);
    cudag__launch_free(&x->launch);
    cudag__free(x->bufs);
    cudag__free(x->alloc);
    cudag__free(x->starts);
    cudag_graph_destroy(x->owned);
    cudag__free(x);
}
