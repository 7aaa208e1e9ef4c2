/* test_bounds.c — variables with bounds (src/yaml/bounds.c): values at the
 * edges load, a -D or cudag_options.defines value past a bound fails at the
 * bound naming the define, a child graph file's bounds hold for the value
 * its parent gives (with a note at the parent), cudag_exec_set_var and
 * cudag_exec_set_var_float past a bound are refused with the exec left as it
 * was (on the fake driver), and the Llama graphs state their kernels'
 * limits.  One malformed bound per file is in
 * tests/data/bad/var_bound_* and child_var_bound*, checked by test_bad. */
#include "common.h"
#include "cudag.h"
#include "lib/driver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_driver.h"

#include <stdio.h>
#include <string.h>

/* Loads yaml as the file `name` with defines (NULL-terminated, or NULL);
 * returns the status, the diagnostics in *d and the error in *e. */
static int load_named(const char *name, const char *yaml, const char *const *defines,
                      tdiag *d, cudag_error *e, cudag_graph **g)
{
    memset(d, 0, sizeof *d);
    cudag_options o = topts(d, defines);
    *g = NULL;
    return tload_opts(yaml, name, &o, g, e);
}

/* ... as t.yaml, in the current directory. */
static int load_with(const char *yaml, const char *const *defines, tdiag *d,
                     cudag_error *e, cudag_graph **g)
{
    return load_named("t.yaml", yaml, defines, d, e, g);
}

/* Asserts that yaml with defines fails with `code`, one error, formatted
 * as `expect` ("t.yaml:L:C: error: MESSAGE"), and returns no graph. */
static void expect_error(const char *yaml, const char *const *defines,
                         int code, const char *expect)
{
    tdiag d;
    cudag_error e;
    cudag_graph *g;
    long live = cudag__alloc_live();
    assert_int_equal(load_with(yaml, defines, &d, &e, &g), code);
    assert_null(g);
    assert_int_equal(d.nerr, 1);
    char got[2048];
    cudag_error_format(&e, got, sizeof got);
    assert_string_equal(got, expect);
    assert_int_equal(cudag__alloc_live(), live);
}

/* Asserts that yaml, as the file `name`, loads with defines. */
static void load_ok_as(const char *name, const char *yaml, const char *const *defines)
{
    tdiag d;
    cudag_error e;
    cudag_graph *g;
    int rc = load_named(name, yaml, defines, &d, &e, &g);
    if (rc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(rc, CUDAG_OK);
    cudag_graph_destroy(g);
}

static void load_ok(const char *yaml, const char *const *defines)
{
    load_ok_as("t.yaml", yaml, defines);
}

static const char vars_yaml[] =
    "cudag: 1\n"
    "vars:\n"
    "  B: {value: 1, min: 1, max: 16}\n"
    "  HD: {value: 64, min: 8, max: 128, multiple: 8}\n"
    "  NH: {value: 32, max: 8*NKV, multiple: NKV}\n"
    "  NKV: 8\n"
    "  eps: {value: 1e-5, min: 0, max: 0.01}\n";

/* Every bound holds at its edge; the plain form and -D still work. */
static void bounds_admit_their_edges(void **state)
{
    (void)state;
    load_ok(vars_yaml, NULL);
    load_ok(vars_yaml, (const char *const[]){"B=1", "HD=8", "eps=0", NULL});
    load_ok(vars_yaml, (const char *const[]){"B=16", "HD=128", "NH=64",
                                             "eps=0.01", NULL});
    load_ok(vars_yaml, (const char *const[]){"NH=1", "NKV=1", NULL});
}

/* Each kind of bound, crossed by cudag_options.defines: the error is at
 * the bound and names the define (and the one behind the bound). */
static void bounds_refuse_each_kind_naming_the_define(void **state)
{
    (void)state;
    expect_error(vars_yaml, (const char *const[]){"B=0", NULL}, CUDAG_ERANGE,
                 "t.yaml:3:22: error: B = 0 is below its min 1 (from -D "
                 "B=0)");
    expect_error(vars_yaml, (const char *const[]){"B=17", NULL}, CUDAG_ERANGE,
                 "t.yaml:3:30: error: B = 17 is above its max 16 (from -D "
                 "B=17)");
    expect_error(vars_yaml, (const char *const[]){"HD=60", NULL},
                 CUDAG_ERANGE,
                 "t.yaml:4:47: error: HD = 60 is not a multiple of 8 (from "
                 "-D HD=60)");
    expect_error(vars_yaml, (const char *const[]){"NH=16", "NKV=1", NULL},
                 CUDAG_ERANGE,
                 "t.yaml:5:24: error: NH = 16 is above its max 8*NKV = 8 "
                 "(from -D NH=16 and -D NKV=1)");
    expect_error(vars_yaml, (const char *const[]){"NH=12", NULL}, CUDAG_ERANGE,
                 "t.yaml:5:41: error: NH = 12 is not a multiple of NKV = 8 "
                 "(from -D NH=12)");
    expect_error(vars_yaml, (const char *const[]){"eps=0.5", NULL},
                 CUDAG_ERANGE,
                 "t.yaml:7:35: error: eps = 0.5 is above its max 0.01 (from "
                 "-D eps=0.5)");
    /* The file's own value out of its bound: no define to name. */
    expect_error("cudag: 1\nvars:\n  B: {value: 0x20, max: 16}\n", NULL,
                 CUDAG_ERANGE,
                 "t.yaml:3:25: error: B = 0x20 is above its max 16");
}

/* A value computed from a variable out of bounds says nothing more, and
 * the load stops at the variables: no buffer or node repeats it. */
static void bounds_one_mistake_one_error(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "vars:\n"
        "  B: {value: 1, min: 1, max: 16}\n"
        "  AS: cdiv(264, B)\n"
        "  R: {value: 2*B, max: 32}\n"
        "buffers:\n"
        "  x: {type: f32, count: 256*B}\n"
        "nodes:\n"
        "  s: {kernel: scale_f32, grid: AS, block: 256, args: [x, x, 2.0, "
        "256*B]}\n";
    load_ok(yaml, NULL);
    expect_error(yaml, (const char *const[]){"B=0", NULL}, CUDAG_ERANGE,
                 "t.yaml:4:22: error: B = 0 is below its min 1 (from -D "
                 "B=0)");
    expect_error(yaml, (const char *const[]){"B=17", NULL}, CUDAG_ERANGE,
                 "t.yaml:4:30: error: B = 17 is above its max 16 (from -D "
                 "B=17)");
    /* A bound over a later variable is checked once all have values; the
     * variable computed from it is then not checked. */
    static const char later[] = "cudag: 1\n"
                                "vars:\n"
                                "  N: {value: 16, max: M}\n"
                                "  M: 32\n"
                                "  K: {value: N*2, max: 64}\n";
    expect_error(later, (const char *const[]){"N=40", NULL}, CUDAG_ERANGE,
                 "t.yaml:3:23: error: N = 40 is above its max M = 32 (from "
                 "-D N=40)");
    expect_error(later, (const char *const[]){"M=8", NULL}, CUDAG_ERANGE,
                 "t.yaml:3:23: error: N = 16 is above its max M = 8 (from "
                 "-D M=8)");
}

/* A child file's bounds hold for the values its parent gives: the error is
 * at the child's bound, the note at the value the node gives (or, for a
 * variable the child computes, at the node's graph). */
static void bounds_hold_in_child_files(void **state)
{
    (void)state;
    static const char parent[] =
        "cudag: 1\n"
        "modules: {m: k.fatbin}\n"
        "kernels:\n"
        "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}}\n"
        "vars: {P: 256}\n"
        "buffers:\n"
        "  x: {type: f32, count: 4096}\n"
        "  y: {type: f32, count: 4096}\n"
        "nodes:\n"
        "  a: {graph: ../inc/child_bounded.yaml, vars: {N: P}}\n";
    tdiag d;
    cudag_error e;
    cudag_graph *g;
    load_ok(parent, (const char *const[]){"P=512", NULL});
    assert_int_equal(
        load_with(parent, (const char *const[]){"P=2048", NULL}, &d, &e, &g),
        CUDAG_ERANGE);
    assert_null(g);
    assert_int_equal(d.nerr, 1);
    assert_string_equal(d.text,
                        "../inc/child_bounded.yaml:4:32: error: N = 2048 is "
                        "above its max 1024\n"
                        "t.yaml:10:51: note: node 'a' gives N = 2048 to child "
                        "graph '../inc/child_bounded.yaml'\n");
    assert_int_equal(
        load_with(parent, (const char *const[]){"P=600", NULL}, &d, &e, &g),
        CUDAG_ERANGE);
    assert_int_equal(d.nerr, 1);
    assert_string_equal(d.text,
                        "../inc/child_bounded.yaml:5:24: error: K = N*2 = 1200 "
                        "is above its max 1024\n"
                        "t.yaml:10:14: note: in child graph "
                        "'../inc/child_bounded.yaml' of node 'a'\n");
    assert_int_equal(
        load_with(parent, (const char *const[]){"P=100", NULL}, &d, &e, &g),
        CUDAG_ERANGE);
    assert_string_equal(e.message, "K = N*2 = 200 is not a multiple of 16");
}

/* ---- cudag_exec_set_var on the fake driver ----------------------------- */

static const char set_yaml[] =
    "cudag: 1\n"
    "vars:\n"
    "  A: {value: 2, min: 1, max: 4}\n"
    "  C: 256\n"
    "  D: {value: A*C, max: 1024}\n"
    "  eps: {value: 0.5, min: 0, max: 2}\n"
    "modules: {m: k.fatbin}\n"
    "kernels: {scale_f32: {params: [ptr, ptr, f32, i64], pdl: true}}\n"
    "buffers: {x: {type: f32, count: C, init: random},\n"
    "          y: {type: f32, count: C}, z: {type: f32, count: C}}\n"
    "nodes:\n"
    "  s: {kernel: scale_f32, grid: 1, block: 256, args: [x, y, A, C]}\n"
    "  t: {kernel: scale_f32, grid: 1, block: 256, args: [x, z, eps, C]}\n";

/* Loads yaml and instantiates it on a fresh fake driver into *g and *x. */
static void instantiate(const char *yaml, cudag_graph **g, cudag_exec **x)
{
    fake_reset();
    tdiag d;
    cudag_error e;
    int rc = load_with(yaml, NULL, &d, &e, g);
    if (rc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(rc, CUDAG_OK);
    tok(cudag_instantiate(*g, NULL, x, &e), &e);
}

/* Launches x once and asserts y = a·x and z = b·x. */
static void assert_scaled(cudag_exec *x, float a, float b)
{
    static float xs[256], ys[256], zs[256];
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_read(x, "z", zs, sizeof zs, &e), &e);
    for (int i = 0; i < 256; i++) {
        assert_true(ys[i] == a * xs[i]);
        assert_true(zs[i] == b * xs[i]);
    }
}

/* cudag_exec_set_var(x, name, v) is refused with CUDAG_ERANGE and the
 * formatted error `want`. */
static void set_var_refused(cudag_exec *x, const char *name, long long v,
                            const char *want)
{
    cudag_error e;
    assert_int_equal(cudag_exec_set_var(x, name, v, &e), CUDAG_ERANGE);
    char got[1024];
    cudag_error_format(&e, got, sizeof got);
    assert_string_equal(got, want);
}

/* A value past a bound, of the variable or of one computed from it, is
 * refused at the bound, naming cudag_exec_set_var, and every argument stays
 * as it was; a value inside them still works after. */
static void set_var_refuses_values_past_bounds(void **state)
{
    (void)state;
    cudag_error e;
    cudag_graph *g;
    cudag_exec *x;
    instantiate(set_yaml, &g, &x);
    assert_scaled(x, 2.0f, 0.5f);
    tok(cudag_exec_set_var(x, "A", 3, &e), &e);
    assert_scaled(x, 3.0f, 0.5f);
    long launched = F.nlaunched;
    set_var_refused(x, "A", 5,
                    "t.yaml:3:30: error: A = 5 is above its max 4 (from "
                    "cudag_exec_set_var A=5)");
    assert_int_equal(cudag_exec_set_var(x, "A", 0, &e), CUDAG_ERANGE);
    assert_string_equal(e.message, "A = 0 is below its min 1 (from "
                                   "cudag_exec_set_var A=0)");
    /* A variable computed from the one set (D = A*C) has its bound too. */
    set_var_refused(x, "C", 512,
                    "t.yaml:5:24: error: D = A*C = 1536 is above its max 1024 "
                    "(from cudag_exec_set_var C=512)");
    assert_int_equal(cudag_exec_set_var_float(x, "eps", 2.5, &e),
                     CUDAG_ERANGE);
    assert_string_equal(e.message, "eps = 2.5 is above its max 2 (from "
                                   "cudag_exec_set_var eps=2.5)");
    /* Nothing was built or launched for the refused values, and the exec
     * runs the arguments of A = 3 still. */
    assert_int_equal(F.nlaunched, launched);
    assert_scaled(x, 3.0f, 0.5f);
    tok(cudag_exec_set_var_float(x, "eps", 1.5, &e), &e);
    tok(cudag_exec_set_var(x, "A", 4, &e), &e);
    assert_scaled(x, 4.0f, 1.5f);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* A bound over variables computed from others (I = H*2, H = A - 1) names
 * the define behind them, at load and from cudag_exec_set_var; where the
 * file alone gives the values, nothing. */
static void bounds_name_the_define_behind_helpers(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "vars:\n"
        "  A: {value: 2, min: 1}\n"
        "  H: A - 1\n"
        "  I: H*2\n"
        "  G: {value: 4, max: 4*I}\n"
        "modules: {m: k.fatbin}\n"
        "kernels: {scale_f32: {params: [ptr, ptr, f32, i64], pdl: true}}\n"
        "buffers: {x: {type: f32, count: 256, init: random},\n"
        "          y: {type: f32, count: 256}}\n"
        "nodes:\n"
        "  s: {kernel: scale_f32, grid: 1, block: 256, args: [x, y, A, 256]}\n";
    expect_error(yaml, (const char *const[]){"A=1", NULL}, CUDAG_ERANGE,
                 "t.yaml:6:22: error: G = 4 is above its max 4*I = 0 (from -D "
                 "A=1)");
    expect_error(yaml, (const char *const[]){"A=1", "G=3", NULL}, CUDAG_ERANGE,
                 "t.yaml:6:22: error: G = 3 is above its max 4*I = 0 (from -D "
                 "G=3 and -D A=1)");
    expect_error("cudag: 1\nvars:\n  A: 1\n  H: A - 1\n  G: {value: 4, max: H}\n",
                 NULL, CUDAG_ERANGE, "t.yaml:5:22: error: G = 4 is above its max H = 0");
    cudag_error e;
    cudag_graph *g;
    cudag_exec *x;
    instantiate(yaml, &g, &x);
    set_var_refused(x, "A", 1,
                    "t.yaml:6:22: error: G = 4 is above its max 4*I = 0 (from "
                    "cudag_exec_set_var A=1)");
    tok(cudag_exec_set_var(x, "A", 3, &e), &e);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* A parent variable that a child file's bound refuses: the error is at the
 * child's bound, and the exec runs the child as before. */
static void set_var_holds_child_bounds(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "vars: {P: 256}\n"
        "modules: {m: k.fatbin}\n"
        "kernels: {scale_f32: {params: [ptr, ptr, f32, i64], pdl: true}}\n"
        "buffers: {x: {type: f32, count: 2048, init: random},\n"
        "          y: {type: f32, count: 2048, init: 0}}\n"
        "nodes:\n"
        "  a: {graph: ../inc/child_bounded.yaml, vars: {N: P}}\n";
    cudag_error e;
    cudag_graph *g;
    cudag_exec *x;
    instantiate(yaml, &g, &x);
    set_var_refused(x, "P", 2048,
                    "../inc/child_bounded.yaml:4:32: error: N = 2048 is above "
                    "its max 1024");
    assert_int_equal(cudag_exec_set_var(x, "P", 300, &e), CUDAG_ERANGE);
    assert_string_equal(e.message, "K = N*2 = 600 is not a multiple of 16");
    /* The child still scales its 512 elements (K of P = 256). */
    static float xs[2048], ys[2048];
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    for (int i = 0; i < 2048; i++)
        assert_true(ys[i] == (i < 512 ? 2.0f * xs[i] : 0.0f));
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* ---- the Llama graphs' limits --------------------------------------------- */

static int load_llama(const char *file, const char *const *defines, tdiag *d,
                      cudag_error *e)
{
    memset(d, 0, sizeof *d);
    cudag_options o = topts(d, defines);
    cudag_graph *g = NULL;
    int rc = cudag_load_file(tsrc(file), &o, &g, e);
    cudag_graph_destroy(g);
    return rc;
}

/* Asserts that graphs/llama_decode.yaml under defines loads. */
static void llama_loads(const char *const *defines)
{
    tdiag d;
    cudag_error e;
    int rc = load_llama("graphs/llama_decode.yaml", defines, &d, &e);
    if (rc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(rc, CUDAG_OK);
}

/* Asserts that `file` under defines fails with one error at its bound,
 * "LINE:COL: error: MESSAGE" after the path of graphs/llama/buffers.yaml. */
static void llama_refuses(const char *file, const char *const *defines,
                          const char *expect)
{
    tdiag d;
    cudag_error e;
    assert_int_equal(load_llama(file, defines, &d, &e), CUDAG_ERANGE);
    assert_int_equal(d.nerr, 1);
    char got[2048], want[2048];
    cudag_error_format(&e, got, sizeof got);
    snprintf(want, sizeof want, "%s:%s", tsrc("graphs/llama/buffers.yaml"),
             expect);
    assert_string_equal(got, want);
}

/* The kernels' limits (kernels/llama.cuh: LL_MAXB rows in a batch kernel,
 * LL_MAXG query heads per kv head, heads of at most 128 elements in steps
 * of 8, splits of at most the positions a block holds, attention blocks of
 * at most 8 whole warps) refuse a shape at load, at the bound; the
 * neighbour inside each limit loads. */
static void llama_graphs_state_the_kernels_limits(void **state)
{
    (void)state;
    llama_loads(NULL);
    llama_loads((const char *const[]){"B=16", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"B=17", NULL},
                  "51:41: error: BK = B*max(KB, KR % 2) = 17 is above its "
                  "max 16 (from -D B=17)");
    llama_refuses("graphs/llama_generate.yaml",
                  (const char *const[]){"B=17", NULL},
                  "51:41: error: BK = B*max(KB, KR % 2) = 17 is above its "
                  "max 16 (from -D B=17)");
    /* Batch 1's kernels take any batch a row at a time. */
    llama_loads((const char *const[]){"B=17", "KB=0", "KR=0", NULL});
    llama_loads((const char *const[]){"B=64", "KB=0", "KR=2", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"B=17", "KB=0", "KR=1", NULL},
                  "51:41: error: BK = B*max(KB, KR % 2) = 17 is above its "
                  "max 16 (from -D B=17)");
    llama_loads((const char *const[]){"NH=8", "NKV=1", "HD=32", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"NH=16", "NKV=1", NULL},
                  "20:34: error: NH = 16 is above its max 8*NKV = 8 (from -D "
                  "NH=16 and -D NKV=1)");
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"NH=12", NULL},
                  "20:51: error: NH = 12 is not a multiple of NKV = 8 (from "
                  "-D NH=12)");
    llama_loads((const char *const[]){"HD=128", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"HD=136", NULL},
                  "22:32: error: HD = 136 is above its max 128 (from -D "
                  "HD=136)");
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"HD=60", NULL},
                  "22:47: error: HD = 60 is not a multiple of 8 (from -D "
                  "HD=60)");
    llama_loads((const char *const[]){"AR=16", "S=16", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"AR=16", "S=32", NULL},
                  "34:44: error: S = 32 is above its max min(256, AR - AR % "
                  "16) = 16 (from -D S=32 and -D AR=16)");
    /* The attention's block: whole warps, at most 8 (LL_AW). */
    llama_loads((const char *const[]){"AB=32", NULL});
    llama_refuses("graphs/llama_generate.yaml",
                  (const char *const[]){"AB=288", NULL},
                  "53:34: error: AB = 288 is above its max 256 (from -D "
                  "AB=288)");
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"AB=100", NULL},
                  "53:49: error: AB = 100 is not a multiple of 32 (from -D "
                  "AB=100)");
    /* The attention kernel (AK): each traps on another's heads, so a pick
     * of one that cannot take the heads is refused, naming HD; either
     * kernel for heads of a power of two chunks loads, at any batch. */
    llama_loads((const char *const[]){"AK=1", NULL});
    llama_loads((const char *const[]){"B=4", "HD=128", "AK=0", NULL});
    llama_loads((const char *const[]){"HD=96", NULL});
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"HD=96", "AK=0", NULL},
                  "62:57: error: AK = 0 is below its min 2*min(1, 16 % "
                  "(HD/8)) = 2 (from -D AK=0 and -D HD=96)");
    llama_refuses("graphs/llama_generate.yaml",
                  (const char *const[]){"HD=40", "AK=1", NULL},
                  "62:57: error: AK = 1 is below its min 2*min(1, 16 % "
                  "(HD/8)) = 2 (from -D AK=1 and -D HD=40)");
    llama_refuses("graphs/llama_decode.yaml",
                  (const char *const[]){"HD=64", "AK=2", NULL},
                  "63:13: error: AK = 2 is above its max 1 + min(1, 16 % "
                  "(HD/8)) = 1 (from -D AK=2 and -D HD=64)");
}

/* A parent file (graphs/t.yaml) under defines fails to load with one error,
 * the diagnostics' text `want`. */
static void parent_refuses(const char *parent, const char *const *defines,
                           const char *want)
{
    tdiag d;
    cudag_error e;
    cudag_graph *g;
    assert_int_equal(load_named(tsrc("graphs/t.yaml"), parent, defines, &d, &e, &g),
                     CUDAG_ERANGE);
    assert_null(g);
    assert_int_equal(d.nerr, 1);
    assert_string_equal(d.text, want);
}

/* The 1-based number of the first line of file `path` that starts with
 * `prefix` (the test fails if none does): where a diagnostic points, found
 * as the file stands. */
static int file_line(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[512];
    int n = 0, found = 0;
    while (!found && fgets(buf, sizeof buf, f)) {
        n++;
        found = strncmp(buf, prefix, strlen(prefix)) == 0;
    }
    fclose(f);
    assert_true(found);
    return n;
}

/* graphs/llama/step.yaml states the same limits for any parent: one that
 * passes a batch of 17 is refused at the step's bound on the rows of its
 * batch kernels, with a note at the node. */
static void llama_step_states_them_for_any_parent(void **state)
{
    (void)state;
    static const char parent[] =
        "cudag: 1\n"
        "include: [llama/buffers.yaml]\n"
        "nodes:\n"
        "  step: {graph: llama/step.yaml, vars: {B: PB}}\n"
        "vars: {PB: 1}\n";
    char step[1024]; /* tsrc's buffers rotate */
    snprintf(step, sizeof step, "%s", tsrc("graphs/llama/step.yaml"));
    char want[8192];
    snprintf(want, sizeof want,
             "%s:%d:41: error: BK = B*max(KB, KR %% 2) = 17 is above its max "
             "16\n"
             "%s:4:17: note: in child graph '%s' of node 'step'\n",
             step, file_line(step, "  BK:"), tsrc("graphs/t.yaml"), step);
    parent_refuses(parent, (const char *const[]){"PB=17", NULL}, want);
    load_ok_as(tsrc("graphs/t.yaml"), parent, (const char *const[]){"PB=1", NULL});
}

/* A parent that gives the step an attention kernel its heads cannot take
 * is refused at the step's bound on AK, with a note at the node; one that
 * gives the other kernel for heads of 64 loads. */
static void llama_step_refuses_a_wrong_attention_kernel(void **state)
{
    (void)state;
    static const char parent[] =
        "cudag: 1\n"
        "include: [llama/buffers.yaml]\n"
        "nodes:\n"
        "  step: {graph: llama/step.yaml, vars: {HD: PH, AK: PA}}\n"
        "vars: {PH: 64, PA: 0}\n";
    /* the bounds' lines: AK's own (min) and the next (max) */
    static const struct {
        const char *defines[3];
        int below_ak;
        const char *error;
    } cases[] = {
        {{"PH=96", "PA=0", NULL}, 0,
         "57: error: AK = 0 is below its min 2*min(1, 16 % (HD/8)) = 2\n"},
        {{"PH=64", "PA=2", NULL}, 1,
         "13: error: AK = 2 is above its max 1 + min(1, 16 % (HD/8)) = "
         "1\n"},
    };
    char step[1024]; /* tsrc's buffers rotate */
    snprintf(step, sizeof step, "%s", tsrc("graphs/llama/step.yaml"));
    const int ak = file_line(step, "  AK:");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[8192];
        snprintf(want, sizeof want,
                 "%s:%d:%s%s:4:53: note: node 'step' gives AK = %c to child "
                 "graph '%s'\n",
                 step, ak + cases[i].below_ak, cases[i].error, tsrc("graphs/t.yaml"),
                 cases[i].defines[1][3], step);
        parent_refuses(parent, cases[i].defines, want);
    }
    load_ok_as(tsrc("graphs/t.yaml"), parent, (const char *const[]){"PA=1", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounds_admit_their_edges),
        cmocka_unit_test(bounds_refuse_each_kind_naming_the_define),
        cmocka_unit_test(bounds_one_mistake_one_error),
        cmocka_unit_test(bounds_hold_in_child_files),
        cmocka_unit_test(set_var_refuses_values_past_bounds),
        cmocka_unit_test(bounds_name_the_define_behind_helpers),
        cmocka_unit_test(set_var_holds_child_bounds),
        cmocka_unit_test(llama_graphs_state_the_kernels_limits),
        cmocka_unit_test(llama_step_states_them_for_any_parent),
        cmocka_unit_test(llama_step_refuses_a_wrong_attention_kernel),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fake_finish();
    return rc;
}
