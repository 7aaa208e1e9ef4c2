/* test_api.c — the public C API: the builder makes the same graph as the
 * YAML front end, builder errors leave the graph unchanged, introspection,
 * status names and error formatting. */
#include "common.h"

#include <string.h>

static const char yaml[] =
    "cudag: 1\n"
    "name: same\n"
    "modules: { lib: lib.fatbin }\n"
    "kernels:\n"
    "  scale: { params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true }\n"
    "  noop: { symbol: noop_impl, params: {} }\n"
    "vars: { N: 256 }\n"
    "buffers:\n"
    "  x: { type: f32, count: 4*N, init: random, seed: 9, range: [0, 2] }\n"
    "  y: { type: f32, count: 4*N }\n"
    "  c: { type: i32, count: N, init: iota }\n"
    "nodes:\n"
    "  zero: { memset: y, value: 0 }\n"
    "  chain[i in 3]:\n"
    "    kernel: scale\n"
    "    grid: [2, 1, 1]\n"
    "    block: 128\n"
    "    args: [x + i*N, y + i*N, 1.5, N]\n"
    "    after:\n"
    "      - chain[i-1]: programmatic\n"
    "      - zero\n"
    "  pair[j in 2]:\n"
    "    a: { kernel: noop, grid: 1, block: 32, smem: 64 }\n"
    "    b: { kernel: noop, grid: 1, block: 32, after: [{a: launch_order}] }\n"
    "  keep: { memcpy: y + N, from: x, count: N }\n"
    "  fill: { memset: c + 8, count: 4, value: -2 }\n"
    "edges:\n"
    "  - chain[2] -> pair[0].a\n"
    "  - pair[0].b -> keep -> fill\n";

static void build_same(cudag_graph *g)
{
    cudag_error e;
#define OK(call) assert_int_equal((call), CUDAG_OK)
    OK(cudag_add_module(g, "lib", "lib.fatbin", &e));
    cudag_param p[] = {{"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR},
                       {"a", CUDAG_TYPE_F32}, {"n", CUDAG_TYPE_I64}};
    OK(cudag_add_signature(g, "scale", "lib", NULL, p, 4, 1, &e));
    OK(cudag_add_signature(g, "noop", "lib", "noop_impl", NULL, 0, 0, &e));
    OK(cudag_add_var(g, "N", 256, &e));
    cudag_init rnd = {CUDAG_INIT_RANDOM, 0, 0.0, 2.0, 9};
    cudag_init iota = {CUDAG_INIT_IOTA, 0, 0, 0, 0};
    OK(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, 1024, &rnd, &e));
    OK(cudag_add_buffer(g, "y", CUDAG_TYPE_F32, 1024, NULL, &e));
    OK(cudag_add_buffer(g, "c", CUDAG_TYPE_I32, 256, &iota, &e));
    OK(cudag_add_memset(g, "zero", "y", 0, 1024, 0.0, &e));
    for (int i = 0; i < 3; i++) {
        char name[32], prev[32];
        snprintf(name, sizeof name, "chain[%d]", i);
        cudag_arg a[] = {cudag_arg_buffer("x", (uint64_t)i * 256),
                         cudag_arg_buffer("y", (uint64_t)i * 256),
                         cudag_arg_float(1.5), cudag_arg_int(256)};
        OK(cudag_add_kernel(g, name, "scale", (cudag_dim3){2, 1, 1},
                            (cudag_dim3){128, 1, 1}, 0, a, 4, &e));
        if (i) {
            snprintf(prev, sizeof prev, "chain[%d]", i - 1);
            OK(cudag_add_edge(g, prev, name, CUDAG_EDGE_PROGRAMMATIC, &e));
        }
        OK(cudag_add_edge(g, "zero", name, CUDAG_EDGE_FULL, &e));
    }
    for (int j = 0; j < 2; j++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "pair[%d].a", j);
        snprintf(b, sizeof b, "pair[%d].b", j);
        OK(cudag_add_kernel(g, a, "noop", (cudag_dim3){1, 1, 1},
                            (cudag_dim3){32, 1, 1}, 64, NULL, 0, &e));
        OK(cudag_add_kernel(g, b, "noop", (cudag_dim3){1, 1, 1},
                            (cudag_dim3){32, 1, 1}, 0, NULL, 0, &e));
        OK(cudag_add_edge(g, a, b, CUDAG_EDGE_LAUNCH_ORDER, &e));
    }
    OK(cudag_add_memcpy(g, "keep", "y", 256, "x", 0, 256, &e));
    OK(cudag_add_memset(g, "fill", "c", 8, 4, -2.0, &e));
    OK(cudag_add_edge(g, "chain[2]", "pair[0].a", CUDAG_EDGE_FULL, &e));
    OK(cudag_add_edge(g, "pair[0].b", "keep", CUDAG_EDGE_FULL, &e));
    OK(cudag_add_edge(g, "keep", "fill", CUDAG_EDGE_FULL, &e));
#undef OK
}

static int cmp_edge(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* Everything but source positions and groups must be equal. */
static void assert_same_ir(const cudag_graph *a, const cudag_graph *b)
{
    assert_int_equal(a->nvars, b->nvars);
    for (uint32_t i = 0; i < a->nvars; i++) {
        assert_string_equal(a->vars[i].name, b->vars[i].name);
        assert_int_equal(a->vars[i].value, b->vars[i].value);
    }
    assert_int_equal(a->nmodules, b->nmodules);
    for (uint32_t i = 0; i < a->nmodules; i++)
        assert_string_equal(a->modules[i].name, b->modules[i].name);
    assert_int_equal(a->nsigs, b->nsigs);
    for (uint32_t i = 0; i < a->nsigs; i++) {
        const cudag__sig *x = &a->sigs[i], *y = &b->sigs[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->symbol, y->symbol);
        assert_int_equal(x->module, y->module);
        assert_int_equal(x->nparams, y->nparams);
        assert_int_equal(x->pdl, y->pdl);
        for (uint32_t j = 0; j < x->nparams; j++) {
            assert_int_equal(x->types[j], y->types[j]);
            assert_string_equal(x->pnames[j], y->pnames[j]);
        }
    }
    assert_int_equal(a->nbuffers, b->nbuffers);
    for (uint32_t i = 0; i < a->nbuffers; i++) {
        const cudag__buffer *x = &a->buffers[i], *y = &b->buffers[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->init.kind, y->init.kind);
        assert_int_equal(x->init.seed, y->init.seed);
        assert_true(x->init.value == y->init.value);
        if (x->init.kind == CUDAG_INIT_RANDOM) {
            assert_true(x->init.lo == y->init.lo);
            assert_true(x->init.hi == y->init.hi);
        }
        assert_int_equal(x->uses, y->uses);
    }
    assert_int_equal(a->nnodes, b->nnodes);
    for (uint32_t i = 0; i < a->nnodes; i++) {
        const cudag__node *x = &a->nodes[i], *y = &b->nodes[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->kind, y->kind);
        if (x->kind == CUDAG_NODE_KERNEL) {
            const cudag__kernel *p = &x->u.k, *q = &y->u.k;
            assert_int_equal(p->sig, q->sig);
            assert_memory_equal(p->grid, q->grid, sizeof p->grid);
            assert_memory_equal(p->block, q->block, sizeof p->block);
            assert_int_equal(p->smem, q->smem);
            assert_int_equal(p->nargs, q->nargs);
            for (uint32_t j = 0; j < p->nargs; j++) {
                assert_int_equal(p->args[j].kind, q->args[j].kind);
                assert_int_equal(p->args[j].buffer * (p->args[j].kind == CUDAG_ARG_BUFFER),
                                 q->args[j].buffer * (q->args[j].kind == CUDAG_ARG_BUFFER));
                assert_int_equal(p->args[j].offset, q->args[j].offset);
                assert_int_equal(p->args[j].i, q->args[j].i);
                assert_true(p->args[j].f == q->args[j].f);
            }
        } else if (x->kind == CUDAG_NODE_MEMSET) {
            assert_int_equal(x->u.set.buffer, y->u.set.buffer);
            assert_int_equal(x->u.set.offset, y->u.set.offset);
            assert_int_equal(x->u.set.count, y->u.set.count);
            assert_true(x->u.set.value == y->u.set.value);
        } else {
            assert_memory_equal(&x->u.cpy, &y->u.cpy, sizeof x->u.cpy);
        }
    }
    /* The same set of edges, in whatever order they were written. */
    assert_int_equal(a->nedges, b->nedges);
    uint64_t *ea = calloc(a->nedges, sizeof *ea), *eb = calloc(a->nedges, sizeof *eb);
    for (uint32_t i = 0; i < a->nedges; i++) {
        ea[i] = (uint64_t)a->edges[i].from << 34 | (uint64_t)a->edges[i].to << 2 | a->edges[i].kind;
        eb[i] = (uint64_t)b->edges[i].from << 34 | (uint64_t)b->edges[i].to << 2 | b->edges[i].kind;
    }
    qsort(ea, a->nedges, sizeof *ea, cmp_edge);
    qsort(eb, a->nedges, sizeof *eb, cmp_edge);
    assert_memory_equal(ea, eb, a->nedges * sizeof *ea);
    free(ea);
    free(eb);
    /* And what the checker derived. */
    assert_memory_equal(a->topo.level, b->topo.level, a->nnodes * sizeof *a->topo.level);
    assert_memory_equal(a->topo.order, b->topo.order, a->nnodes * sizeof *a->topo.order);
}

static void api_builder_and_yaml_build_identical_graphs(void **state)
{
    (void)state;
    cudag_graph *y, *b;
    cudag_error e;
    tdiag td;
    cudag_options o = topts(&td, NULL);
    assert_int_equal(tload_opts(yaml, "same.yaml", &o, &y, &e), CUDAG_OK);
    assert_int_equal(cudag_graph_create("same", &b, &e), CUDAG_OK);
    build_same(b);
    assert_int_equal(cudag_check(b, &o, &e), CUDAG_OK);
    assert_same_ir(y, b);
    /* What users see is identical too: plan text and DOT (without the
     * clusters, which only the front end's groups give). */
    char *t1, *t2;
    cudag_plan_info p1, p2;
    assert_int_equal(cudag_plan(y, &p1, &t1, &e), CUDAG_OK);
    assert_int_equal(cudag_plan(b, &p2, &t2, &e), CUDAG_OK);
    assert_string_equal(t1, t2);
    assert_memory_equal(&p1, &p2, sizeof p1);
    assert_int_equal(p1.nodes, 10);
    assert_int_equal(p1.edges[CUDAG_EDGE_PROGRAMMATIC], 2);
    assert_int_equal(p1.edges[CUDAG_EDGE_LAUNCH_ORDER], 2);
    cudag_free(t1);
    cudag_free(t2);
    assert_int_equal(cudag_dot(y, CUDAG_DOT_NO_CLUSTERS, &t1, &e), CUDAG_OK);
    assert_int_equal(cudag_dot(b, CUDAG_DOT_NO_CLUSTERS, &t2, &e), CUDAG_OK);
    assert_string_equal(t1, t2);
    cudag_free(t1);
    cudag_free(t2);
    cudag_graph_destroy(y);
    cudag_graph_destroy(b);
}

static void api_builder_errors_leave_graph_unchanged(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(cudag_graph_create(NULL, &g, &e), CUDAG_OK);
    assert_string_equal(cudag_graph_name(g), "graph");
    build_same(g);
    size_t nodes = cudag_graph_node_count(g), edges = cudag_graph_edge_count(g);
    cudag_param p[] = {{NULL, CUDAG_TYPE_PTR}};
    cudag_param badt[] = {{NULL, (cudag_type)99}};
    cudag_arg a1[] = {cudag_arg_buffer("nope", 0)};
    cudag_arg bad_kind[] = {{(cudag_arg_kind)7, NULL, 0, 0, 0}};
    cudag_init bad_init = {(cudag_init_kind)9, 0, 0, 0, 0};
    cudag_dim3 one = {1, 1, 1};
#define BAD(call, want, text)                                   \
    do {                                                        \
        assert_int_equal((call), (want));                       \
        assert_int_equal(e.code, (want));                       \
        assert_string_equal(e.message, (text));                 \
    } while (0)
    BAD(cudag_add_var(g, "N", 1, &e), CUDAG_EDUP, "duplicate variable 'N'");
    BAD(cudag_add_var(g, "x", 1, &e), CUDAG_EDUP,
        "variable 'x' has the name of a buffer");
    BAD(cudag_add_var(g, "9a", 1, &e), CUDAG_EINVAL,
        "cudag_add_var: '9a' is not a valid name");
    BAD(cudag_add_var(NULL, "a", 1, &e), CUDAG_EINVAL,
        "cudag_add_var: graph is NULL");
    BAD(cudag_add_module(g, "m2", "", &e), CUDAG_EINVAL,
        "module 'm2': path is empty");
    BAD(cudag_add_signature(g, "k", "nomod", NULL, p, 1, 0, &e), CUDAG_EUNKNOWN,
        "kernel 'k': unknown module 'nomod'");
    BAD(cudag_add_signature(g, "k", "lib", NULL, badt, 1, 0, &e), CUDAG_ETYPE,
        "kernel 'k': parameter 0 has an invalid type");
    BAD(cudag_add_signature(g, "scale", "lib", NULL, p, 1, 0, &e), CUDAG_EDUP,
        "duplicate kernel 'scale'");
    BAD(cudag_add_buffer(g, "q", CUDAG_TYPE_PTR, 4, NULL, &e), CUDAG_ETYPE,
        "buffer 'q': invalid element type");
    BAD(cudag_add_buffer(g, "q", CUDAG_TYPE_F32, 4, &bad_init, &e),
        CUDAG_EINVAL, "buffer 'q': invalid init kind");
    /* An empty range is refused, not filled from [-1, 1); {0, 0} alone is
     * the default. */
    cudag_init empty = {CUDAG_INIT_RANDOM, 0, 0.5, 0.5, 1};
    BAD(cudag_add_buffer(g, "q", CUDAG_TYPE_F32, 4, &empty, &e), CUDAG_ERANGE,
        "buffer 'q': range [0.5, 0.5] is empty: lo must be below hi");
    BAD(cudag_add_kernel(g, "k1", "nokernel", one, one, 0, NULL, 0, &e),
        CUDAG_EUNKNOWN, "node 'k1': unknown kernel 'nokernel'");
    BAD(cudag_add_kernel(g, "k1", "noop", one, one, 0, a1, 1, &e),
        CUDAG_EUNKNOWN, "node 'k1': unknown buffer 'nope'");
    BAD(cudag_add_kernel(g, "k1", "noop", one, one, 0, bad_kind, 1, &e),
        CUDAG_EINVAL, "node 'k1': argument 0 has an invalid kind");
    BAD(cudag_add_kernel(g, "bad name", "noop", one, one, 0, NULL, 0, &e),
        CUDAG_EINVAL, "cudag_add_kernel: 'bad name' is not a valid node name");
    BAD(cudag_add_kernel(g, "a[x]", "noop", one, one, 0, NULL, 0, &e),
        CUDAG_EINVAL, "cudag_add_kernel: 'a[x]' is not a valid node name");
    BAD(cudag_add_kernel(g, "zero", "noop", one, one, 0, NULL, 0, &e),
        CUDAG_EDUP, "duplicate node 'zero'");
    BAD(cudag_add_memset(g, "s", "nope", 0, 1, 0, &e), CUDAG_EUNKNOWN,
        "node 's': unknown buffer 'nope'");
    BAD(cudag_add_memcpy(g, "m", "x", 0, "nope", 0, 1, &e), CUDAG_EUNKNOWN,
        "node 'm': unknown buffer 'nope'");
    BAD(cudag_add_edge(g, "zero", "nope", CUDAG_EDGE_FULL, &e), CUDAG_EUNKNOWN,
        "edge zero -> nope: unknown node 'nope'");
    BAD(cudag_add_edge(g, "zero", "keep", (cudag_edge_kind)5, &e), CUDAG_EINVAL,
        "cudag_add_edge: invalid edge kind 5");
    BAD(cudag_bind_buffer(g, "nope", 0x1000, &e), CUDAG_EUNKNOWN,
        "unknown buffer 'nope'");
    BAD(cudag_bind_buffer(g, "x", 0, &e), CUDAG_EINVAL,
        "buffer 'x': cannot bind a null pointer");
#undef BAD
    assert_int_equal(cudag_graph_node_count(g), nodes);
    assert_int_equal(cudag_graph_edge_count(g), edges);
    /* The graph is still whole and checks clean. */
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_OK);
    /* A successful add invalidates the check. */
    assert_int_equal(cudag_add_kernel(g, "late", "noop", one, one, 0, NULL, 0, &e),
                     CUDAG_OK);
    char *t;
    assert_int_equal(cudag_dot(g, 0, &t, &e), CUDAG_ESTATE);
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_OK);
    assert_int_equal(cudag_dot(g, 0, &t, &e), CUDAG_OK);
    cudag_free(t);
    assert_int_equal(cudag_bind_buffer(g, "x", 0x1000, &e), CUDAG_OK);
    assert_int_equal(g->buffers[0].bound, 0x1000);
    cudag_graph_destroy(g);
    cudag_graph_destroy(NULL);
    assert_int_equal(cudag_graph_create("a b", &g, &e), CUDAG_EINVAL);
    assert_null(g);
    assert_int_equal(cudag_graph_create("a", NULL, &e), CUDAG_EINVAL);
}

static void api_introspection(void **state)
{
    (void)state;
    cudag_graph *g;
    assert_int_equal(tload_opts(yaml, "same.yaml", NULL, &g, NULL), CUDAG_OK);
    assert_int_equal(cudag_graph_node_count(g), 10);
    assert_int_equal(cudag_graph_buffer_count(g), 3);
    assert_string_equal(cudag_graph_buffer_name(g, 2), "c");
    assert_null(cudag_graph_buffer_name(g, 3));
    long i = cudag_graph_find_node(g, "pair[1].b");
    assert_true(i >= 0);
    assert_string_equal(cudag_graph_node_name(g, (size_t)i), "pair[1].b");
    cudag_node_kind nk;
    assert_int_equal(cudag_graph_node_kind(g, (size_t)cudag_graph_find_node(g, "keep"),
                                           &nk),
                     CUDAG_OK);
    assert_int_equal(nk, CUDAG_NODE_MEMCPY);
    assert_int_equal(cudag_graph_find_node(g, "pair[2].b"), -1);
    assert_null(cudag_graph_node_name(g, 99));
    size_t f, t;
    cudag_edge_kind k;
    bool seen_lo = false;
    for (size_t e = 0; e < cudag_graph_edge_count(g); e++) {
        assert_int_equal(cudag_graph_edge(g, e, &f, &t, &k), CUDAG_OK);
        if (k == CUDAG_EDGE_LAUNCH_ORDER) {
            assert_string_equal(cudag_graph_node_name(g, t) + 8, "b");
            seen_lo = true;
        }
    }
    assert_true(seen_lo);
    assert_int_equal(cudag_graph_edge(g, 1000, &f, &t, &k), CUDAG_ERANGE);
    assert_int_equal(cudag_graph_node_count(NULL), 0);
    cudag_graph_destroy(g);
}

static void api_status_table_and_formatting(void **state)
{
    (void)state;
    assert_string_equal(cudag_strerror(CUDAG_OK), "success");
    assert_string_equal(cudag_strerror(CUDAG_ECYCLE), "dependency cycle");
    assert_string_equal(cudag_strerror(12345), "unknown status");
    assert_string_equal(cudag_status_name(CUDAG_ENODRIVER), "CUDAG_ENODRIVER");
    /* Every code from -1 down to the last has a distinct name. */
    for (int c = -1; c >= CUDAG_EPDL; c--) {
        assert_string_not_equal(cudag_status_name(c), "CUDAG_UNKNOWN");
        assert_string_not_equal(cudag_strerror(c), "unknown status");
    }
    assert_string_equal(cudag_version_string(), "0.1.0");
    assert_string_equal(cudag_type_name(CUDAG_TYPE_BF16), "bf16");
    assert_int_equal(cudag_type_size(CUDAG_TYPE_BF16), 2);
    assert_int_equal(cudag_type_size(CUDAG_TYPE_PTR), 8);
    assert_null(cudag_type_name(CUDAG_TYPE_NONE));
    assert_int_equal(cudag_type_size((cudag_type)99), 0);
    assert_string_equal(cudag_edge_kind_name(CUDAG_EDGE_LAUNCH_ORDER), "launch_order");
    assert_null(cudag_edge_kind_name((cudag_edge_kind)3));
    cudag_error e;
    memset(&e, 0, sizeof e);
    strcpy(e.file, "g.yaml");
    e.line = 3;
    e.column = 7;
    e.severity = CUDAG_SEV_WARNING;
    strcpy(e.message, "buffer 'x' is never used");
    char buf[256];
    assert_int_equal(cudag_error_format(&e, buf, sizeof buf),
                     (int)strlen("g.yaml:3:7: warning: buffer 'x' is never used"));
    assert_string_equal(buf, "g.yaml:3:7: warning: buffer 'x' is never used");
    e.line = 0;
    cudag_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "g.yaml: warning: buffer 'x' is never used");
    e.file[0] = '\0';
    e.severity = CUDAG_SEV_ERROR;
    cudag_error_format(&e, buf, 10);
    assert_string_equal(buf, "error: bu");
}

/* A column counts characters (cudag.h): non-ASCII text before a problem on
 * the same line moves it by one column per character, however many bytes
 * the character takes, whether the position comes from the YAML parser's
 * mark, an offset into a scalar or into an expression. */
static void api_columns_count_characters(void **state)
{
    (void)state;
    /* A position from the parser's mark: 'é' and 'à' take two bytes each. */
    static const char flow[] =
        "{ cudag: 1, description: \"d\xc3\xa9j\xc3\xa0 vu\", vars: { n: 1 + nope } }\n";
    tdiag d;
    cudag_options o = topts(&d, NULL);
    cudag_graph *g;
    cudag_error err;
    assert_int_equal(tload_opts(flow, "u.yaml", &o, &g, &err), CUDAG_EUNKNOWN);
    assert_null(g);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 52);
    assert_string_equal(d.text, "u.yaml:1:52: error: unknown variable 'nope'\n");

    /* Offsets into scalars: an edge chain, an index expression. */
    static const char block[] =
        "cudag: 1\n"
        "modules: { m: k.fatbin }\n"
        "kernels: { k: { params: {n: i32} } }\n"
        "nodes:\n"
        "  a: { kernel: k, grid: 1, block: 32, args: [1] }\n"
        "  b: { kernel: k, grid: 1, block: 32, args: [1] }\n"
        "edges:\n"
        "  - a \xe2\x86\x92 b -> b -> nope\n"
        "  - \"\xc3\xa9 -> b[1 + zz]\"\n"
        "  - \"b[2 + \xf0\x9f\x98\x80] -> a\"\n";
    o = topts(&d, NULL);
    assert_int_equal(tload_opts(block, "u.yaml", &o, &g, &err), CUDAG_EKEY);
    assert_null(g);
    assert_int_equal(err.count, 5);
    assert_string_equal(d.text,
        "u.yaml:8:6: error: unexpected ' ' in a node name\n"
        "u.yaml:8:19: error: unknown node 'nope'\n"
        "u.yaml:9:6: error: expected a node name\n"
        "u.yaml:9:17: error: unknown variable 'zz'\n"
        "u.yaml:10:12: error: unexpected '\xf0\x9f\x98\x80' in expression\n");
}

static void api_errors_without_an_error_value(void **state)
{
    (void)state;
    /* Every function accepts err == NULL. */
    cudag_graph *g;
    assert_int_equal(cudag_graph_create("g", &g, NULL), CUDAG_OK);
    assert_int_equal(cudag_add_var(g, "9", 0, NULL), CUDAG_EINVAL);
    assert_int_equal(cudag_check(g, NULL, NULL), CUDAG_OK);
    cudag_graph *h = (cudag_graph *)1;
    assert_int_equal(cudag_load_string("cudag: 3\n", 9, NULL, NULL, &h, NULL),
                     CUDAG_EKEY);
    assert_null(h);
    assert_int_equal(cudag_load_string("cudag: 1\n", 9, NULL, NULL, &h, NULL), CUDAG_OK);
    cudag_graph_destroy(h);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_builder_and_yaml_build_identical_graphs),
        cmocka_unit_test(api_builder_errors_leave_graph_unchanged),
        cmocka_unit_test(api_introspection),
        cmocka_unit_test(api_status_table_and_formatting),
        cmocka_unit_test(api_columns_count_characters),
        cmocka_unit_test(api_errors_without_an_error_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
