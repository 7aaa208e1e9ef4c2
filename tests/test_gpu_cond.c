/* test_gpu_cond.c — conditional nodes on the GPU: graphs/loop.yaml (K
 * iterations decided by cond_count_i32) and graphs/jacobi.yaml (Jacobi
 * sweeps until the largest change is below a tolerance, or MAXIT
 * iterations) against CPU references on fresh random data with every output
 * poisoned first, with and without programmatic edges, over several launches
 * back to back; a loop's starting value changed between launches
 * (cudag_exec_set_condition) and its count changed (cudag_exec_set_var);
 * nodes inside a body updated in place (set_arg, rebind_buffer);
 * if/else and switch nodes choosing from data, nested in a loop; a loop
 * ended by a threshold (cond_ge_f32) and util_count_i32's flag. */
#include "gpu_common.h"

#define RUNS 5

static cudag_graph *load_path(const char *path, const char *const *defines)
{
    tdiag d;
    cudag_options o = topts(&d, defines);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(path, &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("loading %s: %s\n%s", path, cudag_status_name(rc), d.text);
    return g;
}

static int read_i32(cudag_exec *x, const char *b)
{
    int v = 0;
    cudag_error e;
    gpu_ok(cudag_exec_read(x, b, &v, sizeof v, &e), &e, b);
    return v;
}

static void write_i32(cudag_exec *x, const char *b, int v)
{
    cudag_error e;
    gpu_ok(cudag_exec_write(x, b, &v, sizeof v, &e), &e, b);
}

static long var(const cudag_graph *g, const char *name)
{
    uint32_t v = cudag__find_var(g, name);
    assert_int_not_equal(v, CUDAG__NONE);
    return (long)g->vars[v].value;
}

static void launch_sync(cudag_exec *x, unsigned times)
{
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, times, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
}

/* ---- graphs/loop.yaml ------------------------------------------------------ */

/* K iterations of y = fmaf(0.5, x, y); y = 0.5·y, as axpy_f32 and
 * scale_f32 compute them. */
static void ref_loop(const float *x, float *y, long n, long k)
{
    for (long it = 0; it < k; it++)
        for (long i = 0; i < n; i++)
            y[i] = 0.5f * fmaf(0.5f, x[i], y[i]);
}

/* Fresh x and y, poisoned counter; the reference applied `launches` times. */
static void loop_run(cudag_exec **xs, int nx, long n, long k,
                     unsigned launches, uint64_t *seed)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_true(x && y);
    gpu_random(seed, x, (size_t)n);
    gpu_random(seed, y, (size_t)n);
    for (int i = 0; i < nx; i++) {
        gpu_write(xs[i], "x", x, (size_t)n);
        gpu_write(xs[i], "y", y, (size_t)n);
        write_i32(xs[i], "it", (int)0xa5a5a5a5);
        launch_sync(xs[i], launches);
    }
    for (unsigned l = 0; l < launches; l++)
        ref_loop(x, y, n, k);
    for (int i = 0; i < nx; i++) {
        float *got = gpu_read(xs[i], "y", (size_t)n);
        gpu_expect(i ? "loop (--no-pdl): y" : "loop: y", got, y, (size_t)n);
        free(got);
        assert_int_equal(read_i32(xs[i], "it"), k);
    }
    free(x);
    free(y);
}

static void loop_matches_reference(void **state)
{
    (void)state;
    cudag_graph *g = load_path(tsrc("graphs/loop.yaml"), NULL);
    long n = var(g, "N"), k = var(g, "K");
    cudag_exec *xs[2] = {gpu_instantiate(g, 0, NULL),
                         gpu_instantiate(g, CUDAG_NO_PDL, NULL)};
    uint64_t seed = tseed();
    for (int run = 0; run < RUNS; run++)
        loop_run(xs, 2, n, k, 1, &seed);
    /* Launches back to back: each starts from the default again. */
    loop_run(xs, 2, n, k, 3, &seed);
    printf("# loop: %d runs of %ld iterations and 3 launches back to back, "
           "identical with and without PDL\n",
           RUNS, k);

    /* A start of 0 skips the body; 1 again runs it K times. */
    cudag_error e;
    gpu_ok(cudag_exec_set_condition(xs[0], "more", 0, &e), &e,
           "cudag_exec_set_condition");
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_true(x && y);
    gpu_random(&seed, x, (size_t)n);
    gpu_random(&seed, y, (size_t)n);
    gpu_write(xs[0], "x", x, (size_t)n);
    gpu_write(xs[0], "y", y, (size_t)n);
    write_i32(xs[0], "it", 77);
    launch_sync(xs[0], 2);
    float *got = gpu_read(xs[0], "y", (size_t)n);
    gpu_expect("loop started at 0: y", got, y, (size_t)n);
    free(got);
    assert_int_equal(read_i32(xs[0], "it"), 0);
    gpu_ok(cudag_exec_set_condition(xs[0], "more", 1, &e), &e,
           "cudag_exec_set_condition");
    loop_run(xs, 1, n, k, 1, &seed);
    /* Another count: the graph is lowered again and the exec updated. */
    gpu_ok(cudag_exec_set_var(xs[0], "K", 7, &e), &e, "cudag_exec_set_var");
    loop_run(xs, 1, n, 7, 2, &seed);
    free(x);
    free(y);
    cudag_exec_destroy(xs[0]);
    cudag_exec_destroy(xs[1]);
    cudag_graph_destroy(g);
}

/* A node inside a body updated in the instantiated graph: the counter's k
 * (cudag_exec_set_arg by full name) and the buffer the body scales
 * (cudag_exec_rebind_buffer). */
static void body_nodes_update_in_place(void **state)
{
    (void)state;
    cudag_graph *g = load_path(tsrc("graphs/loop.yaml"), NULL);
    long n = var(g, "N");
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    cudag_error e;
    cudag_arg k = cudag_arg_int(5);
    gpu_ok(cudag_exec_set_arg(x, "loop.next", 1, &k, &e), &e,
           "cudag_exec_set_arg(loop.next)");
    loop_run(&x, 1, n, 5, 1, &seed);
    /* y moves to memory of the test's own: the body follows it. */
    uint64_t dptr = 0, bytes = 0;
    gpu_ok(cudag_exec_buffer(x, "y", &dptr, &bytes, &e), &e, "buffer y");
    const cudag__drv *d = gpu_drv();
    CUdeviceptr other = 0;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    if (d->cuMemAlloc(&other, bytes) != CUDA_SUCCESS)
        fail_msg("cuMemAlloc");
    cudag__exec_leave(x);
    gpu_ok(cudag_exec_rebind_buffer(x, "y", other, &e), &e, "rebind y");
    loop_run(&x, 1, n, 5, 1, &seed);
    /* Every launch was synchronized: the memory is free to go. */
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    if (d->cuMemFree(other) != CUDA_SUCCESS)
        fail_msg("cuMemFree");
    cudag__exec_leave(x);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* ---- graphs/jacobi.yaml ------------------------------------------------------ */

/* One sweep as jacobi_f32 computes it; returns the largest change. */
static float sweep(const float *u, float *v, const float *f, int nx, int ny)
{
    float worst = 0.0f;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            long p = (long)j * nx + i;
            float c = u[p], out = c;
            if (i > 0 && j > 0 && i < nx - 1 && j < ny - 1)
                out = 0.25f * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx] +
                               f[p]);
            v[p] = out;
            worst = fmaxf(worst, fabsf(out - c));
        }
    return worst;
}

/* The loop of the graph: iterations of two sweeps until the last largest
 * change is below tol or maxit iterations; returns the iterations, *last
 * the largest change of the last one. */
static int ref_jacobi(float *u, float *v, const float *f, int nx, int ny,
                      float tol, long maxit, float *last)
{
    int it = 0;
    for (;;) {
        /* In this order: the second sweep reads what the first wrote (as
         * arguments of one call, their order would be the compiler's). */
        float even = sweep(u, v, f, nx, ny);
        float odd = sweep(v, u, f, nx, ny);
        float r = fmaxf(even, odd);
        *last = r;
        it++;
        if (!(r >= tol && it < maxit))
            return it;
    }
}

static void jacobi_run(cudag_exec **xs, int nx_execs, const cudag_graph *g,
                       long maxit, uint64_t *seed, int *iterations)
{
    int nx = (int)var(g, "NX"), ny = (int)var(g, "NY");
    size_t n = (size_t)nx * (size_t)ny;
    float *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v),
          *f = malloc(n * sizeof *f);
    assert_true(u && v && f);
    gpu_random(seed, u, n);
    gpu_random(seed, f, n);
    for (size_t i = 0; i < n; i++)
        f[i] = (f[i] + 1.0f) * 0.0005f;
    for (int k = 0; k < nx_execs; k++) {
        gpu_write(xs[k], "u", u, n);
        gpu_write(xs[k], "f", f, n);
        gpu_poison(xs[k], "v", n);
        gpu_poison(xs[k], "r", 2);
        write_i32(xs[k], "it", -12345);
        launch_sync(xs[k], 1);
    }
    float last;
    int it = ref_jacobi(u, v, f, nx, ny, 1e-6f, maxit, &last);
    for (int k = 0; k < nx_execs; k++) {
        const char *how = k ? " (--no-pdl)" : "";
        char what[64];
        float *got = gpu_read(xs[k], "u", n);
        snprintf(what, sizeof what, "jacobi%s: u", how);
        gpu_expect(what, got, u, n);
        free(got);
        got = gpu_read(xs[k], "v", n);
        snprintf(what, sizeof what, "jacobi%s: v", how);
        gpu_expect(what, got, v, n);
        free(got);
        got = gpu_read(xs[k], "r", 2);
        snprintf(what, sizeof what, "jacobi%s: r[1]", how);
        gpu_expect(what, &got[1], &last, 1);
        free(got);
        assert_int_equal(read_i32(xs[k], "it"), it);
    }
    *iterations = it;
    free(u);
    free(v);
    free(f);
}

static void jacobi_matches_reference(void **state)
{
    (void)state;
    cudag_graph *g = load_path(tsrc("graphs/jacobi.yaml"), NULL);
    long maxit = var(g, "MAXIT");
    cudag_exec *xs[2] = {gpu_instantiate(g, 0, NULL),
                         gpu_instantiate(g, CUDAG_NO_PDL, NULL)};
    uint64_t seed = tseed();
    int it = 0, converged = 0;
    for (int run = 0; run < RUNS; run++) {
        jacobi_run(xs, 2, g, maxit, &seed, &it);
        assert_true(it > 10);
        /* In f32 a sweep's largest change may stall above TOL on some data:
         * the bound then stops the loop, as the reference's did. */
        converged += it < maxit;
    }
    printf("# jacobi: %d runs, %d converged before MAXIT, %d iterations (the "
           "last), identical to the CPU and with and without PDL\n",
           RUNS, converged, it);
    assert_true(converged > 0);
    /* The bound: MAXIT 7 stops after 7 iterations. */
    cudag_error e;
    gpu_ok(cudag_exec_set_var(xs[0], "MAXIT", 7, &e), &e, "set MAXIT");
    jacobi_run(xs, 1, g, 7, &seed, &it);
    assert_int_equal(it, 7);
    cudag_exec_destroy(xs[0]);
    cudag_exec_destroy(xs[1]);
    cudag_graph_destroy(g);
}

/* ---- branches ------------------------------------------------------------------- */

/* Per outer iteration (3): if x[0] < 0 then y = 2y else y = 3y; then the
 * case pick[0] of y = 5y, y = 7y, nothing, y = 11y (none past 3). */
static const char branches_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 4096}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  y: {type: f32, count: N, init: random}\n"
    "  pick: {type: i32, count: 1}\n"
    "  it: {type: i32, count: 1}\n"
    "conditions:\n"
    "  outer: {default: 1}\n"
    "  neg: {}\n"
    "  which: {}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  loop:\n"
    "    while: outer\n"
    "    after: reset\n"
    "    body:\n"
    "      test: {kernel: cond_lt_f32, grid: 1, block: 32, args: [x, 0.0, neg]}\n"
    "      sign:\n"
    "        if: neg\n"
    "        after: test\n"
    "        then: {a: {kernel: scale_f32, grid: 2, block: 256, args: [y, y, 2.0, N]}}\n"
    "        else: {b: {kernel: scale_f32, grid: 2, block: 256, args: [y, y, 3.0, N]}}\n"
    "      choose: {kernel: cond_index_i32, grid: 1, block: 32, args: [pick, which], after: sign}\n"
    "      route:\n"
    "        switch: which\n"
    "        after: choose\n"
    "        cases:\n"
    "          - {c: {kernel: scale_f32, grid: 2, block: 256, args: [y, y, 5.0, N]}}\n"
    "          - {c: {kernel: scale_f32, grid: 2, block: 256, args: [y, y, 7.0, N]}}\n"
    "          - {}\n"
    "          - {c: {kernel: scale_f32, grid: 2, block: 256, args: [y, y, 11.0, N]}}\n"
    "      next: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, 3, outer], after: route}\n";

static void branches_follow_the_data(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(branches_yaml);
    const size_t n = 4096;
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    static const float factor[] = {5.0f, 7.0f, 1.0f, 11.0f};
    float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy);
    assert_true(hx && hy);
    for (int run = 0; run < 16; run++) {
        gpu_random(&seed, hx, n);
        gpu_random(&seed, hy, n);
        /* -1 .. 4: -1 and 4 run no case. */
        int pick = (int)(trand(&seed, 0.0, 6.0)) - 1;
        gpu_write(x, "x", hx, n);
        gpu_write(x, "y", hy, n);
        write_i32(x, "pick", pick);
        write_i32(x, "it", 99);
        launch_sync(x, 1);
        float f = pick >= 0 && pick < 4 ? factor[pick] : 1.0f;
        for (int it = 0; it < 3; it++)
            for (size_t i = 0; i < n; i++) {
                hy[i] = (hx[0] < 0.0f ? 2.0f : 3.0f) * hy[i];
                if (f != 1.0f)
                    hy[i] = f * hy[i];
            }
        float *got = gpu_read(x, "y", n);
        char what[64];
        snprintf(what, sizeof what, "branches (x[0] %s 0, case %d): y",
                 hx[0] < 0.0f ? "<" : ">=", pick);
        gpu_expect(what, got, hy, n);
        free(got);
        assert_int_equal(read_i32(x, "it"), 3);
    }
    printf("# branches: 16 runs, each branch and case as the data chose\n");
    free(hx);
    free(hy);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* cond_ge_f32 ends a loop when x[0] falls below a threshold; util_count_i32
 * is cond_count_i32 with the flag in memory. */
static const char halving_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 1000}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  it: {type: i32, count: 1}\n"
    "  flag: {type: i32, count: 1}\n"
    "conditions: {more: {default: 1}}\n"
    "nodes:\n"
    "  loop:\n"
    "    while: more\n"
    "    body:\n"
    "      half: {kernel: scale_f32, grid: 1, block: 96, args: [x, x, 0.5, N]}\n"
    "      test: {kernel: cond_ge_f32, grid: 1, block: 32, args: [x, 0.01, more],\n"
    "             after: {half: programmatic}}\n"
    "  tally: {kernel: util_count_i32, grid: 1, block: 32, args: [it, 3, flag],\n"
    "          after: loop}\n";

static void setters_do_what_they_say(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(halving_yaml);
    const size_t n = 1000;
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    float *hx = malloc(n * sizeof *hx);
    assert_non_null(hx);
    for (int run = 0; run < 5; run++) {
        gpu_random(&seed, hx, n);
        hx[0] = 1.0f + (float)trand(&seed, 0.0, 1000.0);
        gpu_write(x, "x", hx, n);
        write_i32(x, "it", run);
        write_i32(x, "flag", -1);
        launch_sync(x, 1);
        do
            for (size_t i = 0; i < n; i++)
                hx[i] = 0.5f * hx[i];
        while (hx[0] >= 0.01f);
        float *got = gpu_read(x, "x", n);
        gpu_expect("halving: x", got, hx, n);
        free(got);
        assert_int_equal(read_i32(x, "it"), run + 1);
        assert_int_equal(read_i32(x, "flag"), run + 1 < 3);
    }
    free(hx);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_matches_reference),
        cmocka_unit_test(body_nodes_update_in_place),
        cmocka_unit_test(jacobi_matches_reference),
        cmocka_unit_test(branches_follow_the_data),
        cmocka_unit_test(setters_do_what_they_say),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
