/* llama.cuh — the kernels of a Llama decode step (graphs/llama_step.yaml):
 * bf16 weights, f32 arithmetic, activations rounded to bf16 where Hugging
 * Face's LlamaForCausalLM rounds them.
 *
 *  GEMVs (one warp per pair of weight rows, 16-byte loads, batch B <= 16):
 *   llama_qkv   RMSNorm(x) -> QKV -> RoPE (llama3 inv_freq) -> q, and k, v
 *               appended to the KV cache at pos; a warp computes rows i and
 *               i + HD/2 of one head, the two halves rotate_half pairs.
 *   llama_gateup RMSNorm(x) -> gate row j and up row j -> silu(g) * u.
 *   llama_res   x += a · Wᵀ (output and down projections, in place on x).
 *   llama_head  RMSNorm(x) -> logits (the LM head, tied to the embedding).
 *  Each issues its lane's first LL_PF 16-byte chunks of both rows before
 *  griddepcontrol.wait: weights never depend on an upstream kernel, so under
 *  a programmatic edge the weight stream starts while the previous kernel
 *  drains.  Prefetched chunks sit in a register array indexed only by
 *  compile-time constants (a run-time index sends it to local memory).  The
 *  RMSNorm is fused: every block recomputes the B sums of squares of x (H
 *  elements each, an L2 hit) and normalizes each activation chunk on the
 *  fly, so no norm kernel and no normed buffer exist.
 *  Traffic: the weights once (the floor), x per block from L2.  Target:
 *  >= 90 % of the device-to-device copy bandwidth at batch 1.
 *
 *  llama_attn   split-KV (flash-decoding) attention for GQA: block (split s,
 *               kv head, batch b) scores positions [s*S, s*S+S) ∩ [0, pos]
 *               for the NH/NKV query heads sharing the kv head, writes
 *               (o, max, sum) partials, and the last block of (b, kv head)
 *               to finish (an atomic counter it resets) combines them.
 *               Splits past pos exit after reading pos.
 *  llama_argmax greedy next token over V logits (lowest index on ties): each
 *               block reduces a strided slice, the last block reduces the
 *               partials, writes tok and advances pos.
 *  llama_embed  x[b] = embed[tok[b]].
 *  llama_emit   out[b*N + t] = tok[b], t += 1, the while condition = t < N
 *               and not every sequence at EOS.
 *
 * Every kernel waits (griddepcontrol.wait) in every thread before touching
 * upstream data, and triggers its dependents right after: the dependents'
 * blocks then prefetch their own weights while this grid finishes.  Data read
 * after the wait uses plain loads (no __ldg / .nc); only weights use
 * ld.global.nc. */
#ifndef CUDAG_KERNELS_LLAMA_CUH
#define CUDAG_KERNELS_LLAMA_CUH

#include "common.cuh"
#include "pdl.cuh"

#define LL_MAXB 16 /* batch rows a GEMV accepts */
#define LL_PF 4    /* chunks per row and lane loaded before the wait */
#define LL_MAXG 8  /* query heads per kv head */
#define LL_MAXS 256 /* positions per attention split */

/* A weight chunk: read-only for the graph's lifetime, streamed once, so
 * through the non-coherent path without allocating in L1.  volatile keeps
 * the prefetches above griddepcontrol.wait, where they were written. */
__device__ __forceinline__ uint4 ll_ldw(const bf16 *p)
{
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
}

__device__ __forceinline__ void ll_unpack(uint4 q, float (&v)[8])
{
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[2 * k] = __uint_as_float(w[k] << 16);
        v[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}

/* v rounded to bf16 and back: where HF stores a bf16 tensor. */
__device__ __forceinline__ float bfr(float v)
{
    return __bfloat162float(__float2bfloat16_rn(v));
}

__device__ __forceinline__ float ll_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The activation rows a GEMV multiplies: x[b][0..K) bf16 for b < B, and
 * with g set, HF's RMSNorm of them: bf16(g * bf16(x * rs[b])). */
struct LlAct {
    const bf16 *x;
    const bf16 *g; /* norm weight, or null */
    const float *rs; /* shared memory: 1/rms per row */
    int K;
    const int *tok; /* set: row b is x[tok[b]] of gather rows (an embedding) */
    int gather;
    __device__ __forceinline__ const bf16 *row(int b) const
    {
        if (!tok)
            return x + (long long)b * K;
        int t = tok[b];
        t = t < 0 ? 0 : t >= gather ? gather - 1 : t;
        return x + (long long)t * K;
    }
};

/* 1/rms of each of the B rows of A.x into rs (shared), by the block's warps;
 * ends with __syncthreads, so every thread must call it. */
__device__ __forceinline__ void ll_row_scales(const LlAct &A, int B, float eps,
                                              float *rs)
{
    const int K = A.K;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    for (int b = w; b < B; b += nw) {
        float s = 0.0f;
        for (int c = lane; c < K / 8; c += 32) {
            float v[8];
            ld16(A.row(b) + c * 8, v);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                s = fmaf(v[e], v[e], s);
        }
        s = ll_warp_sum(s);
        if (lane == 0)
            rs[b] = 1.0f / sqrtf(s / (float)K + eps);
    }
    __syncthreads();
}

/* acc[r][b] += w_r · a_b over one chunk c of 8 columns. */
template <int R, int MB>
__device__ __forceinline__ void ll_chunk(float (&acc)[R][MB], const uint4 (&w)[R],
                                         const LlAct &A, int B, int c)
{
    float wf[R][8];
#pragma unroll
    for (int r = 0; r < R; ++r)
        ll_unpack(w[r], wf[r]);
    float gv[8];
    if (A.g)
        ll_unpack(ll_ldw(A.g + c * 8), gv);
#pragma unroll
    for (int b = 0; b < MB; ++b) {
        if (b < B) {
            float a[8];
            ld16(A.row(b) + c * 8, a);
            if (A.g) {
                const float s = A.rs[b];
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    a[e] = bfr(gv[e] * bfr(a[e] * s));
            }
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    acc[r][b] = fmaf(wf[r][e], a[e], acc[r][b]);
        }
    }
}

/* The GEMV of one warp: R weight rows wr[r] of K columns against the B
 * activation rows.  Issues the lane's first LL_PF chunks of every row, then
 * waits for the upstream grid and triggers the dependents (every thread,
 * `live` or not), computes the row scales when A.g is set, streams the rest
 * U chunks per row at a time, and leaves the sums in acc (every lane). */
template <int R, int MB, int U>
__device__ __forceinline__ void ll_gemv(const bf16 *const (&wr)[R], bool live,
                                        LlAct A, int B, float eps, float *rs,
                                        float (&acc)[R][MB])
{
    const int lane = threadIdx.x & 31;
    const int nch = A.K / 8;
    uint4 pf[LL_PF][R];
#pragma unroll
    for (int k = 0; k < LL_PF; ++k)
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (live && lane + 32 * k < nch)
                pf[k][r] = ll_ldw(wr[r] + (lane + 32 * k) * 8);
    pdl_wait();
    pdl_launch_dependents();
    if (A.g)
        ll_row_scales(A, B, eps, rs);
    A.rs = rs;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int b = 0; b < MB; ++b)
            acc[r][b] = 0.0f;
    if (!live)
        return;
#pragma unroll
    for (int k = 0; k < LL_PF; ++k)
        if (lane + 32 * k < nch)
            ll_chunk<R, MB>(acc, pf[k], A, B, lane + 32 * k);
    for (int c0 = lane + 32 * LL_PF; c0 < nch; c0 += 32 * U) {
        uint4 w[U][R];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int r = 0; r < R; ++r)
                if (c0 + 32 * u < nch)
                    w[u][r] = ll_ldw(wr[r] + (c0 + 32 * u) * 8);
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (c0 + 32 * u < nch)
                ll_chunk<R, MB>(acc, w[u], A, B, c0 + 32 * u);
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int b = 0; b < MB; ++b)
            if (b < B)
                acc[r][b] = ll_warp_sum(acc[r][b]);
}

/* Global warp index and the pair count: one warp per pair of rows. */
__device__ __forceinline__ long long ll_warp(void)
{
    return ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
}

/* --- RoPE -------------------------------------------------------------- */

struct LlRope {
    float theta, factor, low, high, orig;
};

/* Llama-3's scaled inverse frequency of pair i of a head of HD (HF's
 * _compute_llama3_parameters, in f32). */
__device__ __forceinline__ float ll_inv_freq(int i, int hd, LlRope p)
{
    const float inv = 1.0f / powf(p.theta, (float)(2 * i) / (float)hd);
    if (p.factor <= 0.0f)
        return inv; /* unscaled RoPE */
    const float pi2 = 6.283185307179586f;
    const float wavelen = pi2 / inv;
    const float lo_wl = p.orig / p.low, hi_wl = p.orig / p.high;
    if (wavelen > lo_wl)
        return inv / p.factor;
    if (wavelen < hi_wl)
        return inv;
    const float sm = (p.orig / wavelen - p.low) / (p.high - p.low);
    return (1.0f - sm) * inv / p.factor + sm * inv;
}

/* --- Bodies -------------------------------------------------------------- */

/* x[b] = emb[tok[b]] (tok clamped to [0, V)), by the calling block. */
__device__ __forceinline__ void ll_copy_rows(const bf16 *emb, const int *tok, int V,
                                             bf16 *x, int B, int H)
{
    for (int c = threadIdx.x; c < B * (H / 8); c += blockDim.x) {
        const int b = c / (H / 8), k = c % (H / 8);
        int t = tok[b];
        t = t < 0 ? 0 : t >= V ? V - 1 : t;
        *reinterpret_cast<uint4 *>(x + (long long)b * H + k * 8) =
            ll_ldw(emb + (long long)t * H + k * 8);
    }
}

/* gather = 0: the input is x.  gather = V > 0 (the first layer): the input
 * is emb[tok[b]] (the embedding of V rows), and block 0 also stores it into
 * x, the residual stream: the gather costs no launch of its own. */
struct LlQkv {
    bf16 *x;
    const bf16 *emb;
    const int *tok;
    int gather;
    const bf16 *g, *w;
    bf16 *q, *kc, *vc;
    const int *pos;
    int B, H, NH, NKV, HD, CTX;
    float eps;
    LlRope rope;
    template <int MB, int U> __device__ __forceinline__ void run(float *rs) const
    {
        const int half = HD / 2;
        const long long p = ll_warp();
        const long long np = (long long)(NH + 2 * NKV) * half;
        const bool live = p < np;
        const int hh = live ? (int)(p / half) : 0, i = live ? (int)(p % half) : 0;
        const long long r0 = (long long)hh * HD + i;
        const bf16 *wr[2] = {w + r0 * H, w + (r0 + half) * H};
        float acc[2][MB];
        ll_gemv<2, MB, U>(wr, live, LlAct{gather ? emb : x, g, nullptr, H, gather ? tok : nullptr, gather},
                          B, eps, rs, acc);
        if (gather && blockIdx.x == 0)
            ll_copy_rows(emb, tok, gather, x, B, H);
        if (!live || (threadIdx.x & 31) != 0)
            return;
        const int t = pos[0];
        float c = 1.0f, s = 0.0f;
        if (hh < NH + NKV) {
            const float ang = (float)t * ll_inv_freq(i, HD, rope);
            c = bfr(cosf(ang));
            s = bfr(sinf(ang));
        }
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
            float y0 = bfr(acc[0][b]), y1 = bfr(acc[1][b]);
            if (hh < NH + NKV) {
                const float o0 = bfr(bfr(y0 * c) + bfr(-y1 * s));
                const float o1 = bfr(bfr(y1 * c) + bfr(y0 * s));
                y0 = o0, y1 = o1;
            }
            bf16 *dst;
            if (hh < NH) {
                dst = q + ((long long)b * NH + hh) * HD;
            } else {
                if (t < 0 || t >= CTX)
                    continue; /* past the cache: nothing appended */
                const int kv = hh < NH + NKV ? hh - NH : hh - NH - NKV;
                dst = (hh < NH + NKV ? kc : vc) +
                      (((long long)b * NKV + kv) * CTX + t) * HD;
            }
            dst[i] = __float2bfloat16_rn(y0);
            dst[i + half] = __float2bfloat16_rn(y1);
        }
    }
};

struct LlGateUp {
    const bf16 *x, *g, *w;
    bf16 *act;
    int B, H, F;
    float eps;
    template <int MB, int U> __device__ __forceinline__ void run(float *rs) const
    {
        const long long j = ll_warp();
        const bool live = j < F;
        const long long jj = live ? j : 0;
        const bf16 *wr[2] = {w + jj * H, w + (jj + F) * H};
        float acc[2][MB];
        ll_gemv<2, MB, U>(wr, live, LlAct{x, g, nullptr, H, nullptr, 0}, B, eps, rs, acc);
        if (!live || (threadIdx.x & 31) != 0)
            return;
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
            const float gt = bfr(acc[0][b]), up = bfr(acc[1][b]);
            const float sl = bfr(gt / (1.0f + expf(-gt)));
            act[(long long)b * F + j] = __float2bfloat16_rn(sl * up);
        }
    }
};

/* y[b][n] = bf16(acc) (head: normed x, no residual) or
 * y[b][n] = bf16(y[b][n] + bf16(acc)) (res: the residual stream). */
template <bool RES> struct LlRows {
    const bf16 *a, *g, *w;
    bf16 *y;
    int B, K, N;
    float eps;
    template <int MB, int U> __device__ __forceinline__ void run(float *rs) const
    {
        const long long n0 = 2 * ll_warp();
        const bool live = n0 < N;
        const long long m0 = live ? n0 : 0;
        const long long m1 = m0 + 1 < N ? m0 + 1 : m0;
        const bf16 *wr[2] = {w + m0 * K, w + m1 * K};
        float acc[2][MB];
        ll_gemv<2, MB, U>(wr, live, LlAct{a, g, nullptr, K, nullptr, 0}, B, eps, rs, acc);
        if (!live || (threadIdx.x & 31) != 0)
            return;
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const long long n = n0 + r;
                if (n >= N)
                    break;
                bf16 *d = y + (long long)b * N + n;
                const float v = RES ? bfr(acc[r][b]) + __bfloat162float(*d)
                                    : acc[r][b];
                *d = __float2bfloat16_rn(v);
            }
        }
    }
};

/* --- Attention ------------------------------------------------------------ */

/* Partials: per (b, head, split) HD floats of o (relative to its max), then
 * the max and the sum of exponentials. */
struct LlAttn {
    const bf16 *q, *kc, *vc;
    const int *pos;
    float *part;
    int *cnt;
    bf16 *out;
    int B, NH, NKV, HD, CTX, S;

    __device__ __forceinline__ void run() const
    {
        __shared__ float sq[LL_MAXG][128 + 4];
        __shared__ float ss[LL_MAXG][LL_MAXS];
        __shared__ float so[4][LL_MAXG][128];
        __shared__ bool last;
        pdl_wait();
        pdl_launch_dependents();
        const int G = NH / NKV;
        const int split = blockIdx.x, kv = blockIdx.y, b = blockIdx.z;
        int n = pos[0] + 1;
        n = n < CTX ? n : CTX;
        const int nact = (n + S - 1) / S;
        if (split >= nact || G > LL_MAXG || HD > 128 || S > LL_MAXS)
            return;
        const int t0 = split * S, t1 = t0 + S < n ? t0 + S : n;
        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int nw = blockDim.x >> 5 < 4 ? blockDim.x >> 5 : 4;
        for (int e = tid; e < G * HD; e += blockDim.x)
            sq[e / HD][e % HD] =
                __bfloat162float(q[((long long)b * NH + kv * G) * HD + e]);
        __syncthreads();
        const int LPP = HD / 8, PPW = 32 / LPP;
        const int grp = lane / LPP, sub = lane % LPP;
        const long long base = ((long long)b * NKV + kv) * CTX * HD;
        const float scale = 1.0f / sqrtf((float)HD);
        if (warp < nw) {
            for (int tb = t0 + warp * PPW; tb < t1; tb += nw * PPW) {
                const int t = tb + grp;
                float k[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                if (t < t1)
                    ld16(kc + base + (long long)t * HD + sub * 8, k);
#pragma unroll
                for (int g = 0; g < LL_MAXG; ++g) {
                    if (g >= G)
                        break;
                    float d = 0.0f;
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        d = fmaf(k[e], sq[g][sub * 8 + e], d);
                    for (int o = LPP / 2; o > 0; o >>= 1)
                        d += __shfl_xor_sync(0xffffffffu, d, o);
                    if (sub == 0 && t < t1)
                        ss[g][t - t0] = d * scale;
                }
            }
        }
        __syncthreads();
        const int len = t1 - t0;
        __shared__ float sm[LL_MAXG], sl[LL_MAXG];
        for (int g = warp; g < G; g += blockDim.x >> 5) {
            float m = -INFINITY;
            for (int t = lane; t < len; t += 32)
                m = fmaxf(m, ss[g][t]);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
            float l = 0.0f;
            for (int t = lane; t < len; t += 32) {
                const float p = expf(ss[g][t] - m);
                ss[g][t] = p;
                l += p;
            }
            l = ll_warp_sum(l);
            if (lane == 0)
                sm[g] = m, sl[g] = l;
        }
        __syncthreads();
        float o[LL_MAXG][8];
#pragma unroll
        for (int g = 0; g < LL_MAXG; ++g)
#pragma unroll
            for (int e = 0; e < 8; ++e)
                o[g][e] = 0.0f;
        if (warp < nw) {
            for (int tb = t0 + warp * PPW; tb < t1; tb += nw * PPW) {
                const int t = tb + grp;
                if (t >= t1)
                    continue;
                float v[8];
                ld16(vc + base + (long long)t * HD + sub * 8, v);
#pragma unroll
                for (int g = 0; g < LL_MAXG; ++g) {
                    if (g >= G)
                        break;
                    const float p = ss[g][t - t0];
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        o[g][e] = fmaf(p, v[e], o[g][e]);
                }
            }
#pragma unroll
            for (int g = 0; g < LL_MAXG; ++g) {
                if (g >= G)
                    break;
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    float x = o[g][e];
                    for (int s = 16; s >= LPP; s >>= 1)
                        x += __shfl_xor_sync(0xffffffffu, x, s);
                    if (grp == 0)
                        so[warp][g][sub * 8 + e] = x;
                }
            }
        }
        __syncthreads();
        const int nsplit = gridDim.x;
        for (int e = tid; e < G * HD; e += blockDim.x) {
            const int g = e / HD, d = e % HD;
            float x = 0.0f;
            for (int w = 0; w < nw; ++w)
                x += so[w][g][d];
            float *pp = part + (((long long)b * NH + kv * G + g) * nsplit + split) * (HD + 2);
            pp[d] = x;
            if (d == 0)
                pp[HD] = sm[g], pp[HD + 1] = sl[g];
        }
        /* The last block of (b, kv) to get here combines every split. */
        __threadfence();
        __syncthreads();
        if (tid == 0) {
            const int done = atomicAdd(&cnt[b * NKV + kv], 1);
            last = done == nact - 1;
        }
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        for (int e = tid; e < G * HD; e += blockDim.x) {
            const int g = e / HD, d = e % HD;
            const float *pp = part + ((long long)b * NH + kv * G + g) * nsplit * (HD + 2);
            float M = -INFINITY;
            for (int s = 0; s < nact; ++s)
                M = fmaxf(M, __ldcg(pp + s * (HD + 2) + HD));
            float L = 0.0f, O = 0.0f;
            for (int s = 0; s < nact; ++s) {
                const float f = expf(__ldcg(pp + s * (HD + 2) + HD) - M);
                L += f * __ldcg(pp + s * (HD + 2) + HD + 1);
                O += f * __ldcg(pp + s * (HD + 2) + d);
            }
            out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(O / L);
        }
        if (tid == 0)
            cnt[b * NKV + kv] = 0; /* ready for the next layer */
    }
};

/* --- Argmax, embedding, emit ------------------------------------------------ */

__device__ __forceinline__ bool ll_better(float v, int i, float bv, int bi)
{
    return v > bv || (v == bv && i < bi);
}

/* Block (x, b) reduces logits[b][x::gridDim.x*blockDim.x-strided]; part
 * holds (value bits, index) per block; the last block reduces them. */
__device__ __forceinline__ void ll_argmax(const bf16 *logits, int V, int B,
                                          int *part, int *cnt, int *tok, int *pos)
{
    __shared__ float bv[32];
    __shared__ int bi[32];
    __shared__ bool last;
    pdl_wait();
    pdl_launch_dependents();
    const int b = blockIdx.y, tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int nw = (blockDim.x + 31) >> 5;
    auto reduce = [&](float v, int i) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float v2 = __shfl_xor_sync(0xffffffffu, v, o);
            const int i2 = __shfl_xor_sync(0xffffffffu, i, o);
            if (ll_better(v2, i2, v, i))
                v = v2, i = i2;
        }
        if (lane == 0)
            bv[w] = v, bi[w] = i;
        __syncthreads();
        v = -INFINITY, i = 0x7fffffff;
        if (tid == 0)
            for (int k = 0; k < nw; ++k)
                if (ll_better(bv[k], bi[k], v, i))
                    v = bv[k], i = bi[k];
        __syncthreads();
        return make_int2(__float_as_int(v), i);
    };
    float v = -INFINITY;
    int i = 0x7fffffff;
    if (b < B) {
        const bf16 *lr = logits + (long long)b * V;
        for (int k = blockIdx.x * blockDim.x + tid; k < V; k += gridDim.x * blockDim.x) {
            const float x = __bfloat162float(lr[k]);
            if (ll_better(x, k, v, i))
                v = x, i = k;
        }
    }
    int2 r = reduce(v, i);
    const int nblk = gridDim.x * gridDim.y;
    if (tid == 0) {
        part[2 * (blockIdx.y * gridDim.x + blockIdx.x)] = r.x;
        part[2 * (blockIdx.y * gridDim.x + blockIdx.x) + 1] = r.y;
        __threadfence();
        last = atomicAdd(cnt, 1) == nblk - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    for (int bb = 0; bb < B && bb < (int)gridDim.y; ++bb) {
        v = -INFINITY, i = 0x7fffffff;
        for (int k = tid; k < (int)gridDim.x; k += blockDim.x) {
            const float x = __int_as_float(__ldcg(part + 2 * (bb * gridDim.x + k)));
            const int j = __ldcg(part + 2 * (bb * gridDim.x + k) + 1);
            if (ll_better(x, j, v, i))
                v = x, i = j;
        }
        r = reduce(v, i);
        if (tid == 0)
            tok[bb] = r.y;
    }
    if (tid == 0) {
        cnt[0] = 0;
        pos[0] += 1;
    }
}

__device__ __forceinline__ void ll_embed(const bf16 *embed, const int *tok, bf16 *x,
                                         int B, int H, int V)
{
    pdl_wait();
    pdl_launch_dependents();
    const long long nch = (long long)B * (H / 8);
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < nch;
         c += (long long)gridDim.x * blockDim.x) {
        const int b = (int)(c / (H / 8)), k = (int)(c % (H / 8));
        int t = tok[b];
        t = t < 0 ? 0 : t >= V ? V - 1 : t;
        *reinterpret_cast<uint4 *>(x + (long long)b * H + k * 8) =
            ll_ldw(embed + (long long)t * H + k * 8);
    }
}

#endif
