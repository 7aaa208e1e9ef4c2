/* test_gpu_graphs.c — every graph in graphs/ on the GPU: built, instantiated
 * with programmatic edges and with CUDAG_NO_PDL, replayed on fresh random
 * inputs with every other buffer poisoned first, and compared bit for bit
 * with a CPU reference written here; then 100 replays back to back against
 * the reference applied 100 times.  Also: the programmatic and launch-order
 * edges read back from the instantiated CUgraph with their edge data. */
#include "gpu_common.h"

#include <dirent.h>

#define RUNS 25       /* verified single replays, each on fresh inputs */
#define BURST 100     /* replays back to back, verified at the end */

/* ---- references -------------------------------------------------------------- */

/* The host image of a graph's buffers, by name. */
typedef struct host {
    const cudag_graph *g;
    float **b;
} host;

static float *B(const host *h, const char *name)
{
    uint32_t i = cudag__find_buffer(h->g, name);
    if (i == CUDAG__NONE)
        fail_msg("graph '%s' has no buffer '%s'", h->g->name, name);
    return h->b[i];
}

static long V(const host *h, const char *name)
{
    uint32_t i = cudag__find_var(h->g, name);
    if (i == CUDAG__NONE)
        fail_msg("graph '%s' has no variable '%s'", h->g->name, name);
    return (long)h->g->vars[i].value;
}

/* The kernels' arithmetic: scale a·x, add a+b, axpy fmaf(a, x, y). */
static void scale(const float *x, float *y, float a, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = a * x[i];
}
static void add(const float *a, const float *b, float *y, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}
static void axpy(const float *x, float *y, float a, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = fmaf(a, x[i], y[i]);
}

static void ref_single(host *h)
{
    scale(B(h, "x"), B(h, "y"), 2.0f, V(h, "N"));
}

static void ref_diamond(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "t"), 2.0f, n);
    add(B(h, "t"), B(h, "x"), B(h, "l"), n);
    scale(B(h, "t"), B(h, "r"), 3.0f, n);
    add(B(h, "l"), B(h, "r"), B(h, "y"), n);
}

static void ref_fork_join(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "a"), 2.0f, n);
    scale(B(h, "x"), B(h, "b"), 3.0f, n);
    scale(B(h, "x"), B(h, "c"), 4.0f, n);
    add(B(h, "a"), B(h, "b"), B(h, "ab"), n);
    add(B(h, "ab"), B(h, "c"), B(h, "y"), n);
}

static void ref_memops(host *h)
{
    long n = V(h, "N"), hh = V(h, "H");
    float *acc = B(h, "acc");
    for (long i = 0; i < n; i++)
        acc[i] = 0.0f;
    memcpy(B(h, "saved"), B(h, "x"), (size_t)n * sizeof(float));
    axpy(B(h, "x"), acc, 2.0f, n);
    axpy(B(h, "saved"), acc, 3.0f, n);
    memcpy(B(h, "head"), acc, (size_t)hh * sizeof(float));
}

static void ref_pdl_chain(host *h)
{
    long n = V(h, "N");
    scale(B(h, "x"), B(h, "t"), 2.0f, n);
    add(B(h, "t"), B(h, "x"), B(h, "u"), n);
    axpy(B(h, "t"), B(h, "u"), 0.5f, n);
    memcpy(B(h, "y"), B(h, "u"), (size_t)n * sizeof(float));
}

static void ref_repeat(host *h)
{
    long n = V(h, "N"), depth = V(h, "DEPTH"), width = V(h, "WIDTH");
    for (long i = 0; i < depth; i++)
        scale(B(h, "h"), B(h, "h"), 1.01f, n);
    for (long b = 0; b < width; b++)
        scale(B(h, "x") + b * n, B(h, "y") + b * n, 0.5f, n);
    add(B(h, "h"), B(h, "y"), B(h, "out"), n);
}

static void ref_wavefront(host *h)
{
    long m = V(h, "M"), k = V(h, "K"), t = V(h, "T"), w = V(h, "W");
    float *W = B(h, "w");
    for (long i = 0; i < m; i++)
        for (long j = 0; j < k; j++)
            add(W + (i * w + j + 1) * t, W + ((i + 1) * w + j) * t,
                W + ((i + 1) * w + j + 1) * t, t);
}

/* Buffers a graph computes although they are declared `init: random`:
 * poisoned before each run like any output. */
static void poison_wavefront(host *h)
{
    long m = V(h, "M"), k = V(h, "K"), t = V(h, "T"), w = V(h, "W");
    float *W = B(h, "w");
    for (long i = 1; i <= m; i++)
        for (long j = 1; j <= k; j++)
            for (long e = 0; e < t; e++)
                W[(i * w + j) * t + e] = NAN;
}

static const struct reference {
    const char *graph;
    void (*ref)(host *h);
    void (*poison)(host *h);
} refs[] = {
    {"single", ref_single, NULL},
    {"diamond", ref_diamond, NULL},
    {"fork_join", ref_fork_join, NULL},
    {"memops", ref_memops, NULL},
    {"pdl_chain", ref_pdl_chain, NULL},
    {"repeat", ref_repeat, NULL},
    {"wavefront", ref_wavefront, poison_wavefront},
};

/* ---- running ----------------------------------------------------------------- */

static cudag_graph *load_file(const char *path)
{
    tdiag d;
    cudag_options o = topts(&d, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(path, &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("loading %s: %s\n%s", path, cudag_status_name(rc), d.text);
    return g;
}

/* Fresh inputs (every `init: random` buffer) and poison (every other
 * buffer, and what ref->poison names), in h and on both execs. */
static void prepare(host *h, const struct reference *r, cudag_exec **xs,
                    uint64_t *seed)
{
    const cudag_graph *g = h->g;
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        size_t n = g->buffers[b].count;
        if (g->buffers[b].init.kind == CUDAG_INIT_RANDOM)
            gpu_random(seed, h->b[b], n);
        else
            for (size_t i = 0; i < n; i++)
                h->b[b][i] = NAN;
    }
    if (r->poison)
        r->poison(h);
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b < g->nbuffers; b++)
            gpu_write(xs[k], g->buffers[b].name, h->b[b], g->buffers[b].count);
}

/* Every buffer of both execs equals the reference image, bit for bit: so
 * programmatic and full edges give identical results. */
static void compare(const host *h, cudag_exec **xs, const char *when)
{
    const cudag_graph *g = h->g;
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b < g->nbuffers; b++) {
            float *got = gpu_read(xs[k], g->buffers[b].name,
                                  g->buffers[b].count);
            char what[600];
            snprintf(what, sizeof what, "%s (%s, %s): buffer %s", g->name,
                     k ? "--no-pdl" : "programmatic edges", when,
                     g->buffers[b].name);
            gpu_expect(what, got, h->b[b], g->buffers[b].count);
            free(got);
        }
}

static void graph_matches_reference(void **state)
{
    const char *file = *state;
    cudag_graph *g = load_file(tsrc(file));
    const struct reference *r = NULL;
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (strcmp(refs[i].graph, cudag_graph_name(g)) == 0)
            r = &refs[i];
    if (!r)
        fail_msg("%s: no CPU reference for graph '%s': add one to "
                 "tests/test_gpu_graphs.c",
                 file, cudag_graph_name(g));
    host h = {g, calloc(g->nbuffers, sizeof(float *))};
    assert_non_null(h.b);
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        if (g->buffers[b].type != CUDAG_TYPE_F32)
            fail_msg("%s: buffer '%s' is %s; this test handles f32 only", file,
                     g->buffers[b].name, cudag_type_name(g->buffers[b].type));
        h.b[b] = malloc(g->buffers[b].count * sizeof(float));
        assert_non_null(h.b[b]);
    }
    cudag_exec *xs[2] = {gpu_instantiate(g, 0, NULL),
                         gpu_instantiate(g, CUDAG_NO_PDL, NULL)};
    cudag_exec_stats st;
    cudag_exec_get_stats(xs[0], &st);
    /* The shipped kernels all wait: nothing may be downgraded on Hopper. */
    if (xs[0]->gpu.cc_major >= 9)
        assert_int_equal(st.downgraded_edges, 0);
    uint64_t seed = tseed();
    cudag_error e;
    for (int run = 0; run < RUNS; run++) {
        prepare(&h, r, xs, &seed);
        r->ref(&h);
        for (int k = 0; k < 2; k++) {
            gpu_ok(cudag_exec_launch(xs[k], 1, &e), &e, "launch");
            gpu_ok(cudag_exec_sync(xs[k], &e), &e, "sync");
        }
        char when[32];
        snprintf(when, sizeof when, "run %d", run);
        compare(&h, xs, when);
    }
    prepare(&h, r, xs, &seed);
    for (int i = 0; i < BURST; i++)
        r->ref(&h);
    for (int k = 0; k < 2; k++)
        gpu_ok(cudag_exec_launch(xs[k], BURST, &e), &e, "launch");
    for (int k = 0; k < 2; k++)
        gpu_ok(cudag_exec_sync(xs[k], &e), &e, "sync");
    compare(&h, xs, "after 100 replays");
    printf("# %s: %d verified runs and %d replays, identical with and "
           "without PDL\n",
           cudag_graph_name(g), RUNS, BURST);
    cudag_exec_destroy(xs[0]);
    cudag_exec_destroy(xs[1]);
    for (uint32_t b = 0; b < g->nbuffers; b++)
        free(h.b[b]);
    free(h.b);
    cudag_graph_destroy(g);
}

/* ---- edges read back ------------------------------------------------------------- */

static const char edges_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "buffers: {x: {type: f32, count: 4096, init: random},\n"
    "          y: {type: f32, count: 4096}}\n"
    "nodes:\n"
    "  a: {kernel: scale_f32, grid: 4, block: 256, args: [x, y, 2.0, 4096]}\n"
    "  b: {kernel: util_noop, grid: 1, block: 32, after: {a: programmatic}}\n"
    "  c: {kernel: util_noop, grid: 1, block: 32, after: {a: launch_order}}\n"
    "  d: {kernel: copy_f32, grid: 4, block: 256, args: [y, x, 4096],\n"
    "      after: [b, c]}\n";

static void check_edges(const cudag_graph *g, cudag_exec *x, bool pdl)
{
    const cudag__drv *d = gpu_drv();
    cudag_error e;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    size_t n = 0;
    assert_int_equal(d->cuGraphGetEdges(x->built.graph, NULL, NULL, NULL, &n),
                     CUDA_SUCCESS);
    assert_int_equal(n, g->nedges);
    CUgraphNode from[16], to[16];
    CUgraphEdgeData ed[16];
    assert_true(n <= 16);
    assert_int_equal(d->cuGraphGetEdges(x->built.graph, from, to, ed, &n),
                     CUDA_SUCCESS);
    cudag__exec_leave(x);
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t f = cudag__built_find(&x->built, from[i]);
        uint32_t t = cudag__built_find(&x->built, to[i]);
        assert_true(f != CUDAG__NONE && t != CUDAG__NONE);
        for (uint32_t k = 0; k < g->nedges; k++) {
            if (g->edges[k].from != f || g->edges[k].to != t)
                continue;
            seen++;
            int port = 0, type = 0;
            if (pdl && g->edges[k].kind != CUDAG_EDGE_FULL) {
                type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
                port = g->edges[k].kind == CUDAG_EDGE_PROGRAMMATIC
                           ? CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
                           : CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
            }
            printf("# edge %s -> %s (%s%s): port %d type %d\n",
                   g->nodes[f].name, g->nodes[t].name,
                   cudag_edge_kind_name(g->edges[k].kind),
                   pdl ? "" : ", --no-pdl", ed[i].from_port, ed[i].type);
            assert_int_equal(ed[i].from_port, port);
            assert_int_equal(ed[i].type, type);
            assert_int_equal(ed[i].to_port, 0);
        }
    }
    assert_int_equal(seen, g->nedges);
}

static void edges_read_back_with_their_kind(void **state)
{
    (void)state;
    cudag_graph *g = gpu_load(edges_yaml);
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    if (x->gpu.cc_major < 9) {
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
        printf("# device below compute 9.0: PDL edges are downgraded\n");
        skip();
    }
    check_edges(g, x, true);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 100, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    cudag_exec_destroy(x);
    x = gpu_instantiate(g, CUDAG_NO_PDL, NULL);
    check_edges(g, x, false);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    gpu_require();
    static char *files[256];
    size_t n = 0;
    DIR *dir = opendir(tsrc("graphs"));
    if (!dir) {
        fprintf(stderr, "cannot open %s\n", tsrc("graphs"));
        return 1;
    }
    for (struct dirent *de; (de = readdir(dir)) && n < 256;) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0) {
            files[n] = malloc(len + 8);
            if (!files[n])
                return 1;
            snprintf(files[n++], len + 8, "graphs/%s", de->d_name);
        }
    }
    closedir(dir);
    qsort(files, n, sizeof *files, by_name);
    struct CMUnitTest tests[258];
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        struct CMUnitTest t = {files[i], graph_matches_reference, NULL, NULL,
                               files[i]};
        tests[nt++] = t;
    }
    struct CMUnitTest t = {"edges_read_back_with_their_kind",
                           edges_read_back_with_their_kind, NULL, NULL, NULL};
    tests[nt++] = t;
    int rc = _cmocka_run_group_tests("gpu_graphs", tests, nt, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    return rc;
}
