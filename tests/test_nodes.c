/* test_nodes.c — nodes, repetition, groups, name lookup, arguments, memset
 * and memcpy defaults, and every way of writing an edge. */
#include "common.h"
#include "cudag.h"
#include "base/text.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#define HEAD                                                               \
    "cudag: 1\nmodules: { m: k.fatbin }\n"                                 \
    "kernels:\n"                                                           \
    "  k: { params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true }\n"       \
    "  z: { params: {} }\n"                                                \
    "vars: { N: 64 }\n"                                                    \
    "buffers:\n"                                                           \
    "  x: { type: f32, count: 16*N }\n"                                    \
    "  y: { type: f32, count: 16*N }\n"                                    \
    "  h: { type: f16, count: N }\n"
#define K "{ kernel: z, grid: 1, block: 32 }"

static cudag_graph *load_ok(const char *yaml)
{
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    int rc = tload_opts(yaml, "n.yaml", &o, &g, &err);
    if (rc != CUDAG_OK)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    return g;
}

static const cudag__node *node(const cudag_graph *g, const char *name)
{
    uint32_t i = cudag__find_node(g, name);
    if (i == CUDAG__NONE)
        print_error("no node '%s'\n", name);
    assert_int_not_equal(i, CUDAG__NONE);
    return &g->nodes[i];
}

/* Whether the graph has edge from → to of the given kind. */
static bool has_edge(const cudag_graph *g, const char *from, const char *to,
                     cudag_edge_kind kind)
{
    uint32_t f = cudag__find_node(g, from), t = cudag__find_node(g, to);
    for (uint32_t i = 0; i < g->nedges; i++)
        if (g->edges[i].from == f && g->edges[i].to == t &&
            g->edges[i].kind == kind)
            return true;
    return false;
}

static void nodes_kernel_fields_and_positions(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  a:\n"
                                  "    kernel: k\n"
                                  "    grid: [\"cdiv(N, 32)\", 2, 3]\n"
                                  "    block: [32, 4]\n"
                                  "    smem: 1024 * 2\n"
                                  "    args: [x + 3*N, y, -0.5, N * 2]\n");
    const cudag__node *a = node(g, "a");
    assert_int_equal(a->kind, CUDAG_NODE_KERNEL);
    assert_int_equal(a->pos.line, 12);
    assert_int_equal(a->pos.col, 3);
    const cudag__kernel *k = &a->u.k;
    assert_int_equal(k->grid[0], 2);
    assert_int_equal(k->grid[2], 3);
    assert_int_equal(k->block[1], 4);
    assert_int_equal(k->block[2], 1);
    assert_int_equal(k->smem, 2048);
    assert_int_equal(k->grid_pos.line, 14);
    assert_int_equal(k->nargs, 4);
    assert_int_equal(k->args[0].kind, CUDAG_ARG_BUFFER);
    assert_int_equal(k->args[0].offset, 192);
    assert_int_equal(k->args[0].pos.col, 12);
    assert_int_equal(k->args[1].offset, 0);
    assert_int_equal(k->args[2].kind, CUDAG_ARG_FLOAT);
    assert_true(k->args[2].f == -0.5);
    assert_int_equal(k->args[3].kind, CUDAG_ARG_INT);
    assert_int_equal(k->args[3].i, 128);
    cudag_graph_destroy(g);
}

/* An argument for a floating-point parameter, a memset value and an init
 * constant for a floating-point buffer are computed in floating point. */
static void nodes_floating_point_values(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(
        "cudag: 1\nmodules: { m: k.fatbin }\n"
        "kernels:\n"
        "  k: { params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true }\n"
        "  h: { params: {a: f16, b: bf16, c: f64, n: i32} }\n"
        "vars: { N: 64, E: 5 }\n"
        "buffers:\n"
        "  x: { type: f32, count: 16*N, init: 1/4 }\n"
        "  i: { type: i32, count: N, init: N/2 }\n"
        "nodes:\n"
        "  a: { kernel: k, grid: 1, block: 32, args: [x, x, E/10, N] }\n"
        "  b: { kernel: k, grid: 1, block: 32, args: {x: x, y: x, a: 1/N, n: N/3} }\n"
        "  c: { kernel: h, grid: 1, block: 32, args: [1/E, -3/2, E/2, 7/2] }\n"
        "  s: { memset: x, value: 1/8 }\n");
    const cudag__kernel *a = &node(g, "a")->u.k, *b = &node(g, "b")->u.k;
    const cudag__kernel *c = &node(g, "c")->u.k;
    assert_int_equal(a->args[2].kind, CUDAG_ARG_FLOAT);
    assert_true(a->args[2].f == 0.5);       /* not 0 */
    assert_true(b->args[2].f == 1.0 / 64);
    assert_int_equal(b->args[3].kind, CUDAG_ARG_INT);
    assert_int_equal(b->args[3].i, 21);     /* an i64 stays an integer */
    assert_true(c->args[0].f == 0.2 && c->args[1].f == -1.5 &&
                c->args[2].f == 2.5);
    assert_int_equal(c->args[3].i, 3);
    assert_true(node(g, "s")->u.set.value == 0.125);
    assert_true(g->buffers[cudag__find_buffer(g, "x")].init.value == 0.25);
    assert_true(g->buffers[cudag__find_buffer(g, "i")].init.value == 32.0);
    cudag_graph_destroy(g);
}

static void nodes_named_args_follow_the_signature(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n  a:\n    kernel: k\n    grid: 1\n"
                                  "    block: 32\n"
                                  "    args: {n: 7, a: 2, y: y + 1, x: null}\n");
    const cudag__kernel *k = &node(g, "a")->u.k;
    assert_int_equal(k->nargs, 4);
    assert_int_equal(k->args[0].kind, CUDAG_ARG_NULL);
    assert_int_equal(k->args[1].kind, CUDAG_ARG_BUFFER);
    assert_int_equal(k->args[1].offset, 1);
    /* An f32 argument written as an integer is computed in floating point. */
    assert_int_equal(k->args[2].kind, CUDAG_ARG_FLOAT);
    assert_true(k->args[2].f == 2.0);
    assert_int_equal(k->args[3].i, 7);
    cudag_graph_destroy(g);
}

static void nodes_repetition_and_falling_off_the_ends(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  step[i in 2..N/16 + 1]:\n"
                                  "    kernel: k\n    grid: i\n    block: 32\n"
                                  "    args: [x + i*N, y, 1.0, N]\n"
                                  "    after:\n"
                                  "      - step[i-1]: programmatic\n"
                                  "  back[j in 3]:\n"
                                  "    kernel: z\n    grid: 1\n    block: 32\n"
                                  "    after: [\"back[j+1]\"]\n");
    assert_int_equal(cudag_graph_node_count(g), 6);
    assert_string_equal(cudag_graph_node_name(g, 0), "step[2]");
    assert_string_equal(cudag_graph_node_name(g, 2), "step[4]");
    assert_int_equal(node(g, "step[3]")->u.k.grid[0], 3);
    assert_int_equal(node(g, "step[4]")->u.k.args[0].offset, 4 * 64);
    /* i-1 before the first copy and j+1 after the last name no node. */
    assert_int_equal(cudag_graph_edge_count(g), 4);
    assert_true(has_edge(g, "step[2]", "step[3]", CUDAG_EDGE_PROGRAMMATIC));
    assert_true(has_edge(g, "step[3]", "step[4]", CUDAG_EDGE_PROGRAMMATIC));
    assert_true(has_edge(g, "back[2]", "back[1]", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "back[1]", "back[0]", CUDAG_EDGE_FULL));
    cudag_graph_destroy(g);
}

static void nodes_groups_nest_and_resolve_inside_out(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(
        HEAD "nodes:\n"
             "  start: " K "\n"
             "  norm: " K "\n"
             "  layer[i in 3]:\n"
             "    norm:\n"
             "      kernel: z\n      grid: 1\n      block: 32\n"
             "      after:\n"
             "        - layer[i-1].add: programmatic\n"
             "        - start\n"
             "    add: { kernel: z, grid: 1, block: 32, after: [norm] }\n"
             "    inner:\n"
             "      leaf: { kernel: z, grid: 1, block: 32, after: [add] }\n"
             "  tail:\n"
             "    kernel: z\n    grid: 1\n    block: 32\n"
             "    after: [norm, \"layer[2].inner.leaf\"]\n");
    assert_int_equal(cudag_graph_node_count(g), 2 + 3 * 3 + 1);
    /* Inside a group, 'norm' is the group's own; 'start' is found outside. */
    assert_true(has_edge(g, "layer[1].norm", "layer[1].add", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "layer[0].add", "layer[1].norm",
                         CUDAG_EDGE_PROGRAMMATIC));
    assert_true(has_edge(g, "start", "layer[0].norm", CUDAG_EDGE_FULL));
    /* A nested group sees its enclosing group's nodes. */
    assert_true(has_edge(g, "layer[2].add", "layer[2].inner.leaf",
                         CUDAG_EDGE_FULL));
    /* At the top, 'norm' is the top-level node. */
    assert_true(has_edge(g, "norm", "tail", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "layer[2].inner.leaf", "tail", CUDAG_EDGE_FULL));
    /* Groups are recorded for DOT clusters, nested. */
    const cudag__node *leaf = node(g, "layer[1].inner.leaf");
    assert_int_not_equal(leaf->group, CUDAG__NONE);
    assert_string_equal(g->groups[leaf->group].name, "layer[1].inner");
    uint32_t parent = g->groups[leaf->group].parent;
    assert_string_equal(g->groups[parent].name, "layer[1]");
    assert_int_equal(g->groups[parent].parent, CUDAG__NONE);
    assert_int_equal(node(g, "start")->group, CUDAG__NONE);
    cudag_graph_destroy(g);
}

static void nodes_wavefront_two_indices(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  r[i in 3]:\n"
                                  "    c[j in 4]:\n"
                                  "      kernel: z\n      grid: i*4 + j + 1\n"
                                  "      block: 32\n"
                                  "      after:\n"
                                  "        - r[i-1].c[j]\n"
                                  "        - c[j-1]\n");
    assert_int_equal(cudag_graph_node_count(g), 12);
    /* (M-1)·N vertical + M·(N-1) horizontal edges. */
    assert_int_equal(cudag_graph_edge_count(g), 2 * 4 + 3 * 3);
    assert_int_equal(node(g, "r[2].c[3]")->u.k.grid[0], 12);
    assert_true(has_edge(g, "r[1].c[2]", "r[2].c[2]", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "r[2].c[1]", "r[2].c[2]", CUDAG_EDGE_FULL));
    cudag_graph_destroy(g);
}

static void nodes_memset_and_memcpy_defaults(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  s1: { memset: x, value: 0 }\n"
                                  "  s2: { memset: x + 10, value: 1.5 }\n"
                                  "  s3: { memset: h + 2, count: 5, value: -3 }\n"
                                  "  c1: { memcpy: y, from: x }\n"
                                  "  c2: { memcpy: y + 8, from: x + N, count: 16 }\n"
                                  "  c3: { memcpy: y, from: x + 1000 }\n");
    const cudag__memset *s = &node(g, "s1")->u.set;
    assert_int_equal(s->buffer, cudag__find_buffer(g, "x"));
    assert_int_equal(s->count, 1024);
    s = &node(g, "s2")->u.set;
    assert_int_equal(s->offset, 10);
    assert_int_equal(s->count, 1014);
    assert_true(s->value == 1.5);
    s = &node(g, "s3")->u.set;
    assert_int_equal(s->count, 5);
    assert_true(s->value == -3.0);
    const cudag__memcpy *c = &node(g, "c1")->u.cpy;
    assert_int_equal(c->count, 1024);
    c = &node(g, "c2")->u.cpy;
    assert_int_equal(c->dst_offset, 8);
    assert_int_equal(c->src_offset, 64);
    assert_int_equal(c->count, 16);
    assert_int_equal(node(g, "c3")->u.cpy.count, 24);
    assert_int_equal(node(g, "c1")->kind, CUDAG_NODE_MEMCPY);
    cudag_graph_destroy(g);
}

static void nodes_every_edge_form(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  a: " K "\n  b: " K "\n  c: " K "\n"
                                  "  d: " K "\n  e: " K "\n"
                                  "  f: { kernel: z, grid: 1, block: 32, after: a }\n"
                                  "  s[i in 2]: " K "\n"
                                  "edges:\n"
                                  "  - a -> b -> c\n"
                                  "  - c -> d: programmatic\n"
                                  "  - {from: a, to: [e, \"s[0]\"], kind: launch_order}\n"
                                  "  - {from: \"s[0]\", to: \"s[1]\"}\n"
                                  "  - \"s[N/64] -> f\": full\n");
    assert_int_equal(cudag_graph_edge_count(g), 8);
    assert_true(has_edge(g, "a", "f", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "a", "b", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "b", "c", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "c", "d", CUDAG_EDGE_PROGRAMMATIC));
    assert_true(has_edge(g, "a", "e", CUDAG_EDGE_LAUNCH_ORDER));
    assert_true(has_edge(g, "a", "s[0]", CUDAG_EDGE_LAUNCH_ORDER));
    assert_true(has_edge(g, "s[0]", "s[1]", CUDAG_EDGE_FULL));
    assert_true(has_edge(g, "s[1]", "f", CUDAG_EDGE_FULL));
    /* The edge points where it was written. */
    for (uint32_t i = 0; i < g->nedges; i++)
        assert_true(g->edges[i].pos.line > 0);
    cudag_graph_destroy(g);
}

static void nodes_many_from_repetition(void **state)
{
    (void)state;
    /* 100 000 nodes in a chain from three lines: lowering stays linear. */
    cudag_graph *g = load_ok(HEAD "nodes:\n"
                                  "  c[i in 100000]:\n"
                                  "    kernel: z\n    grid: 1\n    block: 32\n"
                                  "    after:\n"
                                  "      - c[i-1]: programmatic\n");
    assert_int_equal(cudag_graph_node_count(g), 100000);
    assert_int_equal(cudag_graph_edge_count(g), 99999);
    assert_true(g->checked);
    assert_int_equal(g->topo.depth, 100000);
    cudag_graph_destroy(g);
}

/* The name of the kernel that kernel node `name` of g's tree launches. */
static const char *kernel_of(const cudag_graph *g, const char *name)
{
    uint32_t i;
    const cudag_graph *in = cudag__tree_find(g, name, &i);
    if (!in)
        print_error("no node '%s'\n", name);
    assert_non_null(in);
    assert_int_equal(in->nodes[i].kind, CUDAG_NODE_KERNEL);
    assert_true(in->nodes[i].u.k.sig < g->nsigs);
    return g->sigs[in->nodes[i].u.k.sig].name;
}

#define PICK_HEAD                                                          \
    "cudag: 1\nmodules: { m: k.fatbin }\n"                                 \
    "kernels:\n"                                                           \
    "  one: { params: {x: ptr, n: i64} }\n"                                \
    "  many: { params: {x: ptr, n: i64} }\n"                               \
    "  listed: { params: [ptr, i64] }\n"                                   \
    "vars: { B: 1 }\n"                                                     \
    "buffers:\n"                                                           \
    "  x: { type: f32, count: 64 }\n"

/* Loads yaml as "t.yaml", or the file at path when yaml is NULL, with -D B=4
 * when batch is set; fails the test on an error or a warning. */
static cudag_graph *load_batch(const char *yaml, const char *path, int batch)
{
    const char *defines[] = {batch ? "B=4" : NULL, NULL};
    tdiag td;
    cudag_options o = topts(&td, defines);
    cudag_graph *g = NULL;
    cudag_error err;
    int rc = yaml ? tload_opts(yaml, "t.yaml", &o, &g, &err)
                  : cudag_load_file(path, &o, &g, &err);
    if (rc != CUDAG_OK || td.nwarn)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_equal(td.nwarn, 0);
    return g;
}

/* `kernel: {pick, from}` launches the kernel `pick` names: a variable, a
 * define and a repetition index choose it, and the node points at the
 * name it picked.  A kernel whose parameters have no names (a list of
 * types) may stand beside named ones. */
static void nodes_kernel_pick_by_variable_define_and_index(void **state)
{
    (void)state;
    static const char yaml[] =
        PICK_HEAD "nodes:\n"
        "  o:\n"
        "    kernel:\n"
        "      pick: min(B - 1, 1)\n"
        "      from: [one, many]\n"
        "    grid: 1\n"
        "    block: 32\n"
        "    args: {x: x, n: B}\n"
        "  layer[i in 0..3]:\n"
        "    kernel: {pick: i % 2, from: [one, listed], x-why: odd layers}\n"
        "    grid: 1\n"
        "    block: 32\n"
        "    args: [x, i]\n"
        "    after: [\"layer[i-1]\", o]\n"
        "  single: {kernel: {pick: 0, from: [many]}, grid: 1, block: 32,\n"
        "           args: [x, 1], after: [\"layer[2]\"]}\n";
    for (int batch = 0; batch < 2; batch++) {
        cudag_graph *g = load_batch(yaml, NULL, batch);
        assert_string_equal(kernel_of(g, "o"), batch ? "many" : "one");
        const cudag__kernel *k = &node(g, "o")->u.k;
        assert_int_equal(k->sig_pos.line, 14);
        assert_int_equal(k->sig_pos.col, batch ? 19 : 14);
        assert_int_equal(k->args[1].i, batch ? 4 : 1);
        assert_string_equal(kernel_of(g, "layer[0]"), "one");
        assert_string_equal(kernel_of(g, "layer[1]"), "listed");
        assert_string_equal(kernel_of(g, "layer[2]"), "one");
        assert_int_equal(node(g, "layer[1]")->u.k.sig_pos.col, 39);
        assert_string_equal(kernel_of(g, "single"), "many");
        cudag_graph_destroy(g);
    }
}

/* A pick inside a child graph file uses the child's variables, which each
 * node that instantiates it sets; kernels of a source module are made as
 * they are looked up, every name of `from` each time, so that lowering the
 * graph again with another pick (cudag_exec_set_var) finds the same
 * kernels in the same order. */
static void nodes_kernel_pick_in_child_graph_and_source(void **state)
{
    (void)state;
    const char *dir = tmkdir("pick");
    char top[4096];
    snprintf(top, sizeof top, "%s/top.yaml", dir);
    twrite(dir, "k.cu",
           "extern \"C\" __global__ void one(float *x, long long n) {}\n"
           "extern \"C\" __global__ void many(float *x, long long n) {}\n");
    twrite(dir, "layer.yaml",
           "vars: { B: 1 }\n"
           "nodes:\n"
           "  r:\n"
           "    kernel:\n"
           "      pick: min(B - 1, 1)\n"
           "      from: [one, many]\n"
           "    grid: 1\n"
           "    block: 32\n"
           "    args: [x, B]\n");
    twrite(dir, "top.yaml",
           "cudag: 1\n"
           "modules: { m: k.cu }\n"
           "vars: { B: 1 }\n"
           "buffers:\n"
           "  x: { type: f32, count: 64 }\n"
           "nodes:\n"
           "  o: {kernel: {pick: \"min(B - 1, 1)\", from: [one, many]},\n"
           "      grid: 1, block: 32, args: [x, 64]}\n"
           "  layer[i in 2]:\n"
           "    graph: layer.yaml\n"
           "    vars: { B: B + i }\n"
           "    after: [\"layer[i-1]\", o]\n");
    for (int batch = 0; batch < 2; batch++) {
        cudag_graph *g = load_batch(NULL, top, batch);
        assert_string_equal(kernel_of(g, "o"), batch ? "many" : "one");
        assert_string_equal(kernel_of(g, "layer[0].r"),
                            batch ? "many" : "one");
        assert_string_equal(kernel_of(g, "layer[1].r"), "many");
        uint32_t i;
        const cudag_graph *in = cudag__tree_find(g, "layer[0].r", &i);
        assert_int_equal(in->nodes[i].u.k.sig_pos.line, 6);
        assert_int_equal(in->nodes[i].u.k.sig_pos.col, batch ? 19 : 14);
        assert_int_equal(g->nsigs, 2);
        assert_string_equal(g->sigs[0].name, "one");
        assert_string_equal(g->sigs[1].name, "many");
        cudag_graph_destroy(g);
    }
    assert_int_equal(trm_tree(dir), 0);
}

/* Parameter names from source: an unnamed parameter has none (and agrees
 * with any name), one declared as p0 has that name, though the unnamed one
 * is called p0 too. */
static void nodes_kernel_pick_names_from_source(void **state)
{
    (void)state;
    const char *dir = tmkdir("pickn");
    twrite(dir, "k.cu",
           "extern \"C\" __global__ void unnamed(float *, long long n) {}\n"
           "extern \"C\" __global__ void named_p0(float *p0, long long n) {}\n"
           "extern \"C\" __global__ void named_x(float *x, long long n) {}\n");
    static const struct {
        const char *from;
        int rc;
    } cases[] = {
        {"[unnamed, named_x]", CUDAG_OK},
        {"[unnamed, named_p0]", CUDAG_OK},
        {"[named_p0, named_x]", CUDAG_ETYPE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32], top[4096], yaml[1024];
        snprintf(name, sizeof name, "top%zu.yaml", i);
        snprintf(top, sizeof top, "%s/%s", dir, name);
        snprintf(yaml, sizeof yaml,
                 "cudag: 1\n"
                 "modules: { m: k.cu }\n"
                 "buffers:\n"
                 "  x: { type: f32, count: 64 }\n"
                 "nodes:\n"
                 "  o: {kernel: {pick: 0, from: %s}, grid: 1, block: 32,\n"
                 "      args: [x, 64]}\n",
                 cases[i].from);
        twrite(dir, name, yaml);
        tdiag td;
        cudag_options o = topts(&td, NULL);
        cudag_graph *g = NULL;
        const int rc = cudag_load_file(top, &o, &g, NULL);
        if (rc != cases[i].rc)
            print_error("%s: %s\n", cases[i].from, td.text);
        assert_int_equal(rc, cases[i].rc);
        if (rc == CUDAG_OK)
            cudag_graph_destroy(g);
        else
            assert_non_null(strstr(td.text, "6:42: error: kernel 'named_x' takes "
                                            "(x: ptr, n: i64) but 'named_p0' takes "
                                            "(p0: ptr, n: i64)"));
    }
    assert_int_equal(trm_tree(dir), 0);
}

/* Loads yaml, which must fail with unknown names, into td's diagnostics. */
static void load_unknown(tdiag *td, const char *yaml)
{
    cudag_options o = topts(td, NULL);
    cudag_graph *g;
    assert_int_equal(tload_opts(yaml, NULL, &o, &g, NULL), CUDAG_EUNKNOWN);
}

/* A typo in any form of `edges:` gets the suggestion the same typo gets in
 * `after:`. */
static void nodes_typos_in_edges_get_suggestions_as_in_after(void **state)
{
    (void)state;
    static const char nodes[] =
        "nodes:\n"
        "  first: " K "\n"
        "  second: " K "\n"
        "  layer[i in 3]:\n"
        "    norm: " K "\n";
    static const struct {
        const char *edges, *want;
    } cases[] = {
        {"edges: [first -> secnod]\n",
         "t.yaml:16:18: error: unknown node 'secnod' (did you mean 'second'?)"},
        {"edges:\n  - frist -> second -> first\n",
         "t.yaml:17:5: error: unknown node 'frist' (did you mean 'first'?)"},
        {"edges:\n  - first -> secnod -> layer[0].norm\n",
         "t.yaml:17:14: error: unknown node 'secnod' (did you mean 'second'?)"},
        {"edges:\n  - {from: first, to: [\"layer[2].norm\", secnod]}\n",
         "t.yaml:17:41: error: unknown node 'secnod' (did you mean 'second'?)"},
        {"edges:\n  - \"layer[1].nrom -> first\": programmatic\n",
         "t.yaml:17:6: error: unknown node 'layer[1].nrom' (did you mean "
         "'layer[1].norm'?)"},
        {"edges:\n  - {from: frist, to: second, kind: launch_order}\n",
         "t.yaml:17:12: error: unknown node 'frist' (did you mean 'first'?)"},
    };
    char yaml[2048];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tdiag td;
        snprintf(yaml, sizeof yaml, "%s%s%s", HEAD, nodes, cases[i].edges);
        load_unknown(&td, yaml);
        assert_int_equal(td.nerr, 1);
        assert_diag_contains(&td, cases[i].want);
    }
    /* The same typos in after: */
    tdiag td;
    load_unknown(&td, HEAD "nodes:\n"
                           "  first: " K "\n"
                           "  second: { kernel: z, grid: 1, block: 32, after: [frist] }\n");
    assert_diag_contains(&td, "unknown node 'frist' (did you mean 'first'?)");
}

static void nodes_errors_in_one_copy_are_reported_once(void **state)
{
    (void)state;
    tdiag td;
    load_unknown(&td, HEAD "nodes:\n"
                           "  s[i in 10]: { kernel: z, grid: 1, block: 32, after: [nope] }\n");
    assert_int_equal(td.nerr, 1);
    assert_diag_contains(&td, "t.yaml:12:56: error: unknown node 'nope'");
}

/* One copy of a group with more mistakes than a handful: each is reported
 * once, and the repeats in the other copies end the pass. */
static void nodes_many_errors_in_one_copy_are_reported_once(void **state)
{
    (void)state;
    tdiag td;
    load_unknown(&td, HEAD "nodes:\n"
                           "  r[i in 100000]:\n"
                           "    c[j in 3]:\n"
                           "      kernel: k\n"
                           "      grid: cdv(1)\n"
                           "      block: 32\n"
                           "      args: [q, q, 1.0, Q]\n"
                           "      after:\n"
                           "        - nope1\n"
                           "        - nope2\n"
                           "        - nope3\n"
                           "        - nope4\n"
                           "        - other[j]\n");
    /* grid, two buffers, Q, four names and other[j]: 9 mistakes.  Each
     * copy of other[j] names another node, but it is one mistake, at one
     * place: reported for the first copy only. */
    assert_int_equal(td.nerr, 9);
    assert_diag_contains(&td, "unknown node 'nope4'");
    assert_diag_contains(&td, "unknown node 'other[0]'");
    assert_null(strstr(td.text, "unknown node 'other[1]'"));
}

/* Over a large namespace only the first few errors get a suggestion; the
 * same mistake without one is still the same mistake, reported once. */
static void nodes_repeated_error_with_and_without_suggestion(void **state)
{
    (void)state;
    tdiag td;
    load_unknown(&td, HEAD "nodes:\n"
                           "  n[i in 5000]: " K "\n"
                           "  m[i in 20]:\n"
                           "    kernel: z\n"
                           "    grid: 1\n"
                           "    block: 32\n"
                           "    after:\n"
                           "      - nn[3]\n");
    assert_int_equal(td.nerr, 1);
    assert_diag_contains(&td, "unknown node 'nn[3]' (did you mean 'n[3]'?)");
}

/* The suggestion search skips names whose length alone puts them too far
 * away, and still finds one at exactly the allowed distance. */
static void nodes_suggestions_at_the_distance_limit(void **state)
{
    (void)state;
    const char *names[] = {"x", "abcdefghixyz", "zzzzzzzzz", NULL};
    /* 9 letters allow 3 edits: 3 appended letters are still a typo. */
    assert_string_equal(cudag__suggest("abcdefghi", names, 3), "abcdefghixyz");
    assert_null(cudag__suggest("abcdefgh", names, 3));   /* 4 away */
    assert_string_equal(cudag__suggest("zzzzzzzzq", names, 4), "zzzzzzzzz");
    assert_null(cudag__suggest("qq", names, 4));         /* too short to guess */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nodes_kernel_fields_and_positions),
        cmocka_unit_test(nodes_suggestions_at_the_distance_limit),
        cmocka_unit_test(nodes_floating_point_values),
        cmocka_unit_test(nodes_named_args_follow_the_signature),
        cmocka_unit_test(nodes_kernel_pick_by_variable_define_and_index),
        cmocka_unit_test(nodes_kernel_pick_in_child_graph_and_source),
        cmocka_unit_test(nodes_kernel_pick_names_from_source),
        cmocka_unit_test(nodes_repetition_and_falling_off_the_ends),
        cmocka_unit_test(nodes_groups_nest_and_resolve_inside_out),
        cmocka_unit_test(nodes_wavefront_two_indices),
        cmocka_unit_test(nodes_memset_and_memcpy_defaults),
        cmocka_unit_test(nodes_every_edge_form),
        cmocka_unit_test(nodes_many_from_repetition),
        cmocka_unit_test(nodes_typos_in_edges_get_suggestions_as_in_after),
        cmocka_unit_test(nodes_errors_in_one_copy_are_reported_once),
        cmocka_unit_test(nodes_many_errors_in_one_copy_are_reported_once),
        cmocka_unit_test(nodes_repeated_error_with_and_without_suggestion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
