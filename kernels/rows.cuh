/* rows.cuh — the row engine: row sum/max, RMSNorm, LayerNorm, softmax and
 * the fused RMSNorm + bias + GELU + residual kernel, over a rows x cols
 * row-major matrix, one block per row at a time (rows grid-strided, so any
 * grid works; any block of 1..1024 threads works).
 *
 * Traffic: x read once, y written once (plus r for the fused kernel; the
 * weights are `cols` elements, read once per block or hit in L1).  Rows up
 * to ROW_ARENA - 16 bytes (6652 f32, 13304 bf16) stay resident in shared
 * memory between the statistics and the output pass, so the bulk variants
 * should reach >= 90 % of the device-to-device copy bandwidth for 4096-wide
 * rows.  Longer rows are streamed twice through the stage buffers: 1.5x the
 * minimum DRAM traffic unless L2 still holds the row for the second read
 * (likely up to ~32 KiB rows: 8 blocks x 132 SMs x 32 KiB < 50 MiB).
 *
 * Data sources, one per variant:
 *  - ResidentSrc (sm_90): the row's 16-byte-aligned interior arrives in up to
 *    ROW_STAGES bulk copies on as many mbarriers; the first pass consumes each
 *    part as it lands, later passes re-read shared memory.
 *  - StreamSrc (sm_90): every pass streams the interior through ROW_STAGES
 *    stages of ROW_STAGE_BYTES (cp.async.bulk, one mbarrier each).
 *  - GlobalSrc (_vec kernels, and sm_80 code): 16-byte global loads per pass.
 * The few elements before the first 16-byte boundary and after the last one
 * are read from global memory by plain loads in every variant.
 *
 * Weights (gamma, beta, bias) are staged before griddepcontrol.wait: bulk
 * copied into shared memory when they fit beside the row and stage_weights()
 * says the launch is small or each block has several rows, else prefetched
 * into L2 (and then mostly hit in L1).  The residual r of the fused kernel is upstream data: it is read
 * after the wait (prefetched to L2 at the start of each row). */
#ifndef CUDAG_KERNELS_ROWS_CUH
#define CUDAG_KERNELS_ROWS_CUH

#include "bulk.cuh"
#include "common.cuh"
#include "pdl.cuh"

/* 26 KiB of row arena keeps 8 blocks of 256 threads on an SM (8 x 27 KiB
 * with the per-block reserve fits 228 KiB): the row kernels are latency
 * bound per block (load, reduce, write), so blocks in flight is what buys
 * bandwidth; a 44 KiB arena (4 blocks/SM) reached half the copy bandwidth on
 * 4096-element bf16 rows. */
#define ROW_ARENA (26 * 1024)
#define ROW_STAGES 4
#define ROW_STAGE_BYTES 4096

enum RowKind { RK_SUM, RK_MAX, RK_RMS, RK_LN, RK_SOFTMAX, RK_FUSED };

template <int K> struct RowTraits {
    /* Number of weight vectors (gamma; gamma and beta; gamma and bias). */
    static constexpr int NW = K == RK_RMS ? 1 : (K == RK_LN || K == RK_FUSED) ? 2 : 0;
    /* Whether the row is read more than once (and so worth keeping). */
    static constexpr bool KEEP = K != RK_SUM && K != RK_MAX;
};

template <typename T> struct RowArgs {
    const T *x;
    const T *w0, *w1; /* weights: gamma; beta or bias */
    const T *r;       /* fused: the residual */
    T *y;
    int rows, cols;
    float eps;
};

/* --- Sources ------------------------------------------------------------- */

/* f(i0, v) is called for every interior chunk this thread owns, i0 being the
 * column of the chunk's first element. */
template <typename T> struct GlobalSrc {
    static constexpr bool RESIDENT = false;
    const T *xr;
    int h, nch;
    template <class F> __device__ __forceinline__ void pass(F f)
    {
        constexpr int V = Chunk<T>::N;
#pragma unroll 4
        for (int c = threadIdx.x; c < nch; c += blockDim.x) {
            float v[V];
            ld16(xr + h + c * V, v);
            f(h + c * V, v);
        }
    }
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/* The parts of a resident row: `per` chunks each (the last may be shorter),
 * so that no part is empty.  32-bit arithmetic: a 64-bit division is a
 * ~70-instruction subroutine, and the first version, with two per part and
 * pass, spent more time dividing than moving an 8 KiB row. */
struct RowParts {
    int np, per;
};

__device__ __forceinline__ RowParts row_parts(int nch)
{
    RowParts r;
    if (nch <= 0)
        return RowParts{0, 1};
    r.np = nch < ROW_STAGES ? nch : ROW_STAGES;
    r.per = (nch + r.np - 1) / r.np;
    r.np = (nch + r.per - 1) / r.per;
    return r;
}

template <typename T> struct ResidentSrc {
    static constexpr bool RESIDENT = true;
    const T *sr; /* sr[i] is column i; sr + h is 16-byte aligned */
    int h, nch;
    RowParts parts;
    uint64_t *bar;
    uint32_t *par;
    bool landed;
    template <class F> __device__ __forceinline__ void pass(F f)
    {
        constexpr int V = Chunk<T>::N;
        for (int p = 0; p < parts.np; ++p) {
            const int c0 = p * parts.per;
            const int c1 = c0 + parts.per < nch ? c0 + parts.per : nch;
            if (!landed)
                mbar_wait(&bar[p], (*par >> p) & 1u);
            for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
                float v[V];
                ld16(sr + h + c * V, v);
                f(h + c * V, v);
            }
        }
        if (!landed) {
            for (int p = 0; p < parts.np; ++p)
                *par ^= 1u << p;
            landed = true;
        }
    }
};

/* Thread 0 issues the row's interior as parts.np bulk copies, each on its
 * own barrier. */
template <typename T>
__device__ __forceinline__ void resident_issue(T *sr, const T *xr, int h, int nch,
                                               RowParts parts, uint64_t *bar)
{
    constexpr int V = Chunk<T>::N;
    if (threadIdx.x == 0) {
        for (int p = 0; p < parts.np; ++p) {
            const int c0 = p * parts.per;
            const int c1 = c0 + parts.per < nch ? c0 + parts.per : nch;
            const uint32_t bytes = (uint32_t)(c1 - c0) * 16u;
            mbar_expect_tx(&bar[p], bytes);
            bulk_g2s(sr + h + c0 * V, xr + h + c0 * V, bytes, &bar[p]);
        }
    }
}

template <typename T> struct StreamSrc {
    static constexpr bool RESIDENT = false;
    const T *xr;
    int h, nch;
    unsigned char *stages; /* ROW_STAGES x ROW_STAGE_BYTES */
    uint64_t *bar;
    uint32_t *par;
    template <class F> __device__ __forceinline__ void pass(F f)
    {
        constexpr int V = Chunk<T>::N;
        constexpr int CPT = ROW_STAGE_BYTES / 16; /* chunks per tile */
        const int ntiles = (nch + CPT - 1) / CPT;
        const T *base = xr + h;
        auto issue = [&](int k) {
            const int s = k % ROW_STAGES;
            const int cn = nch - k * CPT < CPT ? nch - k * CPT : CPT;
            mbar_expect_tx(&bar[s], (uint32_t)cn * 16u);
            bulk_g2s(stages + s * ROW_STAGE_BYTES, base + (long long)k * CPT * V,
                     (uint32_t)cn * 16u, &bar[s]);
        };
        if (threadIdx.x == 0)
            for (int k = 0; k < ntiles && k < ROW_STAGES; ++k)
                issue(k);
        for (int k = 0; k < ntiles; ++k) {
            const int s = k % ROW_STAGES;
            mbar_wait(&bar[s], (*par >> s) & 1u);
            *par ^= 1u << s;
            const T *st = reinterpret_cast<const T *>(stages + s * ROW_STAGE_BYTES);
            const int cn = nch - k * CPT < CPT ? nch - k * CPT : CPT;
            for (int c = threadIdx.x; c < cn; c += blockDim.x) {
                float v[V];
                ld16(st + c * V, v);
                f(h + (k * CPT + c) * V, v);
            }
            /* Refill stage s once every thread is done with it.  Without a
             * refill no barrier is needed here: the caller synchronises
             * before the stages are reused (block_reduce between passes,
             * __syncthreads after the row). */
            if (k + ROW_STAGES < ntiles) {
                __syncthreads();
                if (threadIdx.x == 0)
                    issue(k + ROW_STAGES);
            }
        }
    }
};

#endif /* __CUDA_ARCH__ >= 900 */

/* f(i, v) for the head and tail elements of a row, from global memory. */
template <typename T, class F>
__device__ __forceinline__ void row_edges(const T *xr, int h, int nch, int cols, F f)
{
    const int t0 = h + nch * Chunk<T>::N;
    for (int i = threadIdx.x; i < h; i += blockDim.x)
        f(i, tof(xr[i]));
    for (int i = t0 + threadIdx.x; i < cols; i += blockDim.x)
        f(i, tof(xr[i]));
}

/* The output pass of a normalization: y[i] = f(x[i], w[0][i], ..., w[NV-1][i])
 * for every interior chunk of the row, w being weight rows or the residual.
 *
 * Whether w[k] + i0 and y + i0 are 16-byte aligned is the same for every
 * chunk of a row (i0 - h is a multiple of 16 bytes), so it is decided once,
 * outside the pass.  Deciding it per chunk (ld_any / st_any) made ptxas
 * if-convert both the vector and the element-wise load of every weight: all
 * of those registers were live at once, 50-51 registers for LayerNorm and
 * the fused kernel in bf16, and 4 blocks of 256 threads per SM instead of 8.
 * The unaligned path works element by element, each store before the next
 * element's loads (y may alias the inputs), so it stays small as well. */
template <typename T, int NV, class Src, class F>
__device__ __forceinline__ void out_pass(Src &src, int h, const T *const (&w)[NV], T *yr,
                                         F f)
{
    constexpr int V = Chunk<T>::N;
    if constexpr (V == 4) {
        /* f32: 4 elements a chunk, and the per-chunk choice fits 32
         * registers without spilling; deciding per row made layernorm_f32
         * spill the stage parity and run 5 % slower (H200, measured). */
        src.pass([&](int i0, const float(&v)[V]) {
            float wv[NV][V], o[V];
#pragma unroll
            for (int k = 0; k < NV; ++k)
                ld_any(w[k] + i0, wv[k]);
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float we[NV];
#pragma unroll
                for (int k = 0; k < NV; ++k)
                    we[k] = wv[k][e];
                o[e] = f(v[e], we);
            }
            st_any(yr + i0, o);
        });
        return;
    }
    bool al = aligned16(yr + h);
#pragma unroll
    for (int k = 0; k < NV; ++k)
        al = al && aligned16(w[k] + h);
    if (al) {
        src.pass([&](int i0, const float(&v)[V]) {
            float wv[NV][V], o[V];
#pragma unroll
            for (int k = 0; k < NV; ++k)
                ld16(w[k] + i0, wv[k]);
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float we[NV];
#pragma unroll
                for (int k = 0; k < NV; ++k)
                    we[k] = wv[k][e];
                o[e] = f(v[e], we);
            }
            st16(yr + i0, o);
        });
    } else {
        src.pass([&](int i0, const float(&v)[V]) {
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float we[NV];
#pragma unroll
                for (int k = 0; k < NV; ++k)
                    we[k] = tof(w[k][i0 + e]);
                yr[i0 + e] = fromf<T>(f(v[e], we));
            }
        });
    }
}

/* --- One row ------------------------------------------------------------- */

struct RowScratch {
    float *red;   /* >= 33 floats */
    float2 *red2; /* >= 33 pairs */
};

/* Computes row `row` from src.  w[] are the weights (shared copies or global
 * arrays); wait_w() is called once before their first use. */
template <typename T, int K, class Src, class W>
__device__ __forceinline__ void row_body(const RowArgs<T> &a, Src &src, int row,
                                         int h, int nch, const T *const *w,
                                         RowScratch sc, W wait_w)
{
    constexpr int V = Chunk<T>::N;
    const int cols = a.cols;
    const T *xr = a.x + (long long)row * cols;
    T *yr = a.y + (long long)row * cols;

    if constexpr (K == RK_SUM || K == RK_MAX) {
        float acc = K == RK_SUM ? 0.0f : -INFINITY;
        auto add = [&](float v) { acc = K == RK_SUM ? acc + v : fmaxf(acc, v); };
        src.pass([&](int, const float(&v)[V]) {
#pragma unroll
            for (int k = 0; k < V; ++k)
                add(v[k]);
        });
        row_edges(xr, h, nch, cols, [&](int, float v) { add(v); });
        float s = K == RK_SUM ? block_reduce(acc, SumOp(), sc.red)
                              : block_reduce(acc, MaxOp(), sc.red);
        if (threadIdx.x == 0)
            a.y[row] = fromf<T>(s);
    } else if constexpr (K == RK_RMS || K == RK_FUSED) {
        float acc = 0.0f;
        src.pass([&](int, const float(&v)[V]) {
#pragma unroll
            for (int k = 0; k < V; ++k)
                acc = fmaf(v[k], v[k], acc);
        });
        row_edges(xr, h, nch, cols, [&](int, float v) { acc = fmaf(v, v, acc); });
        const float ss = block_reduce(acc, SumOp(), sc.red);
        const float rs = rsqrtf(ss / (float)cols + a.eps);
        wait_w();
        const T *g = w[0];
        if constexpr (K == RK_RMS) {
            src.pass([&](int i0, const float(&v)[V]) {
                float gv[V], o[V];
                ld_any(g + i0, gv);
#pragma unroll
                for (int k = 0; k < V; ++k)
                    o[k] = v[k] * rs * gv[k];
                st_any(yr + i0, o);
            });
            row_edges(xr, h, nch, cols,
                      [&](int i, float v) { yr[i] = fromf<T>(v * rs * tof(g[i])); });
        } else {
            const T *b = w[1];
            const T *rr = a.r + (long long)row * cols;
            const T *const wr[3] = {g, b, rr};
            out_pass(src, h, wr, yr, [&](float v, const float(&q)[3]) {
                return q[2] + gelu_tanh(fmaf(v * rs, q[0], q[1]));
            });
            row_edges(xr, h, nch, cols, [&](int i, float v) {
                yr[i] = fromf<T>(tof(rr[i]) +
                                 gelu_tanh(fmaf(v * rs, tof(g[i]), tof(b[i]))));
            });
        }
    } else if constexpr (K == RK_LN) {
        float mean, var;
        if constexpr (Src::RESIDENT) {
            /* Exact two passes over shared memory: mean, then the centred
             * sum of squares. */
            float acc = 0.0f;
            src.pass([&](int, const float(&v)[V]) {
#pragma unroll
                for (int k = 0; k < V; ++k)
                    acc += v[k];
            });
            row_edges(xr, h, nch, cols, [&](int, float v) { acc += v; });
            mean = block_reduce(acc, SumOp(), sc.red) / (float)cols;
            acc = 0.0f;
            src.pass([&](int, const float(&v)[V]) {
#pragma unroll
                for (int k = 0; k < V; ++k)
                    acc = fmaf(v[k] - mean, v[k] - mean, acc);
            });
            row_edges(xr, h, nch, cols,
                      [&](int, float v) { acc = fmaf(v - mean, v - mean, acc); });
            var = block_reduce(acc, SumOp(), sc.red) / (float)cols;
        } else {
            /* One pass of sums shifted by the row's first element, which
             * keeps the cancellation of E[x^2] - E[x]^2 small when the mean
             * is large against the spread. */
            const float shift = tof(xr[0]);
            float2 acc = make_float2(0.0f, 0.0f);
            src.pass([&](int, const float(&v)[V]) {
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    const float d = v[k] - shift;
                    acc.x += d;
                    acc.y = fmaf(d, d, acc.y);
                }
            });
            row_edges(xr, h, nch, cols, [&](int, float v) {
                const float d = v - shift;
                acc.x += d;
                acc.y = fmaf(d, d, acc.y);
            });
            const float2 s = block_reduce(acc, Sum2Op(), sc.red2);
            const float m1 = s.x / (float)cols;
            mean = shift + m1;
            var = fmaxf(s.y / (float)cols - m1 * m1, 0.0f);
        }
        const float rstd = rsqrtf(var + a.eps);
        wait_w();
        const T *g = w[0], *b = w[1];
        const T *const wl[2] = {g, b};
        out_pass(src, h, wl, yr, [&](float v, const float(&q)[2]) {
            return fmaf((v - mean) * rstd, q[0], q[1]);
        });
        row_edges(xr, h, nch, cols, [&](int i, float v) {
            yr[i] = fromf<T>(fmaf((v - mean) * rstd, tof(g[i]), tof(b[i])));
        });
    } else { /* RK_SOFTMAX */
        /* Online softmax: a running max m and sum s of exp(x - m), rescaled
         * once per chunk when the max grows. */
        float2 ms = make_float2(-INFINITY, 0.0f);
        src.pass([&](int, const float(&v)[V]) {
            float cm = v[0];
#pragma unroll
            for (int k = 1; k < V; ++k)
                cm = fmaxf(cm, v[k]);
            if (cm > ms.x) {
                ms.y *= fast_exp(ms.x - cm);
                ms.x = cm;
            }
            if (ms.x != -INFINITY) {
#pragma unroll
                for (int k = 0; k < V; ++k)
                    ms.y += fast_exp(v[k] - ms.x);
            }
        });
        row_edges(xr, h, nch, cols, [&](int, float v) {
            if (v > ms.x) {
                ms.y *= fast_exp(ms.x - v);
                ms.x = v;
            }
            if (ms.x != -INFINITY)
                ms.y += fast_exp(v - ms.x);
        });
        const float2 t = block_reduce(ms, SoftmaxOp(), sc.red2);
        const float mx = t.x, inv = 1.0f / t.y;
        src.pass([&](int i0, const float(&v)[V]) {
            float o[V];
#pragma unroll
            for (int k = 0; k < V; ++k)
                o[k] = fast_exp(v[k] - mx) * inv;
            st_any(yr + i0, o);
        });
        row_edges(xr, h, nch, cols,
                  [&](int i, float v) { yr[i] = fromf<T>(fast_exp(v - mx) * inv); });
    }
}

/* --- Kernels ------------------------------------------------------------- */

/* The _vec kernels: weights prefetched into L2 before the wait, every pass
 * from global memory (the second read of a row mostly hits L1/L2). */
template <typename T, int K>
__device__ __forceinline__ void rows_vec(const RowArgs<T> &a)
{
    __shared__ float red[33];
    __shared__ float2 red2[33];
    constexpr int NW = RowTraits<K>::NW;
    constexpr int V = Chunk<T>::N;
    if (a.rows <= 0 || a.cols <= 0)
        return;
    const T *w[2] = {a.w0, a.w1};
#pragma unroll
    for (int k = 0; k < NW; ++k)
        prefetch_l2(w[k], (long long)a.cols * (long long)sizeof(T));
    pdl_wait();
    pdl_launch_dependents();
    for (int row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const T *xr = a.x + (long long)row * a.cols;
        const int h = (int)head_elems(xr, a.cols);
        const int nch = (a.cols - h) / V;
        GlobalSrc<T> src{xr, h, nch};
        row_body<T, K>(a, src, row, h, nch, w, RowScratch{red, red2}, [] {});
    }
}

template <typename T, int K>
__device__ __forceinline__ void rows_bulk(const RowArgs<T> &a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) unsigned char arena[ROW_ARENA];
    __shared__ alignas(8) uint64_t bar[ROW_STAGES + 1]; /* stages + weights */
    __shared__ float red[33];
    __shared__ float2 red2[33];
    constexpr int NW = RowTraits<K>::NW;
    constexpr int V = Chunk<T>::N;
    if (a.rows <= 0 || a.cols <= 0)
        return;
    const int cols = a.cols;
    const long long rowbytes = (long long)cols * (long long)sizeof(T);
    /* The resident row starts at the row's offset modulo 16 bytes, hence +16. */
    const long long rowneed = (rowbytes + 16 + 127) / 128 * 128;
    const long long wstride = (rowbytes + 127) / 128 * 128;
    const bool resident = RowTraits<K>::KEEP && rowneed <= ROW_ARENA;
    const long long wbase = resident ? rowneed : (long long)ROW_STAGES * ROW_STAGE_BYTES;
    const int rows_per_block = (a.rows + (int)gridDim.x - 1) / (int)gridDim.x;
    const bool wsm = NW > 0 && wbase + NW * wstride <= ROW_ARENA &&
                     stage_weights((long long)rows_per_block * rowbytes, NW * rowbytes);

    /* Prologue, overlapping the upstream kernel. */
    if (threadIdx.x == 0) {
        for (int s = 0; s <= ROW_STAGES; ++s)
            mbar_init(&bar[s], 1);
        mbar_fence_init();
    }
    __syncthreads();
    const T *wg[2] = {a.w0, a.w1};
    const T *w[2] = {a.w0, a.w1};
    bool wpending = false;
    if (NW > 0 && wsm) {
        bool bulk = rowbytes % 16 == 0;
        for (int k = 0; k < NW; ++k) {
            w[k] = reinterpret_cast<const T *>(arena + wbase + k * wstride);
            bulk = bulk && aligned16(wg[k]);
        }
        if (bulk) {
            if (threadIdx.x == 0) {
                mbar_expect_tx(&bar[ROW_STAGES], (uint32_t)(NW * rowbytes));
                for (int k = 0; k < NW; ++k)
                    bulk_g2s(arena + wbase + k * wstride, wg[k], (uint32_t)rowbytes,
                             &bar[ROW_STAGES]);
            }
            wpending = true;
        } else {
            for (int k = 0; k < NW; ++k) {
                T *ws = reinterpret_cast<T *>(arena + wbase + k * wstride);
                for (int j = threadIdx.x; j < cols; j += blockDim.x)
                    ws[j] = wg[k][j];
            }
            __syncthreads();
        }
    } else {
        for (int k = 0; k < NW; ++k)
            prefetch_l2(wg[k], rowbytes);
    }
    auto wait_w = [&] {
        if (wpending) {
            mbar_wait(&bar[ROW_STAGES], 0);
            wpending = false;
        }
    };

    pdl_wait();
    pdl_launch_dependents();

    uint32_t par = 0;
    for (int row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const T *xr = a.x + (long long)row * cols;
        const int h = (int)head_elems(xr, cols);
        const int nch = (cols - h) / V;
        if (K == RK_FUSED)
            prefetch_l2(a.r + (long long)row * cols, rowbytes);
        if (resident) {
            T *sr = reinterpret_cast<T *>(arena + ((uintptr_t)xr & 15));
            const RowParts parts = row_parts(nch);
            resident_issue(sr, xr, h, nch, parts, bar);
            ResidentSrc<T> src{sr, h, nch, parts, bar, &par, false};
            row_body<T, K>(a, src, row, h, nch, w, RowScratch{red, red2}, wait_w);
        } else {
            StreamSrc<T> src{xr, h, nch, arena, bar, &par};
            row_body<T, K>(a, src, row, h, nch, w, RowScratch{red, red2}, wait_w);
        }
        /* Every read of the row buffer or the stages is done before the next
         * row's copies land in them. */
        __syncthreads();
    }
    /* A block with no row still owns the weights copy it issued: let it land
     * before the block's shared memory is released. */
    wait_w();
#else
    rows_vec<T, K>(a);
#endif
}

#endif
