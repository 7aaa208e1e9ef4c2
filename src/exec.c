/* exec.c — instantiate and replay: device and context, buffers allocated
 * and initialised, the CUgraph built and instantiated, launches, host copies,
 * and updates between replays (arguments, buffers, variables). */
#include "kind.h"
#include "lower.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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
#define NVTX_PUSH(flags, graph, stage) cudag__nvtx_push((flags), (graph), (stage))
#define NVTX_POP(flags) cudag__nvtx_pop(flags)

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
        if (nd->kind != CUDAG_NODE_CONDITIONAL ||
            nd->u.cnd.type != CUDAG_COND_WHILE)
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

void cudag__init_fill(const cudag__buffer *b, uint64_t first, uint64_t n,
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
            cudag__init_fill(b, at, n, *stage);
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

/* Human-readable byte counts for the one message that needs them. */
static void fmt_bytes(char *buf, size_t n, uint64_t b)
{
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf, n, "%.2f GiB", (double)b / (double)(UINT64_C(1) << 30));
    else
        snprintf(buf, n, "%.2f MiB", (double)b / (double)(1u << 20));
}

static int alloc_buffers(cudag_exec *x, cudag_error *err)
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

/* Builds the CUgraph of graph g into *b, with launch descriptions *l and
 * edge kinds decided (and reported) here.  On error nothing is left. */
static int build_graph(cudag_exec *x, const cudag_graph *g, cudag__launches *l,
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

int cudag_instantiate(const cudag_graph *g, const cudag_exec_options *opts,
                      cudag_exec **out, cudag_error *err)
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
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    if (opts) {
        size_t n = opts->size && opts->size < sizeof o ? opts->size : sizeof o;
        memcpy(&o, opts, n);
    }
    uint64_t t0 = cudag__now_ns();
    const cudag__drv *d;
    NVTX_PUSH(o.flags, g->name, "instantiate");
    int rc = cudag__driver(&d, err);
    if (rc != CUDAG_OK) {
        NVTX_POP(o.flags);
        return rc;
    }
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
        NVTX_POP(o.flags);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory instantiating graph '%s'",
                              g->name);
    }
    x->orig = x->g = g;
    x->nbuffers = g->nbuffers;
    for (uint32_t i = 0; i < g->nconds; i++)
        x->starts[i] = g->conds[i].has_default ? (int64_t)g->conds[i].value
                                               : CUDAG_COND_NO_DEFAULT;
    x->gpu.drv = d;
    x->flags = o.flags;
    x->timeout_ms = o.timeout_ms;
    x->diag = o.diag;
    x->diag_user = o.diag_user;
    bool pushed;
    rc = open_device(x, &o, &pushed, err);
    uint64_t t1 = cudag__now_ns();
    x->stats.driver_ns = t1 - t0;
    if (rc == CUDAG_OK) {
        NVTX_PUSH(o.flags, g->name, "load modules");
        /* Compile errors (many, with notes) and warnings go through a
         * diagnostic sink whose first error is err. */
        cudag_options co;
        memset(&co, 0, sizeof co);
        co.size = sizeof co;
        co.diag = x->diag;
        co.diag_user = x->diag_user;
        co.flags = x->flags & CUDAG_WERROR;
        cudag__diag dg;
        cudag__diag_init(&dg, &co, err);
        rc = cudag__code_load(&x->gpu, g, x->flags, &dg, &x->code, err);
        if (dg.nerr)
            cudag__diag_finish(&dg);    /* err->count */
        NVTX_POP(o.flags);
    }
    uint64_t t2 = cudag__now_ns();
    x->stats.load_ns = t2 - t1;
    if (rc == CUDAG_OK) {
        NVTX_PUSH(o.flags, g->name, "allocate and initialise buffers");
        rc = alloc_buffers(x, err);
        NVTX_POP(o.flags);
    }
    uint64_t t3 = cudag__now_ns();
    x->stats.alloc_ns = t3 - t2;
    if (rc == CUDAG_OK) {
        NVTX_PUSH(o.flags, g->name, "build CUgraph");
        rc = build_graph(x, g, &x->launch, &x->built,
                         &x->stats.downgraded_edges, err);
        NVTX_POP(o.flags);
    }
    uint64_t t4 = cudag__now_ns();
    x->stats.build_ns = t4 - t3;
    if (rc == CUDAG_OK) {
        NVTX_PUSH(o.flags, g->name, "instantiate and upload");
        rc = instantiate(x, err);
        NVTX_POP(o.flags);
    }
    x->stats.instantiate_ns = cudag__now_ns() - t4;
    if (pushed)
        cudag__exec_leave(x);
    NVTX_POP(o.flags);
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

/* ---- replay ------------------------------------------------------------- */

int cudag_exec_launch(cudag_exec *x, unsigned times, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_launch", err);
    if (rc != CUDAG_OK)
        return rc;
    NVTX_PUSH(x->flags, x->g->name, "launch");
    for (unsigned i = 0; i < times; i++) {
        CUresult r = x->gpu.drv->cuGraphLaunch(x->gexec, x->gpu.stream);
        if (r != CUDA_SUCCESS) {
            rc = cudag__cu_fail(err, x->gpu.drv, r, CUDAG__NOPOS,
                                "cuGraphLaunch: replay %u of %u of graph '%s'",
                                i + 1, times, x->g->name);
            break;
        }
    }
    NVTX_POP(x->flags);
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

/* ---- updates ------------------------------------------------------------- */

int cudag_exec_set_arg(cudag_exec *x, const char *node, unsigned index,
                       const cudag_arg *arg, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_set_arg", err);
    if (rc != CUDAG_OK)
        return rc;
    const cudag_graph *g = x->g;
    uint32_t n = CUDAG__NONE;
    const cudag_graph *in = node ? cudag__tree_find(g, node, &n) : NULL;
    if (!in) {
        rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                            "cudag_exec_set_arg: graph '%s' has no node '%s'",
                            g->name, node ? node : "(null)");
        goto out;
    }
    n += in->node_base;
    const cudag__node *nd = cudag__tree_node(g, n);
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (!k || !k->set_arg) {
        rc = cudag__fail_at(err, CUDAG_EINVAL, nd->pos,
                            "cudag_exec_set_arg: node '%s' is not a kernel "
                            "node",
                            nd->name);
        goto out;
    }
    rc = k->set_arg(x, n, index, arg, err);
    cudag__exec_drop_replays(x);
out:
    cudag__exec_leave(x);
    return rc;
}

/* Re-points node n (flat numbering) at the current buffer pointers after
 * buffer b moved. */
static int repoint(cudag_exec *x, uint32_t n, uint32_t b, cudag_error *err)
{
    const cudag__kind_ops *k = cudag__kind(cudag__tree_node(x->g, n)->kind);
    return k && k->repoint ? k->repoint(x, n, b, err) : CUDAG_OK;
}

int cudag_exec_rebind_buffer(cudag_exec *x, const char *buffer,
                             uint64_t devptr, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_rebind_buffer", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t b =
        cudag__need_buffer(x->g, buffer, "cudag_exec_rebind_buffer", &rc, err);
    if (rc == CUDAG_OK && devptr == 0)
        rc = cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                            "cudag_exec_rebind_buffer: buffer '%s': cannot "
                            "bind a null pointer",
                            buffer);
    if (rc != CUDAG_OK)
        goto out;
    CUdeviceptr old = x->bufs[b];
    x->bufs[b] = devptr;
    uint32_t n, total = cudag__tree_nnodes(x->g);
    for (n = 0; n < total; n++)
        if ((rc = repoint(x, n, b, err)) != CUDAG_OK)
            break;
    if (rc != CUDAG_OK) {
        /* Put back the nodes already moved, so every node agrees again. */
        x->bufs[b] = old;
        for (uint32_t m = 0; m <= n && m < total; m++)
            (void)repoint(x, m, b, NULL);
    }
    cudag__exec_drop_replays(x);
out:
    cudag__exec_leave(x);
    return rc;
}

static const char *update_result(CUgraphExecUpdateResult r)
{
    switch (r) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS:
        return "success";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
        return "the graph's topology changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
        return "a node's type changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
        return "a kernel node's function changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
        return "a node's parameters changed in a way an update cannot follow "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
        return "a node cannot be updated "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
        return "a kernel node's function changed in an unsupported way "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
        return "a node's attributes changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED)";
    default:
        return "the update failed (CU_GRAPH_EXEC_UPDATE_ERROR)";
    }
}

/* The new graph may differ from the current one only in what a graph
 * update can carry: the same buffers (sizes included: they are allocated)
 * and the same kernels (their code is loaded). */
static int same_resources(const cudag_exec *x, const cudag_graph *ng,
                          const char *setting, cudag_error *err)
{
    const cudag_graph *g = x->g;
    if (ng->nbuffers != g->nbuffers)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the number of buffers (%u → "
                              "%u); instantiate the graph again",
                              setting, g->nbuffers, ng->nbuffers);
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        const cudag__buffer *o = &g->buffers[b], *n = &ng->buffers[b];
        if (strcmp(o->name, n->name) != 0 || o->type != n->type ||
            o->count != n->count)
            return cudag__fail_at(err, CUDAG_ENOTSUP,
                                  n->count_pos.line ? n->count_pos : n->pos,
                                  "setting %s changes buffer '%s' (%llu → "
                                  "%llu elements of %s), which is already "
                                  "allocated; instantiate the graph again",
                                  setting, o->name,
                                  (unsigned long long)o->count,
                                  (unsigned long long)n->count,
                                  cudag_type_name(n->type));
    }
    if (ng->nsigs != g->nsigs || ng->nmodules != g->nmodules)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the kernels or modules; "
                              "instantiate the graph again",
                              setting);
    for (uint32_t s = 0; s < g->nsigs; s++)
        if (strcmp(g->sigs[s].symbol, ng->sigs[s].symbol) != 0 ||
            g->sigs[s].module != ng->sigs[s].module)
            return cudag__fail_at(err, CUDAG_ENOTSUP, ng->sigs[s].pos,
                                  "setting %s changes kernel '%s'; "
                                  "instantiate the graph again",
                                  setting, ng->sigs[s].name);
    for (uint32_t m = 0; m < g->nmodules; m++)
        if (strcmp(g->modules[m].path, ng->modules[m].path) != 0)
            return cudag__fail_at(err, CUDAG_ENOTSUP, ng->modules[m].pos,
                                  "setting %s changes module '%s'; "
                                  "instantiate the graph again",
                                  setting, ng->modules[m].name);
    if (ng->nconds != g->nconds)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the conditions; "
                              "instantiate the graph again",
                              setting);
    /* A kernel the old graph never launched has no code loaded. */
    for (uint32_t n = 0; n < cudag__tree_nnodes(ng); n++) {
        const cudag__node *nd = cudag__tree_node(ng, n);
        const cudag__kind_ops *k = cudag__kind(nd->kind);
        cudag__pos at;
        uint32_t s = k && k->code ? k->code(nd, &at) : CUDAG__NONE;
        if (s != CUDAG__NONE && !x->code.funcs[s])
            return cudag__fail_at(err, CUDAG_ENOTSUP, nd->pos,
                                  "setting %s makes node '%s' launch kernel "
                                  "'%s', which the instantiated graph does not "
                                  "use; instantiate the graph again",
                                  setting, nd->name, ng->sigs[s].name);
    }
    return CUDAG_OK;
}

/* Builds graph ng (x->g, or a graph lowered again from it) with the exec's
 * condition starts and updates the instantiated graph from it in place
 * (cuGraphExecUpdate).  On success *nl holds ng's launch descriptions for
 * the exec to keep; on error nothing is left and the exec is as it was. */
static int update_exec(cudag_exec *x, const cudag_graph *ng,
                       const char *setting, cudag__launches *nl,
                       unsigned *downgraded, cudag_error *err)
{
    cudag__built nb;
    int rc = build_graph(x, ng, nl, &nb, downgraded, err);
    if (rc != CUDAG_OK)
        return rc;
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CUresult r = x->gpu.drv->cuGraphExecUpdate(x->gexec, nb.graph, &info);
    if (r != CUDA_SUCCESS) {
        uint32_t n = cudag__built_find(&nb, info.errorNode);
        uint32_t f = cudag__built_find(&nb, info.errorFromNode);
        char where[600] = "";
        if (n != CUDAG__NONE && f != CUDAG__NONE)
            snprintf(where, sizeof where, " at the edge '%s' -> '%s'",
                     cudag__tree_node(ng, f)->name,
                     cudag__tree_node(ng, n)->name);
        else if (n != CUDAG__NONE)
            snprintf(where, sizeof where, " at node '%s'",
                     cudag__tree_node(ng, n)->name);
        rc = cudag__cu_fail(err, x->gpu.drv, r,
                            n != CUDAG__NONE ? cudag__tree_node(ng, n)->pos
                                             : CUDAG__NOPOS,
                            "cuGraphExecUpdate: setting %s cannot update "
                            "the instantiated graph: %s%s",
                            setting, update_result(info.result), where);
        cudag__launch_free(nl);
    }
    /* The exec runs ng's parameters now.  The CUgraph it was instantiated
     * from stays: its node handles still address the exec's nodes, which
     * the new graph's mirror one for one.  What the new graph's nodes use
     * (gemm workspaces) is what the exec's nodes use now: the old goes with
     * nb. */
    if (rc == CUDAG_OK) {
        cudag__keep *keep = x->built.keep;
        x->built.keep = nb.keep;
        nb.keep = keep;
    }
    cudag__built_free(&x->gpu, &nb);
    return rc;
}

/* Variable `name` set to the number written `value`: the graph lowered
 * again, and the instantiated graph updated in place (cudag_exec_set_var). */
static int set_var(cudag_exec *x, const char *fn, const char *name,
                   const char *value, cudag_error *err)
{
    int rc = cudag__exec_begin(x, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    char setting[300];
    snprintf(setting, sizeof setting, "%s=%s", name ? name : "(null)", value);
    cudag_graph *ng = NULL;
    cudag__launches nl;
    memset(&nl, 0, sizeof nl);
    unsigned downgraded = 0;
    rc = cudag__relower(x->g, name, value, &ng, err);
    if (rc == CUDAG_OK)
        rc = same_resources(x, ng, setting, err);
    if (rc == CUDAG_OK)
        rc = update_exec(x, ng, setting, &nl, &downgraded, err);
    if (rc == CUDAG_OK) {
        cudag__launch_free(&x->launch);
        x->launch = nl;
        cudag_graph_destroy(x->owned);
        x->owned = ng;
        x->g = ng;
        x->stats.downgraded_edges = downgraded;
        cudag__exec_drop_replays(x);
    } else {
        cudag_graph_destroy(ng);
    }
    cudag__exec_leave(x);
    return rc;
}

int cudag_exec_set_var(cudag_exec *x, const char *name, int64_t value,
                       cudag_error *err)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    return set_var(x, "cudag_exec_set_var", name, text, err);
}

int cudag_exec_set_var_float(cudag_exec *x, const char *name, double value,
                             cudag_error *err)
{
    if (!isfinite(value)) {
        cudag__error_clear(err);
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_exec_set_var_float: variable '%s' cannot "
                              "be %g",
                              name ? name : "(null)", value);
    }
    /* Written as a floating-point number ("2.0", not "2"), so that an
     * integer variable refuses it rather than take it. */
    char text[40];
    cudag__fmt_num(text, value);
    return set_var(x, "cudag_exec_set_var_float", name, text, err);
}

int cudag_exec_set_condition(cudag_exec *x, const char *name, int64_t value,
                             cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_set_condition", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t c = name ? cudag__find_cond(x->g, name) : CUDAG__NONE;
    char setting[300];
    snprintf(setting, sizeof setting, "condition %s=%lld",
             name ? name : "(null)", (long long)value);
    cudag__launches nl;
    memset(&nl, 0, sizeof nl);
    unsigned downgraded = 0;
    if (c == CUDAG__NONE) {
        rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                            "cudag_exec_set_condition: graph '%s' has no "
                            "condition '%s'",
                            x->g->name, name ? name : "(null)");
    } else if (value < 0 || value > (int64_t)UINT32_MAX) {
        rc = cudag__fail_at(err, CUDAG_ERANGE, x->g->conds[c].pos,
                            "cudag_exec_set_condition: condition '%s': %lld "
                            "is out of range (0 to 4294967295)",
                            name, (long long)value);
    } else {
        int64_t old = x->starts[c];
        x->starts[c] = value;
        rc = update_exec(x, x->g, setting, &nl, &downgraded, err);
        if (rc == CUDAG_OK) {
            cudag__launch_free(&x->launch);
            x->launch = nl;
            /* The variant graphs were built with the old start. */
            cudag__exec_drop_replays(x);
        } else {
            x->starts[c] = old;
        }
    }
    cudag__exec_leave(x);
    return rc;
}
