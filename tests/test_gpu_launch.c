/* test_gpu_launch.c — a kernel node's launch properties on the GPU (suite
 * gpu; exits 77 saying why without a device, NVRTC or compute capability
 * 9.0): graphs/cluster_norm.yaml (a cluster of 8 CTAs exchanging partial
 * sums through distributed shared memory, 112 KiB of dynamic shared memory,
 * a programmatic edge, a priority) against a CPU reference on fresh random
 * data with outputs poisoned first, as a graph and as stream launches; the
 * C API's cudag_set_kernel_cluster seen from inside the kernel (each block
 * writes its rank in its cluster), a non-portable cluster of 16 blocks, and
 * node priorities instantiated with the flag that makes them count. */
#include "gpu_common.h"
#include "cudag.h"
#include "lib/driver.h"
#include "lib/nvrtc.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "gpu/gpu.h"
#include "exec/exec.h"

#include <stddef.h>
#include <stdint.h>

#define RUNS 3

/* ---- graphs/cluster_norm.yaml ------------------------------------------ */

/* x = fma(0.5, u, 0.25) exactly; y = RMSNorm of each row of x · gamma,
 * within 1e-5 of the double-precision reference. */
static void check_norm(cudag_exec *x, const cudag_graph *g, uint64_t *seed,
                       cudag_replay how, const char *what)
{
    size_t rows = (size_t)gpu_var(g, "ROWS");
    size_t width = (size_t)(gpu_var(g, "CLUSTER") * gpu_var(g, "SLICE"));
    size_t n = rows * width;
    float *u = malloc(n * sizeof *u), *gam = malloc(width * sizeof *gam);
    float *wx = malloc(n * sizeof *wx);
    assert_true(u && gam && wx);
    gpu_random(seed, u, n);
    gpu_random(seed, gam, width);
    gpu_write(x, "u", u, n);
    gpu_write(x, "gamma", gam, width);
    gpu_poison(x, "x", n);
    gpu_poison(x, "y", n);
    cudag_error e;
    gpu_ok(cudag_exec_replay(x, how, 1, &e), &e, "replay");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    float *gx = gpu_read(x, "x", n), *gy = gpu_read(x, "y", n);
    for (size_t i = 0; i < n; i++)
        wx[i] = fmaf(0.5f, u[i], 0.25f);
    gpu_expect(what, gx, wx, n);
    double worst = 0;
    for (size_t r = 0; r < rows; r++) {
        double ss = 0;
        for (size_t i = 0; i < width; i++)
            ss += (double)wx[r * width + i] * wx[r * width + i];
        double k = 1.0 / sqrt(ss / (double)width + 1e-6);
        for (size_t i = 0; i < width; i++) {
            double want = wx[r * width + i] * k * gam[i];
            double got = gy[r * width + i];
            if (!isfinite(got))
                fail_msg("%s: y[%zu] = %g (poison left: a block did not "
                         "write)",
                         what, r * width + i, got);
            double err = fabs(got - want) / (fabs(want) + 1e-3);
            if (err > worst)
                worst = err;
        }
    }
    if (!(worst <= 1e-5))
        fail_msg("%s: y differs from the reference by %.3g (relative)", what,
                 worst);
    free(gx);
    free(gy);
    free(u);
    free(gam);
    free(wx);
}

static void cluster_norm_matches_reference(void **state)
{
    (void)state;
    tdiag d;
    cudag_options o = topts(&d, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(tsrc("graphs/cluster_norm.yaml"), &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("loading: %s\n%s", cudag_status_name(rc), d.text);
    tdiag xd;
    cudag_exec *x = gpu_instantiate(g, 0, &xd);
    /* The edge stays programmatic: the kernel's wait is in its code. */
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    assert_int_equal(st.downgraded_edges, 0);
    assert_int_equal(xd.nwarn, 0);
    /* The node's launch description carries the cluster and the priority,
     * and the exec was instantiated with node priorities on. */
    long norm = cudag_graph_find_node(g, "norm");
    assert_true(norm >= 0);
    const cudag__launch *L = &x->launch.k[norm];
    assert_int_equal(L->cluster[0], 8);
    assert_int_equal(L->cluster[1], 1);
    assert_int_equal(L->cluster[2], 1);
    assert_true(L->has_priority);
    assert_int_equal(L->priority, -1);
    assert_true(L->smem > 48 * 1024);
    assert_true(cudag__instantiate_flags(x) &
                CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    uint64_t seed = tseed();
    char what[64];
    for (int run = 0; run < RUNS; run++) {
        snprintf(what, sizeof what, "cluster_norm, graph, run %d", run);
        check_norm(x, g, &seed, CUDAG_REPLAY_GRAPH, what);
    }
    /* The same launches on the stream (cuLaunchKernelEx with the cluster,
     * priority and PDL attributes). */
    check_norm(x, g, &seed, CUDAG_REPLAY_STREAM_PDL,
               "cluster_norm, stream launches + PDL");
    check_norm(x, g, &seed, CUDAG_REPLAY_GRAPH_FULL,
               "cluster_norm, every edge full");
    printf("# cluster_norm: %d verified graph runs, stream and full-edge "
           "replays (cluster 8, %u bytes of dynamic shared memory)\n",
           RUNS, L->smem);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* ---- cluster and priority through the C API ------------------------------ */

static const char rank_src[] =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "/* Each block writes its rank in its cluster and the cluster's size. */\n"
    "extern \"C\" __global__ void cluster_rank(int *out) {\n"
    "    cg::cluster_group c = cg::this_cluster();\n"
    "    if (threadIdx.x == 0)\n"
    "        out[blockIdx.x] = (int)(c.block_rank() + 100 * c.num_blocks());\n"
    "}\n"
    "extern \"C\" __global__ void fill(int *out, int v) {\n"
    "    out[blockIdx.x] = v;\n"
    "}\n";

/* A graph of one cluster_rank node over `blocks` blocks in clusters of
 * `cluster`, and a fill node with a priority after it. */
static cudag_graph *rank_graph(unsigned blocks, unsigned cluster)
{
    cudag_graph *g;
    cudag_error e;
    gpu_ok(cudag_graph_create("ranks", &g, &e), &e, "create");
    gpu_ok(cudag_add_module_source(g, "m", rank_src, NULL, &e), &e, "source");
    gpu_ok(cudag_add_buffer(g, "out", CUDAG_TYPE_I32, blocks, NULL, &e), &e,
           "out");
    gpu_ok(cudag_add_buffer(g, "tail", CUDAG_TYPE_I32, 1, NULL, &e), &e,
           "tail");
    cudag_arg a[] = {cudag_arg_buffer("out", 0)};
    cudag_arg b[] = {cudag_arg_buffer("tail", 0), cudag_arg_int(7)};
    gpu_ok(cudag_add_kernel(g, "r", "cluster_rank", (cudag_dim3){blocks, 1, 1},
                            (cudag_dim3){32, 1, 1}, 0, a, 1, &e),
           &e, "rank node");
    gpu_ok(cudag_set_kernel_cluster(g, "r", (cudag_dim3){cluster, 1, 1}, &e),
           &e, "cluster");
    gpu_ok(cudag_add_kernel(g, "f", "fill", (cudag_dim3){1, 1, 1},
                            (cudag_dim3){1, 1, 1}, 0, b, 2, &e),
           &e, "fill node");
    gpu_ok(cudag_set_kernel_priority(g, "f", -5, &e), &e, "priority");
    gpu_ok(cudag_add_edge(g, "r", "f", CUDAG_EDGE_FULL, &e), &e, "edge");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    return g;
}

static void run_ranks(unsigned blocks, unsigned cluster)
{
    cudag_graph *g = rank_graph(blocks, cluster);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    assert_true(cudag__instantiate_flags(x) &
                CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    int *poison = malloc(blocks * sizeof *poison);
    assert_non_null(poison);
    for (cudag_replay how = CUDAG_REPLAY_STREAM; how <= CUDAG_REPLAY_GRAPH;
         how++) {
        cudag_error e;
        for (unsigned i = 0; i < blocks; i++)
            poison[i] = -1;
        gpu_ok(cudag_exec_write(x, "out", poison, blocks * sizeof *poison,
                                &e),
               &e, "poison");
        gpu_ok(cudag_exec_write(x, "tail", poison, sizeof *poison, &e), &e,
               "poison");
        gpu_ok(cudag_exec_replay(x, how, 1, &e), &e, "replay");
        gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
        int *got = malloc(blocks * sizeof *got), tail;
        assert_non_null(got);
        gpu_ok(cudag_exec_read(x, "out", got, blocks * sizeof *got, &e), &e,
               "read");
        gpu_ok(cudag_exec_read(x, "tail", &tail, sizeof tail, &e), &e, "read");
        for (unsigned i = 0; i < blocks; i++)
            if (got[i] != (int)(i % cluster + 100 * cluster))
                fail_msg("%s, cluster %u: block %u read rank %d of %d, "
                         "expected %u of %u",
                         cudag_replay_name(how), cluster, i, got[i] % 100,
                         got[i] / 100, i % cluster, cluster);
        assert_int_equal(tail, 7);
        free(got);
    }
    free(poison);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static void api_cluster_reaches_the_kernel(void **state)
{
    (void)state;
    run_ranks(64, 4);
    run_ranks(64, 8);
    printf("# clusters of 4 and 8 blocks: every block saw its rank\n");
}

/* 16 blocks: Hopper's non-portable size, which the build opts the function
 * in to. */
static void api_non_portable_cluster(void **state)
{
    (void)state;
    run_ranks(64, 16);
    printf("# a non-portable cluster of 16 blocks ran\n");
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
    const cudag__drv *d = gpu_drv();
    CUdevice dev;
    int major = 0;
    if (d->cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        d->cuDeviceGetAttribute(&major,
                                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                dev) != CUDA_SUCCESS) {
        printf("FAIL: cannot read the device's compute capability\n");
        return 1;
    }
    if (major < 9) {
        printf("SKIP: thread-block clusters need compute capability 9.0 "
               "(device 0 has %d.x)\n",
               major);
        return 77;
    }
    char cache[256];
    if (tmkdir_in(cache, sizeof cache, "gpulaunch") != 0 ||
        setenv("CUDAG_CACHE_DIR", cache, 1) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cluster_norm_matches_reference),
        cmocka_unit_test(api_cluster_reaches_the_kernel),
        cmocka_unit_test(api_non_portable_cluster),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    trm_tree(cache);
    return rc;
}
