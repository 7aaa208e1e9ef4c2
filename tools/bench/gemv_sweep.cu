/* gemv_sweep.cu — the Llama GEMV configurations (kernels/llama.cuh LlCfg)
 * on the Llama-3.2-1B shapes, in one device call.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I kernels tools/bench/gemv_sweep.cu -o /tmp/gemv_sweep
 *   /tmp/gemv_sweep [--quick]
 *
 * For each shape (qkv 3072x2048 + RMSNorm + RoPE + KV append, o 2048x2048 +
 * residual, gate/up 2x8192x2048 + RMSNorm + SwiGLU, down 2048x8192 +
 * residual, LM head 128256x2048 + RMSNorm), batch 1 and 8, each variant and
 * two grids (full: one tile per block; waves: MINB blocks per SM, every
 * block looping over tiles):
 *   single  one launch, median of per-launch event times, rotating over the
 *           shape's weight copies (16 layers; 4 for the head) so L2 (50 MB)
 *           serves none of them
 *   pdl     a graph of the chain over every copy, captured from launches
 *           with the programmatic-serialization attribute (programmatic
 *           edges, as cudag builds them); median replay
 *   full    the same chain without the attribute (full edges)
 *   err     ||got - ref|| / ||ref|| against a CPU reference (f64 sums, bf16
 *           rounding where the kernels round) on random data, output
 *           poisoned with NaN first; both grids checked, the worse printed
 * The ceiling: the faster of a 1 GiB cudaMemcpy device to device and a
 * 16-byte copy kernel (bytes read + written).  Then the 1B step's GEMVs (16 x
 * qkv, o, gate/up, down, then the head; no attention) as one PDL graph, for
 * each variant everywhere and for the best per shape, against the weight
 * floor.  Last lines: `BEST <shape> <variant> ...` per shape (batch 1, by the
 * pdl chain), and `BEST res` for o and down together (one kernel,
 * llama_res_bf16, one configuration).  Exits 2 without a device.
 *
 * Built with -DGEMV_SWEEP_BATCH=1, 2 or 3 it sweeps the batch body instead
 * (PB, UB, BB, DBB on one shipped batch-1 configuration each, below), at
 * batch 8 only; the step and BEST lines are then batch 8's
 * (docs/results/gemv-sweep-batch-h100-2026-11-26.log).  Those candidates
 * are the CUDA-core batch bodies, so that build takes them (LL_TC 0); the
 * shipped batch kernels multiply on tensor cores (ll_gemv_tc), whose
 * tunables are LL_TCU and LL_TCU2. */
#if defined(GEMV_SWEEP_BATCH) && !defined(LL_TC)
#define LL_TC 0
#endif
#include "llama.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) ck((x), #x, __LINE__)
static void ck(cudaError_t e, const char *what, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "gemv_sweep.cu:%d: %s: %s\n", line, what, cudaGetErrorString(e));
        exit(1);
    }
}

/* --- Variants: <P, U, UB, KS, THREADS, MINB, SA, PFW, DB[, PB, BB, DBB]> ------
 * Each costs 8 kernel bodies of compile time (4 kernels x batch 1 / batch
 * body); keep the list short.  Batch > 1 runs each with PB = 1 pair per
 * warp and UB chunks (the LL_MAXB sums per row take the registers).
 * Built with -DGEMV_SWEEP_BATCH=1, 2 or 3: the batch body's candidates on
 * the shipped batch-1 configuration of qkv (1), o/down (2) or gate/up and
 * the head (3), timed at batch 8 only (three binaries, built at once). */
#ifndef GEMV_SWEEP_BATCH
typedef LlCfgShipped V_shipped;
typedef LlCfg<1, 4, 2, 1, 256, 2, 16384, true, false> V_smem;       /* shipped + staged activation */
typedef LlCfg<1, 8, 2, 1, 256, 2, 16384, true, false> V_u8;         /* a whole 4 KB row per lane at K=2048 */
typedef LlCfg<2, 4, 2, 1, 256, 2, 16384, true, false> V_p2u4;       /* 4 rows x 4 chunks */
typedef LlCfg<1, 4, 2, 1, 256, 2, 16384, true, true> V_db4;         /* pipelined across steps and tiles */
typedef LlCfg<1, 4, 2, 4, 256, 2, 16384, true, true> V_ks4db;       /* 4 warps split K */
typedef LlCfg<1, 8, 2, 8, 256, 2, 16384, true, false> V_ks8u8;      /* a block per row pair at K=2048 */

#endif

enum { KQKV, KGU, KRES, KHEAD };
struct Args {
    LlQkv q;
    LlGateUp g;
    LlRows<true> r;
    LlRows<false> h;
};

/* Batch 1 and larger batches run different kernels, as the shipped ones do
 * (ll_run1, ll_runb: llama.cuh). */
#define SWEEP_RUN(C, BT, p, eps) \
    do { if constexpr (BT) ll_runb<C>(p, eps); else ll_run1<C>(p, eps); } while (0)
template <class C, bool BT> __global__ void __launch_bounds__(C::THREADS, C::MINB) kq(LlQkv p) { SWEEP_RUN(C, BT, p, p.eps); }
template <class C, bool BT> __global__ void __launch_bounds__(C::THREADS, C::MINB) kg(LlGateUp p) { SWEEP_RUN(C, BT, p, p.eps); }
template <class C, bool BT> __global__ void __launch_bounds__(C::THREADS, C::MINB) kr(LlRows<true> p) { SWEEP_RUN(C, BT, p, 0.0f); }
template <class C, bool BT> __global__ void __launch_bounds__(C::THREADS, C::MINB) kh(LlRows<false> p) { SWEEP_RUN(C, BT, p, p.eps); }

template <class C, bool BT>
static cudaError_t launch_bt(int kind, const cudaLaunchConfig_t &cfg, const Args &a)
{
    switch (kind) {
    case KQKV: return cudaLaunchKernelEx(&cfg, kq<C, BT>, a.q);
    case KGU: return cudaLaunchKernelEx(&cfg, kg<C, BT>, a.g);
    case KRES: return cudaLaunchKernelEx(&cfg, kr<C, BT>, a.r);
    default: return cudaLaunchKernelEx(&cfg, kh<C, BT>, a.h);
    }
}

template <class C>
static cudaError_t launch_c(int kind, dim3 grid, dim3 block, cudaStream_t s, bool pdl, const Args &a)
{
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = 0;
    cfg.stream = s;
    cfg.attrs = pdl ? at : nullptr;
    cfg.numAttrs = pdl ? 1 : 0;
    const int B = kind == KQKV ? a.q.B : kind == KGU ? a.g.B : kind == KRES ? a.r.B : a.h.B;
    return B > 1 ? launch_bt<C, true>(kind, cfg, a) : launch_bt<C, false>(kind, cfg, a);
}

template <class C> static const void *fn_c(int kind, bool bt)
{
    switch (kind) {
    case KQKV: return bt ? (const void *)kq<C, true> : (const void *)kq<C, false>;
    case KGU: return bt ? (const void *)kg<C, true> : (const void *)kg<C, false>;
    case KRES: return bt ? (const void *)kr<C, true> : (const void *)kr<C, false>;
    default: return bt ? (const void *)kh<C, true> : (const void *)kh<C, false>;
    }
}

typedef cudaError_t (*LaunchFn)(int, dim3, dim3, cudaStream_t, bool, const Args &);
struct Variant {
    const char *name, *cfg;
    int P, KS, threads, minb, res_block; /* res_block: the block the graph gives o/down */
    LaunchFn launch;
    const void *(*fn)(int, bool);
};
#define VAR(T, rb, text)                                                      \
    Variant{#T + 2, text, T::P, T::KS, T::THREADS, T::MINB, rb, launch_c<T>, fn_c<T>}
/* One shipped batch-1 configuration (its DB: BDB), the batch body's knobs
 * left open; DBB defaults to BDB, as LlCfg's does to DB. */
#if GEMV_SWEEP_BATCH == 1
#define BDB false
template <int UB, int PB, int BB, bool DBB = BDB>
using Base = LlCfg<1, 8, UB, 1, 256, 2, 16384, true, BDB, PB, BB, DBB>;
#elif GEMV_SWEEP_BATCH == 2
#define BDB false
template <int UB, int PB, int BB, bool DBB = BDB>
using Base = LlCfg<1, 8, UB, 2, 512, 1, 16384, true, BDB, PB, BB, DBB>;
#elif GEMV_SWEEP_BATCH == 3
#define BDB true
template <int UB, int PB, int BB, bool DBB = BDB>
using Base = LlCfg<1, 4, UB, 1, 256, 2, 16384, true, BDB, PB, BB, DBB>;
#endif
#ifdef GEMV_SWEEP_BATCH
typedef Base<2, 1, LL_MAXB> V_old;     /* LL_MAXB sums, 2 chunks (o, down ship it) */
typedef Base<2, 1, 8> V_bb8u2;         /* 8 sums per row (qkv ships it) */
typedef Base<4, 1, 8> V_bb8u4;         /* 8 sums, 4 chunks per row in flight (gate/up, head) */
typedef Base<4, 1, 8, false> V_bb8u4s; /* the same, not pipelined */
typedef Base<4, 2, 8> V_p2bb8u4;       /* 4 rows share each activation chunk */
typedef Base<8, 1, 8, false> V_bb8u8s; /* a 4 KB row per lane at K = 2048 */
static const Variant variants[] = {
    VAR(V_old, 0, "old"),
    VAR(V_bb8u2, 0, "PB1 BB8 UB2"),
    VAR(V_bb8u4, 0, "PB1 BB8 UB4"),
    VAR(V_bb8u4s, 0, "PB1 BB8 UB4 DBB0"),
    VAR(V_p2bb8u4, 0, "PB2 BB8 UB4"),
    VAR(V_bb8u8s, 0, "PB1 BB8 UB8 DBB0"),
};
static const bool batch_only = true;
#else
static const bool batch_only = false;
static const Variant variants[] = {
    VAR(V_shipped, 128, "LlCfgShipped"),
    VAR(V_smem, 0, "LlCfg<1, 4, 2, 1, 256, 2, 16384, true, false>"),
    VAR(V_u8, 0, "LlCfg<1, 8, 2, 1, 256, 2, 16384, true, false>"),
    VAR(V_p2u4, 0, "LlCfg<2, 4, 2, 1, 256, 2, 16384, true, false>"),
    VAR(V_db4, 0, "LlCfg<1, 4, 2, 1, 256, 2, 16384, true, true>"),
    VAR(V_ks4db, 0, "LlCfg<1, 4, 2, 4, 256, 2, 16384, true, true>"),
    VAR(V_ks8u8, 0, "LlCfg<1, 8, 2, 8, 256, 2, 16384, true, false>"),
};
#endif
enum { NV = sizeof variants / sizeof variants[0] };

/* --- Shapes ---------------------------------------------------------------- */
enum { H = 2048, F = 8192, NH = 32, NKV = 8, HD = 64, V = 128256, NQKV = (NH + 2 * NKV) * HD };
enum { SQKV, SO, SGU, SDOWN, SHEAD, NS };
static const char *const sname[NS] = {"qkv", "o", "gateup", "down", "head"};
static const int skind[NS] = {KQKV, KRES, KGU, KRES, KHEAD};
static const long long srows[NS] = {NQKV, H, 2LL * F, H, V};
static const int scols[NS] = {H, H, H, F, H};
static const long long sunits[NS] = {NQKV / 2, H / 2, F, H / 2, V / 2};
static const int scopies[NS] = {16, 16, 16, 16, 4};

static int nsm;

/* The graph's grid for the batch-1 body (P pairs per warp); the batch body
 * (PB = 1) loops over more tiles on the same grid. */
static int block_of(const Variant &v, int s)
{
    if (v.res_block && skind[s] == KRES)
        return v.res_block;
    return v.threads;
}

static long long grid_of(const Variant &v, int s, bool waves)
{
    const int G = block_of(v, s) / 32 / v.KS;
    const long long full = (sunits[s] + (long long)G * v.P - 1) / ((long long)G * v.P);
    const long long w = (long long)nsm * v.minb;
    return waves && w < full ? w : full;
}

/* --- Device data ------------------------------------------------------------ */
__global__ void init_bf16(bf16 *p, long long n, unsigned seed, float lo, float hi)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned long long z = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        z *= 0x94D049BB133111EBull;
        z ^= z >> 29;
        const float u = (float)(z >> 40) * (1.0f / 16777216.0f);
        p[i] = __float2bfloat16_rn(lo + (hi - lo) * u);
    }
}

__global__ void copy16(const uint4 *a, uint4 *b, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}

static bf16 *dev_rand(long long n, unsigned seed, float lo, float hi)
{
    bf16 *p;
    CK(cudaMalloc(&p, n * 2));
    init_bf16<<<1024, 256>>>(p, n, seed, lo, hi);
    CK(cudaGetLastError());
    return p;
}

static float b2f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float hbfr(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return v;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}
static std::vector<float> to_host(const bf16 *d, long long n)
{
    std::vector<uint16_t> t(n);
    CK(cudaMemcpy(t.data(), d, n * 2, cudaMemcpyDeviceToHost));
    std::vector<float> f(n);
    for (long long i = 0; i < n; ++i)
        f[i] = b2f(t[i]);
    return f;
}

struct Bufs {
    bf16 *w[NS][16];
    bf16 *x, *x0, *attn, *act_in, *g, *q, *kc, *vc, *act, *logits;
    int *pos;
};

static const int MAXBT = 8;

/* The kernel arguments of shape s, weight copy l, batch B. */
static Args args_of(const Bufs &d, int s, int l, int B)
{
    Args a;
    memset(&a, 0, sizeof a);
    a.q = LlQkv{d.x, nullptr, nullptr, 0, d.g, d.w[SQKV][l], d.q, d.kc, d.vc, d.pos, B, H, NH, NKV, HD, 1,
                1e-5f, LlRope{500000.0f, 32.0f, 1.0f, 4.0f, 8192.0f}};
    a.g = LlGateUp{d.x, d.g, d.w[SGU][l], d.act, B, H, F, 1e-5f};
    if (s == SO)
        a.r = LlRows<true>{d.attn, nullptr, d.w[SO][l], d.x, B, H, H, 0.0f};
    else
        a.r = LlRows<true>{d.act_in, nullptr, d.w[SDOWN][l], d.x, B, F, H, 0.0f};
    a.h = LlRows<false>{d.x, d.g, d.w[SHEAD][l], d.logits, B, H, V, 1e-5f};
    return a;
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* --- CPU reference ------------------------------------------------------------ */
static std::vector<float> cpu_ref(int s, int B, const std::vector<float> &W,
                                  const std::vector<float> &x, const std::vector<float> &g,
                                  const std::vector<float> &ain)
{
    const int K = scols[s];
    const long long N = srows[s];
    std::vector<float> a((size_t)B * K);
    for (int b = 0; b < B; ++b) {
        if (s == SO || s == SDOWN) {
            for (int k = 0; k < K; ++k)
                a[(size_t)b * K + k] = ain[(size_t)b * K + k];
            continue;
        }
        float ss = 0.0f;
        for (int k = 0; k < H; ++k)
            ss += x[(size_t)b * H + k] * x[(size_t)b * H + k];
        const float rs = 1.0f / sqrtf(ss / (float)H + 1e-5f);
        for (int k = 0; k < H; ++k)
            a[(size_t)b * K + k] = hbfr(g[k] * hbfr(x[(size_t)b * H + k] * rs));
    }
    std::vector<double> y((size_t)B * N);
    for (long long n = 0; n < N; ++n) {
        const float *wr = &W[(size_t)n * K];
        for (int b = 0; b < B; ++b) {
            const float *ar = &a[(size_t)b * K];
            double acc = 0.0;
            for (int k = 0; k < K; ++k)
                acc += (double)wr[k] * ar[k];
            y[(size_t)b * N + n] = acc;
        }
    }
    std::vector<float> out;
    if (s == SGU) {
        out.resize((size_t)B * F);
        for (int b = 0; b < B; ++b)
            for (int j = 0; j < F; ++j) {
                const float gt = hbfr((float)y[(size_t)b * N + j]);
                const float up = hbfr((float)y[(size_t)b * N + F + j]);
                const float sl = hbfr(gt / (1.0f + expf(-gt)));
                out[(size_t)b * F + j] = hbfr(sl * up);
            }
    } else {
        out.resize((size_t)B * N);
        for (size_t i = 0; i < out.size(); ++i) {
            const float v = hbfr((float)y[i]);
            out[i] = (s == SO || s == SDOWN) ? hbfr(v + x[i]) : v;
        }
    }
    return out;
}

/* The output of shape s as the reference lays it out (qkv: per batch row,
 * q's NH*HD, then k's and v's NKV*HD at position 0). */
static std::vector<float> gpu_out(const Bufs &d, int s, int B)
{
    switch (s) {
    case SQKV: {
        std::vector<float> q = to_host(d.q, (long long)B * NH * HD);
        std::vector<float> k = to_host(d.kc, (long long)B * NKV * HD);
        std::vector<float> v = to_host(d.vc, (long long)B * NKV * HD);
        std::vector<float> o;
        for (int b = 0; b < B; ++b) {
            o.insert(o.end(), q.begin() + (size_t)b * NH * HD, q.begin() + (size_t)(b + 1) * NH * HD);
            o.insert(o.end(), k.begin() + (size_t)b * NKV * HD, k.begin() + (size_t)(b + 1) * NKV * HD);
            o.insert(o.end(), v.begin() + (size_t)b * NKV * HD, v.begin() + (size_t)(b + 1) * NKV * HD);
        }
        return o;
    }
    case SGU: return to_host(d.act, (long long)B * F);
    case SHEAD: return to_host(d.logits, (long long)B * V);
    default: return to_host(d.x, (long long)B * H);
    }
}

static void poison(const Bufs &d, int s, int B)
{
    CK(cudaMemcpy(d.x, d.x0, (size_t)MAXBT * H * 2, cudaMemcpyDeviceToDevice));
    switch (s) {
    case SQKV:
        CK(cudaMemset(d.q, 0xff, (size_t)B * NH * HD * 2));
        CK(cudaMemset(d.kc, 0xff, (size_t)B * NKV * HD * 2));
        CK(cudaMemset(d.vc, 0xff, (size_t)B * NKV * HD * 2));
        break;
    case SGU: CK(cudaMemset(d.act, 0xff, (size_t)B * F * 2)); break;
    case SHEAD: CK(cudaMemset(d.logits, 0xff, (size_t)B * V * 2)); break;
    default: break; /* in place on x: the reference adds x0 */
    }
    /* the copies ran on the legacy stream, the kernels run on a
     * non-blocking one */
    CK(cudaDeviceSynchronize());
}

static double rel_err(const std::vector<float> &got, const std::vector<float> &ref)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(got[i]))
            return INFINITY;
        num += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* --- Timing ------------------------------------------------------------------ */
static double time_single(const Variant &v, const Bufs &d, int s, int B, bool waves,
                          cudaStream_t st, int reps)
{
    const dim3 grid((unsigned)grid_of(v, s, waves)), block(block_of(v, s));
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    for (int i = 0; i < 4; ++i)
        CK(v.launch(skind[s], grid, block, st, false, args_of(d, s, i % scopies[s], B)));
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(ev[2 * i], st));
        CK(v.launch(skind[s], grid, block, st, false, args_of(d, s, i % scopies[s], B)));
        CK(cudaEventRecord(ev[2 * i + 1], st));
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> t(reps);
    for (int i = 0; i < reps; ++i)
        CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
    for (auto &e : ev)
        CK(cudaEventDestroy(e));
    return median(t) * 1e3;
}

struct Step {
    const Variant *v;
    int s;
    bool waves;
};

/* A graph of the launches in steps (each over copy l of its shape), with or
 * without programmatic edges; the median of reps replays in microseconds. */
static double time_graph(const std::vector<Step> &steps, const std::vector<int> &copy,
                         const Bufs &d, int B, bool pdl, cudaStream_t st, int reps)
{
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (size_t i = 0; i < steps.size(); ++i) {
        const Step &k = steps[i];
        const dim3 grid((unsigned)grid_of(*k.v, k.s, k.waves)), block(block_of(*k.v, k.s));
        CK(k.v->launch(skind[k.s], grid, block, st, pdl && i > 0, args_of(d, k.s, copy[i], B)));
    }
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t(reps);
    for (int i = 0; i < 3; ++i)
        CK(cudaGraphLaunch(ge, st));
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t[i], a, b));
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return median(t) * 1e3;
}

struct Row {
    int s, B, v;
    bool waves;
    long long grid;
    int block, regs, local;
    double single, pdl, full, err, frac;
};

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    int ndev = 0;
    const cudaError_t e0 = cudaGetDeviceCount(&ndev);
    if (e0 != cudaSuccess || ndev == 0) {
        fprintf(stderr, "gemv_sweep: no CUDA device (%s); run it on the GPU machine\n",
                e0 != cudaSuccess ? cudaGetErrorString(e0) : "0 devices");
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    nsm = prop.multiProcessorCount;
    printf("device: %s, %d SMs, L2 %d MB\n", prop.name, nsm, prop.l2CacheSize >> 20);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    /* The ceiling. */
    const long long cb = 1LL << 30;
    void *ca, *cbuf;
    CK(cudaMalloc(&ca, cb));
    CK(cudaMalloc(&cbuf, cb));
    init_bf16<<<1024, 256, 0, st>>>((bf16 *)ca, cb / 2, 7, -1.0f, 1.0f);
    CK(cudaGetLastError());
    double memcpy_us, kcopy_us;
    {
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        std::vector<float> t1, t2;
        for (int i = 0; i < 12; ++i) {
            float ms;
            CK(cudaEventRecord(a, st));
            CK(cudaMemcpyAsync(cbuf, ca, cb, cudaMemcpyDeviceToDevice, st));
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 2)
                t1.push_back(ms);
            CK(cudaEventRecord(a, st));
            copy16<<<nsm * 8, 512, 0, st>>>((const uint4 *)ca, (uint4 *)cbuf, cb / 16);
            CK(cudaGetLastError());
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 2)
                t2.push_back(ms);
        }
        memcpy_us = median(t1) * 1e3, kcopy_us = median(t2) * 1e3;
        CK(cudaEventDestroy(a));
        CK(cudaEventDestroy(b));
    }
    CK(cudaFree(ca));
    CK(cudaFree(cbuf));
    const double bw = 2.0 * cb / std::min(memcpy_us, kcopy_us) * 1e-6; /* GB/s... MB/us = TB/s */
    printf("copy 1 GiB: cudaMemcpy %.1f us (%.3f TB/s), copy16 kernel %.1f us (%.3f TB/s); ceiling %.3f TB/s\n",
           memcpy_us, 2.0 * cb / memcpy_us * 1e-6, kcopy_us, 2.0 * cb / kcopy_us * 1e-6, bw);

    /* Weights (each copy its own random data, scaled 1/sqrt(K)) and activations. */
    Bufs d;
    memset(&d, 0, sizeof d);
    for (int s = 0; s < NS; ++s)
        for (int l = 0; l < scopies[s]; ++l) {
            const float sc = sqrtf(3.0f / scols[s]);
            d.w[s][l] = dev_rand(srows[s] * scols[s], 1000 + 16 * s + l, -sc, sc);
        }
    d.x0 = dev_rand((long long)MAXBT * H, 11, -2.0f, 2.0f);
    CK(cudaMalloc(&d.x, (size_t)MAXBT * H * 2));
    d.attn = dev_rand((long long)MAXBT * H, 12, -1.0f, 1.0f);
    d.act_in = dev_rand((long long)MAXBT * F, 13, -1.0f, 1.0f);
    d.g = dev_rand(H, 14, 0.8f, 1.2f);
    CK(cudaMalloc(&d.q, (size_t)MAXBT * NH * HD * 2));
    CK(cudaMalloc(&d.kc, (size_t)MAXBT * NKV * HD * 2));
    CK(cudaMalloc(&d.vc, (size_t)MAXBT * NKV * HD * 2));
    CK(cudaMalloc(&d.act, (size_t)MAXBT * F * 2));
    CK(cudaMalloc(&d.logits, (size_t)MAXBT * V * 2));
    CK(cudaMalloc(&d.pos, 4));
    CK(cudaMemset(d.pos, 0, 4)); /* RoPE at position 0 is the identity: the reference stays a plain GEMV */
    CK(cudaMemcpy(d.x, d.x0, (size_t)MAXBT * H * 2, cudaMemcpyDeviceToDevice));
    CK(cudaDeviceSynchronize());

    /* Registers and local memory of every kernel. */
    for (int i = 0; i < NV; ++i)
        for (int k = 0; k < 8; ++k) {
            cudaFuncAttributes fa;
            CK(cudaFuncGetAttributes(&fa, variants[i].fn(k % 4, k >= 4)));
            if (fa.localSizeBytes > 64)
                printf("WARNING %s kind %d%s: %zu bytes local memory\n", variants[i].name, k % 4,
                       k >= 4 ? " (batch)" : "", fa.localSizeBytes);
        }

    const std::vector<float> hx = to_host(d.x0, (long long)MAXBT * H);
    const std::vector<float> hg = to_host(d.g, H);
    const std::vector<float> hattn = to_host(d.attn, (long long)MAXBT * H);
    const std::vector<float> hact = to_host(d.act_in, (long long)MAXBT * F);

    std::vector<Row> rows;
    const int batches[2] = {1, 8};
    const int SB = batch_only ? 8 : 1; /* the batch the best and the step are chosen at */
    const int reps = quick ? 8 : 25;
    for (int s = 0; s < NS; ++s) {
        const std::vector<float> W = to_host(d.w[s][0], srows[s] * scols[s]);
        const double wbytes = (double)srows[s] * scols[s] * 2;
        for (int bi = batch_only ? 1 : 0; bi < 2; ++bi) {
            const int B = batches[bi];
            const std::vector<float> ref = cpu_ref(s, B, W, hx, hg, s == SO ? hattn : hact);
            for (int vi = 0; vi < NV; ++vi) {
                const Variant &v = variants[vi];
                cudaFuncAttributes fa;
                CK(cudaFuncGetAttributes(&fa, v.fn(skind[s], B > 1)));
                /* correctness, both grids */
                double err = 0.0;
                for (int wv = 0; wv < 2; ++wv) {
                    poison(d, s, B);
                    const dim3 grid((unsigned)grid_of(v, s, wv)), block(block_of(v, s));
                    CK(v.launch(skind[s], grid, block, st, false, args_of(d, s, 0, B)));
                    CK(cudaStreamSynchronize(st));
                    CK(cudaGetLastError());
                    err = std::max(err, rel_err(gpu_out(d, s, B), ref));
                }
                for (int wv = 0; wv < 2; ++wv) {
                    if (wv && grid_of(v, s, true) == grid_of(v, s, false))
                        continue;
                    Row r;
                    r.s = s, r.B = B, r.v = vi, r.waves = wv;
                    r.grid = grid_of(v, s, wv), r.block = block_of(v, s);
                    r.regs = fa.numRegs, r.local = (int)fa.localSizeBytes;
                    r.err = err;
                    r.single = time_single(v, d, s, B, wv, st, reps);
                    std::vector<Step> chain;
                    std::vector<int> copy;
                    for (int l = 0; l < scopies[s]; ++l)
                        chain.push_back(Step{&v, s, (bool)wv}), copy.push_back(l);
                    r.pdl = time_graph(chain, copy, d, B, true, st, quick ? 5 : 20) / scopies[s];
                    r.full = time_graph(chain, copy, d, B, false, st, quick ? 5 : 20) / scopies[s];
                    r.frac = wbytes / r.pdl * 1e-6 / bw;
                    rows.push_back(r);
                }
            }
        }
    }

    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
        if (a.s != b.s)
            return a.s < b.s;
        if (a.B != b.B)
            return a.B < b.B;
        return a.frac > b.frac;
    });
    printf("\n%-6s %2s %-9s %-5s %6s %4s %4s %5s | %8s %5s | %8s %5s | %8s %5s | %6s %8s\n", "shape", "B",
           "variant", "grid", "blocks", "thr", "regs", "local", "single", "%cp", "pdl/ker", "%cp", "full/ker",
           "%cp", "pdlgain", "relerr");
    for (const Row &r : rows) {
        const double wb = (double)srows[r.s] * scols[r.s] * 2 * 1e-6;
        printf("%-6s %2d %-9s %-5s %6lld %4d %4d %5d | %8.2f %5.1f | %8.2f %5.1f | %8.2f %5.1f | %6.3f %8.1e%s\n",
               sname[r.s], r.B, variants[r.v].name, r.waves ? "waves" : "full", r.grid, r.block, r.regs, r.local,
               r.single, 100 * wb / r.single / bw, r.pdl, 100 * wb / r.pdl / bw, r.full,
               100 * wb / r.full / bw, r.full / r.pdl, r.err, r.err < 1e-2 ? "" : "  FAIL");
    }

    /* Best per shape at batch 1 by the pdl chain (correct ones only). */
    int best[NS];
    bool bestw[NS];
    for (int s = 0; s < NS; ++s) {
        best[s] = 0, bestw[s] = false;
        double bt = 1e30;
        for (const Row &r : rows)
            if (r.s == s && r.B == SB && r.err < 1e-2 && r.pdl < bt)
                bt = r.pdl, best[s] = r.v, bestw[s] = r.waves;
    }
    /* llama_res_bf16 serves o and down: one configuration for both. */
    int bres = 0;
    bool bresw = false;
    {
        double bt = 1e30;
        for (const Row &a : rows)
            for (const Row &b : rows)
                if (a.s == SO && b.s == SDOWN && a.B == SB && b.B == SB && a.v == b.v &&
                    a.waves == b.waves && a.err < 1e-2 && b.err < 1e-2 && a.pdl + b.pdl < bt)
                    bt = a.pdl + b.pdl, bres = a.v, bresw = a.waves;
    }

    /* The 1B step's GEMVs as one PDL graph (no attention). */
    double floor_bytes = 0;
    for (int s = 0; s < SHEAD; ++s)
        floor_bytes += 16.0 * srows[s] * scols[s] * 2;
    floor_bytes += (double)V * H * 2;
    const double floor_us = floor_bytes / bw * 1e-6;
    auto step_time = [&](const int *vs, const bool *ws, bool pdl) {
        std::vector<Step> chain;
        std::vector<int> copy;
        for (int l = 0; l < 16; ++l)
            for (int s = 0; s < SHEAD; ++s)
                chain.push_back(Step{&variants[vs[s]], s, ws[s]}), copy.push_back(l);
        chain.push_back(Step{&variants[vs[SHEAD]], SHEAD, ws[SHEAD]}), copy.push_back(0);
        return time_graph(chain, copy, d, SB, pdl, st, quick ? 5 : 20);
    };
    printf("\n1B step GEMVs (16 x qkv, o, gateup, down + head; B=%d): %.0f MB, floor %.1f us\n", SB,
           floor_bytes * 1e-6, floor_us);
    for (int vi = 0; vi < NV; ++vi) {
        int vs[NS];
        bool ws[NS];
        for (int s = 0; s < NS; ++s) {
            vs[s] = vi;
            double tf = 1e30, tw = 1e30;
            for (const Row &r : rows)
                if (r.s == s && r.B == SB && r.v == vi)
                    (r.waves ? tw : tf) = r.pdl;
            ws[s] = tw < tf;
        }
        const double t = step_time(vs, ws, true);
        printf("STEP %-9s pdl %8.1f us  %.3fx floor\n", variants[vi].name, t, t / floor_us);
    }
    {
        int vs[NS];
        bool ws[NS];
        for (int s = 0; s < NS; ++s)
            vs[s] = best[s], ws[s] = bestw[s];
        vs[SO] = vs[SDOWN] = bres, ws[SO] = ws[SDOWN] = bresw;
        const double tp = step_time(vs, ws, true), tf = step_time(vs, ws, false);
        printf("STEP best-mix pdl %8.1f us  %.3fx floor; full edges %8.1f us (pdl gain %.3f)\n", tp,
               tp / floor_us, tf, tf / tp);
    }

    printf("\n");
    for (int s = 0; s < NS; ++s) {
        const Variant &v = variants[best[s]];
        printf("BEST %s %s grid=%s block=%d blocks=%lld cfg=%s\n", sname[s], v.name,
               bestw[s] ? "waves" : "full", block_of(v, s), grid_of(v, s, bestw[s]), v.cfg);
    }
    {
        const Variant &v = variants[bres];
        printf("BEST res(o+down) %s grid=%s block=%d blocks_o=%lld blocks_down=%lld cfg=%s\n", v.name,
               bresw ? "waves" : "full", block_of(v, SO), grid_of(v, SO, bresw), grid_of(v, SDOWN, bresw),
               v.cfg);
    }
    return 0;
}
