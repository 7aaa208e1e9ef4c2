/* test_check.c — the whole-graph checker (src/check/check.c) on graphs built
 * through the C API: every check with its exact message and error count,
 * cycles, the topological order and levels of a valid graph, large graphs
 * (no recursion), the error limit, and allocation failures. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ----------------------------------------------------------- */

/* A graph with one module and the signatures the tests call:
 *   scale_f32(x: ptr, y: ptr, a: f32, n: i64), one(n: i32), nop(),
 *   all(p: ptr, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64). */
static cudag_graph *new_graph(void)
{
    static const cudag_param scale[] = {{"x", CUDAG_TYPE_PTR},
                                        {"y", CUDAG_TYPE_PTR},
                                        {"a", CUDAG_TYPE_F32},
                                        {"n", CUDAG_TYPE_I64}};
    static const cudag_param one[] = {{"n", CUDAG_TYPE_I32}};
    static const cudag_param all[] = {
        {"p", CUDAG_TYPE_PTR},    {"i8", CUDAG_TYPE_I8},
        {"u8", CUDAG_TYPE_U8},    {"i16", CUDAG_TYPE_I16},
        {"u16", CUDAG_TYPE_U16},  {"i32", CUDAG_TYPE_I32},
        {"u32", CUDAG_TYPE_U32},  {"i64", CUDAG_TYPE_I64},
        {"u64", CUDAG_TYPE_U64},  {"f16", CUDAG_TYPE_F16},
        {"bf16", CUDAG_TYPE_BF16}, {"f32", CUDAG_TYPE_F32},
        {"f64", CUDAG_TYPE_F64}};
    cudag_graph *g = NULL;
    cudag_error e;
    assert_int_equal(cudag_graph_create("g", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_module(g, "m", "m.fatbin", &e), CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "scale_f32", "m", NULL, scale, 4,
                                         0, &e),
                     CUDAG_OK);
    /* As the shipped kernel declares it: reads x, writes y. */
    assert_int_equal(cudag_set_param_access(g, "scale_f32", 0,
                                            CUDAG_ACCESS_READ, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_set_param_access(g, "scale_f32", 1,
                                            CUDAG_ACCESS_WRITE, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "one", "m", NULL, one, 1, 0, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "nop", "m", NULL, NULL, 0, 1, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "all", "m", NULL, all, 13, 0, &e),
                     CUDAG_OK);
    return g;
}

static void buf(cudag_graph *g, const char *name, cudag_type t, uint64_t count)
{
    cudag_error e;
    int rc = cudag_add_buffer(g, name, t, count, NULL, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
}

static void buf_init(cudag_graph *g, const char *name, cudag_type t,
                     uint64_t count, cudag_init in)
{
    cudag_error e;
    assert_int_equal(cudag_add_buffer(g, name, t, count, &in, &e), CUDAG_OK);
}

static void kern_launch(cudag_graph *g, const char *name, const char *sig,
                        cudag_dim3 grid, cudag_dim3 block, uint32_t smem,
                        const cudag_arg *args, size_t nargs)
{
    cudag_error e;
    int rc = cudag_add_kernel(g, name, sig, grid, block, smem, args, nargs, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
}

static void kern(cudag_graph *g, const char *name, const char *sig,
                 const cudag_arg *args, size_t nargs)
{
    kern_launch(g, name, sig, TG1, TB256, 0, args, nargs);
}

static void memset_node(cudag_graph *g, const char *name, const char *b,
                        uint64_t off, uint64_t count, double v)
{
    cudag_error e;
    assert_int_equal(cudag_add_memset(g, name, b, off, count, v, &e), CUDAG_OK);
}

static void memcpy_node(cudag_graph *g, const char *name, const char *dst,
                        uint64_t doff, const char *src, uint64_t soff,
                        uint64_t count)
{
    cudag_error e;
    assert_int_equal(cudag_add_memcpy(g, name, dst, doff, src, soff, count, &e),
                     CUDAG_OK);
}

/* ---- checking ----------------------------------------------------------- */

static tdiag diag;

static int run_check(cudag_graph *g, unsigned flags, unsigned max_errors,
                     cudag_error *e)
{
    cudag_options o = topts(&diag, NULL);
    o.flags = flags;
    o.max_errors = max_errors;
    return cudag_check(g, &o, e);
}

/* Checks g and asserts the status, the error count and the exact text of
 * every diagnostic (one per line, "error: message" since the C API gives no
 * positions).  An error leaves the graph unchecked with no topology. */
static void expect(cudag_graph *g, int code, int nerr, const char *text)
{
    cudag_error e;
    int rc = run_check(g, 0, 0, &e);
    if (strcmp(diag.text, text) != 0)
        print_error("expected:\n%sgot:\n%s", text, diag.text);
    assert_string_equal(diag.text, text);
    assert_int_equal(rc, code);
    assert_int_equal(e.count, nerr);
    assert_int_equal(diag.nerr, nerr);
    if (code != CUDAG_OK) {
        assert_int_equal(e.code, code);
        assert_false(g->checked);
        assert_null(g->topo.order);
        assert_null(g->topo.level);
        assert_null(g->topo.out_start);
        assert_null(g->topo.in_edge);
    } else {
        assert_true(g->checked);
        assert_non_null(g->topo.order);
    }
}

/* ---- a valid graph ---------------------------------------------------------- */

static void check_accepts_valid_graph(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    buf(g, "y", CUDAG_TYPE_F32, 64);
    cudag_arg a[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 63),
                     cudag_arg_float(2.0), cudag_arg_int(64)};
    /* Index order: sink(0) left(1) right(2) zero(3) src(4) copy(5). */
    cudag_arg b[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 62),
                     cudag_arg_float(2.0), cudag_arg_int(1)};
    cudag_error e;
    /* left writes y[63], right y[62], copy y[0, 62): they need no order. */
    tnop(g, "sink");
    kern(g, "left", "scale_f32", a, 4);
    kern(g, "right", "scale_f32", b, 4);
    assert_int_equal(cudag_set_kernel_arg_count(g, "right", 1, 1, &e),
                     CUDAG_OK);
    memset_node(g, "zero", "x", 0, 64, 0.0);
    tnop(g, "src");
    memcpy_node(g, "copy", "y", 0, "x", 0, 62);
    tedge(g, "zero", "src", CUDAG_EDGE_FULL);
    tedge(g, "src", "left", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "src", "right", CUDAG_EDGE_LAUNCH_ORDER);
    tedge(g, "left", "sink", CUDAG_EDGE_FULL);
    tedge(g, "right", "sink", CUDAG_EDGE_FULL);
    tedge(g, "zero", "copy", CUDAG_EDGE_FULL);
    /* scale_f32 is not declared pdl here: both edges into it are said to
     * become full edges on the GPU. */
    static const char warned[] =
        "warning: programmatic edge 'src' -> 'left' will be built as a full "
        "edge: kernel 'scale_f32' is not declared pdl, so nothing says it "
        "waits (griddepcontrol.wait) before reading upstream data\n"
        "warning: launch_order edge 'src' -> 'right' will be built as a full "
        "edge: kernel 'scale_f32' is not declared pdl, so nothing says it "
        "waits (griddepcontrol.wait) before reading upstream data\n";
    expect(g, CUDAG_OK, 0, warned);

    const cudag__topo *t = &g->topo;
    /* Kahn taking the lowest-index ready node: zero(3) first, then src(4)
     * before copy(5), then left, right, sink. */
    static const uint32_t order[] = {3, 4, 1, 2, 0, 5};
    static const uint32_t level[] = {3, 2, 2, 0, 1, 1};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(t->order[i], order[i]);
        assert_int_equal(t->level[i], level[i]);
    }
    assert_int_equal(t->depth, 4);
    /* CSR: src(4) has out-edges to left(1) and right(2), sorted by target. */
    assert_int_equal(t->out_start[4 + 1] - t->out_start[4], 2);
    assert_int_equal(g->edges[t->out_edge[t->out_start[4]]].to, 1);
    assert_int_equal(g->edges[t->out_edge[t->out_start[4] + 1]].to, 2);
    assert_int_equal(t->out_start[6], 6);
    /* sink(0) has in-edges from left(1) and right(2), sorted by source. */
    assert_int_equal(t->in_start[1] - t->in_start[0], 2);
    assert_int_equal(g->edges[t->in_edge[t->in_start[0]]].from, 1);
    assert_int_equal(g->edges[t->in_edge[t->in_start[0] + 1]].from, 2);
    assert_int_equal(t->in_start[6], 6);
    /* x: 2 kernel args + memset + memcpy source; y: 2 args + destination. */
    assert_int_equal(g->buffers[0].uses, 4);
    assert_int_equal(g->buffers[1].uses, 3);

    /* Checking again reports the same and leaves the topology alone. */
    uint32_t *before = g->topo.order;
    expect(g, CUDAG_OK, 0, warned);
    assert_ptr_equal(g->topo.order, before);

    /* Any change un-checks the graph. */
    tnop(g, "late");
    assert_false(g->checked);
    assert_null(g->topo.order);
    expect(g, CUDAG_OK, 0, warned);
    assert_int_equal(g->topo.order[6], 6);
    cudag_graph_destroy(g);
}

static void check_accepts_empty_graph(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    expect(g, CUDAG_OK, 0, "");
    assert_int_equal(g->topo.depth, 0);
    cudag_graph_destroy(g);
}

/* ---- kernel arguments ------------------------------------------------------- */

static void check_rejects_argument_count(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    cudag_arg a[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("x", 0),
                     cudag_arg_float(2.0), cudag_arg_int(1)};
    kern(g, "a", "scale_f32", a, 3);
    kern(g, "b", "nop", a, 1);
    kern(g, "c", "one", a, 4);
    kern(g, "d", "one", NULL, 0);
    expect(g, CUDAG_EARGS, 4,
           "error: node 'a': kernel 'scale_f32' takes 4 arguments (x: ptr, "
           "y: ptr, a: f32, n: i64), got 3\n"
           "error: node 'b': kernel 'nop' takes no arguments, got 1\n"
           "error: node 'c': kernel 'one' takes 1 argument (n: i32), got 4\n"
           "error: node 'd': kernel 'one' takes 1 argument (n: i32), got 0\n");
    cudag_graph_destroy(g);
}

static void check_rejects_argument_kinds(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    cudag_arg null = {CUDAG_ARG_NULL, NULL, 0, 0, 0.0};
    cudag_arg a1[] = {cudag_arg_int(3), null, cudag_arg_buffer("x", 0),
                      cudag_arg_float(2.5)};
    cudag_arg a2[] = {cudag_arg_float(0.5), cudag_arg_buffer("x", 0), null,
                      cudag_arg_float(2.0)};
    kern(g, "a", "scale_f32", a1, 4);
    kern(g, "b", "scale_f32", a2, 4);
    expect(g, CUDAG_ETYPE, 6,
           "error: node 'a': argument 'x' (ptr) must be a buffer or null, got "
           "integer 3\n"
           "error: node 'a': argument 'a' (f32) must be a number, got buffer "
           "'x'\n"
           "error: node 'a': argument 'n' (i64) must be an integer, got number "
           "2.5\n"
           "error: node 'b': argument 'x' (ptr) must be a buffer or null, got "
           "number 0.5\n"
           "error: node 'b': argument 'a' (f32) must be a number, got null\n"
           "error: node 'b': argument 'n' (i64) must be an integer, got number "
           "2.0\n");
    cudag_graph_destroy(g);
}

static void check_keeps_first_error(void **state)
{
    /* err holds the first error and the count; an f32 parameter takes an
     * integer; a buffer given to no pointer is never used. */
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    cudag_arg a[] = {cudag_arg_int(3), cudag_arg_int(3), cudag_arg_int(3),
                     cudag_arg_int(3)};
    kern(g, "a", "scale_f32", a, 4);
    cudag_error e;
    assert_int_equal(run_check(g, 0, 0, &e), CUDAG_ETYPE);
    assert_int_equal(e.count, 2);
    assert_string_equal(e.message, "node 'a': argument 'x' (ptr) must be a "
                                   "buffer or null, got integer 3");
    assert_diag_contains(&diag, "warning: buffer 'x' is never used\n");
    cudag_graph_destroy(g);
}

static cudag_arg I(int64_t v) { return cudag_arg_int(v); }
static cudag_arg F(double v) { return cudag_arg_float(v); }

static void check_rejects_out_of_range_arguments(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    /* p i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 */
    cudag_arg bad[] = {cudag_arg_buffer("x", 64), I(128), I(256), I(-32769),
                       I(65536), I(INT64_C(2147483648)), I(-1), I(INT64_MIN),
                       I(-1), F(65520.0), F(3.4e38), F(1e39), F(1e308)};
    kern(g, "k", "all", bad, 13);
    expect(g, CUDAG_ERANGE, 11,
           "error: node 'k': argument 'p': offset 64 is outside buffer 'x' "
           "(64 elements)\n"
           "error: node 'k': argument 'i8' is 128, out of range for i8 (-128 "
           "to 127)\n"
           "error: node 'k': argument 'u8' is 256, out of range for u8 (0 to "
           "255)\n"
           "error: node 'k': argument 'i16' is -32769, out of range for i16 "
           "(-32768 to 32767)\n"
           "error: node 'k': argument 'u16' is 65536, out of range for u16 (0 "
           "to 65535)\n"
           "error: node 'k': argument 'i32' is 2147483648, out of range for "
           "i32 (-2147483648 to 2147483647)\n"
           "error: node 'k': argument 'u32' is -1, out of range for u32 (0 to "
           "4294967295)\n"
           "error: node 'k': argument 'u64' is -1, out of range for u64 (0 to "
           "9223372036854775807)\n"
           "error: node 'k': argument 'f16' is 65520.0, out of range for f16\n"
           "error: node 'k': argument 'bf16' is 3.4e+38, out of range for "
           "bf16\n"
           "error: node 'k': argument 'f32' is 1e+39, out of range for f32\n");
    cudag_graph_destroy(g);
}

static void check_accepts_arguments_at_the_limits(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    cudag_arg lo[] = {cudag_arg_buffer("x", 63), I(-128), I(0), I(-32768),
                      I(0), I(INT32_MIN), I(0), I(INT64_MIN), I(0),
                      F(-65504.0), F(-3.38e38), F(-3.4028234e38), F(-1e308)};
    cudag_arg hi[] = {{CUDAG_ARG_NULL, NULL, 0, 0, 0.0}, I(127), I(255),
                      I(32767), I(65535), I(INT32_MAX), I(UINT32_MAX),
                      I(INT64_MAX), I(INT64_MAX), I(65504), I(INT64_MAX),
                      F(INFINITY), F(NAN)};
    kern(g, "lo", "all", lo, 13);
    kern(g, "hi", "all", hi, 13);
    expect(g, CUDAG_OK, 0, "");
    cudag_graph_destroy(g);
}

static void check_rejects_huge_parameter_list(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    /* The builder caps a signature at 256 parameters (2 KiB at most), so
     * only a hand-made IR can reach the CUDA limit: 4095 i64 (32760 bytes),
     * an i8, 3 bytes of padding and an i32 take 32768 bytes. */
    cudag__sig *s = NULL;
    cudag_error e;
    assert_int_equal(cudag__add_sig(g, "huge", CUDAG__NOPOS, &s, &e), CUDAG_OK);
    s->module = 0;
    s->nparams = 4097;
    s->types = cudag__arena_alloc(&g->arena, 4097 * sizeof *s->types);
    s->pnames = cudag__arena_alloc(&g->arena, 4097 * sizeof *s->pnames);
    for (int i = 0; i < 4095; i++)
        s->types[i] = CUDAG_TYPE_I64;
    s->types[4095] = CUDAG_TYPE_I8;
    s->types[4096] = CUDAG_TYPE_I32;
    expect(g, CUDAG_ELIMIT, 1,
           "error: kernel 'huge': parameters take 32768 bytes (at most "
           "32764)\n");
    /* Without the i8: exactly 32764 bytes, which fits. */
    s->types[4095] = CUDAG_TYPE_I32;
    s->nparams = 4096;
    expect(g, CUDAG_OK, 0, "");
    cudag_graph_destroy(g);
}

/* ---- launch configuration --------------------------------------------------- */

static void check_rejects_launch_limits(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    kern_launch(g, "g0", "nop", (cudag_dim3){0, 1, 1}, TB256, 0, NULL, 0);
    kern_launch(g, "g1", "nop", (cudag_dim3){UINT32_C(2147483648), 65536, 65536},
                TB256, 0, NULL, 0);
    kern_launch(g, "b0", "nop", TG1, (cudag_dim3){256, 0, 1}, 0, NULL, 0);
    kern_launch(g, "b1", "nop", TG1, (cudag_dim3){2048, 1, 65}, 0, NULL, 0);
    kern_launch(g, "b2", "nop", TG1, (cudag_dim3){32, 64, 1}, 0, NULL, 0);
    kern_launch(g, "s0", "nop", TG1, TB256, 232449, NULL, 0);
    kern_launch(g, "ok", "nop", (cudag_dim3){2147483647, 65535, 65535},
                (cudag_dim3){16, 4, 16}, 232448, NULL, 0);
    expect(g, CUDAG_ERANGE, 9,
           "error: node 'g0': grid x is 0 (must be at least 1)\n"
           "error: node 'g1': grid x is 2147483648 (at most 2147483647)\n"
           "error: node 'g1': grid y is 65536 (at most 65535)\n"
           "error: node 'g1': grid z is 65536 (at most 65535)\n"
           "error: node 'b0': block y is 0 (must be at least 1)\n"
           "error: node 'b1': block x is 2048 (at most 1024)\n"
           "error: node 'b1': block z is 65 (at most 64)\n"
           "error: node 'b2': block has 2048 threads (32 x 64 x 1; at most "
           "1024)\n"
           "error: node 's0': smem is 232449 bytes (at most 232448)\n");
    cudag_graph_destroy(g);
}

static void check_rejects_negative_ir_dims(void **state)
{
    /* Expressions in YAML may evaluate to negative numbers; the IR holds
     * them as they are. */
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "k");
    g->nodes[0].u.k.grid[2] = -3;
    g->nodes[0].u.k.block[0] = INT64_MAX;
    g->nodes[0].u.k.smem = -1;
    expect(g, CUDAG_ERANGE, 3,
           "error: node 'k': grid z is -3 (must be at least 1)\n"
           "error: node 'k': block x is 9223372036854775807 (at most 1024)\n"
           "error: node 'k': smem is -1 bytes (must be at least 0)\n");
    cudag_graph_destroy(g);
}

/* ---- buffers ------------------------------------------------------------------ */

static void use_all(cudag_graph *g)
{
    /* One memset per buffer, so no "never used" warning gets in the way. */
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        char name[64];
        snprintf(name, sizeof name, "use_%s", g->buffers[i].name);
        memset_node(g, name, g->buffers[i].name, 0, 1, 0.0);
    }
}

static void check_rejects_bad_buffers(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "empty", CUDAG_TYPE_F32, 0);
    buf(g, "big", CUDAG_TYPE_F32, UINT64_C(1) << 45);     /* 128 TiB */
    buf(g, "wrap", CUDAG_TYPE_F64, UINT64_MAX / 4);       /* overflows */
    buf(g, "edge", CUDAG_TYPE_U8, UINT64_C(1) << 46);     /* exactly 64 TiB */
    /* An empty range (NaN's too) is refused by cudag_add_buffer itself. */
    cudag_init r = {CUDAG_INIT_RANDOM, 0, 1.0, 1.0, 7};
    cudag_error e;
    assert_int_equal(cudag_add_buffer(g, "r1", CUDAG_TYPE_F32, 4, &r, &e),
                     CUDAG_ERANGE);
    r.lo = 2.0;
    r.hi = -1.0;
    assert_int_equal(cudag_add_buffer(g, "r2", CUDAG_TYPE_F32, 4, &r, &e),
                     CUDAG_ERANGE);
    r.lo = 0;
    r.hi = NAN;
    assert_int_equal(cudag_add_buffer(g, "r4", CUDAG_TYPE_F32, 4, &r, &e),
                     CUDAG_ERANGE);
    r.lo = -INFINITY;
    r.hi = 0;
    buf_init(g, "r3", CUDAG_TYPE_F32, 4, r);
    r.lo = r.hi = 0;                                     /* default range */
    buf_init(g, "r5", CUDAG_TYPE_F32, 4, r);
    cudag_init k = {CUDAG_INIT_CONST, 300, 0, 0, 0};
    buf_init(g, "c1", CUDAG_TYPE_U8, 4, k);
    k.value = 1.5;
    buf_init(g, "c2", CUDAG_TYPE_I32, 4, k);
    k.value = 1e39;
    buf_init(g, "c3", CUDAG_TYPE_F32, 4, k);
    k.value = -INFINITY;                                 /* a sentinel: fine */
    buf_init(g, "c4", CUDAG_TYPE_F32, 4, k);
    k.value = -1;
    buf_init(g, "c5", CUDAG_TYPE_I64, 4, k);
    use_all(g);
    expect(g, CUDAG_ERANGE, 8,
           "error: buffer 'empty': count is 0 (must be at least 1)\n"
           "error: buffer 'big': absurd size: 35184372088832 elements of f32 "
           "is more than 64 TiB\n"
           "error: buffer 'wrap': absurd size: 4611686018427387903 elements "
           "of f64 is more than 64 TiB\n"
           "error: buffer 'r3': random range [-inf, 0.0) must be finite\n"
           "error: buffer 'c1': init value 300.0 is out of range for u8\n"
           "error: buffer 'c2': init value 1.5 is not an integer (the buffer "
           "is i32)\n"
           "error: buffer 'c3': init value 1e+39 is out of range for f32\n"
           "error: node 'use_empty': memset of 1 element at offset 0 is "
           "outside buffer 'empty' (0 elements)\n");
    cudag_graph_destroy(g);
}

static void check_warns_unused_buffer(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "used", CUDAG_TYPE_F32, 8);
    buf(g, "idle", CUDAG_TYPE_F32, 8);
    memset_node(g, "z", "used", 0, 8, 0.0);
    expect(g, CUDAG_OK, 0, "warning: buffer 'idle' is never used\n");
    assert_int_equal(diag.nwarn, 1);
    assert_int_equal(g->buffers[0].uses, 1);
    assert_int_equal(g->buffers[1].uses, 0);

    /* --Werror: the warning is an error, and the graph is not checked. */
    cudag__graph_touch(g);
    cudag_error e;
    assert_int_equal(run_check(g, CUDAG_WERROR, 0, &e), CUDAG_ECHECK);
    assert_int_equal(e.count, 1);
    assert_string_equal(diag.text, "error: buffer 'idle' is never used\n");
    assert_false(g->checked);
    assert_null(g->topo.order);
    cudag_graph_destroy(g);
}

/* ---- memset and memcpy ---------------------------------------------------------- */

static void check_rejects_bad_memsets(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "f", CUDAG_TYPE_F32, 64);
    buf(g, "h", CUDAG_TYPE_F16, 64);
    buf(g, "b", CUDAG_TYPE_BF16, 64);
    buf(g, "i", CUDAG_TYPE_I32, 64);
    buf(g, "u", CUDAG_TYPE_U8, 64);
    buf(g, "l", CUDAG_TYPE_I64, 64);
    buf(g, "q", CUDAG_TYPE_U64, 64);
    buf(g, "d", CUDAG_TYPE_F64, 64);
    memset_node(g, "m0", "f", 0, 0, 0.0);
    memset_node(g, "m1", "f", 60, 5, 0.0);
    memset_node(g, "m2", "f", UINT64_MAX, 2, 0.0);   /* offset + count wraps */
    memset_node(g, "m3", "i", 0, 64, 1.5);
    memset_node(g, "m4", "u", 0, 64, 256);
    memset_node(g, "m5", "u", 0, 64, -1);
    memset_node(g, "m6", "f", 0, 64, INFINITY);
    memset_node(g, "m7", "f", 0, 64, NAN);
    memset_node(g, "m8", "h", 0, 64, 65536.0);
    memset_node(g, "m9", "b", 0, 64, 1e39);
    memset_node(g, "m10", "l", 0, 64, 1);
    memset_node(g, "m11", "d", 0, 64, 1.0);
    memset_node(g, "m12", "q", 0, 64, -1);
    /* Fine: whole buffers, extremes, 8-byte patterns with equal halves. */
    memset_node(g, "ok0", "f", 63, 1, -3.4e38);
    memset_node(g, "ok1", "h", 0, 64, -65504.0);
    memset_node(g, "ok2", "u", 0, 64, 255);
    memset_node(g, "ok3", "l", 0, 64, -1);
    memset_node(g, "ok4", "q", 0, 64, 4294967297.0);    /* 0x0000000100000001 */
    memset_node(g, "ok5", "d", 0, 64, 0.0);
    memset_node(g, "ok6", "i", 0, 64, -2147483648.0);
    expect(g, CUDAG_ERANGE, 13,
           "error: node 'm0': memset count is 0 (must be at least 1)\n"
           "error: node 'm1': memset of 5 elements at offset 60 is outside "
           "buffer 'f' (64 elements)\n"
           "error: node 'm2': memset of 2 elements at offset "
           "18446744073709551615 is outside buffer 'f' (64 elements)\n"
           "error: node 'm3': memset value 1.5 is not an integer (buffer 'i' "
           "is i32)\n"
           "error: node 'm4': memset value 256.0 is out of range for u8 "
           "(buffer 'u')\n"
           "error: node 'm5': memset value -1.0 is out of range for u8 "
           "(buffer 'u')\n"
           "error: node 'm6': memset value inf is not finite (buffer 'f' is "
           "f32)\n"
           "error: node 'm7': memset value nan is not finite (buffer 'f' is "
           "f32)\n"
           "error: node 'm8': memset value 65536.0 is out of range for f16 "
           "(buffer 'h')\n"
           "error: node 'm9': memset value 1e+39 is out of range for bf16 "
           "(buffer 'b')\n"
           "error: node 'm10': memset value 1.0 cannot be written into 8-byte "
           "elements (buffer 'l' is i64): CUDA memsets write 4-byte words, so "
           "the value's two 32-bit halves must be equal\n"
           "error: node 'm11': memset value 1.0 cannot be written into 8-byte "
           "elements (buffer 'd' is f64): CUDA memsets write 4-byte words, so "
           "the value's two 32-bit halves must be equal\n"
           "error: node 'm12': memset value -1.0 is out of range for u64 "
           "(buffer 'q')\n");
    cudag_graph_destroy(g);
}

static void check_rejects_bad_memcpys(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    buf(g, "y", CUDAG_TYPE_I32, 32);
    buf(g, "h", CUDAG_TYPE_F16, 64);
    memcpy_node(g, "c0", "x", 0, "h", 0, 8);
    memcpy_node(g, "c1", "x", 0, "y", 0, 0);
    memcpy_node(g, "c2", "x", 0, "y", 16, 17);
    memcpy_node(g, "c3", "y", 1, "x", 0, 32);
    memcpy_node(g, "c4", "x", UINT64_MAX, "y", 0, 2);
    memcpy_node(g, "c5", "x", 8, "x", 0, 9);
    memcpy_node(g, "c6", "x", 0, "x", 8, 9);
    memcpy_node(g, "c7", "x", 0, "x", 0, 1);
    /* Fine: adjacent ranges of one buffer, and different buffers. */
    memcpy_node(g, "ok0", "x", 8, "x", 0, 8);
    memcpy_node(g, "ok1", "x", 0, "x", 32, 32);
    memcpy_node(g, "ok2", "y", 0, "x", 32, 32);
    expect(g, CUDAG_ETYPE, 8,
           "error: node 'c0': memcpy from 'h' (f16, 2 bytes) to 'x' (f32, 4 "
           "bytes): element sizes differ\n"
           "error: node 'c1': memcpy count is 0 (must be at least 1)\n"
           "error: node 'c2': memcpy of 17 elements at offset 16 is outside "
           "source buffer 'y' (32 elements)\n"
           "error: node 'c3': memcpy of 32 elements at offset 1 is outside "
           "destination buffer 'y' (32 elements)\n"
           "error: node 'c4': memcpy of 2 elements at offset "
           "18446744073709551615 is outside destination buffer 'x' (64 "
           "elements)\n"
           "error: node 'c5': memcpy source and destination overlap in buffer "
           "'x' (9 elements from offset 0 to offset 8)\n"
           "error: node 'c6': memcpy source and destination overlap in buffer "
           "'x' (9 elements from offset 8 to offset 0)\n"
           "error: node 'c7': memcpy source and destination overlap in buffer "
           "'x' (1 element from offset 0 to offset 0)\n");
    cudag_graph_destroy(g);
}

/* ---- edges ------------------------------------------------------------------------ */

static void check_rejects_bad_edges(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 8);
    tnop(g, "a");
    tnop(g, "b");
    memset_node(g, "s", "x", 0, 8, 0.0);
    memcpy_node(g, "c", "x", 0, "x", 4, 4);
    tedge(g, "a", "a", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "a", "s", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "s", "c", CUDAG_EDGE_LAUNCH_ORDER);
    tedge(g, "c", "b", CUDAG_EDGE_LAUNCH_ORDER);
    tedge(g, "s", "c", CUDAG_EDGE_FULL);
    cudag_error e;
    /* An index past the nodes can only come from a broken IR. */
    assert_int_equal(cudag__add_edge(g, 1, 99, CUDAG_EDGE_FULL, CUDAG__NOPOS, &e),
                     CUDAG_OK);
    expect(g, CUDAG_EEDGE, 8,
           "error: node 'a' depends on itself\n"
           "error: duplicate edge a -> b\n"
           "error: conflicting edges a -> b: full and programmatic\n"
           "error: programmatic edge a -> s: both ends must be kernel nodes "
           "('s' is a memset node)\n"
           "error: launch_order edge s -> c: both ends must be kernel nodes "
           "('s' is a memset node, 'c' is a memcpy node)\n"
           "error: launch_order edge c -> b: both ends must be kernel nodes "
           "('c' is a memcpy node)\n"
           "error: conflicting edges s -> c: launch_order and full\n"
           "error: edge 8 refers to node index 99, but the graph has 4 "
           "nodes\n");
    cudag_graph_destroy(g);
}

static void check_reports_edge_positions(void **state)
{
    /* Positions as the YAML front end would set them: the error points at
     * the edge, and a duplicate names where the first one was written. */
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    tnop(g, "b");
    cudag_error e;
    cudag__pos p1 = {"t.yaml", 3, 12}, p2 = {"t.yaml", 9, 5};
    assert_int_equal(cudag__add_edge(g, 0, 1, CUDAG_EDGE_FULL, p1, &e), CUDAG_OK);
    assert_int_equal(cudag__add_edge(g, 0, 1, CUDAG_EDGE_FULL, p2, &e), CUDAG_OK);
    expect(g, CUDAG_EEDGE, 1,
           "t.yaml:9:5: error: duplicate edge a -> b (first written at "
           "t.yaml:3:12)\n");
    cudag_graph_destroy(g);
}

/* ---- cycles ---------------------------------------------------------------------- */

static void check_reports_cycle(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "root");
    tnop(g, "a");
    tnop(g, "b");
    tnop(g, "c");
    tnop(g, "after");
    tedge(g, "root", "a", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    tedge(g, "b", "c", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "c", "after", CUDAG_EDGE_FULL);
    cudag_error e;
    cudag__pos closing = {"t.yaml", 7, 14};
    assert_int_equal(cudag__add_edge(g, 3, 1, CUDAG_EDGE_FULL, closing, &e),
                     CUDAG_OK);
    expect(g, CUDAG_ECYCLE, 1,
           "t.yaml:7:14: error: dependency cycle: a -> b -> c -> a\n");
    cudag_graph_destroy(g);
}

static void check_reports_each_cycle_once(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    /* Two components: {p, q} and {u, v, w} with two cycles through u (one
     * report for the component, the shortest cycle from its lowest node). */
    const char *names[] = {"w", "v", "u", "q", "p", "free"};
    for (int i = 0; i < 6; i++)
        tnop(g, names[i]);
    tedge(g, "u", "v", CUDAG_EDGE_FULL);
    tedge(g, "v", "w", CUDAG_EDGE_FULL);
    tedge(g, "w", "u", CUDAG_EDGE_FULL);
    tedge(g, "w", "v", CUDAG_EDGE_FULL);
    tedge(g, "p", "q", CUDAG_EDGE_FULL);
    tedge(g, "q", "p", CUDAG_EDGE_FULL);
    tedge(g, "free", "p", CUDAG_EDGE_FULL);
    tedge(g, "q", "free", CUDAG_EDGE_LAUNCH_ORDER);
    expect(g, CUDAG_ECYCLE, 2,
           "error: dependency cycle: w -> v -> w\n"
           "error: dependency cycle: q -> p -> q\n");
    cudag_graph_destroy(g);
}

static void check_self_edge_is_not_a_cycle(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    tnop(g, "a");
    tnop(g, "b");
    tedge(g, "a", "a", CUDAG_EDGE_FULL);
    tedge(g, "a", "b", CUDAG_EDGE_FULL);
    expect(g, CUDAG_EEDGE, 1, "error: node 'a' depends on itself\n");
    cudag_graph_destroy(g);
}

/* ---- the error limit ---------------------------------------------------------------- */

static void check_stops_at_max_errors(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    char name[32];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "k%d", i);
        kern_launch(g, name, "nop", (cudag_dim3){0, 1, 1}, TB256, 0, NULL, 0);
    }
    cudag_error e;
    assert_int_equal(run_check(g, 0, 3, &e), CUDAG_ERANGE);
    assert_int_equal(e.count, 3);
    assert_int_equal(diag.nerr, 3);
    assert_string_equal(e.message, "node 'k0': grid x is 0 (must be at least 1)");
    assert_false(g->checked);
    /* Default: 50, and all 20 are found. */
    assert_int_equal(run_check(g, 0, 0, &e), CUDAG_ERANGE);
    assert_int_equal(e.count, 20);
    cudag_graph_destroy(g);
}

/* ---- large graphs ------------------------------------------------------------------ */

#define BIG 100000

static cudag_graph *big_nodes(void)
{
    cudag_graph *g = new_graph();
    char name[32];
    for (int i = 0; i < BIG; i++) {
        snprintf(name, sizeof name, "n%d", i);
        tnop(g, name);
    }
    return g;
}

static void check_handles_long_chain(void **state)
{
    (void)state;
    cudag_graph *g = big_nodes();
    cudag_error e;
    /* A chain written backwards: n99999 -> n99998 -> … -> n0, so the order
     * is the reverse of the index order. */
    for (uint32_t i = BIG - 1; i > 0; i--)
        assert_int_equal(cudag__add_edge(g, i, i - 1, CUDAG_EDGE_PROGRAMMATIC,
                                         CUDAG__NOPOS, &e),
                         CUDAG_OK);
    expect(g, CUDAG_OK, 0, "");
    assert_int_equal(g->topo.depth, BIG);
    for (uint32_t i = 0; i < BIG; i++) {
        assert_int_equal(g->topo.order[i], BIG - 1 - i);
        assert_int_equal(g->topo.level[i], BIG - 1 - i);
    }

    /* Close it into one cycle of 100 000 nodes: found without recursion,
     * and the message keeps its head and tail. */
    assert_int_equal(cudag__add_edge(g, 0, BIG - 1, CUDAG_EDGE_FULL,
                                     CUDAG__NOPOS, &e),
                     CUDAG_OK);
    assert_int_equal(run_check(g, 0, 0, &e), CUDAG_ECYCLE);
    assert_int_equal(e.count, 1);
    assert_true(strncmp(e.message,
                        "dependency cycle: n0 -> n99999 -> n99998 -> ", 44) == 0);
    assert_non_null(strstr(e.message, " more) -> "));
    size_t len = strlen(e.message);
    assert_true(len < sizeof e.message - 1);
    assert_string_equal(e.message + len - 14, "n2 -> n1 -> n0");
    cudag_graph_destroy(g);
}

static void check_handles_random_dag(void **state)
{
    (void)state;
    uint64_t seed = tseed();
    cudag_graph *g = big_nodes();
    cudag_error e;
    /* Up to 4 edges into each node from distinct nodes among the 64 before
     * it, in a random order; the names are shuffled against the order only
     * through the edges. */
    static uint32_t expect_level[BIG];
    for (uint32_t j = 1; j < BIG; j++) {
        bool taken[64] = {false};
        uint32_t span = j < 64 ? j : 64;
        int k = (int)trand(&seed, 0, 5);
        for (int t = 0; t < k; t++) {
            uint32_t d = 1 + (uint32_t)trand(&seed, 0, span);
            if (d > span || taken[d - 1])
                continue;
            taken[d - 1] = true;
            uint32_t i = j - d;
            assert_int_equal(cudag__add_edge(g, i, j, (cudag_edge_kind)(t % 3),
                                             CUDAG__NOPOS, &e),
                             CUDAG_OK);
            if (expect_level[i] + 1 > expect_level[j])
                expect_level[j] = expect_level[i] + 1;
        }
    }
    expect(g, CUDAG_OK, 0, "");
    const cudag__topo *t = &g->topo;
    static uint32_t rank[BIG];
    static bool seen[BIG];
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < BIG; i++) {
        assert_false(seen[t->order[i]]);
        seen[t->order[i]] = true;
        rank[t->order[i]] = i;
    }
    uint32_t depth = 0;
    for (uint32_t i = 0; i < BIG; i++) {
        assert_int_equal(t->level[i], expect_level[i]);
        if (expect_level[i] + 1 > depth)
            depth = expect_level[i] + 1;
    }
    assert_int_equal(t->depth, depth);
    for (uint32_t i = 0; i < g->nedges; i++)
        assert_true(rank[g->edges[i].from] < rank[g->edges[i].to]);
    /* The CSR lists hold every edge once, grouped by their ends. */
    assert_int_equal(t->out_start[BIG], g->nedges);
    assert_int_equal(t->in_start[BIG], g->nedges);
    for (uint32_t v = 0; v < BIG; v++) {
        for (uint32_t j = t->out_start[v]; j < t->out_start[v + 1]; j++)
            assert_int_equal(g->edges[t->out_edge[j]].from, v);
        for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++)
            assert_int_equal(g->edges[t->in_edge[j]].to, v);
    }
    cudag_graph_destroy(g);
}

/* ---- allocation failures ------------------------------------------------------------ */

/* Makes each allocation of cudag_check fail in turn: every failure is
 * reported as CUDAG_ENOMEM, leaks nothing and leaves the graph unchecked;
 * once no allocation fails, the result is `want`. */
static void sweep_oom(cudag_graph *g, int want)
{
    cudag_error e;
    long n;
    for (n = 1;; n++) {
        cudag__graph_touch(g);
        long live = cudag__alloc_live();
        cudag__alloc_fail_after(n);
        int rc = run_check(g, 0, 0, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc == CUDAG_ENOMEM) {
            assert_int_equal(cudag__alloc_live(), live);  /* nothing leaked */
            assert_false(g->checked);
            assert_null(g->topo.order);
            assert_string_equal(e.message, "out of memory checking graph 'g'");
            continue;
        }
        assert_int_equal(rc, want);
        assert_true(made < n);  /* every allocation was tried */
        break;
    }
    assert_true(n > 5);
}

static void check_survives_oom(void **state)
{
    (void)state;
    cudag_graph *g = new_graph();
    buf(g, "x", CUDAG_TYPE_F32, 64);
    cudag_arg a[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("x", 0),
                     cudag_arg_float(1.0), cudag_arg_int(64)};
    kern(g, "a", "scale_f32", a, 4);
    kern(g, "b", "scale_f32", a, 4);
    tnop(g, "c");
    tedge(g, "a", "b", CUDAG_EDGE_PROGRAMMATIC);
    tedge(g, "a", "c", CUDAG_EDGE_FULL);
    sweep_oom(g, CUDAG_OK);
    assert_true(g->checked);
    /* With a cycle, the cycle search allocates too. */
    tedge(g, "c", "a", CUDAG_EDGE_FULL);
    sweep_oom(g, CUDAG_ECYCLE);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_accepts_valid_graph),
        cmocka_unit_test(check_accepts_empty_graph),
        cmocka_unit_test(check_rejects_argument_count),
        cmocka_unit_test(check_rejects_argument_kinds),
        cmocka_unit_test(check_keeps_first_error),
        cmocka_unit_test(check_rejects_out_of_range_arguments),
        cmocka_unit_test(check_accepts_arguments_at_the_limits),
        cmocka_unit_test(check_rejects_huge_parameter_list),
        cmocka_unit_test(check_rejects_launch_limits),
        cmocka_unit_test(check_rejects_negative_ir_dims),
        cmocka_unit_test(check_rejects_bad_buffers),
        cmocka_unit_test(check_warns_unused_buffer),
        cmocka_unit_test(check_rejects_bad_memsets),
        cmocka_unit_test(check_rejects_bad_memcpys),
        cmocka_unit_test(check_rejects_bad_edges),
        cmocka_unit_test(check_reports_edge_positions),
        cmocka_unit_test(check_reports_cycle),
        cmocka_unit_test(check_reports_each_cycle_once),
        cmocka_unit_test(check_self_edge_is_not_a_cycle),
        cmocka_unit_test(check_stops_at_max_errors),
        cmocka_unit_test(check_handles_long_chain),
        cmocka_unit_test(check_handles_random_dag),
        cmocka_unit_test(check_survives_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
