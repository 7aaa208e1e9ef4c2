/* test_gpu_graphs.c — every graph in graphs/ on the GPU: built, instantiated
 * with programmatic edges and with CUDAG_NO_PDL, replayed on fresh random
 * inputs with every other buffer poisoned first, and compared bit for bit
 * with a CPU reference written here; then 100 replays back to back against
 * the reference applied 100 times.  Also: the programmatic and launch-order
 * edges read back from the instantiated CUgraph with their edge data. */
#include "gpu_common.h"

#include <dirent.h>

#define RUNS 25       /* verified single replays, each on fresh inputs */
#define BURST 100     /* replays back to back, verified at the end */

/* ---- references -------------------------------------------------------------- */

/* The host image of a graph's buffers, by name. */
typedef struct host {
    const cudag_graph *g;
    float **b;
} host;

static float *B(const host *h, const char *name)
{
    uint32_t i = cudag__find_buffer(h->g, name);
    if (i == CUDAG__NONE)
        fail_msg("graph '%s' has no buffer '%s'", h->g->name, name);
    return h->b[i];
}

static long V(const host *h, const char *name)
{
    uint32_t i = cudag__find_var(h->g, name);
    if (i == CUDAG__NONE)
        fail_msg("graph '%s' has no variable '%s'", h->g->name, name);
    return (long)h->g->vars[i].value;
}

/* The kernels' arithmetic: scale a·x, add a+b, axpy fmaf(a, x, y). */
static void scale(const float *x, float *y, float a, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = a * x[i];
}
static void add(const float *a, const float *b, float *y, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}
static void axpy(const float *x, float *y, float a, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = fmaf(a, x[i], y[i]);
}

static void ref_single(host *h)
{
    scale(B(h, "x"), B(h, "y"), 2.0f, V(h, "N"));
}

static void ref_diamond(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "t"), 2.0f, n);
    add(B(h, "t"), B(h, "x"), B(h, "l"), n);
    scale(B(h, "t"), B(h, "r"), 3.0f, n);
    add(B(h, "l"), B(h, "r"), B(h, "y"), n);
}

static void ref_fork_join(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "a"), 2.0f, n);
    scale(B(h, "x"), B(h, "b"), 3.0f, n);
    scale(B(h, "x"), B(h, "c"), 4.0f, n);
    add(B(h, "a"), B(h, "b"), B(h, "ab"), n);
    add(B(h, "ab"), B(h, "c"), B(h, "y"), n);
}

static void ref_memops(host *h)
{
    long n = V(h, "N"), hh = V(h, "H");
    float *acc = B(h, "acc");
    for (long i = 0; i < n; i++)
        acc[i] = 0.0f;
    memcpy(B(h, "saved"), B(h, "x"), (size_t)n * sizeof(float));
    axpy(B(h, "x"), acc, 2.0f, n);
    axpy(B(h, "saved"), acc, 3.0f, n);
    memcpy(B(h, "head"), acc, (size_t)hh * sizeof(float));
}

static void ref_pdl_chain(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "t"), 2.0f, n);
    add(B(h, "t"), B(h, "x"), B(h, "u"), n);
    axpy(B(h, "t"), B(h, "u"), 0.5f, n);
    memcpy(B(h, "y"), B(h, "u"), (size_t)n * sizeof(float));
}

static void ref_repeat(host *h)
{
    long n = V(h, "N"), depth = V(h, "DEPTH"), width = V(h, "WIDTH");
    for (long i = 0; i < depth; i++)
        scale(B(h, "h"), B(h, "h"), 1.01f, n);
    for (long b = 0; b < width; b++)
        scale(B(h, "x") + b * n, B(h, "y") + b * n, 0.5f, n);
    add(B(h, "h"), B(h, "y"), B(h, "out"), n);
}

static void ref_wavefront(host *h)
{
    long m = V(h, "M"), k = V(h, "K"), t = V(h, "T"), w = V(h, "W");
    float *W = B(h, "w");
    for (long i = 0; i < m; i++)
        for (long j = 0; j < k; j++)
            add(W + (i * w + j + 1) * t, W + ((i + 1) * w + j) * t,
                W + ((i + 1) * w + j + 1) * t, t);
}

static void ref_pdl_deep_chain(host *h)
{
    long n = V(h, "N"), depth = V(h, "DEPTH");
    memcpy(B(h, "y"), B(h, "x"), (size_t)n * sizeof(float));
    for (long i = 0; i < depth; i++)
        axpy(B(h, "x"), B(h, "y"), 0.5f, n);
}

/* graphs/layers.yaml: one layer file, L copies built inline, chained by
 * programmatic edges. */
static void ref_layers(host *h)
{
    long n = V(h, "N"), l = V(h, "L");
    memcpy(B(h, "h"), B(h, "x"), (size_t)n * sizeof(float));
    for (long i = 0; i < l; i++) {
        scale(B(h, "h"), B(h, "y") + i * n, (float)(i + 2), n);
        axpy(B(h, "y") + i * n, B(h, "h"), 0.25f, n);
    }
}

/* graphs/user_kernels.yaml: the user's own kernels from user_kernels.cu. */
static void ref_user_kernels(host *h)
{
    long n = V(h, "N");
    const float *x = B(h, "x");
    float *a = B(h, "a"), *b = B(h, "b"), *y = B(h, "y"), *z = B(h, "z");
    scale(x, a, 2.0f, n);
    for (long i = 0; i < n; i++) {
        b[i] = x[i] * x[i];
        y[i] = fmaf(0.5f, a[i], 3.0f * b[i]);
        z[i] = y[i] + 1.0f;
    }
}

/* graphs/cluster_norm.yaml: x = 0.5·u + 0.25 (bit for bit: the kernel's
 * fmaf), then each row's RMSNorm in double (the kernel sums a cluster's
 * partial sums in float: within 1e-5 relative). */
static void ref_cluster_norm(host *h)
{
    long rows = V(h, "ROWS"), width = V(h, "CLUSTER") * V(h, "SLICE");
    const float *u = B(h, "u"), *gamma = B(h, "gamma");
    float *x = B(h, "x"), *y = B(h, "y");
    for (long r = 0; r < rows; r++) {
        double ss = 0;
        for (long i = 0; i < width; i++) {
            x[r * width + i] = fmaf(0.5f, u[r * width + i], 0.25f);
            ss += (double)x[r * width + i] * x[r * width + i];
        }
        double k = 1.0 / sqrt(ss / (double)width + 1e-6);
        for (long i = 0; i < width; i++)
            y[r * width + i] = (float)(x[r * width + i] * k * gamma[i]);
    }
}

/* The bf16 kernels compute in f32 and store bf16: the references compute in
 * double and round every stored value to bf16, so they agree with the GPU to
 * bf16 rounding (compared by relative error, not bit for bit). */
static float bf16(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u += 0x7fffu + ((u >> 16) & 1u);    /* round to nearest even */
    u &= 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

static double gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double inv_rms(const float *x, long cols, double eps)
{
    double ss = 0;
    for (long j = 0; j < cols; j++)
        ss += (double)x[j] * x[j];
    return 1.0 / sqrt(ss / (double)cols + eps);
}

static void rmsnorm16(const float *x, const float *g, float *y, long rows,
                      long cols, double eps)
{
    for (long r = 0; r < rows; r++) {
        double k = inv_rms(x + r * cols, cols, eps);
        for (long j = 0; j < cols; j++)
            y[r * cols + j] = bf16(x[r * cols + j] * k * g[j]);
    }
}

static void layernorm16(const float *x, const float *g, const float *b,
                        float *y, long rows, long cols, double eps)
{
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double m = 0, v = 0;
        for (long j = 0; j < cols; j++)
            m += xr[j];
        m /= (double)cols;
        for (long j = 0; j < cols; j++)
            v += (xr[j] - m) * (xr[j] - m);
        double k = 1.0 / sqrt(v / (double)cols + eps);
        for (long j = 0; j < cols; j++)
            y[r * cols + j] = bf16((xr[j] - m) * k * g[j] + b[j]);
    }
}

static void softmax16(const float *x, float *y, long rows, long cols)
{
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double mx = xr[0], sum = 0;
        for (long j = 1; j < cols; j++)
            mx = xr[j] > mx ? xr[j] : mx;
        for (long j = 0; j < cols; j++)
            sum += exp(xr[j] - mx);
        for (long j = 0; j < cols; j++)
            y[r * cols + j] = bf16(exp(xr[j] - mx) / sum);
    }
}

static void ref_decode_chain(host *h)
{
    long t = V(h, "T"), hh = V(h, "H"), layers = V(h, "LAYERS"), n = t * hh;
    float *x = B(h, "x"), *hb = B(h, "h"), *gb = B(h, "g");
    for (long i = 0; i < layers; i++) {
        rmsnorm16(x, B(h, "gamma") + i * hh, hb, t, hh, 1e-6);
        const float *bias = B(h, "bias") + i * hh;
        for (long k = 0; k < n; k++)
            gb[k] = bf16(gelu((double)hb[k] + bias[k % hh]));
        for (long k = 0; k < n; k++)
            x[k] = bf16((double)gb[k] + x[k]);
    }
}

static void ref_decode_chain_fused(host *h)
{
    long t = V(h, "T"), hh = V(h, "H"), layers = V(h, "LAYERS");
    float *x = B(h, "x");
    for (long i = 0; i < layers; i++) {
        const float *g = B(h, "gamma") + i * hh, *bias = B(h, "bias") + i * hh;
        for (long r = 0; r < t; r++) {
            float *xr = x + r * hh;
            double k = inv_rms(xr, hh, 1e-6);
            for (long j = 0; j < hh; j++)
                xr[j] = bf16(xr[j] + gelu(xr[j] * k * g[j] + bias[j]));
        }
    }
}

static void ref_norms_forkjoin(host *h)
{
    long t = V(h, "T"), hh = V(h, "H"), n = t * hh;
    float *a = B(h, "a"), *x = B(h, "x"), *g = B(h, "gamma");
    for (long k = 0; k < n; k++)
        a[k] = bf16(0.5 * x[k]);
    rmsnorm16(a, g, B(h, "rms"), t, hh, 1e-6);
    layernorm16(a, g + hh, B(h, "beta"), B(h, "ln"), t, hh, 1e-5);
    softmax16(a, B(h, "soft"), t, hh);
    for (long r = 0; r < t; r++) {
        double mx = a[r * hh];
        for (long j = 1; j < hh; j++)
            mx = a[r * hh + j] > mx ? a[r * hh + j] : mx;
        B(h, "maxes")[r] = bf16(mx);
    }
    float *mix = B(h, "mix"), *y = B(h, "y"), *soft = B(h, "soft");
    for (long k = 0; k < n; k++)
        mix[k] = bf16((double)B(h, "rms")[k] + B(h, "ln")[k]);
    for (long k = 0; k < n; k++)
        y[k] = bf16((double)mix[k] * soft[k]);
    for (long r = 0; r < t; r++) {
        double sum = 0;
        for (long j = 0; j < hh; j++)
            sum += y[r * hh + j];
        B(h, "sums")[r] = bf16(sum);
    }
}

/* Row-major D[m×n] = A[m×k]·B[n×k]ᵀ (B as a Linear weight), accumulated in
 * double and stored bf16, as cuBLASLt computes in f32 and stores bf16. */
static void gemm_bt16(const float *a, const float *b, float *d, long m, long n,
                      long k)
{
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            double acc = 0;
            for (long l = 0; l < k; l++)
                acc += (double)a[i * k + l] * b[j * k + l];
            d[i * n + j] = bf16(acc);
        }
}

static void ref_mlp_decode(host *h)
{
    long t = V(h, "T"), hh = V(h, "H"), f = V(h, "F");
    long layers = V(h, "LAYERS");
    float *x = B(h, "x"), *hb = B(h, "h"), *gu = B(h, "gu");
    float *act = B(h, "act"), *y = B(h, "y");
    for (long i = 0; i < layers; i++) {
        rmsnorm16(x, B(h, "gamma") + i * hh, hb, t, hh, 1e-6);
        const float *wgu = B(h, "w_gu") + i * 2 * f * hh;
        gemm_bt16(hb, wgu, gu, t, f, hh);                   /* gate */
        gemm_bt16(hb, wgu + f * hh, gu + t * f, t, f, hh);  /* up */
        for (long k = 0; k < t * f; k++) {
            double g = gu[k];
            act[k] = bf16(g / (1.0 + exp(-g)) * gu[t * f + k]);
        }
        gemm_bt16(act, B(h, "w_down") + i * hh * f, y, t, hh, f);
        for (long k = 0; k < t * hh; k++)
            x[k] = bf16((double)y[k] + x[k]);
    }
}

/* Buffers a graph computes although they are declared `init: random`:
 * poisoned before each run like any output. */
static void poison_wavefront(host *h)
{
    long m = V(h, "M"), k = V(h, "K"), t = V(h, "T"), w = V(h, "W");
    float *W = B(h, "w");
    for (long i = 1; i <= m; i++)
        for (long j = 1; j <= k; j++)
            for (long e = 0; e < t; e++)
                W[(i * w + j) * t + e] = NAN;
}

/* graphs/branch.yaml: the `if` node runs `then` when x[0] < 0. */
static void ref_branch(host *h)
{
    long n = V(h, "N");
    const float *x = B(h, "x");
    scale(x, B(h, "y"), x[0] < 0.0f ? 2.0f : 0.5f, n);
    add(B(h, "y"), x, B(h, "z"), n);
}

/* graphs/switch.yaml: which[0] (an i32, kept in the float image's bits)
 * picks the case; t is written by case 1 alone. */
static int32_t case_of(host *h)
{
    int32_t c;
    memcpy(&c, B(h, "which"), sizeof c);
    return c;
}

static void ref_switch(host *h)
{
    long n = V(h, "N");
    const float *x = B(h, "x");
    switch (case_of(h)) {
    case 0:
        scale(x, B(h, "y"), 2.0f, n);
        break;
    case 1:
        add(x, x, B(h, "t"), n);
        add(B(h, "t"), x, B(h, "y"), n);
        break;
    case 2:
        scale(x, B(h, "y"), 0.5f, n);
        break;
    default:
        break;      /* none past the last */
    }
}

/* Each run a case from the fresh x, every case (and one past the last,
 * which runs none) in turn over the runs. */
static void pick_case(host *h)
{
    static int32_t next;
    int32_t c = next++ % 4;
    memcpy(B(h, "which"), &c, sizeof c);
}

/* tol 0: bit for bit with the reference; otherwise the largest relative
 * error ‖got − ref‖ / ‖ref‖ per buffer (bf16 storage: a few ulps of 2^-8).
 * burst: replays back to back in the last check. */
static const struct reference {
    const char *graph;
    void (*ref)(host *h);
    void (*poison)(host *h);
    double tol;
    int burst;
    /* Small shapes for a graph whose defaults would make the CPU
     * reference too slow (NULL-terminated -D defines). */
    const char *const *defines;
} refs[] = {
    {"single", ref_single, NULL, 0, BURST, NULL},
    {"diamond", ref_diamond, NULL, 0, BURST, NULL},
    {"fork_join", ref_fork_join, NULL, 0, BURST, NULL},
    /* the same graph with its edges inferred (order: program) */
    {"fork_join_program", ref_fork_join, NULL, 0, BURST, NULL},
    {"memops", ref_memops, NULL, 0, BURST, NULL},
    {"pdl_chain", ref_pdl_chain, NULL, 0, BURST, NULL},
    {"repeat", ref_repeat, NULL, 0, BURST, NULL},
    {"wavefront", ref_wavefront, poison_wavefront, 0, BURST, NULL},
    {"pdl_deep_chain", ref_pdl_deep_chain, NULL, 0, BURST, NULL},
    /* A layer file's copies, each a child graph built inline. */
    {"layers", ref_layers, NULL, 0, BURST, NULL},
    /* The decode chains update x in place: each replay is 8 more layers,
     * and a few replays already test that the chain resumes correctly. */
    {"decode_chain", ref_decode_chain, NULL, 1e-2, 3, NULL},
    {"decode_chain_fused", ref_decode_chain_fused, NULL, 1e-2, 3, NULL},
    {"norms_forkjoin", ref_norms_forkjoin, NULL, 1e-2, BURST, NULL},
    /* cuBLASLt's GEMMs sum in another order than the reference: within
     * bf16 rounding of it.  Two layers (the programmatic edge between
     * them), replayed on x in place. */
    {"mlp_decode", ref_mlp_decode, NULL, 2e-2, 3,
     (const char *const[]){"T=4", "H=256", "LAYERS=2", NULL}},
    /* Compiled from source with NVRTC; offset_pdl's wait is found in its
     * generated code, so its programmatic edge is kept (checked below). */
    {"user_kernels", ref_user_kernels, NULL, 0, BURST, NULL},
    /* Branches decided on the device (conditional nodes): x[0]'s sign picks
     * the `if` body; pick_case writes the switch's case before each run. */
    {"branch", ref_branch, NULL, 0, BURST, NULL},
    {"switch", ref_switch, pick_case, 0, BURST, NULL},
    /* From source with CCCL headers: a cluster of 8 CTAs per row sharing
     * partial sums through distributed shared memory, 112 KiB of dynamic
     * shared memory each, behind a programmatic edge. */
    {"cluster_norm", ref_cluster_norm, NULL, 1e-5, BURST, NULL},
};

/* ---- bf16 transfers ----------------------------------------------------------- */

static bool is_bf16(const cudag_graph *g, uint32_t b)
{
    return g->buffers[b].type == CUDAG_TYPE_BF16;
}

static void put(cudag_exec *x, const cudag_graph *g, uint32_t b, const float *h)
{
    size_t n = g->buffers[b].count;
    if (!is_bf16(g, b)) {
        gpu_write(x, g->buffers[b].name, h, n);
        return;
    }
    uint16_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &h[i], 4);
        v[i] = (uint16_t)(u >> 16);     /* h holds bf16 values already */
    }
    cudag_error e;
    gpu_ok(cudag_exec_write(x, g->buffers[b].name, v, n * sizeof *v, &e), &e,
           g->buffers[b].name);
    free(v);
}

static float *get(cudag_exec *x, const cudag_graph *g, uint32_t b)
{
    size_t n = g->buffers[b].count;
    if (!is_bf16(g, b))
        return gpu_read(x, g->buffers[b].name, n);
    uint16_t *v = malloc(n * sizeof *v);
    float *f = malloc(n * sizeof *f);
    assert_true(v && f);
    cudag_error e;
    gpu_ok(cudag_exec_read(x, g->buffers[b].name, v, n * sizeof *v, &e), &e,
           g->buffers[b].name);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)v[i] << 16;
        memcpy(&f[i], &u, 4);
    }
    free(v);
    return f;
}

/* ---- running ----------------------------------------------------------------- */

static cudag_graph *load_file(const char *path, const char *const *defines)
{
    tdiag d;
    cudag_options o = topts(&d, defines);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(path, &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("loading %s: %s\n%s", path, cudag_status_name(rc), d.text);
    return g;
}

/* Fresh inputs (every `init: random` buffer) and poison (every other
 * buffer, and what ref->poison names), in h and on both execs. */
static void prepare(host *h, const struct reference *r, cudag_exec **xs,
                    uint64_t *seed)
{
    const cudag_graph *g = h->g;
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        size_t n = g->buffers[b].count;
        if (g->buffers[b].init.kind == CUDAG_INIT_RANDOM) {
            gpu_random(seed, h->b[b], n);
            /* Inputs the GPU can hold exactly, so both sides start equal. */
            if (is_bf16(g, b))
                for (size_t i = 0; i < n; i++)
                    h->b[b][i] = bf16(h->b[b][i]);
        } else {
            for (size_t i = 0; i < n; i++)
                h->b[b][i] = NAN;
        }
    }
    if (r->poison)
        r->poison(h);
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b < g->nbuffers; b++)
            put(xs[k], g, b, h->b[b]);
}

/* ‖got − want‖ / ‖want‖, and whether every element is finite where the
 * reference is. */
static double rel_err(const float *got, const float *want, size_t n,
                      bool *finite)
{
    double num = 0, den = 0;
    *finite = true;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(want[i]) != isfinite(got[i]))
            *finite = false;
        if (!isfinite(want[i]))
            continue;
        double d = (double)got[i] - want[i];
        num += d * d;
        den += (double)want[i] * want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Every buffer of both execs equals the reference image, bit for bit: so
 * programmatic and full edges give identical results. */
static void compare(const host *h, const struct reference *r, cudag_exec **xs,
                    const char *when)
{
    const cudag_graph *g = h->g;
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        size_t n = g->buffers[b].count;
        float *got[2] = {get(xs[0], g, b), get(xs[1], g, b)};
        char what[600];
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof what, "%s (%s, %s): buffer %s", g->name,
                     k ? "--no-pdl" : "programmatic edges", when,
                     g->buffers[b].name);
            if (r->tol == 0) {
                gpu_expect(what, got[k], h->b[b], n);
                continue;
            }
            bool finite;
            double err = rel_err(got[k], h->b[b], n, &finite);
            if (!finite || !(err <= r->tol))
                fail_msg("%s: relative error %.3g (limit %.3g)%s", what, err,
                         r->tol, finite ? "" : ", and a non-finite value");
        }
        /* Programmatic edges change when kernels start, never what they
         * compute: the two execs agree bit for bit whatever the type. */
        snprintf(what, sizeof what, "%s (%s): buffer %s, PDL against --no-pdl",
                 g->name, when, g->buffers[b].name);
        gpu_expect(what, got[0], got[1], n);
        free(got[0]);
        free(got[1]);
    }
}

static void graph_matches_reference(void **state)
{
    const char *file = *state;
    cudag_graph *g = load_file(tsrc(file), NULL);
    const struct reference *r = NULL;
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (strcmp(refs[i].graph, cudag_graph_name(g)) == 0)
            r = &refs[i];
    if (!r && g->nsubs) {
        /* The loops decided on the device have references of their own,
         * with the counters they keep. */
        printf("# %s: conditional nodes: verified by test_gpu_cond\n", file);
        cudag_graph_destroy(g);
        return;
    }
    if (!r)
        fail_msg("%s: no CPU reference for graph '%s': add one to "
                 "tests/test_gpu_graphs.c",
                 file, cudag_graph_name(g));
    if (r->defines) {
        cudag_graph_destroy(g);
        g = load_file(tsrc(file), r->defines);
    }
    host h = {g, calloc(g->nbuffers, sizeof(float *))};
    assert_non_null(h.b);
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        /* An i32 buffer (a switch's case) travels in a float's bits. */
        if (g->buffers[b].type != CUDAG_TYPE_F32 && !is_bf16(g, b) &&
            g->buffers[b].type != CUDAG_TYPE_I32)
            fail_msg("%s: buffer '%s' is %s; this test handles f32, bf16 "
                     "and i32",
                     file, g->buffers[b].name,
                     cudag_type_name(g->buffers[b].type));
        h.b[b] = malloc(g->buffers[b].count * sizeof(float));
        assert_non_null(h.b[b]);
    }
    cudag_exec *xs[2] = {gpu_instantiate(g, 0, NULL),
                         gpu_instantiate(g, CUDAG_NO_PDL, NULL)};
    cudag_exec_stats st;
    cudag_exec_get_stats(xs[0], &st);
    /* The shipped kernels all wait, and so does user_kernels.cu's
     * offset_pdl (seen in its PTX, never declared): nothing may be
     * downgraded on Hopper. */
    if (xs[0]->gpu.cc_major >= 9)
        assert_int_equal(st.downgraded_edges, 0);
    uint64_t seed = tseed();
    cudag_error e;
    for (int run = 0; run < RUNS; run++) {
        prepare(&h, r, xs, &seed);
        r->ref(&h);
        for (int k = 0; k < 2; k++) {
            gpu_ok(cudag_exec_launch(xs[k], 1, &e), &e, "launch");
            gpu_ok(cudag_exec_sync(xs[k], &e), &e, "sync");
        }
        char when[32];
        snprintf(when, sizeof when, "run %d", run);
        compare(&h, r, xs, when);
    }
    prepare(&h, r, xs, &seed);
    for (int i = 0; i < r->burst; i++)
        r->ref(&h);
    for (int k = 0; k < 2; k++)
        gpu_ok(cudag_exec_launch(xs[k], (unsigned)r->burst, &e), &e, "launch");
    for (int k = 0; k < 2; k++)
        gpu_ok(cudag_exec_sync(xs[k], &e), &e, "sync");
    char when[64];
    snprintf(when, sizeof when, "after %d replays", r->burst);
    compare(&h, r, xs, when);
    printf("# %s: %d verified runs and %d replays, identical with and "
           "without PDL%s\n",
           cudag_graph_name(g), RUNS, r->burst,
           r->tol ? " (bf16: within rounding of the CPU reference)" : "");
    cudag_exec_destroy(xs[0]);
    cudag_exec_destroy(xs[1]);
    for (uint32_t b = 0; b < g->nbuffers; b++)
        free(h.b[b]);
    free(h.b);
    cudag_graph_destroy(g);
}

/* ---- edges read back ------------------------------------------------------------- */

static const char edges_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "buffers: {x: {type: f32, count: 4096, init: random},\n"
    "          y: {type: f32, count: 4096}}\n"
    "nodes:\n"
    "  a: {kernel: scale_f32, grid: 4, block: 256, args: [x, y, 2.0, 4096]}\n"
    "  b: {kernel: util_noop, grid: 1, block: 32, after: {a: programmatic}}\n"
    "  c: {kernel: util_noop, grid: 1, block: 32, after: {a: launch_order}}\n"
    "  d: {kernel: copy_f32, grid: 4, block: 256, args: [y, x, 4096],\n"
    "      after: [b, c]}\n";

static void check_edges(const cudag_graph *g, cudag_exec *x, bool pdl)
{
    const cudag__drv *d = gpu_drv();
    cudag_error e;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    size_t n = 0;
    assert_int_equal(d->cuGraphGetEdges(x->built.graph, NULL, NULL, NULL, &n),
                     CUDA_SUCCESS);
    assert_int_equal(n, g->nedges);
    CUgraphNode from[16], to[16];
    CUgraphEdgeData ed[16];
    assert_true(n <= 16);
    assert_int_equal(d->cuGraphGetEdges(x->built.graph, from, to, ed, &n),
                     CUDA_SUCCESS);
    cudag__exec_leave(x);
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t f = cudag__built_find(&x->built, from[i]);
        uint32_t t = cudag__built_find(&x->built, to[i]);
        assert_true(f != CUDAG__NONE && t != CUDAG__NONE);
        for (uint32_t k = 0; k < g->nedges; k++) {
            if (g->edges[k].from != f || g->edges[k].to != t)
                continue;
            seen++;
            int port = 0, type = 0;
            if (pdl && g->edges[k].kind != CUDAG_EDGE_FULL) {
                type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
                port = g->edges[k].kind == CUDAG_EDGE_PROGRAMMATIC
                           ? CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
                           : CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
            }
            printf("# edge %s -> %s (%s%s): port %d type %d\n",
                   g->nodes[f].name, g->nodes[t].name,
                   cudag_edge_kind_name(g->edges[k].kind),
                   pdl ? "" : ", --no-pdl", ed[i].from_port, ed[i].type);
            assert_int_equal(ed[i].from_port, port);
            assert_int_equal(ed[i].type, type);
            assert_int_equal(ed[i].to_port, 0);
        }
    }
    assert_int_equal(seen, g->nedges);
}

static void edges_read_back_with_their_kind(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(edges_yaml);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    if (x->gpu.cc_major < 9) {
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
        printf("# device below compute 9.0: PDL edges are downgraded\n");
        skip();
    }
    check_edges(g, x, true);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 100, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    cudag_exec_destroy(x);
    x = gpu_instantiate(g, CUDAG_NO_PDL, NULL);
    check_edges(g, x, false);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    gpu_require();
    static char *files[256];
    size_t n = 0;
    DIR *dir = opendir(tsrc("graphs"));
    if (!dir) {
        fprintf(stderr, "cannot open %s\n", tsrc("graphs"));
        return 1;
    }
    for (struct dirent *de; (de = readdir(dir)) && n < 256;) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0) {
            files[n] = malloc(len + 8);
            if (!files[n])
                return 1;
            snprintf(files[n++], len + 8, "graphs/%s", de->d_name);
        }
    }
    closedir(dir);
    qsort(files, n, sizeof *files, by_name);
    struct CMUnitTest tests[258];
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        struct CMUnitTest t = {files[i], graph_matches_reference, NULL, NULL,
                               files[i]};
        tests[nt++] = t;
    }
    struct CMUnitTest t = {"edges_read_back_with_their_kind",
                           edges_read_back_with_their_kind, NULL, NULL, NULL};
    tests[nt++] = t;
    int rc = _cmocka_run_group_tests("gpu_graphs", tests, nt, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    return rc;
}
