/* test_lower.c — the top-level sections: version, name, variables and
 * defines, includes, modules, kernel signatures, buffers; the public load
 * functions; lowering again with new variable values. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "ir/graph.h"
#include "code/shipped.h"
#include "front/load.h"

#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string.h>
#include <sys/stat.h>

#define HEAD "cudag: 1\nmodules: { m: k.fatbin }\n"

static cudag_graph *load_ok(const char *yaml, const char *const *defines)
{
    tdiag td;
    cudag_options o = topts(&td, defines);
    cudag_graph *g = NULL;
    cudag_error err;
    int rc = tload_opts(yaml, "t.yaml", &o, &g, &err);
    if (rc != CUDAG_OK)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_non_null(g);
    return g;
}

static int64_t var(const cudag_graph *g, const char *name)
{
    uint32_t i = cudag__find_var(g, name);
    assert_int_not_equal(i, CUDAG__NONE);
    return g->vars[i].value;
}

/* Variable `name`, which must be floating point: its value. */
static double fvar(const cudag_graph *g, const char *name)
{
    uint32_t i = cudag__find_var(g, name);
    assert_int_not_equal(i, CUDAG__NONE);
    assert_true(g->vars[i].is_float);
    return g->vars[i].f;
}

/* A variable is floating point where a floating-point number or variable is
 * in its value; -D gives it a value of its kind. */
static void lower_floating_point_variables(void **state)
{
    (void)state;
    static const char y[] = "cudag: 1\n"
                            "vars: {E: 5, eps: 1e-5, half: E/10, f: E/10.0, "
                            "g: eps*E, H: 0x10, k: \"min(E, 2.5)\"}\n";
    cudag_graph *g = load_ok(y, NULL);
    assert_int_equal(var(g, "E"), 5);
    assert_false(g->vars[cudag__find_var(g, "half")].is_float);
    assert_int_equal(var(g, "half"), 0);
    assert_true(fvar(g, "eps") == 1e-5);
    assert_true(fvar(g, "f") == 0.5);
    assert_true(fvar(g, "g") == 1e-5 * 5);
    assert_true(fvar(g, "k") == 2.5);
    assert_int_equal(var(g, "H"), 16);
    cudag_graph_destroy(g);
    /* -D: a floating-point variable takes a double, or an integer as one. */
    const char *d1[] = {"eps=1e-6", "f=3", NULL};
    g = load_ok(y, d1);
    assert_true(fvar(g, "eps") == 1e-6);
    assert_true(fvar(g, "f") == 3.0);
    assert_true(fvar(g, "g") == 1e-6 * 5);
    cudag_graph_destroy(g);
    /* An integer variable refuses a floating-point value: one error, at the
     * define, and the file's value stands in for the rest. */
    const char *d2[] = {"E=1.5", NULL};
    tdiag td;
    cudag_options o = topts(&td, d2);
    cudag_graph *out;
    cudag_error err;
    assert_int_equal(tload_opts(y, NULL, &o, &out, &err), CUDAG_ETYPE);
    assert_int_equal(td.nerr, 1);
    assert_string_equal(td.text, "<command line>:1:3: error: 'E' is an integer "
                                 "variable, and 1.5 is not an integer\n");
    /* Where an integer is needed, a floating-point variable is an error. */
    o = topts(&td, NULL);
    assert_int_equal(tload_opts("cudag: 1\nvars: {eps: 0.5}\n"
                                "buffers: {b: {type: f32, count: eps * 8}}\n",
                                NULL, &o, &out, &err),
                     CUDAG_ETYPE);
    assert_int_equal(td.nerr, 1);
    assert_string_equal(td.text, "t.yaml:3:33: error: 'eps' is a "
                                 "floating-point variable, and an integer is "
                                 "needed here\n");
}

static void lower_vars_in_order_and_defines(void **state)
{
    (void)state;
    const char *y = "cudag: 1\nvars:\n  T: 64\n  H: 4096\n  N: T*H\n"
                    "  G: cdiv(N, 256)\n";
    cudag_graph *g = load_ok(y, NULL);
    assert_int_equal(var(g, "N"), 64 * 4096);
    assert_int_equal(var(g, "G"), 1024);
    assert_false(g->vars[cudag__find_var(g, "H")].overridden);
    cudag_graph_destroy(g);
    /* A define replaces a value; later variables see it; the last define of
     * a name wins; a define may use variables defined before its own. */
    const char *defs[] = {"H=8", "T=128", "H=T/8", NULL};
    g = load_ok(y, defs);
    assert_int_equal(var(g, "T"), 128);
    assert_int_equal(var(g, "H"), 16);
    assert_int_equal(var(g, "N"), 128 * 16);
    assert_int_equal(var(g, "G"), 8);
    assert_true(g->vars[cudag__find_var(g, "H")].overridden);
    cudag_graph_destroy(g);
    /* Bad defines. */
    tdiag td;
    const char *bad1[] = {"=3", NULL};
    cudag_options o = topts(&td, bad1);
    cudag_graph *out = (cudag_graph *)1;
    cudag_error err;
    assert_int_equal(tload_opts(y, NULL, &o, &out, &err), CUDAG_EINVAL);
    assert_null(out);
    assert_string_equal(err.message, "-D '=3': expected NAME=VALUE");
    const char *bad2[] = {"Q=1", "R=2", NULL};
    o = topts(&td, bad2);
    assert_int_equal(tload_opts(y, NULL, &o, &out, &err), CUDAG_EUNKNOWN);
    assert_int_equal(td.nerr, 2);
    assert_int_equal(err.count, 2);
}

static void lower_name_version_and_free_keys(void **state)
{
    (void)state;
    cudag_graph *g = load_ok("cudag: 1\n", NULL);
    assert_string_equal(cudag_graph_name(g), "t");
    assert_int_equal(cudag_graph_node_count(g), 0);
    cudag_graph_destroy(g);
    g = load_ok("cudag: 1\nname: my graph\ndescription: anything\n"
                "x-mine: {whatever: [1, 2]}\n", NULL);
    assert_string_equal(cudag_graph_name(g), "my graph");
    cudag_graph_destroy(g);
}

static void lower_kernel_signatures(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(
        HEAD "kernels:\n"
             "  a: { params: {x: ptr, n: i64, s: f32}, pdl: true }\n"
             "  b: { symbol: b_impl, params: [ptr, u32, bf16, f64] }\n"
             "  c: { params: {} }\n"
             "  d: { params: [], pdl: no }\n",
        NULL);
    assert_int_equal(g->nsigs, 4);
    const cudag__sig *a = &g->sigs[cudag__find_sig(g, "a")];
    assert_int_equal(a->nparams, 3);
    assert_string_equal(a->pnames[1], "n");
    assert_int_equal(a->types[2], CUDAG_TYPE_F32);
    assert_true(a->pdl);
    assert_string_equal(a->symbol, "a");
    assert_string_equal(g->modules[a->module].path, "k.fatbin");
    const cudag__sig *b = &g->sigs[cudag__find_sig(g, "b")];
    assert_string_equal(b->symbol, "b_impl");
    assert_string_equal(b->pnames[2], "p2");
    assert_int_equal(b->types[1], CUDAG_TYPE_U32);
    assert_int_equal(b->types[2], CUDAG_TYPE_BF16);
    assert_false(b->pdl);
    assert_int_equal(g->sigs[cudag__find_sig(g, "c")].nparams, 0);
    assert_int_equal(g->sigs[cudag__find_sig(g, "d")].nparams, 0);
    cudag_graph_destroy(g);
}

/* A type written as C (or an array library) spells it gets the cudag word
 * suggested: for a parameter a pointer is ptr, for a buffer's elements the
 * type it points to. */
static void lower_c_type_words_get_cudag_words(void **state)
{
    (void)state;
    static const struct {
        const char *word, *param, *element;
    } cases[] = {
        {"float*", "ptr", "f32"},       {"const float *", "ptr", "f32"},
        {"__half*", "ptr", "f16"},      {"void*", "ptr", NULL},
        {"pointer", "ptr", NULL},       {"float", "f32", "f32"},
        {"double", "f64", "f64"},       {"int", "i32", "i32"},
        {"unsigned int", "u32", "u32"}, {"long long", "i64", "i64"},
        {"size_t", "u64", "u64"},       {"int8_t", "i8", "i8"},
        {"uint16_t", "u16", "u16"},     {"__nv_bfloat16", "bf16", "bf16"},
        {"fp16", "f16", "f16"},         {"float32", "f32", "f32"},
        {"flaot", "f32", "f32"},        {"xyzzy", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[512], want[512];
        for (int element = 0; element < 2; element++) {
            const char *best = element ? cases[i].element : cases[i].param;
            if (element)
                snprintf(yaml, sizeof yaml,
                         "cudag: 1\nbuffers: {b: {type: \"%s\", count: 4}}\n",
                         cases[i].word);
            else
                snprintf(yaml, sizeof yaml,
                         "cudag: 1\nmodules: {m: k.fatbin}\n"
                         "kernels: {k: {params: {x: \"%s\"}}}\n",
                         cases[i].word);
            snprintf(want, sizeof want, "%s'%s'%s (%s%s%sthe %stypes are %s)",
                     element ? "" : "unknown type ", cases[i].word,
                     element ? " is not an element type" : "",
                     best ? "did you mean '" : "",
                     best ? best : "", best ? "'? " : "",
                     element ? "element " : "",
                     element ? "i8, u8, i16, u16, i32, u32, i64, u64, f16, "
                               "bf16, f32, f64"
                             : "ptr, i8, u8, i16, u16, i32, u32, i64, u64, "
                               "f16, bf16, f32, f64, cond");
            tdiag td;
            cudag_graph *g;
            assert_int_equal(tload(yaml, &td, &g), CUDAG_ETYPE);
            assert_int_equal(td.nerr, 1);
            if (!strstr(td.text, want))
                fail_msg("%s: want '%s' in:\n%s", cases[i].word, want, td.text);
        }
    }
}

static void lower_buffers_and_init(void **state)
{
    (void)state;
    cudag_graph *g = load_ok(
        "cudag: 1\nvars: { N: 100 }\nbuffers:\n"
        "  a: { type: f32, count: N }\n"
        "  b: { type: bf16, count: 2*N, init: zero }\n"
        "  c: { type: i32, count: N, init: iota }\n"
        "  d: { type: f64, count: N, init: random }\n"
        "  e: { type: f16, count: N, init: random, seed: 42, range: [-0.5, 2] }\n"
        "  f: { type: u8, count: N, init: 7 }\n"
        "  h: { type: f32, count: N, init: -1.25 }\n",
        NULL);
    const cudag__buffer *b = g->buffers;
    assert_int_equal(g->nbuffers, 7);
    assert_int_equal(b[0].init.kind, CUDAG_INIT_NONE);
    assert_int_equal(b[1].count, 200);
    assert_int_equal(b[1].type, CUDAG_TYPE_BF16);
    assert_int_equal(b[1].init.kind, CUDAG_INIT_ZERO);
    assert_int_equal(b[2].init.kind, CUDAG_INIT_IOTA);
    assert_int_equal(b[3].init.kind, CUDAG_INIT_RANDOM);
    assert_int_equal(b[3].init.seed, 1);
    assert_true(b[3].init.lo == -1.0 && b[3].init.hi == 1.0);
    assert_int_equal(b[4].init.seed, 42);
    assert_true(b[4].init.lo == -0.5 && b[4].init.hi == 2.0);
    assert_int_equal(b[5].init.kind, CUDAG_INIT_CONST);
    assert_true(b[5].init.value == 7.0);
    assert_true(b[6].init.value == -1.25);
    assert_int_equal(cudag__buffer_bytes(&b[1]), 400);
    cudag_graph_destroy(g);
}

static void lower_includes_dirs_and_once(void **state)
{
    (void)state;
    tdiag td;
    const char *dirs[] = {tsrc("tests/data/good/extra"), NULL};
    cudag_options o = topts(&td, NULL);
    o.include_dirs = dirs;
    cudag_graph *g;
    cudag_error err;
    int rc = cudag_load_file(tsrc("tests/data/good/includes.yaml"), &o, &g, &err);
    if (rc != CUDAG_OK)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_equal(td.nwarn, 0);
    assert_string_equal(cudag_graph_name(g), "includes_demo");
    /* shapes.yaml was included twice and read once: N defined once. */
    assert_int_equal(g->nvars, 2);
    assert_int_equal(var(g, "M"), 1024);
    /* The module path is relative to the file that declares it. */
    const char *path = g->modules[0].path;
    assert_non_null(strstr(path, "tests/data/good/lib/../bin/local.fatbin"));
    /* The kernel took the only module of its file; the included node comes
     * first. */
    assert_string_equal(cudag_graph_node_name(g, 0), "first");
    assert_string_equal(g->sigs[cudag__find_sig(g, "named")].symbol, "named_impl");
    assert_int_equal(cudag_graph_edge_count(g), 1);
    cudag_graph_destroy(g);
    /* Without that directory the third file is not found, and the error
     * names every place searched: beside the file, the include directories
     * given, the directories of the shipped kernels. */
    const char *other[] = {tsrc("tests/data/inc"), NULL};
    o = topts(&td, NULL);
    o.include_dirs = other;
    rc = cudag_load_file(tsrc("tests/data/good/includes.yaml"), &o, &g, &err);
    assert_int_equal(rc, CUDAG_EIO);
    assert_null(g);
    assert_int_equal(td.nerr, 1);
    char kernels[PATH_MAX], want[4 * PATH_MAX + 256];
    assert_non_null(realpath(getenv("CUDAG_KERNELS_DIR"), kernels));
    snprintf(want, sizeof want,
             "%s:7:45: error: cannot find included file 'found_by_dir.yaml' "
             "(searched %s, %s, %s; add a directory with -I)",
             tsrc("tests/data/good/includes.yaml"), tsrc("tests/data/good"),
             other[0], kernels);
    assert_diag_contains(&td, want);
}

static void lower_shipped_dirs_are_found_from_the_code(void **state)
{
    (void)state;
    /* This test program lies in the build tree's tests/: the shipped
     * directory is the build's kernels/ (even where an install exists). */
    char kernels[PATH_MAX];
    assert_non_null(realpath(getenv("CUDAG_KERNELS_DIR"), kernels));
    cudag__arena a;
    memset(&a, 0, sizeof a);
    const char *shipped = cudag__shipped_dir(&a);
    assert_non_null(shipped);
    assert_string_equal(shipped, kernels);
    cudag__arena_free(&a);
    /* So a program that names no include directory (and runs from
     * elsewhere) loads the shipped manifest as the cudag tool does. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir("/"), 0);
    tdiag td;
    cudag_options o = topts(&td, NULL);
    o.include_dirs = NULL;
    cudag_graph *g;
    cudag_error err;
    static const char yaml[] = "cudag: 1\ninclude: cudag_kernels.yaml\n";
    int rc = cudag_load_string(yaml, sizeof yaml - 1, "t.yaml", &o, &g, &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_not_equal(cudag__find_sig(g, "scale_f32"), CUDAG__NONE);
    cudag_graph_destroy(g);
}

static void lower_shipped_manifest_is_found(void **state)
{
    (void)state;
    /* The kernels manifest is found through the include directories alone
     * (topts adds the build tree's kernels directory). */
    cudag_graph *g = load_ok("cudag: 1\ninclude: cudag_kernels.yaml\n", NULL);
    assert_true(g->nsigs >= 5);
    assert_int_not_equal(cudag__find_sig(g, "scale_f32"), CUDAG__NONE);
    assert_true(g->sigs[cudag__find_sig(g, "scale_f32")].pdl);
    cudag_graph_destroy(g);
}

static void lower_public_load_arguments(void **state)
{
    (void)state;
    cudag_error err;
    cudag_graph *g = (cudag_graph *)1;
    assert_int_equal(cudag_load_file(NULL, NULL, &g, &err), CUDAG_EINVAL);
    assert_null(g);
    assert_int_equal(cudag_load_file("x.yaml", NULL, NULL, &err), CUDAG_EINVAL);
    g = (cudag_graph *)1;
    assert_int_equal(cudag_load_string(NULL, 0, NULL, NULL, &g, &err),
                     CUDAG_EINVAL);
    assert_null(g);
    /* Text need not be NUL-terminated and need not outlive the call. */
    char text[] = "cudag: 1\nvars: {N: 5}\nGARBAGE";
    assert_int_equal(cudag_load_string(text, 22, NULL, NULL, &g, NULL), CUDAG_OK);
    memset(text, 'x', sizeof text - 1);
    assert_string_equal(cudag_graph_name(g), "<string>");
    assert_int_equal(var(g, "N"), 5);
    cudag_graph_destroy(g);
    /* A missing file. */
    assert_int_equal(cudag_load_file("/nonexistent/x.yaml", NULL, &g, &err),
                     CUDAG_EIO);
    assert_string_equal(err.message,
                        "cannot read '/nonexistent/x.yaml': No such file or "
                        "directory");
    assert_int_equal(err.line, 0);
    /* A directory is not a file. */
    assert_int_equal(cudag_load_file("/", NULL, &g, &err), CUDAG_EIO);
    /* Options with size 0 are read as this version's. */
    tdiag td;
    cudag_options o = topts(&td, NULL);
    o.size = 0;
    assert_int_equal(tload_opts("cudag: 2\n", NULL, &o, &g, &err), CUDAG_EKEY);
    assert_int_equal(td.nerr, 1);
}

/* Appends directories of up to 200-byte names to path until it is `len`
 * bytes long, making each; the last one's name fills the exact length. */
static void deepen(char *path, size_t len)
{
    while (strlen(path) < len) {
        size_t have = strlen(path), add = len - have - 1;
        if (add > 200)
            add = 200;
        if (len - have - 1 - add > 0 && len - have - 1 - add < 2)
            add -= 2;   /* leave room for the next '/' and one byte */
        path[have] = '/';
        memset(path + have + 1, 'd', add);
        path[have + 1 + add] = '\0';
        assert_int_equal(mkdir(path, 0700), 0);
    }
}

/* cudag_error.file holds a file's whole name however deep it is, up to the
 * longest the loader reads; a longer one is refused with its length. */
static void lower_long_paths_are_reported_whole(void **state)
{
    (void)state;
    static char dir[CUDAG_PATH_MAX], top[CUDAG_PATH_MAX + 256];
    const char *root = tmkdir("paths");
    snprintf(dir, sizeof dir, "%s", root);
    /* 700 bytes: deeper than the 512 the field held before. */
    deepen(dir, 700);
    twrite(dir, "top.yaml", "cudag: 1\ninclude: inc.yaml\n");
    twrite(dir, "inc.yaml", "cudag: 1\nvars: { n: 1 + nope }\n");
    snprintf(top, sizeof top, "%s/top.yaml", dir);
    cudag_graph *g;
    cudag_error err;
    assert_int_equal(cudag_load_file(top, NULL, &g, &err), CUDAG_EUNKNOWN);
    assert_int_equal(strlen(err.file), 700 + strlen("/inc.yaml"));
    assert_memory_equal(err.file, dir, 700);
    assert_string_equal(err.file + 700, "/inc.yaml");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 16);
    char line[CUDAG_PATH_MAX + 128];
    cudag_error_format(&err, line, sizeof line);
    assert_string_equal(line + 700, "/inc.yaml:2:16: error: unknown variable 'nope'");

    /* The longest name: CUDAG_PATH_MAX - 1 bytes, the file's own error. */
    deepen(dir, CUDAG_PATH_MAX - 1 - strlen("/t.yaml"));
    twrite(dir, "t.yaml", "cudag: 1\nvars: { n: 1 + nope }\n");
    snprintf(top, sizeof top, "%s/t.yaml", dir);
    assert_int_equal(strlen(top), CUDAG_PATH_MAX - 1);
    assert_int_equal(cudag_load_file(top, NULL, &g, &err), CUDAG_EUNKNOWN);
    assert_string_equal(err.file, top);

    /* One byte more is refused, as an include (at the include) and at the
     * top (no position), and nothing is left allocated. */
    long live = cudag__alloc_live();
    static char text[CUDAG_PATH_MAX + 64];
    snprintf(text, sizeof text, "cudag: 1\ninclude: %s/inc.yaml\n",
             dir + strlen(root) + 1);
    twrite(root, "long.yaml", text);
    snprintf(top, sizeof top, "%s/long.yaml", root);
    assert_int_equal(cudag_load_file(top, NULL, &g, &err), CUDAG_ELIMIT);
    assert_null(g);
    assert_string_equal(err.file, top);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 10);
    char want[256];
    snprintf(want, sizeof want,
             "file name of %u bytes is longer than %u: '%.40s...%.31s/inc.yaml'",
             CUDAG_PATH_MAX + 1, CUDAG_PATH_MAX - 1, dir, dir + strlen(dir) - 31);
    assert_string_equal(err.message, want);
    /* The same name as a child graph's file, at the node's graph value. */
    snprintf(text, sizeof text,
             "cudag: 1\nbuffers: {x: {type: f32, count: 1}}\nnodes:\n"
             "  c: {graph: %s/inc.yaml}\n",
             dir + strlen(root) + 1);
    twrite(root, "child.yaml", text);
    snprintf(top, sizeof top, "%s/child.yaml", root);
    assert_int_equal(cudag_load_file(top, NULL, &g, &err), CUDAG_ELIMIT);
    assert_null(g);
    assert_string_equal(err.file, top);
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 14);
    assert_string_equal(err.message, want);
    snprintf(top, sizeof top, "%s/x.yaml", dir);
    strcat(top, "l");
    assert_int_equal(strlen(top), CUDAG_PATH_MAX);
    assert_int_equal(cudag_load_file(top, NULL, &g, &err), CUDAG_ELIMIT);
    assert_string_equal(err.file, "");
    assert_int_equal(err.line, 0);
    assert_int_equal(cudag__alloc_live(), live);
    trm_tree(root);
}

static void lower_reports_many_errors_up_to_the_limit(void **state)
{
    (void)state;
    char y[8192];
    size_t n = (size_t)snprintf(y, sizeof y, "cudag: 1\nvars:\n");
    for (int i = 0; i < 80; i++)
        n += (size_t)snprintf(y + n, sizeof y - n, "  v%d: nope%d\n", i, i);
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g;
    cudag_error err;
    assert_int_equal(tload_opts(y, NULL, &o, &g, &err), CUDAG_EUNKNOWN);
    assert_int_equal(td.nerr, 50);
    assert_int_equal(err.count, 50);
    assert_int_equal(err.line, 3);
    o = topts(&td, NULL);
    o.max_errors = 3;
    assert_int_equal(tload_opts(y, NULL, &o, &g, &err), CUDAG_EUNKNOWN);
    assert_int_equal(td.nerr, 3);
}

static void lower_no_check_flag(void **state)
{
    (void)state;
    tdiag td;
    cudag_options o = topts(&td, NULL);
    o.flags = CUDAG_NO_CHECK;
    cudag_graph *g;
    const char *y = HEAD "kernels: { k: { params: {} } }\n"
                         "nodes:\n  a: { kernel: k, grid: 1, block: 1, after: b }\n"
                         "  b: { kernel: k, grid: 1, block: 1, after: a }\n";
    assert_int_equal(tload_opts(y, NULL, &o, &g, NULL), CUDAG_OK);
    assert_false(g->checked);
    char *dot;
    cudag_error err;
    assert_int_equal(cudag_dot(g, 0, &dot, &err), CUDAG_ESTATE);
    /* The caller runs the check itself and sees the cycle. */
    assert_int_equal(cudag_check(g, &o, &err), CUDAG_ECYCLE);
    assert_diag_contains(&td, "dependency cycle: a -> b -> a");
    cudag_graph_destroy(g);
}

static void lower_again_with_new_values(void **state)
{
    (void)state;
    const char *defs[] = {"N=32", NULL};
    cudag_graph *g = load_ok(
        HEAD "kernels: { k: { params: {n: i64} } }\n"
             "vars: { N: 8, M: N + 1 }\n"
             "nodes:\n  a: { kernel: k, grid: N, block: 32, args: [M] }\n",
        defs);
    cudag_graph *g2, *g3;
    cudag_error err;
    assert_int_equal(cudag__relower(g, "M", "100", &g2, &err), CUDAG_OK);
    assert_int_equal(var(g2, "N"), 32);     /* the load's define stays */
    assert_int_equal(var(g2, "M"), 100);
    assert_true(g2->checked);
    assert_int_equal(g2->nodes[0].u.k.args[0].i, 100);
    /* Changes accumulate through the borrowed source. */
    assert_int_equal(cudag__relower(g2, "N", "4", &g3, &err), CUDAG_OK);
    assert_int_equal(var(g3, "N"), 4);
    assert_int_equal(var(g3, "M"), 100);
    assert_int_equal(g3->nodes[0].u.k.grid[0], 4);
    cudag_graph_destroy(g3);
    /* A value that breaks the graph reports the error. */
    assert_int_equal(cudag__relower(g2, "N", "0", &g3, &err), CUDAG_ERANGE);
    assert_null(g3);
    assert_string_equal(err.message, "node 'a': grid x is 0 (must be at least 1)");
    assert_int_equal(cudag__relower(g2, "Z", "1", &g3, &err), CUDAG_EUNKNOWN);
    cudag_graph_destroy(g2);
    cudag_graph_destroy(g);
    /* A graph from the C builder has no source. */
    cudag_graph_create("b", &g, NULL);
    cudag_add_var(g, "N", 1, NULL);
    assert_int_equal(cudag__relower(g, "N", "2", &g2, &err), CUDAG_ENOTSUP);
    cudag_graph_destroy(g);
}

static void lower_survives_every_allocation_failure(void **state)
{
    (void)state;
    const char *y =
        HEAD "vars: { N: 64 }\n"
             "kernels: { k: { params: {x: ptr, n: i64}, pdl: true } }\n"
             "buffers: { x: { type: f32, count: N * 4, init: random } }\n"
             "nodes:\n"
             "  s[i in 4]: { kernel: k, grid: 1, block: 64, args: [x + i*N, N],\n"
             "               after: [{\"s[i-1]\": programmatic}] }\n"
             "  g[j in 2]:\n    a: { memset: x, value: 0 }\n"
             "    b: { kernel: k, grid: 1, block: 64, args: [x, N], after: a }\n"
             "edges:\n  - s[3] -> g[0].a\n";
    long live = cudag__alloc_live();
    cudag__alloc_fail_after(-1);
    cudag_graph *g;
    assert_int_equal(tload_opts(y, NULL, NULL, &g, NULL), CUDAG_OK);
    cudag_graph_destroy(g);
    long total = cudag__alloc_fail_after(-1);
    assert_true(total > 20);
    for (long i = 1; i <= total; i++) {
        cudag_error err;
        cudag__alloc_fail_after(i);
        int rc = tload_opts(y, NULL, NULL, &g, &err);
        cudag__alloc_fail_after(-1);
        if (rc != CUDAG_ENOMEM)
            print_error("allocation %ld of %ld: rc %d: %s\n", i, total, rc,
                        err.message);
        assert_int_equal(rc, CUDAG_ENOMEM);
        assert_null(g);
        assert_int_equal(cudag__alloc_live(), live);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lower_vars_in_order_and_defines),
        cmocka_unit_test(lower_floating_point_variables),
        cmocka_unit_test(lower_name_version_and_free_keys),
        cmocka_unit_test(lower_kernel_signatures),
        cmocka_unit_test(lower_buffers_and_init),
        cmocka_unit_test(lower_includes_dirs_and_once),
        cmocka_unit_test(lower_c_type_words_get_cudag_words),
        cmocka_unit_test(lower_shipped_manifest_is_found),
        cmocka_unit_test(lower_shipped_dirs_are_found_from_the_code),
        cmocka_unit_test(lower_public_load_arguments),
        cmocka_unit_test(lower_long_paths_are_reported_whole),
        cmocka_unit_test(lower_reports_many_errors_up_to_the_limit),
        cmocka_unit_test(lower_no_check_flag),
        cmocka_unit_test(lower_again_with_new_values),
        cmocka_unit_test(lower_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
