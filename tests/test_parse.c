/* test_parse.c — the YAML document tree: shapes, positions, anchors and
 * aliases, merge keys, duplicate keys, limits and out-of-memory. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "yaml/parse.h"

#include <stddef.h>

#include <string.h>

typedef struct pctx {
    cudag__arena a;
    cudag__diag d;
    tdiag td;
    cudag_error first;
    cudag__doc *root;
} pctx;

static int parse(pctx *p, const char *text)
{
    memset(p, 0, sizeof *p);
    cudag_options o = topts(&p->td, NULL);
    cudag__diag_init(&p->d, &o, &p->first);
    return cudag__parse(&p->a, "p.yaml", text, strlen(text), &p->root, &p->d);
}

static void done(pctx *p) { cudag__arena_free(&p->a); }

static const cudag__doc *get(const cudag__doc *m, const char *k)
{
    const cudag__doc *v = cudag__doc_get(m, k);
    assert_non_null(v);
    return v;
}

static void parse_builds_tree_with_positions(void **state)
{
    (void)state;
    pctx p;
    assert_int_equal(parse(&p, "a: 1\nb:\n  - x\n  - 'y z'\nc: {d: [1, 2]}\n"),
                     CUDAG_OK);
    assert_int_equal(p.root->type, CUDAG__DOC_MAP);
    assert_int_equal(p.root->n, 3);
    const cudag__doc *a = get(p.root, "a");
    assert_string_equal(a->str, "1");
    assert_true(a->plain);
    assert_int_equal(a->pos.line, 1);
    assert_int_equal(a->pos.col, 4);
    const cudag__doc *b = get(p.root, "b");
    assert_int_equal(b->type, CUDAG__DOC_SEQ);
    assert_int_equal(b->n, 2);
    assert_string_equal(b->items[1]->str, "y z");
    assert_false(b->items[1]->plain);
    assert_int_equal(b->items[1]->pos.line, 4);
    assert_int_equal(b->items[1]->pos.col, 5);
    /* Inside a quoted scalar, offsets start after the quote. */
    cudag__pos at = cudag__doc_pos_at(b->items[1], 2);
    assert_int_equal(at.col, 8);
    const cudag__doc *d = get(get(p.root, "c"), "d");
    assert_int_equal(d->n, 2);
    assert_int_equal(d->items[1]->pos.col, 12);
    /* Weight counts every node: root + 3 keys + values (1 + seq of 2 + map
     * {key, seq of 2}). */
    assert_int_equal(p.root->weight, 1 + 3 + 1 + 3 + 1 + 1 + 3);
    done(&p);
}

/* Columns count characters (cudag.h): libyaml's marks do, and so must an
 * offset into a scalar and the reader's byte offset of a bad character. */
static void parse_columns_count_characters(void **state)
{
    (void)state;
    pctx p;
    /* k : ' é - x: the quote at 4, é at 5 (bytes 5-6), '-' at 6 (byte 7). */
    assert_int_equal(parse(&p, "k: '\xc3\xa9-x'\n\xe2\x86\x92: [z]\n"),
                     CUDAG_OK);
    const cudag__doc *k = get(p.root, "k");
    assert_int_equal(k->pos.col, 4);
    assert_int_equal(cudag__doc_pos_at(k, 2).col, 6);
    assert_int_equal(cudag__doc_pos_at(k, 3).col, 7);
    /* A three-byte key is one column: its value starts at column 4. */
    assert_int_equal(get(p.root, "\xe2\x86\x92")->items[0]->pos.col, 5);
    done(&p);

    assert_int_equal(parse(&p, "a: b\nc: \xc3\xa9\xe2\x86\x92\x01\n"),
                     CUDAG_ESYNTAX);
    assert_diag_contains(&p.td, "p.yaml:2:6: error: YAML syntax error: "
                                "control characters are not allowed (#x1)");
    done(&p);
}

static void parse_empty_and_comment_only_files(void **state)
{
    (void)state;
    pctx p;
    assert_int_equal(parse(&p, ""), CUDAG_OK);
    assert_null(p.root);
    done(&p);
    assert_int_equal(parse(&p, "# nothing here\n"), CUDAG_OK);
    assert_null(p.root);
    done(&p);
}

static void parse_aliases_share_nodes(void **state)
{
    (void)state;
    pctx p;
    assert_int_equal(parse(&p, "a: &x {k: 1}\nb: *x\nc: [*x, *x]\n"), CUDAG_OK);
    const cudag__doc *a = get(p.root, "a"), *b = get(p.root, "b");
    assert_ptr_equal(a, b);
    assert_ptr_equal(get(p.root, "c")->items[1], a);
    /* Expanded size counts each alias in full. */
    assert_int_equal(get(p.root, "c")->weight, 1 + 2 * 3);
    done(&p);
    /* A redefined anchor: the newest wins for later aliases. */
    assert_int_equal(parse(&p, "a: &x 1\nb: &x 2\nc: *x\n"), CUDAG_OK);
    assert_string_equal(get(p.root, "c")->str, "2");
    done(&p);
}

static void parse_merge_keys(void **state)
{
    (void)state;
    pctx p;
    assert_int_equal(parse(&p, "base: &b {grid: 4, block: 256}\n"
                               "more: &m {block: 128, smem: 0}\n"
                               "n: {kernel: k, <<: [*b, *m], grid: 8}\n"),
                     CUDAG_OK);
    const cudag__doc *n = get(p.root, "n");
    /* Written keys win, earlier merges win over later ones, and merged
     * pairs take the place of '<<'. */
    assert_int_equal(n->n, 4);
    assert_string_equal(n->items[0]->str, "kernel");
    assert_string_equal(n->items[2]->str, "block");
    assert_string_equal(n->items[3]->str, "256");
    assert_string_equal(n->items[4]->str, "smem");
    assert_string_equal(n->items[6]->str, "grid");
    assert_string_equal(n->items[7]->str, "8");
    assert_null(cudag__doc_get(n, "<<"));
    done(&p);
    /* A quoted "<<" is an ordinary key. */
    assert_int_equal(parse(&p, "n: {'<<': 1}\n"), CUDAG_OK);
    assert_non_null(cudag__doc_get(get(p.root, "n"), "<<"));
    done(&p);
}

static void parse_rejects_bad_documents(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *msg;
    } cases[] = {
        {"a: 1\na: 2\n", CUDAG_EDUP, "p.yaml:2:1: error: duplicate key 'a' (first at line 1)"},
        {"a: [1, 2\n", CUDAG_ESYNTAX, "YAML syntax error"},
        {"a: *nope\n", CUDAG_EUNKNOWN, "p.yaml:1:4: error: unknown anchor '*nope'"},
        {"a: &r [*r]\n", CUDAG_ESYNTAX, "refers to a node that contains it"},
        {"a: 1\n---\nb: 2\n", CUDAG_ESYNTAX, "holds one YAML document"},
        {"? [1, 2]\n: 3\n", CUDAG_ESYNTAX, "a mapping key must be a scalar, not a sequence"},
        {"a: {<<: [1]}\n", CUDAG_ESYNTAX, "a merge key '<<' takes mappings, not a scalar"},
        {"a: \"x\\0y\"\n", CUDAG_ESYNTAX, "a scalar contains a NUL character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pctx p;
        int rc = parse(&p, cases[i].text);
        if (rc != cases[i].code)
            print_error("case %zu: rc %d\n%s", i, rc, p.td.text);
        assert_int_equal(rc, cases[i].code);
        assert_null(p.root);
        assert_diag_contains(&p.td, cases[i].msg);
        done(&p);
    }
}

static void parse_limits(void **state)
{
    (void)state;
    pctx p;
    /* Nesting. */
    char deep[300];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[200] = '\0';
    assert_int_equal(parse(&p, deep), CUDAG_ELIMIT);
    assert_diag_contains(&p.td, "nesting deeper than 64 levels");
    done(&p);
    /* Billion laughs: 10 levels of ten-fold aliases is refused quickly and
     * without building the expansion. */
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n");
    for (int i = 1; i < 10; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,"
                              "*a%d,*a%d,*a%d]\n",
                              i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                              i - 1, i - 1, i - 1, i - 1);
    assert_int_equal(parse(&p, text), CUDAG_ELIMIT);
    assert_diag_contains(&p.td, "an alias bomb?");
    assert_true(p.a.used < (1u << 20));
    done(&p);
}

static void parse_big_mapping_is_linear(void **state)
{
    (void)state;
    /* 100 000 keys: duplicate detection must not be quadratic (this would
     * take minutes if it were). */
    size_t cap = 100000 * 16;
    char *text = malloc(cap);
    size_t n = 0;
    for (int i = 0; i < 100000; i++)
        n += (size_t)snprintf(text + n, cap - n, "k%d: %d\n", i, i);
    pctx p;
    assert_int_equal(parse(&p, text), CUDAG_OK);
    assert_int_equal(p.root->n, 100000);
    done(&p);
    free(text);
}

static void parse_survives_every_allocation_failure(void **state)
{
    (void)state;
    const char *text = "a: &x {k: [1, 2, 3]}\nb: {<<: *x, j: 2}\nc: [*x, *x]\n";
    long live = cudag__alloc_live();
    cudag__alloc_fail_after(-1);
    pctx p;
    assert_int_equal(parse(&p, text), CUDAG_OK);
    done(&p);
    long total = cudag__alloc_fail_after(-1);
    assert_true(total > 0);
    for (long i = 1; i <= total; i++) {
        cudag__alloc_fail_after(i);
        int rc = parse(&p, text);
        cudag__alloc_fail_after(-1);
        assert_int_equal(rc, CUDAG_ENOMEM);
        assert_null(p.root);
        assert_diag_contains(&p.td, "out of memory");
        done(&p);
        assert_int_equal(cudag__alloc_live(), live);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_builds_tree_with_positions),
        cmocka_unit_test(parse_columns_count_characters),
        cmocka_unit_test(parse_empty_and_comment_only_files),
        cmocka_unit_test(parse_aliases_share_nodes),
        cmocka_unit_test(parse_merge_keys),
        cmocka_unit_test(parse_rejects_bad_documents),
        cmocka_unit_test(parse_limits),
        cmocka_unit_test(parse_big_mapping_is_linear),
        cmocka_unit_test(parse_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
