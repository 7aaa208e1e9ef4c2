/* bench_cond.c — what a loop decided on the device costs, against the ways
 * to get the same iterations without one.  A body of 4 small kernels
 * joined by programmatic edges (3 × scale_f32 on 4096 floats, then a
 * counter) runs K = 1, 10, 100, 1000 times, four ways, in one process:
 *
 *   while      one graph: a while node whose body ends in cond_count_i32
 *              (it += 1; more = it < K): one launch runs K iterations;
 *   unrolled   one graph with the body written K times in a chain (the
 *              counter is util_count_i32, which writes the flag to memory);
 *   host       the body as a graph, launched K times back to back;
 *   host+read  the same, with a synchronize and a 4-byte read of the flag
 *              after each launch: what a loop the host decides does.
 *
 * Then the Jacobi example (graphs/jacobi.yaml) to convergence: its while
 * node against the host loop (launch two sweeps, read the residual, decide),
 * from the same start, to the same number of iterations (checked).
 *
 * Times are CUDA events on the exec's stream around all of a repetition's
 * launches (and reads), so the host's gaps count; the median of --reps
 * repetitions after one warm-up.  A program, not a test.
 *
 * usage: bench_cond [--kernels DIR] [--jacobi FILE] [--reps N] [--json]
 *                   [--check]
 * DIR (the built kernels and their manifest) defaults to $CUDAG_KERNELS_DIR,
 * then build/kernels; FILE to graphs/jacobi.yaml (run from the source
 * root).  --check loads and checks every graph it would run and stops, with
 * no GPU (a CPU test runs it).
 *
 * Internal: lib/driver.h's table (cudag__driver, cudag__drv).  It times
 * host-driven loops with CUDA events on the exec's stream, which no public
 * call does (cudag_exec_time times replays only); it calls the driver
 * through the library's table so that it links no libcuda and --check (a
 * CPU test, bench_cond_graphs) runs on a machine with no driver.  The exec
 * runs in device 0's primary context (default options), which the timer
 * makes current itself. */
#include "cudag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NK 4
static const unsigned Ks[NK] = {1, 10, 100, 1000};
enum { WHILE, UNROLLED, HOST, HOST_READ, NMODES };
static const char *const mode_name[NMODES] = {"while", "unrolled", "host",
                                              "host+read"};

static const char *kdir;
static unsigned reps = 20;

static void die(const char *what, const cudag_error *e)
{
    char line[2048];
    cudag_error_format(e, line, sizeof line);
    fprintf(stderr, "bench_cond: %s: %s\n", what, line);
    exit(1);
}

static void cu(const cudag__drv *d, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL, *desc = NULL;
    if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_UNKNOWN";
    if (d->cuGetErrorString(r, &desc) != CUDA_SUCCESS || !desc)
        desc = "no description";
    fprintf(stderr, "bench_cond: %s: %s (%s)\n", what, name, desc);
    exit(1);
}

static cudag_graph *load(const char *text, const char *file)
{
    const char *dirs[] = {kdir, NULL};
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.include_dirs = dirs;
    cudag_graph *g;
    cudag_error e;
    int rc = text ? cudag_load_string(text, strlen(text), "bench_cond.yaml",
                                      &o, &g, &e)
                  : cudag_load_file(file, &o, &g, &e);
    if (rc != CUDAG_OK)
        die(file ? file : "a generated graph", &e);
    return g;
}

static cudag_exec *instantiate(const cudag_graph *g)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    cudag_exec *x;
    cudag_error e;
    if (cudag_instantiate(g, &o, &x, &e) != CUDAG_OK)
        die("cudag_instantiate", &e);
    return x;
}

/* The body's three scalings; `tail` adds the counter and its edge. */
#define HEAD                                                                   \
    "cudag: 1\n"                                                               \
    "include: cudag_kernels.yaml\n"                                            \
    "vars: {N: 4096, K: %u}\n"                                                 \
    "buffers:\n"                                                               \
    "  a: {type: f32, count: N, init: random}\n"                               \
    "  it: {type: i32, count: 1, init: 0}\n"                                   \
    "  flag: {type: i32, count: 1, init: 0}\n"
#define SCALE "{kernel: scale_f32, grid: 4, block: 256, args: [a, a, 1.0, N]"

static char *yaml(int mode, unsigned k)
{
    size_t cap = 4096;
    char *s = malloc(cap);
    if (!s)
        exit(1);
    int n = snprintf(s, cap, HEAD, k);
    if (mode == WHILE)
        snprintf(s + n, cap - (size_t)n,
                 "conditions: {more: {default: 1}}\n"
                 "nodes:\n"
                 "  reset: {memset: it, value: 0}\n"
                 "  loop:\n"
                 "    while: more\n"
                 "    after: reset\n"
                 "    body:\n"
                 "      k1: " SCALE "}\n"
                 "      k2: " SCALE ", after: {k1: programmatic}}\n"
                 "      k3: " SCALE ", after: {k2: programmatic}}\n"
                 "      k4: {kernel: cond_count_i32, grid: 1, block: 32, "
                 "args: [it, K, more], after: {k3: programmatic}}\n");
    else
        /* One copy of the body for the host modes, K in a chain. */
        snprintf(s + n, cap - (size_t)n,
                 "nodes:\n"
                 "  step[i in %u]:\n"
                 "    k1: " SCALE ", after: {\"step[i-1].k4\": programmatic}}\n"
                 "    k2: " SCALE ", after: {k1: programmatic}}\n"
                 "    k3: " SCALE ", after: {k2: programmatic}}\n"
                 "    k4: {kernel: util_count_i32, grid: 1, block: 32, "
                 "args: [it, K, flag], after: {k3: programmatic}}\n",
                 mode == UNROLLED ? k : 1u);
    return s;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

typedef struct timer {
    const cudag__drv *d;
    cudag_exec *x;
    CUdevice dev;
    CUcontext ctx;
    CUevent e0, e1;
} timer;

/* The events live in the exec's context: device 0's primary context, as
 * cudag_instantiate with default options uses. */
static void timer_open(timer *t, cudag_exec *x)
{
    cudag_error e;
    t->x = x;
    if (cudag__driver(&t->d, &e) != CUDAG_OK)
        die("the CUDA driver", &e);
    cu(t->d, t->d->cuDeviceGet(&t->dev, 0), "cuDeviceGet");
    cu(t->d, t->d->cuDevicePrimaryCtxRetain(&t->ctx, t->dev),
       "cuDevicePrimaryCtxRetain");
    cu(t->d, t->d->cuCtxPushCurrent(t->ctx), "cuCtxPushCurrent");
    cu(t->d, t->d->cuEventCreate(&t->e0, CU_EVENT_DEFAULT), "cuEventCreate");
    cu(t->d, t->d->cuEventCreate(&t->e1, CU_EVENT_DEFAULT), "cuEventCreate");
}

static void timer_close(timer *t)
{
    t->d->cuEventDestroy(t->e0);
    t->d->cuEventDestroy(t->e1);
    CUcontext c;
    (void)t->d->cuCtxPopCurrent(&c);
    (void)t->d->cuDevicePrimaryCtxRelease(t->dev);
}

static void mark(timer *t, CUevent e)
{
    cu(t->d, t->d->cuEventRecord(e, (CUstream)cudag_exec_stream(t->x)),
       "cuEventRecord");
}

static float elapsed_us(timer *t)
{
    float ms;
    cu(t->d, t->d->cuEventSynchronize(t->e1), "a repetition");
    cu(t->d, t->d->cuEventElapsedTime(&ms, t->e0, t->e1),
       "cuEventElapsedTime");
    return ms * 1e3f;
}

static int read_i32(cudag_exec *x, const char *b)
{
    int v;
    cudag_error e;
    if (cudag_exec_read(x, b, &v, sizeof v, &e) != CUDAG_OK)
        die("cudag_exec_read", &e);
    return v;
}

static void launch(cudag_exec *x, unsigned times)
{
    cudag_error e;
    if (cudag_exec_launch(x, times, &e) != CUDAG_OK)
        die("cudag_exec_launch", &e);
}

/* One repetition of the K iterations of a mode, in µs. */
static float run_loop(timer *t, int mode, unsigned k)
{
    mark(t, t->e0);
    if (mode == WHILE || mode == UNROLLED) {
        launch(t->x, 1);
    } else if (mode == HOST) {
        launch(t->x, k);
    } else {
        for (unsigned i = 0; i < k; i++) {
            launch(t->x, 1);
            /* The read synchronizes: the host sees the flag of this
             * iteration before it launches the next. */
            (void)read_i32(t->x, "flag");
        }
    }
    mark(t, t->e1);
    return elapsed_us(t);
}

static float median(float *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_float);
    return v[n / 2];
}

/* ---- Jacobi ---------------------------------------------------------------- */

/* The host-driven version of graphs/jacobi.yaml's body: clear r[0], two
 * sweeps; the host reads r and decides. */
static const char host_jacobi[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {NX: %ld, NY: %ld, GRID: \"cdiv(NX*NY, 256)\"}\n"
    "buffers:\n"
    "  u: {type: f32, count: NX*NY}\n"
    "  v: {type: f32, count: NX*NY}\n"
    "  f: {type: f32, count: NX*NY}\n"
    "  r: {type: f32, count: 2}\n"
    "nodes:\n"
    "  clear: {memset: r, count: 1, value: 0}\n"
    "  even: {kernel: jacobi_f32, grid: GRID, block: 256, "
    "args: [u, v, f, r, NX, NY], after: clear}\n"
    "  odd: {kernel: jacobi_f32, grid: GRID, block: 256, "
    "args: [v, u, f, r, NX, NY], after: {even: programmatic}}\n";

static long var(const cudag_graph *g, const char *name)
{
    long i = cudag_graph_find_var(g, name);
    cudag_value v;
    if (i < 0 || cudag_graph_var(g, (size_t)i, &v) != CUDAG_OK) {
        fprintf(stderr, "bench_cond: the Jacobi graph has no variable %s\n",
                name);
        exit(1);
    }
    return v.type == CUDAG_TYPE_I64 ? (long)v.i : (long)v.f;
}

/* --check: every graph the benchmark builds loads and checks. */
static int check_only(const char *jfile)
{
    for (int m = 0; m < NMODES; m++)
        for (int ki = 0; ki < NK; ki++) {
            char *text = yaml(m, Ks[ki]);
            cudag_graph_destroy(load(text, NULL));
            free(text);
        }
    cudag_graph *g = load(NULL, jfile);
    char text[2048];
    snprintf(text, sizeof text, host_jacobi, var(g, "NX"),
             var(g, "NY"));
    cudag_graph_destroy(load(text, NULL));
    cudag_graph_destroy(g);
    printf("bench_cond: %d graphs load and check\n", NMODES * NK + 2);
    return 0;
}

static void copy(cudag_exec *x, const char *b, void *h, size_t bytes,
                 bool write)
{
    cudag_error e;
    int rc = write ? cudag_exec_write(x, b, h, bytes, &e)
                   : cudag_exec_read(x, b, h, bytes, &e);
    if (rc != CUDAG_OK)
        die(b, &e);
}

typedef struct jacobi_result {
    float while_us, host_us;
    int iterations;
} jacobi_result;

static jacobi_result run_jacobi(const char *file)
{
    cudag_graph *g = load(NULL, file);
    long nx = var(g, "NX"), ny = var(g, "NY"), maxit = var(g, "MAXIT");
    size_t n = (size_t)(nx * ny);
    float tol = 1e-6f;  /* as graphs/jacobi.yaml's test node */
    char text[2048];
    snprintf(text, sizeof text, host_jacobi, nx, ny);
    cudag_graph *hg = load(text, NULL);
    cudag_exec *xw = instantiate(g), *xh = instantiate(hg);
    float *u0 = malloc(n * sizeof *u0), *f = malloc(n * sizeof *f);
    float *samples = malloc(2 * reps * sizeof *samples);
    if (!u0 || !f || !samples)
        exit(1);
    /* The while graph's initial data, for both. */
    copy(xw, "u", u0, n * sizeof *u0, false);
    copy(xw, "f", f, n * sizeof *f, false);
    copy(xh, "f", f, n * sizeof *f, true);
    jacobi_result res = {0, 0, 0};
    timer tw, th;
    timer_open(&tw, xw);
    timer_open(&th, xh);
    int it_w = 0, it_h = 0;
    for (unsigned r = 0; r <= reps; r++) {
        copy(xw, "u", u0, n * sizeof *u0, true);
        mark(&tw, tw.e0);
        launch(xw, 1);
        mark(&tw, tw.e1);
        float us = elapsed_us(&tw);
        it_w = read_i32(xw, "it");
        copy(xh, "u", u0, n * sizeof *u0, true);
        float rr[2] = {0, 0};
        copy(xh, "r", rr, sizeof rr, true);
        mark(&th, th.e0);
        for (it_h = 0;;) {
            launch(xh, 1);
            copy(xh, "r", rr, sizeof rr, false);
            it_h++;
            if (!(rr[0] >= tol && it_h < maxit))
                break;
        }
        mark(&th, th.e1);
        float hus = elapsed_us(&th);
        if (r) {                /* the first is the warm-up */
            samples[r - 1] = us;
            samples[reps + r - 1] = hus;
        }
    }
    if (it_w != it_h) {
        fprintf(stderr, "bench_cond: Jacobi: the while node stopped after %d "
                        "iterations, the host loop after %d\n",
                it_w, it_h);
        exit(1);
    }
    res.iterations = it_w;
    res.while_us = median(samples, reps);
    res.host_us = median(samples + reps, reps);
    timer_close(&tw);
    timer_close(&th);
    free(u0);
    free(f);
    free(samples);
    cudag_exec_destroy(xw);
    cudag_exec_destroy(xh);
    cudag_graph_destroy(g);
    cudag_graph_destroy(hg);
    return res;
}

int main(int argc, char **argv)
{
    const char *jfile = "graphs/jacobi.yaml";
    bool json = false, check = false;
    kdir = getenv("CUDAG_KERNELS_DIR");
    if (!kdir)
        kdir = "build/kernels";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            kdir = argv[++i];
        else if (!strcmp(argv[i], "--jacobi") && i + 1 < argc)
            jfile = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--check"))
            check = true;
        else {
            fprintf(stderr, "usage: %s [--kernels DIR] [--jacobi FILE] "
                            "[--reps N] [--json] [--check]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (check)
        return check_only(jfile);
    float us[NMODES][NK];
    float *samples = malloc(reps * sizeof *samples);
    char device[256] = "";
    if (!samples)
        return 1;
    for (int m = 0; m < NMODES; m++)
        for (int ki = 0; ki < NK; ki++) {
            char *text = yaml(m, Ks[ki]);
            cudag_graph *g = load(text, NULL);
            free(text);
            cudag_exec *x = instantiate(g);
            snprintf(device, sizeof device, "%s", cudag_exec_device_name(x));
            timer t;
            timer_open(&t, x);
            (void)run_loop(&t, m, Ks[ki]);     /* warm-up */
            for (unsigned r = 0; r < reps; r++)
                samples[r] = run_loop(&t, m, Ks[ki]);
            us[m][ki] = median(samples, reps);
            /* Every way ran all K iterations. */
            int count = read_i32(x, "it");
            unsigned want = m == WHILE ? Ks[ki] : Ks[ki] * (reps + 1);
            if ((unsigned)count != want) {
                fprintf(stderr, "bench_cond: %s, K = %u: the counter is %d, "
                                "not %u\n",
                        mode_name[m], Ks[ki], count, want);
                return 1;
            }
            timer_close(&t);
            cudag_exec_destroy(x);
            cudag_graph_destroy(g);
        }
    free(samples);
    jacobi_result jr = run_jacobi(jfile);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (json) {
        printf("{\"device\": \"%s\", \"date\": \"%s\", \"reps\": %u, "
               "\"loop\": [",
               device, date, reps);
        for (int ki = 0; ki < NK; ki++) {
            printf("%s\n  {\"K\": %u", ki ? "," : "", Ks[ki]);
            for (int m = 0; m < NMODES; m++)
                printf(", \"%s_us\": %.2f", mode_name[m], us[m][ki]);
            printf("}");
        }
        printf("],\n \"jacobi\": {\"iterations\": %d, \"while_us\": %.1f, "
               "\"host_us\": %.1f}}\n",
               jr.iterations, jr.while_us, jr.host_us);
        return 0;
    }
    printf("%s, %s: a body of 4 PDL-chained kernels run K times; median of "
           "%u, µs per iteration\n\n",
           device, date, reps);
    printf("%6s %10s %10s %10s %10s   %14s %16s\n", "K", "while", "unrolled",
           "host", "host+read", "while/unrolled", "host+read/while");
    for (int ki = 0; ki < NK; ki++) {
        float k = (float)Ks[ki];
        printf("%6u %10.2f %10.2f %10.2f %10.2f   %13.2fx %15.2fx\n", Ks[ki],
               us[WHILE][ki] / k, us[UNROLLED][ki] / k, us[HOST][ki] / k,
               us[HOST_READ][ki] / k, us[WHILE][ki] / us[UNROLLED][ki],
               us[HOST_READ][ki] / us[WHILE][ki]);
    }
    printf("\nJacobi (%s) to convergence, %d iterations: while node %.1f µs, "
           "host loop %.1f µs (%.2fx)\n",
           jfile, jr.iterations, jr.while_us, jr.host_us,
           jr.host_us / jr.while_us);
    return 0;
}
