/* cudag_kernels.cu — the entry points of cudag_kernels.fatbin, one
 * translation unit (a fatbin holds one image per architecture).
 *
 * Every name is extern "C" and declared in cudag_kernels.yaml with the same
 * parameters; tests/kernels checks the two against each other.  Each op comes
 * as <op>_<type> (sm_90: bulk copies through shared memory; sm_80: the plain
 * path) and <op>_<type>_vec (16-byte loads and stores, any architecture).
 * __launch_bounds__(1024): the graph picks the block size, so every kernel
 * must be launchable with up to 1024 threads.
 *
 * Traffic: the minimum (each input read once, each output written once);
 * the targets are in pointwise.cuh and rows.cuh, the measured figures in
 * docs/kernels.md. */
#include "cond.cuh"
#include "llama.cuh"
#include "pointwise.cuh"
#include "rows.cuh"
#include "stencil.cuh"
#include "util.cuh"

#define KERNEL extern "C" __global__ void __launch_bounds__(1024)
/* The bf16 bulk row kernels: their 26 KiB arena is sized so that 8 blocks
 * of 256 threads share an SM, and 32 registers per thread (2 blocks of
 * 1024) keeps the register file from halving that.  LayerNorm and the fused
 * kernel chose 42-46 registers unbounded (4 blocks/SM); bounded, ptxas
 * spills a word or two, reloaded a few times per row, and they move 18 and
 * 23 % more bytes/s (H200, docs/kernels.md).  The f32 row kernels fit 32
 * registers by themselves; the bound would only reschedule them. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define KERNEL_ROWS extern "C" __global__ void __launch_bounds__(1024, 2)
#else
#define KERNEL_ROWS KERNEL /* sm_80 runs the _vec body: no arena to fill */
#endif

/* --- Pointwise ------------------------------------------------------------ */


#define DEF_COPY(T, ty, impl, sfx)                                             \
    KERNEL copy_##ty##sfx(const T *x, T *y, long long n)                       \
    {                                                                          \
        impl<T, OpCopy>(PwArgs<T>{{x, x}, y, n, 0.0f, nullptr, 1});            \
    }
#define DEF_SCALE(T, ty, impl, sfx)                                            \
    KERNEL scale_##ty##sfx(const T *x, T *y, float a, long long n)             \
    {                                                                          \
        impl<T, OpScale>(PwArgs<T>{{x, x}, y, n, a, nullptr, 1});              \
    }
#define DEF_BINARY(name, Op, T, ty, impl, sfx)                                 \
    KERNEL name##_##ty##sfx(const T *a, const T *b, T *y, long long n)         \
    {                                                                          \
        impl<T, Op>(PwArgs<T>{{a, b}, y, n, 0.0f, nullptr, 1});                \
    }
#define DEF_AXPY(T, ty, impl, sfx)                                             \
    KERNEL axpy_##ty##sfx(const T *x, T *y, float a, long long n)              \
    {                                                                          \
        impl<T, OpAxpy>(PwArgs<T>{{x, y}, y, n, a, nullptr, 1});               \
    }
#define DEF_BIAS_GELU(T, ty, impl, sfx)                                        \
    KERNEL bias_gelu_##ty##sfx(const T *x, const T *bias, T *y, long long n,   \
                               int cols)                                       \
    {                                                                          \
        impl<T, OpBiasGelu>(PwArgs<T>{{x, x}, y, n, 0.0f, bias, cols});        \
    }

#define DEF_POINTWISE(T, ty, impl, sfx)                                        \
    DEF_COPY(T, ty, impl, sfx)                                                 \
    DEF_SCALE(T, ty, impl, sfx)                                                \
    DEF_BINARY(add, OpAdd, T, ty, impl, sfx)                                   \
    DEF_BINARY(mul, OpMul, T, ty, impl, sfx)                                   \
    DEF_AXPY(T, ty, impl, sfx)                                                 \
    DEF_BIAS_GELU(T, ty, impl, sfx)                                            \
    DEF_BINARY(swiglu, OpSwiglu, T, ty, impl, sfx)                             \
    DEF_BINARY(residual_add, OpAdd, T, ty, impl, sfx)

DEF_POINTWISE(float, f32, pw_bulk, )
DEF_POINTWISE(float, f32, pw_vec, _vec)
DEF_POINTWISE(bf16, bf16, pw_bulk, )
DEF_POINTWISE(bf16, bf16, pw_vec, _vec)

/* --- Rows ----------------------------------------------------------------- */

#define DEF_ROWS(T, ty, impl, sfx, KERNEL)                                     \
    KERNEL rowsum_##ty##sfx(const T *x, T *y, int rows, int cols)              \
    {                                                                          \
        impl<T, RK_SUM>(RowArgs<T>{x, nullptr, nullptr, nullptr, y, rows, cols, 0.0f}); \
    }                                                                          \
    KERNEL rowmax_##ty##sfx(const T *x, T *y, int rows, int cols)              \
    {                                                                          \
        impl<T, RK_MAX>(RowArgs<T>{x, nullptr, nullptr, nullptr, y, rows, cols, 0.0f}); \
    }                                                                          \
    KERNEL rmsnorm_##ty##sfx(const T *x, const T *gamma, T *y, int rows,       \
                             int cols, float eps)                              \
    {                                                                          \
        impl<T, RK_RMS>(RowArgs<T>{x, gamma, nullptr, nullptr, y, rows, cols, eps}); \
    }                                                                          \
    KERNEL layernorm_##ty##sfx(const T *x, const T *gamma, const T *beta,      \
                               T *y, int rows, int cols, float eps)            \
    {                                                                          \
        impl<T, RK_LN>(RowArgs<T>{x, gamma, beta, nullptr, y, rows, cols, eps}); \
    }                                                                          \
    KERNEL softmax_##ty##sfx(const T *x, T *y, int rows, int cols)             \
    {                                                                          \
        impl<T, RK_SOFTMAX>(RowArgs<T>{x, nullptr, nullptr, nullptr, y, rows, cols, 0.0f}); \
    }                                                                          \
    KERNEL rmsnorm_bias_gelu_residual_##ty##sfx(                               \
        const T *x, const T *gamma, const T *bias, const T *r, T *y, int rows, \
        int cols, float eps)                                                   \
    {                                                                          \
        impl<T, RK_FUSED>(RowArgs<T>{x, gamma, bias, r, y, rows, cols, eps});  \
    }

DEF_ROWS(float, f32, rows_bulk, , KERNEL)
DEF_ROWS(float, f32, rows_vec, _vec, KERNEL)
DEF_ROWS(bf16, bf16, rows_bulk, , KERNEL_ROWS)
DEF_ROWS(bf16, bf16, rows_vec, _vec, KERNEL)

/* --- Utilities ------------------------------------------------------------ */

KERNEL util_noop(void)
{
    pdl_wait();
    pdl_launch_dependents();
}

KERNEL util_spin(long long prologue_ns, long long body_ns)
{
    /* One thread per block spins; the others wait at the barrier, where they
     * issue nothing. */
    if (threadIdx.x == 0)
        spin_from(globaltimer(), prologue_ns);
    __syncthreads();
    pdl_wait();
    pdl_launch_dependents();
    if (threadIdx.x == 0)
        spin_from(globaltimer(), body_ns);
}

KERNEL util_stamp(unsigned long long *out, int slot, long long body_ns)
{
    const uint64_t t0 = globaltimer();
    pdl_wait();
    const uint64_t t1 = globaltimer();
    pdl_launch_dependents();
    const uint64_t t3 = globaltimer();
    if (threadIdx.x == 0)
        spin_from(t1, body_ns);
    const uint64_t t2 = globaltimer();
    /* `out` may be upstream data (a memset, say), so it is written only now,
     * after the wait. */
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long *o = out + (long long)slot * 4;
        o[0] = t0; /* start, before the wait */
        o[1] = t1; /* after the wait */
        o[2] = t2; /* end, after body_ns */
        o[3] = t3; /* the trigger (launch_dependents) */
    }
}

/* A copy that neither waits nor triggers: declared without pdl: true, so the
 * library must turn a programmatic edge into it into a full edge. */
KERNEL util_nowait_copy_f32(const float *x, float *y, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        y[i] = x[i];
}

/* --- Conditions (cond.cuh) -------------------------------------------------- */

KERNEL cond_count_i32(int *counter, long long k, cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader())
        cudaGraphSetConditional(c, count_below(counter, k));
    pdl_launch_dependents();
}

KERNEL util_count_i32(int *counter, long long k, int *flag)
{
    pdl_wait();
    if (cond_leader())
        flag[0] = (int)count_below(counter, k);
    pdl_launch_dependents();
}

KERNEL cond_lt_f32(const float *x, float t, cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader())
        cudaGraphSetConditional(c, x[0] < t ? 1u : 0u);
    pdl_launch_dependents();
}

KERNEL cond_ge_f32(const float *x, float t, cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader())
        cudaGraphSetConditional(c, x[0] >= t ? 1u : 0u);
    pdl_launch_dependents();
}

KERNEL cond_converge_f32(float *r, float tol, int *counter, long long max,
                         cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader()) {
        const float res = r[0];
        r[1] = res;
        r[0] = 0.0f;
        const unsigned more = count_below(counter, max);
        cudaGraphSetConditional(c, res >= tol && more ? 1u : 0u);
    }
    pdl_launch_dependents();
}

KERNEL cond_index_i32(const int *x, cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader())
        cudaGraphSetConditional(c, (unsigned)x[0]);
    pdl_launch_dependents();
}

/* --- Stencils (stencil.cuh) ------------------------------------------------- */

KERNEL jacobi_f32(const float *u, float *v, const float *f, float *r, int nx,
                  int ny)
{
    jacobi_sweep(u, v, f, r, nx, ny);
}

/* --- Llama decode (llama.cuh) ------------------------------------------------ */

/* Each GEMV's launch bounds and body come from its configuration in
 * llama.cuh (LL_CFG_*: rows per warp, chunks in flight, K split, block
 * limits); the shipped one holds two rows' chunks and up to 2 x 16 sums per
 * lane in at most 256 threads, 2 blocks per SM (up to 128 registers). */
#define KERNEL_LLC(C) extern "C" __global__ void __launch_bounds__(C::THREADS, C::MINB)
#define KERNEL_LL KERNEL_LLC(LlCfgShipped)

/* Each GEMV twice, the same parameters: NAME_bf16 with batch 1's body
 * (ll_run1) and NAME_batch_bf16 with the batch bodies (ll_runb), picked by
 * the graph by B; both correct at any B (llama.cuh, ll_run1). */
#define LL_QKV(C, NAME, RUN)                                                   \
    KERNEL_LLC(C) NAME(bf16 *x, const bf16 *embed, const int *tok, int gather, \
                       const bf16 *norm, const bf16 *w, bf16 *q, bf16 *kcache, \
                       bf16 *vcache, const int *pos, int B, int H, int NH,     \
                       int NKV, int HD, int CTX, float eps, float theta,       \
                       float factor, float low, float high, float orig)        \
    {                                                                          \
        const LlQkv k{x, embed, tok, gather, norm, w, q, kcache, vcache, pos,  \
                      B, H, NH, NKV, HD, CTX, eps,                             \
                      LlRope{theta, factor, low, high, orig}};                 \
        RUN<C>(k, eps);                                                        \
    }
LL_QKV(LL_CFG_QKV, llama_qkv_bf16, ll_run1)
LL_QKV(LL_CFG_QKV, llama_qkv_batch_bf16, ll_runb)

#define LL_GATEUP(C, NAME, RUN)                                                \
    KERNEL_LLC(C) NAME(const bf16 *x, const bf16 *norm, const bf16 *w,         \
                       bf16 *act, int B, int H, int F, float eps)              \
    {                                                                          \
        const LlGateUp k{x, norm, w, act, B, H, F, eps};                       \
        RUN<C>(k, eps);                                                        \
    }
LL_GATEUP(LL_CFG_GU, llama_gateup_bf16, ll_run1)
LL_GATEUP(LL_CFG_GU, llama_gateup_batch_bf16, ll_runb)

/* x += a . w^T (the output and down projections) */
#define LL_RES(C, NAME, RUN)                                                   \
    KERNEL_LLC(C) NAME(const bf16 *a, const bf16 *w, bf16 *x, int B, int K,    \
                       int N)                                                  \
    {                                                                          \
        const LlRows<true> k{a, nullptr, w, x, B, K, N, 0.0f};                 \
        RUN<C>(k, 0.0f);                                                       \
    }
LL_RES(LL_CFG_RES, llama_res_bf16, ll_run1)
LL_RES(LL_CFG_RES_BATCH, llama_res_batch_bf16, ll_runb)
LL_RES(LL_CFG_RES_M2, llama_res_m2_bf16, ll_run1)

/* logits = RMSNorm(x) . w^T (the LM head, tied embedding) */
#define LL_HEAD(C, NAME, RUN)                                                  \
    KERNEL_LLC(C) NAME(const bf16 *x, const bf16 *norm, const bf16 *w,         \
                       bf16 *logits, int B, int K, int N, float eps)           \
    {                                                                          \
        const LlRows<false> k{x, norm, w, logits, B, K, N, eps};               \
        RUN<C>(k, eps);                                                        \
    }
LL_HEAD(LL_CFG_HEAD, llama_head_bf16, ll_run1)
LL_HEAD(LL_CFG_HEAD, llama_head_batch_bf16, ll_runb)

/* The attention three times (llama.cuh, LlAttn): batch 1's, the batch one,
 * and the one for heads of no power of two chunks of 8; then the first two
 * again compiled for heads of 64 alone, and batch 1's for heads of 128
 * alone (HDT). */
#define LL_ATTN(MODE, NAME) LL_ATTN_HD(MODE, 0, NAME)
#define LL_ATTN_HD(MODE, HDT, NAME)                                            \
    KERNEL_LL NAME(const bf16 *q, const bf16 *kcache, const bf16 *vcache,     \
                   const int *pos, float *part, int *cnt, bf16 *out, int B,   \
                   int NH, int NKV, int HD, int CTX, int S, const bf16 *pf0,  \
                   const bf16 *pf1, int pfn)                                  \
    {                                                                          \
        const LlAttn<MODE, HDT> k{q,  kcache, vcache, pos, part, cnt, out, B,  \
                                 NH, NKV, HD,     CTX,    S,   pf0, pf1, pfn}; \
        k.run();                                                               \
    }
LL_ATTN(LL_A1, llama_attn_bf16)
LL_ATTN(LL_AB, llama_attn_batch_bf16)
LL_ATTN(LL_AODD, llama_attn_odd_bf16)
LL_ATTN_HD(LL_A1, 64, llama_attn64_bf16)
LL_ATTN_HD(LL_AB, 64, llama_attn_batch64_bf16)
LL_ATTN_HD(LL_A1, 128, llama_attn128_bf16)

KERNEL llama_argmax_bf16(const bf16 *logits, int *part, int *cnt, int *tok,
                         int *pos, int B, int V)
{
    ll_argmax(logits, V, B, part, cnt, tok, pos);
}

KERNEL llama_embed_bf16(const bf16 *embed, const int *tok, bf16 *x, int B,
                        int H, int V)
{
    ll_embed(embed, tok, x, B, H, V);
}

/* The token loop's bookkeeping after a step: count[0] tokens so far, ended[0]
 * set once the loop ends.  A `while` body may hold several steps
 * (graphs/llama_generate.yaml's U): a step after the one that ended the loop
 * still runs, and its emit undoes what it did to the state a program reads
 * on (pos back one, tok the last token emitted; the cache row it wrote lies
 * past pos, where the next step writes before it reads), so the loop ends
 * as if it had stopped there. */
KERNEL llama_emit_i32(int *tok, int *pos, int *out, int *count, int *ended,
                      int B, int N, int eos, cudaGraphConditionalHandle c)
{
    pdl_wait();
    if (cond_leader()) {
        const int t = count[0];
        if (ended[0]) {
            pos[0] -= 1;
            for (int b = 0; b < B; ++b)
                tok[b] = out[(long long)b * N + t - 1];
        } else {
            bool all_eos = eos >= 0;
            for (int b = 0; b < B; ++b) {
                if (t < N)
                    out[(long long)b * N + t] = tok[b];
                all_eos = all_eos && tok[b] == eos;
            }
            const bool more = t + 1 < N && !all_eos;
            count[0] = t + 1;
            ended[0] = !more;
            cudaGraphSetConditional(c, more ? 1u : 0u);
        }
    }
    pdl_launch_dependents();
}
