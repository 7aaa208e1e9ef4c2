/* test_kind.c — the node-kind table (src/kinds/kind.c, src/kinds/kind.h): indexed by
 * cudag_node_kind, each entry complete, names unique, and no lookup past
 * its end. */
#include "common.h"
#include "cudag.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>

#include <string.h>

static void kind_table_is_indexed_by_kind(void **state)
{
    (void)state;
    size_t n;
    const cudag__kind_ops *const *kinds = cudag__kinds(&n);
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(kinds[i]->kind, (int)i);
        assert_ptr_equal(cudag__kind((cudag_node_kind)i), kinds[i]);
        assert_string_equal(cudag__node_kind_name((cudag_node_kind)i),
                            kinds[i]->name);
    }
    assert_string_equal(kinds[CUDAG_NODE_KERNEL]->name, "kernel");
    assert_string_equal(kinds[CUDAG_NODE_MEMSET]->name, "memset");
    assert_string_equal(kinds[CUDAG_NODE_MEMCPY]->name, "memcpy");
    assert_string_equal(kinds[CUDAG_NODE_CONDITIONAL]->name, "conditional");
    assert_string_equal(kinds[CUDAG_NODE_GEMM]->name, "gemm");
    assert_string_equal(kinds[CUDAG_NODE_CAPTURE]->name, "capture");
    assert_string_equal(kinds[CUDAG_NODE_EVENT_RECORD]->name, "event_record");
    assert_string_equal(kinds[CUDAG_NODE_EVENT_WAIT]->name, "event_wait");
    assert_string_equal(kinds[CUDAG_NODE_HOST]->name, "host");
    assert_string_equal(kinds[CUDAG_NODE_CHILD]->name, "graph");
    assert_null(cudag__kind((cudag_node_kind)n));
    assert_null(cudag__kind((cudag_node_kind)-1));
    assert_string_equal(cudag__node_kind_name((cudag_node_kind)99), "kernel");
}

/* Every kind fills the steps every stage calls unconditionally, and its
 * keys include the keys that select it and "after". */
static void kind_entries_are_complete(void **state)
{
    (void)state;
    size_t n;
    const cudag__kind_ops *const *kinds = cudag__kinds(&n);
    for (size_t i = 0; i < n; i++) {
        const cudag__kind_ops *k = kinds[i];
        assert_non_null(k->check);
        assert_non_null(k->add);
        /* Kernels, memsets and copies can each be one stream launch. */
        if (k->kind <= CUDAG_NODE_MEMCPY)
            assert_non_null(k->launch);
        assert_non_null(k->dot_label);
        assert_non_null(k->dot_legend);
        assert_non_null(strstr(k->what, k->name));
        /* A kind with a launch description describes it. */
        assert_true(!k->launch_slots == !k->describe);
        assert_true(k->plan_count < sizeof(cudag_plan_info));
        /* A kind YAML can name has its selecting keys and "after" among
         * its keys; a kind only the C API makes has none. */
        size_t ns = k->select ? k->nselect : 1;
        const char *const *sel = k->select ? k->select : &k->name;
        for (size_t s = 0; s < ns && k->read_yaml; s++) {
            bool self = false;
            for (size_t j = 0; j < k->nkeys; j++)
                self |= strcmp(k->keys[j], sel[s]) == 0;
            assert_true(self);
        }
        bool after = false;
        for (size_t j = 0; j < k->nkeys; j++)
            after |= strcmp(k->keys[j], "after") == 0;
        assert_true(k->read_yaml ? after : k->nkeys == 0);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(kinds[j]->name, k->name);
            assert_int_not_equal(kinds[j]->plan_count, k->plan_count);
        }
    }
}

/* Only kinds with the driver's kernel-node ports may end a PDL edge. */
static void kind_only_kernels_end_pdl_edges(void **state)
{
    (void)state;
    assert_true(cudag__kind(CUDAG_NODE_KERNEL)->pdl_end);
    for (int k = CUDAG_NODE_MEMSET; k <= CUDAG_NODE_CHILD; k++)
        assert_false(cudag__kind((cudag_node_kind)k)->pdl_end);
}

/* A kind that runs kernels of its own in a child graph says why an edge
 * into it is built full; the others have no such reason. */
static void kind_library_kinds_explain_full_edges(void **state)
{
    (void)state;
    size_t n;
    const cudag__kind_ops *const *kinds = cudag__kinds(&n);
    for (size_t i = 0; i < n; i++)
        assert_false(kinds[i]->pdl_end && kinds[i]->pdl_full);
    assert_non_null(cudag__kind(CUDAG_NODE_GEMM)->pdl_full);
    assert_non_null(cudag__kind(CUDAG_NODE_CAPTURE)->pdl_full);
    assert_null(cudag__kind(CUDAG_NODE_MEMSET)->pdl_full);
    assert_null(cudag__kind(CUDAG_NODE_EVENT_WAIT)->pdl_full);
    assert_null(cudag__kind(CUDAG_NODE_HOST)->pdl_full);
}

/* The driver allows kernels, memsets, memcpys and conditionals in a
 * conditional body (cuda.h, CUDA_CONDITIONAL_NODE_PARAMS); the checker
 * refuses a kind whose entry says otherwise. */
static void kind_bodies_hold_what_the_driver_allows(void **state)
{
    (void)state;
    assert_true(cudag__kind(CUDAG_NODE_KERNEL)->in_body);
    assert_true(cudag__kind(CUDAG_NODE_MEMSET)->in_body);
    assert_true(cudag__kind(CUDAG_NODE_MEMCPY)->in_body);
    assert_true(cudag__kind(CUDAG_NODE_CONDITIONAL)->in_body);
    assert_false(cudag__kind(CUDAG_NODE_CONDITIONAL)->pdl_end);
    /* Only the kind with sub-graphs labels them, and it uses no buffer. */
    assert_non_null(cudag__kind(CUDAG_NODE_CONDITIONAL)->body_label);
    assert_non_null(cudag__kind(CUDAG_NODE_CONDITIONAL)->prepare);
    assert_null(cudag__kind(CUDAG_NODE_CONDITIONAL)->repoint);
    /* It runs only inside a graph: stream replays refuse it (replay.c). */
    assert_null(cudag__kind(CUDAG_NODE_CONDITIONAL)->launch);
    assert_null(cudag__kind(CUDAG_NODE_KERNEL)->body_label);
    assert_non_null(cudag__kind(CUDAG_NODE_KERNEL)->repoint);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_table_is_indexed_by_kind),
        cmocka_unit_test(kind_entries_are_complete),
        cmocka_unit_test(kind_only_kernels_end_pdl_edges),
        cmocka_unit_test(kind_library_kinds_explain_full_edges),
        cmocka_unit_test(kind_bodies_hold_what_the_driver_allows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
