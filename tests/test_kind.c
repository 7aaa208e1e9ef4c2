/* test_kind.c — the node-kind table (src/kind.c, src/kind.h): indexed by
 * cudag_node_kind, each entry complete, names unique, and no lookup past
 * its end. */
#include "common.h"
#include "kind.h"

#include <string.h>

static void kind_table_is_indexed_by_kind(void **state)
{
    (void)state;
    size_t n;
    const cudag__kind_ops *const *kinds = cudag__kinds(&n);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(kinds[i]->kind, (int)i);
        assert_ptr_equal(cudag__kind((cudag_node_kind)i), kinds[i]);
        assert_string_equal(cudag__node_kind_name((cudag_node_kind)i),
                            kinds[i]->name);
    }
    assert_string_equal(kinds[CUDAG_NODE_KERNEL]->name, "kernel");
    assert_string_equal(kinds[CUDAG_NODE_MEMSET]->name, "memset");
    assert_string_equal(kinds[CUDAG_NODE_MEMCPY]->name, "memcpy");
    assert_null(cudag__kind((cudag_node_kind)n));
    assert_null(cudag__kind((cudag_node_kind)-1));
    assert_string_equal(cudag__node_kind_name((cudag_node_kind)99), "kernel");
}

/* Every kind fills the steps every stage calls unconditionally, and its
 * keys include its own name and "after". */
static void kind_entries_are_complete(void **state)
{
    (void)state;
    size_t n;
    const cudag__kind_ops *const *kinds = cudag__kinds(&n);
    for (size_t i = 0; i < n; i++) {
        const cudag__kind_ops *k = kinds[i];
        assert_non_null(k->read_yaml);
        assert_non_null(k->check);
        assert_non_null(k->add);
        assert_non_null(k->repoint);
        assert_non_null(k->dot_label);
        assert_non_null(k->dot_legend);
        assert_non_null(strstr(k->what, k->name));
        /* A kind with a launch description describes it. */
        assert_true(!k->launch_slots == !k->describe);
        assert_true(k->plan_count < sizeof(cudag_plan_info));
        bool self = false, after = false;
        for (size_t j = 0; j < k->nkeys; j++) {
            self |= strcmp(k->keys[j], k->name) == 0;
            after |= strcmp(k->keys[j], "after") == 0;
        }
        assert_true(self);
        assert_true(after);
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
    assert_false(cudag__kind(CUDAG_NODE_MEMSET)->pdl_end);
    assert_false(cudag__kind(CUDAG_NODE_MEMCPY)->pdl_end);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_table_is_indexed_by_kind),
        cmocka_unit_test(kind_entries_are_complete),
        cmocka_unit_test(kind_only_kernels_end_pdl_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
