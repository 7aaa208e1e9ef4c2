/* test_gpu_child.c — child-graph nodes (`graph: file.yaml`) on the GPU: one
 * layer file used L times with its own variables, against a CPU reference
 * on fresh random data with poisoned outputs; a programmatic edge inside
 * the layer, and the copies chained by programmatic edges (each built
 * inline); a scalar argument of a node inside one copy changed
 * (cudag_exec_set_arg by full name), a buffer the layers use rebound to the
 * program's memory, and a variable of the parent set (the child files
 * lowered again); a gemm inside the layer file, rebound.  Skips (77)
 * without a device; the gemm test skips without cuBLASLt. */
#include "gemm_ref.h"
#include "gpu_common.h"

#define N 40000 /* elements per layer: not a multiple of the block */
#define L 4

/* The layer: y_i = A·x_i, then z += y_i.  The edge is EDGE. */
#define LAYER(EDGE)                                                            \
    "vars: {OFF: 0, N: 1, A: 1}\n"                                             \
    "nodes:\n"                                                                 \
    "  s: {kernel: scale_f32, grid: \"cdiv(N, 256)\", block: 256,\n"             \
    "      args: [x + OFF, y + OFF, A, N]}\n"                                  \
    "  p: {kernel: axpy_f32, grid: \"cdiv(N, 256)\", block: 256,\n"              \
    "      args: [y + OFF, z, 1.0, N], after: [s" EDGE "]}\n"

/* The parent: z cleared, then the layers in a chain, layer i scaling by
 * i + 2 (or by SCALE + i once SCALE is set). */
static const char parent[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 40000, L: 4, SCALE: 2}\n"
    "buffers:\n"
    "  x: {type: f32, count: N*L}\n"
    "  y: {type: f32, count: N*L}\n"
    "  z: {type: f32, count: N}\n"
    "nodes:\n"
    "  clear: {memset: z, value: 0}\n"
    "  layer[i in L]:\n"
    "    graph: layer.yaml\n"
    "    vars: {OFF: i*N, N: N, A: SCALE + i}\n"
    "    after: [clear, \"layer[i-1]\"]\n";

/* The parent yaml loaded as DIR/parent.yaml, with `layer` written beside it
 * as layer.yaml; dir is a fresh directory (trm_tree removes it). */
static cudag_graph *load_beside(const char *dir, const char *layer,
                                const char *yaml)
{
    twrite(dir, "layer.yaml", layer);
    char name[4200];
    snprintf(name, sizeof name, "%s/parent.yaml", dir);
    return gpu_load_as(yaml, name);
}

/* One replay on fresh x with y and z poisoned, against the reference:
 * y_i = a_i·x_i, z = (((0 + y_0) + y_1) + …) in layer order, every add an
 * fmaf(1, y, z) as axpy_f32 computes it. */
static void run_and_check(cudag_exec *x, const float *a, uint64_t *seed,
                          const char *what)
{
    float *hx = malloc(N * L * sizeof *hx), *wy = malloc(N * L * sizeof *wy),
          *wz = calloc(N, sizeof *wz);
    assert_true(hx && wy && wz);
    gpu_random(seed, hx, N * L);
    for (int l = 0; l < L; l++)
        for (long i = 0; i < N; i++) {
            wy[l * N + i] = a[l] * hx[l * N + i];
            wz[i] = fmaf(1.0f, wy[l * N + i], wz[i]);
        }
    gpu_write(x, "x", hx, N * L);
    gpu_poison(x, "y", N * L);
    gpu_poison(x, "z", N);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    char msg[200];
    float *got = gpu_read(x, "y", N * L);
    snprintf(msg, sizeof msg, "%s: y", what);
    gpu_expect(msg, got, wy, N * L);
    free(got);
    got = gpu_read(x, "z", N);
    snprintf(msg, sizeof msg, "%s: z", what);
    gpu_expect(msg, got, wz, N);
    free(got);
    free(hx), free(wy), free(wz);
}

static void layers_match_the_reference(const char *edge_layer)
{
    const char *dir = tmkdir("child");
    cudag_graph *g = load_beside(dir, edge_layer, parent);
    trm_tree(dir); /* the loaded graph holds what it read */
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    float a[L] = {2, 3, 4, 5};
    for (int r = 0; r < 3; r++)
        run_and_check(x, a, &seed, "as loaded");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static void layers_with_full_edges(void **state)
{
    (void)state;
    layers_match_the_reference(LAYER(""));
}

static void layers_with_a_programmatic_edge_inside(void **state)
{
    (void)state;
    layers_match_the_reference(LAYER(": programmatic"));
}

/* The layers chained by programmatic edges: each copy built inline, the
 * edge from the last kernel of one (p) to the first of the next (s); the
 * copies' updates by full name as above.  No edge downgraded on a device
 * with PDL (compute capability 9.0 and up). */
static const char parent_pdl[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 40000, L: 4, SCALE: 2}\n"
    "buffers:\n"
    "  x: {type: f32, count: N*L}\n"
    "  y: {type: f32, count: N*L}\n"
    "  z: {type: f32, count: N}\n"
    "nodes:\n"
    "  clear: {memset: z, value: 0}\n"
    "  layer[i in L]:\n"
    "    graph: layer.yaml\n"
    "    vars: {OFF: i*N, N: N, A: SCALE + i}\n"
    "    after: [clear, \"layer[i-1]\": programmatic]\n";

static void layers_chained_by_programmatic_edges(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmkdir("child"));
    cudag_graph *g = load_beside(dir, LAYER(": programmatic"), parent_pdl);
    trm_tree(dir); /* set_var below lowers the layer file as loaded */
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    cudag_error e;
    cudag_exec_stats st;
    gpu_ok(cudag_exec_get_stats(x, &st), &e, "stats");
    if (x->gpu.cc_major >= 9)
        assert_int_equal(st.downgraded_edges, 0);
    uint64_t seed = tseed();
    float a[L] = {2, 3, 4, 5};
    for (int r = 0; r < 3; r++)
        run_and_check(x, a, &seed, "chained by programmatic edges");
    cudag_arg arg = cudag_arg_float(-1.5f);
    gpu_ok(cudag_exec_set_arg(x, "layer[1].s", 2, &arg, &e), &e,
           "cudag_exec_set_arg(layer[1].s)");
    a[1] = -1.5f;
    run_and_check(x, a, &seed, "chained, layer[1].s's scale set");
    gpu_ok(cudag_exec_set_var(x, "SCALE", 3, &e), &e, "set_var SCALE");
    for (int l = 0; l < L; l++)
        a[l] = (float)(3 + l);
    run_and_check(x, a, &seed, "chained, SCALE = 3");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* set_arg on a node inside one copy of the layer, then a rebound buffer
 * that every copy uses, then a parent variable that every copy reads. */
static void nodes_inside_copies_are_updated(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmkdir("child"));
    cudag_graph *g = load_beside(dir, LAYER(": programmatic"), parent);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    cudag_error e;
    float a[L] = {2, 3, 4, 5};
    run_and_check(x, a, &seed, "before any update");

    /* One copy's scalar: the other copies keep theirs. */
    for (int r = 0; r < 5; r++) {
        a[2] = (float)trand(&seed, -4.0, 4.0);
        cudag_arg arg = cudag_arg_float(a[2]);
        gpu_ok(cudag_exec_set_arg(x, "layer[2].s", 2, &arg, &e), &e,
               "cudag_exec_set_arg(layer[2].s)");
        run_and_check(x, a, &seed, "layer[2].s's scale set");
    }

    /* x moved to the program's memory: every copy's s reads it there. */
    const cudag__drv *d = gpu_drv();
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    CUdeviceptr mine = 0;
    assert_int_equal(d->cuMemAlloc(&mine, N * L * sizeof(float)),
                     CUDA_SUCCESS);
    cudag__exec_leave(x);
    uint64_t old;
    gpu_ok(cudag_exec_buffer(x, "x", &old, NULL, &e), &e, "buffer");
    gpu_ok(cudag_exec_rebind_buffer(x, "x", mine, &e), &e, "rebind x");
    run_and_check(x, a, &seed, "x rebound"); /* written through the rebind */
    gpu_ok(cudag_exec_rebind_buffer(x, "x", old, &e), &e, "rebind x back");
    run_and_check(x, a, &seed, "x bound back");
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    assert_int_equal(d->cuMemFree(mine), CUDA_SUCCESS);
    cudag__exec_leave(x);

    /* A parent variable: the child files are lowered again (the one set by
     * set_arg above is lost: the graph is the file's again). */
    gpu_ok(cudag_exec_set_var(x, "SCALE", -3, &e), &e, "set_var SCALE");
    for (int l = 0; l < L; l++)
        a[l] = (float)(-3 + l);
    run_and_check(x, a, &seed, "SCALE = -3");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    trm_tree(dir);
}

/* A gemm inside the layer file: d_i = a_i·w for each copy, w shared. */
#define M 8
#define K 96
#define NN 80
static void gemm_inside_a_child_graph(void **state)
{
    (void)state;
    static const char layer[] =
        "vars: {I: 0, M: 1, K: 1, NN: 1}\n"
        "nodes:\n"
        "  mm: {gemm: {m: M, n: NN, k: K, a: a + I*M*K, b: w,\n"
        "              d: d + I*M*NN}}\n";
    static const char top[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "vars: {M: 8, K: 96, NN: 80, L: 4}\n"
        "buffers:\n"
        "  a: {type: f32, count: L*M*K}\n"
        "  w: {type: f32, count: K*NN}\n"
        "  d: {type: f32, count: L*M*NN}\n"
        "nodes:\n"
        "  layer[i in L]:\n"
        "    graph: layer.yaml\n"
        "    vars: {I: i, M: M, K: K, NN: NN}\n"
        "    after: [\"layer[i-1]\"]\n";
    const char *dir = tmkdir("child");
    cudag_graph *g = load_beside(dir, layer, top);
    trm_tree(dir);
    cudag_exec *x = gpu_instantiate_gemm(g);
    if (!x) {
        cudag_graph_destroy(g);
        skip();
    }
    cudag_error e;
    const gr_gemm r = {L * M, NN, K, 1, 0, 0, {0}, {K, NN, NN, NN}, {0},
                       1.0, 0.0, CUDAG_EPILOGUE_NONE, 0};
    uint64_t seed = tseed();
    const cudag__drv *drv = gpu_drv();
    CUdeviceptr mine = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1) { /* w moved: every copy's gemm is recorded again */
            gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
            assert_int_equal(drv->cuMemAlloc(&mine, K * NN * sizeof(float)),
                             CUDA_SUCCESS);
            cudag__exec_leave(x);
            gpu_ok(cudag_exec_rebind_buffer(x, "w", mine, &e), &e,
                   "rebind w");
        }
        float *ha = malloc(L * M * K * sizeof *ha),
              *hw = malloc(K * NN * sizeof *hw);
        double *want = malloc(L * M * NN * sizeof *want);
        assert_true(ha && hw && want);
        gpu_random(&seed, ha, L * M * K);
        gpu_random(&seed, hw, K * NN);
        gpu_write(x, "a", ha, L * M * K);
        gpu_write(x, "w", hw, K * NN);
        gpu_poison(x, "d", L * M * NN);
        gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
        float *got = gpu_read(x, "d", L * M * NN);
        /* The L copies' m×k blocks stacked are one (L·M)×k product. */
        gr_reference(&r, ha, hw, NULL, NULL, want);
        int bad;
        double err = gr_error(&r, got, want, &bad);
        printf("# gemm in child graphs, round %d: error %.2g\n", round, err);
        if (bad || !(err <= 1e-5))
            fail_msg("round %d: error %.3g, %d non-finite", round, err, bad);
        free(ha), free(hw), free(want), free(got);
    }
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    assert_int_equal(drv->cuMemFree(mine), CUDA_SUCCESS);
    cudag__exec_leave(x);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layers_with_full_edges),
        cmocka_unit_test(layers_with_a_programmatic_edge_inside),
        cmocka_unit_test(nodes_inside_copies_are_updated),
        cmocka_unit_test(layers_chained_by_programmatic_edges),
        cmocka_unit_test(gemm_inside_a_child_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
