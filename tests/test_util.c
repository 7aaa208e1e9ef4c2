/* test_util.c — src/base/alloc.c, map.c, diag.c and text.c on their own: the
 * allocation fault seam every OOM test of the other suites relies on, the
 * arena, growable arrays, the string map, the error setters and the
 * diagnostic sink, the text buffer and the string helpers.  Each container
 * is also driven through its failure paths (an injected allocation failure
 * leaves it as it was and leaks nothing). */
#include "common.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"

#include <stdbool.h>
#include <string.h>

static long live0;

static int setup(void **state)
{
    (void)state;
    cudag__alloc_fail_after(-1);
    live0 = cudag__alloc_live();
    return 0;
}

/* Every test leaves the allocations it made freed and the seam off. */
static int teardown(void **state)
{
    (void)state;
    cudag__alloc_fail_after(-1);
    assert_int_equal(cudag__alloc_live(), live0);
    return 0;
}

/* ---- allocation ---------------------------------------------------------- */

static void util_alloc_fails_the_nth_allocation(void **state)
{
    (void)state;
    cudag__alloc_fail_after(3);
    void *a = cudag__malloc(8);
    void *b = cudag__calloc(2, 8);
    void *c = cudag__malloc(8);   /* the third: fails */
    void *d = cudag__malloc(8);   /* the seam fires once */
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    assert_non_null(d);
    /* The count covers every attempt since the last call, the failed one
     * included, so a sweep knows how far to go. */
    assert_int_equal(cudag__alloc_fail_after(-1), 4);
    assert_int_equal(cudag__alloc_live(), live0 + 3);
    cudag__free(a);
    cudag__free(b);
    cudag__free(d);
    cudag__free(NULL);
    assert_int_equal(cudag__alloc_live(), live0);
}

static void util_alloc_failure_paths_of_each_allocator(void **state)
{
    (void)state;
    cudag__alloc_fail_after(1);
    assert_null(cudag__calloc(4, 4));
    cudag__alloc_fail_after(1);
    assert_null(cudag__strdup("abc"));

    /* A failed realloc keeps the old block, which the caller still owns. */
    char *p = cudag__malloc(4);
    assert_non_null(p);
    memcpy(p, "xyz", 4);
    cudag__alloc_fail_after(1);
    assert_null(cudag__realloc(p, 1 << 20));
    assert_string_equal(p, "xyz");
    char *q = cudag__realloc(p, 1 << 20);
    assert_non_null(q);
    assert_string_equal(q, "xyz");
    /* Growing a block is not a new live allocation; realloc(NULL) is. */
    assert_int_equal(cudag__alloc_live(), live0 + 1);
    cudag__free(q);
    void *r = cudag__realloc(NULL, 16);
    assert_int_equal(cudag__alloc_live(), live0 + 1);
    cudag__free(r);

    char *s = cudag__strdup("copied");
    assert_string_equal(s, "copied");
    cudag__free(s);
    /* Zero-byte requests return a block that can be freed, not NULL. */
    void *z = cudag__malloc(0);
    assert_non_null(z);
    cudag__free(z);
}

/* ---- arena --------------------------------------------------------------- */

static void util_arena_allocates_zeroed_aligned_memory(void **state)
{
    (void)state;
    cudag__arena a = {0};
    unsigned char *small = cudag__arena_alloc(&a, 3);
    assert_non_null(small);
    assert_int_equal((uintptr_t)small % 16, 0);
    assert_int_equal(small[0] | small[1] | small[2], 0);
    memset(small, 0xab, 3);
    /* Larger than a chunk: its own chunk, and the small object survives. */
    size_t big_n = 1u << 20;
    unsigned char *big = cudag__arena_alloc(&a, big_n);
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % 16, 0);
    for (size_t i = 0; i < big_n; i += 4099)
        assert_int_equal(big[i], 0);
    memset(big, 0xcd, big_n);
    assert_int_equal(small[2], 0xab);
    assert_true(a.used >= big_n + 3);
    /* Many small objects after the big one: none overlaps another. */
    unsigned char *prev = cudag__arena_alloc(&a, 40);
    memset(prev, 0xff, 40);
    for (int i = 0; i < 5000; i++) {
        unsigned char *o = cudag__arena_alloc(&a, 40);
        assert_non_null(o);
        assert_int_equal(o[39], 0);
        memset(o, i & 0xff, 40);
        assert_int_equal(prev[0], (unsigned char)((i - 1) & 0xff));
        prev = o;
    }
    cudag__arena_free(&a);
    assert_null(a.head);
    assert_int_equal(a.used, 0);
    /* An arena is reusable after it was freed. */
    assert_non_null(cudag__arena_alloc(&a, 8));
    cudag__arena_free(&a);
}

static void util_arena_strings(void **state)
{
    (void)state;
    cudag__arena a = {0};
    assert_string_equal(cudag__arena_strndup(&a, "abcdef", 3), "abc");
    assert_string_equal(cudag__arena_strdup(&a, "whole"), "whole");
    assert_string_equal(cudag__arena_cat(&a, "x.y", 2, "zw", 1), "x.z");
    assert_string_equal(cudag__arena_cat(&a, "", 0, "", 0), "");
    assert_string_equal(cudag__arena_printf(&a, "%s[%d]", "n", 42), "n[42]");
    /* Sizes that cannot be represented fail instead of wrapping. */
    assert_null(cudag__arena_strndup(&a, "x", SIZE_MAX));
    assert_null(cudag__arena_cat(&a, "x", SIZE_MAX - 1, "y", 1));
    assert_null(cudag__arena_alloc(&a, SIZE_MAX - 8));
    cudag__arena_free(&a);
}

static void util_arena_out_of_memory_keeps_what_it_has(void **state)
{
    (void)state;
    cudag__arena a = {0};
    cudag__alloc_fail_after(1);
    assert_null(cudag__arena_alloc(&a, 8));
    assert_null(a.head);
    char *kept = cudag__arena_strdup(&a, "kept");
    assert_non_null(kept);
    /* The head chunk is full after this; the next object needs a chunk. */
    assert_non_null(cudag__arena_alloc(&a, 64 * 1024 - 32));
    cudag__alloc_fail_after(1);
    assert_null(cudag__arena_printf(&a, "%0*d", 100, 7));
    /* The 16 bytes left in the head chunk still serve a small object; a
     * larger one needs a chunk and fails. */
    cudag__alloc_fail_after(1);
    assert_null(cudag__arena_alloc(&a, 32));
    assert_int_equal(cudag__alloc_fail_after(-1), 1);
    assert_non_null(cudag__arena_strdup(&a, "fits"));
    assert_string_equal(kept, "kept");
    assert_non_null(cudag__arena_strdup(&a, "after"));
    cudag__arena_free(&a);
}

/* ---- growable arrays ------------------------------------------------------ */

static void util_vec_push_grows_and_keeps_elements(void **state)
{
    (void)state;
    uint64_t *v = NULL;
    uint32_t len = 0, cap = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t *e = cudag__vec_push((void **)&v, &len, &cap, sizeof *v);
        assert_non_null(e);
        assert_int_equal(*e, 0);
        *e = i * i;
    }
    assert_int_equal(len, 1000);
    assert_true(cap >= 1000);
    for (uint64_t i = 0; i < 1000; i++)
        assert_int_equal(v[i], i * i);

    /* Out of memory at the next growth: nothing changes. */
    while (len < cap)
        *(uint64_t *)cudag__vec_push((void **)&v, &len, &cap, sizeof *v) = 1;
    uint64_t *before = v;
    uint32_t len0 = len, cap0 = cap;
    cudag__alloc_fail_after(1);
    assert_null(cudag__vec_push((void **)&v, &len, &cap, sizeof *v));
    assert_ptr_equal(v, before);
    assert_int_equal(len, len0);
    assert_int_equal(cap, cap0);
    assert_int_equal(v[999], 999 * 999);
    assert_non_null(cudag__vec_push((void **)&v, &len, &cap, sizeof *v));
    assert_int_equal(len, len0 + 1);
    cudag__free(v);

    /* An element size whose doubled array would not fit in a size_t. */
    char *w = NULL;
    len = cap = 0;
    assert_null(cudag__vec_push((void **)&w, &len, &cap, SIZE_MAX / 8));
    assert_null(w);
    assert_int_equal(len, 0);
}

/* ---- string map ----------------------------------------------------------- */

static void util_map_puts_gets_and_replaces(void **state)
{
    (void)state;
    cudag__map m = {0};
    uint32_t val = 99;
    assert_false(cudag__map_get(&m, "absent", &val));
    assert_int_equal(val, 99);

    static char keys[3000][12];
    for (uint32_t i = 0; i < 3000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%u", i);
        assert_int_equal(cudag__map_put(&m, keys[i], i), CUDAG_OK);
    }
    assert_int_equal(m.len, 3000);
    assert_true((uint64_t)m.len * 4 <= (uint64_t)m.cap * 3);
    for (uint32_t i = 0; i < 3000; i++) {
        /* Looked up by an equal string, not the stored pointer. */
        char probe[12];
        snprintf(probe, sizeof probe, "k%u", i);
        assert_true(cudag__map_get(&m, probe, &val));
        assert_int_equal(val, i);
    }
    assert_false(cudag__map_get(&m, "k3000", NULL));
    assert_true(cudag__map_get(&m, "k7", NULL));
    assert_int_equal(cudag__map_put(&m, "k7", 70000), CUDAG_OK);
    assert_int_equal(m.len, 3000);
    assert_true(cudag__map_get(&m, "k7", &val));
    assert_int_equal(val, 70000);
    cudag__map_free(&m);
    assert_int_equal(m.cap, 0);
    assert_false(cudag__map_get(&m, "k7", NULL));
}

static void util_map_reserve_and_out_of_memory(void **state)
{
    (void)state;
    cudag__map m = {0};
    assert_int_equal(cudag__map_reserve(&m, 1000), CUDAG_OK);
    uint32_t cap = m.cap;
    assert_true(cap >= 1000 * 4 / 3);
    /* After a reserve, that many puts allocate nothing. */
    static char keys[1000][8];
    cudag__alloc_fail_after(1);
    for (uint32_t i = 0; i < 1000; i++) {
        snprintf(keys[i], sizeof keys[i], "n%u", i);
        assert_int_equal(cudag__map_put(&m, keys[i], i), CUDAG_OK);
    }
    assert_int_equal(cudag__alloc_fail_after(-1), 0);
    assert_int_equal(m.cap, cap);
    assert_int_equal(cudag__map_reserve(&m, 10), CUDAG_OK);
    assert_int_equal(m.cap, cap);

    /* Each of the three arrays of a growth fails in turn: the map keeps
     * every entry and its old arrays. */
    for (long n = 1; n <= 3; n++) {
        cudag__alloc_fail_after(n);
        assert_int_equal(cudag__map_reserve(&m, cap), CUDAG_ENOMEM);
        assert_int_equal(m.cap, cap);
        assert_int_equal(m.len, 1000);
        uint32_t val;
        assert_true(cudag__map_get(&m, "n999", &val));
        assert_int_equal(val, 999);
    }
    /* A put that must grow and cannot leaves the map unchanged. */
    static char more[4000][8];
    uint32_t i = 0;
    while ((uint64_t)(m.len + 1) * 4 <= (uint64_t)m.cap * 3) {
        snprintf(more[i], sizeof more[i], "m%u", i);
        assert_int_equal(cudag__map_put(&m, more[i], i), CUDAG_OK);
        i++;
    }
    uint32_t len = m.len;
    cudag__alloc_fail_after(1);
    assert_int_equal(cudag__map_put(&m, "one-more", 1), CUDAG_ENOMEM);
    assert_int_equal(m.len, len);
    assert_int_equal(m.cap, cap);
    assert_false(cudag__map_get(&m, "one-more", NULL));
    assert_int_equal(cudag__map_put(&m, "one-more", 1), CUDAG_OK);
    assert_true(m.cap > cap);
    assert_true(cudag__map_get(&m, "n0", NULL));
    cudag__map_free(&m);
}

/* ---- errors and diagnostics ---------------------------------------------- */

static void util_fail_at_fills_the_error_and_returns_the_code(void **state)
{
    (void)state;
    cudag_error e;
    memset(&e, 0x5a, sizeof e);
    cudag__pos pos = {"dir/g.yaml", 3, 7};
    assert_int_equal(cudag__fail_at(&e, CUDAG_EUNKNOWN, pos,
                                    "unknown node '%s'", "b"),
                     CUDAG_EUNKNOWN);
    assert_int_equal(e.code, CUDAG_EUNKNOWN);
    assert_int_equal(e.severity, CUDAG_SEV_ERROR);
    assert_string_equal(e.file, "dir/g.yaml");
    assert_int_equal(e.line, 3);
    assert_int_equal(e.column, 7);
    assert_int_equal(e.count, 1);
    assert_int_equal(e.cuda_result, 0);
    assert_string_equal(e.message, "unknown node 'b'");
    char buf[256];
    cudag_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "dir/g.yaml:3:7: error: unknown node 'b'");

    /* Without a position the fields are empty, not stale. */
    assert_int_equal(cudag__fail_at(&e, CUDAG_ENOMEM, CUDAG__NOPOS, "oom"),
                     CUDAG_ENOMEM);
    assert_string_equal(e.file, "");
    assert_int_equal(e.line, 0);
    assert_int_equal(e.column, 0);
    /* A NULL error is allowed: the code still comes back. */
    assert_int_equal(cudag__fail_at(NULL, CUDAG_ESYNTAX, pos, "x"), CUDAG_ESYNTAX);

    /* A message longer than the field is cut, terminated. */
    char longmsg[3000];
    memset(longmsg, 'm', sizeof longmsg - 1);
    longmsg[sizeof longmsg - 1] = '\0';
    cudag__fail_at(&e, CUDAG_ESYNTAX, pos, "%s", longmsg);
    assert_int_equal(strlen(e.message), sizeof e.message - 1);

    cudag__error_clear(&e);
    assert_int_equal(e.code, CUDAG_OK);
    assert_int_equal(e.count, 0);
    assert_string_equal(e.file, "");
    assert_string_equal(e.message, "");
    cudag__error_clear(NULL);
}

static void util_error_prefix_moves_the_error(void **state)
{
    (void)state;
    cudag_error e;
    cudag__fail_at(&e, CUDAG_EARGS, (cudag__pos){"inner.yaml", 9, 2},
                   "wrong type");
    cudag__error_prefix(&e, (cudag__pos){"outer.yaml", 4, 5}, "in '%s'", "x");
    assert_int_equal(e.code, CUDAG_EARGS);
    assert_string_equal(e.message, "in 'x': wrong type");
    assert_string_equal(e.file, "outer.yaml");
    assert_int_equal(e.line, 4);
    assert_int_equal(e.column, 5);
    cudag__error_prefix(&e, CUDAG__NOPOS, "driver");
    assert_string_equal(e.message, "driver: in 'x': wrong type");
    assert_string_equal(e.file, "");
    assert_int_equal(e.line, 0);

    /* A full message keeps the prefix and is cut at the end. */
    memset(e.message, 'q', sizeof e.message - 1);
    e.message[sizeof e.message - 1] = '\0';
    cudag__error_prefix(&e, CUDAG__NOPOS, "pre");
    assert_int_equal(strlen(e.message), sizeof e.message - 1);
    assert_memory_equal(e.message, "pre: qqq", 8);
    cudag__error_prefix(NULL, CUDAG__NOPOS, "nothing");
}

typedef struct seen {
    int n;
    int sev[8];
    char msg[8][64];
} seen;

static void seen_fn(void *user, const cudag_error *e)
{
    seen *s = user;
    if (s->n < 8) {
        s->sev[s->n] = e->severity;
        snprintf(s->msg[s->n], sizeof s->msg[s->n], "%.63s", e->message);
    }
    s->n++;
}

static void util_diag_counts_keeps_the_first_and_drops_repeats(void **state)
{
    (void)state;
    seen s = {0};
    cudag_options o = {.size = sizeof o, .diag = seen_fn, .diag_user = &s};
    cudag_error first;
    cudag__diag d;
    cudag__diag_init(&d, &o, &first);
    cudag__pos a = {"g.yaml", 2, 3}, b = {"g.yaml", 5, 1};
    assert_int_equal(cudag__report(&d, CUDAG_SEV_WARNING, CUDAG_EPDL, a, "w"),
                     CUDAG_OK);
    assert_int_equal(cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_EUNKNOWN, a,
                                   "unknown 'x'"),
                     CUDAG_EUNKNOWN);
    assert_int_equal(cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_ETYPE, b,
                                   "bad type"),
                     CUDAG_ETYPE);
    /* The same error again, once with a suggestion: reported once. */
    assert_int_equal(cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_EUNKNOWN, a,
                                   "unknown 'x' (did you mean 'y'?)"),
                     CUDAG_EUNKNOWN);
    assert_int_equal(cudag__report(&d, CUDAG_SEV_NOTE, CUDAG_OK, b, "note"),
                     CUDAG_OK);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.sev[0], CUDAG_SEV_WARNING);
    assert_string_equal(s.msg[1], "unknown 'x'");
    assert_string_equal(s.msg[2], "bad type");
    assert_int_equal(s.sev[3], CUDAG_SEV_NOTE);
    assert_int_equal(d.nerr, 2);
    assert_int_equal(d.nwarn, 1);
    assert_false(cudag__diag_full(&d));
    assert_int_equal(cudag__diag_finish(&d), CUDAG_EUNKNOWN);
    assert_int_equal(first.count, 2);
    assert_int_equal(first.code, CUDAG_EUNKNOWN);
    assert_string_equal(first.message, "unknown 'x'");
    assert_int_equal(first.line, 2);

    /* A pass without errors finishes OK, with warnings only counted. */
    cudag__diag_init(&d, &o, &first);
    assert_string_equal(first.message, "");
    cudag__report(&d, CUDAG_SEV_WARNING, CUDAG_EPDL, a, "w");
    assert_int_equal(cudag__diag_finish(&d), CUDAG_OK);
    assert_int_equal(first.count, 0);
    assert_int_equal(first.code, CUDAG_OK);
}

static void util_diag_werror_and_max_errors(void **state)
{
    (void)state;
    cudag_error first;
    cudag__diag d;
    cudag_options o = {.size = sizeof o, .flags = CUDAG_WERROR, .max_errors = 3};
    cudag__diag_init(&d, &o, &first);
    assert_int_equal(cudag__report(&d, CUDAG_SEV_WARNING, CUDAG_EPDL,
                                   (cudag__pos){"w.yaml", 1, 1}, "unsafe"),
                     CUDAG_EPDL);
    assert_int_equal(first.severity, CUDAG_SEV_ERROR);
    for (uint32_t i = 2; i <= 5; i++)
        cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX,
                      (cudag__pos){"w.yaml", i, 1}, "e%u", i);
    assert_true(cudag__diag_full(&d));
    assert_int_equal(d.nerr, 3);
    assert_int_equal(cudag__diag_finish(&d), CUDAG_EPDL);
    assert_int_equal(first.count, 3);

    /* Repeats count towards the limit too, so a repeated mistake stops a
     * pass. */
    cudag__diag_init(&d, &o, NULL);
    for (int i = 0; i < 3; i++)
        cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX,
                      (cudag__pos){"w.yaml", 1, 1}, "same");
    assert_int_equal(d.nerr, 1);
    assert_false(cudag__diag_full(&d));
    cudag__report(&d, CUDAG_SEV_ERROR, CUDAG_ESYNTAX,
                  (cudag__pos){"w.yaml", 1, 1}, "same");
    assert_true(cudag__diag_full(&d));

    /* Options of size 0 are this version's; no options means defaults. */
    cudag_options zero = {.max_errors = 1};
    cudag__diag_init(&d, &zero, NULL);
    assert_int_equal(d.max_errors, 1);
    cudag__diag_init(&d, NULL, NULL);
    assert_int_equal(d.max_errors, 50);
    assert_null(d.fn);
}

/* ---- text buffer ---------------------------------------------------------- */

static void util_sb_appends_escapes_and_fails_once(void **state)
{
    (void)state;
    cudag__sb b = {0};
    cudag__sb_puts(&b, "digraph ");
    cudag__sb_printf(&b, "%s_%d {", "g", 7);
    cudag__sb_dot_escape(&b, "a\"b\\c\td\x7f");
    char *t = cudag__sb_finish(&b);
    assert_string_equal(t, "digraph g_7 {a\\\"b\\\\cd");
    assert_null(b.p);
    cudag__free(t);

    /* Nothing appended: an empty string, not NULL. */
    t = cudag__sb_finish(&b);
    assert_string_equal(t, "");
    cudag__free(t);

    /* Text longer than the first block grows the buffer. */
    for (int i = 0; i < 2000; i++)
        cudag__sb_printf(&b, "%04d", i);
    assert_int_equal(b.len, 8000);
    t = cudag__sb_finish(&b);
    assert_memory_equal(t + 7996, "1999", 5);
    cudag__free(t);

    /* One failed growth: later appends do nothing and finish gives NULL
     * with the buffer freed. */
    cudag__sb_puts(&b, "start");
    cudag__alloc_fail_after(1);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cudag__sb_puts(&b, big);
    assert_true(b.oom);
    cudag__sb_puts(&b, "more");
    cudag__sb_printf(&b, "%d", 1);
    assert_int_equal(b.len, 5);
    assert_null(cudag__sb_finish(&b));
    assert_false(b.oom);
}

/* ---- strings --------------------------------------------------------------- */

static void util_edit_distance_and_suggest(void **state)
{
    (void)state;
    assert_int_equal(cudag__edit_distance("kitten", "sitting", 10), 3);
    assert_int_equal(cudag__edit_distance("same", "same", 10), 0);
    assert_int_equal(cudag__edit_distance("", "abc", 10), 3);
    /* Capped: at least cap comes back as cap, by length alone or not. */
    assert_int_equal(cudag__edit_distance("a", "abcdefgh", 3), 3);
    assert_int_equal(cudag__edit_distance("abcd", "wxyz", 2), 2);
    char l65[66];
    memset(l65, 'a', 65);
    l65[65] = '\0';
    assert_int_equal(cudag__edit_distance(l65, l65, 5), 5);

    const char *cands[] = {"rmsnorm", NULL, "softmax", "layernorm"};
    assert_string_equal(cudag__suggest("rmsnrom", cands, 4), "rmsnorm");
    assert_string_equal(cudag__suggest("layrnorm", cands, 4), "layernorm");
    assert_null(cudag__suggest("gemm", cands, 4));
    /* Too short for a plausible typo. */
    const char *one[] = {"a"};
    assert_null(cudag__suggest("b", one, 1));
}

/* Columns are characters: continuation bytes add none. */
static void util_columns_and_character_bytes(void **state)
{
    (void)state;
    const char *s = "a\xc3\xa9\t\xe2\x86\x92\xf0\x9f\x98\x80z";
    assert_int_equal(cudag__columns(s, strlen(s)), 6);
    assert_int_equal(cudag__columns(s, 3), 2);
    assert_int_equal(cudag__columns(s, 0), 0);
    assert_int_equal(cudag__char_bytes("a", 1), 1);
    assert_int_equal(cudag__char_bytes(s + 1, 10), 2);
    assert_int_equal(cudag__char_bytes(s + 4, 10), 3);
    assert_int_equal(cudag__char_bytes(s + 7, 10), 4);
    /* A cut or broken sequence: only the bytes that are there and belong. */
    assert_int_equal(cudag__char_bytes(s + 7, 2), 2);
    assert_int_equal(cudag__char_bytes("\xe2z", 2), 1);
    assert_int_equal(cudag__char_bytes("\x80", 1), 1);
}

static void util_is_ident(void **state)
{
    (void)state;
    assert_true(cudag__is_ident("_a9", 3));
    assert_true(cudag__is_ident("abc.d", 3));  /* only n bytes count */
    assert_false(cudag__is_ident("9a", 2));
    assert_false(cudag__is_ident("a-b", 3));
    assert_false(cudag__is_ident("", 0));
    assert_false(cudag__is_ident("\xc3\xa9t\xc3\xa9", 5));
    char name[CUDAG__MAX_NAME + 2];
    memset(name, 'n', sizeof name);
    assert_true(cudag__is_ident(name, CUDAG__MAX_NAME));
    assert_false(cudag__is_ident(name, CUDAG__MAX_NAME + 1));

    uint64_t t0 = cudag__now_ns(), t1 = cudag__now_ns();
    assert_true(t1 >= t0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(util_alloc_fails_the_nth_allocation),
        T(util_alloc_failure_paths_of_each_allocator),
        T(util_arena_allocates_zeroed_aligned_memory),
        T(util_arena_strings),
        T(util_arena_out_of_memory_keeps_what_it_has),
        T(util_vec_push_grows_and_keeps_elements),
        T(util_map_puts_gets_and_replaces),
        T(util_map_reserve_and_out_of_memory),
        T(util_fail_at_fills_the_error_and_returns_the_code),
        T(util_error_prefix_moves_the_error),
        T(util_diag_counts_keeps_the_first_and_drops_repeats),
        T(util_diag_werror_and_max_errors),
        T(util_sb_appends_escapes_and_fails_once),
        T(util_edit_distance_and_suggest),
        T(util_columns_and_character_bytes),
        T(util_is_ident),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
