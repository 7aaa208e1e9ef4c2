/* bench_source.c — what CUDA source modules cost: the cold NVRTC compile of
 * a 10-kernel module, its cached load, and (with a GPU) the replay of a
 * graph of those kernels compiled from source against the same kernels from
 * an nvcc fatbin.  A program, not a test: it prints a table and JSON lines.
 *
 * Method.  Compile: cudag__compile() for sm_90 (sm_90a code) with the cache
 * off, R times, median; cached load: the same call with the entry in the
 * cache (hash the source and headers, read and check the entry), R times,
 * median.  Neither needs a GPU.  Replay: the 10 kernels as a chain over 16
 * MiB f32 buffers, instantiated once from the .cu and once from `nvcc
 * -fatbin -arch=sm_90` of the same file; batches of B replays timed with the
 * host clock around cudag_exec_launch + cudag_exec_sync, the two graphs
 * alternating batch by batch (so drift hits both), median per graph.
 *
 * usage: bench_source [--repeats R] [--batches N] [--replays B] [--out FILE]
 *                     [--no-gpu]
 * The cache goes to a temporary directory ($CUDAG_CACHE_DIR is set for the
 * run); nvcc is $CUDA_HOME/bin/nvcc or /usr/local/cuda/bin/nvcc.
 *
 * Internal: code/compile.h (cudag__compile, cudag__compile_req,
 * cudag__compiled, cudag__compiled_free) and the diagnostics it reports to
 * (cudag__diag, cudag__diag_init, base/diag.h).  It times the NVRTC compile
 * and the cache hit with no GPU, and no public call compiles without
 * instantiating on a device.  The replay part is the public API. */
#include "cudag.h"
#include "base/diag.h"
#include "ir/graph.h"
#include "code/compile.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NKERNELS 10
#define ELEMS (4u << 20)

/* Ten kernels with some arithmetic each, so NVRTC has real work. */
static char *module_source(void)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    if (!s)
        exit(1);
    len += (size_t)snprintf(s + len, cap - len,
                            "// bench_source: %d kernels, one per step\n",
                            NKERNELS);
    for (int k = 0; k < NKERNELS; k++)
        len += (size_t)snprintf(
            s + len, cap - len,
            "extern \"C\" __global__ void step%d(const float *x, float *y,\n"
            "                                   float a, int n)\n"
            "{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n"
            "    float v = x[i];\n"
            "    #pragma unroll\n"
            "    for (int r = 0; r < %d; r++)\n"
            "        v = fmaf(v, a, %d.0f / (r + 1.0f)) * 0.5f;\n"
            "    y[i] = v + sinf(v) * %d.0e-3f;\n"
            "}\n",
            k, 4 + k, k + 1, k + 1);
    return s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double time_compile(const cudag__compile_req *q, int repeats,
                           bool want_cached)
{
    double *t = calloc((size_t)repeats, sizeof *t);
    if (!t)
        exit(1);
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    for (int r = 0; r < repeats; r++) {
        cudag_error e;
        cudag__diag d;
        cudag__diag_init(&d, &o, &e);
        cudag__compiled c;
        double t0 = now_s();
        int rc = cudag__compile(q, &c, &d);
        t[r] = now_s() - t0;
        if (rc != CUDAG_OK) {
            fprintf(stderr, "bench_source: compile: %s\n", e.message);
            exit(1);
        }
        if (c.cached != want_cached) {
            fprintf(stderr, "bench_source: expected a %s compile\n",
                    want_cached ? "cached" : "cold");
            exit(1);
        }
        cudag__compiled_free(&c);
    }
    double m = median(t, repeats);
    free(t);
    return m;
}

/* A chain of the ten kernels over x -> b0 -> b1 -> … in a graph whose only
 * module is `module` (a .cu or a fatbin with the same kernels). */
static cudag_graph *chain_graph(const char *module, bool declared)
{
    size_t cap = 1 << 16, len = 0;
    char *y = malloc(cap);
    if (!y)
        exit(1);
    len += (size_t)snprintf(y + len, cap - len,
                            "cudag: 1\nname: chain\nmodules: {m: %s}\n",
                            module);
    if (declared) {
        len += (size_t)snprintf(y + len, cap - len, "kernels:\n");
        for (int k = 0; k < NKERNELS; k++)
            len += (size_t)snprintf(y + len, cap - len,
                                    "  step%d: {params: [ptr, ptr, f32, i32]}\n",
                                    k);
    }
    len += (size_t)snprintf(y + len, cap - len,
                            "vars: {N: %u}\nbuffers:\n"
                            "  x: {type: f32, count: N, init: random}\n",
                            ELEMS);
    for (int k = 0; k < NKERNELS; k++)
        len += (size_t)snprintf(y + len, cap - len,
                                "  b%d: {type: f32, count: N}\n", k);
    len += (size_t)snprintf(y + len, cap - len, "nodes:\n");
    for (int k = 0; k < NKERNELS; k++) {
        char in[16], after[32] = "";
        snprintf(in, sizeof in, k ? "b%d" : "x", k - 1);
        if (k)
            snprintf(after, sizeof after, ", after: [s%d]", k - 1);
        len += (size_t)snprintf(
            y + len, cap - len,
            "  s%d: {kernel: step%d, grid: \"cdiv(N, 256)\", block: 256, "
            "args: [%s, b%d, 0.75, N]%s}\n",
            k, k, in, k, after);
    }
    cudag_graph *g = NULL;
    cudag_error e;
    if (cudag_load_string(y, len, "bench.yaml", NULL, &g, &e) != CUDAG_OK) {
        fprintf(stderr, "bench_source: %s:%d:%d: %s\n", e.file, e.line,
                e.column, e.message);
        exit(1);
    }
    free(y);
    return g;
}

static void replay(const char *dir, const char *cu, int batches, int b,
                   FILE *out)
{
    char fatbin[600], cmd[2000];
    const char *home = getenv("CUDA_HOME");
    snprintf(fatbin, sizeof fatbin, "%s/steps.fatbin", dir);
    snprintf(cmd, sizeof cmd, "'%s/bin/nvcc' -O3 -fatbin -arch=sm_90 '%s' -o '%s'",
             home && *home ? home : "/usr/local/cuda", cu, fatbin);
    if (system(cmd) != 0) {
        printf("replay: skipped (nvcc failed: %s)\n", cmd);
        return;
    }
    cudag_graph *g[2] = {chain_graph(cu, false), chain_graph(fatbin, true)};
    cudag_exec *x[2];
    for (int i = 0; i < 2; i++) {
        cudag_exec_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        cudag_error e;
        if (cudag_instantiate(g[i], &o, &x[i], &e) != CUDAG_OK) {
            fprintf(stderr, "bench_source: instantiate: %s\n", e.message);
            exit(e.code == CUDAG_ENODRIVER ? 77 : 1);
        }
    }
    double *t[2] = {calloc((size_t)batches, sizeof(double)),
                    calloc((size_t)batches, sizeof(double))};
    for (int w = 0; w < 2; w++) {
        cudag_error e;
        cudag_exec_launch(x[w], (unsigned)b, &e);
        cudag_exec_sync(x[w], &e);
    }
    for (int i = 0; i < batches; i++)
        for (int k = 0; k < 2; k++) {
            int w = (i + k) % 2;    /* alternate which goes first */
            cudag_error e;
            double t0 = now_s();
            if (cudag_exec_launch(x[w], (unsigned)b, &e) != CUDAG_OK ||
                cudag_exec_sync(x[w], &e) != CUDAG_OK) {
                fprintf(stderr, "bench_source: replay: %s\n", e.message);
                exit(1);
            }
            t[w][i] = (now_s() - t0) / b;
        }
    double src = median(t[0], batches), fat = median(t[1], batches);
    printf("replay of %d kernels (%u floats each): source %.2f us, nvcc "
           "fatbin %.2f us, ratio %.4f\n",
           NKERNELS, ELEMS, src * 1e6, fat * 1e6, src / fat);
    if (out)
        fprintf(out,
                "{\"what\": \"replay\", \"kernels\": %d, \"elements\": %u, "
                "\"source_us\": %.3f, \"fatbin_us\": %.3f, \"ratio\": %.5f, "
                "\"batches\": %d, \"replays_per_batch\": %d, \"device\": "
                "\"%s\"}\n",
                NKERNELS, ELEMS, src * 1e6, fat * 1e6, src / fat, batches, b,
                cudag_exec_device_name(x[0]));
    for (int i = 0; i < 2; i++) {
        cudag_exec_destroy(x[i]);
        cudag_graph_destroy(g[i]);
        free(t[i]);
    }
}

int main(int argc, char **argv)
{
    int repeats = 11, batches = 21, replays = 200;
    bool gpu = true;
    const char *outp = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
            batches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--replays") == 0 && i + 1 < argc)
            replays = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            outp = argv[++i];
        else if (strcmp(argv[i], "--no-gpu") == 0)
            gpu = false;
        else {
            fprintf(stderr, "usage: %s [--repeats R] [--batches N] "
                            "[--replays B] [--out FILE] [--no-gpu]\n",
                    argv[0]);
            return 2;
        }
    }
    if (repeats < 1 || batches < 1 || replays < 1)
        return 2;
    char dir[] = "/tmp/cudag-bench-source-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char cache[300], cu[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(cu, sizeof cu, "%s/steps.cu", dir);
    setenv("CUDAG_CACHE_DIR", cache, 1);
    char *src = module_source();
    FILE *f = fopen(cu, "w");
    if (!f || fputs(src, f) < 0 || fclose(f) != 0)
        return 1;
    FILE *out = outp ? fopen(outp, "w") : NULL;
    cudag__compile_req q;
    memset(&q, 0, sizeof q);
    q.module = "steps";
    q.path = "steps.cu";
    q.text = src;
    q.len = strlen(src);
    q.cc_major = 9;
    q.cc_minor = 0;
    q.no_cache = true;
    double cold = time_compile(&q, repeats, false);
    q.no_cache = false;
    time_compile(&q, 1, false);         /* fills the cache */
    double warm = time_compile(&q, repeats, true);
    printf("compile of a %d-kernel module for sm_90a: cold %.1f ms, cached "
           "load %.3f ms (%.0fx), median of %d\n",
           NKERNELS, cold * 1e3, warm * 1e3, cold / warm, repeats);
    if (out)
        fprintf(out,
                "{\"what\": \"compile\", \"kernels\": %d, \"cold_ms\": %.3f, "
                "\"cached_ms\": %.4f, \"speedup\": %.1f, \"repeats\": %d}\n",
                NKERNELS, cold * 1e3, warm * 1e3, cold / warm, repeats);
    if (gpu)
        replay(dir, cu, batches, replays, out);
    if (out)
        fclose(out);
    free(src);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    return system(rm) == 0 ? 0 : 1;
}
