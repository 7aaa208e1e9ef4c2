/* llama.cuh — the kernels of a Llama decode step (graphs/llama_step.yaml):
 * bf16 weights, f32 arithmetic, activations rounded to bf16 where Hugging
 * Face's LlamaForCausalLM rounds them.
 *
 *  GEMVs (a warp per P pairs of weight rows, 16-byte loads, batch B <= 16;
 *  the tunables in LlCfg, one configuration per kernel; the batch kernels
 *  multiply on tensor cores, ll_gemv_tc):
 *   llama_qkv   RMSNorm(x) -> QKV -> RoPE (llama3 inv_freq) -> q, and k, v
 *               appended to the KV cache at pos; a warp computes rows i and
 *               i + HD/2 of one head, the two halves rotate_half pairs.
 *               With gather 0 (past the first layer) it reads pos before
 *               griddepcontrol.wait, as the attention does: pos must come
 *               from a launch before the nearest upstream kernel that
 *               triggers after its wait (LL_EARLY).
 *   llama_gateup RMSNorm(x) -> gate row j and up row j -> silu(g) * u.
 *   llama_res   x += a · Wᵀ (output and down projections, in place on x).
 *   llama_head  RMSNorm(x) -> logits (the LM head, tied to the embedding).
 *  Each issues its lane's first U 16-byte chunks of every row before
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
 *  llama_attn   split-KV (flash-decoding) attention for GQA: a cache that
 *               fits one block's shared memory, up to 128 positions, is one
 *               block's split, written straight to the output; a longer one
 *               the blocks of (kv head, batch b) cut into splits sized at
 *               run time so the grid covers them in one pass, score each
 *               split for the NH/NKV query heads sharing the kv head, write
 *               (o, max, sum) partials, and the last block of (b, kv head)
 *               to finish (an atomic counter it resets) combines them.
 *  llama_argmax greedy next token over V logits (lowest index on ties): each
 *               block reduces a strided slice, the last block reduces the
 *               partials, writes tok and advances pos.
 *  llama_embed  x[b] = embed[tok[b]].
 *  llama_emit   out[b*N + t] = tok[b], t += 1, the while condition = t < N
 *               and not every sequence at EOS.
 *
 * Every kernel waits (griddepcontrol.wait) in every thread before touching
 * upstream data.  The GEMVs and the attention trigger their dependents just
 * before it (LL_EARLY, ll_wait), the kernels that read tok or write tok and
 * pos right after: the dependents' blocks then prefetch their own weights
 * (llama_attn: the cache below pos) while this grid finishes.  Not a
 * counter the blocks raise in its place: that made the 1B step 41-52 us
 * slower (H100, 2026-11-27).  Data read
 * after the wait uses plain loads (no __ldg / .nc); only weights use
 * ld.global.nc. */
#ifndef CUDAG_KERNELS_LLAMA_CUH
#define CUDAG_KERNELS_LLAMA_CUH

#include "common.cuh"
#include "pdl.cuh"

#define LL_MAXB 16 /* batch rows a GEMV accepts */
#define LL_MAXG 8  /* query heads per kv head */
#define LL_MAXS 256 /* positions per attention split */

/* LL_EARLY 1: a kernel whose reads before its wait are weights, pos or the
 * cache below pos triggers its dependents before griddepcontrol.wait, so
 * the grid after it may launch and land while the grid before this one
 * still runs (1B step at KV 128 967 -> 961 us, H100 2026-11-27; 8B even).
 * Such a read is then safe only if a kernel that triggers after its wait
 * sits between it and the last writer of pos: the step's first kernel (the
 * gather, tok set) keeps the trigger after its wait, so every later launch
 * of the step implies that the step before it has completed. */
#ifndef LL_EARLY
#define LL_EARLY 1
#endif

/* griddepcontrol.wait with the dependents triggered before it (early) or
 * right after it. */
__device__ __forceinline__ void ll_wait(bool early)
{
    early = LL_EARLY && early;
    if (early)
        pdl_launch_dependents();
    pdl_wait();
    if (!early)
        pdl_launch_dependents();
}

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

/* 16 bytes global -> shared, not through L1 (sm_80+). */
__device__ __forceinline__ void ll_cp16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src)
                 : "memory");
}

__device__ __forceinline__ void ll_cp_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* All but the last committed group done. */
__device__ __forceinline__ void ll_cp_wait_1(void)
{
    asm volatile("cp.async.wait_group 1;" ::: "memory");
}

__device__ __forceinline__ void ll_cp_wait_all(void)
{
    asm volatile("cp.async.wait_all;" ::: "memory");
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

/* By one warp: row[t] = exp(row[t] - M) for t < n, M the row's largest
 * value, returned; *sum = the sum of row[t]·w[t] (w null: of row[t]).
 * Every lane gets both. */
__device__ __forceinline__ float ll_warp_exp(float *row, int n, const float *w,
                                             float *sum)
{
    const int lane = threadIdx.x & 31;
    float m = -INFINITY;
    for (int t = lane; t < n; t += 32)
        m = fmaxf(m, row[t]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float l = 0.0f;
    for (int t = lane; t < n; t += 32) {
        const float p = expf(row[t] - m);
        row[t] = p;
        l += w ? p * w[t] : p;
    }
    *sum = ll_warp_sum(l);
    return m;
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

/* acc[r][b] += w_r · a_b over one chunk c of 8 columns.  With A.g null the
 * activation rows are used as they are (already normed, or staged in shared
 * memory: a generic load reads either window). */
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

/* --- GEMV tunables ---------------------------------------------------------
 * One configuration per GEMV kernel (LL_CFG_QKV, LL_CFG_GU, LL_CFG_RES,
 * LL_CFG_HEAD below); tools/bench/gemv_sweep.cu measures the candidates.
 *   P, PB    rotate_half / gate-up / adjacent pairs of rows per warp (R = 2P
 *            rows share each activation chunk): batch 1 (P) and the batch
 *            body (PB)
 *   U, UB    16-byte chunks per row and lane loaded per step, before any is
 *            used: batch 1 (U) and the batch body (UB); U·R·16 bytes per lane
 *            in flight
 *   BB       batch rows the batch body holds sums for (BB·R per lane): up
 *            to BB rows run the batch body (PB, UB, DBB), more the body of
 *            LL_MAXB sums (one pair, two chunks: it fits any budget)
 *   DBB      DB for the batch body
 *   KS       warps of a block splitting K (chunk c of a row goes to warp
 *            (c / 32) % KS); the block's THREADS/32/KS row groups each take
 *            P units of a tile, the KS partial sums meet in shared memory
 *   THREADS, MINB  __launch_bounds__: the largest block the graph may give
 *            and the blocks per SM ptxas must fit (its register cap)
 *   SA       bf16 elements of shared memory the block stages its activation
 *            rows in (RMSNorm applied once per block instead of per chunk
 *            and warp); used when B·K fits, else rows are read per chunk
 *   PFW      the first step's weight loads issued before
 *            griddepcontrol.wait (weights never depend on upstream kernels)
 *   DB       the next step's loads issued before this step is used
 *            (software pipelining across steps and tiles; twice the
 *            registers)
 * Every block loops over tiles (tile += gridDim.x), so any grid >= 1 is
 * correct: the graph may launch a whole number of waves instead of one tile
 * per block. */
template <int P_, int U_, int UB_, int KS_, int THREADS_, int MINB_, int SA_,
          bool PFW_, bool DB_, int PB_ = 1, int BB_ = LL_MAXB, bool DBB_ = DB_>
struct LlCfg {
    static constexpr int P = P_, U = U_, UB = UB_, KS = KS_, PB = PB_, BB = BB_;
    static constexpr int THREADS = THREADS_, MINB = MINB_, SA = SA_;
    static constexpr bool PFW = PFW_, DB = DB_, DBB = DBB_;
    static_assert(BB_ >= 2 && BB_ <= LL_MAXB, "the batch body holds 2 to LL_MAXB rows");
};

/* What the library shipped first (2026-11-25): two rows per warp, 4 chunks
 * per row in flight at batch 1 (2 for the batch body), no K split, blocks of
 * at most 256 threads and 2 per SM, activations read per chunk. */
typedef LlCfg<1, 4, 2, 1, 256, 2, 0, true, false> LlCfgShipped;

/* The best of tools/bench/gemv_sweep.cu per kernel on the 1B shapes (H100,
 * 2026-11-25, docs/results/gemv-sweep-h100-2026-11-25.log: the GEMV chain of
 * a step 1 306 -> 1 086 us):
 *   U8      a whole 4 KB row of K = 2048 per lane in flight (qkv)
 *   KS2W16  two warps split K, 16 warps, one block per SM (o, down)
 *   DB4     4 chunks per row, the next step's loaded before this one is
 *           used (gate/up, head)
 * Their batch bodies as the sweep's batch candidates found best
 * (-DGEMV_SWEEP_BATCH, H100, 2026-11-26,
 * docs/results/gemv-sweep-batch-h100-2026-11-26.log): up to 8 rows hold 8
 * sums per row instead of LL_MAXB, with 2 (qkv) or 4 (gate/up, head) chunks
 * per row in flight (B8); larger batches run the body of LL_MAXB sums.  In
 * the step (A/B in one call, H100, 2026-11-26): 1B at batch 8 2 619 -> 2 387
 * us with the output and down projections' too, whose batch body cost batch
 * 1 2.6 % (1 216 -> 1 247 us, the same registers) where qkv's cost 0.5 % and
 * gate/up's and the head's 0.3 % while one kernel held both; batch 1 and
 * batches now run kernels of their own (ll_run1, ll_runb), and o/down's
 * batch kernel takes KS2W16B8. */
typedef LlCfg<1, 8, 2, 2, 512, 1, 16384, true, false> LlCfgKs2w16;
typedef LlCfg<1, 8, 2, 1, 256, 2, 16384, true, false, 1, 8> LlCfgU8B8;
typedef LlCfg<1, 4, 4, 1, 256, 2, 16384, true, true, 1, 8> LlCfgDb4B8;
/* KS2W16 with the sweep's best batch body for it (8 sums, 4 chunks per row
 * in flight, not pipelined): the configuration of the output and down
 * projections' batch kernel (LL_CFG_RES_BATCH). */
typedef LlCfg<1, 8, 4, 2, 512, 1, 16384, true, false, 1, 8, false> LlCfgKs2w16B8;
/* KS2W16 in two blocks per SM (64 registers), 4 chunks per row in flight:
 * batch 1's output and down projections at the 8B shapes (H >= 4096; the
 * graph's KR), where it made the step 1.7 % faster at KV 8 192 (7 001 ->
 * 6 880 us) and 0.1 % at KV 128, while at 1B it made it 1.9 % slower
 * (1 112 -> 1 132; H100, 2026-11-26, A/Bs in one call each). */
typedef LlCfg<1, 4, 2, 2, 512, 2, 16384, true, false> LlCfgKs2w16M2;

/* The configuration of each GEMV kernel: one line to change after a sweep
 * (then the block and grid of the kernel in graphs/llama/step.yaml: block a
 * multiple of 32·KS and at most THREADS, any grid).  In the step, fewer
 * weight loads before the wait were slower (1B at KV 128: the QKV with 4
 * chunks a row +41 us, 4 pipelined +22, the gate/up with 2 pipelined +30),
 * and more were slower for the gate/up (U8: +13-16) and no faster for the
 * head (U8; H100, 2026-11-27, A/B in one call). */
#ifndef LL_CFG_QKV
#define LL_CFG_QKV LlCfgU8B8
#endif
#ifndef LL_CFG_GU
#define LL_CFG_GU LlCfgDb4B8
#endif
#ifndef LL_CFG_RES
#define LL_CFG_RES LlCfgKs2w16
#endif
#ifndef LL_CFG_HEAD
#define LL_CFG_HEAD LlCfgDb4B8
#endif
#ifndef LL_CFG_RES_BATCH
#define LL_CFG_RES_BATCH LlCfgKs2w16B8
#endif
#ifndef LL_CFG_RES_M2
#define LL_CFG_RES_M2 LlCfgKs2w16M2
#endif

/* The batch kernels' body: 1 on tensor cores (ll_gemv_tc), with LL_TCU
 * (up to 8 batch rows) or LL_TCU2 (up to 16) 32-column blocks of a warp's
 * 16 weight rows in flight; 0 the CUDA-core bodies of the configurations
 * (PB, UB, BB, DBB), kept to measure against.  1B at KV 128, µs a step
 * (H100, 2026-11-27, A/B in one call): batch 8 2 359 -> 1 485, batch 16
 * 4 707 -> 2 149 (LL_TCU 8: 1 578 -> 1 567 at batch 8 against 4, but
 * 1 282 -> 1 298 at batch 2; LL_TCU 8 with LL_TCU2 4 is what fits 128
 * registers without spills; a third body for batches of up to 4 spilled). */
#ifndef LL_TC
#define LL_TC 1
#endif
#ifndef LL_TCU
#define LL_TCU 8
#endif
#ifndef LL_TCU2
#define LL_TCU2 4
#endif

/* Shared memory of one GEMV block. */
template <class C> struct LlSmem {
    float rs[LL_MAXB];
    float ssq[(C::THREADS / 32) * LL_MAXB]; /* per-warp sums of squares */
    float red[C::KS > 1 ? (C::THREADS / 32) * 2 * (C::P > C::PB ? C::P : C::PB) * LL_MAXB : 1];
    alignas(16) bf16 sa[C::SA > 0 ? C::SA : 8];
};

/* A chunk normed: bf16(g · bf16(x · r)), HF's RMSNorm.  (ll_chunk and
 * ll_stage write the same loop inline: through this helper, batch 1's
 * kernels compile to other code than was measured.) */
__device__ __forceinline__ void ll_norm8(float (&a)[8], const float (&gv)[8], float r)
{
#pragma unroll
    for (int e = 0; e < 8; ++e)
        a[e] = bfr(gv[e] * bfr(a[e] * r));
}

/* A staged chunk normed in place. */
__device__ __forceinline__ void ll_norm_at(bf16 *p, const float (&gv)[8], float r)
{
    float a[8];
    ld16(p, a);
    ll_norm8(a, gv, r);
    st16(p, a);
}

/* The block's activation rows, RMSNorm applied when A.g is set, into sa
 * (sm.sa or dynamic shared memory; bf16 is exact: HF's normed activation is
 * a bf16 tensor).  Every thread loads its chunks of the rows at once and
 * sums their squares, so the whole stage reads x once, in one round trip to
 * L2 (before, one warp per row summed its K/256 chunks in turn while the
 * block waited, then a second pass read x again; every GEMV paid that after
 * its wait).  g0: this thread's first chunk of the norm weight, loaded
 * before griddepcontrol.wait.  Every thread calls it; ends with a barrier. */
template <class C>
__device__ __forceinline__ void ll_stage(const LlAct &A, int B, float eps,
                                         uint4 g0, LlSmem<C> &sm, bf16 *sa)
{
    const int K = A.K, nc = K / 8;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    for (int b = 0; b < B; ++b) {
        const bf16 *xr = A.row(b);
        float s = 0.0f;
        for (int c = threadIdx.x; c < nc; c += blockDim.x) {
            float a[8];
            ld16(xr + c * 8, a);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                s = fmaf(a[e], a[e], s);
            st16(sa + (long long)b * K + c * 8, a);
        }
        if (A.g) {
            s = ll_warp_sum(s);
            if (lane == 0)
                sm.ssq[w * LL_MAXB + b] = s;
        }
    }
    __syncthreads();
    if (!A.g)
        return;
    if ((int)threadIdx.x < B) {
        float s = 0.0f;
        for (int k = 0; k < nw; ++k)
            s += sm.ssq[k * LL_MAXB + threadIdx.x];
        sm.rs[threadIdx.x] = 1.0f / sqrtf(s / (float)K + eps);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < B * nc; i += blockDim.x) {
        const int b = i / nc, c = i % nc;
        bf16 *p = sa + (long long)b * K + c * 8;
        float a[8], gv[8];
        ld16(p, a);
        ll_unpack(i < nc && i == (int)threadIdx.x ? g0 : ll_ldw(A.g + c * 8), gv);
        const float r = sm.rs[b];
#pragma unroll
        for (int e = 0; e < 8; ++e)
            a[e] = bfr(gv[e] * bfr(a[e] * r));
        st16(p, a);
    }
    __syncthreads();
}

/* ll_stage for the batch kernels: every chunk of every row copied in at once
 * (cp.async, no registers), then the sums of squares and the norm read
 * shared memory.  ll_stage's loop waits on one row at a time (its stores to
 * shared memory keep the next row's loads behind them): 8 round trips to L2
 * at batch 8, 16 for the down projection's 8 rows of 8 192, on the critical
 * path after griddepcontrol.wait.  Batch 1's kernels keep ll_stage: one row is
 * one round trip either way, and their code stays as measured. */
template <class C>
__device__ __forceinline__ void ll_stage_all(const LlAct &A, int B, float eps,
                                             uint4 g0, LlSmem<C> &sm, bf16 *sa)
{
    const int K = A.K, nc = K / 8;
    for (int i = threadIdx.x; i < B * nc; i += blockDim.x) {
        const int b = i / nc, c = i - b * nc;
        ll_cp16(sa + (long long)b * K + c * 8, A.row(b) + c * 8);
    }
    ll_cp_commit();
    ll_cp_wait_all();
    __syncthreads();
    if (!A.g)
        return;
    /* a warp per row, as ll_row_scales sums them (the weights prefetched
     * before the wait hold most of the registers: no per-row sums per
     * thread) */
    ll_row_scales(LlAct{sa, A.g, nullptr, K, nullptr, 0}, B, eps, sm.rs);
    for (int c = threadIdx.x; c < nc; c += blockDim.x) {
        float gv[8];
        ll_unpack(c == (int)threadIdx.x ? g0 : ll_ldw(A.g + c * 8), gv);
        for (int b = 0; b < B; ++b)
            ll_norm_at(sa + (long long)b * K + c * 8, gv, sm.rs[b]);
    }
    __syncthreads();
}

/* Where a GEMV block stages its B activation rows (ll_stage): the launch's
 * dynamic shared memory when the node gives B·K·2 bytes (a batch of long
 * rows: 8 rows of 4 096 are 64 KB, past the 48 KB a block may hold
 * statically), else sm.sa when B·K fits SA; null, the rows read and normed
 * per chunk, which at batch 8 costs more instructions than the weights'
 * bytes allow. */
template <class C>
__device__ __forceinline__ bf16 *ll_stage_room(const LlAct &A, int B, LlSmem<C> &sm)
{
    if (C::SA == 0)
        return nullptr;
    bf16 *sa = (long long)B * A.K <= C::SA ? sm.sa : nullptr;
    extern __shared__ uint4 ll_dyn[];
    uint32_t dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if ((long long)B * A.K * 2 <= (long long)dyn)
        sa = reinterpret_cast<bf16 *>(ll_dyn);
    return sa;
}

/* This thread's first chunk of the norm weight for ll_stage (a weight, so
 * loadable before griddepcontrol.wait), or zeros when nothing is staged or
 * normed. */
__device__ __forceinline__ uint4 ll_norm_chunk(const LlAct &A, const bf16 *sa)
{
    if (sa && A.g && (int)threadIdx.x < A.K / 8)
        return ll_ldw(A.g + threadIdx.x * 8);
    return make_uint4(0, 0, 0, 0);
}

/* The activation rows a GEMV multiplies, after griddepcontrol.wait: staged
 * in sa, normed, and returned as plain rows; or, sa null, A itself with the
 * row scales its chunks are normed by as they are read. */
template <class C>
__device__ __forceinline__ LlAct ll_input(LlAct A, int B, float eps, uint4 g0,
                                          LlSmem<C> &sm, bf16 *sa)
{
    if (sa) {
        ll_stage_all<C>(A, B, eps, g0, sm, sa);
        return LlAct{sa, nullptr, nullptr, A.K, nullptr, 0};
    }
    if (A.g)
        ll_row_scales(A, B, eps, sm.rs);
    A.rs = sm.rs;
    return A;
}

/* The GEMV of a grid: Body maps unit u (< body.units()) to two weight rows
 * (body.rows) and takes their two sums per batch row (body.epi, one lane).
 * Block tiles of G = warps/KS groups x P units; a warp of group rg and K
 * slice kg holds R = 2P rows and loads, per step, U chunks of each
 * (chunk index (s·U + j)·32·KS + kg·32 + lane), into registers indexed by
 * compile-time constants only.  The first step's loads go before
 * griddepcontrol.wait (PFW), and after them body.early of the warp's first
 * unit (what its epilogue may take from an earlier launch, passed to
 * body.epi); then the dependents are triggered at once, and the rows
 * staged in shared memory where ll_stage_room finds room (the same choice,
 * written inline: through the helpers batch 1's code changed). */
template <class C, int P, int MB, int U, bool DB, class Body>
__device__ __forceinline__ void ll_gemv_grid(const Body &body, int B, float eps,
                                             LlSmem<C> &sm)
{
    constexpr int R = 2 * P, KS = C::KS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kg = warp % KS, rg = warp / KS;
    const int G = (blockDim.x >> 5) / KS;
    LlAct A = body.in();
    const int nch = A.K / 8;
    const long long nu = body.units();
    const long long ntile = (nu + (long long)G * P - 1) / ((long long)G * P);
    const int nstep = (nch + 32 * KS * U - 1) / (32 * KS * U);
    const int cl = kg * 32 + lane;

    /* Issue step s of tile t into w (nothing past the last tile or row). */
    auto load = [&](uint4 (&w)[U][R], long long t, int s) {
        if (t >= ntile)
            return;
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const long long u = (t * G + rg) * P + p;
            {
                /* a unit past the end reloads the last one: its sums are
                 * never stored, and no register stays undefined */
                const bf16 *wr[2];
                body.rows(u < nu ? u : nu - 1, wr);
#pragma unroll
                for (int j = 0; j < U; ++j) {
                    const int c = (s * U + j) * 32 * KS + cl;
                    if (c < nch) {
                        w[j][2 * p] = ll_ldw(wr[0] + c * 8);
                        w[j][2 * p + 1] = ll_ldw(wr[1] + c * 8);
                    }
                }
            }
        }
    };

    long long t = blockIdx.x;
    uint4 cur[U][R];
    bf16 *sa = (long long)B * A.K <= C::SA ? sm.sa : nullptr;
    {
        extern __shared__ uint4 ll_dyn[];
        uint32_t dyn;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
        if ((long long)B * A.K * 2 <= (long long)dyn)
            sa = reinterpret_cast<bf16 *>(ll_dyn);
    }
    const bool staged = C::SA > 0 && sa;
    uint4 g0 = make_uint4(0, 0, 0, 0);
    if (C::PFW) {
        load(cur, t, 0);
        if (staged && A.g && (int)threadIdx.x < nch)
            g0 = ll_ldw(A.g + threadIdx.x * 8);
    }
    /* after the weights' loads: issued first, pos's round trip and the math
     * on it held back the weight stream (1B device loop 987 -> 985 us a
     * token, 8B step 5 462 -> 5 447; H100, 2026-11-27) */
    const typename Body::Early pre = body.early((t * G + rg) * P);
    ll_wait(!A.tok);
    body.prologue();
    if (staged) {
        if (!C::PFW && A.g && (int)threadIdx.x < nch)
            g0 = ll_ldw(A.g + threadIdx.x * 8);
        ll_stage<C>(A, B, eps, g0, sm, sa);
        A = LlAct{sa, nullptr, nullptr, A.K, nullptr, 0};
    } else {
        if (A.g)
            ll_row_scales(A, B, eps, sm.rs);
        A.rs = sm.rs;
    }
    if (!C::PFW)
        load(cur, t, 0);

    float acc[R][MB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int b = 0; b < MB; ++b)
            acc[r][b] = 0.0f;
    for (; t < ntile; t += gridDim.x) {
        const long long ub = (t * G + rg) * P;
        for (int s = 0; s < nstep; ++s) {
            const long long tn = s + 1 < nstep ? t : t + gridDim.x;
            const int sn = s + 1 < nstep ? s + 1 : 0;
            uint4 nxt[U][R];
            if (DB)
                load(nxt, tn, sn);
#pragma unroll
            for (int j = 0; j < U; ++j) {
                const int c = (s * U + j) * 32 * KS + cl;
                if (c < nch)
                    ll_chunk<R, MB>(acc, cur[j], A, B, c);
            }
            if (DB) {
#pragma unroll
                for (int j = 0; j < U; ++j)
#pragma unroll
                    for (int r = 0; r < R; ++r)
                        cur[j][r] = nxt[j][r];
            } else {
                load(cur, tn, sn);
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int b = 0; b < MB; ++b)
                if (b < B)
                    acc[r][b] = ll_warp_sum(acc[r][b]);
        if (KS > 1) {
            /* the KS slices of a row group meet in shared memory */
            if (lane == 0)
#pragma unroll
                for (int r = 0; r < R; ++r)
#pragma unroll
                    for (int b = 0; b < MB; ++b)
                        sm.red[(warp * R + r) * LL_MAXB + b] = acc[r][b];
            __syncthreads();
            if (kg == 0 && lane == 0)
#pragma unroll
                for (int r = 0; r < R; ++r)
#pragma unroll
                    for (int b = 0; b < MB; ++b) {
                        float v = acc[r][b];
                        for (int k = 1; k < KS; ++k)
                            v += sm.red[((warp + k) * R + r) * LL_MAXB + b];
                        acc[r][b] = v;
                    }
            __syncthreads();
        }
        /* (a block of warps not a multiple of KS: the spare warps' units
         * belong to the next tile, and res adds in place) */
        if (kg == 0 && lane == 0 && rg < G)
#pragma unroll
            for (int p = 0; p < P; ++p)
                if (ub + p < nu)
                    body.template epi<MB>(ub + p, acc[2 * p], acc[2 * p + 1], pre);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int b = 0; b < MB; ++b)
                acc[r][b] = 0.0f;
    }
}

/* --- The batch body on tensor cores ----------------------------------------
 * At batch B > 1 the CUDA-core bodies above spend B FMAs per weight element,
 * so past a few rows a GEMV runs out of instructions before it runs out of
 * bytes (1B at batch 8: 2.3x batch 1's step).  Here a warp multiplies
 * 16 weight rows by the batch with mma.sync m16n8k16 (bf16 in, f32 sums):
 * 2 mma per 16 bytes of each row, whatever B.
 *
 * A block takes tiles of 8 units (16 rows: lane group g holds unit 8t + g's
 * two rows as A's rows g and g + 8), all its warps splitting K: warp w takes
 * the 32-column blocks w, w + W, ... of the tile, U of them in flight.  Each
 * lane loads 16 bytes of each of its two rows (columns 8 t4 .. 8 t4 + 7 of
 * the block, t4 = lane % 4) and the same 16 bytes of activation row g (and
 * g + 8: NT n-tiles of 8 batch rows): an mma sums over its 16 columns in any
 * order, so the lane's 8 columns serve as its k pairs {2 t4, 2 t4 + 1} and
 * {2 t4 + 8, 2 t4 + 9} of two mma (.x .y, then .z .w) for A and B alike, and
 * no shuffle or ldmatrix rearranges anything.  The W warps' sums of the
 * tile meet in shared memory in a fixed order (deterministic), and 8 lanes
 * hand each unit's two rows to body.epi, as the other bodies do. */
struct LlTcSmem {
    float red[8 * 32 * 8]; /* the partial sums of up to 8 warps, 2 n-tiles */
    float fin[32 * 8];     /* the tile's sums, in the lanes' layout */
};

/* d += a · b, one m16n8k16 tile (bf16 operands, f32 accumulators). */
__device__ __forceinline__ void ll_mma(float (&d)[4], uint32_t a0, uint32_t a1,
                                       uint32_t a2, uint32_t a3, uint32_t b0,
                                       uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* d += a · b for an A tile whose rows 8-15 are zero (a1 = a3 = 0): only
 * the C tile's rows 0-7 (d[0], d[1]) are kept. */
__device__ __forceinline__ void ll_mma8(float (&d)[2], uint32_t a0, uint32_t a2,
                                        uint32_t b0, uint32_t b1)
{
    float z2 = 0.0f, z3 = 0.0f;
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(z2), "+f"(z3)
        : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

/* Four 8x8 bf16 matrices from shared memory, lanes 8i..8i+7 naming matrix
 * i's rows: r[i] holds row lane / 4, columns 2 (lane % 4) and + 1; .trans:
 * rows 2 (lane % 4) and + 1 of column lane / 4. */
__device__ __forceinline__ void ll_ldsm4(uint32_t (&r)[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

__device__ __forceinline__ void ll_ldsm4t(uint32_t (&r)[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

/* Two floats as a bf16 pair (round to nearest), x in the low half. */
__device__ __forceinline__ uint32_t ll_bf2(float x, float y)
{
    const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const uint32_t *>(&h);
}

/* Chunk c of activation row n as bf16 pairs (normed when A.g is set, as
 * ll_chunk norms it); zeros past B or K, so the mma adds nothing there. */
__device__ __forceinline__ uint4 ll_tc_act(const LlAct &A, int B, int n, int c,
                                           int nch)
{
    if (n >= B || c >= nch)
        return make_uint4(0, 0, 0, 0);
    const bf16 *p = A.row(n) + c * 8;
    if (!A.g)
        return *reinterpret_cast<const uint4 *>(p);
    float a[8], gv[8];
    ld16(p, a);
    ll_unpack(ll_ldw(A.g + c * 8), gv);
    ll_norm8(a, gv, A.rs[n]);
    return make_uint4(pack_bf16x2(a[0], a[1]), pack_bf16x2(a[2], a[3]),
                      pack_bf16x2(a[4], a[5]), pack_bf16x2(a[6], a[7]));
}

template <class C, int NT, int U, class Body>
__device__ __forceinline__ void ll_gemv_tc(const Body &body, int B, float eps,
                                           LlSmem<C> &sm, LlTcSmem &tc)
{
    constexpr int NV = 4 * NT; /* a lane's sums of a tile */
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int W = blockDim.x >> 5, g = lane >> 2, t4 = lane & 3;
    LlAct A = body.in();
    const int nch = A.K / 8;
    const long long nu = body.units();
    const long long ntile = (nu + 7) / 8;
    const int nstep = ((nch + 3) / 4 + U * W - 1) / (U * W);

    /* Step s of tile t into wt; zeros past K (garbage times a zero could be
     * a NaN). */
    auto load = [&](uint4 (&wt)[U][2], long long t, int s) {
        if (t >= ntile)
            return;
        const long long u = t * 8 + g;
        const bf16 *wr[2];
        body.rows(u < nu ? u : nu - 1, wr); /* its sums are never stored */
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const int c = ((s * U + j) * W + w) * 4 + t4;
            wt[j][0] = c < nch ? ll_ldw(wr[0] + c * 8) : make_uint4(0, 0, 0, 0);
            wt[j][1] = c < nch ? ll_ldw(wr[1] + c * 8) : make_uint4(0, 0, 0, 0);
        }
    };

    long long t = blockIdx.x;
    uint4 cur[U][2];
    bf16 *const sa = ll_stage_room<C>(A, B, sm);
    load(cur, t, 0); /* weights: before the wait */
    const uint4 g0 = ll_norm_chunk(A, sa);
    /* (the batch bodies take their epilogues' values after the wait: a
     * register more held through the loop spilled the batch QKV) */
    const typename Body::Early pre{};
    ll_wait(!A.tok);
    body.prologue();
    A = ll_input<C>(A, B, eps, g0, sm, sa);

    for (; t < ntile; t += gridDim.x) {
        float d[NT][4];
#pragma unroll
        for (int n = 0; n < NT; ++n)
            d[n][0] = d[n][1] = d[n][2] = d[n][3] = 0.0f;
        for (int s = 0; s < nstep; ++s) {
#pragma unroll
            for (int j = 0; j < U; ++j) {
                const int c = ((s * U + j) * W + w) * 4 + t4;
                const uint4 a = cur[j][0], b = cur[j][1];
#pragma unroll
                for (int n = 0; n < NT; ++n) {
                    const uint4 x = ll_tc_act(A, B, n * 8 + g, c, nch);
                    ll_mma(d[n], a.x, b.x, a.y, b.y, x.x, x.y);
                    ll_mma(d[n], a.z, b.z, a.w, b.w, x.z, x.w);
                }
            }
            /* the next step's weights, or the next tile's first, fly
             * while this tile's sums meet */
            if (s + 1 < nstep)
                load(cur, t, s + 1);
            else
                load(cur, t + gridDim.x, 0);
        }
        /* Warps 8.. add into warps 0..7 (8 at a time), which then write. */
        for (int base = 8; base < W; base += 8) {
            if (w >= base && w < base + 8)
#pragma unroll
                for (int n = 0; n < NT; ++n)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        tc.red[((w - base) * 32 + lane) * NV + n * 4 + i] = d[n][i];
            __syncthreads();
            if (w < 8 && w + base < W)
#pragma unroll
                for (int n = 0; n < NT; ++n)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        d[n][i] += tc.red[(w * 32 + lane) * NV + n * 4 + i];
            __syncthreads();
        }
        if (w < 8)
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    tc.red[(w * 32 + lane) * NV + n * 4 + i] = d[n][i];
        __syncthreads();
        const int nw = W < 8 ? W : 8;
        for (int e = threadIdx.x; e < 32 * NV; e += blockDim.x) {
            float v = 0.0f;
            for (int k = 0; k < nw; ++k)
                v += tc.red[k * 32 * NV + e];
            tc.fin[e] = v;
        }
        __syncthreads();
        /* Lane (g, t4) held unit g's rows for batch rows 8 n + 2 t4 + {0, 1}:
         * sums [n·4 + {0, 1}] of its first row, [n·4 + {2, 3}] of its second. */
        const long long u = t * 8 + threadIdx.x;
        if (threadIdx.x < 8 && u < nu) {
            float a0[8 * NT], a1[8 * NT];
#pragma unroll
            for (int b = 0; b < 8 * NT; ++b) {
                const int e = (threadIdx.x * 4 + ((b & 7) >> 1)) * NV + (b >> 3) * 4 + (b & 1);
                a0[b] = tc.fin[e];
                a1[b] = tc.fin[e + 2];
            }
            body.template epi<8 * NT>(u, a0, a1, pre);
        }
    }
}

/* A GEMV's body as two kernels of the same parameters, which graphs/llama/
 * step.yaml picks between by B (`kernel: {pick, from}`): ll_run1, batch 1's
 * body (P pairs, U chunks per row in flight), and ll_runb, the batch bodies
 * (on tensor cores, ll_gemv_tc, one n-tile up to 8 rows and two up to
 * LL_MAXB; with LL_TC 0 the CUDA-core ones: up to BB rows with PB, UB, DBB,
 * BB sums per row instead of LL_MAXB leaving registers for bytes in flight,
 * up to LL_MAXB rows with the smallest).
 * Batch 1's body alone in a kernel compiles to faster code: any second body
 * beside it, inline or behind a call, cost what separating them gains
 * (H100, 2026-11-26, 1B step at KV 128, A/B in one call: 1 218 us with every
 * body in one kernel; 1 218 with batch 1's kernel holding the LL_MAXB body
 * inline, 1 228 behind a __noinline__ call, 1 131-1 139 with a trap instead,
 * 1 113 with this loop).  So ll_run1 runs a larger batch a row at a time
 * through the same code (Body::at): correct, B times the weight traffic.
 * ll_runb runs batch 1 in its batch body. */
template <class C, class Body>
__device__ __forceinline__ void ll_run1(const Body &body, float eps)
{
    __shared__ LlSmem<C> sm;
    for (int b = 0; b < body.B; ++b)
        ll_gemv_grid<C, C::P, 1, C::U, C::DB>(body.at(b), 1, eps, sm);
}

template <class C, class Body>
__device__ __forceinline__ void ll_runb(const Body &body, float eps)
{
    __shared__ LlSmem<C> sm;
    /* More rows than the bodies hold sums for would write past sm's arrays
     * (or, on tensor cores, go unmultiplied): the launch fails instead of
     * computing garbage (a graph cannot check a
     * kernel's limits before it runs). */
    if (body.B > LL_MAXB)
        __trap();
#if LL_TC
    __shared__ LlTcSmem tc;
    if (body.B <= 8)
        ll_gemv_tc<C, 1, LL_TCU>(body, body.B, eps, sm, tc);
    else
        ll_gemv_tc<C, 2, LL_TCU2>(body, body.B, eps, sm, tc);
#else
    if constexpr (C::BB == LL_MAXB)
        ll_gemv_grid<C, C::PB, LL_MAXB, C::UB, C::DBB>(body, body.B, eps, sm);
    else if (body.B <= C::BB)
        ll_gemv_grid<C, C::PB, C::BB, C::UB, C::DBB>(body, body.B, eps, sm);
    else
        ll_gemv_grid<C, 1, LL_MAXB, 2, false>(body, body.B, eps, sm);
#endif
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

/* A body's early values (Body::early, ll_gemv_grid) where it has none. */
struct LlNoEarly {};

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
 * x, the residual stream: the gather costs no launch of its own.
 * Unit u: head hh = u / (HD/2), pair i = u % (HD/2), rows hh·HD + i and
 * hh·HD + i + HD/2 (rotate_half partners). */
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
    __device__ __forceinline__ long long units() const
    {
        return (long long)(NH + 2 * NKV) * (HD / 2);
    }
    __device__ __forceinline__ LlAct in() const
    {
        return LlAct{gather ? emb : x, g, nullptr, H, gather ? tok : nullptr, gather};
    }
    __device__ __forceinline__ void rows(long long u, const bf16 *(&wr)[2]) const
    {
        const int half = HD / 2;
        const long long r0 = (u / half) * HD + u % half;
        wr[0] = w + r0 * H;
        wr[1] = w + (r0 + half) * H;
    }
    __device__ __forceinline__ void prologue() const
    {
        if (gather && blockIdx.x == 0)
            ll_copy_rows(emb, tok, gather, x, B, H);
    }
    /* Batch row b alone (ll_run1's larger batches). */
    __device__ __forceinline__ LlQkv at(int b) const
    {
        LlQkv r = *this;
        r.x = x + (long long)b * H;
        r.tok = tok + b;
        r.q = q + (long long)b * NH * HD;
        r.kc = kc + (long long)b * NKV * CTX * HD;
        r.vc = vc + (long long)b * NKV * CTX * HD;
        r.B = 1;
        return r;
    }
    /* Unit u's rotation at position t (none for v's rows). */
    __device__ __forceinline__ void rot(long long u, int t, float &c, float &s) const
    {
        const int half = HD / 2;
        const int hh = (int)(u / half), i = (int)(u % half);
        c = 1.0f, s = 0.0f;
        if (hh < NH + NKV) {
            const float ang = (float)t * ll_inv_freq(i, HD, rope);
            c = bfr(cosf(ang));
            s = bfr(sinf(ang));
        }
    }
    /* pos and unit u's rotation, taken before griddepcontrol.wait.  From the
     * second layer on (gather 0) pos comes from a launch before the step's
     * first kernel, which triggers after its wait (argmax, or the loop's
     * emit, ends the step: the attention reads it early too; LL_EARLY), so
     * the epilogue's powf, cosf and sinf leave the step's critical path;
     * after the sums they took 1.2 us a layer against 0.1-0.3 for the other
     * GEMVs' epilogues (timeline probe, H100, 2026-11-27).  The first
     * layer's QKV (gather > 0) may follow the kernel that writes pos: it
     * reads pos after the wait, in epi. */
    struct Early {
        long long u = -1; /* the unit it holds, -1 for none */
        int t = 0;
        float c = 1.0f, s = 0.0f;
    };
    __device__ __forceinline__ Early early(long long u) const
    {
        Early e{};
        if (gather || u >= units())
            return e;
        e.u = u;
        e.t = pos[0];
        rot(u, e.t, e.c, e.s);
        return e;
    }
    template <int MB>
    __device__ __forceinline__ void epi(long long u, const float (&a0)[MB],
                                        const float (&a1)[MB], const Early &e) const
    {
        const int half = HD / 2;
        const int hh = (int)(u / half), i = (int)(u % half);
        int t;
        float c, s;
        if (u == e.u) {
            t = e.t, c = e.c, s = e.s;
        } else {
            t = pos[0];
            rot(u, t, c, s);
        }
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
            float y0 = bfr(a0[b]), y1 = bfr(a1[b]);
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

/* Unit j: gate row j and up row F + j. */
struct LlGateUp {
    const bf16 *x, *g, *w;
    bf16 *act;
    int B, H, F;
    float eps;
    __device__ __forceinline__ long long units() const { return F; }
    __device__ __forceinline__ LlAct in() const
    {
        return LlAct{x, g, nullptr, H, nullptr, 0};
    }
    __device__ __forceinline__ void rows(long long j, const bf16 *(&wr)[2]) const
    {
        wr[0] = w + j * H;
        wr[1] = w + (j + F) * H;
    }
    __device__ __forceinline__ void prologue() const {}
    typedef LlNoEarly Early;
    __device__ __forceinline__ Early early(long long) const { return {}; }
    __device__ __forceinline__ LlGateUp at(int b) const
    {
        LlGateUp r = *this;
        r.x = x + (long long)b * H;
        r.act = act + (long long)b * F;
        r.B = 1;
        return r;
    }
    template <int MB>
    __device__ __forceinline__ void epi(long long j, const float (&a0)[MB],
                                        const float (&a1)[MB], LlNoEarly) const
    {
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
            const float gt = bfr(a0[b]), up = bfr(a1[b]);
            const float sl = bfr(gt / (1.0f + expf(-gt)));
            act[(long long)b * F + j] = __float2bfloat16_rn(sl * up);
        }
    }
};

/* y[b][n] = bf16(acc) (head: normed x, no residual) or
 * y[b][n] = bf16(y[b][n] + bf16(acc)) (res: the residual stream).
 * Unit u: rows 2u and 2u + 1 (the last repeated when N is odd). */
template <bool RES> struct LlRows {
    const bf16 *a, *g, *w;
    bf16 *y;
    int B, K, N;
    float eps;
    __device__ __forceinline__ long long units() const { return (N + 1) / 2; }
    __device__ __forceinline__ LlAct in() const
    {
        return LlAct{a, g, nullptr, K, nullptr, 0};
    }
    __device__ __forceinline__ void rows(long long u, const bf16 *(&wr)[2]) const
    {
        const long long m0 = 2 * u, m1 = m0 + 1 < N ? m0 + 1 : m0;
        wr[0] = w + m0 * K;
        wr[1] = w + m1 * K;
    }
    __device__ __forceinline__ void prologue() const {}
    typedef LlNoEarly Early;
    __device__ __forceinline__ Early early(long long) const { return {}; }
    __device__ __forceinline__ LlRows at(int b) const
    {
        LlRows r = *this;
        r.a = a + (long long)b * K;
        r.y = y + (long long)b * N;
        r.B = 1;
        return r;
    }
    template <int MB>
    __device__ __forceinline__ void epi(long long u, const float (&a0)[MB],
                                        const float (&a1)[MB], LlNoEarly) const
    {
#pragma unroll
        for (int b = 0; b < MB; ++b) {
            if (b >= B)
                break;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const long long n = 2 * u + r;
                if (n >= N)
                    break;
                bf16 *d = y + (long long)b * N + n;
                const float acc = r ? a1[b] : a0[b];
                const float v = RES ? bfr(acc) + __bfloat162float(*d) : acc;
                *d = __float2bfloat16_rn(v);
            }
        }
    }
};

/* --- Attention ------------------------------------------------------------ */

#define LL_AW 8 /* warps of an attention block (its most threads: 32 * LL_AW) */
#define LL_AJ 4 /* positions a lane group scores before it updates its softmax */
/* The most positions one block takes whole (no partials, no combine), when
 * its room holds them.  On the CUDA cores past 128 the blocks' splits and
 * their combine are faster than one block's warps walking the cache: 1B at
 * KV 160-255 1 111 - 1 125 us a step with one block up to 256, 1 101 -
 * 1 111 with this, the same at KV 128, and the device loop from 128
 * (positions 128-255) 1 127 -> 1 111 us a token (H100, 2026-11-26, A/B in
 * one call, each twice).  The tensor cores score 16 positions an mma, and
 * there one block's 8 warps take 256 faster than splits and their combine:
 * 1B batch 1 at KV 128 1 003.5 - 1 007.8 -> 992.7 - 994.5 us a step, at
 * KV 200 1 019.5 - 1 021.2 -> 994.0 - 994.4; batch 8 at KV 128 1 450.8 -
 * 1 451.8 -> 1 423.3 - 1 425.8, at KV 200 1 452.4 - 1 453.0 -> 1 422.0 -
 * 1 425.4, KV 1 024 unchanged (H100, 2026-11-27, A/B in one call, each
 * twice).  At HD 128 the room (AR 128) holds no more than 128. */
#define LL_ONE 128
#define LL_ONE_TC 256
/* At batch 1 on the tensor cores a split takes no fewer positions than
 * cover 0..pos in LL_SPLITS_64 splits at HD 64, LL_SPLITS_128 at HD 128
 * (twice the work a position: more splits pay).  The fewest per split that
 * fill the grid (33 of 16 at 1B) made every split cost a partial, a merge
 * and a slot in the combine for one or two chunks of work.  A/B in one
 * call, each twice (H100, 2026-11-27), us a step: 1B at KV 512 1 042 ->
 * 1 019 (17 splits: 1 030), 1 024 1 056 -> 1 028 (1 034), 2 048 1 070 ->
 * 1 054 (1 051), 4 096 1 097 -> 1 085 (1 085), 128 and 8 192 the same;
 * 8B at KV 512 5 544 -> 5 519 with 17 (9: 5 543), 1 024 5 604 -> 5 555
 * (9: 5 633), 2 048 5 692 -> 5 671 (both), 128 the same. */
#define LL_SPLITS_64 9
#define LL_SPLITS_128 17

/* Partials: per (b, head, split) HD floats of o (relative to its max), then
 * the max and the sum of exponentials; cdiv(CTX, S) splits of room per
 * head.  The grid's x extent is fixed by the graph (a wave or two of blocks
 * for every length); the split length is chosen from pos at run time.  A
 * block holds one split's keys and values in the node's dynamic shared
 * memory (R positions: its bytes over HD * 4, at most LL_MAXS), so a cache
 * of up to R positions, and at most LL_ONE (LL_ONE_TC on the tensor
 * cores), is one split of one block,
 * written straight to out: no partials, no counter, no combine (each an L2
 * round trip on the critical path).  Longer caches take the fewest
 * positions that let the grid cover 0..pos in one pass, at least S (so the
 * splits fit their room) and at most R; past that, blocks take several
 * splits in turn.  A grid sized by CTX instead (one block per S positions)
 * spent most of a short step scheduling thousands of blocks that only read
 * pos and left.
 *
 * pos, and the cache before it, come from earlier launches (in the step
 * only argmax, its last kernel, writes pos), so a block reads pos and copies
 * its first split's keys and values below pos into shared memory
 * (cp.async) before griddepcontrol.wait; after it, only q and the row at
 * pos (this step's llama_qkv's) remain.  Then each warp scores its own
 * positions and keeps its own running max, sum and output in registers
 * (flash-decoding inside the warp), and one barrier merges the warps: the
 * scores never go through shared memory and no barrier separates score,
 * softmax and sums. */

/* The attention block's shared memory, all of it the node's dynamic shared
 * memory (sized by the graph for its shapes: a block of static arrays sized
 * for the largest G and HD took 37 KB more): one split's keys and values (R
 * positions), q of the kv head's G query heads, each warp's output, max and
 * sum per head.  Once the splits are done, the combine keeps each split's
 * max and sum where the keys were. */
struct LlAttnSmem {
    bf16 *ks, *vs;
    float *sq, *so, *sm, *sl;
    int R;
};


/* exp(a - m), 0 for a = -inf (m may be -inf too: no NaN). */
__device__ __forceinline__ float ll_rel_exp(float a, float m)
{
    return a == -INFINITY ? 0.0f : expf(a - m);
}

/* A warp's running max, sum and output on the tensor cores' path (rows gid
 * of the mma, its 64 output columns). */
struct LlTcSums {
    float m, l, o[8][2];
    __device__ __forceinline__ void zero()
    {
        m = -INFINITY, l = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j)
            o[j][0] = o[j][1] = 0.0f;
    }
};

/* The attention's three kernels, each correct at any batch, each trapping
 * where another's heads are (valid), and each without the code of the
 * others, which in one kernel cost spills or the batch 1 step's latency:
 *   LL_A1   llama_attn_bf16: each split's warps merged into its own partial
 *           (at batch 1 each block takes one split at most up to KV 8 448 at
 *           HD 64, 4 224 at HD 128);
 *   LL_AB   llama_attn_batch_bf16: on the tensor cores each warp keeps its
 *           sums across the splits its block takes in turn, and the warps
 *           merge once, into one partial a block; at HD 128 the room holds
 *           two splits, the next loading while this one is scored;
 *   LL_AODD llama_attn_odd_bf16: heads of a row of chunks that is no power
 *           of two (HD 24, 40, ..., 96: Phi-3's), on the CUDA cores, their
 *           lane groups wider than a row.  In one kernel with the others,
 *           that code pushed HD 64 and 128 into spills (20-40 bytes, the 1B
 *           step 2-4 % slower, H100 2026-11-27).
 * HDT = 64 compiles LL_A1 and LL_AB for heads of 64 alone
 * (llama_attn64_bf16, llama_attn_batch64_bf16; valid() traps on others):
 * the tensor cores' path at HD 128 and the CUDA cores' path are left out,
 * half the code (97 -> 51 KB, 118 -> 52 KB of SASS), the same registers
 * and arithmetic.  1B at KV 128: batch 1 1 028 -> 1 013 us a step, batch 8
 * 1 472 -> 1 457 (H100, 2026-11-27, A/B in one call, each twice).
 * HDT = 128 compiles LL_A1 for heads of 128 in blocks of two warps or more
 * (llama_attn128_bf16, 114 registers): there, and at HDT 64, a split of
 * one chunk is stored from one warp's registers (warps_tc), which in the
 * kernel for every head size spilled 4 bytes and gained nothing. */
enum { LL_A1, LL_AB, LL_AODD };

template <int MODE, int HDT = 0> struct LlAttn {
    static constexpr bool ODD = MODE == LL_AODD, ACC = MODE == LL_AB;
    const bf16 *q, *kc, *vc;
    const int *pos;
    float *part;
    int *cnt;
    bf16 *out;
    int B, NH, NKV, HD, CTX, S;
    const bf16 *pf0, *pf1; /* two ranges of pfn bytes each to prefetch into L2 */
    int pfn;

    /* While the attention runs, the weights stream: the next GEMV's blocks
     * can hold only their first loads (the output projection's: all of Wo),
     * so the memory would idle for most of the attention.  Every block,
     * active or not, asks L2 for its share of the two ranges (the graph
     * names the start of the gate and the up rows of the MLP's gate/up,
     * whose blocks then read them from L2). */
    __device__ __forceinline__ void prefetch_l2(int n) const
    {
#if __CUDA_ARCH__ >= 900
        /* The cache the attention reads keeps the memory busy too: the two
         * ranges give up its bytes between them (on the 1B shape at KV
         * 8 192, all of theirs: a fixed 4 MB each made that step 2 %
         * slower, H100 2026-11-26). */
        const long long want = (long long)pfn - (long long)B * NKV * n * HD * (long long)sizeof(bf16);
        if (want <= 0 || threadIdx.x != 0)
            return;
        const long long nb = (long long)gridDim.x * gridDim.y * gridDim.z;
        const long long bi = ((long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
        const long long share = ((want + nb - 1) / nb + 15) & ~15ll;
        const long long lo = bi * share, hi = lo + share < want ? lo + share : want;
        if (lo >= hi)
            return;
        const char *r[2] = {reinterpret_cast<const char *>(pf0), reinterpret_cast<const char *>(pf1)};
#pragma unroll
        for (int k = 0; k < 2; ++k)
            if (r[k])
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(r[k] + lo),
                             "r"((unsigned)(hi - lo))
                             : "memory");
#endif
    }

    /* The dynamic shared memory laid out: what the per-warp arrays leave
     * holds R positions' keys and values (HD * 4 bytes each; a multiple of
     * 16, at most LL_MAXS; 0 when it is too small). */
    __device__ __forceinline__ LlAttnSmem smem(unsigned char *dyn) const
    {
        unsigned bytes;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
        const int G = NH / NKV;
        const long long fixed = ((long long)(LL_AW + 1) * G * HD + 2LL * LL_AW * G) * 4;
        long long r = ((long long)bytes - fixed) / (HD * 4);
        r = r < 0 ? 0 : r > LL_MAXS ? LL_MAXS : r & ~15ll;
        LlAttnSmem a;
        a.R = (int)r;
        float *f = reinterpret_cast<float *>(dyn);
        a.sq = f;
        a.so = a.sq + G * HD;
        a.sm = a.so + LL_AW * G * HD;
        a.sl = a.sm + LL_AW * G;
        /* 16-byte aligned for cp.async: 4 * G * (9 * HD + 16) bytes precede
         * it, HD a multiple of 8. */
        a.ks = reinterpret_cast<bf16 *>(a.sl + LL_AW * G);
        a.vs = a.ks + a.R * HD;
        return a;
    }

    /* The room's half h when it holds two splits of per rows: rows
     * h * per, ... of ks and of vs. */
    __device__ __forceinline__ LlAttnSmem room_half(const LlAttnSmem &a, int h, int per) const
    {
        LlAttnSmem r = a;
        r.ks += h * per * HD;
        r.vs += h * per * HD;
        return r;
    }

    /* The keys and values of positions [lo, hi) of (b, kv) copied into
     * rows t - t0 of a.ks and a.vs; one commit group. */
    __device__ __forceinline__ void stage(const LlAttnSmem &a, int b, int kv, int t0,
                                          int lo, int hi) const
    {
        const long long base = ((long long)b * NKV + kv) * CTX * HD;
        const int cpr = HD / 8; /* 16-byte chunks per row */
        const int nr = hi > lo ? hi - lo : 0;
        /* Thread c copies chunk c % cpr of row c / cpr, key and value, for
         * c = threadIdx.x, + blockDim.x, ...: the row and chunk stepped, not
         * divided out of c per chunk.  At batch 8 and long caches the
         * attention issues instructions, not bytes, at its limit (Nsight
         * Compute, 1B, KV 8 192: 1.7 TB/s, its warps mostly stalled on
         * fixed latencies); this loop, one division per chunk before, took
         * that step from 2 572 to 2 499 us (H100, 2026-11-27).  One loop for
         * every head size: a second, for chunks that divide the block, was
         * slower at batch 1 (1 025 -> 1 035 us). */
        const int dr = (int)blockDim.x / cpr, dc = (int)blockDim.x % cpr;
        int r = (int)threadIdx.x / cpr, ch = (int)threadIdx.x % cpr;
        const bf16 *k0 = kc + base + (long long)lo * HD, *v0 = vc + base + (long long)lo * HD;
        while (r < nr) {
            const int d = swz(lo - t0 + r, ch);
            const long long o = (long long)r * HD + ch * 8;
            ll_cp16(a.ks + d, k0 + o);
            ll_cp16(a.vs + d, v0 + o);
            r += dr, ch += dc;
            if (ch >= cpr)
                ch -= cpr, ++r;
        }
        ll_cp_commit();
    }

    /* The tensor cores' path (warps_tc) takes heads of 64 and 128 (the
     * latter with two warps or more); others (multiples of 8) the CUDA
     * cores' (warps_cc). */
    __device__ __forceinline__ bool tc() const
    {
        if (HDT == 64)
            return true;
        if (HDT == 128)
            return blockDim.x >= 64;
        return !ODD && (HD == 64 || (HD == 128 && blockDim.x >= 64));
    }

    /* Where 16-byte chunk ch of row r lies in ks and vs.  For the tensor
     * cores, chunk ch ^ (r & 7) of the row: an ldmatrix reads 8 rows' chunk
     * ch at once, HD * 2 bytes apart, which unswizzled fall in one bank
     * group (8-way conflicts). */
    __device__ __forceinline__ int swz(int r, int ch) const
    {
        return r * HD + (tc() ? ch ^ (r & 7) : ch) * 8;
    }

    /* Rows [n, n rounded up to 16) of ks and vs zeroed: the tensor cores
     * read positions 16 at a time, and a stale value there would reach the
     * sums (0 * NaN).  Rows the split's cp.async does not write. */
    __device__ __forceinline__ void zero_tail(const LlAttnSmem &a, int n) const
    {
        const int cpr = HD / 8, nz = (((n + 15) & ~15) - n) * cpr;
        for (int c = threadIdx.x; c < 2 * nz; c += blockDim.x) {
            const int cc = c % nz;
            *reinterpret_cast<uint4 *>((c < nz ? a.ks : a.vs) + n * HD + cc * 8) =
                make_uint4(0, 0, 0, 0);
        }
    }

    /* Each warp's max, sum and output per head of positions [t0, t1),
     * staged in ks and vs, into so, sm and sl, on the CUDA cores: lane
     * group grp of warp w takes rows (j * nw + w) * PPW + grp, heads four at
     * a time. */
    __device__ __forceinline__ void warps_cc(const LlAttnSmem &a, int t0, int t1) const
    {
        const bf16 *ks = a.ks, *vs = a.vs;
        const int G = NH / NKV;
        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int nw = blockDim.x >> 5;
        /* A row's LPP chunks take a lane group of LG lanes, a power of
         * two, so that the xor shuffles below stay within it.  Where LPP is
         * not one, the lanes past it read chunk 0, score nothing and store
         * nothing (shuffles over groups of 12 lanes mixed rows). */
        const int LPP = HD / 8, LG = ODD ? 1 << (32 - __clz(LPP - 1)) : LPP, PPW = 32 / LG;
        const int grp = lane / LG;
        const bool on = !ODD || lane % LG < LPP;
        const int sub = on ? lane % LG : 0;
        const float scale = 1.0f / sqrtf((float)HD);
        const int n = t1 - t0;
        for (int g0 = 0; g0 < G; g0 += 4) {
            float m[4], l[4], acc[4][8];
#pragma unroll
            for (int g = 0; g < 4; ++g) {
                m[g] = -INFINITY, l[g] = 0.0f;
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    acc[g][e] = 0.0f;
            }
            for (int j0 = 0; (j0 * nw + warp) * PPW < n; j0 += LL_AJ) {
                float s[LL_AJ][4];
#pragma unroll
                for (int jj = 0; jj < LL_AJ; ++jj) {
                    const int r0 = ((j0 + jj) * nw + warp) * PPW, r = r0 + grp;
                    /* None of the warp's lane groups has a position
                     * here (r0, its first, is past the split): the warp
                     * skips it whole (a split of 16-64 positions leaves
                     * most of a pass of 128 empty; scored with zero keys it
                     * cost the 1B step 20 us at KV 128). */
                    if (r0 >= n) {
#pragma unroll
                        for (int g = 0; g < 4; ++g)
                            s[jj][g] = -INFINITY;
                        continue;
                    }
                    float kf[8];
                    if (r < n)
                        ll_unpack(*reinterpret_cast<const uint4 *>(ks + r * HD + sub * 8), kf);
                    else
#pragma unroll
                        for (int e = 0; e < 8; ++e)
                            kf[e] = 0.0f;
#pragma unroll
                    for (int g = 0; g < 4; ++g) {
                        float d = 0.0f;
                        if (g0 + g < G) {
                            const float *qg = a.sq + (g0 + g) * HD + sub * 8;
#pragma unroll
                            for (int e = 0; e < 8; ++e)
                                d = fmaf(kf[e], qg[e], d);
                        }
                        if (ODD && !on)
                            d = 0.0f;
                        for (int o = LG / 2; o > 0; o >>= 1)
                            d += __shfl_xor_sync(0xffffffffu, d, o);
                        s[jj][g] = r < n ? d * scale : -INFINITY;
                    }
                }
                /* The lane group's running max, sum and output rescaled
                 * once per LL_AJ positions, not once per position. */
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    float mc = m[g];
#pragma unroll
                    for (int jj = 0; jj < LL_AJ; ++jj)
                        mc = fmaxf(mc, s[jj][g]);
                    const float c = ll_rel_exp(m[g], mc);
                    l[g] *= c;
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        acc[g][e] *= c;
                    m[g] = mc;
                }
#pragma unroll
                for (int jj = 0; jj < LL_AJ; ++jj) {
                    const int r = ((j0 + jj) * nw + warp) * PPW + grp;
                    if (r >= n)
                        continue;
                    float vf[8];
                    ll_unpack(*reinterpret_cast<const uint4 *>(vs + r * HD + sub * 8), vf);
#pragma unroll
                    for (int g = 0; g < 4; ++g) {
                        const float p = ll_rel_exp(s[jj][g], m[g]);
                        l[g] += p;
#pragma unroll
                        for (int e = 0; e < 8; ++e)
                            acc[g][e] = fmaf(p, vf[e], acc[g][e]);
                    }
                }
            }
            /* The warp's lane groups merged: lanes of one sub-chunk of the
             * row exchange (max, sum, output) across groups. */
            for (int o = LG; o < 32; o <<= 1) {
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    const float m2 = __shfl_xor_sync(0xffffffffu, m[g], o);
                    const float l2 = __shfl_xor_sync(0xffffffffu, l[g], o);
                    const float M = fmaxf(m[g], m2);
                    const float c1 = ll_rel_exp(m[g], M), c2 = ll_rel_exp(m2, M);
                    l[g] = l[g] * c1 + l2 * c2;
#pragma unroll
                    for (int e = 0; e < 8; ++e) {
                        const float a2 = __shfl_xor_sync(0xffffffffu, acc[g][e], o);
                        acc[g][e] = acc[g][e] * c1 + a2 * c2;
                    }
                    m[g] = M;
                }
            }
            if (grp == 0 && on) {
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    if (g0 + g >= G)
                        break;
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        a.so[(warp * G + g0 + g) * HD + sub * 8 + e] = acc[g][e];
                    if (sub == 0)
                        a.sm[warp * G + g0 + g] = m[g], a.sl[warp * G + g0 + g] = l[g];
                }
            }
        }
    }

    /* warps_cc on the tensor cores (HD 64 or 128, ks and vs swizzled, rows
     * up to the next 16 readable).  WPC = HD / 64 warps share positions
     * 16c .. 16c + 15, c = u, u + nu, ... for unit u of nu = nw / WPC, each
     * warp 64 of the output's columns (at HD 128 one warp's 128 columns of
     * sums spilled registers).  S = Q Kᵀ with the G query heads as the mma's
     * rows (up to 8: rows 8-15 are zero), the positions as its columns; then
     * the scores' accumulators are, as they stand, the A operand of P V (the
     * rows' layout of an m16n8 C tile is that of an m16k16 A tile's two
     * halves), so no shuffle moves them.  P goes in as bf16 twice, p and
     * p - bf16(p): P V as exact as the f32 sums of the CUDA cores' path (one
     * bf16 P alone errs by 2^-9 of each weight).  Unit u's max, sum and
     * output go where warp u's go on the CUDA cores; returns nu.  With
     * KEEP they go on from *keep, and back into it (store_tc writes them
     * out once the block's splits are done).  Without, a split of one
     * chunk (n <= 16: unit 0 alone has positions) goes from unit 0's
     * registers straight to out, or to partial `slot` of (b, kv), and it
     * returns 0: no merge (merge would read the others' empty sums and
     * give the same bits). */
    template <int HDC, bool KEEP>
    __device__ __forceinline__ int warps_tc(const LlAttnSmem &a, int t0, int t1,
                                            LlTcSums *keep, int b = 0, int kv = 0,
                                            int slot = 0, bool whole = false) const
    {
        constexpr int WPC = HDC / 64, NK = HDC / 16;
        const int G = NH / NKV;
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const int nu = (blockDim.x >> 5) / WPC, u = warp / WPC, half = warp % WPC;
        const int gid = lane >> 2, tig = lane & 3; /* the mma's row, column pair */
        const int n = t1 - t0, nchunk_all = (n + 15) >> 4, nchunk = u < nu ? nchunk_all : 0;
        const float scale = 1.0f / sqrtf((float)HD);
        /* Q as the A operand, per 16 columns: rows gid (zero past G).  Held
         * in registers at HD 64; at 128 they and an unrolled loop over K
         * spilled registers (the kernel has 128 a thread), so each chunk
         * reads them again from sq, 32 columns a pass. */
        constexpr int QR = NK <= 4 ? NK : 1;
        auto qfrag = [&](int k, uint32_t (&f)[2]) {
            const float *qg = a.sq + gid * HD + k * 16 + 2 * tig;
            f[0] = gid < G ? ll_bf2(qg[0], qg[1]) : 0u;
            f[1] = gid < G ? ll_bf2(qg[8], qg[9]) : 0u;
        };
        uint32_t qa[QR][2];
#pragma unroll
        for (int k = 0; k < QR; ++k)
            qfrag(k, qa[k]);
        float m = KEEP ? keep->m : -INFINITY, l = KEEP ? keep->l : 0.0f, o[8][2];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            o[j][0] = KEEP ? keep->o[j][0] : 0.0f;
            o[j][1] = KEEP ? keep->o[j][1] : 0.0f;
        }
        for (int c = u; c < nchunk; c += nu) {
            const int r0 = c * 16;
            /* scores: row gid, positions r0 + 8h + 2 tig + e */
            float sc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
#pragma unroll(QR == NK ? NK / 2 : 1)
            for (int k2 = 0; k2 < NK / 2; ++k2)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = r0 + 8 * h + (lane & 7);
                    uint32_t kb[4], q0[2], q1[2];
                    ll_ldsm4(kb, a.ks + swz(r, 4 * k2 + (lane >> 3)));
                    if (QR == NK) {
                        q0[0] = qa[(2 * k2) % QR][0], q0[1] = qa[(2 * k2) % QR][1];
                        q1[0] = qa[(2 * k2 + 1) % QR][0], q1[1] = qa[(2 * k2 + 1) % QR][1];
                    } else {
                        qfrag(2 * k2, q0);
                        qfrag(2 * k2 + 1, q1);
                    }
                    ll_mma8(sc[h], q0[0], q0[1], kb[0], kb[1]);
                    ll_mma8(sc[h], q1[0], q1[1], kb[2], kb[3]);
                }
            float mc = m;
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int r = r0 + 8 * h + 2 * tig + e;
                    sc[h][e] = r < n ? sc[h][e] * scale : -INFINITY;
                    mc = fmaxf(mc, sc[h][e]);
                }
            mc = fmaxf(mc, __shfl_xor_sync(0xffffffffu, mc, 1));
            mc = fmaxf(mc, __shfl_xor_sync(0xffffffffu, mc, 2));
            const float cr = ll_rel_exp(m, mc);
            m = mc;
            l *= cr;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                o[j][0] *= cr, o[j][1] *= cr;
            uint32_t ph[2], pl[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float p0 = ll_rel_exp(sc[h][0], m), p1 = ll_rel_exp(sc[h][1], m);
                l += p0 + p1;
                ph[h] = ll_bf2(p0, p1);
                pl[h] = ll_bf2(p0 - __uint_as_float(ph[h] << 16),
                               p1 - __uint_as_float(ph[h] & 0xffff0000u));
            }
#pragma unroll
            for (int j2 = 0; j2 < 4; ++j2) {
                const int mi = lane >> 3, r = r0 + 8 * (mi & 1) + (lane & 7);
                uint32_t vb[4];
                ll_ldsm4t(vb, a.vs + swz(r, 8 * half + 2 * j2 + (mi >> 1)));
#pragma unroll
                for (int v = 0; v < 2; ++v) {
                    ll_mma8(o[2 * j2 + v], ph[0], ph[1], vb[2 * v], vb[2 * v + 1]);
                    ll_mma8(o[2 * j2 + v], pl[0], pl[1], vb[2 * v], vb[2 * v + 1]);
                }
            }
        }
        if (KEEP) {
            keep->m = m, keep->l = l;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                keep->o[j][0] = o[j][0], keep->o[j][1] = o[j][1];
            return nu;
        }
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        if (HDT != 0 && n <= 16) {
            if (u == 0 && gid < G) {
                const long long row = (long long)b * NH + kv * G + gid;
                const int col = 64 * half + 2 * tig;
                if (whole) {
                    /* one division (16, each its slow path's call, spilled
                     * llama_attn_bf16): within an ulp of merge's O / L */
                    const float rl = 1.0f / l;
                    bf16 *op = out + row * HD + col;
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        *reinterpret_cast<__nv_bfloat162 *>(op + j * 8) =
                            __floats2bfloat162_rn(o[j][0] * rl, o[j][1] * rl);
                } else {
                    float *pp = part + (row * ((CTX + S - 1) / S) + slot) * (HD + 2);
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        *reinterpret_cast<float2 *>(pp + col + j * 8) =
                            make_float2(o[j][0], o[j][1]);
                    if (half == 0 && tig == 0)
                        pp[HD] = m, pp[HD + 1] = l;
                }
            }
            return 0;
        }
        if (u < nu && gid < G) {
            float *so = a.so + (u * G + gid) * HD + 64 * half + 2 * tig;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                *reinterpret_cast<float2 *>(so + j * 8) = make_float2(o[j][0], o[j][1]);
            if (half == 0 && tig == 0)
                a.sm[u * G + gid] = m, a.sl[u * G + gid] = l;
        }
        return HDT != 0 && nchunk_all < nu ? nchunk_all : nu;
    }

    /* The warps' sums of warps_tc into so, sm and sl: unit u's where warp
     * u's go on the CUDA cores; returns the units, nu.  warps_tc's tail
     * writes the same for batch 1's kernel inline: through this function
     * that kernel spilled 8 bytes (ptxas, 2026-11-27). */
    __device__ __forceinline__ int store_tc(const LlAttnSmem &a, const LlTcSums &st) const
    {
        const int G = NH / NKV, WPC = HD / 64;
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const int nu = (blockDim.x >> 5) / WPC, u = warp / WPC, half = warp % WPC;
        const int gid = lane >> 2, tig = lane & 3;
        float l = st.l;
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        if (u < nu && gid < G) {
            float *so = a.so + (u * G + gid) * HD + 64 * half + 2 * tig;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                *reinterpret_cast<float2 *>(so + j * 8) = make_float2(st.o[j][0], st.o[j][1]);
            if (half == 0 && tig == 0)
                a.sm[u * G + gid] = st.m, a.sl[u * G + gid] = l;
        }
        return nu;
    }

    /* Split `split` of (b, kv) over positions [t0, t1), staged in ks and vs,
     * into its partial, or, when it is the whole of 0..pos, straight into
     * out: each warp's sums, then the warps' merged.  On the tensor cores
     * only the units that had positions are merged (unit u takes chunks u,
     * u + nu, ...), and a split of one chunk is stored by warps_tc itself:
     * the merge is on the step's critical path, 1.0-1.1 us a layer for 8
     * warps' sums, 6 of them empty, at 26 positions (globaltimer, H100,
     * 2026-11-27), and at KV 128 the 8B step's 129 positions (past the
     * room's 128 at HD 128) are 9 splits of one chunk. */
    __device__ __forceinline__ void split_part(const LlAttnSmem &a, int b, int kv, int split,
                                               int t0, int t1, bool whole) const
    {
        /* the warps, or units of warps, whose sums are merged */
        int nw = blockDim.x >> 5;
        if (HDT == 64 || (HDT == 0 && tc() && HD == 64))
            nw = warps_tc<64, false>(a, t0, t1, nullptr, b, kv, split, whole);
        else if (HDT == 128 || tc())
            nw = warps_tc<128, false>(a, t0, t1, nullptr, b, kv, split, whole);
        else
            warps_cc(a, t0, t1);
        __syncthreads(); /* the sums are in so, sm and sl, or the room is free */
        if (HDT != 0 && nw == 0)
            return;
        merge(a, b, kv, split, nw, whole);
    }

    /* The nw warps' (or units') sums in so, sm and sl merged into partial
     * `slot` of (b, kv), or, when they cover the whole of 0..pos, straight
     * into out. */
    __device__ __forceinline__ void merge(const LlAttnSmem &a, int b, int kv, int slot, int nw,
                                          bool whole) const
    {
        const int G = NH / NKV;
        const int tid = threadIdx.x;
        const int nsmax = (CTX + S - 1) / S;
        for (int e = tid; e < G * HD; e += blockDim.x) {
            const int g = e / HD, d = e % HD;
            float M = -INFINITY;
            for (int w = 0; w < nw; ++w)
                M = fmaxf(M, a.sm[w * G + g]);
            float L = 0.0f, O = 0.0f;
            for (int w = 0; w < nw; ++w) {
                const float f = ll_rel_exp(a.sm[w * G + g], M);
                L = fmaf(f, a.sl[w * G + g], L);
                O = fmaf(f, a.so[(w * G + g) * HD + d], O);
            }
            if (whole) {
                out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(O / L);
                continue;
            }
            float *pp = part + (((long long)b * NH + kv * G + g) * nsmax + slot) * (HD + 2);
            pp[d] = O;
            if (d == 0)
                pp[HD] = M, pp[HD + 1] = L;
        }
        __syncthreads(); /* so, sm, sl, ks and vs are free again */
    }

    /* LL_AB's room in halves: at HD 128 (rooms of 128 positions) they took
     * 8B batch 8 at KV 8 192 from 13 139 to 12 865 us a step; at HD 64 (256)
     * they cost 1B batch 8 1.5 % (2 386 -> 2 426; H100, 2026-11-27). */
    __device__ __forceinline__ bool halves() const
    {
        return ACC && tc() && HD == 128;
    }

    /* Positions 0..n-1 this step attends to (p: pos[0]), in nact splits of
     * per positions for nblk blocks per (b, kv): all in one split when they
     * fit a block's room R and are at most LL_ONE (LL_ONE_TC on the tensor
     * cores); else a multiple of 16 in [S, R], the fewest that cover n in
     * one pass of the blocks, at batch 1 on the tensor cores at least
     * n / LL_SPLITS_64 (or _128).  A split is on the step's critical path,
     * so short ones are faster while their count stays small (S 16: 9 of 16
     * at KV 128 took the 1B step 1 077 -> 1 052 us against 3 of 64); half
     * the blocks with longer splits lost past KV 1 024 (+53 us at 4 096). */
    __device__ __forceinline__ void layout(int p, int nblk, int R, int &n, int &per,
                                           int &nact) const
    {
        n = p + 1 < CTX ? p + 1 : CTX;
        if (n <= R && n <= (tc() ? LL_ONE_TC : LL_ONE)) {
            per = n, nact = 1;
            return;
        }
        int want = (n + nblk - 1) / nblk;
        if (!ACC && tc()) {
            const int ns = (HDT ? HDT : HD) > 64 ? LL_SPLITS_128 : LL_SPLITS_64;
            const int few = (n + ns - 1) / ns;
            want = few > want ? few : want;
        }
        per = (want + 15) & ~15;
        per = per < S ? S : per > R ? R : per;
        /* Blocks that take splits in turn hold two (halves()), a half of
         * the room each: one loads while the other is scored. */
        const int h = (R / 2) & ~15;
        if (halves() && per == R && (n + per - 1) / per > nblk && h >= S)
            per = h;
        nact = (n + per - 1) / per;
    }

    /* Split xs's rows below `mine` (below pos: written by earlier launches)
     * with before, the rest without, staged in ks and vs. */
    __device__ __forceinline__ void first_stage(const LlAttnSmem &a, int b, int kv, int xs,
                                                int p, int n, int per, bool before) const
    {
        const int t0 = xs * per, t1 = t0 + per < n ? t0 + per : n;
        const int mine = p < CTX ? p : n; /* first position written upstream */
        if (before)
            stage(a, b, kv, t0, t0, t1 < mine ? t1 : mine);
        else
            stage(a, b, kv, t0, mine > t0 ? mine : t0, t1);
    }

    /* LL_AB on the tensor cores: the block's splits xs, xs + nblk, ... with
     * each warp's sums kept across them, merged once into partial xs (or
     * out, for the whole of 0..pos); with halves() (HD 128 alone, so that HD
     * 64's code has none of it), split k + 1's loads go out before split k
     * is waited for and scored. */
    template <int HDC>
    __device__ __forceinline__ void splits_kept(const LlAttnSmem &a, int b, int kv, int xs,
                                                int nblk, int n, int per, int nact) const
    {
        LlTcSums st;
        st.zero();
        const bool db = HDC == 128 && halves() && nact > nblk && 2 * per <= a.R;
        int k = 0;
        for (int split = xs; split < nact; split += nblk, ++k) {
            const LlAttnSmem h = db ? room_half(a, k & 1, per) : a;
            const int s0 = split * per, s1 = s0 + per < n ? s0 + per : n;
            const bool ahead = db && split + nblk < nact;
            if (split != xs && !db)
                stage(h, b, kv, s0, s0, s1);
            if (ahead) {
                const int x0 = (split + nblk) * per, x1 = x0 + per < n ? x0 + per : n;
                stage(room_half(a, (k + 1) & 1, per), b, kv, x0, x0, x1);
            }
            zero_tail(h, s1 - s0);
            if (ahead)
                ll_cp_wait_1();
            else
                ll_cp_wait_all();
            __syncthreads();
            warps_tc<HDC, true>(h, s0, s1, &st);
            __syncthreads(); /* this room (or half) is a later split's */
        }
        const int nu = store_tc(a, st);
        __syncthreads();
        merge(a, b, kv, xs, nu, nact == 1);
    }

    /* After griddepcontrol.wait, by block slot xs of nblk for (b, kv), with
     * its first split below pos staged or on the way: the splits xs, xs +
     * nblk, ... into partials, then, by the last of the (b, kv)'s slots to
     * get here, their combination into out.  Every thread calls it. */
    __device__ __forceinline__ void finish(const LlAttnSmem &a, int b, int kv, int xs,
                                           int nblk, int p, int n, int per, int nact) const
    {
        const int G = NH / NKV;
        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        first_stage(a, b, kv, xs, p, n, per, false);
        for (int e = tid; e < G * HD; e += blockDim.x)
            a.sq[e] = __bfloat162float(q[((long long)b * NH + kv * G) * HD + e]);
        if (ACC && (HDT == 64 || (HDT == 0 && tc() && HD == 64)))
            splits_kept<64>(a, b, kv, xs, nblk, n, per, nact);
        else if (ACC && (HDT == 128 || tc()))
            splits_kept<128>(a, b, kv, xs, nblk, n, per, nact);
        else
            for (int split = xs; split < nact; split += nblk) {
                const int s0 = split * per, s1 = s0 + per < n ? s0 + per : n;
                if (split != xs)
                    stage(a, b, kv, s0, s0, s1);
                if (tc())
                    zero_tail(a, s1 - s0);
                ll_cp_wait_all();
                __syncthreads();
                split_part(a, b, kv, split, s0, s1, nact == 1);
            }
        if (nact == 1)
            return; /* no partials: nothing to combine */
        /* The last block of (b, kv) to get here combines the partials: one
         * a block where the sums were kept across its splits, else one a
         * split. */
        const int nblk_kv = nact < nblk ? nact : nblk;
        /* the dispatch's test again: as one flag for both, the compiler laid
         * the combine out twice (7 % more PTX, never measured) */
        const int np = ACC && tc() ? nblk_kv : nact;
        __threadfence();
        __shared__ int last;
        __syncthreads();
        if (tid == 0) {
            const int done = atomicAdd(&cnt[b * NKV + kv], 1);
            last = done == nblk_kv - 1;
        }
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        const int nsmax = (CTX + S - 1) / S;
        const float *pb = part + ((long long)b * NH + kv * G) * nsmax * (HD + 2);
        if (2 * G * np <= a.R * HD) {
            /* Every split's max and sum loaded at once (where the keys were),
             * each head's weights exp(m_s - M) computed once, then each
             * output element sums its np partials with the loads
             * unrolled: a few round trips to L2 where a loop over splits
             * per element took two per split. */
            float *cm = reinterpret_cast<float *>(a.ks), *cl = cm + G * np;
            for (int i = tid; i < G * np; i += blockDim.x) {
                const int g = i / np, s2 = i % np;
                const float *pp = pb + ((long long)g * nsmax + s2) * (HD + 2);
                cm[i] = __ldcg(pp + HD);
                cl[i] = __ldcg(pp + HD + 1);
            }
            __syncthreads();
            for (int g = warp; g < G; g += blockDim.x >> 5) {
                float L;
                ll_warp_exp(cm + g * np, np, cl + g * np, &L);
                if (lane == 0)
                    a.sm[g] = L;
            }
            __syncthreads();
            for (int e = tid; e < G * HD; e += blockDim.x) {
                const int g = e / HD, d = e % HD;
                const float *pp = pb + (long long)g * nsmax * (HD + 2) + d;
                float O = 0.0f;
#pragma unroll 8
                for (int s2 = 0; s2 < np; ++s2)
                    O = fmaf(cm[g * np + s2], __ldcg(pp + (long long)s2 * (HD + 2)), O);
                out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(O / a.sm[g]);
            }
        } else {
            for (int e = tid; e < G * HD; e += blockDim.x) {
                const int g = e / HD, d = e % HD;
                const float *pp = pb + (long long)g * nsmax * (HD + 2);
                float M = -INFINITY;
                for (int s2 = 0; s2 < np; ++s2)
                    M = fmaxf(M, __ldcg(pp + s2 * (HD + 2) + HD));
                float L = 0.0f, O = 0.0f;
                for (int s2 = 0; s2 < np; ++s2) {
                    const float f = expf(__ldcg(pp + s2 * (HD + 2) + HD) - M);
                    L += f * __ldcg(pp + s2 * (HD + 2) + HD + 1);
                    O += f * __ldcg(pp + s2 * (HD + 2) + d);
                }
                out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(O / L);
            }
        }
        if (tid == 0)
            cnt[b * NKV + kv] = 0; /* ready for the next layer */
    }

    __device__ __forceinline__ bool valid(int R) const
    {
        const int lpp = HD / 8;
        /* HDT 128 is the tensor cores' path alone, which needs two warps */
        const bool mine = HDT == 0 || (HD == HDT && (HDT != 128 || blockDim.x >= 64));
        return mine && NH / NKV <= LL_MAXG && HD <= 128 && HD % 8 == 0 &&
               S >= 1 && S <= R &&
               blockDim.x % 32 == 0 && blockDim.x <= 32 * LL_AW &&
               ((lpp & (lpp - 1)) != 0) == ODD;
    }

    /* The kernels llama_attn_bf16, llama_attn_batch_bf16 and
     * llama_attn_odd_bf16: block (x, kv, b) is slot x of gridDim.x of kv
     * head kv, or, where each kv head takes one split, the grid's blocks in
     * order are the kv heads' slots 0 first. */
    __device__ __forceinline__ void run() const
    {
        extern __shared__ uint4 ll_dyn[];
        const LlAttnSmem a = smem(reinterpret_cast<unsigned char *>(ll_dyn));
        const int b = blockIdx.z, R = a.R;
        /* Too little shared memory for S positions, too many query heads
         * per kv head, heads too long, a block of more than LL_AW warps or
         * of a partial one, or another kernel's heads: the launch fails,
         * where returning would leave out unwritten. */
        if (!valid(R))
            __trap();
        const int p = pos[0];
        int n, per, nact;
        layout(p, (int)gridDim.x, R, n, per, nact);
        /* One split a kv head: its blocks are the grid's first (the GPU
         * starts them first, some while the QKV before drains).  1B at
         * KV 128 975 -> 966 us a step, KV 1 024 and 8B unchanged (H100,
         * 2026-11-27, A/B in one call, each twice); for every split
         * (nact > 1 too) KV 1 024 was 1.0 % slower.  Not in the kernel for
         * every head size, where it spilled 32 bytes. */
        int kv = blockIdx.y, x = blockIdx.x;
        if (HDT != 0 && nact == 1) {
            const int lin = blockIdx.y * gridDim.x + blockIdx.x;
            kv = lin % gridDim.y, x = lin / gridDim.y;
        }
        if (x >= nact) {
            prefetch_l2(n);
            pdl_launch_dependents(); /* nothing upstream is touched */
            return;
        }
        /* the split's keys and values first: a bulk prefetch holds the
         * warp that issues it */
        first_stage(a, b, kv, x, p, n, per, true);
        prefetch_l2(n);
        ll_wait(true);
        finish(a, b, kv, x, (int)gridDim.x, p, n, per, nact);
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
    ll_wait(false); /* it writes tok and pos (LL_EARLY) */
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
    ll_wait(false); /* it reads tok (LL_EARLY) */
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
