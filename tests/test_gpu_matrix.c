/* test_gpu_matrix.c — the kernel-placement matrix (tests/matrix_rows.h) on
 * a GPU: every row (top level, while body, if/else, switch cases, a child
 * graph file used 3x with different vars, a while inside a child file, an
 * if inside a while) × every column (shipped library, own fatbin built by
 * nvcc with a kernels: section, own .cu, own .cu with cooperative groups
 * and cuda::std, the C API's CUfunction), programmatic edges inside bodies
 * where the kernel waits, each run on fresh random data against the CPU
 * reference; y is poisoned first where the kernel overwrites it.  An own
 * .cu kernel sets a while's condition.  Exits 77 without a device. */
#include "gpu_common.h"
#include "matrix_rows.h"

static void check_y(cudag_exec *x, const mx_row *r, const mx_col *c)
{
    static float xs[MX_N], y0[MX_N], want[MX_N], got[MX_N];
    uint64_t st = tseed();
    for (int i = 0; i < MX_N; i++) {
        xs[i] = (float)trand(&st, -1, 1);
        /* The shipped kernel overwrites y: poison it. */
        y0[i] = c->accumulates ? (float)trand(&st, -1, 1) : NAN;
    }
    float p = 0.25f;
    int pick = 1, zero = 0;
    cudag_error e;
    gpu_ok(cudag_exec_write(x, "x", xs, sizeof xs, &e), &e, "write x");
    gpu_ok(cudag_exec_write(x, "y", y0, sizeof y0, &e), &e, "write y");
    gpu_ok(cudag_exec_write(x, "p", &p, sizeof p, &e), &e, "write p");
    gpu_ok(cudag_exec_write(x, "pick", &pick, sizeof pick, &e), &e, "pick");
    gpu_ok(cudag_exec_write(x, "it", &zero, sizeof zero, &e), &e, "it");
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    gpu_ok(cudag_exec_read(x, "y", got, sizeof got, &e), &e, "read y");
    mx_apply(r, c, xs, y0, want, MX_N);
    for (int i = 0; i < MX_N; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i]))))
            fail_msg("%s x %s: y[%d] = %g, want %g", r->name, c->name, i,
                     got[i], want[i]);
}

/* The own fatbin column: mx.cu built by nvcc (tests/meson.build). */
static const mx_col fatbin_col = {
    "own fatbin + kernels:",
    "include: cudag_kernels.yaml\n"
    "modules: {mine: @SRC}\n"
    "kernels:\n"
    "  mx_axpy:\n"
    "    module: mine\n"
    "    params: {x: ptr, y: ptr, a: f32, n: i32}\n"
    "    pdl: true\n",
    "mx_axpy", 1, 0};

static void cell(const char *dir, const mx_row *r, const mx_col *c,
                 const char *src)
{
    char *text = mx_graph(r, c, src);
    assert_non_null(text);
    twrite(dir, "g.yaml", text);
    free(text);
    if (r->child) {
        char *child = mx_subst(r->child, c->kernel, src, "");
        assert_non_null(child);
        twrite(dir, "layer.yaml", child);
        free(child);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/g.yaml", dir);
    tdiag d = {0};
    cudag_options o = topts(&d, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(path, &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("%s x %s: %s", r->name, c->name, d.text);
    cudag_exec *x = NULL;
    gpu_ok(cudag_instantiate(g, NULL, &x, &e), &e, r->name);
    check_y(x, r, c);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    printf("# %s x %s: ok\n", r->name, c->name);
}

static void gpu_matrix_yaml_cells(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(tmkdir_in(dir, sizeof dir, "gpu-matrix"), 0);
    for (size_t c = 0; c < MX_NCOLS; c++) {
        /* The stand-in k.fatbin of the CPU matrix is no real code: the
         * GPU's fatbin column is mx.cu built by nvcc. */
        bool stand_in = strstr(mx_cols[c].head, "k.fatbin") != NULL;
        for (size_t r = 0; r < MX_NROWS; r++) {
            if (stand_in && access(tbuild("tests/mx.fatbin"), R_OK) == 0)
                cell(dir, &mx_rows[r], &fatbin_col,
                     tbuild("tests/mx.fatbin"));
            else if (!stand_in)
                cell(dir, &mx_rows[r], &mx_cols[c], tsrc(""));
        }
    }
    trm_tree(dir);
}

/* The C API's column: mx_axpy as a CUfunction the program loaded. */
static void gpu_matrix_c_api_column(void **state)
{
    (void)state;
    if (access(tbuild("tests/mx.fatbin"), R_OK) != 0) {
        printf("# %s missing (no nvcc): C API column not run\n",
               tbuild("tests/mx.fatbin"));
        return;
    }
    const cudag__drv *d = gpu_drv();
    cudag_error e;
    gpu_ok(cudag_device_retain(0, &e), &e, "retain");
    CUdevice dev;
    CUcontext ctx;
    assert_int_equal(d->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPushCurrent(ctx), CUDA_SUCCESS);
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    assert_int_equal(d->cuLibraryLoadFromFile(&lib, tbuild("tests/mx.fatbin"),
                                              NULL, NULL, 0, NULL, NULL, 0),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryGetKernel(&k, lib, "mx_axpy"), CUDA_SUCCESS);
    assert_int_equal(d->cuKernelGetFunction(&f, k), CUDA_SUCCESS);
    static const mx_col col = {"C API (CUfunction)", "", "mx_axpy", 1, 0};
    for (size_t r = 0; r < MX_NROWS; r++) {
        cudag_graph *g =
            mx_api_row(r, (void *)f, gpu_kernels("cudag_kernels.fatbin"));
        if (!g)
            continue;
        cudag_exec *x = NULL;
        gpu_ok(cudag_instantiate(g, NULL, &x, &e), &e, mx_rows[r].name);
        check_y(x, &mx_rows[r], &col);
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
        printf("# %s x C API: ok\n", mx_rows[r].name);
    }
    assert_int_equal(d->cuLibraryUnload(lib), CUDA_SUCCESS);
    CUcontext popped;
    assert_int_equal(d->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
    gpu_ok(cudag_device_release(0, &e), &e, "release");
}

/* mx_count (mx.cu) sets the loop's condition: 3 iterations of y += 2x. */
static void gpu_matrix_own_condition_kernel(void **state)
{
    (void)state;
    char *text = mx_subst(
        "cudag: 1\n"
        "modules: {mine: @SRC/tests/data/matrix/mx.cu}\n" MX_COMMON
        "nodes:\n"
        "  reset: {memset: it, value: 0}\n"
        "  solve:\n"
        "    while: more\n"
        "    after: reset\n"
        "    body:\n"
        "      step: {kernel: mx_axpy, grid: 2, block: 128, args: [x, y, 2, N]}\n"
        "      next:\n"
        "        kernel: mx_count\n"
        "        grid: 1\n"
        "        block: 32\n"
        "        args: [it, K, more]\n"
        "        after: {step: programmatic}\n",
        "", tsrc(""), "");
    cudag_graph *g = gpu_load(text);
    free(text);
    cudag_exec *x = NULL;
    cudag_error e;
    gpu_ok(cudag_instantiate(g, NULL, &x, &e), &e, "own condition");
    static const mx_row r = {"own condition", "", NULL, {2, 2, 2}, 3, 1, 1};
    static const mx_col c = {"own .cu", "", "mx_axpy", 1, 1};
    check_y(x, &r, &c);
    int it = 0;
    gpu_ok(cudag_exec_read(x, "it", &it, sizeof it, &e), &e, "read it");
    assert_int_equal(it, 3);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_matrix_yaml_cells),
        cmocka_unit_test(gpu_matrix_c_api_column),
        cmocka_unit_test(gpu_matrix_own_condition_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
