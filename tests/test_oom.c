/* test_oom.c — what protects a process that loads files it does not trust,
 * where the inputs are too big to commit to tests/data/bad/:
 *   - the limits of src/ir/graph.h met by generated inputs (file size, included
 *     files, include depth, merge keys, variables, buffers, nodes, edges,
 *     work multiplied by repetition, 64 TiB buffers, the largest grid), on
 *     both sides of the limit where that is cheap, with the exact message
 *     and position;
 *   - out-of-memory injection: every allocation of load → check → DOT →
 *     plan → lowering again with a changed variable fails in turn, for every
 *     graph in graphs/, tests/data/good/ and tests/data/schema-good/.  Each
 *     time the stage that met it returns CUDAG_ENOMEM, a failed load returns
 *     no graph, the objects the caller already had still work, and
 *     cudag__alloc_live() is back where it started (under valgrind every
 *     7th allocation, under ASan every 3rd: see sweep()).
 * The nodes and edges limits build a million nodes or eight million edges
 * (seconds, hundreds of MB): they are skipped under valgrind and ASan,
 * which would take many minutes over them, and say so. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/attrs.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "front/load.h"

#include <stddef.h>
#include <stdarg.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

/* A growable string for generated inputs (test memory: plain malloc). */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) CUDAG__PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        t->s = realloc(t->s, cap);
        assert_non_null(t->s);
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static bool under_valgrind(void)
{
    static int known = -1;
    if (known < 0) {
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        known = 0;
        while (f && !known && fgets(line, sizeof line, f))
            known = strstr(line, "vgpreload") != NULL;
        if (f)
            fclose(f);
    }
    return known;
}

/* AddressSanitizer's build: clang says so through __has_feature, gcc
 * through __SANITIZE_ADDRESS__. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if !defined(UNDER_ASAN) && defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The limits that build millions of nodes or edges walk the same code as
 * the smaller inputs the sanitizers and valgrind see in the other tests;
 * under them they would take the suite past its time. */
static bool skip_heavy(const char *what)
{
    const char *under = under_valgrind() ? "valgrind" : UNDER_ASAN ? "ASan" : NULL;
    if (!under)
        return false;
    print_message("skipped under %s: %s (seconds natively, many minutes "
                  "under %s)\n", under, what, under);
    return true;
}

/* Loads text under `name` and expects failure with `code` and the first
 * error reading exactly "<name>:<want>"; nothing may stay allocated. */
static void expect_error(const char *yaml, size_t len, const char *name,
                         int code, const char *want)
{
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g = (cudag_graph *)1;
    cudag_error err;
    long live = cudag__alloc_live();
    int rc = cudag_load_string(yaml, len, name, &o, &g, &err);
    char got[2048], full[2048];
    cudag_error_format(&err, got, sizeof got);
    snprintf(full, sizeof full, "%s:%s", name, want);
    if (strcmp(got, full) != 0 || rc != code)
        print_error("expected (%d) %s\ngot      (%d) %s\n", code, full, rc, got);
    assert_int_equal(rc, code);
    assert_string_equal(got, full);
    assert_null(g);
    assert_true(td.nerr >= 1);
    assert_int_equal(cudag__alloc_live(), live);
}

/* Loads text and expects success; returns the graph. */
static cudag_graph *expect_ok(const char *yaml, size_t len, const char *name)
{
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    int rc = cudag_load_string(yaml, len, name, &o, &g, &err);
    if (rc != CUDAG_OK)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_non_null(g);
    return g;
}

/* ---- limits ---------------------------------------------------------------- */

static void limits_file_size_in_memory(void **state)
{
    (void)state;
    size_t max = CUDAG__MAX_FILE_BYTES;
    char *big = malloc(max + 2);
    assert_non_null(big);
    /* A valid file of exactly the limit: a header, then one long comment. */
    memset(big, 'x', max + 1);
    memcpy(big, "cudag: 1\n# ", 11);
    big[max - 1] = '\n';
    if (!skip_heavy("a 64 MiB file at the limit")) {
        cudag_graph *g = expect_ok(big, max, "big.yaml");
        cudag_graph_destroy(g);
    }
    expect_error(big, max + 1, "big.yaml", CUDAG_ELIMIT,
                 "1:1: error: file is larger than 67108864 bytes");
    free(big);
}

static void limits_file_size_on_disk(void **state)
{
    (void)state;
    const char *dir = tmkdir("oom");
    char path[4200];
    /* Sparse: the size is refused before a byte is read. */
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)CUDAG__MAX_FILE_BYTES + 1), 0);
    close(fd);
    twrite(dir, "top.yaml", "cudag: 1\ninclude: big.yaml\n");

    cudag_graph *g = (cudag_graph *)1;
    cudag_error err;
    char want[8600], got[2048];
    assert_int_equal(cudag_load_file(path, NULL, &g, &err), CUDAG_ELIMIT);
    assert_null(g);
    cudag_error_format(&err, got, sizeof got);
    /* The top file has no position to show: the path is in the message. */
    snprintf(want, sizeof want, "error: '%s' is larger than 67108864 bytes",
             path);
    assert_string_equal(got, want);

    /* Through an include, the error points at the include. */
    snprintf(path, sizeof path, "%s/top.yaml", dir);
    assert_int_equal(cudag_load_file(path, NULL, &g, &err), CUDAG_ELIMIT);
    cudag_error_format(&err, got, sizeof got);
    snprintf(want, sizeof want,
             "%s:2:10: error: '%s/big.yaml' is larger than 67108864 bytes",
             path, dir);
    assert_string_equal(got, want);
    trm_tree(dir);
}

/* 256 included files load; the 257th is refused at its include. */
static void limits_included_files(void **state)
{
    (void)state;
    const char *dir = tmkdir("oom");
    for (unsigned i = 0; i <= CUDAG__MAX_FILES; i++) {
        char name[32], body[64];
        snprintf(name, sizeof name, "f%03u.yaml", i);
        snprintf(body, sizeof body, "cudag: 1\nvars: { v%03u: %u }\n", i, i);
        twrite(dir, name, body);
    }
    for (unsigned n = CUDAG__MAX_FILES; n <= CUDAG__MAX_FILES + 1; n++) {
        text t = {0};
        put(&t, "cudag: 1\ninclude:\n");
        for (unsigned i = 0; i < n; i++)
            put(&t, "  - f%03u.yaml\n", i);
        char top[4200];
        snprintf(top, sizeof top, "%s/top.yaml", dir);
        twrite(dir, "top.yaml", t.s);
        tdiag td;
        cudag_options o = topts(&td, NULL);
        cudag_graph *g = NULL;
        cudag_error err;
        int rc = cudag_load_file(top, &o, &g, &err);
        if (n == CUDAG__MAX_FILES) {
            assert_int_equal(rc, CUDAG_OK);
            assert_int_equal(g->nvars, CUDAG__MAX_FILES);
            cudag_graph_destroy(g);
        } else {
            char want[4400], got[2048];
            assert_int_equal(rc, CUDAG_ELIMIT);
            assert_null(g);
            cudag_error_format(&err, got, sizeof got);
            snprintf(want, sizeof want,
                     "%s:%u:5: error: more than 256 files included", top,
                     3 + CUDAG__MAX_FILES);
            assert_string_equal(got, want);
        }
        free(t.s);
    }
    trm_tree(dir);
}

/* tests/data/bad/limit_include_depth.yaml goes one level too deep; its
 * chain loaded from the first link is exactly as deep as allowed. */
static void limits_include_depth_at_the_limit(void **state)
{
    (void)state;
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    assert_int_equal(cudag_load_file(tsrc("tests/data/bad/deep/d01.yaml"), &o,
                                     &g, &err),
                     CUDAG_OK);
    assert_int_equal(cudag__find_var(g, "DEEPEST") != CUDAG__NONE, 1);
    cudag_graph_destroy(g);
}

/* Merge keys that would add more than 4 Mi pairs to one mapping: 2048
 * merges of a 2048-pair mapping is exactly the limit, one more is over. */
static void limits_merge_keys(void **state)
{
    (void)state;
    for (unsigned merges = 2048; merges <= 2049; merges++) {
        text t = {0};
        put(&t, "cudag: 1\nx-big: &big {");
        for (unsigned i = 0; i < 2048; i++)
            put(&t, "%sk%u: 0", i ? ", " : "", i);
        put(&t, "}\nx-merged:\n");
        for (unsigned i = 0; i < merges; i++)
            put(&t, "  <<: *big\n");
        if (merges == 2048) {
            cudag_graph_destroy(expect_ok(t.s, t.len, "merge.yaml"));
        } else {
            expect_error(t.s, t.len, "merge.yaml", CUDAG_ELIMIT,
                         "4:3: error: merge keys add more than 4194304 pairs");
        }
        free(t.s);
    }
}

/* The same bound holds for the whole document: two mappings offering 2 Mi
 * pairs each reach it, a third merge is refused where it is written. */
static void limits_merge_keys_across_mappings(void **state)
{
    (void)state;
    text t = {0};
    put(&t, "cudag: 1\nx-big: &big {");
    for (unsigned i = 0; i < 2048; i++)
        put(&t, "%sk%u: 0", i ? ", " : "", i);
    put(&t, "}\n");
    for (int m = 0; m < 2; m++) {
        put(&t, "x-m%d:\n", m);
        for (unsigned i = 0; i < 1024; i++)
            put(&t, "  <<: *big\n");
    }
    cudag_graph_destroy(expect_ok(t.s, t.len, "merge.yaml"));
    put(&t, "x-third:\n  <<: *big\n");
    char want[96];
    snprintf(want, sizeof want,
             "%u:3: error: merge keys add more than 4194304 pairs",
             3 + 2 * 1025 + 1);
    expect_error(t.s, t.len, "merge.yaml", CUDAG_ELIMIT, want);
    free(t.s);
}

/* An error repeated in every copy of a repetition is reported once, and
 * stops the pass after max_errors repeats as max_errors different errors
 * would: the work does not grow with the copies (each repeat used to
 * search every node for a suggestion, 30 000 copies took 80 s). */
static void limits_repeated_error_stops_the_pass(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "buffers: {b: {type: u8, count: 1}}\n"
        "nodes:\n"
        "  n[i in 30000]: {memset: b, value: 0, after: nnope}\n";
    cudag__alloc_fail_after(-1);
    expect_error(yaml, strlen(yaml), "repeat.yaml", CUDAG_EUNKNOWN,
                 "4:47: error: unknown node 'nnope'");
    long made = cudag__alloc_fail_after(-1);
    if (made >= 1000)
        print_error("%ld allocations for one repeated error\n", made);
    assert_true(made < 1000);
}

/* Every copy of a repetition lowers its node's description again: a long
 * aliased `after:` list (references that fall off the end of the
 * repetition, so no edge and no error) in a thousand copies is 2e8 YAML
 * nodes to lower, hours at a million copies.  Refused before lowering. */
static void limits_lowered_copies(void **state)
{
    (void)state;
    text t = {0};
    put(&t, "cudag: 1\nbuffers: {b: {type: u8, count: 1}}\n"
            "x-r: &r \"n[i+5000000]\"\nx-refs: &refs [*r");
    for (unsigned i = 1; i < 200000; i++)
        put(&t, ", *r");
    put(&t, "]\nnodes:\n"
            "  n[i in 1000]: {memset: b, value: 0, after: *refs}\n");
    expect_error(t.s, t.len, "lowered.yaml", CUDAG_ELIMIT,
                 "6:3: error: the nodes' descriptions, each copy counted, "
                 "add up to more than 67108864 YAML nodes");
    free(t.s);
}

static void limits_variables(void **state)
{
    (void)state;
    text t = {0};
    put(&t, "cudag: 1\nvars:\n");
    for (unsigned i = 0; i <= CUDAG__MAX_VARS; i++)
        put(&t, "  v%05u: %u\n", i, i);
    expect_error(t.s, t.len, "vars.yaml", CUDAG_ELIMIT,
                 "65539:3: error: too many variables (the limit is 65536)");
    /* One fewer fits. */
    char *last = strstr(t.s, "  v65536");
    assert_non_null(last);
    cudag_graph *g = expect_ok(t.s, (size_t)(last - t.s), "vars.yaml");
    assert_int_equal(g->nvars, CUDAG__MAX_VARS);
    cudag_graph_destroy(g);
    free(t.s);
}

static void limits_buffers(void **state)
{
    (void)state;
    text t = {0};
    put(&t, "cudag: 1\nbuffers:\n");
    for (unsigned i = 0; i <= CUDAG__MAX_BUFFERS; i++)
        put(&t, "  b%05u: { type: u8, count: 1 }\n", i);
    expect_error(t.s, t.len, "buffers.yaml", CUDAG_ELIMIT,
                 "65539:3: error: too many buffers (the limit is 65536)");
    free(t.s);
}

/* A million nodes from a few bytes is allowed; one node more is not. */
static void limits_nodes(void **state)
{
    (void)state;
    if (skip_heavy("1 Mi nodes"))
        return;
    /* A chain: a million memsets of one byte with no order between them
     * would be a million races (src/check/access.c). */
    static const char head[] =
        "cudag: 1\n"
        "buffers: { b: { type: u8, count: 1 } }\n"
        "nodes:\n"
        "  n[i in 1048576]: { memset: b, value: 0, after: [\"n[i-1]\"] }\n";
    cudag_graph *g = expect_ok(head, strlen(head), "nodes.yaml");
    assert_int_equal(cudag_graph_node_count(g), CUDAG__MAX_NODES);
    cudag_graph_destroy(g);
    text t = {0};
    put(&t, "%s  one_more: { memset: b, value: 0 }\n", head);
    expect_error(t.s, t.len, "nodes.yaml", CUDAG_ELIMIT,
                 "5:3: error: more than 1048576 nodes and groups");
    free(t.s);
}

/* 3000 nodes that each wait for the same 3000 (one alias) would make 9 M
 * edges from 30 KB: refused at the first edge over 8 Mi. */
static void limits_edges(void **state)
{
    (void)state;
    if (skip_heavy("8 Mi edges"))
        return;
    text t = {0};
    put(&t, "cudag: 1\nbuffers: { b: { type: u8, count: 1 } }\nx-all: &all [");
    for (unsigned i = 0; i < 3000; i++)
        put(&t, "%s\"b[%u]\"", i ? ", " : "", i);
    put(&t, "]\nnodes:\n"
            "  b[i in 3000]: { memset: b, value: 0 }\n"
            "  a[j in 3000]: { memset: b, value: 0, after: *all }\n");
    /* Edge 8388609 is a[2796]'s from b[608]. */
    char *at = strstr(t.s, "\"b[608]\"");
    assert_non_null(at);
    char *line = strstr(t.s, "x-all");
    char want[128];
    snprintf(want, sizeof want,
             "3:%d: error: too many edges (the limit is 8388608)",
             (int)(at - line) + 1);
    expect_error(t.s, t.len, "edges.yaml", CUDAG_ELIMIT, want);
    free(t.s);
}

/* Sizes at the edges of 64 bits: a buffer of exactly 64 TiB is allowed
 * (and the plan's byte count is right), one byte more is absurd; the
 * largest grid and block pass; offsets and counts near 2^63 are caught. */
static void limits_sizes_near_64_bits(void **state)
{
    (void)state;
    static const char ok[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "buffers:\n"
        "  huge: { type: u8, count: 70368744177664 }\n"
        "  x: { type: f32, count: 1024 }\n"
        "nodes:\n"
        "  z: { memset: huge, value: 0 }\n"
        "  a: { kernel: copy_f32, grid: [2147483647, 65535, 65535],\n"
        "       block: [1024, 1, 1], args: [x, x, 1024] }\n";
    cudag_graph *g = expect_ok(ok, strlen(ok), "sizes.yaml");
    cudag_plan_info pi;
    cudag_error err;
    assert_int_equal(cudag_plan(g, &pi, NULL, &err), CUDAG_OK);
    assert_true(pi.buffer_bytes == (UINT64_C(1) << 46) + 4096);
    cudag_graph_destroy(g);

    static const char over[] =
        "cudag: 1\n"
        "buffers:\n"
        "  huge: { type: u8, count: 70368744177665 }\n";
    expect_error(over, strlen(over), "sizes.yaml", CUDAG_ELIMIT,
                 "3:28: error: buffer 'huge': absurd size: 70368744177665 "
                 "elements of u8 is more than 64 TiB");

    static const char far[] =
        "cudag: 1\n"
        "buffers:\n"
        "  x: { type: f32, count: 1024 }\n"
        "nodes:\n"
        "  s: { memset: x + 9223372036854775807, count: 9223372036854775807, "
        "value: 0 }\n";
    expect_error(far, strlen(far), "sizes.yaml", CUDAG_ERANGE,
                 "5:3: error: node 's': memset of 9223372036854775807 "
                 "elements at offset 9223372036854775807 is outside buffer "
                 "'x' (1024 elements)");
}

/* ---- allocation failures ----------------------------------------------------- */

static const char *include_dirs[3];
static char extra_dir[4096];

static cudag_options sweep_opts(unsigned flags)
{
    cudag_options o = topts(NULL, NULL);
    /* tsrc() rotates through a few buffers: keep a copy. */
    snprintf(extra_dir, sizeof extra_dir, "%s", tsrc("tests/data/good/extra"));
    include_dirs[0] = getenv("CUDAG_KERNELS_DIR");
    include_dirs[1] = extra_dir;
    include_dirs[2] = NULL;
    if (!include_dirs[0]) {
        include_dirs[0] = include_dirs[1];
        include_dirs[1] = NULL;
    }
    o.include_dirs = include_dirs;
    o.flags = flags;
    return o;
}

/* Stages that met an allocation failure return CUDAG_ENOMEM; what the
 * caller had before the failing call still works (checked with failures
 * off).  Returns the first failure's status, CUDAG_OK when none failed. */
static int stages(const char *path, unsigned flags)
{
    cudag_options o = sweep_opts(flags);
    cudag_graph *g = (cudag_graph *)1;
    cudag_error err;
    int rc = cudag_load_file(path, &o, &g, &err);
    if (rc != CUDAG_OK) {
        assert_null(g);
        assert_int_equal(err.code, rc);
        assert_true(err.count >= 1);
        return rc;
    }
    if (flags & CUDAG_NO_CHECK) {
        rc = cudag_check(g, &o, &err);
        if (rc != CUDAG_OK) {
            cudag__alloc_fail_after(-1);
            assert_false(g->checked);
            assert_int_equal(cudag_check(g, &o, &err), CUDAG_OK);
            cudag_graph_destroy(g);
            return rc;
        }
    }
    char *dot = (char *)1;
    rc = cudag_dot(g, 0, &dot, &err);
    if (rc != CUDAG_OK) {
        assert_null(dot);
        cudag__alloc_fail_after(-1);
        assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_OK);
        cudag_free(dot);
        cudag_graph_destroy(g);
        return rc;
    }
    cudag_free(dot);
    char *plan = (char *)1;
    cudag_plan_info pi;
    rc = cudag_plan(g, &pi, &plan, &err);
    if (rc != CUDAG_OK) {
        assert_null(plan);
        cudag__alloc_fail_after(-1);
        assert_int_equal(cudag_plan(g, &pi, &plan, &err), CUDAG_OK);
        cudag_free(plan);
        cudag_graph_destroy(g);
        return rc;
    }
    cudag_free(plan);
    if (g->nvars) {
        /* The same value again: the relowered graph is always valid. */
        cudag_graph *ng = (cudag_graph *)1;
        char value[40];
        if (g->vars[0].is_float)
            cudag__fmt_num(value, g->vars[0].f);
        else
            snprintf(value, sizeof value, "%lld", (long long)g->vars[0].value);
        rc = cudag__relower(g, g->vars[0].name, value, &ng, &err);
        if (rc != CUDAG_OK) {
            assert_null(ng);
            assert_int_equal(err.code, rc);
            cudag__alloc_fail_after(-1);
            assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_OK);
            cudag_free(dot);
            cudag_graph_destroy(g);
            return rc;
        }
        assert_int_equal(cudag_graph_node_count(ng), cudag_graph_node_count(g));
        cudag_graph_destroy(ng);
    }
    cudag_graph_destroy(g);
    return CUDAG_OK;
}

/* Makes allocation n fail for n = 1, 2, … until the stages run through
 * without meeting a failure.  Under valgrind (some 5 ms a load) every 7th
 * n, under ASan every 3rd, from a start that differs between files and
 * flags: a sweep is quadratic in a file's allocations (the Llama graphs
 * make 800 since the check builds access sets), and ASan took 8 minutes
 * over every n (2026-11-26); the plain run tries every n. */
static unsigned sweep(const char *path, unsigned flags)
{
    static unsigned start;
    long step = under_valgrind() ? 7 : UNDER_ASAN ? 3 : 1;
    long first = 1 + (long)(start++ % (unsigned)step);
    long live = cudag__alloc_live();
    cudag__alloc_fail_after(-1);
    int rc = stages(path, flags);
    long total = cudag__alloc_fail_after(-1);
    if (rc != CUDAG_OK)
        print_error("%s does not load cleanly (%d)\n", path, rc);
    assert_int_equal(rc, CUDAG_OK);
    assert_true(total > 0);
    assert_int_equal(cudag__alloc_live(), live);
    for (long n = first; n <= total; n += step) {
        cudag__alloc_fail_after(n);
        rc = stages(path, flags);
        cudag__alloc_fail_after(-1);
        if (rc != CUDAG_ENOMEM || cudag__alloc_live() != live)
            print_error("%s, allocation %ld of %ld failing: status %d, %ld "
                        "left allocated\n",
                        path, n, total, rc, cudag__alloc_live() - live);
        assert_int_equal(rc, CUDAG_ENOMEM);
        assert_int_equal(cudag__alloc_live(), live);
    }
    /* Past the last allocation nothing fails. */
    cudag__alloc_fail_after(total + 1);
    assert_int_equal(stages(path, flags), CUDAG_OK);
    cudag__alloc_fail_after(-1);
    return (unsigned)total;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sweeps every .yaml of a directory (not below it), both with the check
 * inside the load and with cudag_check() called on its own. */
static void sweep_dir(const char *rel)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tsrc(rel));
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    assert_true(n > 0);
    qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unsigned a = sweep(path, 0);
        unsigned b = sweep(path, CUDAG_NO_CHECK);
        print_message("%s/%s: %u + %u allocations made to fail\n", rel,
                      names[i], a, b);
        free(names[i]);
    }
}

static void oom_every_allocation_of_graphs(void **state)
{
    (void)state;
    sweep_dir("graphs");
}

static void oom_every_allocation_of_good_files(void **state)
{
    (void)state;
    sweep_dir("tests/data/good");
    sweep_dir("tests/data/good/lib");
    sweep_dir("tests/data/schema-good");
}

/* A file with errors: the failure may hit the error path (suggestions,
 * messages) instead; whatever the status, nothing leaks and no graph is
 * returned. */
static void oom_error_paths_leak_nothing(void **state)
{
    (void)state;
    static const char *const files[] = {
        "tests/data/bad/node_unknown_kernel.yaml",
        "tests/data/bad/cycle_three.yaml",
        "tests/data/bad/edge_list_unknown.yaml",
        "tests/data/bad/define_unknown.yaml",
        "tests/data/bad/include_cycle.yaml",
        "tests/data/bad/child_cycle.yaml",
        "tests/data/bad/child_error_position.yaml",
        "tests/data/bad/child_unknown_var.yaml",
        "tests/data/bad/warning_unused_werror.yaml",
        "tests/data/bad/kernel_pick_params_differ.yaml",
        "tests/data/bad/kernel_pick_unknown_alternative.yaml",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        cudag_options o = sweep_opts(CUDAG_WERROR);
        static const char *const defs[] = {"NN=3", NULL};
        o.defines = defs;
        long live = cudag__alloc_live();
        cudag__alloc_fail_after(-1);
        cudag_graph *g = (cudag_graph *)1;
        cudag_error err;
        int clean = cudag_load_file(tsrc(files[i]), &o, &g, &err);
        long total = cudag__alloc_fail_after(-1);
        assert_int_not_equal(clean, CUDAG_OK);
        for (long n = 1; n <= total; n++) {
            cudag__alloc_fail_after(n);
            int rc = cudag_load_file(tsrc(files[i]), &o, &g, &err);
            cudag__alloc_fail_after(-1);
            assert_null(g);
            assert_true(rc == clean || rc == CUDAG_ENOMEM);
            assert_int_equal(err.code, rc);
            assert_int_equal(cudag__alloc_live(), live);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_file_size_in_memory),
        cmocka_unit_test(limits_file_size_on_disk),
        cmocka_unit_test(limits_included_files),
        cmocka_unit_test(limits_include_depth_at_the_limit),
        cmocka_unit_test(limits_merge_keys),
        cmocka_unit_test(limits_merge_keys_across_mappings),
        cmocka_unit_test(limits_repeated_error_stops_the_pass),
        cmocka_unit_test(limits_lowered_copies),
        cmocka_unit_test(limits_variables),
        cmocka_unit_test(limits_buffers),
        cmocka_unit_test(limits_nodes),
        cmocka_unit_test(limits_edges),
        cmocka_unit_test(limits_sizes_near_64_bits),
        cmocka_unit_test(oom_every_allocation_of_graphs),
        cmocka_unit_test(oom_every_allocation_of_good_files),
        cmocka_unit_test(oom_error_paths_leak_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
