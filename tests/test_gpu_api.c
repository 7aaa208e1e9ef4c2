/* test_gpu_api.c — the embedding API on the GPU: a graph built with the C
 * builder checked against a CPU reference over 100 replays, a host program's
 * own memory, context and stream, PDL downgrades into kernels that cannot
 * wait (util_nowait_copy_f32, legacy compute_80 PTX), dynamic shared memory
 * above 48 KiB, the shipped embedding example, and timing behind a gate
 * (cudag_exec_time_gated). */
#include "gpu_common.h"

#include <sys/wait.h>
#include <time.h>

#define N ((1 << 20) + 3)       /* not a multiple of any block: tails count */

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_ADD[] = {
    {"a", CUDAG_TYPE_PTR}, {"b", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR},
    {"n", CUDAG_TYPE_I64}};

static void ok(int rc, const cudag_error *e) { gpu_ok(rc, e, "builder"); }

/* t = 3·x → (programmatic) u = t + x → (programmatic) u = -0.5·t + u. */
static cudag_graph *builder_graph(void)
{
    cudag_graph *g;
    cudag_error e;
    ok(cudag_graph_create("chain", &g, &e), &e);
    ok(cudag_add_module(g, "k", gpu_kernels("cudag_kernels.fatbin"), &e), &e);
    ok(cudag_add_signature(g, "scale_f32", "k", NULL, P_SCALE, 4, 1, &e), &e);
    ok(cudag_add_signature(g, "add_f32", "k", NULL, P_ADD, 4, 1, &e), &e);
    ok(cudag_add_signature(g, "axpy_f32", "k", NULL, P_SCALE, 4, 1, &e), &e);
    cudag_init rnd = {CUDAG_INIT_RANDOM, 0, 0, 0, 3};
    ok(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, N, &rnd, &e), &e);
    ok(cudag_add_buffer(g, "t", CUDAG_TYPE_F32, N, NULL, &e), &e);
    ok(cudag_add_buffer(g, "u", CUDAG_TYPE_F32, N, NULL, &e), &e);
    cudag_dim3 grid = {(N + 1023) / 1024, 1, 1}, block = {256, 1, 1};
    cudag_arg s[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("t", 0),
                     cudag_arg_float(3.0), cudag_arg_int(N)};
    cudag_arg a[] = {cudag_arg_buffer("t", 0), cudag_arg_buffer("x", 0),
                     cudag_arg_buffer("u", 0), cudag_arg_int(N)};
    cudag_arg p[] = {cudag_arg_buffer("t", 0), cudag_arg_buffer("u", 0),
                     cudag_arg_float(-0.5), cudag_arg_int(N)};
    ok(cudag_add_kernel(g, "s", "scale_f32", grid, block, 0, s, 4, &e), &e);
    ok(cudag_add_kernel(g, "a", "add_f32", grid, block, 0, a, 4, &e), &e);
    ok(cudag_add_kernel(g, "p", "axpy_f32", grid, block, 0, p, 4, &e), &e);
    ok(cudag_add_edge(g, "s", "a", CUDAG_EDGE_PROGRAMMATIC, &e), &e);
    ok(cudag_add_edge(g, "a", "p", CUDAG_EDGE_PROGRAMMATIC, &e), &e);
    ok(cudag_check(g, NULL, &e), &e);
    return g;
}

static void builder_chain_matches_reference(void **state)
{
    (void)state;
    cudag_graph *g = builder_graph();
    cudag_exec *xs[2] = {gpu_instantiate(g, 0, NULL),
                         gpu_instantiate(g, CUDAG_NO_PDL, NULL)};
    float *x = malloc(N * sizeof *x), *t = malloc(N * sizeof *t),
          *u = malloc(N * sizeof *u);
    assert_true(x && t && u);
    uint64_t seed = tseed();
    cudag_error e;
    for (int run = 0; run < 100; run++) {
        gpu_random(&seed, x, N);
        for (long i = 0; i < N; i++) {
            t[i] = 3.0f * x[i];
            u[i] = fmaf(-0.5f, t[i], t[i] + x[i]);
        }
        for (int k = 0; k < 2; k++) {
            gpu_write(xs[k], "x", x, N);
            gpu_poison(xs[k], "t", N);
            gpu_poison(xs[k], "u", N);
            gpu_ok(cudag_exec_launch(xs[k], 1, &e), &e, "launch");
            float *gt = gpu_read(xs[k], "t", N), *gu = gpu_read(xs[k], "u", N);
            gpu_expect(k ? "t (--no-pdl)" : "t", gt, t, N);
            gpu_expect(k ? "u (--no-pdl)" : "u", gu, u, N);
            free(gt);
            free(gu);
        }
    }
    cudag_exec_stats st;
    cudag_exec_get_stats(xs[0], &st);
    printf("# %s: driver %.1f ms, load %.1f ms, alloc %.1f ms, build %.3f ms, "
           "instantiate %.3f ms\n",
           xs[0]->gpu.name, st.driver_ns / 1e6, st.load_ns / 1e6,
           st.alloc_ns / 1e6, st.build_ns / 1e6, st.instantiate_ns / 1e6);
    cudag_exec_destroy(xs[0]);
    cudag_exec_destroy(xs[1]);
    free(x);
    free(t);
    free(u);
    cudag_graph_destroy(g);
}

static void host_program_owns_memory_context_and_stream(void **state)
{
    (void)state;
    const cudag__drv *d = gpu_drv();
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dx, dt;
    assert_int_equal(d->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPushCurrent(ctx), CUDA_SUCCESS);
    assert_int_equal(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuMemAlloc(&dx, N * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(d->cuMemAlloc(&dt, N * sizeof(float)), CUDA_SUCCESS);
    cudag_graph *g = builder_graph();
    cudag_error e;
    ok(cudag_bind_buffer(g, "x", dx, &e), &e);
    ok(cudag_bind_buffer(g, "t", dt, &e), &e);
    cudag_exec_options o = gpu_opts(0, NULL);
    o.context = ctx;
    o.stream = stream;
    cudag_exec *x;
    gpu_ok(cudag_instantiate(g, &o, &x, &e), &e, "instantiate");
    assert_ptr_equal(cudag_exec_stream(x), stream);
    uint64_t p, bytes;
    ok(cudag_exec_buffer(x, "x", &p, &bytes, &e), &e);
    assert_true(p == dx && bytes == N * sizeof(float));
    /* The program writes x itself, on its own stream. */
    float *hx = malloc(N * sizeof *hx), *ht = malloc(N * sizeof *ht);
    assert_true(hx && ht);
    uint64_t seed = tseed();
    gpu_random(&seed, hx, N);
    assert_int_equal(d->cuMemcpyHtoDAsync(dx, hx, N * sizeof *hx, stream),
                     CUDA_SUCCESS);
    gpu_ok(cudag_exec_launch(x, 100, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    cudag_exec_destroy(x);
    /* Its memory and stream outlive the exec. */
    assert_int_equal(d->cuMemcpyDtoHAsync(ht, dt, N * sizeof *ht, stream),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
    for (long i = 0; i < N; i++)
        if (ht[i] != 3.0f * hx[i])
            fail_msg("t[%ld] = %g, expected %g", i, (double)ht[i],
                     3.0 * hx[i]);
    assert_int_equal(d->cuMemFree(dx), CUDA_SUCCESS);
    assert_int_equal(d->cuMemFree(dt), CUDA_SUCCESS);
    assert_int_equal(d->cuStreamDestroy(stream), CUDA_SUCCESS);
    CUcontext c;
    assert_int_equal(d->cuCtxPopCurrent(&c), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
    free(hx);
    free(ht);
    cudag_graph_destroy(g);
}

static const char nowait_yaml[] =
    "cudag: 1\n"
    "include: [cudag_kernels.yaml, legacy.yaml]\n"
    "vars: {N: 100003}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  y: {type: f32, count: N}\n"
    "  z: {type: f32, count: N}\n"
    "  w: {type: f32, count: N}\n"
    "nodes:\n"
    "  a: {kernel: copy_f32, grid: 64, block: 256, args: [x, y, N]}\n"
    "  b: {kernel: util_nowait_copy_f32, grid: 64, block: 256, args: [y, z, N],\n"
    "      after: {a: programmatic}}\n"
    "  c: {kernel: legacy_copy_f32, grid: 64, block: 256, args: [z, w, N],\n"
    "      after: {b: programmatic}}\n";

static void downgrades_edges_into_code_that_cannot_wait(void **state)
{
    (void)state;
    if (access(gpu_kernels("legacy_sm80.ptx"), R_OK) != 0) {
        printf("# %s missing\n", gpu_kernels("legacy_sm80.ptx"));
        skip();
    }
    cudag_graph *g = gpu_load(nowait_yaml);
    tdiag d;
    cudag_exec *x = gpu_instantiate(g, 0, &d);
    printf("%s", d.text);
    if (x->gpu.cc_major >= 9) {
        assert_diag_contains(&d, "gpu.yaml:12:");
        assert_diag_contains(&d, "warning: programmatic edge 'a' -> 'b' built "
                                 "as a full edge: kernel "
                                 "'util_nowait_copy_f32' is not declared pdl");
        /* Its PTX (compute_80) is read on the CPU: the wait was compiled
         * out, so the code never executes it. */
        assert_diag_contains(&d, "warning: programmatic edge 'b' -> 'c' built "
                                 "as a full edge: the loaded code of kernel "
                                 "'legacy_copy_f32' never executes "
                                 "griddepcontrol.wait");
    }
    assert_int_equal(d.nwarn, 2);
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    assert_int_equal(st.downgraded_edges, 2);
    /* Built full, the chain is correct. */
    uint64_t seed = tseed();
    cudag_error e;
    float *h = malloc(100003 * sizeof *h);
    assert_non_null(h);
    for (int run = 0; run < 100; run++) {
        gpu_random(&seed, h, 100003);
        gpu_write(x, "x", h, 100003);
        gpu_poison(x, "y", 100003);
        gpu_poison(x, "z", 100003);
        gpu_poison(x, "w", 100003);
        gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
        float *w = gpu_read(x, "w", 100003);
        gpu_expect("w", w, h, 100003);
        free(w);
    }
    free(h);
    cudag_exec_destroy(x);
    /* Strict: an error naming the edge, and no exec. */
    cudag_exec_options o = gpu_opts(CUDAG_STRICT, &d);
    x = (cudag_exec *)1;
    assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_EPDL);
    assert_null(x);
    assert_non_null(strstr(e.message, "'a' -> 'b' is not safe"));
    assert_int_equal(e.line, 12);
    cudag_graph_destroy(g);
}

static void raises_dynamic_shared_memory_limit(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "vars: {S: 100000}\n"
        "nodes:\n"
        "  big: {kernel: util_noop, grid: 8, block: 128, smem: S}\n";
    cudag_graph *g = gpu_load(yaml);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 100, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    int optin = x->gpu.smem_optin;
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    /* More than the device allows is refused at the node's smem, where the
     * checker's own limit (Hopper's 227 KiB) lets it through. */
    if (optin >= (int)CUDAG__MAX_SMEM) {
        printf("# the device allows %d bytes, the checker's maximum: the "
               "refusal is tested with the fake driver (test_build)\n",
               optin);
        return;
    }
    char text[512];
    snprintf(text, sizeof text,
             "cudag: 1\n"
             "include: cudag_kernels.yaml\n"
             "nodes:\n"
             "  big: {kernel: util_noop, grid: 8, block: 128, smem: %d}\n",
             optin + 1);
    g = gpu_load(text);
    cudag_exec_options o = gpu_opts(0, NULL);
    assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_ELIMIT);
    assert_non_null(strstr(e.message, "node 'big' asks for"));
    assert_int_equal(e.line, 4);
    cudag_graph_destroy(g);
}

static void embedding_example_runs(void **state)
{
    (void)state;
    const char *exe = tbuild("tools/embed_example");
    if (access(exe, X_OK) != 0) {
        printf("# %s not built\n", exe);
        skip();
    }
    char cmd[4500];
    snprintf(cmd, sizeof cmd, "'%s' 2>&1", exe);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    printf("%s", out);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    tassert_contains(out, "ok", __FILE__, __LINE__);
}

/* A binary tree of n kernels under a counter: the root counts replays
 * (util_count_i32 adds one to counter[0]), every other node is a
 * util_noop whose parent is node (i - 1) / 2. */
static cudag_graph *tree_graph(int n)
{
    static const cudag_param P_COUNT[] = {{"counter", CUDAG_TYPE_PTR},
                                          {"k", CUDAG_TYPE_I64},
                                          {"flag", CUDAG_TYPE_PTR}};
    cudag_graph *g;
    cudag_error e;
    ok(cudag_graph_create("tree", &g, &e), &e);
    ok(cudag_add_module(g, "k", gpu_kernels("cudag_kernels.fatbin"), &e), &e);
    ok(cudag_add_signature(g, "util_count_i32", "k", NULL, P_COUNT, 3, 1, &e),
       &e);
    ok(cudag_add_signature(g, "util_noop", "k", NULL, NULL, 0, 1, &e), &e);
    ok(cudag_add_buffer(g, "counter", CUDAG_TYPE_I32, 1, NULL, &e), &e);
    ok(cudag_add_buffer(g, "flag", CUDAG_TYPE_I32, 1, NULL, &e), &e);
    cudag_dim3 one = {1, 1, 1}, warp = {32, 1, 1};
    cudag_arg c[] = {cudag_arg_buffer("counter", 0),
                     cudag_arg_int(INT64_C(1) << 40),
                     cudag_arg_buffer("flag", 0)};
    ok(cudag_add_kernel(g, "n0", "util_count_i32", one, warp, 0, c, 3, &e),
       &e);
    char name[32], parent[32];
    for (int i = 1; i < n; i++) {
        snprintf(name, sizeof name, "n%d", i);
        snprintf(parent, sizeof parent, "n%d", (i - 1) / 2);
        ok(cudag_add_kernel(g, name, "util_noop", one, warp, 0, NULL, 0, &e),
           &e);
        ok(cudag_add_edge(g, parent, name, CUDAG_EDGE_FULL, &e), &e);
    }
    ok(cudag_check(g, NULL, &e), &e);
    return g;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Gated, the events time the device alone.  The driver's launch call for a
 * tree of 8 191 kernels takes the host longer than the device takes to run
 * it (about 0.3 µs of CPU per node on driver 580, docs/benchmarks.md), so
 * an ungated replay is timed at the host's pace and a gated one must come
 * out clearly shorter than the host's launch call.  Every timed replay
 * ran whole: the root counts them from a random start. */
static void gated_timing_leaves_the_host_out(void **state)
{
    (void)state;
    enum { NODES = 8191, WARM = 3, ITERS = 25, LAUNCHES = 15 };
    cudag_graph *g = tree_graph(NODES);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    cudag_error e;
    uint64_t seed = tseed();
    int32_t start = (int32_t)trand(&seed, 0, 1e6), got = -1;
    ok(cudag_exec_write(x, "counter", &start, sizeof start, &e), &e);
    float gated[ITERS], ungated[ITERS], launch[LAUNCHES];
    ok(cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, WARM, ITERS, gated, &e),
       &e);
    ok(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 0, ITERS, ungated, &e), &e);
    for (int i = 0; i < LAUNCHES; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ok(cudag_exec_replay(x, CUDAG_REPLAY_GRAPH, 1, &e), &e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        launch[i] = (float)((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
                            (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
        ok(cudag_exec_sync(x, &e), &e);
    }
    ok(cudag_exec_read(x, "counter", &got, sizeof got, &e), &e);
    assert_int_equal(got, start + WARM + 2 * ITERS + LAUNCHES);
    qsort(gated, ITERS, sizeof *gated, cmp_f);
    qsort(ungated, ITERS, sizeof *ungated, cmp_f);
    qsort(launch, LAUNCHES, sizeof *launch, cmp_f);
    double g_us = 1e3 * gated[ITERS / 2], u_us = 1e3 * ungated[ITERS / 2];
    double l_us = launch[LAUNCHES / 2];
    print_message("tree of %d kernels: gated %.1f us, ungated %.1f us, the "
                  "host's launch call %.1f us\n",
                  NODES, g_us, u_us, l_us);
    assert_true(1e3 * gated[0] > 0);
    if (!(l_us > 1.5 * g_us && u_us > 1.2 * g_us))
        fail_msg("gated %.1f us is not clearly below the host's launch call "
                 "(%.1f us) and the ungated replay (%.1f us): the gate let the "
                 "device start early, or this driver launches trees far "
                 "faster than driver 580",
                 g_us, l_us, u_us);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builder_chain_matches_reference),
        cmocka_unit_test(host_program_owns_memory_context_and_stream),
        cmocka_unit_test(downgrades_edges_into_code_that_cannot_wait),
        cmocka_unit_test(raises_dynamic_shared_memory_limit),
        cmocka_unit_test(embedding_example_runs),
        cmocka_unit_test(gated_timing_leaves_the_host_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
