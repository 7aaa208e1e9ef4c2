/* context.c — an exec's context: entering and leaving it, the checks every
 * public exec function begins with, dropping what the other replays made,
 * waiting for replays with a timeout, and NVTX ranges.  Its own file because
 * every other file of exec/ (instantiate, run, update, replay, timing)
 * stands on it. */
#include "cudag.h"
#include "base/alloc.h"
#include "base/attrs.h"
#include "base/clock.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "kinds/kind.h"
#include "build/build.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

/* NVTX ranges around the stages when CUDAG_NVTX is set, so a profiler's
 * timeline shows where instantiation spends its time.  NVTX 3 is header
 * only and costs nothing when no tool is attached; its headers are not
 * pedantic C, hence the pragmas. */
#ifdef CUDAG_HAVE_NVTX
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wcast-align"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop
/* Ranges are named "cudag GRAPH: STAGE", so a profile of a program that
 * runs several graphs tells them apart. */
void cudag__nvtx_push(unsigned flags, const char *graph, const char *stage)
{
    if (!(flags & CUDAG_NVTX))
        return;
    char name[320];
    snprintf(name, sizeof name, "cudag %s: %s", graph, stage);
    nvtxRangePushA(name);
}

void cudag__nvtx_pop(unsigned flags)
{
    if (flags & CUDAG_NVTX)
        nvtxRangePop();
}
#else
void cudag__nvtx_push(unsigned flags, const char *graph, const char *stage)
{
    (void)flags, (void)graph, (void)stage;
}

void cudag__nvtx_pop(unsigned flags) { (void)flags; }
#endif

/* ---- context ------------------------------------------------------------ */

int cudag__exec_enter(const cudag_exec *x, cudag_error *err)
{
    CUresult r = x->gpu.drv->cuCtxPushCurrent(x->gpu.ctx);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, CUDAG__NOPOS,
                              "cuCtxPushCurrent");
    return CUDAG_OK;
}

void cudag__exec_leave(const cudag_exec *x)
{
    CUcontext c;
    /* Popping what this thread pushed cannot fail in a way the caller could
     * act on. */
    (void)x->gpu.drv->cuCtxPopCurrent(&c);
}

static void drop_variant(cudag_exec *x, cudag__variant *v)
{
    if (v->gexec)
        (void)x->gpu.drv->cuGraphExecDestroy(v->gexec);
    v->gexec = NULL;
    cudag__built_free(&x->gpu, &v->built);
}

void cudag__exec_drop_replays(cudag_exec *x)
{
    drop_variant(x, &x->full);
    drop_variant(x, &x->serial);
    cudag__free(x->kinds);
    cudag__free(x->pdl_in);
    x->kinds = NULL;
    x->pdl_in = NULL;
}

int cudag__exec_begin(const cudag_exec *x, const char *fn, cudag_error *err)
{
    cudag__error_clear(err);
    if (!x)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: exec is NULL", fn);
    if (x->lost)
        return cudag__fail_at(err, CUDAG_ESTATE, CUDAG__NOPOS,
                              "%s: the exec is lost: a replay of graph '%s' "
                              "ran past its %u ms timeout and cannot be "
                              "stopped; end the process to free the device",
                              fn, x->g->name, x->timeout_ms);
    return cudag__exec_enter(x, err);
}

/* ---- waiting for replays ------------------------------------------------ */

/* Appends to buf (size n, used *at) what printf would write, cut at n. */
static void append(char *buf, size_t n, size_t *at, const char *fmt, ...)
    CUDAG__PRINTF(4, 5);
static void append(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
    if (*at >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *at, n - *at, fmt, ap);
    va_end(ap);
    *at = k < 0 ? n : *at + (size_t)k < n ? *at + (size_t)k : n;
}

/* The wait ran out: marks the exec lost and reports it, positioned at the
 * graph's first while node.  The driver can say that the stream has not
 * finished, not which node runs, so every while node of the graph's tree
 * (bodies and child graphs included) is named as one that may loop. */
static int timed_out(cudag_exec *x, cudag_error *err)
{
    x->lost = true;
    char list[640];
    size_t at = 0;
    unsigned n = 0, shown = 0;
    cudag__pos first = CUDAG__NOPOS;
    uint32_t nn = cudag__tree_nnodes(x->g);
    for (uint32_t i = 0; i < nn; i++) {
        const cudag__node *nd = cudag__tree_node(x->g, i);
        const cudag__kind_ops *ops = cudag__kind(nd->kind);
        if (!ops->may_loop || !ops->may_loop(nd))
            continue;
        if (n++ == 0)
            first = nd->pos;
        if (at + 160 > sizeof list)
            continue;
        shown++;
        append(list, sizeof list, &at, "%s'%s'", shown > 1 ? ", " : "",
               nd->name);
        if (nd->pos.file && nd->pos.line)
            append(list, sizeof list, &at, " (%s:%u:%u)", nd->pos.file,
                   nd->pos.line, nd->pos.col);
    }
    if (n > shown)
        append(list, sizeof list, &at, " and %u more", n - shown);
    return cudag__fail_at(
        err, CUDAG_ETIMEOUT, first,
        "graph '%s' has not finished after %u ms: %s%s; a running graph "
        "cannot be stopped, so the exec's CUDA context is lost: end the "
        "process to free the device",
        x->g->name, x->timeout_ms,
        n ? (n == 1 ? "its while node may still be looping (the driver "
                      "cannot tell which node runs): "
                    : "one of its while nodes may still be looping (the "
                      "driver cannot tell which node runs): ")
          : "it has no while node, so a kernel may never return",
        n ? list : "");
}

int cudag__exec_wait(cudag_exec *x, CUevent e, CUresult *r, cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    if (!x->timeout_ms) {
        *r = e ? d->cuEventSynchronize(e) : d->cuStreamSynchronize(x->gpu.stream);
        return *r == CUDA_SUCCESS ? CUDAG_OK : CUDAG_ECUDA;
    }
    uint64_t deadline = cudag__now_ns() + (uint64_t)x->timeout_ms * 1000000u;
    long nap_ns = 10000;
    /* Short naps first (a replay that is nearly done costs little), up to
     * 1 ms between queries (a host that waits long costs no CPU). */
    while ((*r = e ? d->cuEventQuery(e) : d->cuStreamQuery(x->gpu.stream)) ==
           CUDA_ERROR_NOT_READY) {
        if (cudag__now_ns() >= deadline)
            return timed_out(x, err);
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        nap_ns = nap_ns < 500000 ? nap_ns * 2 : 1000000;
    }
    return *r == CUDA_SUCCESS ? CUDAG_OK : CUDAG_ECUDA;
}
