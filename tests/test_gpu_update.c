/* test_gpu_update.c — changing an instantiated graph between replays on the
 * GPU: a scalar argument (cuGraphExecKernelNodeSetParams), buffers rebound to
 * the host program's memory (kernel, memset and memcpy nodes), and variables
 * (cuGraphExecUpdate), shape-preserving or not, a node's kernel pick among
 * them; each once more with the graph instantiated for device launch
 * (CUDAG_DEVICE_LAUNCH). */
#include "gpu_common.h"

#define N 262147

/* The exec flags of the test running: 0, or CUDAG_DEVICE_LAUNCH. */
static unsigned exec_flags;

static const char yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 262147, A: 2, G: 64, K: 2}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  y: {type: f32, count: N}\n"
    "  z: {type: f32, count: N}\n"
    "  w: {type: f32, count: N}\n"
    "nodes:\n"
    "  scale: {kernel: scale_f32, grid: G, block: 256, args: [x, y, A, N]}\n"
    "  clear: {memset: z, value: 0}\n"
    "  acc:\n"
    "    kernel: axpy_f32\n"
    "    grid: G\n"
    "    block: 256\n"
    "    args: [y, z, 1.0, N]\n"
    "    after: [scale: programmatic, clear]\n"
    "  save: {memcpy: w, from: z, after: acc}\n"
    "  tail[i in K]: {kernel: util_noop, grid: 1, block: 32, after: save}\n";

/* After one replay on fresh x: y = a·x, z = fmaf(1, y, 0), w = z.  (z is y
 * but for the sign of zero: -0 + 0 = +0.) */
static void run_and_check(cudag_exec *x, float a, uint64_t *seed,
                          const char *what)
{
    float *hx = malloc(N * sizeof *hx), *wy = malloc(N * sizeof *wy),
          *wz = malloc(N * sizeof *wz);
    assert_true(hx && wy && wz);
    gpu_random(seed, hx, N);
    for (long i = 0; i < N; i++) {
        wy[i] = a * hx[i];
        wz[i] = fmaf(1.0f, wy[i], 0.0f);
    }
    gpu_write(x, "x", hx, N);
    gpu_poison(x, "y", N);
    gpu_poison(x, "z", N);
    gpu_poison(x, "w", N);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    const char *names[] = {"y", "z", "w"};
    for (int b = 0; b < 3; b++) {
        float *got = gpu_read(x, names[b], N);
        char msg[200];
        snprintf(msg, sizeof msg, "%s: %s", what, names[b]);
        gpu_expect(msg, got, b ? wz : wy, N);
        free(got);
    }
    free(hx);
    free(wy);
    free(wz);
}

static void set_arg_changes_the_result(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(yaml);
    cudag_exec *x = gpu_instantiate(g, exec_flags, NULL);
    uint64_t seed = tseed();
    cudag_error e;
    run_and_check(x, 2.0f, &seed, "before any update");
    for (int i = 0; i < 100; i++) {
        float a = (float)trand(&seed, -4.0, 4.0);
        cudag_arg arg = cudag_arg_float(a);
        gpu_ok(cudag_exec_set_arg(x, "scale", 2, &arg, &e), &e, "set_arg");
        char what[64];
        snprintf(what, sizeof what, "a = %g (update %d)", (double)a, i);
        run_and_check(x, a, &seed, what);
    }
    /* An argument that does not fit is refused; the last one stays. */
    cudag_arg bad = cudag_arg_buffer("x", 0);
    assert_int_equal(cudag_exec_set_arg(x, "scale", 2, &bad, &e), CUDAG_ETYPE);
    cudag_arg one = cudag_arg_float(1.0);
    gpu_ok(cudag_exec_set_arg(x, "scale", 2, &one, &e), &e, "set_arg");
    run_and_check(x, 1.0f, &seed, "a = 1");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static void rebound_buffers_are_used(void **state)
{
    (void)state;
    const cudag__drv *d = gpu_drv();
    cudag_graph *g = gpu_load(yaml);
    cudag_exec *x = gpu_instantiate(g, exec_flags, NULL);
    cudag_error e;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    CUdeviceptr mine[4];
    for (int b = 0; b < 4; b++)
        assert_int_equal(d->cuMemAlloc(&mine[b], N * sizeof(float)),
                         CUDA_SUCCESS);
    cudag__exec_leave(x);
    uint64_t old[4];
    const char *names[] = {"x", "y", "z", "w"};
    for (int b = 0; b < 4; b++) {
        gpu_ok(cudag_exec_buffer(x, names[b], &old[b], NULL, &e), &e, "buffer");
        gpu_ok(cudag_exec_rebind_buffer(x, names[b], mine[b], &e), &e,
               "rebind");
        uint64_t now;
        gpu_ok(cudag_exec_buffer(x, names[b], &now, NULL, &e), &e, "buffer");
        assert_true(now == mine[b]);
    }
    /* Poison the exec's own memory: nothing may read or write it now. */
    float *nan = malloc(N * sizeof *nan);
    assert_non_null(nan);
    for (long i = 0; i < N; i++)
        nan[i] = NAN;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    for (int b = 0; b < 4; b++)
        assert_int_equal(d->cuMemcpyHtoDAsync(old[b], nan, N * sizeof *nan,
                                              x->gpu.stream),
                         CUDA_SUCCESS);
    assert_int_equal(d->cuStreamSynchronize(x->gpu.stream), CUDA_SUCCESS);
    cudag__exec_leave(x);
    uint64_t seed = tseed();
    for (int i = 0; i < 10; i++)
        run_and_check(x, 2.0f, &seed, "rebound");
    /* The old memory was left alone. */
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    float *h = malloc(N * sizeof *h);
    assert_non_null(h);
    for (int b = 0; b < 4; b++) {
        assert_int_equal(d->cuMemcpyDtoHAsync(h, old[b], N * sizeof *h,
                                              x->gpu.stream),
                         CUDA_SUCCESS);
        assert_int_equal(d->cuStreamSynchronize(x->gpu.stream), CUDA_SUCCESS);
        for (long k = 0; k < N; k += 997)
            assert_true(isnan(h[k]));
    }
    cudag__exec_leave(x);
    /* And back: the exec's memory serves again. */
    for (int b = 0; b < 4; b++)
        gpu_ok(cudag_exec_rebind_buffer(x, names[b], old[b], &e), &e,
               "rebind");
    run_and_check(x, 2.0f, &seed, "rebound back");
    /* The program frees its memory in its context (the exec's, here). */
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    for (int b = 0; b < 4; b++)
        assert_int_equal(d->cuMemFree(mine[b]), CUDA_SUCCESS);
    cudag__exec_leave(x);
    cudag_exec_destroy(x);
    free(h);
    free(nan);
    cudag_graph_destroy(g);
}

static void set_var_updates_in_place(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(yaml);
    cudag_exec *x = gpu_instantiate(g, exec_flags, NULL);
    uint64_t seed = tseed();
    cudag_error e;
    /* A scalar argument and a grid size: the same topology. */
    gpu_ok(cudag_exec_set_var(x, "A", 5, &e), &e, "set_var A");
    run_and_check(x, 5.0f, &seed, "A = 5");
    gpu_ok(cudag_exec_set_var(x, "G", 7, &e), &e, "set_var G");
    run_and_check(x, 5.0f, &seed, "A = 5, G = 7");
    assert_int_equal(x->launch.k[cudag__find_node(x->g, "scale")].grid[0], 7);
    for (int i = 0; i < 20; i++) {
        int a = (int)(trand(&seed, -8, 8));
        gpu_ok(cudag_exec_set_var(x, "A", a, &e), &e, "set_var A");
        run_and_check(x, (float)a, &seed, "A random");
    }
    /* One more node: the driver refuses, naming the reason. */
    assert_int_equal(cudag_exec_set_var(x, "K", 3, &e), CUDAG_ECUDA);
    printf("# %s\n", e.message);
    assert_non_null(strstr(e.message, "setting K=3 cannot update"));
    assert_non_null(strstr(e.message, "TOPOLOGY_CHANGED"));
    assert_int_equal(e.cuda_result, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    /* A buffer size: refused before the driver is asked. */
    assert_int_equal(cudag_exec_set_var(x, "N", 1000, &e), CUDAG_ENOTSUP);
    printf("# %s\n", e.message);
    /* The exec is as it was. */
    gpu_ok(cudag_exec_set_var(x, "A", 3, &e), &e, "set_var A");
    run_and_check(x, 3.0f, &seed, "A = 3 after refusals");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* A variable that changes a node's pick (`kernel: {pick, from}`) moves the
 * node to the other kernel through cuGraphExecUpdate, the result checked
 * each time; a pick of a kernel the graph never loaded is refused before
 * the driver is asked, the exec as it was. */
static void set_var_changes_a_picked_kernel(void **state)
{
    (void)state;
    static const char pick[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "vars: {N: 262147, A: 2, P: 0}\n"
        "buffers:\n"
        "  x: {type: f32, count: N, init: random}\n"
        "  y: {type: f32, count: N}\n"
        "  v: {type: f32, count: N}\n"
        "nodes:\n"
        "  s:\n"
        "    kernel: {pick: P, from: [scale_f32, scale_f32_vec, scale_bf16]}\n"
        "    grid: 64\n"
        "    block: 256\n"
        "    args: [x, y, A, N]\n"
        "  t: {kernel: scale_f32_vec, grid: 64, block: 256, args: [x, v, 1.0, N]}\n";
    cudag_graph *g = gpu_load(pick);
    cudag_exec *x = gpu_instantiate(g, exec_flags, NULL);
    const uint32_t s = cudag__find_node(x->g, "s"), t = cudag__find_node(x->g, "t");
    uint64_t seed = tseed();
    float *hx = malloc(N * sizeof *hx), *want = malloc(N * sizeof *want);
    assert_true(hx && want);
    cudag_error e;
    for (int k = 0; k < 4; k++) {
        const int p = k % 2, a = (int)trand(&seed, -8, 8);
        gpu_ok(cudag_exec_set_var(x, "P", p, &e), &e, "set_var P");
        gpu_ok(cudag_exec_set_var(x, "A", a, &e), &e, "set_var A");
        /* scale_f32_vec is t's kernel: s launches the same function or not */
        assert_int_equal(x->launch.k[s].fn == x->launch.k[t].fn, p == 1);
        gpu_random(&seed, hx, N);
        for (long i = 0; i < N; i++)
            want[i] = (float)a * hx[i];
        gpu_write(x, "x", hx, N);
        gpu_poison(x, "y", N);
        gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
        float *got = gpu_read(x, "y", N);
        char msg[64];
        snprintf(msg, sizeof msg, "pick %d, A = %d", p, a);
        gpu_expect(msg, got, want, N);
        free(got);
    }
    assert_int_equal(cudag_exec_set_var(x, "P", 2, &e), CUDAG_ENOTSUP);
    printf("# %s\n", e.message);
    assert_non_null(strstr(e.message, "launch kernel 'scale_bf16', which the "
                                      "instantiated graph does not use"));
    assert_true(x->launch.k[s].fn == x->launch.k[t].fn);
    free(hx);
    free(want);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static int device_launch(void **state)
{
    (void)state;
    exec_flags = CUDAG_DEVICE_LAUNCH;
    return 0;
}

static int host_launch(void **state)
{
    (void)state;
    exec_flags = 0;
    return 0;
}

#define BOTH(t)                                                                \
    cmocka_unit_test_setup_teardown(t, host_launch, host_launch),             \
        cmocka_unit_test_setup_teardown(t, device_launch, host_launch)

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        BOTH(set_arg_changes_the_result),
        BOTH(set_var_changes_a_picked_kernel),
        BOTH(rebound_buffers_are_used),
        BOTH(set_var_updates_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
