/* run.c — an instantiated graph replayed and its buffers read and written:
 * launch, sync, host copies, and what an exec tells of its device, its
 * times and its modules.  Its own file: the calls a program makes between
 * instantiating and destroying, none of which changes the exec. */
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int cudag_exec_launch(cudag_exec *x, unsigned times, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_launch", err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__nvtx_push(x->flags, x->g->name, "launch");
    for (unsigned i = 0; i < times; i++) {
        CUresult r = x->gpu.drv->cuGraphLaunch(x->gexec, x->gpu.stream);
        if (r != CUDA_SUCCESS) {
            rc = cudag__cu_fail(err, x->gpu.drv, r, CUDAG__NOPOS,
                                "cuGraphLaunch: replay %u of %u of graph '%s'",
                                i + 1, times, x->g->name);
            break;
        }
    }
    cudag__nvtx_pop(x->flags);
    cudag__exec_leave(x);
    return rc;
}

int cudag_exec_sync(cudag_exec *x, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_sync", err);
    if (rc != CUDAG_OK)
        return rc;
    CUresult r;
    if ((rc = cudag__exec_wait(x, NULL, &r, err)) == CUDAG_ECUDA)
        rc = cudag__cu_fail(err, x->gpu.drv, r, CUDAG__NOPOS,
                            "cuStreamSynchronize: a replay of graph '%s' "
                            "failed",
                            x->g->name);
    cudag__exec_leave(x);
    return rc;
}

void *cudag_exec_stream(const cudag_exec *x)
{
    return x ? x->gpu.stream : NULL;
}

int cudag_exec_buffer(const cudag_exec *x, const char *buffer, uint64_t *devptr,
                      uint64_t *bytes, cudag_error *err)
{
    cudag__error_clear(err);
    if (!x)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_exec_buffer: exec is NULL");
    int rc = CUDAG_OK;
    uint32_t b =
        cudag__need_buffer(x->g, buffer, "cudag_exec_buffer", &rc, err);
    if (rc != CUDAG_OK)
        return rc;
    if (devptr)
        *devptr = x->bufs[b];
    if (bytes)
        *bytes = cudag__buffer_bytes(&x->g->buffers[b]);
    return CUDAG_OK;
}

/* Both copies go on the exec's stream, so they are ordered after the
 * replays launched before them, then wait for completion. */
static int copy(cudag_exec *x, const char *buffer, void *host, size_t bytes,
                bool to_device, cudag_error *err)
{
    const char *fn = to_device ? "cudag_exec_write" : "cudag_exec_read";
    int rc = cudag__exec_begin(x, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t b = cudag__need_buffer(x->g, buffer, fn, &rc, err);
    if (rc == CUDAG_OK && !host)
        rc = cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                            "%s: host pointer is NULL", fn);
    if (rc == CUDAG_OK && bytes != cudag__buffer_bytes(&x->g->buffers[b]))
        rc = cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                            "%s: buffer '%s' holds %llu bytes, not %zu", fn,
                            buffer,
                            (unsigned long long)cudag__buffer_bytes(
                                &x->g->buffers[b]),
                            bytes);
    const cudag__drv *d = x->gpu.drv;
    CUresult r = CUDA_SUCCESS;
    /* A copy to or from pageable memory may wait for the stream inside the
     * copy call, where no timeout reaches: with one, the replays are waited
     * for first. */
    if (rc == CUDAG_OK && x->timeout_ms &&
        (rc = cudag__exec_wait(x, NULL, &r, err)) == CUDAG_ECUDA)
        rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                            "cuStreamSynchronize: before copying buffer '%s'",
                            buffer);
    if (rc == CUDAG_OK) {
        r = to_device ? d->cuMemcpyHtoDAsync(x->bufs[b], host, bytes,
                                             x->gpu.stream)
                      : d->cuMemcpyDtoHAsync(host, x->bufs[b], bytes,
                                             x->gpu.stream);
        if (r != CUDA_SUCCESS)
            rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS, "%s: buffer '%s'",
                                to_device ? "cuMemcpyHtoDAsync"
                                          : "cuMemcpyDtoHAsync",
                                buffer);
        else if ((rc = cudag__exec_wait(x, NULL, &r, err)) == CUDAG_ECUDA)
            rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                "cuStreamSynchronize: copying buffer '%s'",
                                buffer);
    }
    cudag__exec_leave(x);
    return rc;
}

int cudag_exec_read(cudag_exec *x, const char *buffer, void *host, size_t bytes,
                    cudag_error *err)
{
    return copy(x, buffer, host, bytes, false, err);
}

int cudag_exec_write(cudag_exec *x, const char *buffer, const void *host,
                     size_t bytes, cudag_error *err)
{
    /* The copy only reads host memory; the cast serves the shared helper. */
    return copy(x, buffer, (void *)(uintptr_t)host, bytes, true, err);
}

const char *cudag_exec_device_name(const cudag_exec *x)
{
    return x ? x->gpu.name : "";
}

int cudag_exec_device_cc(const cudag_exec *x, int *major, int *minor)
{
    if (!x)
        return CUDAG_EINVAL;
    if (major)
        *major = x->gpu.cc_major;
    if (minor)
        *minor = x->gpu.cc_minor;
    return CUDAG_OK;
}

int cudag_exec_get_stats(const cudag_exec *x, cudag_exec_stats *st)
{
    if (!x || !st)
        return CUDAG_EINVAL;
    *st = x->stats;
    return CUDAG_OK;
}

size_t cudag_exec_module_count(const cudag_exec *x)
{
    return x ? x->code.nmodules : 0;
}

int cudag_exec_module_stats(const cudag_exec *x, size_t i,
                            cudag_module_stats *st)
{
    if (!x || !st)
        return CUDAG_EINVAL;
    if (i >= x->code.nmodules)
        return CUDAG_ERANGE;
    st->name = x->g->modules[i].name;
    st->origin = (cudag_module_origin)x->code.origin[i];
    st->load_ns = x->code.load_ns[i];
    return CUDAG_OK;
}
