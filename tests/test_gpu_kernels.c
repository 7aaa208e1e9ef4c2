/* test_gpu_kernels.c — every kernel of cudag_kernels.fatbin (bulk and _vec
 * variants, f32 and bf16) against a CPU reference in double, on fresh random
 * data, with outputs and guard zones poisoned (NaN) first, at sizes from 1
 * element up and rows of 1 … 65536 elements, with pointers offset by 0–3
 * elements so that inputs, outputs and weights disagree in alignment.
 *
 * The input guard zones hold NaN as well: a kernel that reads past its data
 * and folds what it read into an output is caught by the comparison, one that
 * writes past it by the guard check.  Other tests: a chain of kernels
 * launched with programmatic stream serialization (PDL) on poisoned
 * intermediates, util_stamp ordering, util_nowait_copy_f32, the compute_80
 * legacy module (its PTX version, which the library relies on), and that
 * every manifest kernel loads and launches with 1024 threads and no dynamic
 * shared memory.
 *
 * Exits 77 (skip) with the reason when libcuda.so.1, a device or the built
 * kernels are missing.  CUDAG_KERNELS_QUICK=1 caps the sizes (for
 * compute-sanitizer, see tests/kernels/sanitize_kernels.sh); CUDAG_TEST_SEED
 * replays a seed; CUDAG_TEST_FILTER selects tests by name ("rows_*"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kharness.h"

static kh K;
static uint64_t rng;
static int quick;

/* The suite needs nothing of tests/common.c (it tests the kernels, not the
 * library), so its own seed and generator follow common.c's conventions:
 * CUDAG_TEST_SEED replays the printed seed. */
static uint64_t tseed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)ts.tv_sec;
    const char *env = getenv("CUDAG_TEST_SEED");
    if (env)
        s = strtoull(env, NULL, 0);
    if (!s)
        s = 88172645463325252ull;
    fprintf(stderr, "# seed %llu (CUDAG_TEST_SEED replays it)\n", (unsigned long long)s);
    return s;
}

/* Uniform in [lo, hi), xorshift64. */
static double trand(uint64_t *st, double lo, double hi)
{
    uint64_t x = *st;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *st = x;
    return lo + (hi - lo) * (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* Fails the test on any driver error, naming the call. */
#define CK(call)                                                               \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            print_error("%s:%d: %s: %s\n", __FILE__, __LINE__, #call,          \
                        kh_errname(&K, r_));                                   \
            fail();                                                            \
        }                                                                      \
    } while (0)

typedef enum { F32, BF16 } dtype;

static size_t esz(dtype t) { return t == F32 ? 4 : 2; }
static const char *tname(dtype t) { return t == F32 ? "f32" : "bf16"; }

/* Guard elements on each side of every buffer; a multiple of 8 elements so
 * that offset 0 is 16-byte aligned for both types. */
#define GUARD 16

/* A device array of n elements at element offset `off` (0..3) inside an
 * allocation with NaN guard zones, and its host mirror in double. */
typedef struct arr {
    dtype t;
    size_t n, off, total;
    CUdeviceptr base;
    double *h;       /* exact values of the n elements */
    unsigned char *raw; /* host copy of the whole allocation */
} arr;

static CUdeviceptr at(const arr *a) { return a->base + (a->off + GUARD) * esz(a->t); }

static void poison_raw(dtype t, unsigned char *raw, size_t total)
{
    for (size_t i = 0; i < total; ++i) {
        if (t == F32) {
            uint32_t v = 0x7fc00000u;
            memcpy(raw + 4 * i, &v, 4);
        } else {
            uint16_t v = 0x7fc0u;
            memcpy(raw + 2 * i, &v, 2);
        }
    }
}

static void set_elem(arr *a, size_t i, double v)
{
    unsigned char *p = a->raw + (a->off + GUARD + i) * esz(a->t);
    if (a->t == F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
        a->h[i] = f;
    } else {
        uint16_t b = kh_f_to_bf16((float)v);
        memcpy(p, &b, 2);
        a->h[i] = kh_bf16_to_f(b);
    }
}

static double get_elem(const arr *a, size_t i)
{
    const unsigned char *p = a->raw + i * esz(a->t);
    if (a->t == F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    uint16_t b;
    memcpy(&b, p, 2);
    return kh_bf16_to_f(b);
}

/* Allocates; fills with uniform random values in [lo, hi) when lo < hi,
 * else leaves the data poisoned (an output).  Uploads everything. */
static void arr_make(arr *a, dtype t, size_t n, size_t off, double lo, double hi)
{
    memset(a, 0, sizeof *a);
    a->t = t;
    a->n = n;
    a->off = off;
    a->total = n + off + 2 * GUARD;
    a->h = calloc(n ? n : 1, sizeof *a->h);
    a->raw = malloc(a->total * esz(t));
    assert_non_null(a->h);
    assert_non_null(a->raw);
    poison_raw(t, a->raw, a->total);
    if (lo < hi)
        for (size_t i = 0; i < n; ++i)
            set_elem(a, i, trand(&rng, lo, hi));
    CK(K.api.cuMemAlloc(&a->base, a->total * esz(t)));
    CK(K.api.cuMemcpyHtoD(a->base, a->raw, a->total * esz(t)));
}

static void arr_free(arr *a)
{
    if (a->base)
        CK(K.api.cuMemFree(a->base));
    free(a->h);
    free(a->raw);
    memset(a, 0, sizeof *a);
}

static void arr_download(arr *a)
{
    CK(K.api.cuMemcpyDtoH(a->raw, a->base, a->total * esz(a->t)));
}

/* Checks that nothing outside [off, off+n) changed from the poison. */
static int guards_intact(const arr *a, const char *what)
{
    for (size_t i = 0; i < a->total; ++i) {
        if (i >= a->off + GUARD && i < a->off + GUARD + a->n)
            continue;
        const unsigned char *p = a->raw + i * esz(a->t);
        int ok = a->t == F32 ? (p[0] == 0 && p[1] == 0 && p[2] == 0xc0 && p[3] == 0x7f)
                             : (p[0] == 0xc0 && p[1] == 0x7f);
        if (!ok) {
            print_error("%s: guard element %ld (relative to the data) was written\n",
                        what, (long)i - (long)(a->off + GUARD));
            return 0;
        }
    }
    return 1;
}

/* Compares element i of the downloaded output with ref: |got - ref| <=
 * rtol*mag + ulp*|ref| (+ a tiny floor), NaN never passing.  Reports the
 * first few mismatches; returns the number of bad elements. */
typedef struct cmp {
    double rtol, ulp;
    size_t bad;
    double worst;
    const char *what;
} cmp;

static void cmp_init(cmp *c, dtype t, double rtol, const char *what)
{
    c->rtol = rtol;
    c->ulp = t == F32 ? 0.0 : 1.0 / 128.0; /* one bf16 ulp at most */
    c->bad = 0;
    c->worst = 0;
    c->what = what;
}

static void cmp_one(cmp *c, size_t i, double got, double ref, double mag)
{
    double tol = c->rtol * mag + c->ulp * fabs(ref) + 1e-30;
    double err = fabs(got - ref);
    if (!(err <= tol)) {
        if (c->bad < 5)
            print_error("%s: [%zu] got %.9g, want %.9g (tol %.3g)\n", c->what, i, got,
                        ref, tol);
        c->bad++;
    }
    if (err / tol > c->worst && isfinite(err))
        c->worst = err / tol;
}

static CUfunction fn(const char *name)
{
    CUfunction f = NULL;
    CUresult r = K.api.cuModuleGetFunction(&f, K.mod, name);
    if (r != CUDA_SUCCESS) {
        print_error("cuModuleGetFunction(%s): %s\n", name, kh_errname(&K, r));
        fail();
    }
    return f;
}

static void launch_sync(CUfunction f, unsigned grid, unsigned block, void **args)
{
    CK(kh_launch(&K, f, grid, block, 0, args));
    CK(K.api.cuStreamSynchronize(K.stream));
}

/* --- References ------------------------------------------------------------ */

static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double silu_ref(double g) { return g / (1.0 + exp(-g)); }

/* --- Pointwise ------------------------------------------------------------- */

typedef enum { P_COPY, P_SCALE, P_ADD, P_MUL, P_AXPY, P_BIAS_GELU, P_SWIGLU, P_RESADD,
               P_COUNT } pwop;
static const char *const pw_names[P_COUNT] = {"copy", "scale", "add", "mul", "axpy",
                                              "bias_gelu", "swiglu", "residual_add"};

static size_t pw_sizes[] = {1, 2, 3, 7, 8, 9, 17, 31, 1000, 2053, 4097, 65541,
                            (1u << 20) + 3, (1u << 22) - 5};
static const unsigned pw_offsets[][4] = {
    /* in0, in1, y, bias */
    {0, 0, 0, 0}, {1, 1, 1, 3}, {0, 1, 2, 1}, {3, 0, 1, 0}, {2, 2, 0, 2}, {3, 3, 3, 1},
};
static const unsigned pw_launch[][2] = {
    /* grid (0: one block per 2048 elements), block */
    {0, 256}, {1, 256}, {7, 96}, {264, 1024}, {3, 33},
};

static void pw_case(pwop op, dtype t, int vec, size_t n, const unsigned *offs,
                    unsigned grid, unsigned block, int inplace)
{
    char name[64], what[160];
    snprintf(name, sizeof name, "%s_%s%s", pw_names[op], tname(t), vec ? "_vec" : "");
    snprintf(what, sizeof what, "%s n=%zu off=%u,%u,%u,%u grid=%u block=%u%s", name, n,
             offs[0], offs[1], offs[2], offs[3], grid, block, inplace ? " in-place" : "");
    const int two = op == P_ADD || op == P_MUL || op == P_SWIGLU || op == P_RESADD;
    const double lo = op == P_BIAS_GELU ? -4.0 : -1.0, hi = -lo;
    int cols = 1;
    if (op == P_BIAS_GELU) {
        static const int colset[] = {1, 3, 64, 1000, 4096, 5000};
        cols = colset[(n + offs[3]) % 6];
    }
    arr x, z, y, b;
    memset(&z, 0, sizeof z);
    memset(&b, 0, sizeof b);
    arr_make(&x, t, n, offs[0], lo, hi);
    if (two)
        arr_make(&z, t, n, offs[1], lo, hi);
    if (op == P_BIAS_GELU)
        arr_make(&b, t, (size_t)cols, offs[3], -1.0, 1.0);
    if (op == P_AXPY)
        arr_make(&y, t, n, offs[2], -1.0, 1.0);
    else if (!inplace)
        arr_make(&y, t, n, offs[2], 0, 0);
    arr *out = inplace ? &x : &y;
    double *yin = NULL;
    if (op == P_AXPY) {
        yin = malloc(n * sizeof *yin);
        assert_non_null(yin);
        memcpy(yin, y.h, n * sizeof *yin);
    }
    double *xin = malloc(n * sizeof *xin);
    assert_non_null(xin);
    memcpy(xin, x.h, n * sizeof *xin);

    CUdeviceptr px = at(&x), pz = two ? at(&z) : 0, py = at(out),
                pb = op == P_BIAS_GELU ? at(&b) : 0;
    long long nn = (long long)n;
    float a = (float)trand(&rng, -2.0, 2.0);
    void *args[6];
    switch (op) {
    case P_COPY:
        args[0] = &px, args[1] = &py, args[2] = &nn;
        break;
    case P_SCALE:
    case P_AXPY:
        args[0] = &px, args[1] = &py, args[2] = &a, args[3] = &nn;
        break;
    case P_BIAS_GELU:
        args[0] = &px, args[1] = &pb, args[2] = &py, args[3] = &nn, args[4] = &cols;
        break;
    default:
        args[0] = &px, args[1] = &pz, args[2] = &py, args[3] = &nn;
        break;
    }
    if (grid == 0)
        grid = (unsigned)((n + 2047) / 2048);
    launch_sync(fn(name), grid, block, args);
    arr_download(out);

    cmp c;
    cmp_init(&c, t, 1e-5, what);
    for (size_t i = 0; i < n; ++i) {
        double xv = xin[i], zv = two ? z.h[i] : 0, ref, mag;
        switch (op) {
        case P_COPY: ref = xv, mag = fabs(xv); break;
        case P_SCALE: ref = (double)a * xv, mag = fabs(ref); break;
        case P_ADD:
        case P_RESADD: ref = xv + zv, mag = fabs(xv) + fabs(zv); break;
        case P_MUL: ref = xv * zv, mag = fabs(ref); break;
        case P_AXPY: ref = (double)a * xv + yin[i], mag = fabs(a * xv) + fabs(yin[i]); break;
        case P_BIAS_GELU: {
            double bv = b.h[i % (size_t)cols], tt = xv + bv;
            /* t = x + b rounds in f32 (error ~6e-8 (|x| + |b|)), and gelu'
             * <= 1.13 carries that into y: 0.1 (|x| + |b|) covers it 16x
             * over at rtol 1e-5 while a wrong bias element is still far
             * outside. */
            ref = gelu_ref(tt), mag = fabs(ref) + 0.1 * (fabs(xv) + fabs(bv));
            break;
        }
        case P_SWIGLU: ref = silu_ref(xv) * zv, mag = fabs(ref) + 0.1 * fabs(xv * zv); break;
        default: ref = 0, mag = 0; break;
        }
        cmp_one(&c, i, get_elem(out, out->off + GUARD + i), ref, mag);
    }
    int gok = guards_intact(out, what);
    free(xin);
    free(yin);
    arr_free(&x);
    if (!inplace)
        arr_free(&y);
    if (two)
        arr_free(&z);
    if (op == P_BIAS_GELU)
        arr_free(&b);
    if (c.bad)
        print_error("%s: %zu of %zu elements wrong\n", what, c.bad, n);
    assert_int_equal(c.bad, 0);
    assert_true(gok);
}

static void pw_all(dtype t, int vec)
{
    const size_t nsz = sizeof pw_sizes / sizeof pw_sizes[0];
    const size_t noff = sizeof pw_offsets / sizeof pw_offsets[0];
    const size_t nl = sizeof pw_launch / sizeof pw_launch[0];
    unsigned k = 0;
    for (int op = 0; op < P_COUNT; ++op) {
        for (size_t s = 0; s < nsz; ++s, ++k) {
            size_t n = pw_sizes[s];
            if (quick && n > 70000)
                continue;
            const unsigned *lc = pw_launch[(k * 7 + (unsigned)op) % nl];
            unsigned grid = lc[0], block = lc[1];
            if (grid == 1 && n > (1u << 20))
                grid = 5; /* keep one-block runs short, still many tiles each */
            pw_case((pwop)op, t, vec, n, pw_offsets[k % noff], grid, block, 0);
        }
        /* In place (y == x) for the single-input ops. */
        if (op == P_COPY || op == P_SCALE || op == P_BIAS_GELU) {
            static const unsigned o[4] = {1, 0, 1, 2};
            pw_case((pwop)op, t, vec, quick ? 5001 : 300001, o, 0, 256, 1);
        }
    }
}

static void pointwise_f32_bulk(void **state) { (void)state; pw_all(F32, 0); }
static void pointwise_f32_vec(void **state) { (void)state; pw_all(F32, 1); }
static void pointwise_bf16_bulk(void **state) { (void)state; pw_all(BF16, 0); }
static void pointwise_bf16_vec(void **state) { (void)state; pw_all(BF16, 1); }

/* --- Rows -------------------------------------------------------------------- */

typedef enum { R_SUM, R_MAX, R_RMS, R_LN, R_SOFTMAX, R_FUSED, R_COUNT } rowop;
static const char *const row_names[R_COUNT] = {
    "rowsum", "rowmax", "rmsnorm", "layernorm", "softmax", "rmsnorm_bias_gelu_residual"};

static const int row_cols[] = {1, 2, 3, 5, 8, 31, 64, 100, 255, 1000, 1024, 4096, 4099,
                               8192, 11260, 11264, 12345, 16384, 22520, 32768, 65536};
static const unsigned row_launch[][2] = {
    /* grid (0: one block per row), block */
    {0, 256}, {7, 33}, {64, 1024}, {0, 128}, {3, 96}, {0, 1},
};

/* Offsets (elements) of x, y and the first weight: ox, oy, ow.  The second
 * weight sits at ow + wsep and the fused kernel's residual at oy + wsep, so
 * wsep 0 lines every weight up with the row (the kernels' 16-byte weight
 * path) and wsep 1 never does (their element-wise path). */
static void row_case(rowop op, dtype t, int vec, int rows, int cols, unsigned ox,
                     unsigned oy, unsigned ow, unsigned wsep, unsigned grid,
                     unsigned block, int inplace)
{
    char name[64], what[200];
    snprintf(name, sizeof name, "%s_%s%s", row_names[op], tname(t), vec ? "_vec" : "");
    snprintf(what, sizeof what, "%s rows=%d cols=%d off=%u,%u,%u+%u grid=%u block=%u%s",
             name, rows, cols, ox, oy, ow, wsep, grid, block, inplace ? " in-place" : "");
    const size_t n = (size_t)rows * (size_t)cols;
    const double lo = op == R_SOFTMAX ? -4.0 : -1.0;
    const int nw = op == R_RMS ? 1 : (op == R_LN || op == R_FUSED) ? 2 : 0;
    const int rowout = op == R_SUM || op == R_MAX;
    arr x, y, w[2], r;
    memset(w, 0, sizeof w);
    memset(&r, 0, sizeof r);
    /* LayerNorm gets an offset mean, which a naive E[x^2]-E[x]^2 would lose. */
    arr_make(&x, t, n, ox, op == R_LN ? 2.0 : lo, op == R_LN ? 4.0 : -lo);
    for (int k = 0; k < nw; ++k)
        arr_make(&w[k], t, (size_t)cols, (ow + (unsigned)k * wsep) % 4, -1.0, 1.0);
    if (op == R_FUSED)
        arr_make(&r, t, n, (oy + wsep) % 4, -1.0, 1.0);
    if (!inplace)
        arr_make(&y, t, rowout ? (size_t)rows : n, oy, 0, 0);
    arr *out = inplace ? &x : &y;
    double *xin = malloc((n ? n : 1) * sizeof *xin);
    assert_non_null(xin);
    memcpy(xin, x.h, n * sizeof *xin);

    CUdeviceptr px = at(&x), py = at(out), pw0 = nw ? at(&w[0]) : 0,
                pw1 = nw > 1 ? at(&w[1]) : 0, pr = op == R_FUSED ? at(&r) : 0;
    float eps = 1e-5f;
    void *args[8];
    switch (op) {
    case R_SUM:
    case R_MAX:
    case R_SOFTMAX:
        args[0] = &px, args[1] = &py, args[2] = &rows, args[3] = &cols;
        break;
    case R_RMS:
        args[0] = &px, args[1] = &pw0, args[2] = &py, args[3] = &rows, args[4] = &cols,
        args[5] = &eps;
        break;
    case R_LN:
        args[0] = &px, args[1] = &pw0, args[2] = &pw1, args[3] = &py, args[4] = &rows,
        args[5] = &cols, args[6] = &eps;
        break;
    default:
        args[0] = &px, args[1] = &pw0, args[2] = &pw1, args[3] = &pr, args[4] = &py,
        args[5] = &rows, args[6] = &cols, args[7] = &eps;
        break;
    }
    launch_sync(fn(name), grid ? grid : (unsigned)rows, block, args);
    arr_download(out);

    cmp c;
    cmp_init(&c, t, 1e-5, what);
    for (int i = 0; i < rows; ++i) {
        const double *xr = xin + (size_t)i * cols;
        double s = 0, sa = 0, ss = 0, mx = -INFINITY;
        for (int j = 0; j < cols; ++j) {
            s += xr[j], sa += fabs(xr[j]), ss += xr[j] * xr[j];
            mx = fmax(mx, xr[j]);
        }
        if (rowout) {
            double ref = op == R_SUM ? s : mx, mag = op == R_SUM ? sa : fabs(mx);
            cmp_one(&c, (size_t)i, get_elem(out, out->off + GUARD + (size_t)i), ref, mag);
            continue;
        }
        double mean = s / cols, var = 0, se = 0;
        for (int j = 0; j < cols; ++j) {
            var += (xr[j] - mean) * (xr[j] - mean);
            se += exp(xr[j] - mx);
        }
        var /= cols;
        double rs = 1.0 / sqrt(ss / cols + eps), rstd = 1.0 / sqrt(var + eps);
        for (int j = 0; j < cols; ++j) {
            double v = xr[j], ref, mag;
            size_t idx = (size_t)i * cols + j;
            if (op == R_RMS) {
                ref = v * rs * w[0].h[j], mag = fabs(ref);
            } else if (op == R_LN) {
                double nrm = (v - mean) * rstd * w[0].h[j];
                ref = nrm + w[1].h[j];
                mag = fabs(nrm) + fabs(w[1].h[j]) + fabs(mean) * rstd * fabs(w[0].h[j]);
            } else if (op == R_SOFTMAX) {
                ref = exp(v - mx) / se, mag = fabs(ref) * (1.0 + fabs(v - mx));
            } else {
                double nrm = v * rs * w[0].h[j], tt = nrm + w[1].h[j];
                ref = r.h[idx] + gelu_ref(tt);
                /* As for bias_gelu: t cancels when the normalised value and
                 * the bias nearly cancel, so its f32 error scales with the
                 * terms, not with t. */
                mag = fabs(r.h[idx]) + fabs(gelu_ref(tt)) +
                      0.5 * (fabs(nrm) + fabs(w[1].h[j]));
            }
            cmp_one(&c, idx, get_elem(out, out->off + GUARD + idx), ref, mag);
        }
    }
    int gok = guards_intact(out, what);
    free(xin);
    arr_free(&x);
    if (!inplace)
        arr_free(&y);
    for (int k = 0; k < nw; ++k)
        arr_free(&w[k]);
    if (op == R_FUSED)
        arr_free(&r);
    if (c.bad)
        print_error("%s: %zu wrong\n", what, c.bad);
    assert_int_equal(c.bad, 0);
    assert_true(gok);
}

static void rows_all(dtype t, int vec)
{
    const size_t nc = sizeof row_cols / sizeof row_cols[0];
    const size_t nl = sizeof row_launch / sizeof row_launch[0];
    unsigned k = 0;
    for (int op = 0; op < R_COUNT; ++op) {
        for (size_t s = 0; s < nc; ++s, ++k) {
            int cols = row_cols[s];
            if (quick && cols > 16384)
                continue;
            long budget = quick ? (1L << 14) : (1L << 21);
            int rows = (int)(budget / cols);
            rows = rows > 300 ? 300 : rows < 1 ? 1 : rows;
            if (s % 3 == 1)
                rows = rows > 5 ? rows - 2 : rows; /* odd counts too */
            const unsigned *lc = row_launch[(k * 5 + (unsigned)op) % nl];
            unsigned grid = lc[0], block = lc[1];
            /* One thread per block only where the row is short: a single
             * thread summing 65536 values is a test of f32, not the kernel. */
            if (block == 1 && cols > 300)
                block = 64;
            if (block == 33 && cols > 8192)
                block = 256;
            row_case((rowop)op, t, vec, rows, cols, k % 4, (k / 4) % 4, (k / 2) % 4,
                     (k / 8) % 2, grid, block, 0);
        }
        if (op >= R_RMS) {
            /* Every pointer congruent with the row: the 16-byte weight
             * path, with and without a head, in place and not. */
            row_case((rowop)op, t, vec, 9, 4096, 0, 0, 0, 0, 0, 256, 1);
            row_case((rowop)op, t, vec, 3, quick ? 12345 : 40000, 1, 1, 1, 0, 2, 256, 1);
            row_case((rowop)op, t, vec, 33, 1000, 3, 3, 3, 0, 5, 128, 0);
            row_case((rowop)op, t, vec, 7, 4099, 2, 2, 2, 0, 0, 256, 0);
        }
    }
}

static void rows_f32_bulk(void **state) { (void)state; rows_all(F32, 0); }
static void rows_f32_vec(void **state) { (void)state; rows_all(F32, 1); }
static void rows_bf16_bulk(void **state) { (void)state; rows_all(BF16, 0); }
static void rows_bf16_vec(void **state) { (void)state; rows_all(BF16, 1); }

/* --- A PDL chain --------------------------------------------------------------
 * Eight kernels launched with programmatic stream serialization, every
 * intermediate poisoned first: a kernel that read its input before
 * griddepcontrol.wait would see NaN (or the previous round's data).  Ten
 * rounds, each with fresh inputs. */
static void pdl_chain_matches_reference(void **state)
{
    (void)state;
    const int rows = 64, cols = 4096, n = rows * cols;
    for (int round = 0; round < 10; ++round) {
        arr x, g, bi, a1, a2, a3, a4, a5, a6, a7;
        arr_make(&x, F32, (size_t)n, 0, -1, 1);
        arr_make(&g, F32, (size_t)cols, 0, -1, 1);
        arr_make(&bi, F32, (size_t)cols, 0, -1, 1);
        arr *outs[] = {&a1, &a2, &a3, &a4, &a5, &a6};
        for (int k = 0; k < 6; ++k)
            arr_make(outs[k], F32, (size_t)n, 0, 0, 0);
        arr_make(&a7, F32, (size_t)rows, 0, 0, 0);
        CUdeviceptr px = at(&x), pg = at(&g), pb = at(&bi), p1 = at(&a1), p2 = at(&a2),
                    p3 = at(&a3), p4 = at(&a4), p5 = at(&a5), p6 = at(&a6), p7 = at(&a7);
        long long nn = n;
        float two = 2.0f, eps = 1e-5f;
        int R = rows, C = cols;
        unsigned gp = (unsigned)((n + 2047) / 2048);
        void *s1[] = {&px, &p1, &two, &nn};          /* a1 = 2x */
        void *s2[] = {&p1, &px, &p2, &nn};           /* a2 = a1 + x */
        void *s3[] = {&p2, &pg, &p3, &R, &C, &eps};  /* a3 = rmsnorm(a2) */
        void *s4[] = {&p3, &pb, &p4, &nn, &C};       /* a4 = gelu(a3 + b) */
        void *s5[] = {&p4, &p2, &p5, &nn};           /* a5 = a4 + a2 */
        void *s6[] = {&p5, &pg, &pb, &p2, &p6, &R, &C, &eps}; /* fused */
        void *s7[] = {&p6, &p7, &R, &C};             /* a7 = rowmax(a6) */
        CK(kh_launch(&K, fn("scale_f32"), gp, 256, 1, s1));
        CK(kh_launch(&K, fn("add_f32"), gp, 256, 1, s2));
        CK(kh_launch(&K, fn("rmsnorm_f32"), (unsigned)rows, 256, 1, s3));
        CK(kh_launch(&K, fn("bias_gelu_f32"), gp, 256, 1, s4));
        CK(kh_launch(&K, fn("residual_add_f32_vec"), gp, 256, 1, s5));
        CK(kh_launch(&K, fn("rmsnorm_bias_gelu_residual_f32"), (unsigned)rows, 256, 1, s6));
        CK(kh_launch(&K, fn("rowmax_f32"), (unsigned)rows, 256, 1, s7));
        CK(K.api.cuStreamSynchronize(K.stream));
        for (int k = 0; k < 6; ++k)
            arr_download(outs[k]);
        arr_download(&a7);

        /* The reference chain, in double. */
        double *v1 = malloc(sizeof(double) * (size_t)n * 6);
        assert_non_null(v1);
        double *v2 = v1 + n, *v3 = v2 + n, *v4 = v3 + n, *v5 = v4 + n, *v6 = v5 + n;
        for (int i = 0; i < n; ++i)
            v1[i] = 2.0 * x.h[i], v2[i] = v1[i] + x.h[i];
        for (int i = 0; i < rows; ++i) {
            double ss = 0;
            for (int j = 0; j < cols; ++j)
                ss += v2[i * cols + j] * v2[i * cols + j];
            double rs = 1.0 / sqrt(ss / cols + 1e-5);
            for (int j = 0; j < cols; ++j) {
                int q = i * cols + j;
                v3[q] = v2[q] * rs * g.h[j];
                v4[q] = gelu_ref(v3[q] + bi.h[j]);
                v5[q] = v4[q] + v2[q];
            }
        }
        for (int i = 0; i < rows; ++i) {
            double ss = 0;
            for (int j = 0; j < cols; ++j)
                ss += v5[i * cols + j] * v5[i * cols + j];
            double rs = 1.0 / sqrt(ss / cols + 1e-5);
            for (int j = 0; j < cols; ++j) {
                int q = i * cols + j;
                v6[q] = v2[q] + gelu_ref(v5[q] * rs * g.h[j] + bi.h[j]);
            }
        }
        const double *refs[] = {v1, v2, v3, v4, v5, v6};
        size_t bad = 0;
        for (int k = 0; k < 6; ++k) {
            char what[64];
            snprintf(what, sizeof what, "pdl chain round %d, stage %d", round, k + 1);
            cmp c;
            /* Errors compound along the chain: 1e-4 relative, still far below
             * what reading stale or poisoned data gives. */
            cmp_init(&c, F32, 1e-4, what);
            for (int i = 0; i < n; ++i)
                cmp_one(&c, (size_t)i, get_elem(outs[k], GUARD + (size_t)i), refs[k][i],
                        fabs(refs[k][i]) + 1e-2);
            bad += c.bad;
        }
        for (int i = 0; i < rows; ++i) {
            double mx = -INFINITY;
            for (int j = 0; j < cols; ++j)
                mx = fmax(mx, v6[i * cols + j]);
            double got = get_elem(&a7, GUARD + (size_t)i);
            if (!(fabs(got - mx) <= 1e-4 * (fabs(mx) + 1e-2))) {
                print_error("pdl chain rowmax[%d]: got %g want %g\n", i, got, mx);
                bad++;
            }
        }
        free(v1);
        arr_free(&x);
        arr_free(&g);
        arr_free(&bi);
        for (int k = 0; k < 6; ++k)
            arr_free(outs[k]);
        arr_free(&a7);
        assert_int_equal(bad, 0);
    }
}

/* --- Utilities ---------------------------------------------------------------- */

/* util_stamp A (long body) then B with programmatic serialization: B's
 * after-wait stamp must not precede A's end.  Whether B started before A
 * ended (the overlap PDL buys) is printed, not asserted: that is a property
 * of the scheduler, which tests/test_gpu_concurrency covers through graphs. */
static void util_stamp_orders_pdl_launches(void **state)
{
    (void)state;
    CUdeviceptr buf;
    CK(K.api.cuMemAlloc(&buf, 8 * sizeof(unsigned long long)));
    CK(K.api.cuMemsetD8(buf, 0, 8 * sizeof(unsigned long long)));
    int s0 = 0, s1 = 1;
    long long body = 200000, none = 0, pro = 20000;
    void *a[] = {&buf, &s0, &body};
    void *b[] = {&buf, &s1, &none};
    void *sp[] = {&pro, &pro};
    void *nop[] = {NULL};
    CUfunction stamp = fn("util_stamp");
    CK(kh_launch(&K, fn("util_noop"), 1, 32, 0, nop));
    CK(kh_launch(&K, stamp, (unsigned)K.sms, 128, 0, a));
    CK(kh_launch(&K, stamp, (unsigned)K.sms, 128, 1, b));
    CK(kh_launch(&K, fn("util_spin"), 4, 64, 1, sp));
    CK(kh_launch(&K, fn("util_noop"), 1, 1024, 1, nop));
    CK(K.api.cuStreamSynchronize(K.stream));
    unsigned long long t[8];
    CK(K.api.cuMemcpyDtoH(t, buf, sizeof t));
    print_message("# util_stamp A: start %llu wait +%llu trigger +%llu end +%llu\n", t[0],
                  t[1] - t[0], t[3] - t[0], t[2] - t[0]);
    print_message("# util_stamp B: start %+lld wait %+lld end %+lld (relative to A's end);"
                  " %s\n",
                  (long long)(t[4] - t[2]), (long long)(t[5] - t[2]),
                  (long long)(t[6] - t[2]),
                  t[4] < t[2] ? "B started before A ended: PDL overlap"
                              : "no overlap observed");
    assert_true(t[0] <= t[1] && t[1] <= t[3] && t[3] <= t[2]);
    assert_true(t[2] - t[1] >= (unsigned long long)body);
    assert_true(t[4] <= t[5] && t[5] <= t[7] && t[7] <= t[6]);
    assert_true(t[5] >= t[2]);
    CK(K.api.cuMemFree(buf));
}

static void util_nowait_copy_copies(void **state)
{
    (void)state;
    const size_t n = 1000003;
    arr x, y;
    arr_make(&x, F32, n, 1, -1, 1);
    arr_make(&y, F32, n, 2, 0, 0);
    CUdeviceptr px = at(&x), py = at(&y);
    long long nn = (long long)n;
    void *args[] = {&px, &py, &nn};
    launch_sync(fn("util_nowait_copy_f32"), 300, 256, args);
    arr_download(&y);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += get_elem(&y, y.off + GUARD + i) != x.h[i];
    assert_int_equal(bad, 0);
    assert_true(guards_intact(&y, "util_nowait_copy_f32"));
    arr_free(&x);
    arr_free(&y);
}

/* The compute_80 module: what the driver reports for it is what the library
 * uses to refuse a programmatic edge into it. */
static void legacy_module_reports_ptx_80(void **state)
{
    (void)state;
    char why[1024];
    CUmodule m = NULL;
    if (kh_load(&K, &m, getenv("CUDAG_KERNELS_DIR"), "legacy_sm80.ptx", why, sizeof why)) {
        print_error("%s\n", why);
        fail();
    }
    CUfunction f;
    CK(K.api.cuModuleGetFunction(&f, m, "legacy_copy_f32"));
    int ptx = 0, bin = 0;
    CK(K.api.cuFuncGetAttribute(&ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, f));
    CK(K.api.cuFuncGetAttribute(&bin, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f));
    print_message("# legacy_copy_f32: PTX_VERSION %d, BINARY_VERSION %d\n", ptx, bin);
    assert_true(ptx > 0 && ptx < 90);
    CUfunction g = fn("copy_f32");
    CK(K.api.cuFuncGetAttribute(&ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, g));
    CK(K.api.cuFuncGetAttribute(&bin, CU_FUNC_ATTRIBUTE_BINARY_VERSION, g));
    print_message("# copy_f32 (fatbin): PTX_VERSION %d, BINARY_VERSION %d\n", ptx, bin);
    if (K.cc_major == 9)
        assert_true(bin == 90);
    arr x, y;
    arr_make(&x, F32, 4099, 0, -1, 1);
    arr_make(&y, F32, 4099, 0, 0, 0);
    CUdeviceptr px = at(&x), py = at(&y);
    long long nn = 4099;
    void *args[] = {&px, &py, &nn};
    launch_sync(f, 5, 128, args);
    arr_download(&y);
    size_t bad = 0;
    for (size_t i = 0; i < 4099; ++i)
        bad += get_elem(&y, GUARD + i) != x.h[i];
    assert_int_equal(bad, 0);
    arr_free(&x);
    arr_free(&y);
    CK(K.api.cuModuleUnload(m));
}

/* Every kernel the manifest declares loads from the fatbin, takes 1024
 * threads, and fits its shared memory statically (the graph gives smem: 0).
 * Prints the resource table. */
static void manifest_kernels_load_and_fit(void **state)
{
    (void)state;
    char path[4096];
    const char *dir = getenv("CUDAG_KERNELS_DIR");
    snprintf(path, sizeof path, "%s/cudag_kernels.yaml", dir ? dir : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int in_kernels = 0, count = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != ' ' && line[0] != '#' && line[0] != '\n')
            in_kernels = strncmp(line, "kernels:", 8) == 0;
        char name[128];
        int end = 0;
        if (!in_kernels || line[0] != ' ' || line[1] != ' ' ||
            sscanf(line, " %127[A-Za-z0-9_]: {%n", name, &end) != 1 || end == 0)
            continue;
        CUfunction k = fn(name);
        int maxt = 0, smem = 0, regs = 0, lsz = 0;
        CK(K.api.cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k));
        CK(K.api.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k));
        CK(K.api.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k));
        CK(K.api.cuFuncGetAttribute(&lsz, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k));
        int occ = 0;
        CK(K.api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, 256, 0));
        print_message("# %-40s regs %3d smem %6d local %3d blocks/SM@256 %d\n", name, regs,
                      smem, lsz, occ);
        /* The manifest's convention is any block of 1..1024 threads; the
         * Llama kernels say in their section that they take at most 256
         * (__launch_bounds__(256, 2) buys them 128 registers). */
        int want = strncmp(name, "llama_", 6) == 0 ? 256 : 1024;
        if (maxt < want)
            print_error("%s: at most %d threads per block\n", name, maxt);
        assert_true(maxt >= want);
        assert_true(smem <= 48 * 1024);
        count++;
    }
    fclose(f);
    assert_true(count > 50);
}

static int setup(void **state)
{
    (void)state;
    rng = tseed();
    quick = getenv("CUDAG_KERNELS_QUICK") != NULL;
    return 0;
}

int main(void)
{
    char why[1024];
    if (kh_open(&K, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    if (kh_load(&K, &K.mod, getenv("CUDAG_KERNELS_DIR"), "cudag_kernels.fatbin", why,
                sizeof why)) {
        printf("SKIP: %s\n", why);
        kh_close(&K);
        return 77;
    }
    printf("# device: %s (sm_%d%d, %d SMs, L2 %d MiB), driver %d\n", K.name, K.cc_major,
           K.cc_minor, K.sms, K.l2_bytes >> 20, K.driver_version);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(manifest_kernels_load_and_fit),
        cmocka_unit_test(pointwise_f32_bulk),
        cmocka_unit_test(pointwise_f32_vec),
        cmocka_unit_test(pointwise_bf16_bulk),
        cmocka_unit_test(pointwise_bf16_vec),
        cmocka_unit_test(rows_f32_bulk),
        cmocka_unit_test(rows_f32_vec),
        cmocka_unit_test(rows_bf16_bulk),
        cmocka_unit_test(rows_bf16_vec),
        cmocka_unit_test(pdl_chain_matches_reference),
        cmocka_unit_test(util_stamp_orders_pdl_launches),
        cmocka_unit_test(util_nowait_copy_copies),
        cmocka_unit_test(legacy_module_reports_ptx_80),
    };
    const char *filter = getenv("CUDAG_TEST_FILTER");
    if (filter)
        cmocka_set_test_filter(filter); /* e.g. "rows_*" */
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    kh_close(&K);
    return rc;
}
