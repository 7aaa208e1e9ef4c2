/* pointwise.cuh — the element-wise engine: y[i] = op(x0[i], x1[i], a, bias).
 *
 * Traffic: each input read once and y written once, nothing else (the bias of
 * bias_gelu is `cols` elements, from shared memory or L1).  At >= 64 MiB the
 * bulk variant should reach >= 90 % of the device-to-device copy bandwidth
 * measured in the same run, and never trail the _vec variant.
 *
 * Two variants share the ops:
 *  - pw_bulk (the plain names, sm_90 path): each block walks tiles
 *    blockIdx.x, blockIdx.x + gridDim.x, ...; thread 0 keeps PW_STAGES tiles
 *    in flight with cp.async.bulk, one mbarrier per stage, and the block
 *    consumes each stage as it lands (16-byte shared loads, 16-byte global
 *    stores), then refills it.  Inputs whose addresses differ modulo 16 bytes
 *    cannot share one bulk copy geometry and take the plain path; head and
 *    tail elements around the 16-byte-aligned body are done element-wise.
 *  - pw_vec (the _vec names, and the bulk kernels' sm_80 code): a grid-stride
 *    loop of 16-byte loads and stores, two chunks in flight per thread.
 *
 * Any grid and block (1..1024 threads) is correct.  y may be one of the
 * inputs (in place), but must not partially overlap one. */
#ifndef CUDAG_KERNELS_POINTWISE_CUH
#define CUDAG_KERNELS_POINTWISE_CUH

#include "bulk.cuh"
#include "common.cuh"
#include "pdl.cuh"

template <typename T> struct PwArgs {
    const T *in[2]; /* in[1] unused by single-input ops */
    T *y;
    long long n;
    float a;
    const T *bias; /* bias_gelu only: a weight, read before the wait */
    int cols;
};

/* The ops.  f(x0, x1, a, bias) in f32. */
struct OpCopy {
    static constexpr int NIN = 1;
    static constexpr bool BIAS = false;
    __device__ static float f(float x, float, float, float) { return x; }
};
struct OpScale {
    static constexpr int NIN = 1;
    static constexpr bool BIAS = false;
    __device__ static float f(float x, float, float a, float) { return a * x; }
};
struct OpAdd {
    static constexpr int NIN = 2;
    static constexpr bool BIAS = false;
    __device__ static float f(float x, float z, float, float) { return x + z; }
};
struct OpMul {
    static constexpr int NIN = 2;
    static constexpr bool BIAS = false;
    __device__ static float f(float x, float z, float, float) { return x * z; }
};
/* y = a*x + y: in[0] = x, in[1] = y. */
struct OpAxpy {
    static constexpr int NIN = 2;
    static constexpr bool BIAS = false;
    __device__ static float f(float x, float y, float a, float) { return fmaf(a, x, y); }
};
struct OpBiasGelu {
    static constexpr int NIN = 1;
    static constexpr bool BIAS = true;
    __device__ static float f(float x, float, float, float b) { return gelu_tanh(x + b); }
};
struct OpSwiglu {
    static constexpr int NIN = 2;
    static constexpr bool BIAS = false;
    __device__ static float f(float g, float u, float, float) { return silu(g) * u; }
};

/* Stages of the bulk pipeline and bytes per input per stage: 32 KiB of tiles
 * per block, so several blocks fit on an SM and each keeps 4 copies in
 * flight; the bias of bias_gelu adds PW_BIAS_BYTES. */
#define PW_STAGES 4
#define PW_BIAS_BYTES 8192

/* Bias values for elements i0 .. i0+V-1 (wrapping at cols).  src is the
 * shared copy or the global array. */
template <typename T, int V>
__device__ __forceinline__ void bias_vals(const T *src, int cols, long long i0,
                                          float (&b)[V])
{
    /* 32-bit remainder where it fits: the 64-bit one is a long subroutine. */
    int j = i0 <= 0x7fffffffLL ? (int)((unsigned)i0 % (unsigned)cols) : (int)(i0 % cols);
    if (j + V <= cols) {
        ld_any(src + j, b);
        return;
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
        b[k] = tof(src[j]);
        if (++j == cols)
            j = 0;
    }
}

/* o = op(x0, x1, a, b) element-wise; b is ignored by ops without a bias. */
template <class Op, int V>
__device__ __forceinline__ void pw_op(float a, const float (&x0)[V], const float (&x1)[V],
                                      const float (&b)[V], float (&o)[V])
{
#pragma unroll
    for (int k = 0; k < V; ++k)
        o[k] = Op::f(x0[k], x1[k], a, Op::BIAS ? b[k] : 0.0f);
}

template <typename T, class Op, int V>
__device__ __forceinline__ void pw_apply(const PwArgs<T> &p, const T *bsrc,
                                         long long i0, const float (&x0)[V],
                                         const float (&x1)[V], float (&o)[V])
{
    float b[V];
    if constexpr (Op::BIAS)
        bias_vals<T, V>(bsrc, p.cols, i0, b);
    pw_op<Op, V>(p.a, x0, x1, b, o);
}

template <typename T, class Op>
__device__ __forceinline__ void pw_scalar(const PwArgs<T> &p, const T *bsrc,
                                          long long i)
{
    float x0 = tof(p.in[0][i]);
    float x1 = Op::NIN == 2 ? tof(p.in[1][i]) : 0.0f;
    float b = 0.0f;
    if constexpr (Op::BIAS)
        b = tof(bsrc[i % p.cols]);
    p.y[i] = fromf<T>(Op::f(x0, x1, p.a, b));
}

/* The plain body, after the wait: 16-byte accesses when every pointer has
 * the same alignment modulo 16 bytes, element-wise otherwise. */
template <typename T, class Op>
__device__ void pw_vec_body(const PwArgs<T> &p, const T *bsrc)
{
    constexpr int V = Chunk<T>::N;
    const long long n = p.n;
    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long gstride = (long long)gridDim.x * blockDim.x;
    const uintptr_t mis = (uintptr_t)p.in[0] & 15;
    bool co = ((uintptr_t)p.y & 15) == mis;
    if (Op::NIN == 2)
        co = co && ((uintptr_t)p.in[1] & 15) == mis;
    if (!co) {
        for (long long i = gtid; i < n; i += gstride)
            pw_scalar<T, Op>(p, bsrc, i);
        return;
    }
    const long long head = head_elems(p.in[0], n);
    const long long nch = (n - head) / V;
    for (long long i = gtid; i < head; i += gstride)
        pw_scalar<T, Op>(p, bsrc, i);
    for (long long i = head + nch * V + gtid; i < n; i += gstride)
        pw_scalar<T, Op>(p, bsrc, i);
    /* Two chunks per thread and step: both loads are issued before either
     * store, which the compiler may not do by itself since y may alias. */
    for (long long c = gtid; c < nch; c += 2 * gstride) {
        const long long c2 = c + gstride;
        const bool two = c2 < nch;
        const long long i0 = head + c * V, i1 = head + c2 * V;
        float a0[V], b0[V], a1[V], b1[V], o[V];
        ld16(p.in[0] + i0, a0);
        if (Op::NIN == 2)
            ld16(p.in[1] + i0, b0);
        if (two) {
            ld16(p.in[0] + i1, a1);
            if (Op::NIN == 2)
                ld16(p.in[1] + i1, b1);
        }
        pw_apply<T, Op, V>(p, bsrc, i0, a0, Op::NIN == 2 ? b0 : a0, o);
        st16(p.y + i0, o);
        if (two) {
            pw_apply<T, Op, V>(p, bsrc, i1, a1, Op::NIN == 2 ? b1 : a1, o);
            st16(p.y + i1, o);
        }
    }
}

/* The _vec kernels: an L2 prefetch of the bias before the wait, then the
 * plain body. */
template <typename T, class Op>
__device__ __forceinline__ void pw_vec(const PwArgs<T> &p)
{
    if (p.n <= 0 || (Op::BIAS && p.cols <= 0))
        return;
    if constexpr (Op::BIAS)
        prefetch_l2(p.bias, (long long)p.cols * (long long)sizeof(T));
    pdl_wait();
    pdl_launch_dependents();
    pw_vec_body<T, Op>(p, p.bias);
}

/* The bulk kernels. */
template <typename T, class Op>
__device__ __forceinline__ void pw_bulk(const PwArgs<T> &p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int NIN = Op::NIN;
    constexpr int V = Chunk<T>::N;
    constexpr int SB = NIN == 1 ? 8192 : 4096; /* bytes per input per stage */
    constexpr int TE = SB / (int)sizeof(T);    /* elements per tile */
    constexpr int BB = Op::BIAS ? PW_BIAS_BYTES : 16;
    __shared__ alignas(128) unsigned char sbuf[PW_STAGES][NIN][SB];
    __shared__ alignas(128) unsigned char sbias[BB];
    __shared__ alignas(8) uint64_t bar[PW_STAGES + 1]; /* stages + bias */
    const long long n = p.n;
    if (n <= 0 || (Op::BIAS && p.cols <= 0))
        return;

    /* Prologue, overlapping the upstream kernel: barriers, and the bias (a
     * weight: no upstream kernel writes it).  A small launch gets the bias
     * bulk-copied into shared memory now; a large one (each block one or two
     * tiles) would pull it from L2 once per block, so there the bias is only
     * prefetched into L2 and each thread loads its values before it waits
     * for its tile. */
    bool bstaged = false;
    const long long bbytes = (long long)p.cols * (long long)sizeof(T);
    if constexpr (Op::BIAS) {
        const long long span = (long long)TE * gridDim.x; /* elements per grid step */
        const long long tiles_per_block = (n + span - 1) / span;
        bstaged = bbytes <= BB && bbytes % 16 == 0 && aligned16(p.bias) &&
                  stage_weights(tiles_per_block * SB, bbytes);
        if (!bstaged)
            prefetch_l2(p.bias, bbytes);
    }
    if (threadIdx.x == 0) {
        for (int s = 0; s <= PW_STAGES; ++s)
            mbar_init(&bar[s], 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (bstaged && threadIdx.x == 0) {
        mbar_expect_tx(&bar[PW_STAGES], (uint32_t)bbytes);
        bulk_g2s(sbias, p.bias, (uint32_t)bbytes, &bar[PW_STAGES]);
    }
    pdl_wait();
    pdl_launch_dependents();
    const T *bsrc = p.bias;
    if (bstaged) {
        mbar_wait(&bar[PW_STAGES], 0);
        bsrc = reinterpret_cast<const T *>(sbias);
    }

    const uintptr_t mis = (uintptr_t)p.in[0] & 15;
    if (NIN == 2 && ((uintptr_t)p.in[1] & 15) != mis) {
        pw_vec_body<T, Op>(p, bsrc);
        return;
    }
    const long long head = head_elems(p.in[0], n);
    const long long body = (n - head) / V * V;
    const long long ntiles = (body + TE - 1) / TE;
    const bool yco = ((uintptr_t)p.y & 15) == mis;

    if (blockIdx.x == 0) {
        for (long long i = threadIdx.x; i < head; i += blockDim.x)
            pw_scalar<T, Op>(p, bsrc, i);
        for (long long i = head + body + threadIdx.x; i < n; i += blockDim.x)
            pw_scalar<T, Op>(p, bsrc, i);
    }

    /* Tile t covers body elements [t*TE, min(t*TE + TE, body)), a multiple of
     * 16 bytes; the k-th tile of this block lives in stage k % PW_STAGES. */
    auto issue = [&](long long t, int s) {
        const long long e0 = head + t * TE;
        const long long cnt = body - t * TE < TE ? body - t * TE : TE;
        const uint32_t bytes = (uint32_t)(cnt * (long long)sizeof(T));
        mbar_expect_tx(&bar[s], bytes * NIN);
        for (int k = 0; k < NIN; ++k)
            bulk_g2s(sbuf[s][k], p.in[k] + e0, bytes, &bar[s]);
    };
    if (threadIdx.x == 0) {
        for (int k = 0; k < PW_STAGES; ++k) {
            const long long t = blockIdx.x + (long long)k * gridDim.x;
            if (t >= ntiles)
                break;
            issue(t, k);
        }
    }
    uint32_t par = 0;
    for (long long k = 0;; ++k) {
        const long long t = blockIdx.x + k * gridDim.x;
        if (t >= ntiles)
            break;
        const int s = (int)(k % PW_STAGES);
        const long long e0 = head + t * TE;
        const long long cnt = body - t * TE < TE ? body - t * TE : TE;
        const int nch = (int)(cnt / V);
        /* The bias of this thread's first chunk does not depend on the tile's
         * data: load it before waiting, so its latency overlaps the copy. */
        float b0[V];
        if constexpr (Op::BIAS)
            if ((int)threadIdx.x < nch)
                bias_vals<T, V>(bsrc, p.cols, e0 + (long long)threadIdx.x * V, b0);
        mbar_wait(&bar[s], (par >> s) & 1u);
        par ^= 1u << s;
        for (int c = threadIdx.x; c < nch; c += blockDim.x) {
            float x0[V], x1[V], b[V], o[V];
            ld16(reinterpret_cast<const T *>(sbuf[s][0]) + c * V, x0);
            if (NIN == 2)
                ld16(reinterpret_cast<const T *>(sbuf[s][NIN - 1]) + c * V, x1);
            const long long i0 = e0 + (long long)c * V;
            if constexpr (Op::BIAS) {
                if (c == (int)threadIdx.x) {
#pragma unroll
                    for (int q = 0; q < V; ++q)
                        b[q] = b0[q];
                } else {
                    bias_vals<T, V>(bsrc, p.cols, i0, b);
                }
            }
            pw_op<Op, V>(p.a, x0, NIN == 2 ? x1 : x0, b, o);
            if (yco) {
                st16(p.y + i0, o);
            } else {
#pragma unroll
                for (int q = 0; q < V; ++q)
                    p.y[i0 + q] = fromf<T>(o[q]);
            }
        }
        /* Refill stage s once every thread is done with it; a block whose
         * tiles all fit the first fill needs no barrier at all. */
        const long long tn = t + (long long)PW_STAGES * gridDim.x;
        if (tn < ntiles) {
            __syncthreads();
            if (threadIdx.x == 0)
                issue(tn, s);
        }
    }
#else
    pw_vec<T, Op>(p);
#endif
}

#endif
