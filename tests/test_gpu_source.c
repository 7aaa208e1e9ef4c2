/* test_gpu_source.c — CUDA source modules on the GPU (suite gpu; exits 77
 * saying why without a device or NVRTC): a source held in memory through
 * the C API, its template instance and a kernel named without a signature,
 * run against a CPU reference on fresh random data with poisoned outputs;
 * the same kernels as the program's own CUkernel and CUfunction handles;
 * the compile cache on the second instantiation; a compile error's
 * position in the source and the module's in the graph. */
#include "gpu_common.h"
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "lib/nvrtc.h"
#include "ir/graph.h"
#include "code/compile.h"
#include "gpu/exec.h"

#include <stddef.h>
#include <stdint.h>

#define N 4096

static const char src[] =
    "#include <cudag/pdl.cuh>\n"
    "extern \"C\" __global__ void twice(const float *x, float *y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    cudag_pdl_wait();\n"
    "    if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n"
    "template <typename T>\n"
    "__global__ void axpy(T *y, const T *x, T a, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = fmaf(a, x[i], y[i]);\n"
    "}\n";

static cudag_graph *memory_graph(void)
{
    cudag_graph *g;
    cudag_error e;
    gpu_ok(cudag_graph_create("memsrc", &g, &e), &e, "create");
    gpu_ok(cudag_add_module_source(g, "mem", src, NULL, &e), &e, "source");
    static const cudag_param p[] = {{"y", CUDAG_TYPE_PTR},
                                    {"x", CUDAG_TYPE_PTR},
                                    {"a", CUDAG_TYPE_F32},
                                    {"n", CUDAG_TYPE_I32}};
    gpu_ok(cudag_add_signature(g, "axpy_f32", "mem", "axpy<float>", p, 4, 0,
                               &e),
           &e, "signature");
    const char *bufs[] = {"x", "y"};
    for (int i = 0; i < 2; i++)
        gpu_ok(cudag_add_buffer(g, bufs[i], CUDAG_TYPE_F32, N, NULL, &e), &e,
               bufs[i]);
    cudag_dim3 grid = {N / 256, 1, 1}, block = {256, 1, 1};
    cudag_arg a1[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                      cudag_arg_int(N)};
    cudag_arg a2[] = {cudag_arg_buffer("y", 0), cudag_arg_buffer("x", 0),
                      cudag_arg_float(0.25), cudag_arg_int(N)};
    gpu_ok(cudag_add_kernel(g, "t", "twice", grid, block, 0, a1, 3, &e), &e,
           "twice");
    gpu_ok(cudag_add_kernel(g, "a", "axpy_f32", grid, block, 0, a2, 4, &e),
           &e, "axpy");
    gpu_ok(cudag_add_edge(g, "t", "a", CUDAG_EDGE_FULL, &e), &e, "edge");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    return g;
}

/* y = 2x, then y = fma(0.25, x, y), on fresh data with y poisoned. */
static void run_and_compare(cudag_exec *x, const char *what)
{
    uint64_t seed = tseed();
    float *hx = malloc(N * sizeof *hx), *want = malloc(N * sizeof *want);
    assert_true(hx && want);
    gpu_random(&seed, hx, N);
    for (int i = 0; i < N; i++)
        want[i] = fmaf(0.25f, hx[i], 2.0f * hx[i]);
    gpu_write(x, "x", hx, N);
    gpu_poison(x, "y", N);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    float *got = gpu_read(x, "y", N);
    gpu_expect(what, got, want, N);
    free(got);
    free(hx);
    free(want);
}

static void source_from_memory_runs(void **state)
{
    (void)state;
    cudag_graph *g = memory_graph();
    tdiag d;
    cudag_exec *x = gpu_instantiate(g, CUDAG_NO_CACHE, &d);
    assert_int_equal(x->code.compiled, 1);
    run_and_compare(x, "memory source");
    cudag_exec_destroy(x);
    /* Through the cache: the second instantiation compiles nothing. */
    x = gpu_instantiate(g, 0, &d);
    cudag_exec_destroy(x);
    x = gpu_instantiate(g, 0, &d);
    assert_int_equal(x->code.cached, 1);
    assert_int_equal(x->code.compiled, 0);
    run_and_compare(x, "memory source, from the cache");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* The same kernels loaded by the program itself, given as handles. */
static void program_handles_run(void **state)
{
    (void)state;
    const cudag__drv *d = gpu_drv();
    CUdevice dev;
    CUcontext ctx;
    assert_int_equal(d->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPushCurrent(ctx), CUDA_SUCCESS);
    int maj = 0, min = 0;
    d->cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                            dev);
    d->cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                            dev);
    static const char *const exprs[] = {"axpy<float>"};
    cudag__compile_req q;
    memset(&q, 0, sizeof q);
    q.module = "own";
    q.path = "own.cu";
    q.text = src;
    q.len = strlen(src);
    q.exprs = exprs;
    q.nexprs = 1;
    q.cc_major = maj;
    q.cc_minor = min;
    cudag__compiled c;
    cudag_options o = topts(NULL, NULL);
    cudag_error e;
    cudag__diag dg;
    cudag__diag_init(&dg, &o, &e);
    gpu_ok(cudag__compile(&q, &c, &dg), &e, "compile");
    CUlibrary lib;
    CUkernel k_twice, k_axpy;
    CUfunction f_axpy;
    assert_int_equal(d->cuLibraryLoadData(&lib, c.cubin, NULL, NULL, 0, NULL,
                                          NULL, 0),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryGetKernel(&k_twice, lib, "twice"),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryGetKernel(&k_axpy, lib, c.lowered[0]),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuKernelGetFunction(&f_axpy, k_axpy), CUDA_SUCCESS);
    cudag__compiled_free(&c);
    cudag_graph *g;
    gpu_ok(cudag_graph_create("handles", &g, &e), &e, "create");
    static const cudag_param pt[] = {{"x", CUDAG_TYPE_PTR},
                                     {"y", CUDAG_TYPE_PTR},
                                     {"n", CUDAG_TYPE_I32}};
    static const cudag_param pa[] = {{"y", CUDAG_TYPE_PTR},
                                     {"x", CUDAG_TYPE_PTR},
                                     {"a", CUDAG_TYPE_F32},
                                     {"n", CUDAG_TYPE_I32}};
    gpu_ok(cudag_add_signature_handle(g, "twice", k_twice, CUDAG_HANDLE_KERNEL,
                                      pt, 3, 1, &e),
           &e, "kernel handle");
    gpu_ok(cudag_add_signature_handle(g, "axpy_f32", f_axpy,
                                      CUDAG_HANDLE_FUNCTION, pa, 4, 0, &e),
           &e, "function handle");
    const char *bufs[] = {"x", "y"};
    for (int i = 0; i < 2; i++)
        gpu_ok(cudag_add_buffer(g, bufs[i], CUDAG_TYPE_F32, N, NULL, &e), &e,
               bufs[i]);
    cudag_dim3 grid = {N / 256, 1, 1}, block = {256, 1, 1};
    cudag_arg a1[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                      cudag_arg_int(N)};
    cudag_arg a2[] = {cudag_arg_buffer("y", 0), cudag_arg_buffer("x", 0),
                      cudag_arg_float(0.25), cudag_arg_int(N)};
    gpu_ok(cudag_add_kernel(g, "t", "twice", grid, block, 0, a1, 3, &e), &e,
           "twice");
    gpu_ok(cudag_add_kernel(g, "a", "axpy_f32", grid, block, 0, a2, 4, &e),
           &e, "axpy");
    gpu_ok(cudag_add_edge(g, "t", "a", CUDAG_EDGE_FULL, &e), &e, "edge");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    cudag_exec_options xo = gpu_opts(0, NULL);
    xo.context = ctx;
    cudag_exec *x = NULL;
    gpu_ok(cudag_instantiate(g, &xo, &x, &e), &e, "instantiate");
    run_and_compare(x, "program handles");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    d->cuLibraryUnload(lib);
    CUcontext popped;
    d->cuCtxPopCurrent(&popped);
    d->cuDevicePrimaryCtxRelease(dev);
}

static void compile_error_points_at_the_source(void **state)
{
    (void)state;
    static const char yaml_fmt[] =
        "cudag: 1\n"
        "modules:\n"
        "  broken: %s\n"
        "kernels:\n"
        "  k: {params: [ptr]}\n"
        "buffers: {x: {type: f32, count: 4}}\n"
        "nodes:\n"
        "  n: {kernel: k, grid: 1, block: 4, args: [x]}\n";
    char dir[256], cu[300], yaml[600];
    assert_int_equal(tmkdir_in(dir, sizeof dir, "gpusrc"), 0);
    snprintf(cu, sizeof cu, "%s/broken.cu", dir);
    FILE *f = fopen(cu, "w");
    assert_non_null(f);
    fputs("extern \"C\" __global__ void k(float *x) {\n"
          "    x[0] = undefined_thing;\n}\n", f);
    fclose(f);
    snprintf(yaml, sizeof yaml, yaml_fmt, cu);
    cudag_graph *g = gpu_load(yaml);
    tdiag d;
    cudag_exec_options o = gpu_opts(CUDAG_NO_CACHE, &d);
    cudag_exec *x = (cudag_exec *)1;
    cudag_error e;
    assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_ESYNTAX);
    assert_null(x);
    assert_string_equal(e.file, cu);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.column, 12);
    assert_non_null(strstr(e.message, "identifier \"undefined_thing\" is "
                                      "undefined"));
    assert_diag_contains(&d, "gpu.yaml:3:11: note: in module 'broken'");
    cudag_graph_destroy(g);
    assert_int_equal(trm_tree(dir), 0);
}

int main(void)
{
    gpu_require();
    const cudag__rtc *r;
    cudag_error e;
    if (cudag__nvrtc(&r, &e) != CUDAG_OK) {
        printf("SKIP: %s\n", e.message);
        return 77;
    }
    char cache[256];
    if (tmkdir_in(cache, sizeof cache, "gpucache") != 0 ||
        setenv("CUDAG_CACHE_DIR", cache, 1) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(source_from_memory_runs),
        cmocka_unit_test(program_handles_run),
        cmocka_unit_test(compile_error_points_at_the_source),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    trm_tree(cache);
    return rc;
}
