/* gpu_common.h — what the GPU suites share (header-only, one copy per
 * suite): the skip rule (exit 77 with a printed reason when there is no
 * driver, no device or no kernels fatbin), loading graphs with the build
 * tree's kernels, fresh random inputs, poisoned outputs, and assertions that
 * print the library's error. */
#ifndef CUDAG_GPU_COMMON_H
#define CUDAG_GPU_COMMON_H

#include "common.h"
#include "build/build.h"
#include "exec/exec.h"
#include "gpu/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Asserts rc is OK, printing err where it is not. */
CUDAG__UNUSED static void gpu_ok(int rc, const cudag_error *e, const char *what)
{
    if (rc != CUDAG_OK) {
        char buf[2048];
        cudag_error_format(e, buf, sizeof buf);
        fail_msg("%s: %s: %s", what, cudag_status_name(rc), buf);
    }
}

/* The value of graph g's integer variable `name` (the test fails if it has
 * none). */
CUDAG__UNUSED static int64_t gpu_var(const cudag_graph *g, const char *name)
{
    const long i = cudag_graph_find_var(g, name);
    assert_true(i >= 0);
    cudag_value v;
    assert_int_equal(cudag_graph_var(g, (size_t)i, &v), CUDAG_OK);
    return v.i;
}

static char gpu_kdir[4096];

/* The directory holding the built kernels (cudag_kernels.fatbin and its
 * manifest); valid after gpu_require(). */
CUDAG__UNUSED static const char *gpu_kernels(const char *file)
{
    static char buf[8][4200];
    static int next;
    char *b = buf[next++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", gpu_kdir, file);
    return b;
}

/* Exits 77 (meson's SKIP) with the reason when this machine cannot run the
 * GPU suites.  Call first in main(). */
static void gpu_require(void)
{
    const char *kd = getenv("CUDAG_KERNELS_DIR");
    snprintf(gpu_kdir, sizeof gpu_kdir, "%s", kd ? kd : "kernels");
    const cudag__drv *d;
    cudag_error e;
    int rc = cudag__driver(&d, &e);
    if (rc != CUDAG_OK) {
        printf("SKIP: %s\n", e.message);
        exit(77);
    }
    int n = 0;
    if (d->cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
        printf("SKIP: no CUDA device\n");
        exit(77);
    }
    if (access(gpu_kernels("cudag_kernels.fatbin"), R_OK) != 0) {
        printf("SKIP: %s is missing (kernels not built: no nvcc?)\n",
               gpu_kernels("cudag_kernels.fatbin"));
        exit(77);
    }
}

CUDAG__UNUSED static const cudag__drv *gpu_drv(void)
{
    const cudag__drv *d;
    cudag_error e;
    gpu_ok(cudag__driver(&d, &e), &e, "cudag__driver");
    return d;
}

/* Loads YAML text as the file `name` (relative paths resolved from its
 * directory, includes in the kernels directory too). */
CUDAG__UNUSED static cudag_graph *gpu_load_as(const char *yaml,
                                              const char *name)
{
    tdiag d;
    cudag_options o = topts(&d, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_string(yaml, strlen(yaml), name, &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("loading %s: %s\n%s", name, cudag_status_name(rc), d.text);
    return g;
}

CUDAG__UNUSED static cudag_graph *gpu_load(const char *yaml)
{
    return gpu_load_as(yaml, "gpu.yaml");
}

CUDAG__UNUSED static cudag_exec_options gpu_opts(unsigned flags, tdiag *d)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    if (d) {
        memset(d, 0, sizeof *d);
        o.diag = tdiag_fn;
        o.diag_user = d;
    }
    return o;
}

CUDAG__UNUSED static cudag_exec *gpu_instantiate(const cudag_graph *g,
                                                 unsigned flags, tdiag *d)
{
    cudag_exec_options o = gpu_opts(flags, d);
    cudag_exec *x = NULL;
    cudag_error e;
    gpu_ok(cudag_instantiate(g, &o, &x, &e), &e, "cudag_instantiate");
    return x;
}

/* The exec of a graph with gemm nodes, or NULL (print the reason and skip)
 * when cuBLASLt is missing. */
CUDAG__UNUSED static cudag_exec *gpu_instantiate_gemm(const cudag_graph *g)
{
    cudag_exec_options o = gpu_opts(0, NULL);
    cudag_exec *x = NULL;
    cudag_error e;
    int rc = cudag_instantiate(g, &o, &x, &e);
    if (rc == CUDAG_ENODRIVER && strstr(e.message, "cuBLASLt not found")) {
        printf("# skipped: %s\n", e.message);
        return NULL;
    }
    gpu_ok(rc, &e, "cudag_instantiate");
    return x;
}

/* Host copy of one f32 buffer of an exec. */
CUDAG__UNUSED static float *gpu_read(cudag_exec *x, const char *b, size_t n)
{
    float *h = malloc(n * sizeof *h);
    assert_non_null(h);
    cudag_error e;
    gpu_ok(cudag_exec_read(x, b, h, n * sizeof *h, &e), &e, b);
    return h;
}

CUDAG__UNUSED static void gpu_write(cudag_exec *x, const char *b,
                                    const float *h, size_t n)
{
    cudag_error e;
    gpu_ok(cudag_exec_write(x, b, h, n * sizeof *h, &e), &e, b);
}

/* Fills n floats with fresh random values in [-1, 1). */
CUDAG__UNUSED static void gpu_random(uint64_t *s, float *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] = (float)trand(s, -1.0, 1.0);
}

CUDAG__UNUSED static void gpu_poison(cudag_exec *x, const char *b, size_t n)
{
    float *h = malloc(n * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++)
        h[i] = NAN;
    gpu_write(x, b, h, n);
    free(h);
}

/* Bitwise comparison of n floats, reporting the first difference. */
CUDAG__UNUSED static void gpu_expect(const char *what, const float *got,
                                     const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("%s[%zu] = %.9g, expected %.9g (%zu elements)", what, i,
                     (double)got[i], (double)want[i], n);
}

#endif /* CUDAG_GPU_COMMON_H */
