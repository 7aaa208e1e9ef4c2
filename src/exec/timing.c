/* timing.c — timing an exec's replays (replay.c's ways): a pair of CUDA
 * events around each replay, waited for (what `cudag bench` compares); the
 * same behind a gate, so that the events time the device and not the host's
 * launch call; and events between back-to-back replays (what a loop that
 * never waits sees, and what `cudag run` prints). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>

#include <stdio.h>
#include <time.h>

/* How long a gate holds the stream before it gives up.  Queuing the
 * largest replay measured (a 100 000-node random DAG) takes the host about
 * 0.1 s; a replay the driver's launch queue cannot hold makes the host's
 * launch call wait for the device, which the gate holds back, so this is
 * what such a replay costs instead of a hang. */
#define GATE_LIMIT_MS 2000

static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The exec's gate limit in ms: GATE_LIMIT_MS unless a test set its own. */
static int gate_limit(const cudag_exec *x)
{
    return x->gate.limit_ms > 0 ? x->gate.limit_ms : GATE_LIMIT_MS;
}

/* The gate, run by the driver on its own thread ahead of a timed replay:
 * nothing after it on the stream starts until it returns.  It spins rather
 * than sleeps, as a wake-up would land in the time it holds back. */
static void gate_hold(void *arg)
{
    cudag_exec *x = arg;
    int limit = gate_limit(x);
    double t0 = mono_ms();
    while (!atomic_load(&x->gate.open))
        if (mono_ms() - t0 > limit) {
            atomic_store(&x->gate.gave_up, 1);
            return;
        }
}

/* One timed replay between events e[0] and e[1], waited for, its time in
 * *ms.  Gated, a closed gate goes first and opens once the replay and
 * e[1] are queued; on any failure it is opened and the stream waited for,
 * so that no gate outlives the call. */
static int time_one(cudag_exec *x, cudag_replay how, const CUevent e[2],
                    bool gated, float *ms, cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    CUstream s = x->gpu.stream;
    CUresult r;
    int rc = CUDAG_OK;
    if (gated) {
        atomic_store(&x->gate.open, 0);
        atomic_store(&x->gate.gave_up, 0);
        if ((r = d->cuLaunchHostFunc(s, gate_hold, x)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                  "cuLaunchHostFunc (the timing gate)");
    }
    if ((r = d->cuEventRecord(e[0], s)) != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventRecord");
    else if ((rc = cudag__replay_once(x, how, err)) == CUDAG_OK &&
             (r = d->cuEventRecord(e[1], s)) != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventRecord");
    if (gated) {
        atomic_store(&x->gate.open, 1);
        if (rc != CUDAG_OK) {
            (void)d->cuStreamSynchronize(s);
            return rc;
        }
    }
    if (rc != CUDAG_OK)
        return rc;
    if ((rc = cudag__exec_wait(x, e[1], &r, err)) == CUDAG_ECUDA)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuEventSynchronize after a replay (a kernel "
                              "failed?)");
    if (rc != CUDAG_OK)
        return rc;
    if (gated && atomic_load(&x->gate.gave_up))
        return cudag__fail_at(
            err, CUDAG_ELIMIT, CUDAG__NOPOS,
            "cudag_exec_time_gated: the host took over %d ms to queue one "
            "replay of %s (graph '%s'), so the gate let the device start "
            "before it was queued: a replay larger than the driver's launch "
            "queue waits for the device; time it ungated (cudag_exec_time)",
            gate_limit(x), cudag_replay_name(how), x->g->name);
    if ((r = d->cuEventElapsedTime(ms, e[0], e[1])) != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventElapsedTime");
    return CUDAG_OK;
}

/* Warm-up replays (never gated) and a wait, then each timed replay by
 * time_one, its time in ms[i]. */
static int timed(cudag_exec *x, cudag_replay how, unsigned warmup,
                 unsigned iters, float *ms, const CUevent e[2], bool gated,
                 cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    int rc = CUDAG_OK;
    CUresult r;
    for (unsigned i = 0; i < warmup && rc == CUDAG_OK; i++)
        rc = cudag__replay_once(x, how, err);
    if (rc == CUDAG_OK &&
        (rc = cudag__exec_wait(x, NULL, &r, err)) == CUDAG_ECUDA)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuStreamSynchronize after the warm-up");
    for (unsigned i = 0; i < iters && rc == CUDAG_OK; i++)
        rc = time_one(x, how, e, gated, &ms[i], err);
    return rc;
}

/* The public checks of the timings and the start of their NVTX range:
 * cudag__replay_begin with ms checked first.  On success the caller pops
 * the range and leaves the context. */
static int time_begin(cudag_exec *x, cudag_replay how, unsigned iters,
                      const float *ms, const char *fn, const char *stage,
                      cudag_error *err)
{
    if (x && iters && !ms)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: ms is NULL", fn);
    int rc = cudag__replay_begin(x, how, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    char name[96];
    snprintf(name, sizeof name, "time %s%s", cudag_replay_name(how), stage);
    cudag__nvtx_push(x->flags, x->g->name, name);
    return CUDAG_OK;
}

static void time_end(cudag_exec *x)
{
    cudag__nvtx_pop(x->flags);
    cudag__exec_leave(x);
}

/* cudag_exec_time and cudag_exec_time_gated, as public function fn. */
static int time_each(cudag_exec *x, cudag_replay how, unsigned warmup,
                     unsigned iters, float *ms, bool gated, const char *fn,
                     cudag_error *err)
{
    int rc = time_begin(x, how, iters, ms, fn, gated ? " gated" : "", err);
    if (rc != CUDAG_OK)
        return rc;
    const cudag__drv *d = x->gpu.drv;
    /* The exec keeps its two events: made once, destroyed with it. */
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++)
        if (!x->timing[i] &&
            (r = d->cuEventCreate(&x->timing[i], CU_EVENT_DEFAULT)) !=
                CUDA_SUCCESS)
            x->timing[i] = NULL;
    if (r != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventCreate");
    else
        rc = timed(x, how, warmup, iters, ms, x->timing, gated, err);
    time_end(x);
    return rc;
}

int cudag_exec_time(cudag_exec *x, cudag_replay how, unsigned warmup,
                    unsigned iters, float *ms, cudag_error *err)
{
    return time_each(x, how, warmup, iters, ms, false, "cudag_exec_time",
                     err);
}

int cudag_exec_time_gated(cudag_exec *x, cudag_replay how, unsigned warmup,
                          unsigned iters, float *ms, cudag_error *err)
{
    return time_each(x, how, warmup, iters, ms, true,
                     "cudag_exec_time_gated", err);
}

/* The timed part of back-to-back replays, the warm-up waited for: ev[0]
 * before the first replay, ev[i + 1] after replay i, then one wait and the
 * times.  Each replay pushes and pops the context as cudag_exec_replay does,
 * so the figures are those of a program replaying between its own events
 * (and those `cudag run` has always printed). */
static int back_to_back(cudag_exec *x, cudag_replay how, unsigned iters,
                        float *ms, const CUevent *ev, cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    CUstream s = x->gpu.stream;
    CUresult r = d->cuEventRecord(ev[0], s);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventRecord");
    for (unsigned i = 0; i < iters; i++) {
        int rc = cudag__exec_enter(x, err);
        if (rc != CUDAG_OK)
            return rc;
        rc = cudag__replay_once(x, how, err);
        cudag__exec_leave(x);
        if (rc != CUDAG_OK)
            return rc;
        if ((r = d->cuEventRecord(ev[i + 1], s)) != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventRecord");
    }
    int rc = cudag__exec_wait(x, NULL, &r, err);
    if (rc == CUDAG_ECUDA)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuStreamSynchronize after the timed replays "
                              "(a kernel failed?)");
    if (rc != CUDAG_OK)
        return rc;
    for (unsigned i = 0; i < iters; i++)
        if ((r = d->cuEventElapsedTime(&ms[i], ev[i], ev[i + 1])) !=
            CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                                  "cuEventElapsedTime");
    return CUDAG_OK;
}

/* Warm-up replays and the wait after them, then makes the iters + 1 events
 * in ev, times the replays and destroys every event it made. */
static int timed_back_to_back(cudag_exec *x, cudag_replay how, unsigned warmup,
                              unsigned iters, float *ms, CUevent *ev,
                              cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    int rc = CUDAG_OK;
    for (unsigned i = 0; i < warmup && rc == CUDAG_OK; i++)
        rc = cudag__replay_once(x, how, err);
    if (rc != CUDAG_OK)
        return rc;
    CUresult r;
    if ((rc = cudag__exec_wait(x, NULL, &r, err)) == CUDAG_ECUDA)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuStreamSynchronize after the warm-up");
    if (rc != CUDAG_OK)
        return rc;
    if (!iters)
        return CUDAG_OK;
    unsigned made = 0;
    for (; made <= iters; made++)
        if ((r = d->cuEventCreate(&ev[made], CU_EVENT_DEFAULT)) !=
            CUDA_SUCCESS)
            break;
    if (r != CUDA_SUCCESS)
        rc = cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuEventCreate");
    else
        rc = back_to_back(x, how, iters, ms, ev, err);
    for (unsigned i = 0; i < made; i++)
        (void)d->cuEventDestroy(ev[i]);
    return rc;
}

int cudag_exec_time_back_to_back(cudag_exec *x, cudag_replay how,
                                 unsigned warmup, unsigned iters, float *ms,
                                 cudag_error *err)
{
    static const char fn[] = "cudag_exec_time_back_to_back";
    int rc = time_begin(x, how, iters, ms, fn, " back to back", err);
    if (rc != CUDAG_OK)
        return rc;
    CUevent *ev = cudag__calloc((size_t)iters + 1, sizeof *ev);
    if (!ev)
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "%s: out of memory for %llu events", fn,
                            (unsigned long long)iters + 1);
    else
        rc = timed_back_to_back(x, how, warmup, iters, ms, ev, err);
    cudag__free(ev);
    time_end(x);
    return rc;
}
