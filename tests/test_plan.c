/* test_plan.c — the plan of a checked graph (src/show/plan.c): counts, depth,
 * width and buffer bytes for chain, fork-join, diamond and wavefront shapes,
 * the exact text, and allocation failures. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cudag_graph *new_graph(void)
{
    cudag_graph *g = NULL;
    cudag_error e;
    assert_int_equal(cudag_graph_create("g", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_module(g, "m", "m.fatbin", &e), CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "nop", "m", NULL, NULL, 0, 1, &e),
                     CUDAG_OK);
    return g;
}

static cudag_plan_info plan(const cudag_graph *g, char **text)
{
    cudag_plan_info pi;
    cudag_error e;
    memset(&pi, 0xa5, sizeof pi);
    int rc = cudag_plan(g, &pi, text, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
    return pi;
}

static void expect_text(const char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        print_error("expected:\n%s\ngot:\n%s\n", want, got);
    assert_string_equal(got, want);
}

static void plan_requires_checked_graph(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    cudag_plan_info pi;
    char *text = (char *)1;
    cudag_error e;
    assert_int_equal(cudag_plan(g, &pi, &text, &e), CUDAG_ESTATE);
    assert_null(text);
    assert_string_equal(e.message,
                        "cudag_plan: graph 'g' has not passed cudag_check()");
    assert_int_equal(cudag_plan(NULL, &pi, &text, &e), CUDAG_EINVAL);
    cudag_graph_destroy(g);
}

static void plan_of_chain(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    char name[32], prev[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "step[%d]", i);
        tnop(g, name);
        if (i)
            tedge(g, prev, name, i % 2 ? CUDAG_EDGE_PROGRAMMATIC
                                       : CUDAG_EDGE_FULL);
        memcpy(prev, name, sizeof name);
    }
    tcheck_ok(g);
    char *text = NULL;
    cudag_plan_info pi = plan(g, &text);
    assert_int_equal(pi.nodes, 5);
    assert_int_equal(pi.kernel_nodes, 5);
    assert_int_equal(pi.memset_nodes, 0);
    assert_int_equal(pi.memcpy_nodes, 0);
    assert_int_equal(pi.edges[CUDAG_EDGE_FULL], 2);
    assert_int_equal(pi.edges[CUDAG_EDGE_PROGRAMMATIC], 2);
    assert_int_equal(pi.edges[CUDAG_EDGE_LAUNCH_ORDER], 0);
    assert_int_equal(pi.depth, 5);
    assert_int_equal(pi.width, 1);
    assert_int_equal(pi.buffer_bytes, 0);
    expect_text(text, "graph: g\n"
                      "nodes: 5 (5 kernel, 0 memset, 0 memcpy, 0 conditional, 0 gemm, 0 graph)\n"
                      "edges: 4 (2 full, 2 programmatic, 0 launch_order)\n"
                      "depth: 5\n"
                      "width: 1\n"
                      "buffers: 0 (0 bytes, 0 B)\n"
                      "schedule:\n"
                      "level 0: step[0]\n"
                      "level 1: step[1]\n"
                      "level 2: step[2]\n"
                      "level 3: step[3]\n"
                      "level 4: step[4]\n");
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_of_fork_join(void **state)
{
    /* zero (memset) -> load; load -> branch[0..4) (launch order); all
     * branches -> join; join -> save (memcpy). */
    (void)state;
    cudag_graph *g = new_graph();
    cudag_error e;
    assert_int_equal(cudag_add_buffer(g, "acc", CUDAG_TYPE_F32, 1024, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "out", CUDAG_TYPE_BF16, 1536 * 1024,
                                      NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_memset(g, "zero", "acc", 0, 1024, 0, &e),
                     CUDAG_OK);
    tnop(g, "load");
    tnop(g, "join");
    tedge(g, "zero", "load", CUDAG_EDGE_FULL);
    char name[32];
    for (int i = 3; i >= 0; i--) {
        snprintf(name, sizeof name, "branch[%d]", i);
        tnop(g, name);
        tedge(g, "load", name, CUDAG_EDGE_LAUNCH_ORDER);
        tedge(g, name, "join", CUDAG_EDGE_FULL);
    }
    assert_int_equal(cudag_add_memcpy(g, "save", "out", 0, "out", 1024, 1024,
                                      &e),
                     CUDAG_OK);
    tedge(g, "join", "save", CUDAG_EDGE_FULL);
    tcheck_ok(g);
    char *text = NULL;
    cudag_plan_info pi = plan(g, &text);
    assert_int_equal(pi.nodes, 8);
    assert_int_equal(pi.kernel_nodes, 6);
    assert_int_equal(pi.memset_nodes, 1);
    assert_int_equal(pi.memcpy_nodes, 1);
    assert_int_equal(pi.edges[CUDAG_EDGE_FULL], 6);
    assert_int_equal(pi.edges[CUDAG_EDGE_LAUNCH_ORDER], 4);
    assert_int_equal(pi.depth, 5);
    assert_int_equal(pi.width, 4);
    assert_int_equal(pi.buffer_bytes, 4096 + 3 * 1024 * 1024);
    /* Within a level, nodes come in the order they were added. */
    expect_text(text, "graph: g\n"
                      "nodes: 8 (6 kernel, 1 memset, 1 memcpy, 0 conditional, 0 gemm, 0 graph)\n"
                      "edges: 10 (6 full, 0 programmatic, 4 launch_order)\n"
                      "depth: 5\n"
                      "width: 4\n"
                      "buffers: 2 (3149824 bytes, 3.0 MiB)\n"
                      "schedule:\n"
                      "level 0: zero\n"
                      "level 1: load\n"
                      "level 2: branch[3] branch[2] branch[1] branch[0]\n"
                      "level 3: join\n"
                      "level 4: save\n");
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_of_diamond(void **state)
{
    /* a -> b -> d, a -> c -> d, plus a shortcut a -> d that does not make d
     * any earlier: levels are longest paths. */
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "d");
    tnop(g, "c");
    tnop(g, "b");
    tnop(g, "a");
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    tedge(g, "a", "c", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "b", "d", CUDAG_EDGE_FULL);
    tedge(g, "c", "d", CUDAG_EDGE_FULL);
    tedge(g, "a", "d", CUDAG_EDGE_FULL);
    tcheck_ok(g);
    char *text = NULL;
    cudag_plan_info pi = plan(g, &text);
    assert_int_equal(pi.depth, 3);
    assert_int_equal(pi.width, 2);
    assert_non_null(strstr(text, "schedule:\n"
                                 "level 0: a\n"
                                 "level 1: c b\n"
                                 "level 2: d\n"));
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_of_wavefront(void **state)
{
    /* R x C cells, each after its upper and left neighbours: R + C - 1
     * anti-diagonals, the longest of min(R, C) cells. */
    (void)state;
    enum { R = 7, C = 12 };
    cudag_graph *g = new_graph();
    cudag_error e;
    char name[32];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            snprintf(name, sizeof name, "w[%d].c[%d]", i, j);
            tnop(g, name);
            uint32_t me = (uint32_t)(i * C + j);
            if (i)
                assert_int_equal(cudag__add_edge(g, me - C, me, CUDAG_EDGE_FULL,
                                                 CUDAG__NOPOS, &e),
                                 CUDAG_OK);
            if (j)
                assert_int_equal(cudag__add_edge(g, me - 1, me,
                                                 CUDAG_EDGE_PROGRAMMATIC,
                                                 CUDAG__NOPOS, &e),
                                 CUDAG_OK);
        }
    tcheck_ok(g);
    char *text = NULL;
    cudag_plan_info pi = plan(g, &text);
    assert_int_equal(pi.nodes, R * C);
    assert_int_equal(pi.edges[CUDAG_EDGE_FULL], (R - 1) * C);
    assert_int_equal(pi.edges[CUDAG_EDGE_PROGRAMMATIC], R * (C - 1));
    assert_int_equal(pi.depth, R + C - 1);
    assert_int_equal(pi.width, R);
    assert_non_null(strstr(text, "level 0: w[0].c[0]\n"
                                 "level 1: w[0].c[1] w[1].c[0]\n"
                                 "level 2: w[0].c[2] w[1].c[1] w[2].c[0]\n"));
    assert_non_null(strstr(text, "level 17: w[6].c[11]\n"));
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_of_empty_graph(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tcheck_ok(g);
    char *text = NULL;
    cudag_plan_info pi = plan(g, &text);
    assert_int_equal(pi.nodes, 0);
    assert_int_equal(pi.depth, 0);
    assert_int_equal(pi.width, 0);
    expect_text(text, "graph: g\n"
                      "nodes: 0 (0 kernel, 0 memset, 0 memcpy, 0 conditional, 0 gemm, 0 graph)\n"
                      "edges: 0 (0 full, 0 programmatic, 0 launch_order)\n"
                      "depth: 0\n"
                      "width: 0\n"
                      "buffers: 0 (0 bytes, 0 B)\n"
                      "schedule:\n");
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_text_and_info_are_optional(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    tnop(g, "b");
    tcheck_ok(g);
    cudag_error e;
    cudag_plan_info pi = plan(g, NULL);
    assert_int_equal(pi.width, 2);
    char *text = NULL;
    assert_int_equal(cudag_plan(g, NULL, &text, &e), CUDAG_OK);
    assert_non_null(strstr(text, "level 0: a b\n"));
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void plan_survives_oom(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    tnop(g, "b");
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    tcheck_ok(g);
    cudag_plan_info pi;
    char *text = NULL;
    cudag_error e;
    long n;
    for (n = 1;; n++) {
        memset(&pi, 0, sizeof pi);
        long live = cudag__alloc_live();
        cudag__alloc_fail_after(n);
        int rc = cudag_plan(g, &pi, &text, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc == CUDAG_ENOMEM) {
            assert_int_equal(cudag__alloc_live(), live);
            assert_null(text);
            assert_int_equal(pi.nodes, 0);  /* left alone on failure */
            assert_string_equal(e.message, "out of memory planning graph 'g'");
            continue;
        }
        assert_int_equal(rc, CUDAG_OK);
        assert_true(made < n);
        break;
    }
    assert_true(n > 2);
    assert_int_equal(pi.depth, 2);
    cudag_free(text);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_requires_checked_graph),
        cmocka_unit_test(plan_of_chain),
        cmocka_unit_test(plan_of_fork_join),
        cmocka_unit_test(plan_of_diamond),
        cmocka_unit_test(plan_of_wavefront),
        cmocka_unit_test(plan_of_empty_graph),
        cmocka_unit_test(plan_text_and_info_are_optional),
        cmocka_unit_test(plan_survives_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
