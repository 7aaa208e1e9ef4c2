/* bench_kernels.c — achieved bandwidth of every kernel in cudag_kernels.fatbin
 * (bulk and _vec variants, f32 and bf16) for inputs of 1 MiB … 1 GiB, next to
 * the device-to-device copy bandwidth measured in the same run, plus the PDL
 * decode chain (8 x (RMSNorm -> bias+GELU -> residual add), 64 x 4096 bf16)
 * captured into CUDA graphs with and without programmatic edges, and the
 * fused variant.  A program, not a test: it prints a table and writes JSON.
 *
 * Method: bytes = what the kernel must read and write once (weights
 * included); CUDA events around batches of launches; warm-up first; median
 * over batches; buffers rotated so that one launch's data is never in L2
 * from the previous one (the rotation spans >= 4x the L2 size).  Copy
 * bandwidth counts bytes read plus bytes written, like the kernels.
 *
 * usage: bench_kernels [--out FILE.json] [--max-mib N] [--quick]
 *                      [--kernels DIR] [--grid all|default] [--chain-only]
 *                      [--only REGEX] [--sizes MIB,...] [--profile N]
 * DIR defaults to $CUDAG_KERNELS_DIR, then build/kernels.  Grids: pointwise
 * kernels get one tile per block (bulk: 8 KiB per input; _vec: two 16-byte
 * chunks per thread), row kernels one block per row, 256 threads; `all` adds
 * a persistent grid (blocks/SM x SMs) at 256 MiB.  --chain-only runs just the
 * decode chain (for profiling it).  --only keeps the kernels whose names match
 * the POSIX extended REGEX and skips the decode chain; --sizes replaces the
 * input sizes (1,4,16,64,256,1024); long rows run when 256 is among them.
 * --profile N launches each selected kernel N times per size and times
 * nothing (no copy, chain or JSON): for `ncu -k regex:...`, which then sees
 * exactly N launches of each, one input set, every launch the same. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../tests/kharness.h"

static kh K;
static int quick;

static void die(const char *what, CUresult r)
{
    fprintf(stderr, "bench_kernels: %s: %s\n", what, kh_errname(&K, r));
    exit(1);
}
#define CK(call)                                                               \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS)                                                \
            die(#call, r_);                                                    \
    } while (0)

/* Parameter layouts of the kernels. */
typedef enum {
    L_XY_N,      /* x, y, n */
    L_XYA_N,     /* x, y, a, n */
    L_ABY_N,     /* a, b, y, n */
    L_AXPY,      /* x, y, a, n (y read and written) */
    L_XBYNC,     /* x, bias, y, n, cols */
    L_XY_RC,     /* x, y, rows, cols */
    L_XGY_RCE,   /* x, gamma, y, rows, cols, eps */
    L_XGBY_RCE,  /* x, gamma, beta, y, rows, cols, eps */
    L_XGBRY_RCE, /* x, gamma, bias, r, y, rows, cols, eps */
} layout;

typedef struct op {
    const char *name;
    layout lay;
    int rows;  /* a row kernel */
    int nread; /* big inputs read (x, and b / y / r) */
    int rowout; /* writes one element per row */
} op;

static const op OPS[] = {
    {"copy", L_XY_N, 0, 1, 0},
    {"scale", L_XYA_N, 0, 1, 0},
    {"add", L_ABY_N, 0, 2, 0},
    {"mul", L_ABY_N, 0, 2, 0},
    {"axpy", L_AXPY, 0, 2, 0},
    {"bias_gelu", L_XBYNC, 0, 1, 0},
    {"swiglu", L_ABY_N, 0, 2, 0},
    {"residual_add", L_ABY_N, 0, 2, 0},
    {"rowsum", L_XY_RC, 1, 1, 1},
    {"rowmax", L_XY_RC, 1, 1, 1},
    {"rmsnorm", L_XGY_RCE, 1, 1, 0},
    {"layernorm", L_XGBY_RCE, 1, 1, 0},
    {"softmax", L_XY_RC, 1, 1, 0},
    {"rmsnorm_bias_gelu_residual", L_XGBRY_RCE, 1, 2, 0},
};
#define NOPS (sizeof OPS / sizeof OPS[0])

/* One measured configuration: base pointers, and the distance between the
 * rotating sets. */
typedef struct job {
    CUfunction f;
    layout lay;
    CUdeviceptr x, z, y, g, b; /* z: second input or r; g, b: weights */
    size_t stride;             /* bytes between sets, for x, z, y */
    size_t ystride;
    int nsets;
    long long n;
    int rows, cols;
    float a, eps;
    unsigned grid, block;
    int pdl;
} job;

static CUresult job_launch(job *j, int set)
{
    CUdeviceptr x = j->x + (size_t)set * j->stride, z = j->z + (size_t)set * j->stride;
    CUdeviceptr y = j->y + (size_t)set * j->ystride;
    void *args[8];
    switch (j->lay) {
    case L_XY_N: args[0] = &x, args[1] = &y, args[2] = &j->n; break;
    case L_XYA_N: args[0] = &x, args[1] = &y, args[2] = &j->a, args[3] = &j->n; break;
    case L_ABY_N: args[0] = &x, args[1] = &z, args[2] = &y, args[3] = &j->n; break;
    case L_AXPY: args[0] = &x, args[1] = &z, args[2] = &j->a, args[3] = &j->n; break;
    case L_XBYNC:
        args[0] = &x, args[1] = &j->b, args[2] = &y, args[3] = &j->n, args[4] = &j->cols;
        break;
    case L_XY_RC: args[0] = &x, args[1] = &y, args[2] = &j->rows, args[3] = &j->cols; break;
    case L_XGY_RCE:
        args[0] = &x, args[1] = &j->g, args[2] = &y, args[3] = &j->rows,
        args[4] = &j->cols, args[5] = &j->eps;
        break;
    case L_XGBY_RCE:
        args[0] = &x, args[1] = &j->g, args[2] = &j->b, args[3] = &y, args[4] = &j->rows,
        args[5] = &j->cols, args[6] = &j->eps;
        break;
    default:
        args[0] = &x, args[1] = &j->g, args[2] = &j->b, args[3] = &z, args[4] = &y,
        args[5] = &j->rows, args[6] = &j->cols, args[7] = &j->eps;
        break;
    }
    return kh_launch(&K, j->f, j->grid, j->block, j->pdl, args);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Issues one launch (or copy) of set `set`. */
static void job_issue(job *j, size_t copy_bytes, int set)
{
    if (copy_bytes)
        CK(K.api.cuMemcpyDtoDAsync(j->y + (size_t)set * j->ystride,
                                   j->x + (size_t)set * j->stride, copy_bytes, K.stream));
    else
        CK(job_launch(j, set));
}

/* Median microseconds per launch.  `copy_bytes` > 0 times a device-to-device
 * copy of that many bytes instead of a kernel.  A batch of launches is
 * captured into a CUDA graph and the graph replayed between two events, so
 * that short kernels are not measured at the stream's launch rate (about
 * 4 us per launch here); a graph node still costs about a microsecond, which
 * is part of the figure for the smallest sizes. */
static double time_job(job *j, size_t copy_bytes)
{
    CUevent e0, e1;
    CK(K.api.cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CK(K.api.cuEventCreate(&e1, CU_EVENT_DEFAULT));
    /* Warm-up: every set once (module load, first touch, clocks up), and an
     * estimate of the time per launch. */
    for (int i = 0; i < j->nsets || i < 3; ++i)
        job_issue(j, copy_bytes, i % j->nsets);
    CK(K.api.cuEventRecord(e0, K.stream));
    for (int i = 0; i < 3; ++i)
        job_issue(j, copy_bytes, i % j->nsets);
    CK(K.api.cuEventRecord(e1, K.stream));
    CK(K.api.cuEventSynchronize(e1));
    float ms = 0;
    CK(K.api.cuEventElapsedTime(&ms, e0, e1));
    double est = ms * 1000.0 / 3;
    int reps = (int)(2000.0 / (est > 1.0 ? est : 1.0)); /* ~2 ms per batch */
    reps = reps < 1 ? 1 : reps > 200 ? 200 : reps;
    CUgraph g;
    CUgraphExec ge;
    CK(K.api.cuStreamBeginCapture(K.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < reps; ++i)
        job_issue(j, copy_bytes, i % j->nsets);
    CK(K.api.cuStreamEndCapture(K.stream, &g));
    CK(K.api.cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(K.api.cuGraphLaunch(ge, K.stream));
    int nb = quick ? 5 : 15;
    double t[64];
    for (int b = 0; b < nb; ++b) {
        CK(K.api.cuEventRecord(e0, K.stream));
        CK(K.api.cuGraphLaunch(ge, K.stream));
        CK(K.api.cuEventRecord(e1, K.stream));
        CK(K.api.cuEventSynchronize(e1));
        CK(K.api.cuEventElapsedTime(&ms, e0, e1));
        t[b] = ms * 1000.0 / reps;
    }
    CK(K.api.cuGraphExecDestroy(ge));
    CK(K.api.cuGraphDestroy(g));
    CK(K.api.cuEventDestroy(e0));
    CK(K.api.cuEventDestroy(e1));
    qsort(t, (size_t)nb, sizeof t[0], cmp_double);
    return t[nb / 2];
}

/* Fills `bytes` at d with uniform random values in [-1, 1) of type bf16 or
 * f32, through a host staging buffer reused for every piece. */
static void fill_random(CUdeviceptr d, size_t bytes, int bf16, uint64_t seed)
{
    const size_t chunk = 64u << 20;
    unsigned char *h = malloc(chunk);
    if (!h) {
        fprintf(stderr, "bench_kernels: out of host memory\n");
        exit(1);
    }
    uint64_t s = seed | 1;
    for (size_t i = 0; i < chunk / 4; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        float f = (float)((double)(s >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
        if (bf16) {
            uint16_t lo = kh_f_to_bf16(f), hi = kh_f_to_bf16(-0.5f * f);
            memcpy(h + 4 * i, &lo, 2);
            memcpy(h + 4 * i + 2, &hi, 2);
        } else {
            memcpy(h + 4 * i, &f, 4);
        }
    }
    for (size_t off = 0; off < bytes; off += chunk)
        CK(K.api.cuMemcpyHtoD(d + off, h, bytes - off < chunk ? bytes - off : chunk));
    free(h);
}

typedef struct result {
    char kernel[64];
    const char *op, *type, *variant, *grid_policy;
    double mib, bytes, us, gbps, copy_gbps;
    int rows, cols;
    unsigned grid, block;
} result;

static result *results;
static size_t nresults, capresults;

static void add_result(const result *r)
{
    if (nresults == capresults) {
        capresults = capresults ? 2 * capresults : 256;
        results = realloc(results, capresults * sizeof *results);
        if (!results) {
            fprintf(stderr, "bench_kernels: out of host memory\n");
            exit(1);
        }
    }
    results[nresults++] = *r;
}

/* --- The decode chain ---------------------------------------------------------
 * Captured from the stream: launches with the programmatic-serialization
 * attribute become programmatic edges in the graph. */
/* us[fused][vec][pdl] */
typedef struct chain_result {
    double us[2][2][2];
} chain_result;

static double time_graph(CUgraphExec ge)
{
    CUevent e0, e1;
    CK(K.api.cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CK(K.api.cuEventCreate(&e1, CU_EVENT_DEFAULT));
    for (int i = 0; i < 20; ++i)
        CK(K.api.cuGraphLaunch(ge, K.stream));
    const int reps = 50, nb = quick ? 5 : 21;
    double t[64];
    for (int b = 0; b < nb; ++b) {
        CK(K.api.cuEventRecord(e0, K.stream));
        for (int i = 0; i < reps; ++i)
            CK(K.api.cuGraphLaunch(ge, K.stream));
        CK(K.api.cuEventRecord(e1, K.stream));
        CK(K.api.cuEventSynchronize(e1));
        float ms;
        CK(K.api.cuEventElapsedTime(&ms, e0, e1));
        t[b] = ms * 1000.0 / reps;
    }
    CK(K.api.cuEventDestroy(e0));
    CK(K.api.cuEventDestroy(e1));
    qsort(t, (size_t)nb, sizeof t[0], cmp_double);
    return t[nb / 2];
}

static double chain(CUmodule mod, int fused, int pdl, int vec, int layers, int T, int H)
{
    long long n = (long long)T * H;
    CUdeviceptr xs[2], h1, h2, w;
    CK(K.api.cuMemAlloc(&xs[0], (size_t)n * 2));
    CK(K.api.cuMemAlloc(&xs[1], (size_t)n * 2));
    CK(K.api.cuMemAlloc(&h1, (size_t)n * 2));
    CK(K.api.cuMemAlloc(&h2, (size_t)n * 2));
    CK(K.api.cuMemAlloc(&w, (size_t)layers * 2 * H * 2));
    fill_random(xs[0], (size_t)n * 2, 1, 11);
    fill_random(w, (size_t)layers * 2 * H * 2, 1, 12);
    CUfunction fnorm, fgelu, fadd, ffused;
    const char *sfx = vec ? "_vec" : "";
    char nm[4][64];
    snprintf(nm[0], sizeof nm[0], "rmsnorm_bf16%s", sfx);
    snprintf(nm[1], sizeof nm[1], "bias_gelu_bf16%s", sfx);
    snprintf(nm[2], sizeof nm[2], "residual_add_bf16%s", sfx);
    snprintf(nm[3], sizeof nm[3], "rmsnorm_bias_gelu_residual_bf16%s", sfx);
    CK(K.api.cuModuleGetFunction(&fnorm, mod, nm[0]));
    CK(K.api.cuModuleGetFunction(&fgelu, mod, nm[1]));
    CK(K.api.cuModuleGetFunction(&fadd, mod, nm[2]));
    CK(K.api.cuModuleGetFunction(&ffused, mod, nm[3]));
    float eps = 1e-6f;
    unsigned gp = (unsigned)((n + 2047) / 2048);
    CK(K.api.cuStreamSynchronize(K.stream));
    CK(K.api.cuStreamBeginCapture(K.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < layers; ++i) {
        CUdeviceptr g = w + (size_t)(2 * i) * H * 2, b = w + (size_t)(2 * i + 1) * H * 2;
        CUdeviceptr x = xs[i & 1], xn = xs[(i + 1) & 1];
        /* The first node has no kernel upstream in the graph. */
        int p = pdl && i > 0;
        if (fused) {
            void *a[] = {&x, &g, &b, &x, &xn, &T, &H, &eps};
            CK(kh_launch(&K, ffused, (unsigned)T, 256, p, a));
        } else {
            void *a1[] = {&x, &g, &h1, &T, &H, &eps};
            void *a2[] = {&h1, &b, &h2, &n, &H};
            void *a3[] = {&h2, &x, &xn, &n};
            CK(kh_launch(&K, fnorm, (unsigned)T, 256, p, a1));
            CK(kh_launch(&K, fgelu, gp, 256, pdl, a2));
            CK(kh_launch(&K, fadd, gp, 256, pdl, a3));
        }
    }
    CUgraph g;
    CK(K.api.cuStreamEndCapture(K.stream, &g));
    CUgraphExec ge;
    CK(K.api.cuGraphInstantiateWithFlags(&ge, g, 0));
    double us = time_graph(ge);
    CK(K.api.cuStreamSynchronize(K.stream));
    CK(K.api.cuGraphExecDestroy(ge));
    CK(K.api.cuGraphDestroy(g));
    CK(K.api.cuMemFree(xs[0]));
    CK(K.api.cuMemFree(xs[1]));
    CK(K.api.cuMemFree(h1));
    CK(K.api.cuMemFree(h2));
    CK(K.api.cuMemFree(w));
    return us;
}

/* Device-to-device copy bandwidth (bytes read + written) at each size. */
static void measure_copy(CUdeviceptr X, CUdeviceptr Y, size_t maxb, const double *mibs,
                         size_t nm, double max_mib, double *gbps)
{
    const size_t l2 = (size_t)K.l2_bytes;
    for (size_t m = 0; m < nm && mibs[m] <= max_mib; ++m) {
        size_t S = (size_t)(mibs[m] * 1048576.0);
        job j;
        memset(&j, 0, sizeof j);
        j.x = X, j.y = Y, j.stride = j.ystride = S;
        j.nsets = (int)((4 * l2 + S - 1) / S);
        if ((size_t)j.nsets * S > maxb)
            j.nsets = (int)(maxb / S);
        double us = time_job(&j, S);
        gbps[m] = 2.0 * S / us / 1e3;
        printf("# copy %6.0f MiB: %8.1f us %7.1f GB/s\n", mibs[m], us, gbps[m]);
    }
}

/* --- The run, phase by phase ---------------------------------------------- */

/* What the command line asks for. */
typedef struct opts {
    const char *out, *dir, *gridpol, *only;
    int chain_only, profile, have_sizes;
    double max_mib;
    double mibs[8];
    size_t nm;
    regex_t only_re;
} opts;

/* The device buffers every kernel reads and writes: X, Z, Y of maxb bytes
 * each, W (4 MiB) for weights. */
typedef struct bufs {
    CUdeviceptr X, Z, Y, W;
    size_t maxb;
} bufs;

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--out FILE.json] [--max-mib N] [--quick] "
                    "[--kernels DIR] [--grid all|default] [--chain-only] "
                    "[--only REGEX] [--sizes MIB,...] [--profile N]\n", argv0);
    return 2;
}

/* Parses a comma-separated list of sizes in MiB into o->mibs; --max-mib
 * becomes the largest of them.  Returns 0, or 2 after printing why. */
static int parse_sizes(opts *o, const char *sizes)
{
    o->nm = 0;
    for (const char *c = sizes; *c;) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || v <= 0 || o->nm == sizeof o->mibs / sizeof o->mibs[0] ||
            (*end && *end != ',')) {
            fprintf(stderr, "bench_kernels: bad --sizes: %s (at most 8 sizes)\n", sizes);
            return 2;
        }
        o->mibs[o->nm++] = v;
        c = *end ? end + 1 : end;
    }
    o->max_mib = 0;
    for (size_t m = 0; m < o->nm; ++m)
        o->max_mib = o->mibs[m] > o->max_mib ? o->mibs[m] : o->max_mib;
    o->have_sizes = 1;
    return 0;
}

/* Fills *o from the command line.  Returns 0, or 2 (the exit status) after
 * printing what is wrong. */
static int parse_args(int argc, char **argv, opts *o)
{
    const char *sizes = NULL;
    memset(o, 0, sizeof *o);
    o->out = "bench_kernels.json";
    o->dir = getenv("CUDAG_KERNELS_DIR");
    o->gridpol = "all";
    o->max_mib = 1024;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            o->out = argv[++i];
        else if (!strcmp(argv[i], "--max-mib") && i + 1 < argc)
            o->max_mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            o->dir = argv[++i];
        else if (!strcmp(argv[i], "--grid") && i + 1 < argc)
            o->gridpol = argv[++i];
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--chain-only"))
            o->chain_only = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            o->only = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
            o->profile = atoi(argv[++i]);
        else
            return usage(argv[0]);
    }
    if (o->only && regcomp(&o->only_re, o->only, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "bench_kernels: bad --only regex: %s\n", o->only);
        return 2;
    }
    static const double defaults[] = {1, 4, 16, 64, 256, 1024};
    memcpy(o->mibs, defaults, sizeof defaults);
    o->nm = sizeof defaults / sizeof defaults[0];
    if (sizes && parse_sizes(o, sizes) != 0)
        return 2;
    if (o->chain_only)
        o->max_mib = 0;
    return 0;
}

/* Opens the driver and the kernels, and prints the device line.  Returns 0,
 * or 1 after printing why. */
static int open_device(const opts *o, char *date, size_t ndate)
{
    char why[1024];
    if (kh_open(&K, why, sizeof why)) {
        fprintf(stderr, "bench_kernels: %s\n", why);
        return 1;
    }
    if (kh_load(&K, &K.mod, o->dir ? o->dir : "build/kernels", "cudag_kernels.fatbin", why,
                sizeof why)) {
        fprintf(stderr, "bench_kernels: %s\n", why);
        return 1;
    }
    time_t now = time(NULL);
    strftime(date, ndate, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("# %s, sm_%d%d, %d SMs, L2 %d MiB, driver %d, %s\n", K.name, K.cc_major,
           K.cc_minor, K.sms, K.l2_bytes >> 20, K.driver_version, date);
    return 0;
}

/* Allocates the buffers (none for --chain-only).  Each holds the largest
 * size, and every size's rotation of ceil(4 x L2 / size) sets where that
 * fits within --max-mib (--sizes: always; one set when profiling, since ncu
 * flushes the caches itself). */
static void alloc_bufs(const opts *o, bufs *b)
{
    const size_t l2 = (size_t)K.l2_bytes;
    memset(b, 0, sizeof *b);
    b->maxb = (size_t)(o->max_mib * 1048576.0);
    if (o->have_sizes) {
        for (size_t m = 0; m < o->nm; ++m) {
            const size_t S = (size_t)(o->mibs[m] * 1048576.0);
            const size_t need = o->profile ? S : S * ((4 * l2 + S - 1) / S);
            b->maxb = need > b->maxb ? need : b->maxb;
        }
    }
    if (o->chain_only)
        return;
    CK(K.api.cuMemAlloc(&b->X, b->maxb));
    CK(K.api.cuMemAlloc(&b->Z, b->maxb));
    CK(K.api.cuMemAlloc(&b->Y, b->maxb));
    CK(K.api.cuMemAlloc(&b->W, 4u << 20));
}

static void free_bufs(const opts *o, const bufs *b)
{
    if (o->chain_only)
        return;
    CK(K.api.cuMemFree(b->X));
    CK(K.api.cuMemFree(b->Z));
    CK(K.api.cuMemFree(b->Y));
    CK(K.api.cuMemFree(b->W));
}

/* One kernel of one type and variant, as benchmarked. */
typedef struct kern {
    const op *p;
    CUfunction f;
    char name[64];
    int bf, var;
    size_t es;      /* element size */
} kern;

/* A job for kernel k over the buffers, with what every grid shares. */
static job kernel_job(const kern *k, const bufs *b)
{
    job j;
    memset(&j, 0, sizeof j);
    j.f = k->f, j.lay = k->p->lay, j.x = b->X, j.z = b->Z, j.y = b->Y, j.g = b->W,
    j.b = b->W + (2u << 20);
    j.eps = 1e-5f, j.block = 256;
    return j;
}

/* Keeps one measurement of kernel k under grid policy gname. */
static void record(const kern *k, const job *j, const char *gname, double mib,
                   double bytes, double us, double copy_gbps, int rows_cols)
{
    result r;
    memset(&r, 0, sizeof r);
    snprintf(r.kernel, sizeof r.kernel, "%s", k->name);
    r.op = k->p->name, r.type = k->bf ? "bf16" : "f32",
    r.variant = k->var ? "vec" : "bulk", r.grid_policy = gname;
    r.mib = mib, r.bytes = bytes, r.us = us, r.gbps = bytes / us / 1e3;
    r.copy_gbps = copy_gbps, r.rows = rows_cols ? j->rows : 0,
    r.cols = rows_cols ? j->cols : 0, r.grid = j->grid, r.block = j->block;
    add_result(&r);
}

/* The bytes a launch of kernel k must move: its big inputs and output once,
 * and its weights. */
static double kernel_bytes(const kern *k, const job *j, size_t S)
{
    const op *p = k->p;
    double bytes = (double)S * (p->nread + (p->rowout ? 0 : 1));
    if (p->rowout)
        bytes += (double)j->rows * k->es;
    if (p->lay == L_XGY_RCE)
        bytes += (double)j->cols * k->es;
    if (p->lay == L_XGBY_RCE || p->lay == L_XGBRY_RCE)
        bytes += 2.0 * j->cols * k->es;
    if (p->lay == L_XBYNC)
        bytes += (double)j->cols * k->es;
    return bytes;
}

/* The grid of kernel k for policy gpi: 0 is the default grid (pointwise:
 * one 8 KiB tile per input per block for the bulk kernels, two 16-byte
 * chunks per thread for the plain ones; rows: one block per row), 1 a
 * persistent grid of blocks/SM x SMs. */
static unsigned kernel_grid(const kern *k, const job *j, int gpi)
{
    if (k->p->rows && !gpi)
        return (unsigned)j->rows;
    if (!gpi) {
        long long per = k->var ? (long long)(32 / k->es) * 256
                               : (long long)(k->p->nread == 1 ? 8192 : 4096) /
                                     (long long)k->es;
        return (unsigned)((j->n + per - 1) / per);
    }
    int occ = 0;
    CK(K.api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k->f, 256, 0));
    return (unsigned)(occ * K.sms);
}

/* Kernel k at every size, with the default grid and (at 256 MiB, unless
 * --grid default) a persistent one; --profile only launches. */
static void bench_sizes(const opts *o, const bufs *b, const kern *k,
                        const double *copy_gbps)
{
    const size_t l2 = (size_t)K.l2_bytes;
    for (size_t m = 0; m < o->nm && o->mibs[m] <= o->max_mib; ++m) {
        const size_t S = (size_t)(o->mibs[m] * 1048576.0);
        const long long n = (long long)(S / k->es);
        for (int gpi = 0; gpi < 2; ++gpi) {
            const char *gname = gpi ? "persist" : k->p->rows ? "rows" : "full";
            if (gpi && (o->mibs[m] != 256 || !strcmp(o->gridpol, "default")))
                continue;
            job j = kernel_job(k, b);
            j.n = n, j.a = 0.5f;
            j.cols = 4096;
            j.rows = (int)(n / j.cols);
            j.stride = S;
            j.ystride = k->p->rowout ? (size_t)j.rows * k->es : S;
            j.nsets = (int)((4 * l2 + S - 1) / S);
            if ((size_t)j.nsets * S > b->maxb)
                j.nsets = (int)(b->maxb / S);
            if (o->profile)
                j.nsets = 1;
            j.grid = kernel_grid(k, &j, gpi);
            if (o->profile) {
                for (int i = 0; i < o->profile; ++i)
                    CK(job_launch(&j, 0));
                CK(K.api.cuStreamSynchronize(K.stream));
                printf("# %s %g MiB: %d launch(es), grid %u x %u\n", k->name,
                       o->mibs[m], o->profile, j.grid, j.block);
                continue;
            }
            double us = time_job(&j, 0);
            double bytes = kernel_bytes(k, &j, S);
            record(k, &j, gname, o->mibs[m], bytes, us, copy_gbps[m], k->p->rows);
            printf("%-36s %-7s %6.0f MiB %9.1f us %7.1f GB/s %5.1f%% of copy\n",
                   k->name, gname, o->mibs[m], us, bytes / us / 1e3,
                   100.0 * (bytes / us / 1e3) / copy_gbps[m]);
            fflush(stdout);
        }
    }
}

/* Long rows (the streaming path) for row kernel k at 256 MiB. */
static void bench_long_rows(const kern *k, const bufs *b, double copy256)
{
    static const int long_cols[] = {16384, 65536};
    for (int c = 0; c < 2; ++c) {
        const size_t S = 256u << 20;
        job j = kernel_job(k, b);
        j.n = (long long)(S / k->es);
        j.cols = long_cols[c], j.rows = (int)(j.n / j.cols);
        j.stride = j.ystride = S, j.nsets = 1, j.grid = (unsigned)j.rows;
        double us = time_job(&j, 0);
        double bytes = (double)S * (k->p->nread + 1) + 2.0 * j.cols * k->es;
        record(k, &j, "rows", 256, bytes, us, copy256, 1);
        printf("%-36s cols=%-5d %6.0f MiB %9.1f us %7.1f GB/s %5.1f%% of copy\n",
               k->name, j.cols, 256.0, us, bytes / us / 1e3,
               100.0 * (bytes / us / 1e3) / copy256);
    }
}

/* Every kernel (f32 and bf16, bulk and _vec) that --only selects, on fresh
 * random inputs per type.  m256 is the index of the 256 MiB size (nm when
 * it is not run), where the long rows run. */
static void bench_all_kernels(const opts *o, const bufs *b, const double *copy_gbps,
                              size_t m256)
{
    for (int ty = 0; ty < 2 && !o->chain_only; ++ty) {
        kern k;
        k.bf = ty == 1;
        k.es = k.bf ? 2 : 4;
        fill_random(b->X, b->maxb, k.bf, 1);
        fill_random(b->Z, b->maxb, k.bf, 2);
        fill_random(b->Y, b->maxb, k.bf, 3);
        fill_random(b->W, 4u << 20, k.bf, 4);
        for (size_t i = 0; i < NOPS; ++i) {
            k.p = &OPS[i];
            for (k.var = 0; k.var < 2; ++k.var) {
                snprintf(k.name, sizeof k.name, "%s_%s%s", k.p->name,
                         k.bf ? "bf16" : "f32", k.var ? "_vec" : "");
                if (o->only && regexec(&o->only_re, k.name, 0, NULL, 0) != 0)
                    continue;
                CK(K.api.cuModuleGetFunction(&k.f, K.mod, k.name));
                bench_sizes(o, b, &k, copy_gbps);
                if (k.p->rows && !k.p->rowout && m256 < o->nm &&
                    b->maxb >= (256u << 20) && !o->profile)
                    bench_long_rows(&k, b, copy_gbps[m256]);
            }
        }
    }
}

/* Measures the copy bandwidth again after the kernels and makes the higher
 * of the two runs every result's reference. */
static void settle_copy(const opts *o, const bufs *b, double *copy_gbps,
                        const double *before, double *after)
{
    measure_copy(b->X, b->Y, b->maxb, o->mibs, o->nm, o->max_mib, after);
    for (size_t i = 0; i < nresults; ++i) {
        for (size_t m = 0; m < o->nm; ++m) {
            if (results[i].mib == o->mibs[m]) {
                double c = after[m] > before[m] ? after[m] : before[m];
                results[i].copy_gbps = c;
                copy_gbps[m] = c;
            }
        }
    }
}

/* The decode chain in every variant (none with --only: its kernels are not
 * the selected ones). */
static void run_chains(const opts *o, chain_result *ch)
{
    memset(ch, 0, sizeof *ch);
    if (o->only)
        return;
    for (int fu = 0; fu < 2; ++fu)
        for (int v = 0; v < 2; ++v)
            for (int pd = 0; pd < 2; ++pd)
                ch->us[fu][v][pd] = chain(K.mod, fu, pd, v, 8, 64, 4096);
    printf("# decode chain 8 x (rmsnorm -> bias_gelu -> residual_add), 64 x 4096 bf16, "
           "per replay:\n#   full edges %.2f us, programmatic %.2f us (%.2fx); fused: "
           "full %.2f us, programmatic %.2f us\n#   _vec kernels: full %.2f us, "
           "programmatic %.2f us; fused full %.2f us, programmatic %.2f us\n",
           ch->us[0][0][0], ch->us[0][0][1], ch->us[0][0][0] / ch->us[0][0][1],
           ch->us[1][0][0], ch->us[1][0][1], ch->us[0][1][0], ch->us[0][1][1],
           ch->us[1][1][0], ch->us[1][1][1]);
}

/* Writes the JSON file.  Returns 0, or 1 after printing why. */
static int write_json(const opts *o, const char *date, const double *copy_gbps,
                      const double *before, const double *after,
                      const chain_result *ch)
{
    FILE *f = fopen(o->out, "w");
    if (!f) {
        perror(o->out);
        return 1;
    }
    fprintf(f, "{\n  \"device\": \"%s\",\n  \"date\": \"%s\",\n  \"sms\": %d,\n"
               "  \"l2_bytes\": %d,\n  \"driver\": %d,\n  \"copy\": [",
            K.name, date, K.sms, K.l2_bytes, K.driver_version);
    for (size_t m = 0; m < o->nm && o->mibs[m] <= o->max_mib; ++m)
        fprintf(f, "%s{\"mib\": %g, \"gbps\": %.2f, \"before\": %.2f, \"after\": %.2f}",
                m ? ", " : "", o->mibs[m], copy_gbps[m], before[m], after[m]);
    if (o->only)
        fprintf(f, "],\n  \"decode_chain\": null,\n  \"kernels\": [\n");
    else
        fprintf(f, "],\n  \"decode_chain\": {\"layers\": 8, \"T\": 64, \"H\": 4096, "
                   "\"type\": \"bf16\", \"method\": \"stream capture\", "
                   "\"us_full\": %.3f, \"us_pdl\": %.3f, \"us_fused_full\": %.3f, "
                   "\"us_fused_pdl\": %.3f, \"us_vec_full\": %.3f, \"us_vec_pdl\": %.3f, "
                   "\"us_fused_vec_full\": %.3f, \"us_fused_vec_pdl\": %.3f},\n"
                   "  \"kernels\": [\n",
                ch->us[0][0][0], ch->us[0][0][1], ch->us[1][0][0], ch->us[1][0][1],
                ch->us[0][1][0], ch->us[0][1][1], ch->us[1][1][0], ch->us[1][1][1]);
    for (size_t i = 0; i < nresults; ++i) {
        const result *r = &results[i];
        fprintf(f, "    {\"kernel\": \"%s\", \"op\": \"%s\", \"type\": \"%s\", "
                   "\"variant\": \"%s\", \"grid_policy\": \"%s\", \"mib\": %g, "
                   "\"rows\": %d, \"cols\": %d, \"grid\": %u, \"block\": %u, "
                   "\"bytes\": %.0f, \"us\": %.3f, \"gbps\": %.2f, \"copy_gbps\": %.2f}%s\n",
                r->kernel, r->op, r->type, r->variant, r->grid_policy, r->mib, r->rows,
                r->cols, r->grid, r->block, r->bytes, r->us, r->gbps, r->copy_gbps,
                i + 1 < nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc;
    char date[32];
    if (open_device(&o, date, sizeof date) != 0)
        return 1;
    bufs b;
    alloc_bufs(&o, &b);

    /* Copy bandwidth at every size, before and after the kernels: the
     * higher of the two is the reference (a kernel at "100 %" then matches
     * the better copy, never a throttled one). */
    double copy_gbps[8] = {0}, copy_before[8] = {0}, copy_after[8] = {0};
    size_t m256 = o.nm; /* the index of the 256 MiB size, the long rows' */
    for (size_t m = 0; m < o.nm; ++m)
        if (o.mibs[m] == 256 && o.mibs[m] <= o.max_mib)
            m256 = m;
    if (!o.profile)
        measure_copy(b.X, b.Y, b.maxb, o.mibs, o.nm, o.max_mib, copy_before);
    memcpy(copy_gbps, copy_before, sizeof copy_gbps);
    bench_all_kernels(&o, &b, copy_gbps, m256);
    if (!o.chain_only && !o.profile)
        settle_copy(&o, &b, copy_gbps, copy_before, copy_after);
    free_bufs(&o, &b);
    if (o.profile) {
        if (o.only)
            regfree(&o.only_re);
        kh_close(&K);
        return 0;
    }

    chain_result ch;
    run_chains(&o, &ch);
    if (write_json(&o, date, copy_gbps, copy_before, copy_after, &ch) != 0)
        return 1;
    free(results);
    if (o.only)
        regfree(&o.only_re);
    kh_close(&K);
    return 0;
}
