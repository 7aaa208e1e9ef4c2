/* test_introspect.c — the calls that tell an embedding program what a graph
 * declares (src/show/introspect.c): buffers' types and sizes and variables'
 * values after defines, lookups by name, and the one way every call that
 * takes an index reports an index out of range. */
#include "common.h"

#include <string.h>

static const char yaml[] =
    "cudag: 1\n"
    "modules: { lib: lib.fatbin }\n"
    "kernels:\n"
    "  scale: { params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true }\n"
    "vars: { N: 256, ROWS: 3 }\n"
    "buffers:\n"
    "  x: { type: f32, count: ROWS*N, init: random }\n"
    "  h: { type: bf16, count: N }\n"
    "  c: { type: u8, count: 7 }\n"
    "nodes:\n"
    "  zero: { memset: h, value: 0 }\n"
    "  s: { kernel: scale, grid: 1, block: 32, args: [x, x, 2.0, N],\n"
    "       after: [zero] }\n"
    "  keep: { memcpy: c, from: c + 4, count: 3, after: [s] }\n";

static cudag_graph *load(const char *const *defines)
{
    cudag_options o = topts(NULL, defines);
    cudag_graph *g = NULL;
    cudag_error err;
    assert_int_equal(tload_opts(yaml, "i.yaml", &o, &g, &err), CUDAG_OK);
    return g;
}

static void introspect_buffers_by_index_and_name(void **state)
{
    (void)state;
    const char *defines[] = {"N=8", NULL};
    cudag_graph *g = load(defines);
    long x = cudag_graph_find_buffer(g, "x"), h = cudag_graph_find_buffer(g, "h");
    assert_int_equal(x, 0);
    assert_int_equal(h, 1);
    assert_int_equal(cudag_graph_find_buffer(g, "nope"), -1);
    assert_int_equal(cudag_graph_find_buffer(g, NULL), -1);
    cudag_type t;
    uint64_t n;
    /* Sizes follow the define, not the file's value. */
    assert_int_equal(cudag_graph_buffer(g, (size_t)x, &t, &n), CUDAG_OK);
    assert_int_equal(t, CUDAG_TYPE_F32);
    assert_int_equal(n, 24);
    assert_int_equal(cudag_graph_buffer(g, (size_t)h, &t, &n), CUDAG_OK);
    assert_int_equal(t, CUDAG_TYPE_BF16);
    assert_int_equal(n, 8);
    assert_int_equal(cudag_graph_buffer(g, 2, &t, NULL), CUDAG_OK);
    assert_int_equal(t, CUDAG_TYPE_U8);
    assert_int_equal(cudag_graph_buffer(g, 2, NULL, &n), CUDAG_OK);
    assert_int_equal(n, 7);
    cudag_graph_destroy(g);
}

static void introspect_vars_after_defines(void **state)
{
    (void)state;
    const char *defines[] = {"ROWS=5", NULL};
    cudag_graph *g = load(defines);
    assert_int_equal(cudag_graph_var_count(g), 2);
    long n = cudag_graph_find_var(g, "N"), r = cudag_graph_find_var(g, "ROWS");
    assert_true(n >= 0 && r >= 0 && n != r);
    assert_string_equal(cudag_graph_var_name(g, (size_t)n), "N");
    assert_string_equal(cudag_graph_var_name(g, (size_t)r), "ROWS");
    assert_int_equal(cudag_graph_find_var(g, "x"), -1);  /* a buffer */
    cudag_value v;
    memset(&v, 0x5a, sizeof v);
    assert_int_equal(cudag_graph_var(g, (size_t)n, &v), CUDAG_OK);
    assert_int_equal(v.type, CUDAG_TYPE_I64);
    assert_int_equal(v.i, 256);
    assert_true(v.f == 0.0);
    assert_int_equal(cudag_graph_var(g, (size_t)r, &v), CUDAG_OK);
    assert_int_equal(v.i, 5);
    assert_int_equal(cudag_graph_var(g, (size_t)r, NULL), CUDAG_OK);
    cudag_graph_destroy(g);
    /* A floating-point variable's value is a double. */
    static const char fy[] = "cudag: 1\nvars: {E: 5, eps: 1e-5, half: E / 10.0}\n";
    cudag_error e;
    assert_int_equal(cudag_load_string(fy, sizeof fy - 1, "f.yaml", NULL, &g, &e),
                     CUDAG_OK);
    memset(&v, 0x5a, sizeof v);
    assert_int_equal(cudag_graph_var(g, (size_t)cudag_graph_find_var(g, "eps"), &v),
                     CUDAG_OK);
    assert_int_equal(v.type, CUDAG_TYPE_F64);
    assert_true(v.f == 1e-5);
    assert_int_equal(v.i, 0);
    assert_int_equal(cudag_graph_var(g, (size_t)cudag_graph_find_var(g, "half"), &v),
                     CUDAG_OK);
    assert_true(v.type == CUDAG_TYPE_F64 && v.f == 0.5);
    assert_int_equal(cudag_graph_var(g, (size_t)cudag_graph_find_var(g, "E"), &v),
                     CUDAG_OK);
    assert_true(v.type == CUDAG_TYPE_I64 && v.i == 5);
    cudag_graph_destroy(g);
}

static void introspect_builder_graph(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(cudag_graph_create("b", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_var(g, "K", -3, &e), CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "w", CUDAG_TYPE_I64, 5, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_memset(g, "z", "w", 0, 5, 1.0, &e), CUDAG_OK);
    cudag_type t;
    uint64_t n;
    assert_int_equal(cudag_graph_buffer(g, 0, &t, &n), CUDAG_OK);
    assert_int_equal(t, CUDAG_TYPE_I64);
    assert_int_equal(n, 5);
    cudag_value v;
    assert_int_equal(cudag_graph_var(g, 0, &v), CUDAG_OK);
    assert_int_equal(v.i, -3);
    cudag_node_kind k;
    assert_int_equal(cudag_graph_node_kind(g, 0, &k), CUDAG_OK);
    assert_int_equal(k, CUDAG_NODE_MEMSET);
    cudag_graph_destroy(g);
}

static void introspect_kind_names(void **state)
{
    (void)state;
    cudag_graph *g = load(NULL);
    const char *want[] = {"memset", "kernel", "memcpy"};
    for (size_t i = 0; i < 3; i++) {
        cudag_node_kind k;
        assert_int_equal(cudag_graph_node_kind(g, i, &k), CUDAG_OK);
        assert_string_equal(cudag_node_kind_name(k), want[i]);
    }
    assert_null(cudag_node_kind_name((cudag_node_kind)-1));
    assert_string_equal(cudag_node_kind_name(CUDAG_NODE_CONDITIONAL),
                        "conditional");
    assert_null(
        cudag_node_kind_name((cudag_node_kind)(CUDAG_NODE_CHILD + 1)));
    assert_string_equal(cudag_node_kind_name(CUDAG_NODE_GEMM), "gemm");
    assert_string_equal(cudag_node_kind_name(CUDAG_NODE_HOST), "host");
    assert_string_equal(cudag_node_kind_name(CUDAG_NODE_CHILD), "graph");
    cudag_graph_destroy(g);
}

/* Every indexed call, at the first index past the end, far past it and on a
 * NULL graph: NULL or CUDAG_ERANGE, and the out-values keep their poison. */
static void check_bad_index(const cudag_graph *g, size_t i)
{
    assert_null(cudag_graph_node_name(g, i));
    assert_null(cudag_graph_buffer_name(g, i));
    assert_null(cudag_graph_var_name(g, i));
    cudag_node_kind k = (cudag_node_kind)77;
    assert_int_equal(cudag_graph_node_kind(g, i, &k), CUDAG_ERANGE);
    assert_int_equal(k, 77);
    size_t f = 77, t = 77;
    cudag_edge_kind ek = (cudag_edge_kind)77;
    assert_int_equal(cudag_graph_edge(g, i, &f, &t, &ek), CUDAG_ERANGE);
    assert_true(f == 77 && t == 77 && ek == 77);
    cudag_type ty = (cudag_type)77;
    uint64_t n = 77;
    assert_int_equal(cudag_graph_buffer(g, i, &ty, &n), CUDAG_ERANGE);
    assert_true(ty == 77 && n == 77);
    cudag_value v = {(cudag_type)77, 77, 77.0};
    assert_int_equal(cudag_graph_var(g, i, &v), CUDAG_ERANGE);
    assert_true(v.type == 77 && v.i == 77 && v.f == 77.0);
    /* Without out-pointers the answer is the same. */
    assert_int_equal(cudag_graph_node_kind(g, i, NULL), CUDAG_ERANGE);
    assert_int_equal(cudag_graph_edge(g, i, NULL, NULL, NULL), CUDAG_ERANGE);
    assert_int_equal(cudag_graph_buffer(g, i, NULL, NULL), CUDAG_ERANGE);
    assert_int_equal(cudag_graph_var(g, i, NULL), CUDAG_ERANGE);
}

static void introspect_bad_index_one_way(void **state)
{
    (void)state;
    cudag_graph *g = load(NULL);
    /* Node, edge, buffer and variable counts differ (3, 2, 3, 2): the
     * largest is past the end of every table. */
    size_t past = cudag_graph_node_count(g);
    assert_int_equal(cudag_graph_edge_count(g), 2);
    assert_int_equal(cudag_graph_var_count(g), 2);
    assert_int_equal(cudag_graph_buffer_count(g), 3);
    check_bad_index(g, past);
    check_bad_index(g, past + 1);
    check_bad_index(g, SIZE_MAX);
    /* The first index past each table on its own. */
    assert_int_equal(cudag_graph_edge(g, 2, NULL, NULL, NULL), CUDAG_ERANGE);
    assert_int_equal(cudag_graph_edge(g, 1, NULL, NULL, NULL), CUDAG_OK);
    assert_int_equal(cudag_graph_var(g, 2, NULL), CUDAG_ERANGE);
    assert_null(cudag_graph_var_name(g, 2));
    assert_non_null(cudag_graph_var_name(g, 1));
    check_bad_index(NULL, 0);
    assert_int_equal(cudag_graph_var_count(NULL), 0);
    assert_int_equal(cudag_graph_find_buffer(NULL, "x"), -1);
    assert_int_equal(cudag_graph_find_var(NULL, "N"), -1);
    assert_int_equal(cudag_graph_find_node(NULL, "s"), -1);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(introspect_buffers_by_index_and_name),
        cmocka_unit_test(introspect_vars_after_defines),
        cmocka_unit_test(introspect_builder_graph),
        cmocka_unit_test(introspect_kind_names),
        cmocka_unit_test(introspect_bad_index_one_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
