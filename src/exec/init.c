/* init.c — an exec's buffers allocated on the device and given their
 * initial contents (zero, poison, a constant, iota, random).  Its own file:
 * the contents are made on the CPU, the same bits on every machine, and
 * staged to the device through one host buffer. */
#include "exec/init.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- initial contents ----------------------------------------------------- */

/* The i-th output of splitmix64 seeded with `seed` (Steele, Lea, Flood
 * 2014): counter-based, so any element can be made without the ones before
 * it, and the same on every machine. */
static uint64_t splitmix64(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static bool float_type(cudag_type t)
{
    return t == CUDAG_TYPE_F16 || t == CUDAG_TYPE_BF16 ||
           t == CUDAG_TYPE_F32 || t == CUDAG_TYPE_F64;
}

/* Fills n elements of buffer b's declared initial contents, starting at
 * element `first`, into host memory `out` (n × element size bytes).  Used
 * for CONST, IOTA and RANDOM; the same seed gives the same bytes on every
 * machine. */
static void init_fill(const cudag__buffer *b, uint64_t first, uint64_t n,
                      void *out)
{
    size_t es = cudag_type_size(b->type);
    unsigned char *p = out;
    double lo = b->init.lo, hi = b->init.hi;
    if (lo == 0.0 && hi == 0.0) {
        lo = -1.0;
        hi = 1.0;
    }
    /* Random floats fill gigabytes of weights: one loop per element size,
     * so that each store is a fixed-size move (the general loop below makes
     * the same bits about five times slower). */
    if (b->init.kind == CUDAG_INIT_RANDOM && float_type(b->type)) {
        for (uint64_t k = 0; k < n; k++) {
            double u = (double)(splitmix64(b->init.seed, first + k) >> 11) *
                       (1.0 / 9007199254740992.0);
            uint64_t bits = cudag__value_bits(b->type, lo + (hi - lo) * u);
            if (es == 2) {
                uint16_t h = (uint16_t)bits;
                memcpy(p + k * 2, &h, 2);
            } else if (es == 4) {
                uint32_t w = (uint32_t)bits;
                memcpy(p + k * 4, &w, 4);
            } else {
                memcpy(p + k * 8, &bits, 8);
            }
        }
        return;
    }
    for (uint64_t k = 0; k < n; k++) {
        uint64_t i = first + k, bits;
        switch (b->init.kind) {
        case CUDAG_INIT_IOTA:
            /* Integers get the index itself, not a double's rounding. */
            bits = float_type(b->type) ? cudag__value_bits(b->type, (double)i)
                                       : i;
            break;
        case CUDAG_INIT_RANDOM: {
            double u = (double)(splitmix64(b->init.seed, i) >> 11) *
                       (1.0 / 9007199254740992.0);
            double v = lo + (hi - lo) * u;
            if (!float_type(b->type))
                v = floor(v);
            bits = cudag__value_bits(b->type, v);
            break;
        }
        default:
            bits = cudag__value_bits(b->type, b->init.value);
            break;
        }
        /* Little-endian hosts (x86-64, AArch64) store the low bytes first,
         * which is the element as the device reads it. */
        memcpy(p + k * es, &bits, es);
    }
}

/* init_fill over the host's cores, up to FILL_THREADS.  The 1B Llama
 * graph's 1.24 G random bf16 weights take about 19 s on one thread (15 ns
 * a value: a copy of the loop on the 2-core development machine,
 * 2026-11-28).  There, 134 M values instantiated in 2.69 s on one thread
 * and 2.08 s on two (the fake driver of tests/test_build.c).  Every element
 * depends only on the seed and its index, so the slices are the same bytes
 * in any order. */
#define FILL_THREADS 16
#define FILL_MIN (1u << 20) /* elements a thread at least: fewer, and the
                               threads cost more than they save */

typedef struct {
    const cudag__buffer *b;
    uint64_t first, n;
    void *out;
} fill_slice;

static void *fill_slice_run(void *arg)
{
    const fill_slice *f = arg;
    init_fill(f->b, f->first, f->n, f->out);
    return NULL;
}

static void init_fill_threads(const cudag__buffer *b, uint64_t first,
                              uint64_t n, void *out)
{
    uint64_t t = n / FILL_MIN;
    /* Most buffers are below two threads' share: no sysconf for them (glibc
     * reads /sys for it on every call). */
    if (t > 1) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (t > (uint64_t)(cores > 1 ? cores : 1))
            t = (uint64_t)(cores > 1 ? cores : 1);
        if (t > FILL_THREADS)
            t = FILL_THREADS;
    } else {
        t = 1;
    }
    size_t es = cudag_type_size(b->type);
    uint64_t per = n / t;
    fill_slice s[FILL_THREADS];
    pthread_t th[FILL_THREADS];
    bool started[FILL_THREADS] = {false};
    for (uint64_t i = 1; i < t; i++) {
        s[i] = (fill_slice){b, first + i * per, i + 1 < t ? per : n - i * per,
                            (unsigned char *)out + i * per * es};
        started[i] = pthread_create(&th[i], NULL, fill_slice_run, &s[i]) == 0;
    }
    init_fill(b, first, t > 1 ? per : n, out);
    /* A slice whose thread did not start is filled here.  pthread_join
     * fails only for a thread that is not joinable, which each of these is
     * until this loop joins it; were it to fail, the slice is filled here
     * too, with the bytes its thread writes. */
    for (uint64_t i = 1; i < t; i++)
        if (!started[i] || pthread_join(th[i], NULL) != 0)
            fill_slice_run(&s[i]);
}

/* Host staging for initial contents: big enough to amortise the copies,
 * small enough not to matter next to the buffers. */
#define STAGE_BYTES (16u << 20)

static int init_buffer(cudag_exec *x, uint32_t bi, void **stage,
                       cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    const cudag__buffer *b = &x->g->buffers[bi];
    CUdeviceptr p = x->bufs[bi];
    uint64_t bytes = cudag__buffer_bytes(b);
    size_t es = cudag_type_size(b->type);
    CUresult r = CUDA_SUCCESS;
    const char *call = NULL;
    switch (b->init.kind) {
    case CUDAG_INIT_ZERO:
        call = "cuMemsetD8Async";
        r = d->cuMemsetD8Async(p, 0, bytes, x->gpu.stream);
        break;
    case CUDAG_INIT_NONE:
        /* Poison: 0x7ff8 repeated is a NaN in f16, bf16, f32 and f64 alike,
         * so unwritten output shows up in any float check. */
        if (float_type(b->type)) {
            call = "cuMemsetD16Async";
            r = d->cuMemsetD16Async(p, 0x7ff8, bytes / 2, x->gpu.stream);
        } else {
            call = "cuMemsetD8Async";
            r = d->cuMemsetD8Async(p, 0xa5, bytes, x->gpu.stream);
        }
        break;
    default: {
        if (!*stage && !(*stage = cudag__malloc(STAGE_BYTES)))
            return cudag__fail_at(err, CUDAG_ENOMEM, b->pos,
                                  "out of memory initialising buffer '%s'",
                                  b->name);
        uint64_t per = STAGE_BYTES / es;
        for (uint64_t at = 0; at < b->count; at += per) {
            uint64_t n = b->count - at < per ? b->count - at : per;
            init_fill_threads(b, at, n, *stage);
            call = "cuMemcpyHtoDAsync";
            r = d->cuMemcpyHtoDAsync(p + at * es, *stage, n * es,
                                     x->gpu.stream);
            /* The stage is reused next round: wait until it was read. */
            if (r == CUDA_SUCCESS) {
                call = "cuStreamSynchronize";
                r = d->cuStreamSynchronize(x->gpu.stream);
            }
            if (r != CUDA_SUCCESS)
                break;
        }
    }
    }
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, b->pos, "%s: initialising buffer '%s'",
                              call, b->name);
    return CUDAG_OK;
}

/* ---- allocation ---------------------------------------------------------- */

/* Human-readable byte counts for the one message that needs them. */
static void fmt_bytes(char *buf, size_t n, uint64_t b)
{
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf, n, "%.2f GiB", (double)b / (double)(UINT64_C(1) << 30));
    else
        snprintf(buf, n, "%.2f MiB", (double)b / (double)(1u << 20));
}

int cudag__alloc_buffers(cudag_exec *x, cudag_error *err)
{
    const cudag__drv *d = x->gpu.drv;
    const cudag_graph *g = x->g;
    uint64_t need = 0;
    for (uint32_t b = 0; b < g->nbuffers; b++)
        if (!g->buffers[b].bound)
            need += cudag__buffer_bytes(&g->buffers[b]);
    /* Each buffer is at most 2^46 bytes and there are at most 2^16 of them:
     * the sum cannot overflow. */
    size_t free_b = 0, total_b = 0;
    CUresult r = d->cuMemGetInfo(&free_b, &total_b);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuMemGetInfo");
    if (need > free_b) {
        char a[32], f[32], t[32];
        fmt_bytes(a, sizeof a, need);
        fmt_bytes(f, sizeof f, free_b);
        fmt_bytes(t, sizeof t, total_b);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "the graph's buffers need %llu bytes (%s), "
                              "device '%s' has %llu bytes free (%s of %s)",
                              (unsigned long long)need, a, x->gpu.name,
                              (unsigned long long)free_b, f, t);
    }
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        const cudag__buffer *buf = &g->buffers[b];
        if (buf->bound) {
            x->bufs[b] = buf->bound;
            continue;
        }
        CUdeviceptr p = 0;
        r = d->cuMemAlloc(&p, cudag__buffer_bytes(buf));
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, buf->pos,
                                  "cuMemAlloc: %llu bytes for buffer '%s'",
                                  (unsigned long long)cudag__buffer_bytes(buf),
                                  buf->name);
        x->alloc[b] = x->bufs[b] = p;
    }
    void *stage = NULL;
    int rc = CUDAG_OK;
    for (uint32_t b = 0; b < g->nbuffers && rc == CUDAG_OK; b++)
        if (!g->buffers[b].bound)
            rc = init_buffer(x, b, &stage, err);
    cudag__free(stage);
    return rc;
}
