/* common.cuh — element types, 16-byte chunks, the activation functions and
 * block reductions that every kernel of the library shares.
 *
 * Storage types are f32 and bf16; arithmetic is always f32.  A "chunk" is 16
 * bytes: 4 f32 or 8 bf16 elements, the widest access one thread makes.
 * Traffic: none of its own (helpers). */
#ifndef CUDAG_KERNELS_COMMON_CUH
#define CUDAG_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

/* Elements per 16-byte chunk. */
template <typename T> struct Chunk {
    static constexpr int N = 16 / (int)sizeof(T);
};

__device__ __forceinline__ float tof(float v) { return v; }
__device__ __forceinline__ float tof(bf16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T fromf(float v);
template <> __device__ __forceinline__ float fromf<float>(float v) { return v; }
template <> __device__ __forceinline__ bf16 fromf<bf16>(float v)
{
    return __float2bfloat16_rn(v);
}

__device__ __forceinline__ bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* Elements from p to the next 16-byte boundary (0 when aligned), at most n. */
template <typename T>
__device__ __forceinline__ long long head_elems(const T *p, long long n)
{
    long long h = (long long)((16 - ((uintptr_t)p & 15)) & 15) / (long long)sizeof(T);
    return h < n ? h : n;
}

/* A 16-byte chunk at an aligned address (global or shared), widened to f32.
 * Plain loads: no __ldg, since most data is read after griddepcontrol.wait. */
__device__ __forceinline__ void ld16(const float *p, float (&v)[4])
{
    float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

__device__ __forceinline__ void ld16(const bf16 *p, float (&v)[8])
{
    uint4 q = *reinterpret_cast<const uint4 *>(p);
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        /* bf16 is the upper half of an f32: the element at the lower address
         * is the low 16 bits of the word. */
        v[2 * k] = __uint_as_float(w[k] << 16);
        v[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}

__device__ __forceinline__ void st16(float *p, const float (&v)[4])
{
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

__device__ __forceinline__ void st16(bf16 *p, const float (&v)[8])
{
    uint4 q;
    q.x = pack_bf16x2(v[0], v[1]);
    q.y = pack_bf16x2(v[2], v[3]);
    q.z = pack_bf16x2(v[4], v[5]);
    q.w = pack_bf16x2(v[6], v[7]);
    *reinterpret_cast<uint4 *>(p) = q;
}

/* A chunk at any element-aligned address: one 16-byte access when aligned,
 * element by element otherwise. */
template <typename T, int V>
__device__ __forceinline__ void ld_any(const T *p, float (&v)[V])
{
    if (aligned16(p)) {
        ld16(p, v);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
            v[k] = tof(p[k]);
    }
}

template <typename T, int V>
__device__ __forceinline__ void st_any(T *p, const float (&v)[V])
{
    if (aligned16(p)) {
        st16(p, v);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
            p[k] = fromf<T>(v[k]);
    }
}

/* e^x through the SFU: exp2f is MUFU.EX2 with a denormal fix-up (2 ulp), and
 * rounding x*log2(e) adds |x| * 2^-24 relative error, under 1e-6 for the
 * |x| < 15 that matters here.  The IEEE expf costs about three times the
 * instructions, which the bf16 kernels cannot afford at full bandwidth. */
__device__ __forceinline__ float fast_exp(float x)
{
    return exp2f(x * 1.4426950408889634f);
}

/* GELU, tanh approximation (as in GPT-2 and PyTorch's approximate='tanh'),
 * written as x * sigmoid(2u): 0.5 x (1 + tanh u) = x / (1 + e^(-2u)).  That
 * form has no cancellation for large negative x, where 1 + tanh u would lose
 * every digit.  __fdividef is 2 ulp for denominators below 2^126 and returns
 * 0 above, where the true value is under 1e-37 |x|.  Relative error stays
 * below 2e-6 for |x| < 8 (tests/test_gpu_kernels.c holds it to 1e-5). */
__device__ __forceinline__ float gelu_tanh(float x)
{
    const float k0 = 0.7978845608028654f; /* sqrt(2/pi) */
    const float k1 = 0.044715f;
    float u = k0 * fmaf(k1 * x, x * x, x);
    return __fdividef(x, 1.0f + fast_exp(-2.0f * u));
}

__device__ __forceinline__ float silu(float x)
{
    return __fdividef(x, 1.0f + fast_exp(-x));
}

/* The number of SMs (%nsmid), for launch-size heuristics. */
__device__ __forceinline__ unsigned num_sms(void)
{
    unsigned n;
    asm("mov.u32 %0, %%nsmid;" : "=r"(n));
    return n;
}

/* Whether a block should stage weights (`wbytes` per block) in shared
 * memory: worth it when the launch is small (a decode step: latency matters,
 * and the copy overlaps the upstream kernel under PDL) or when each block
 * reuses them for at least as many bytes of data.  A large grid of one-tile
 * blocks would otherwise pull the weights from L2 once per block, as many
 * bytes as the data itself; there, plain loads hit L1 instead. */
__device__ __forceinline__ bool stage_weights(long long data_bytes_per_block,
                                              long long wbytes)
{
    return gridDim.x <= 4 * num_sms() || data_bytes_per_block >= 2 * wbytes;
}

/* --- Block reductions -----------------------------------------------------
 * Any block size from 1 to 1024 works: the graph, not the kernel, chooses it,
 * so the last warp may be partial.  Its shuffles name only the lanes that
 * exist, and values from missing lanes are discarded. */

struct SumOp {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/* Running (max, sum of exp(x - max)) pairs of an online softmax. */
struct SoftmaxOp {
    __device__ float2 operator()(float2 a, float2 b) const
    {
        if (a.x == -INFINITY)
            return b;
        if (b.x == -INFINITY)
            return a;
        float m = fmaxf(a.x, b.x);
        return make_float2(m, a.y * fast_exp(a.x - m) + b.y * fast_exp(b.x - m));
    }
};

/* Component-wise sums of a pair (shifted sum and sum of squares). */
struct Sum2Op {
    __device__ float2 operator()(float2 a, float2 b) const
    {
        return make_float2(a.x + b.x, a.y + b.y);
    }
};

__device__ __forceinline__ float shfl_down(unsigned mask, float v, int off)
{
    return __shfl_down_sync(mask, v, off);
}
__device__ __forceinline__ float2 shfl_down(unsigned mask, float2 v, int off)
{
    return make_float2(__shfl_down_sync(mask, v.x, off),
                       __shfl_down_sync(mask, v.y, off));
}

/* Reduces v over the first `nvalid` lanes of the calling warp; lane 0 holds
 * the result.  The first `nexist` lanes (every lane the warp has) must call
 * it: a shuffle's mask must name exactly the lanes that execute it. */
template <typename V, class Op>
__device__ __forceinline__ V warp_reduce(V v, Op op, int nvalid, int nexist)
{
    const int lane = threadIdx.x & 31;
    const unsigned mask = nexist >= 32 ? 0xffffffffu : (1u << nexist) - 1u;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        V o = shfl_down(mask, v, off);
        if (lane + off < nvalid)
            v = op(v, o);
    }
    return v;
}

/* Reduces v over the block and returns the result to every thread.  `red`
 * is shared scratch of at least 33 elements; it may be reused by the next
 * call right away (the two barriers inside order the accesses).  Every thread
 * of the block must call it. */
template <typename V, class Op>
__device__ V block_reduce(V v, Op op, V *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    int width = (int)blockDim.x - warp * 32;
    width = width < 32 ? width : 32;
    v = warp_reduce(v, op, width, width);
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        /* Lanes past the last warp read a valid slot and are ignored. */
        const int w0 = blockDim.x < 32 ? (int)blockDim.x : 32;
        V w = red[lane < nwarps ? lane : 0];
        w = warp_reduce(w, op, nwarps, w0);
        if (lane == 0)
            red[32] = w;
    }
    __syncthreads();
    return red[32];
}

#endif
