/* bench_capture.c — what a captured child-graph node costs in a chain,
 * against the same kernel as a plain kernel node.  A chain of K launches of
 * scale_f32 (x = a·x over n floats, the same kernel and arguments every
 * time) is built four ways through the C API and replayed back to back:
 *   plain       K kernel nodes, full edges;
 *   plain_pdl   K kernel nodes, programmatic edges;
 *   captured    K capture nodes, each a child graph holding the one launch,
 *               which the program's callback recorded (full edges);
 *   alternating kernel and capture nodes in turn (full edges).
 * Each is timed with CUDA events around REPS back-to-back replays, ROUNDS
 * times; prints the median per replay and per node, as text or --json.
 *
 *     bench_capture [--nodes K] [--n N] [--reps R] [--rounds M] [--json]
 *                   [--kernels DIR]   (where cudag_kernels.fatbin is)
 *
 * Internal: lib/driver.h's table (cudag__driver, cudag__drv).  A capture
 * callback must call CUDA itself (it launches the kernel it records), and
 * the program loads the fatbin and times with events; through the
 * library's table it links no libcuda.  Everything else is the public API.
 */
#include "cudag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prog {
    const cudag__drv *d;
    CUfunction scale;
    CUdeviceptr x;
    float a;
    int64_t n;
} prog;

static int die(const char *what, const cudag_error *e)
{
    char buf[2048];
    cudag_error_format(e, buf, sizeof buf);
    fprintf(stderr, "bench_capture: %s: %s\n", what, buf);
    return e->code == CUDAG_ENODRIVER ? 3 : 4;
}

/* The capture's work: the same launch the kernel node makes. */
static int launch_scale(void *user, void *stream)
{
    prog *p = user;
    void *args[] = {&p->x, &p->x, &p->a, &p->n};
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = (unsigned)((p->n + 2047) / 2048);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = (CUstream)stream;
    return p->d->cuLaunchKernelEx(&cfg, p->scale, args, NULL) != CUDA_SUCCESS;
}

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};

enum { PLAIN, PLAIN_PDL, CAPTURED, ALTERNATING, NVARIANTS };
static const char *const names[NVARIANTS] = {"plain", "plain_pdl", "captured",
                                             "alternating"};

static int build(int variant, int k, prog *p, const char *fatbin,
                 cudag_graph **out, cudag_error *e)
{
    cudag_graph *g;
    int rc = cudag_graph_create(names[variant], &g, e);
    if (rc == CUDAG_OK)
        rc = cudag_add_module(g, "k", fatbin, e);
    if (rc == CUDAG_OK)
        rc = cudag_add_signature(g, "scale_f32", "k", NULL, P_SCALE, 4, 1, e);
    if (rc == CUDAG_OK)
        rc = cudag_add_buffer(g, "x", CUDAG_TYPE_F32, (uint64_t)p->n, NULL, e);
    if (rc == CUDAG_OK)
        rc = cudag_bind_buffer(g, "x", p->x, e);
    cudag_arg args[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("x", 0),
                        cudag_arg_float(p->a), cudag_arg_int(p->n)};
    cudag_dim3 grid = {(uint32_t)((p->n + 2047) / 2048), 1, 1};
    for (int i = 0; i < k && rc == CUDAG_OK; i++) {
        char name[32], prev[32];
        snprintf(name, sizeof name, "s%d", i);
        snprintf(prev, sizeof prev, "s%d", i - 1);
        bool cap = variant == CAPTURED || (variant == ALTERNATING && i % 2);
        rc = cap ? cudag_add_capture(g, name, launch_scale, p, e)
                 : cudag_add_kernel(g, name, "scale_f32", grid,
                                    (cudag_dim3){256, 1, 1}, 0, args, 4, e);
        if (rc == CUDAG_OK && i > 0)
            rc = cudag_add_edge(g, prev, name,
                                variant == PLAIN_PDL ? CUDAG_EDGE_PROGRAMMATIC
                                                     : CUDAG_EDGE_FULL,
                                e);
    }
    if (rc == CUDAG_OK)
        rc = cudag_check(g, NULL, e);
    if (rc != CUDAG_OK) {
        cudag_graph_destroy(g);
        return rc;
    }
    *out = g;
    return CUDAG_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median over `rounds` of the time per replay of `reps` replays, in µs. */
static int time_exec(cudag_exec *x, const cudag__drv *d, int reps, int rounds,
                     double *us, cudag_error *e)
{
    CUstream s = cudag_exec_stream(x);
    CUevent a, b;
    if (d->cuEventCreate(&a, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        d->cuEventCreate(&b, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        memset(e, 0, sizeof *e);
        e->code = CUDAG_ECUDA;
        e->severity = CUDAG_SEV_ERROR;
        snprintf(e->message, sizeof e->message, "cuEventCreate");
        return CUDAG_ECUDA;
    }
    float *t = calloc((size_t)rounds, sizeof *t);
    int rc = t ? cudag_exec_launch(x, (unsigned)reps, e) : CUDAG_ENOMEM;
    for (int r = 0; r < rounds && rc == CUDAG_OK; r++) {
        d->cuEventRecord(a, s);
        rc = cudag_exec_launch(x, (unsigned)reps, e);
        d->cuEventRecord(b, s);
        if (rc == CUDAG_OK)
            rc = cudag_exec_sync(x, e);
        float ms = 0;
        d->cuEventElapsedTime(&ms, a, b);
        t[r] = ms * 1e3f / (float)reps;
    }
    if (rc == CUDAG_OK) {
        qsort(t, (size_t)rounds, sizeof *t, cmp_float);
        *us = t[rounds / 2];
    }
    free(t);
    d->cuEventDestroy(a);
    d->cuEventDestroy(b);
    return rc;
}

int main(int argc, char **argv)
{
    int k = 64, reps = 50, rounds = 21;
    int64_t n = 4096;
    bool json = false;
    const char *kdir = getenv("CUDAG_KERNELS_DIR");
    if (!kdir)
        kdir = "build/kernels";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--nodes") == 0)
            k = atoi(v), i++;
        else if (strcmp(argv[i], "--n") == 0)
            n = atoll(v), i++;
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(v), i++;
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(v), i++;
        else if (strcmp(argv[i], "--kernels") == 0)
            kdir = v, i++;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else {
            fprintf(stderr, "usage: bench_capture [--nodes K] [--n N] "
                            "[--reps R] [--rounds M] [--kernels DIR] "
                            "[--json]\n");
            return 2;
        }
    }
    if (k < 2 || n < 1 || reps < 1 || rounds < 1) {
        fprintf(stderr, "bench_capture: counts must be positive (K >= 2)\n");
        return 2;
    }
    char fatbin[4096];
    snprintf(fatbin, sizeof fatbin, "%s/cudag_kernels.fatbin", kdir);
    cudag_error e;
    prog p = {NULL, NULL, 0, 1.0f, n};
    if (cudag__driver(&p.d, &e) != CUDAG_OK)
        return die("driver", &e);
    const cudag__drv *d = p.d;
    /* The program's side, in the primary context the execs use. */
    CUdevice dev;
    CUcontext ctx;
    CUlibrary lib;
    CUkernel kern;
    if (d->cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        d->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        d->cuCtxPushCurrent(ctx) != CUDA_SUCCESS ||
        d->cuLibraryLoadFromFile(&lib, fatbin, NULL, NULL, 0, NULL, NULL, 0) !=
            CUDA_SUCCESS ||
        d->cuLibraryGetKernel(&kern, lib, "scale_f32") != CUDA_SUCCESS ||
        d->cuKernelGetFunction(&p.scale, kern) != CUDA_SUCCESS ||
        d->cuMemAlloc(&p.x, (size_t)n * sizeof(float)) != CUDA_SUCCESS ||
        d->cuMemsetD32Async(p.x, 0x3f800000u, (size_t)n, NULL) != CUDA_SUCCESS ||
        d->cuCtxSynchronize() != CUDA_SUCCESS) {
        fprintf(stderr, "bench_capture: cannot set up the program's kernel "
                        "and memory (%s)\n", fatbin);
        return 4;
    }
    char dev_name[256] = "";
    d->cuDeviceGetName(dev_name, (int)sizeof dev_name - 1, dev);
    double us[NVARIANTS];
    for (int v = 0; v < NVARIANTS; v++) {
        cudag_graph *g;
        cudag_exec *x;
        if (build(v, k, &p, fatbin, &g, &e) != CUDAG_OK)
            return die("building the graph", &e);
        if (cudag_instantiate(g, NULL, &x, &e) != CUDAG_OK)
            return die("cudag_instantiate", &e);
        if (time_exec(x, d, reps, rounds, &us[v], &e) != CUDAG_OK)
            return die("replaying", &e);
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
    }
    if (json) {
        printf("{\"device\": \"%s\", \"nodes\": %d, \"n\": %lld, \"reps\": %d, "
               "\"rounds\": %d, \"replay_us\": {",
               dev_name, k, (long long)n, reps, rounds);
        for (int v = 0; v < NVARIANTS; v++)
            printf("%s\"%s\": %.3f", v ? ", " : "", names[v], us[v]);
        printf("}, \"capture_extra_us_per_node\": %.3f}\n",
               (us[CAPTURED] - us[PLAIN]) / k);
    } else {
        printf("%s: a chain of %d scale_f32 launches over %lld floats\n",
               dev_name, k, (long long)n);
        for (int v = 0; v < NVARIANTS; v++)
            printf("  %-12s %9.2f us per replay, %6.3f us per node\n",
                   names[v], us[v], us[v] / k);
        printf("  a captured node costs %.3f us more than a kernel node\n",
               (us[CAPTURED] - us[PLAIN]) / k);
    }
    d->cuMemFree(p.x);
    d->cuLibraryUnload(lib);
    d->cuCtxPopCurrent(&ctx);
    d->cuDevicePrimaryCtxRelease(dev);
    return 0;
}
