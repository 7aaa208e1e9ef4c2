/* llama.cuh — the kernels of a Llama decode step (graphs/llama_step.yaml):
 * bf16 weights, f32 arithmetic, activations rounded to bf16 where Hugging
 * Face's LlamaForCausalLM rounds them.
 *
 *  GEMVs (a warp per P pairs of weight rows, 16-byte loads, batch B <= 16;
 *  the tunables in LlCfg, one configuration per kernel):
 *   llama_qkv   RMSNorm(x) -> QKV -> RoPE (llama3 inv_freq) -> q, and k, v
 *               appended to the KV cache at pos; a warp computes rows i and
 *               i + HD/2 of one head, the two halves rotate_half pairs.
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
 *  llama_attn   split-KV (flash-decoding) attention for GQA: the blocks of
 *               (kv head, batch b) cut positions 0..pos into splits sized
 *               at run time so the grid covers them in one pass, score each
 *               split for the NH/NKV query heads sharing the kv head, write
 *               (o, max, sum) partials, and the last block of (b, kv head)
 *               to finish (an atomic counter it resets) combines them; a
 *               single split writes its output directly.
 *  llama_argmax greedy next token over V logits (lowest index on ties): each
 *               block reduces a strided slice, the last block reduces the
 *               partials, writes tok and advances pos.
 *  llama_embed  x[b] = embed[tok[b]].
 *  llama_emit   out[b*N + t] = tok[b], t += 1, the while condition = t < N
 *               and not every sequence at EOS.
 *
 * Every kernel waits (griddepcontrol.wait) in every thread before touching
 * upstream data, and triggers its dependents right after: the dependents'
 * blocks then prefetch their own weights (llama_attn: the cache below pos)
 * while this grid finishes.  Data read
 * after the wait uses plain loads (no __ldg / .nc); only weights use
 * ld.global.nc. */
#ifndef CUDAG_KERNELS_LLAMA_CUH
#define CUDAG_KERNELS_LLAMA_CUH

#include "common.cuh"
#include "pdl.cuh"

#define LL_MAXB 16 /* batch rows a GEMV accepts */
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

/* The configuration of each GEMV kernel: one line to change after a sweep
 * (then the block and grid of the kernel in graphs/llama/step.yaml: block a
 * multiple of 32·KS and at most THREADS, any grid). */
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

/* Shared memory of one GEMV block. */
template <class C> struct LlSmem {
    float rs[LL_MAXB];
    float ssq[(C::THREADS / 32) * LL_MAXB]; /* per-warp sums of squares */
    float red[C::KS > 1 ? (C::THREADS / 32) * 2 * (C::P > C::PB ? C::P : C::PB) * LL_MAXB : 1];
    alignas(16) bf16 sa[C::SA > 0 ? C::SA : 8];
};

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

/* The GEMV of a grid: Body maps unit u (< body.units()) to two weight rows
 * (body.rows) and takes their two sums per batch row (body.epi, one lane).
 * Block tiles of G = warps/KS groups x P units; a warp of group rg and K
 * slice kg holds R = 2P rows and loads, per step, U chunks of each
 * (chunk index (s·U + j)·32·KS + kg·32 + lane), into registers indexed by
 * compile-time constants only.  The first step's loads go before
 * griddepcontrol.wait (PFW); then the dependents are triggered at once, the
 * row scales computed (A.g set) and the rows staged in shared memory: in
 * the launch's dynamic shared memory when the node gives B·K·2 bytes (a
 * batch of long rows: 8 rows of 4 096 are 64 KB, past the 48 KB a block may
 * hold statically), else in sm.sa when B·K fits SA; rows staged nowhere are
 * read and normed per chunk, which at batch 8 costs more instructions than
 * the weights' bytes allow. */
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
    pdl_wait();
    pdl_launch_dependents();
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
                    body.template epi<MB>(ub + p, acc[2 * p], acc[2 * p + 1], B);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int b = 0; b < MB; ++b)
                acc[r][b] = 0.0f;
    }
}

/* A GEMV's body as two kernels of the same parameters, which graphs/llama/
 * step.yaml picks between by B (`kernel: {pick, from}`): ll_run1, batch 1's
 * body (P pairs, U chunks per row in flight), and ll_runb, the batch bodies
 * (up to BB rows with PB, UB, DBB: BB sums per row instead of LL_MAXB leave
 * registers for bytes in flight; up to LL_MAXB rows with the smallest).
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
    if constexpr (C::BB == LL_MAXB)
        ll_gemv_grid<C, C::PB, LL_MAXB, C::UB, C::DBB>(body, body.B, eps, sm);
    else if (body.B <= C::BB)
        ll_gemv_grid<C, C::PB, C::BB, C::UB, C::DBB>(body, body.B, eps, sm);
    else
        ll_gemv_grid<C, 1, LL_MAXB, 2, false>(body, body.B, eps, sm);
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
    template <int MB>
    __device__ __forceinline__ void epi(long long u, const float (&a0)[MB],
                                        const float (&a1)[MB], int) const
    {
        const int half = HD / 2;
        const int hh = (int)(u / half), i = (int)(u % half);
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
                                        const float (&a1)[MB], int) const
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
                                        const float (&a1)[MB], int) const
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

#define LL_AW 8  /* warps of an attention block that take positions */
#define LL_AU 4  /* positions per lane group loaded before any is used */

/* Partials: per (b, head, split) HD floats of o (relative to its max), then
 * the max and the sum of exponentials; cdiv(CTX, S) splits of room per
 * head.  The grid's x extent is fixed by the graph (a wave or two of blocks
 * for every length); the split length is chosen from pos at run time: the
 * fewest positions that let the grid cover 0..pos in one pass, at least S
 * (so the splits fit their room) and at most LL_MAXS (the scores' shared
 * memory), past which blocks take several splits in turn; a split longer
 * than one round of loads (LL_AU positions per lane group) takes several.
 * A grid sized by CTX instead (one block per S positions)
 * spent most of a short step scheduling thousands of blocks that only read
 * pos and left.
 *
 * pos, and the cache before it, come from earlier launches (in the step
 * only argmax, its last kernel, writes pos), so a block reads pos and loads
 * its first split's keys and values below pos before griddepcontrol.wait;
 * after it, only q and the row at pos (this step's llama_qkv's) remain. */
/* Shared memory of one attention block: q of the kv head's G query heads,
 * the scores of a split, each warp's sums, each head's max and sum. */
struct LlAttnSmem {
    float sq[LL_MAXG][128 + 4];
    float ss[LL_MAXG][LL_MAXS];
    float so[LL_AW][LL_MAXG][128];
    float sm[LL_MAXG], sl[LL_MAXG];
    int last;
};

struct LlAttn {
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

    /* Keys and values of the lane's LL_AU positions tb + u*stride + grp
     * that lie in [lo, hi). */
    __device__ __forceinline__ void load_kv(uint4 (&k)[LL_AU], uint4 (&v)[LL_AU],
                                            long long base, int tb, int stride,
                                            int grp, int sub, int lo, int hi,
                                            bool with_v) const
    {
#pragma unroll
        for (int u = 0; u < LL_AU; ++u) {
            const int t = tb + u * stride + grp;
            if (t >= lo && t < hi) {
                k[u] = *reinterpret_cast<const uint4 *>(kc + base + (long long)t * HD + sub * 8);
                if (with_v)
                    v[u] = *reinterpret_cast<const uint4 *>(vc + base + (long long)t * HD + sub * 8);
            }
        }
    }

    /* Split `split` of (b, kv) over positions [t0, t1) into its partial,
     * or, when it is the whole of 0..pos, straight into out.  With `pre`,
     * k and v already hold the first round's keys and values. */
    __device__ __forceinline__ void split_part(LlAttnSmem &a,
                                               uint4 (&k)[LL_AU], uint4 (&v)[LL_AU],
                                               bool pre, int b, int kv, int split,
                                               int t0, int t1, int nw, bool whole) const
    {
        float(&sq)[LL_MAXG][128 + 4] = a.sq;
        float(&ss)[LL_MAXG][LL_MAXS] = a.ss;
        float(&so)[LL_AW][LL_MAXG][128] = a.so;
        float *sm = a.sm, *sl = a.sl;
        const int G = NH / NKV;
        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int LPP = HD / 8, PPW = 32 / LPP;
        const int grp = lane / LPP, sub = lane % LPP;
        const int stride = nw * PPW; /* positions of one pass of the block */
        const long long base = ((long long)b * NKV + kv) * CTX * HD;
        const float scale = 1.0f / sqrtf((float)HD);
        const int tb0 = t0 + warp * PPW;
        /* Scores: LL_AU positions per lane group per round, loaded before
         * any is used (the first round's values too, kept for the sums). */
        if (warp < nw) {
            for (int tb = tb0; tb < t1; tb += LL_AU * stride) {
                if (!pre || tb != tb0)
                    load_kv(k, v, base, tb, stride, grp, sub, t0, t1, tb == tb0);
#pragma unroll
                for (int u = 0; u < LL_AU; ++u) {
                    const int t = tb + u * stride + grp;
                    float kf[8];
                    ll_unpack(k[u], kf);
#pragma unroll
                    for (int g = 0; g < LL_MAXG; ++g) {
                        if (g >= G)
                            break;
                        float d = 0.0f;
#pragma unroll
                        for (int e = 0; e < 8; ++e)
                            d = fmaf(kf[e], sq[g][sub * 8 + e], d);
                        for (int o = LPP / 2; o > 0; o >>= 1)
                            d += __shfl_xor_sync(0xffffffffu, d, o);
                        if (sub == 0 && t < t1)
                            ss[g][t - t0] = d * scale;
                    }
                }
            }
        }
        __syncthreads();
        const int len = t1 - t0;
        for (int g = warp; g < G; g += blockDim.x >> 5) {
            float l;
            const float m = ll_warp_exp(ss[g], len, nullptr, &l);
            if (lane == 0)
                sm[g] = m, sl[g] = l;
        }
        __syncthreads();
        /* Sums: one head at a time over the round's values (eight
         * accumulators, not eight per head), each warp's share added into
         * so[warp]; a warp without positions leaves zeros there. */
        if (warp < nw) {
            if (tb0 >= t1)
                for (int e = lane; e < G * HD; e += 32)
                    so[warp][e / HD][e % HD] = 0.0f;
            for (int tb = tb0; tb < t1; tb += LL_AU * stride) {
                if (tb != tb0) {
#pragma unroll
                    for (int u = 0; u < LL_AU; ++u) {
                        const int t = tb + u * stride + grp;
                        if (t < t1)
                            v[u] = *reinterpret_cast<const uint4 *>(vc + base + (long long)t * HD + sub * 8);
                    }
                }
                for (int g = 0; g < G; ++g) {
                    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
                    for (int u = 0; u < LL_AU; ++u) {
                        const int t = tb + u * stride + grp;
                        if (t < t1) {
                            const float p = ss[g][t - t0];
                            float vf[8];
                            ll_unpack(v[u], vf);
#pragma unroll
                            for (int e = 0; e < 8; ++e)
                                acc[e] = fmaf(p, vf[e], acc[e]);
                        }
                    }
#pragma unroll
                    for (int e = 0; e < 8; ++e) {
                        float x = acc[e];
                        for (int s = 16; s >= LPP; s >>= 1)
                            x += __shfl_xor_sync(0xffffffffu, x, s);
                        if (grp == 0) {
                            float *d = &so[warp][g][sub * 8 + e];
                            *d = tb == tb0 ? x : *d + x;
                        }
                    }
                }
            }
        }
        __syncthreads();
        const int nsmax = (CTX + S - 1) / S;
        for (int e = tid; e < G * HD; e += blockDim.x) {
            const int g = e / HD, d = e % HD;
            float x = 0.0f;
            for (int w = 0; w < nw; ++w)
                x += so[w][g][d];
            if (whole) {
                out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(x / sl[g]);
                continue;
            }
            float *pp = part + (((long long)b * NH + kv * G + g) * nsmax + split) * (HD + 2);
            pp[d] = x;
            if (d == 0)
                pp[HD] = sm[g], pp[HD + 1] = sl[g];
        }
        __syncthreads(); /* ss, so, sm and sl are the next split's */
    }

    /* Positions 0..n-1 this step attends to (p: pos[0]), in nact splits of
     * per positions for nblk blocks per (b, kv): a multiple of 16 (whole
     * lane groups) in [S, LL_MAXS], the fewest that cover n in one pass of
     * the blocks; past one round of loads (LL_AU per lane group) a split
     * takes several rounds, which beat a second split per block (H100:
     * 1 468 against 1 523 us a step at KV 8 192). */
    __device__ __forceinline__ void layout(int p, int nblk, int &n, int &per,
                                           int &nact) const
    {
        n = p + 1 < CTX ? p + 1 : CTX;
        per = ((n + nblk - 1) / nblk + 15) & ~15;
        per = per < S ? S : per > LL_MAXS ? LL_MAXS : per;
        nact = (n + per - 1) / per;
    }

    /* The lane's keys and values of the first round of split xs, those
     * below `mine` (below pos: written by earlier launches) with before,
     * the rest without. */
    __device__ __forceinline__ void first_round(uint4 (&k)[LL_AU], uint4 (&v)[LL_AU],
                                                int b, int kv, int xs, int p, int n,
                                                int per, bool before) const
    {
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        const int nw = blockDim.x >> 5 < LL_AW ? blockDim.x >> 5 : LL_AW;
        const int LPP = HD / 8, PPW = 32 / LPP;
        const long long base = ((long long)b * NKV + kv) * CTX * HD;
        const int t0 = xs * per, t1 = t0 + per < n ? t0 + per : n;
        const int mine = p < CTX ? p : n; /* first position written upstream */
        if (warp < nw) {
            if (before)
                load_kv(k, v, base, t0 + warp * PPW, nw * PPW, lane / LPP, lane % LPP,
                        t0, t1 < mine ? t1 : mine, true);
            else
                load_kv(k, v, base, t0 + warp * PPW, nw * PPW, lane / LPP, lane % LPP,
                        mine, t1, true);
        }
    }

    /* After griddepcontrol.wait, by block slot xs of nblk for (b, kv), with
     * k and v holding its first round below pos: the splits xs, xs + nblk,
     * ... into partials, then, by the last of the (b, kv)'s slots to get
     * here, their combination into out.  Every thread calls it. */
    __device__ __forceinline__ void finish(LlAttnSmem &a, uint4 (&k)[LL_AU],
                                           uint4 (&v)[LL_AU], int b, int kv,
                                           int xs, int nblk, int p, int n, int per,
                                           int nact) const
    {
        const int G = NH / NKV;
        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int nw = blockDim.x >> 5 < LL_AW ? blockDim.x >> 5 : LL_AW;
        first_round(k, v, b, kv, xs, p, n, per, false);
        for (int e = tid; e < G * HD; e += blockDim.x)
            a.sq[e / HD][e % HD] =
                __bfloat162float(q[((long long)b * NH + kv * G) * HD + e]);
        __syncthreads();
        for (int split = xs; split < nact; split += nblk) {
            const int s0 = split * per, s1 = s0 + per < n ? s0 + per : n;
            split_part(a, k, v, split == xs, b, kv, split, s0, s1, nw, nact == 1);
        }
        if (nact == 1)
            return; /* no partials: nothing to combine */
        /* The last block of (b, kv) to get here combines every split. */
        const int nblk_kv = nact < nblk ? nact : nblk;
        __threadfence();
        __syncthreads();
        if (tid == 0) {
            const int done = atomicAdd(&cnt[b * NKV + kv], 1);
            a.last = done == nblk_kv - 1;
        }
        __syncthreads();
        if (!a.last)
            return;
        __threadfence();
        const int nsmax = (CTX + S - 1) / S;
        const float *pb = part + ((long long)b * NH + kv * G) * nsmax * (HD + 2);
        if (nact <= LL_MAXS) {
            /* Every split's max and sum loaded at once (ss and so are free
             * now), each head's weights exp(m_s - M) computed once, then
             * each output element sums its nact partials with the loads
             * unrolled: a few round trips to L2 where a loop over splits
             * per element took two per split. */
            float *lsum = &a.so[0][0][0];
            for (int i = tid; i < G * nact; i += blockDim.x) {
                const int g = i / nact, s2 = i % nact;
                const float *pp = pb + ((long long)g * nsmax + s2) * (HD + 2);
                a.ss[g][s2] = __ldcg(pp + HD);
                lsum[g * LL_MAXS + s2] = __ldcg(pp + HD + 1);
            }
            __syncthreads();
            for (int g = warp; g < G; g += blockDim.x >> 5) {
                float L;
                ll_warp_exp(a.ss[g], nact, lsum + g * LL_MAXS, &L);
                if (lane == 0)
                    a.sl[g] = L;
            }
            __syncthreads();
            for (int e = tid; e < G * HD; e += blockDim.x) {
                const int g = e / HD, d = e % HD;
                const float *pp = pb + (long long)g * nsmax * (HD + 2) + d;
                float O = 0.0f;
#pragma unroll 8
                for (int s2 = 0; s2 < nact; ++s2)
                    O = fmaf(a.ss[g][s2], __ldcg(pp + (long long)s2 * (HD + 2)), O);
                out[((long long)b * NH + kv * G + g) * HD + d] = __float2bfloat16_rn(O / a.sl[g]);
            }
        } else {
            for (int e = tid; e < G * HD; e += blockDim.x) {
                const int g = e / HD, d = e % HD;
                const float *pp = pb + (long long)g * nsmax * (HD + 2);
                float M = -INFINITY;
                for (int s2 = 0; s2 < nact; ++s2)
                    M = fmaxf(M, __ldcg(pp + s2 * (HD + 2) + HD));
                float L = 0.0f, O = 0.0f;
                for (int s2 = 0; s2 < nact; ++s2) {
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

    __device__ __forceinline__ bool valid() const
    {
        return NH / NKV <= LL_MAXG && HD <= 128 && HD % 8 == 0 && S >= 1 && S <= LL_MAXS;
    }

    /* The kernel llama_attn_bf16: block (x, kv, b) is slot x of gridDim.x. */
    __device__ __forceinline__ void run() const
    {
        __shared__ LlAttnSmem a;
        const int kv = blockIdx.y, b = blockIdx.z;
        if (!valid()) {
            pdl_wait();
            pdl_launch_dependents();
            return;
        }
        const int p = pos[0];
        int n, per, nact;
        layout(p, (int)gridDim.x, n, per, nact);
        prefetch_l2(n);
        if ((int)blockIdx.x >= nact) {
            pdl_launch_dependents(); /* nothing upstream is touched */
            return;
        }
        uint4 k[LL_AU], v[LL_AU];
#pragma unroll
        for (int u = 0; u < LL_AU; ++u)
            k[u] = v[u] = make_uint4(0, 0, 0, 0);
        first_round(k, v, b, kv, blockIdx.x, p, n, per, true);
        pdl_wait();
        pdl_launch_dependents();
        finish(a, k, v, b, kv, blockIdx.x, (int)gridDim.x, p, n, per, nact);
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
