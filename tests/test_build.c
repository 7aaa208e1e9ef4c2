/* test_build.c — the GPU stages on the CPU, through the fake driver of
 * fake_driver.h: value conversions, argument packing, module and kernel
 * checks, PDL downgrades, the CUgraph's nodes and edges, buffer
 * initialisation, replays and updates, and the n-th driver call or
 * allocation failing anywhere from instantiation to destruction. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- helpers ---------------------------------------------------------------- */

#define N 1000

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_ADD[] = {
    {"a", CUDAG_TYPE_PTR}, {"b", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_COPY[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"n", CUDAG_TYPE_I64}};

static const cudag_dim3 G1 = {4, 1, 1}, B256 = {256, 1, 1};

/* The signatures every test graph may use, in module "m" (any path: the
 * fake loads anything but a name with "missing" or its own header). */
static cudag_graph *new_graph(const char *module_path)
{
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("t", &g, &e), &e);
    tok(cudag_add_module(g, "m", module_path ? module_path : "/dev/null", &e),
        &e);
    tok(cudag_add_signature(g, "scale_f32", "m", NULL, P_SCALE, 4, 1, &e), &e);
    tok(cudag_add_signature(g, "add_f32", "m", NULL, P_ADD, 4, 1, &e), &e);
    tok(cudag_add_signature(g, "copy_f32", "m", NULL, P_COPY, 3, 1, &e), &e);
    tok(cudag_add_signature(g, "noop", "m", "util_noop", NULL, 0, 1, &e), &e);
    tok(cudag_add_signature(g, "nowait", "m", "nowait_copy_f32", P_COPY, 3, 0,
                            &e),
        &e);
    tok(cudag_add_signature(g, "ptx80", "m", "ptx80_copy_f32", P_COPY, 3, 1,
                            &e),
        &e);
    tok(cudag_add_signature(g, "sm80", "m", "sm80_copy_f32", P_COPY, 3, 1, &e),
        &e);
    return g;
}

static void add_f32_buffer(cudag_graph *g, const char *name, cudag_init_kind k,
                           uint64_t seed)
{
    cudag_init in = {k, 0.0, 0.0, 0.0, seed};
    cudag_error e;
    tok(cudag_add_buffer(g, name, CUDAG_TYPE_F32, N, &in, &e), &e);
}

static void add_scale(cudag_graph *g, const char *name, const char *x,
                      const char *y, double a)
{
    cudag_arg args[] = {cudag_arg_buffer(x, 0), cudag_arg_buffer(y, 0),
                        cudag_arg_float(a), cudag_arg_int(N)};
    cudag_error e;
    tok(cudag_add_kernel(g, name, "scale_f32", G1, B256, 0, args, 4, &e), &e);
}

static void add_copy(cudag_graph *g, const char *name, const char *sig,
                     const char *x, const char *y)
{
    cudag_arg args[] = {cudag_arg_buffer(x, 0), cudag_arg_buffer(y, 0),
                        cudag_arg_int(N)};
    cudag_error e;
    tok(cudag_add_kernel(g, name, sig, G1, B256, 0, args, 3, &e), &e);
}

static void edge(cudag_graph *g, const char *a, const char *b,
                 cudag_edge_kind k)
{
    cudag_error e;
    tok(cudag_add_edge(g, a, b, k, &e), &e);
}

static void check(cudag_graph *g)
{
    cudag_error e;
    tok(cudag_check(g, NULL, &e), &e);
}

static cudag_exec_options xopts(tdiag *d, unsigned flags)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    if (d) {
        memset(d, 0, sizeof *d);
        o.diag = tdiag_fn;
        o.diag_user = d;
    }
    return o;
}

/* x (random) → scale a=2 → y; add(y, x) → z; memset w=1.5 → copy w → v. */
static cudag_graph *compute_graph(void)
{
    cudag_graph *g = new_graph(NULL);
    cudag_error e;
    add_f32_buffer(g, "x", CUDAG_INIT_RANDOM, 7);
    add_f32_buffer(g, "y", CUDAG_INIT_NONE, 0);
    add_f32_buffer(g, "z", CUDAG_INIT_NONE, 0);
    add_f32_buffer(g, "w", CUDAG_INIT_NONE, 0);
    add_f32_buffer(g, "v", CUDAG_INIT_NONE, 0);
    add_scale(g, "scale", "x", "y", 2.0);
    cudag_arg args[] = {cudag_arg_buffer("y", 0), cudag_arg_buffer("x", 0),
                        cudag_arg_buffer("z", 0), cudag_arg_int(N)};
    tok(cudag_add_kernel(g, "add", "add_f32", G1, B256, 0, args, 4, &e), &e);
    tok(cudag_add_memset(g, "fill", "w", 0, N, 1.5, &e), &e);
    tok(cudag_add_memcpy(g, "save", "v", 0, "w", 0, N, &e), &e);
    edge(g, "scale", "add", CUDAG_EDGE_PROGRAMMATIC);
    edge(g, "fill", "save", CUDAG_EDGE_FULL);
    check(g);
    return g;
}

static void read_f32(cudag_exec *x, const char *b, float *out)
{
    cudag_error e;
    tok(cudag_exec_read(x, b, out, N * sizeof(float), &e), &e);
}

/* ---- values ------------------------------------------------------------------- */

static void build_value_bits_round_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(cudag__f16_bits(1.0), 0x3c00);
    assert_int_equal(cudag__f16_bits(-2.0), 0xc000);
    assert_int_equal(cudag__f16_bits(65504.0), 0x7bff);
    assert_int_equal(cudag__f16_bits(65519.0), 0x7bff);   /* below the tie */
    assert_int_equal(cudag__f16_bits(65520.0), 0x7c00);   /* tie → even: inf */
    assert_int_equal(cudag__f16_bits(ldexp(1, -24)), 0x0001);
    assert_int_equal(cudag__f16_bits(ldexp(1, -25)), 0x0000);     /* tie */
    assert_int_equal(cudag__f16_bits(ldexp(3, -25)), 0x0002);     /* tie */
    assert_int_equal(cudag__f16_bits(ldexp(1023, -24)), 0x03ff);  /* subnormal */
    assert_int_equal(cudag__f16_bits(ldexp(2047, -25)), 0x0400);  /* → normal */
    assert_int_equal(cudag__f16_bits(1.0 + ldexp(1, -11)), 0x3c00);
    assert_int_equal(cudag__f16_bits(1.0 + ldexp(3, -11)), 0x3c02);
    assert_int_equal(cudag__f16_bits(-0.0), 0x8000);
    assert_int_equal(cudag__f16_bits(INFINITY), 0x7c00);
    assert_int_equal(cudag__f16_bits(NAN) & 0x7e00, 0x7e00);
    assert_int_equal(cudag__bf16_bits(1.0), 0x3f80);
    assert_int_equal(cudag__bf16_bits(1.5), 0x3fc0);
    assert_int_equal(cudag__bf16_bits(1.0 + ldexp(1, -8)), 0x3f80);  /* tie */
    assert_int_equal(cudag__bf16_bits(1.0 + ldexp(3, -8)), 0x3f82);  /* tie */
    assert_int_equal(cudag__bf16_bits(1.0 + ldexp(1, -8) + ldexp(1, -30)),
                     0x3f81);    /* just above the tie: no double rounding */
    assert_int_equal(cudag__bf16_bits(-3.0e38), 0xff62);
    assert_int_equal(cudag__bf16_bits(NAN) & 0x7fc0, 0x7fc0);
    assert_int_equal(cudag__bf16_bits(ldexp(1, -133)), 0x0001);
    assert_int_equal(cudag__value_bits(CUDAG_TYPE_F32, 1.0), 0x3f800000u);
    assert_true(cudag__value_bits(CUDAG_TYPE_F64, 1.0) ==
                UINT64_C(0x3ff0000000000000));
    assert_int_equal(cudag__value_bits(CUDAG_TYPE_I8, -1.0), 0xff);
    assert_int_equal(cudag__value_bits(CUDAG_TYPE_I32, -2.7), 0xfffffffe);
    assert_int_equal(cudag__value_bits(CUDAG_TYPE_U16, 65535.0), 0xffff);
    assert_true(cudag__value_bits(CUDAG_TYPE_I64, -1.0) == UINT64_MAX);
}

/* The rounding as the definition states it (frexp, ldexp, nearbyint: one
 * rounding straight from the double), against which the library's bit-level
 * shortcut for normal results is held. */
static uint16_t ref_small_float(double v, int eb, int mb)
{
    uint32_t sign = signbit(v) ? 1u << (eb + mb) : 0u;
    uint32_t inf = ((1u << eb) - 1u) << mb;
    if (isnan(v))
        return (uint16_t)(inf | 1u << (mb - 1));
    double a = fabs(v);
    if (a == 0.0)
        return (uint16_t)sign;
    int bias = (1 << (eb - 1)) - 1, emin = 1 - bias, e;
    frexp(a, &e);
    e -= 1;
    if (isinf(a) || e > bias)
        return (uint16_t)(sign | inf);
    if (e < emin)
        return (uint16_t)(sign | (uint32_t)nearbyint(ldexp(a, mb - emin)));
    double q = nearbyint(ldexp(a, mb - e));
    if (q >= ldexp(1.0, mb + 1)) {
        q = ldexp(1.0, mb);
        if (++e > bias)
            return (uint16_t)(sign | inf);
    }
    return (uint16_t)(sign | (uint32_t)(e + bias) << mb |
                      ((uint32_t)q - (1u << mb)));
}

static void build_small_floats_match_the_definition(void **state)
{
    (void)state;
    /* Random mantissas at every exponent either format can reach and a few
     * beyond, ties and their neighbours made on purpose. */
    uint64_t z = (uint64_t)time(NULL) * UINT64_C(0x9E3779B97F4A7C15) | 1;
    for (int i = 0; i < 400000; i++) {
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        int e = (int)(z % 300) - 150;
        double m = 1.0 + (double)(z >> 12) * ldexp(1.0, -52);
        if (i % 4 == 1)   /* an exact bf16 tie, or an f16 one */
            m = 1.0 + ldexp((double)((z >> 20) % 255 * 2 + 1), i % 8 == 1 ? -8 : -11);
        double v = ldexp(z & 1 ? -m : m, e);
        if (cudag__bf16_bits(v) != ref_small_float(v, 8, 7) ||
            cudag__f16_bits(v) != ref_small_float(v, 5, 10))
            fail_msg("%a: bf16 %#x (want %#x), f16 %#x (want %#x)", v,
                     cudag__bf16_bits(v), ref_small_float(v, 8, 7),
                     cudag__f16_bits(v), ref_small_float(v, 5, 10));
    }
}

static void build_pack_arg_checks_like_the_checker(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("p", &g, &e), &e);
    tok(cudag_add_buffer(g, "h", CUDAG_TYPE_F16, 10, NULL, &e), &e);
    CUdeviceptr bufs[1] = {0x10000};
    uint64_t slot;
    cudag__arg a;
    memset(&a, 0, sizeof a);
    a.kind = CUDAG_ARG_BUFFER;
    a.buffer = 0;
    a.offset = 3;
    tok(cudag__pack_arg(g, CUDAG_TYPE_PTR, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0x10000 + 3 * 2);
    a.offset = 10;
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_PTR, &a, bufs, &slot, &e),
                     CUDAG_ERANGE);
    assert_non_null(strstr(e.message, "outside buffer 'h'"));
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_I32, &a, bufs, &slot, &e),
                     CUDAG_ETYPE);
    a.kind = CUDAG_ARG_NULL;
    tok(cudag__pack_arg(g, CUDAG_TYPE_PTR, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0);
    a.kind = CUDAG_ARG_INT;
    a.i = 256;
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_U8, &a, bufs, &slot, &e),
                     CUDAG_ERANGE);
    a.i = -129;
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_I8, &a, bufs, &slot, &e),
                     CUDAG_ERANGE);
    a.i = -128;
    tok(cudag__pack_arg(g, CUDAG_TYPE_I8, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0x80);
    a.i = -1;
    tok(cudag__pack_arg(g, CUDAG_TYPE_U64, &a, bufs, &slot, &e), &e);
    assert_true(slot == UINT64_MAX);
    a.i = 3;
    tok(cudag__pack_arg(g, CUDAG_TYPE_F32, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0x40400000u);
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_PTR, &a, bufs, &slot, &e),
                     CUDAG_ETYPE);
    a.kind = CUDAG_ARG_FLOAT;
    a.f = 1e6;
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_F16, &a, bufs, &slot, &e),
                     CUDAG_ERANGE);
    assert_int_equal(cudag__pack_arg(g, CUDAG_TYPE_I64, &a, bufs, &slot, &e),
                     CUDAG_ETYPE);
    a.f = 1.5;
    tok(cudag__pack_arg(g, CUDAG_TYPE_BF16, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0x3fc0);
    a.f = INFINITY;
    tok(cudag__pack_arg(g, CUDAG_TYPE_F32, &a, bufs, &slot, &e), &e);
    assert_true(slot == 0x7f800000u);
    cudag_graph_destroy(g);
}

/* ---- the CUgraph --------------------------------------------------------------- */

static void build_adds_edges_sorted_with_edge_data(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = new_graph(NULL);
    add_f32_buffer(g, "x", CUDAG_INIT_ZERO, 0);
    cudag_error e;
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        add_copy(g, names[i], "copy_f32", "x", "x");
    /* Declared out of order: the build sorts them by (from, to). */
    edge(g, "c", "d", CUDAG_EDGE_FULL);
    edge(g, "b", "d", CUDAG_EDGE_PROGRAMMATIC);
    edge(g, "a", "c", CUDAG_EDGE_LAUNCH_ORDER);
    edge(g, "a", "b", CUDAG_EDGE_PROGRAMMATIC);
    check(g);
    tdiag d;
    /* With NVTX ranges on: nothing changes but a profiler's timeline. */
    cudag_exec_options o = xopts(&d, CUDAG_NVTX);
    cudag_exec *x;
    tok(cudag_instantiate(g, &o, &x, &e), &e);
    assert_int_equal(d.nwarn, 0);
    fake_graph *fg = F.last_graph;
    assert_non_null(fg);
    assert_ptr_equal(fg, x->built.graph);
    assert_int_equal(fg->nnodes, 4);
    assert_int_equal(fg->nedges, 4);
    static const struct {
        int from, to, port, type;
    } want[] = {
        {0, 1, CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
         CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC},
        {0, 2, CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER,
         CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC},
        {1, 3, CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
         CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC},
        {2, 3, 0, 0},
    };
    for (int i = 0; i < 4; i++) {
        assert_int_equal(fg->edges[i].from, want[i].from);
        assert_int_equal(fg->edges[i].to, want[i].to);
        assert_int_equal(fg->edges[i].ed.from_port, want[i].port);
        assert_int_equal(fg->edges[i].ed.type, want[i].type);
        assert_int_equal(fg->edges[i].ed.to_port, 0);
    }
    /* Kernel nodes carry their launch shape and parameter values. */
    assert_int_equal(fg->nodes[0]->grid[0], 4);
    assert_int_equal(fg->nodes[0]->block[0], 256);
    assert_true(fg->nodes[0]->vals[2] == N);
    cudag_exec_stats st;
    tok(cudag_exec_get_stats(x, &st), &e);
    assert_int_equal(st.downgraded_edges, 0);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* A programmatic edge into `sig` on a device of compute capability cc; the
 * edge's expected fate and the warning's text. */
static void downgrade_case(const char *sig, int cc, unsigned flags,
                           int want_rc, int want_kind, const char *text)
{
    fake_reset();
    F.cc_major = cc / 10;
    F.cc_minor = cc % 10;
    cudag_graph *g = new_graph(NULL);
    add_f32_buffer(g, "x", CUDAG_INIT_ZERO, 0);
    add_f32_buffer(g, "y", CUDAG_INIT_NONE, 0);
    add_copy(g, "up", "copy_f32", "x", "y");
    add_copy(g, "down", sig, "y", "x");
    edge(g, "up", "down", CUDAG_EDGE_PROGRAMMATIC);
    check(g);
    tdiag d;
    cudag_exec_options o = xopts(&d, flags);
    cudag_exec *x = NULL;
    cudag_error e;
    int rc = cudag_instantiate(g, &o, &x, &e);
    assert_int_equal(rc, want_rc);
    if (text)
        assert_diag_contains(&d, text);
    else
        assert_int_equal(d.nwarn + d.nerr, 0);
    if (rc == CUDAG_OK) {
        assert_int_equal(F.last_graph->edges[0].ed.type, want_kind);
        cudag_exec_stats st;
        cudag_exec_get_stats(x, &st);
        assert_int_equal(st.downgraded_edges,
                         text && !(flags & CUDAG_STRICT) ? 1 : 0);
    } else {
        assert_null(x);
        assert_non_null(strstr(e.message, "'up' -> 'down'"));
    }
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static void build_downgrades_unsafe_programmatic_edges(void **state)
{
    (void)state;
    const int P = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, FULL = 0;
    downgrade_case("copy_f32", 90, 0, CUDAG_OK, P, NULL);
    downgrade_case("nowait", 90, 0, CUDAG_OK, FULL,
                   "warning: programmatic edge 'up' -> 'down' built as a full "
                   "edge: kernel 'nowait' is not declared pdl");
    downgrade_case("nowait", 90, CUDAG_STRICT, CUDAG_EPDL, FULL,
                   "error: programmatic edge 'up' -> 'down' is not safe: "
                   "kernel 'nowait' is not declared pdl");
    downgrade_case("nowait", 90, CUDAG_NO_PDL, CUDAG_OK, FULL, NULL);
    downgrade_case("copy_f32", 90, CUDAG_NO_PDL, CUDAG_OK, FULL, NULL);
    downgrade_case("copy_f32", 80, 0, CUDAG_OK, FULL,
                   "compute capability 8.0) has no programmatic dependent "
                   "launch");
    downgrade_case("ptx80", 90, 0, CUDAG_OK, FULL,
                   "the loaded code of kernel 'ptx80' was JIT-compiled from "
                   "compute_80 PTX, where griddepcontrol.wait is compiled out");
    downgrade_case("sm80", 90, 0, CUDAG_OK, FULL,
                   "the loaded code of kernel 'sm80' was built for sm_80, "
                   "which has no griddepcontrol.wait");
    downgrade_case("sm80", 90, CUDAG_WERROR, CUDAG_EPDL, FULL,
                   "error: programmatic edge");
}

static void build_memset_and_memcpy_parameters(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("m", &g, &e), &e);
    tok(cudag_add_buffer(g, "d", CUDAG_TYPE_F64, 8, NULL, &e), &e);
    tok(cudag_add_buffer(g, "b", CUDAG_TYPE_BF16, 8, NULL, &e), &e);
    tok(cudag_add_buffer(g, "c", CUDAG_TYPE_I8, 8, NULL, &e), &e);
    tok(cudag_add_buffer(g, "c2", CUDAG_TYPE_I8, 8, NULL, &e), &e);
    tok(cudag_add_memset(g, "sd", "d", 2, 4, 0.0, &e), &e);
    tok(cudag_add_memset(g, "sb", "b", 1, 6, 1.5, &e), &e);
    tok(cudag_add_memset(g, "sc", "c", 0, 8, -1.0, &e), &e);
    tok(cudag_add_memcpy(g, "cp", "c2", 2, "c", 1, 5, &e), &e);
    edge(g, "sc", "cp", CUDAG_EDGE_FULL);
    check(g);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    fake_graph *fg = F.last_graph;
    CUDA_MEMSET_NODE_PARAMS *p = &fg->nodes[0]->set;
    assert_int_equal(p->elementSize, 4);
    assert_int_equal(p->width, 8);
    assert_int_equal(p->value, 0);
    assert_true(p->dst == x->bufs[0] + 16);
    p = &fg->nodes[1]->set;
    assert_int_equal(p->elementSize, 2);
    assert_int_equal(p->width, 6);
    assert_int_equal(p->value, 0x3fc0);
    p = &fg->nodes[2]->set;
    assert_int_equal(p->elementSize, 1);
    assert_int_equal(p->value, 0xff);
    CUDA_MEMCPY3D *c = &fg->nodes[3]->cpy;
    assert_true(c->srcDevice == x->bufs[2] + 1);
    assert_true(c->dstDevice == x->bufs[3] + 2);
    assert_int_equal(c->WidthInBytes, 5);
    assert_int_equal(c->srcMemoryType, CU_MEMORYTYPE_DEVICE);
    /* Run it: the fake executes memsets and copies in dependency order. */
    tok(cudag_exec_launch(x, 1, &e), &e);
    uint16_t bv[8];
    tok(cudag_exec_read(x, "b", bv, sizeof bv, &e), &e);
    assert_int_equal(bv[0], 0x7ff8);    /* poison, untouched */
    for (int i = 1; i < 7; i++)
        assert_int_equal(bv[i], 0x3fc0);
    int8_t cv[8];
    tok(cudag_exec_read(x, "c2", cv, sizeof cv, &e), &e);
    assert_int_equal((uint8_t)cv[1], 0xa5);
    for (int i = 2; i < 7; i++)
        assert_int_equal(cv[i], -1);
    double dv[8];
    tok(cudag_exec_read(x, "d", dv, sizeof dv, &e), &e);
    assert_true(isnan(dv[0]) && isnan(dv[7]));
    for (int i = 2; i < 6; i++)
        assert_true(dv[i] == 0.0);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* ---- buffers ------------------------------------------------------------------- */

static uint64_t ref_splitmix(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void exec_initialises_buffers_as_declared(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("i", &g, &e), &e);
    cudag_init zero = {CUDAG_INIT_ZERO, 0, 0, 0, 0};
    cudag_init cst = {CUDAG_INIT_CONST, -2.5, 0, 0, 0};
    cudag_init iota = {CUDAG_INIT_IOTA, 0, 0, 0, 0};
    cudag_init rnd = {CUDAG_INIT_RANDOM, 0, 0.5, 4.0, 99};
    cudag_init rnd2 = {CUDAG_INIT_RANDOM, 0, 0, 0, 99};
    tok(cudag_add_buffer(g, "z", CUDAG_TYPE_I32, 5, &zero, &e), &e);
    tok(cudag_add_buffer(g, "c", CUDAG_TYPE_BF16, 5, &cst, &e), &e);
    tok(cudag_add_buffer(g, "i", CUDAG_TYPE_U8, 300, &iota, &e), &e);
    tok(cudag_add_buffer(g, "r", CUDAG_TYPE_F32, 1000, &rnd, &e), &e);
    tok(cudag_add_buffer(g, "ri", CUDAG_TYPE_I16, 1000, &rnd2, &e), &e);
    tok(cudag_add_buffer(g, "p", CUDAG_TYPE_I32, 3, NULL, &e), &e);
    tok(cudag_add_buffer(g, "pf", CUDAG_TYPE_F32, 3, NULL, &e), &e);
    check(g);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    int32_t zi[5];
    tok(cudag_exec_read(x, "z", zi, sizeof zi, &e), &e);
    for (int k = 0; k < 5; k++)
        assert_int_equal(zi[k], 0);
    uint16_t cb[5];
    tok(cudag_exec_read(x, "c", cb, sizeof cb, &e), &e);
    for (int k = 0; k < 5; k++)
        assert_int_equal(cb[k], 0xc020);
    uint8_t iu[300];
    tok(cudag_exec_read(x, "i", iu, sizeof iu, &e), &e);
    for (int k = 0; k < 300; k++)
        assert_int_equal(iu[k], k & 0xff);
    float rf[1000];
    tok(cudag_exec_read(x, "r", rf, sizeof rf, &e), &e);
    double mean = 0;
    for (int k = 0; k < 1000; k++) {
        double u = (double)(ref_splitmix(99, (uint64_t)k) >> 11) *
                   (1.0 / 9007199254740992.0);
        assert_true(rf[k] == (float)(0.5 + 3.5 * u));
        assert_true(rf[k] >= 0.5f && rf[k] <= 4.0f);
        mean += rf[k] / 1000.0;
    }
    assert_true(mean > 2.0 && mean < 2.5);
    int16_t ri[1000];
    tok(cudag_exec_read(x, "ri", ri, sizeof ri, &e), &e);
    int seen[2] = {0, 0};
    for (int k = 0; k < 1000; k++) {
        assert_true(ri[k] == -1 || ri[k] == 0);
        seen[ri[k] + 1]++;
    }
    assert_true(seen[0] > 300 && seen[1] > 300);
    uint32_t pi[3];
    tok(cudag_exec_read(x, "p", pi, sizeof pi, &e), &e);
    assert_true(pi[0] == 0xa5a5a5a5u && pi[2] == 0xa5a5a5a5u);
    float pf[3];
    tok(cudag_exec_read(x, "pf", pf, sizeof pf, &e), &e);
    assert_true(isnan(pf[0]) && isnan(pf[1]) && isnan(pf[2]));
    /* The same seed gives the same bytes in a second exec. */
    cudag_exec *x2;
    tok(cudag_instantiate(g, NULL, &x2, &e), &e);
    float rf2[1000];
    tok(cudag_exec_read(x2, "r", rf2, sizeof rf2, &e), &e);
    assert_memory_equal(rf, rf2, sizeof rf);
    cudag_exec_destroy(x2);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Random contents past one thread's share (init.c fills a stage of 16 MB
 * over several threads, 1 Mi elements each at least): every element as the
 * one-thread formula gives it, across stages and uneven last slices, in
 * 4-byte and 2-byte elements (the slices' offsets scale by the size). */
static void exec_fills_large_random_buffers_exactly(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("big", &g, &e), &e);
    cudag_init rf = {CUDAG_INIT_RANDOM, 0, -0.5, 0.25, 7};
    cudag_init rb = {CUDAG_INIT_RANDOM, 0, -0.035, 0.035, 3};
    /* f32: a stage of 4 Mi elements, then 2 Mi + 3; bf16: one stage of
     * 2 Mi + 1 */
    const uint64_t nf = (UINT64_C(4) << 20) + (UINT64_C(2) << 20) + 3;
    const uint64_t nb = (UINT64_C(2) << 20) + 1;
    tok(cudag_add_buffer(g, "f", CUDAG_TYPE_F32, nf, &rf, &e), &e);
    tok(cudag_add_buffer(g, "h", CUDAG_TYPE_BF16, nb, &rb, &e), &e);
    check(g);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    float *f = cudag__malloc(nf * sizeof *f);
    uint16_t *h = cudag__malloc(nb * sizeof *h);
    assert_non_null(f);
    assert_non_null(h);
    tok(cudag_exec_read(x, "f", f, nf * sizeof *f, &e), &e);
    tok(cudag_exec_read(x, "h", h, nb * sizeof *h, &e), &e);
    uint64_t bad = 0;
    for (uint64_t k = 0; k < nf; k++) {
        double u = (double)(ref_splitmix(7, k) >> 11) * (1.0 / 9007199254740992.0);
        bad += f[k] != (float)(-0.5 + 0.75 * u);
    }
    for (uint64_t k = 0; k < nb; k++) {
        double u = (double)(ref_splitmix(3, k) >> 11) * (1.0 / 9007199254740992.0);
        bad += h[k] != (uint16_t)cudag__value_bits(CUDAG_TYPE_BF16, -0.035 + 0.07 * u);
    }
    assert_true(bad == 0);
    cudag__free(f);
    cudag__free(h);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static void exec_checks_free_memory_before_allocating(void **state)
{
    (void)state;
    fake_reset();
    F.mem_free = 5000;
    cudag_graph *g = new_graph(NULL);
    add_f32_buffer(g, "x", CUDAG_INIT_ZERO, 0);
    add_f32_buffer(g, "y", CUDAG_INIT_ZERO, 0);
    check(g);
    cudag_exec *x;
    cudag_error e;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENOMEM);
    assert_null(x);
    assert_non_null(strstr(e.message, "need 8000 bytes"));
    assert_non_null(strstr(e.message, "has 5000 bytes free"));
    assert_int_equal(F.allocs, 0);
    assert_int_equal(fake_live(), 0);
    /* A bound buffer needs no memory of the exec's own. */
    float host[N];
    tok(cudag_bind_buffer(g, "y", (uint64_t)(uintptr_t)host, &e), &e);
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    assert_int_equal(F.allocs, 1);
    uint64_t p, bytes;
    tok(cudag_exec_buffer(x, "y", &p, &bytes, &e), &e);
    assert_true(p == (uint64_t)(uintptr_t)host);
    assert_true(bytes == sizeof host);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* ---- code ---------------------------------------------------------------------- */

static void code_case(const char *module, const char *symbol, int want_rc,
                      const char *text)
{
    fake_reset();
    cudag_graph *g = new_graph(module);
    cudag_error e;
    tok(cudag_add_signature(g, "k", "m", symbol, P_SCALE, 4, 1, &e), &e);
    add_f32_buffer(g, "x", CUDAG_INIT_ZERO, 0);
    cudag_arg args[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("x", 0),
                        cudag_arg_float(1), cudag_arg_int(N)};
    tok(cudag_add_kernel(g, "node", "k", G1, B256, 0, args, 4, &e), &e);
    check(g);
    cudag_exec *x;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), want_rc);
    assert_null(x);
    if (!strstr(e.message, text))
        print_error("message: %s\n", e.message);
    assert_non_null(strstr(e.message, text));
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static void exec_checks_code_against_signatures(void **state)
{
    (void)state;
    code_case("/nonexistent/missing.fatbin", "scale_f32", CUDAG_EIO,
              "cannot open module 'm' (/nonexistent/missing.fatbin)");
    /* A file that exists but is no module: the driver's words. */
    code_case(tsrc("tests/fake_driver.h"), "scale_f32", CUDAG_ECUDA,
              "cuLibraryLoadFromFile: cannot load module 'm'");
    code_case("/dev/null", "no_such_kernel", CUDAG_EUNKNOWN,
              "kernel 'k': no symbol 'no_such_kernel' in module 'm'");
    code_case("/dev/null", "scale_short", CUDAG_EARGS,
              "the loaded code of 'scale_short' takes 3 parameters, the "
              "signature declares 4");
    code_case("/dev/null", "scale_wide", CUDAG_EARGS,
              "parameter 2 ('a') is 8 bytes in the loaded code, but the "
              "signature says f32 (4 bytes)");
    code_case("/dev/null", "scale_long", CUDAG_EARGS,
              "takes more than the 4 parameters its signature declares");
}

static void exec_raises_shared_memory_and_refuses_too_much(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = new_graph(NULL);
    cudag_error e;
    tok(cudag_add_signature(g, "smem", "m", "smem_user", NULL, 0, 1, &e), &e);
    tok(cudag_add_kernel(g, "big", "smem", G1, B256, 100 * 1024, NULL, 0, &e),
        &e);
    check(g);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    assert_int_equal(F.smem_attr_value, 100 * 1024);
    assert_int_equal(F.last_graph->nodes[0]->smem, 100 * 1024);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);

    /* Less than 48 KiB dynamic still needs the opt-in when the static part
     * (1 KiB here) takes the sum past it; one that fits beside it does not. */
    static const struct {
        int smem, raised;
    } near[] = {{48 * 1024 - 512, 48 * 1024 - 512}, {47 * 1024, 0}};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        fake_reset();
        g = new_graph(NULL);
        tok(cudag_add_signature(g, "smem", "m", "smem_user", NULL, 0, 1, &e), &e);
        tok(cudag_add_kernel(g, "near", "smem", G1, B256, near[i].smem, NULL, 0,
                             &e), &e);
        check(g);
        tok(cudag_instantiate(g, NULL, &x, &e), &e);
        assert_int_equal(F.smem_attr_value, near[i].raised);
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
    }

    /* 227 KiB is the opt-in limit; 1 KiB of it is static. */
    fake_reset();
    g = new_graph(NULL);
    tok(cudag_add_signature(g, "smem", "m", "smem_user", NULL, 0, 1, &e), &e);
    tok(cudag_add_kernel(g, "big", "smem", G1, B256, 227 * 1024, NULL, 0, &e),
        &e);
    check(g);
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ELIMIT);
    assert_non_null(strstr(e.message, "node 'big' asks for 232448 bytes"));
    assert_non_null(strstr(e.message, "at most 231424"));
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* cluster and priority become the kernel node's launch attributes
 * (cuGraphKernelNodeSetAttribute), priorities the instantiate flag that
 * makes them count; stream launches carry both; more than 8 blocks opt the
 * function in to a non-portable cluster; a device below 9.0 is refused at
 * the node's cluster. */
static void exec_sets_cluster_and_priority(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = new_graph(NULL);
    cudag_error e;
    cudag_dim3 grid = {16, 2, 1};
    tok(cudag_add_kernel(g, "n", "noop", grid, B256, 0, NULL, 0, &e), &e);
    tok(cudag_add_kernel(g, "p", "noop", G1, B256, 0, NULL, 0, &e), &e);
    tok(cudag_add_kernel(g, "q", "noop", G1, B256, 0, NULL, 0, &e), &e);
    tok(cudag_set_kernel_cluster(g, "n", (cudag_dim3){8, 2, 1}, &e), &e);
    tok(cudag_set_kernel_priority(g, "p", -3, &e), &e);
    assert_int_equal(cudag_set_kernel_priority(g, "nothere", 1, &e),
                     CUDAG_EUNKNOWN);
    check(g);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    fake_node *const *nd = F.last_graph->nodes;
    assert_int_equal(nd[0]->cluster[0], 8);
    assert_int_equal(nd[0]->cluster[1], 2);
    assert_int_equal(nd[0]->cluster[2], 1);
    assert_false(nd[0]->has_priority);
    assert_int_equal(nd[1]->cluster[0], 0);
    assert_true(nd[1]->has_priority);
    assert_int_equal(nd[1]->priority, -3);
    assert_false(nd[2]->has_priority);
    assert_int_equal(nd[2]->cluster[0], 0);
    assert_true(F.instantiate_flags &
                CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    /* 16 blocks: the non-portable opt-in, once for the one node. */
    assert_int_equal(F.nonportable_sets, 1);
    /* Stream launches carry the same attributes. */
    F.nlaunched = 0;
    tok(cudag_exec_replay(x, CUDAG_REPLAY_STREAM, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    assert_int_equal(F.nlaunched, 3);
    assert_int_equal(F.launched_cluster[0], 8);
    assert_int_equal(F.launched_priority[0], INT_MIN);
    assert_int_equal(F.launched_cluster[1], 0);
    assert_int_equal(F.launched_priority[1], -3);
    assert_int_equal(F.launched_priority[2], INT_MIN);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);

    /* Without a priority, no flag; a portable cluster, no opt-in. */
    tok(cudag_set_kernel_cluster(g, "n", (cudag_dim3){4, 1, 1}, &e), &e);
    cudag_graph_destroy(g);
    fake_reset();
    g = new_graph(NULL);
    tok(cudag_add_kernel(g, "n", "noop", grid, B256, 0, NULL, 0, &e), &e);
    tok(cudag_set_kernel_cluster(g, "n", (cudag_dim3){4, 1, 1}, &e), &e);
    check(g);
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    assert_false(F.instantiate_flags &
                 CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    assert_int_equal(F.nonportable_sets, 0);
    assert_int_equal(F.last_graph->nodes[0]->cluster[0], 4);
    cudag_exec_destroy(x);

    /* Compute capability 8.0 has no clusters. */
    fake_reset();
    F.cc_major = 8;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENOTSUP);
    assert_non_null(strstr(e.message, "node 'n' asks for a thread-block "
                                      "cluster, which needs compute "
                                      "capability 9.0 (this device has 8.0)"));
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);

    /* A failing attribute call names the node, and leaks nothing. */
    fake_reset();
    g = new_graph(NULL);
    tok(cudag_add_kernel(g, "n", "noop", grid, B256, 0, NULL, 0, &e), &e);
    tok(cudag_set_kernel_cluster(g, "n", (cudag_dim3){2, 1, 1}, &e), &e);
    tok(cudag_set_kernel_priority(g, "n", 0, &e), &e);
    check(g);
    for (long n = 1;; n++) {
        fake_reset();
        fake_fail_at(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        if (rc == CUDAG_OK) {
            cudag_exec_destroy(x);
            break;
        }
        if (F.failed &&
            strcmp(F.failed, "cuGraphKernelNodeSetAttribute") == 0)
            assert_non_null(strstr(e.message,
                                   "cuGraphKernelNodeSetAttribute("));
        fake_expect_clean(n);
    }
    cudag_graph_destroy(g);
}

static void exec_instantiate_failure_names_the_node(void **state)
{
    (void)state;
    fake_reset();
    F.instantiate_fail_node = 1;
    cudag_graph *g = compute_graph();
    cudag_exec *x;
    cudag_error e;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ECUDA);
    assert_non_null(strstr(e.message, "cuGraphInstantiateWithParams failed "
                                      "(CUDA_GRAPH_INSTANTIATE_INVALID_"
                                      "STRUCTURE) at node 'add'"));
    assert_non_null(strstr(e.message, "CUDA_ERROR_INVALID_VALUE"));
    assert_int_equal(e.cuda_result, CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* CUDAG_DEVICE_LAUNCH reaches every instantiation of the exec (its own
 * graph and the graphs cudag_exec_prepare makes), and only with the flag;
 * a refused instantiation says what such a graph may hold. */
static void device_launch_reaches_every_instantiation(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        fake_reset();
        cudag_graph *g = compute_graph();
        cudag_exec_options o = xopts(NULL, with ? CUDAG_DEVICE_LAUNCH : 0);
        cudag_exec *x;
        cudag_error e;
        F.instantiate_flags = 99;
        tok(cudag_instantiate(g, &o, &x, &e), &e);
        assert_int_equal(F.instantiate_flags,
                         with ? CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH : 0);
        for (int how = CUDAG_REPLAY_GRAPH_FULL; how < CUDAG_REPLAY_COUNT_;
             how++) {
            if (how == CUDAG_REPLAY_GRAPH)
                continue;       /* the exec's own graph, checked above */
            F.instantiate_flags = 99;
            tok(cudag_exec_prepare(x, (cudag_replay)how, &e), &e);
            assert_int_equal(F.instantiate_flags,
                             CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                 (with ? CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH
                                       : 0));
        }
        cudag_exec_destroy(x);
        F.instantiate_fail_node = 1;
        assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_ECUDA);
        assert_true((strstr(e.message, "may hold only kernel, memset, memcpy "
                                       "and child-graph nodes") != NULL) ==
                    (with != 0));
        assert_int_equal(fake_live(), 0);
        cudag_graph_destroy(g);
    }
}

static void exec_refuses_unchecked_graphs_and_bad_devices(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = new_graph(NULL);
    add_f32_buffer(g, "x", CUDAG_INIT_ZERO, 0);
    cudag_exec *x;
    cudag_error e;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ESTATE);
    assert_null(x);
    check(g);
    cudag_exec_options o = xopts(NULL, 0);
    o.device = 3;
    assert_int_equal(cudag_instantiate(g, &o, &x, &e), CUDAG_EINVAL);
    assert_non_null(strstr(e.message, "there is no CUDA device 3"));
    assert_int_equal(fake_live(), 0);
    /* A borrowed context and stream are used, not created or released. */
    o = xopts(NULL, 0);
    o.context = (void *)(uintptr_t)0xc1;
    o.stream = (void *)(uintptr_t)0x5;
    tok(cudag_instantiate(g, &o, &x, &e), &e);
    assert_int_equal(F.retained, 0);
    assert_ptr_equal(cudag_exec_stream(x), (void *)(uintptr_t)0x5);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    assert_int_equal(cudag_instantiate(NULL, NULL, &x, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_instantiate(g, NULL, NULL, &e), CUDAG_EINVAL);
    cudag_exec_destroy(NULL);
    cudag_graph_destroy(g);
}

/* ---- replays and updates ----------------------------------------------------- */

static void exec_replays_and_updates_arguments_and_buffers(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = compute_graph();
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    static float xs[N], ys[N], zs[N], vs[N];
    read_f32(x, "x", xs);
    read_f32(x, "z", zs);
    assert_true(isnan(zs[0]));
    tok(cudag_exec_launch(x, 3, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    read_f32(x, "z", zs);
    read_f32(x, "v", vs);
    for (int i = 0; i < N; i++) {
        assert_true(zs[i] == 2.0f * xs[i] + xs[i]);
        assert_true(vs[i] == 1.5f);
    }
    /* A scalar. */
    cudag_arg a = cudag_arg_float(-4.0);
    tok(cudag_exec_set_arg(x, "scale", 2, &a, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_f32(x, "z", zs);
    for (int i = 0; i < N; i++)
        assert_true(zs[i] == -4.0f * xs[i] + xs[i]);
    /* Wrong arguments leave the exec as it was. */
    cudag_arg bad = cudag_arg_int(1);
    assert_int_equal(cudag_exec_set_arg(x, "scale", 0, &bad, &e), CUDAG_ETYPE);
    assert_non_null(strstr(e.message, "node 'scale', argument 0 ('x')"));
    assert_int_equal(cudag_exec_set_arg(x, "scale", 4, &a, &e), CUDAG_EARGS);
    assert_int_equal(cudag_exec_set_arg(x, "fill", 0, &a, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_set_arg(x, "nope", 0, &a, &e), CUDAG_EUNKNOWN);
    cudag_arg big = cudag_arg_buffer("x", N);
    assert_int_equal(cudag_exec_set_arg(x, "scale", 0, &big, &e), CUDAG_ERANGE);
    /* A pointer argument moved to another buffer, then back. */
    cudag_arg toz = cudag_arg_buffer("v", 0);
    tok(cudag_exec_set_arg(x, "scale", 0, &toz, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_f32(x, "y", ys);
    for (int i = 0; i < N; i++)
        assert_true(ys[i] == -4.0f * 1.5f);
    cudag_arg tox = cudag_arg_buffer("x", 0);
    tok(cudag_exec_set_arg(x, "scale", 0, &tox, &e), &e);
    /* The host program's memory bound to x: every node reading x follows. */
    static float mine[N];
    for (int i = 0; i < N; i++)
        mine[i] = (float)i;
    tok(cudag_exec_rebind_buffer(x, "x", (uint64_t)(uintptr_t)mine, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    read_f32(x, "z", zs);
    for (int i = 0; i < N; i++)
        assert_true(zs[i] == -4.0f * (float)i + (float)i);
    /* Memset and memcpy nodes follow a rebind too. */
    static float w2[N], v2[N];
    tok(cudag_exec_rebind_buffer(x, "w", (uint64_t)(uintptr_t)w2, &e), &e);
    tok(cudag_exec_rebind_buffer(x, "v", (uint64_t)(uintptr_t)v2, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    assert_true(w2[7] == 1.5f && v2[N - 1] == 1.5f);
    /* Writes go where the nodes point now. */
    for (int i = 0; i < N; i++)
        zs[i] = 1.0f;
    tok(cudag_exec_write(x, "x", zs, sizeof zs, &e), &e);
    assert_true(mine[5] == 1.0f);
    assert_int_equal(cudag_exec_write(x, "x", zs, 8, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_rebind_buffer(x, "x", 0, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_read(x, "nope", zs, 8, &e), CUDAG_EUNKNOWN);
    /* Variables change only in graphs loaded from YAML. */
    assert_int_equal(cudag_exec_set_var(x, "N", 5, &e), CUDAG_ENOTSUP);
    tok(cudag_exec_launch(x, 1, &e), &e);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* ---- other ways to replay (replay.c) -------------------------------------- */

/* A fresh fake device and compute_graph() instantiated on it. */
static cudag_exec *start(cudag_graph **g)
{
    fake_reset();
    *g = compute_graph();
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(*g, NULL, &x, &e), &e);
    return x;
}

/* Destroys both; the exec must have released every driver object. */
static void finish(cudag_exec *x, cudag_graph *g)
{
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Sets z and v to zero, replays `how` once and checks the results. */
static void replay_check(cudag_exec *x, cudag_replay how, float a)
{
    static float xs[N], zs[N], vs[N], zero[N];
    cudag_error e;
    tok(cudag_exec_write(x, "z", zero, sizeof zero, &e), &e);
    tok(cudag_exec_write(x, "v", zero, sizeof zero, &e), &e);
    tok(cudag_exec_replay(x, how, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    read_f32(x, "x", xs);
    read_f32(x, "z", zs);
    read_f32(x, "v", vs);
    for (int i = 0; i < N; i++) {
        assert_true(zs[i] == a * xs[i] + xs[i]);
        assert_true(vs[i] == 1.5f);
    }
}

/* Every way runs the same work; the stream launches go in topological order
 * with the PDL attribute only on a kernel a programmatic edge ends at; the
 * full graph has every edge full; the serial one is a chain in topological
 * order keeping the programmatic link it has between consecutive nodes. */
static void replay_every_way_runs_the_same_work(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_exec *x = start(&g);
    cudag_error e;
    const cudag_graph *xg = x->g;
    for (int how = 0; how < CUDAG_REPLAY_COUNT_; how++) {
        F.nlaunched = 0;
        replay_check(x, (cudag_replay)how, 2.0f);
        bool stream = how == CUDAG_REPLAY_STREAM || how == CUDAG_REPLAY_STREAM_PDL;
        assert_int_equal(F.nlaunched, stream ? 2 : 0);
        if (stream) {
            assert_string_equal(F.launched[0], "scale_f32");
            assert_int_equal(F.launched_pdl[0], 0);
            assert_string_equal(F.launched[1], "add_f32");
            assert_int_equal(F.launched_pdl[1], how == CUDAG_REPLAY_STREAM_PDL);
        }
    }
    fake_graph *full = (fake_graph *)x->full.built.graph;
    fake_graph *serial = (fake_graph *)x->serial.built.graph;
    assert_non_null(full);
    assert_non_null(serial);
    assert_int_equal(full->nnodes, 4);
    assert_int_equal(full->nedges, 2);
    for (int i = 0; i < full->nedges; i++)
        assert_int_equal(full->edges[i].ed.type, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
    assert_int_equal(serial->nedges, 3);
    for (int i = 0; i < serial->nedges; i++) {
        uint32_t from = xg->topo.order[i], to = xg->topo.order[i + 1];
        assert_int_equal(serial->edges[i].from, (int)from);
        assert_int_equal(serial->edges[i].to, (int)to);
        bool pdl = from == (uint32_t)cudag_graph_find_node(xg, "scale") &&
                   to == (uint32_t)cudag_graph_find_node(xg, "add");
        assert_int_equal(serial->edges[i].ed.type,
                         pdl ? CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
                             : CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
    }
    /* Preparing again makes nothing new. */
    tok(cudag_exec_prepare(x, CUDAG_REPLAY_GRAPH_FULL, &e), &e);
    assert_ptr_equal((fake_graph *)x->full.built.graph, full);

    /* A change drops the other graphs; the next replay makes them again
     * from the exec as it is then. */
    cudag_arg a = cudag_arg_float(-4.0);
    tok(cudag_exec_set_arg(x, "scale", 2, &a, &e), &e);
    assert_null(x->full.gexec);
    assert_null(x->kinds);
    for (int how = 0; how < CUDAG_REPLAY_COUNT_; how++)
        replay_check(x, (cudag_replay)how, -4.0f);
    static float mine[N];
    tok(cudag_exec_rebind_buffer(x, "x", (uint64_t)(uintptr_t)mine, &e), &e);
    assert_null(x->serial.gexec);
    replay_check(x, CUDAG_REPLAY_GRAPH_SERIAL, -4.0f);
    assert_string_equal(cudag_exec_device_name(x), "Fake GPU");
    finish(x, g);
}

/* CUDAG_SERIALIZE builds the exec's own graph as the serial way builds its
 * variant: one chain in topological order, the programmatic link between
 * consecutive nodes kept (full with CUDAG_NO_PDL); it computes the same
 * and takes updates as the declared graph does. */
static void serialize_builds_the_own_graph_as_one_chain(void **state)
{
    (void)state;
    for (int nopdl = 0; nopdl < 2; nopdl++) {
        fake_reset();
        cudag_graph *g = compute_graph();
        cudag_exec_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.flags = CUDAG_SERIALIZE | (nopdl ? CUDAG_NO_PDL : 0);
        cudag_exec *x;
        cudag_error e;
        tok(cudag_instantiate(g, &o, &x, &e), &e);
        const cudag_graph *xg = x->g;
        fake_graph *own = (fake_graph *)x->built.graph;
        assert_int_equal(own->nnodes, 4);
        assert_int_equal(own->nedges, 3);
        for (int i = 0; i < own->nedges; i++) {
            uint32_t from = xg->topo.order[i], to = xg->topo.order[i + 1];
            assert_int_equal(own->edges[i].from, (int)from);
            assert_int_equal(own->edges[i].to, (int)to);
            bool pdl = !nopdl &&
                       from == (uint32_t)cudag_graph_find_node(xg, "scale") &&
                       to == (uint32_t)cudag_graph_find_node(xg, "add");
            assert_int_equal(own->edges[i].ed.type,
                             pdl ? CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
                                 : CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
        }
        replay_check(x, CUDAG_REPLAY_GRAPH, 2.0f);
        cudag_arg a = cudag_arg_float(-4.0);
        tok(cudag_exec_set_arg(x, "scale", 2, &a, &e), &e);
        replay_check(x, CUDAG_REPLAY_GRAPH, -4.0f);
        finish(x, g);
    }
}

/* Inside the timed loop only the replay's own driver calls and the events'
 * (the same calls `cudag bench` has always timed); gated, each replay is
 * queued behind the gate's host function, which holds the stream until the
 * replay and its second event are queued: the fake runs the host function
 * only when the stream is waited for, and the gate then finds itself open. */
static void timed_calls(bool gated)
{
    cudag_graph *g;
    cudag_exec *x = start(&g);
    cudag_error e;
    static const char *const stream[] = {
        "cuLaunchHostFunc", "cuEventRecord", "cuLaunchKernelEx",
        "cuLaunchKernelEx", "cuMemsetD32Async", "cuMemcpyDtoDAsync",
        "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime"};
    static const char *const graph[] = {
        "cuLaunchHostFunc", "cuEventRecord", "cuGraphLaunch",
        "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime"};
    for (int how = 0; how < CUDAG_REPLAY_COUNT_; how++) {
        tok(cudag_exec_prepare(x, (cudag_replay)how, &e), &e);
        bool by_stream = how <= CUDAG_REPLAY_STREAM_PDL;
        /* Ungated, the list without its first call. */
        const char *const *want = (by_stream ? stream : graph) + !gated;
        int nwant = (by_stream ? 9 : 6) - !gated;
        float ms[3] = {-1, -1, -1};
        long runs = F.host_fns;
        F.tracing = 1;
        F.ntrace = 0;
        tok(gated ? cudag_exec_time_gated(x, (cudag_replay)how, 1, 3, ms, &e)
                  : cudag_exec_time(x, (cudag_replay)how, 1, 3, ms, &e),
            &e);
        F.tracing = 0;
        assert_int_equal(F.host_fns - runs, gated ? 3 : 0);
        assert_int_equal(x->gate.gave_up, 0);
        /* Push, the exec's two events the first time, one warm-up replay
         * (never gated) and a wait; three timed replays; pop. */
        int at = 1 + (how == 0 ? 2 : 0) + (nwant - 4 - gated) + 1;
        assert_int_equal(F.ntrace, at + 3 * nwant + 1);
        assert_string_equal(F.trace[0], "cuCtxPushCurrent");
        assert_string_equal(F.trace[at - 1], "cuStreamSynchronize");
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < nwant; i++)
                assert_string_equal(F.trace[at + r * nwant + i], want[i]);
        assert_string_equal(F.trace[F.ntrace - 1], "cuCtxPopCurrent");
        for (int i = 0; i < 3; i++)
            assert_true(ms[i] == 0.01f);
    }
    finish(x, g);
}

static void replay_time_makes_only_the_replay_calls(void **state)
{
    (void)state;
    timed_calls(false);
}

static void replay_time_gated_queues_each_replay_behind_the_gate(void **state)
{
    (void)state;
    timed_calls(true);
}

/* Releasing the replays gives back every driver object the other ways
 * made (the exec's own graph stays and still replays), and the next use
 * makes them again. */
static void release_replays_gives_back_the_ways(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_exec *x = start(&g);
    cudag_error e;
    int live = fake_live();
    for (int how = 0; how < CUDAG_REPLAY_COUNT_; how++)
        tok(cudag_exec_prepare(x, (cudag_replay)how, &e), &e);
    assert_non_null(x->full.gexec);
    assert_non_null(x->serial.gexec);
    assert_true(fake_live() > live);
    tok(cudag_exec_release_replays(x, &e), &e);
    assert_int_equal(fake_live(), live);
    assert_null(x->full.gexec);
    assert_null(x->serial.gexec);
    assert_null(x->kinds);
    tok(cudag_exec_release_replays(x, &e), &e);
    replay_check(x, CUDAG_REPLAY_GRAPH, 2.0f);
    replay_check(x, CUDAG_REPLAY_GRAPH_FULL, 2.0f);
    assert_non_null(x->full.gexec);
    assert_int_equal(cudag_exec_release_replays(NULL, &e), CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_release_replays: exec is NULL");
    finish(x, g);
}

/* A gate that is reached before the host opens it holds the stream until
 * its limit, then lets the device go and the timing fails: here the fake
 * runs the host function at once, as a device would when the host's launch
 * call waits for it (a replay larger than the launch queue). */
static void replay_time_gated_fails_when_the_gate_gives_up(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_exec *x = start(&g);
    cudag_error e;
    x->gate.limit_ms = 30;
    F.host_fn_at_once = 1;
    float ms[2] = {-1, -1};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 0, 2, ms, &e),
                     CUDAG_ELIMIT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double held = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(held >= 30.0);
    assert_int_equal(F.host_fns, 1);
    assert_true(ms[0] == -1);
    assert_string_equal(
        e.message,
        "cudag_exec_time_gated: the host took over 30 ms to queue one replay "
        "of graph as declared (graph 't'), so the gate let the device "
        "start before it was queued: a replay larger than the driver's "
        "launch queue waits for the device; time it ungated "
        "(cudag_exec_time)");
    /* The exec is as it was: ungated timing and a later gate work. */
    F.host_fn_at_once = 0;
    tok(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 0, 2, ms, &e), &e);
    tok(cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 0, 2, ms, &e), &e);
    assert_true(ms[1] == 0.01f);
    finish(x, g);
}

/* What cudag_exec_time_back_to_back recorded, in order, while tracing; its
 * elapsed times say which recorded events they were asked about. */
static CUevent b2b_rec[8];
static int b2b_nrec;

static CUresult b2b_record(CUevent e, CUstream s)
{
    if (F.tracing && b2b_nrec < 8)
        b2b_rec[b2b_nrec++] = e;
    return fk_EventRecord(e, s);
}

/* i + 1 for the events recorded i-th and (i+1)-th, else -1. */
static CUresult b2b_elapsed(float *ms, CUevent a, CUevent b)
{
    CUresult r = fk_EventElapsedTime(ms, a, b);
    *ms = -1;
    for (int i = 0; i + 1 < b2b_nrec; i++)
        if (b2b_rec[i] == a && b2b_rec[i + 1] == b)
            *ms = (float)(i + 1);
    return r;
}

/* The timed loop makes exactly the calls `cudag run` made before this call
 * existed: a record before the first replay, then per replay the context
 * pushed, the replay, the context popped and a record; one wait after the
 * last, and replay i timed by the i-th and (i+1)-th events. */
static void replay_time_back_to_back_makes_the_calls_run_made(void **state)
{
    (void)state;
    fake_reset();
    static cudag__drv d;
    d = fake_table;
    d.cuEventRecord = b2b_record;
    d.cuEventElapsedTime = b2b_elapsed;
    cudag__driver_override(&d);
    cudag_graph *g = compute_graph();
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    static const char *const stream[] = {
        "cuCtxPushCurrent", "cuLaunchKernelEx", "cuLaunchKernelEx",
        "cuMemsetD32Async", "cuMemcpyDtoDAsync", "cuCtxPopCurrent",
        "cuEventRecord"};
    static const char *const graph[] = {"cuCtxPushCurrent", "cuGraphLaunch",
                                        "cuCtxPopCurrent", "cuEventRecord"};
    for (int how = 0; how < CUDAG_REPLAY_COUNT_; how++) {
        tok(cudag_exec_prepare(x, (cudag_replay)how, &e), &e);
        bool by_stream = how <= CUDAG_REPLAY_STREAM_PDL;
        const char *const *want = by_stream ? stream : graph;
        int nwant = by_stream ? 7 : 4, nlaunch = nwant - 3;
        float ms[3] = {-1, -1, -1};
        int live = fake_live();
        F.tracing = 1;
        F.ntrace = 0;
        b2b_nrec = 0;
        tok(cudag_exec_time_back_to_back(x, (cudag_replay)how, 1, 3, ms, &e),
            &e);
        F.tracing = 0;
        /* Push, one warm-up replay and a wait, four events made, the first
         * recorded. */
        assert_string_equal(F.trace[0], "cuCtxPushCurrent");
        assert_string_equal(F.trace[nlaunch + 1], "cuStreamSynchronize");
        for (int i = 0; i < 4; i++)
            assert_string_equal(F.trace[nlaunch + 2 + i], "cuEventCreate");
        int at = nlaunch + 7;
        assert_string_equal(F.trace[at - 1], "cuEventRecord");
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < nwant; i++)
                assert_string_equal(F.trace[at + r * nwant + i], want[i]);
        /* Then one wait, the three times, the four events gone, pop. */
        int end = at + 3 * nwant;
        assert_int_equal(F.ntrace, end + 9);
        assert_string_equal(F.trace[end], "cuStreamSynchronize");
        for (int i = 0; i < 3; i++)
            assert_string_equal(F.trace[end + 1 + i], "cuEventElapsedTime");
        for (int i = 0; i < 4; i++)
            assert_string_equal(F.trace[end + 4 + i], "cuEventDestroy");
        assert_string_equal(F.trace[end + 8], "cuCtxPopCurrent");
        assert_int_equal(b2b_nrec, 4);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < i; j++)
                assert_ptr_not_equal(b2b_rec[i], b2b_rec[j]);
        for (int i = 0; i < 3; i++)
            assert_true(ms[i] == (float)(i + 1));
        assert_int_equal(fake_live(), live);
    }
    /* No timed replay: the warm-up and its wait, no event. */
    F.tracing = 1;
    F.ntrace = 0;
    tok(cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 2, 0, NULL, &e),
        &e);
    F.tracing = 0;
    static const char *const warm[] = {"cuCtxPushCurrent", "cuGraphLaunch",
                                       "cuGraphLaunch", "cuStreamSynchronize",
                                       "cuCtxPopCurrent"};
    assert_int_equal(F.ntrace, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(F.trace[i], warm[i]);
    finish(x, g);
}

/* The device's compute capability, as the driver reported it. */
static void exec_reports_the_device_compute_capability(void **state)
{
    (void)state;
    fake_reset();
    F.cc_major = 8;
    F.cc_minor = 6;
    cudag_graph *g = compute_graph();
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    int major = -1, minor = -1;
    assert_int_equal(cudag_exec_device_cc(x, &major, &minor), CUDAG_OK);
    assert_int_equal(major, 8);
    assert_int_equal(minor, 6);
    major = -1;
    assert_int_equal(cudag_exec_device_cc(x, &major, NULL), CUDAG_OK);
    assert_int_equal(major, 8);
    assert_int_equal(cudag_exec_device_cc(x, NULL, NULL), CUDAG_OK);
    major = minor = -1;
    assert_int_equal(cudag_exec_device_cc(NULL, &major, &minor), CUDAG_EINVAL);
    assert_int_equal(major, -1);
    assert_int_equal(minor, -1);
    finish(x, g);
}

static void replay_refuses_bad_arguments(void **state)
{
    (void)state;
    assert_string_equal(cudag_replay_name(CUDAG_REPLAY_STREAM), "stream launches");
    assert_string_equal(cudag_replay_name(CUDAG_REPLAY_GRAPH_SERIAL),
                        "graph, branches serialized");
    assert_null(cudag_replay_name(CUDAG_REPLAY_COUNT_));
    assert_null(cudag_replay_name((cudag_replay)-1));
    cudag_error e;
    float ms[1];
    assert_int_equal(cudag_exec_replay(NULL, CUDAG_REPLAY_GRAPH, 1, &e), CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_replay: exec is NULL");
    assert_int_equal(cudag_exec_time(NULL, CUDAG_REPLAY_GRAPH, 0, 1, ms, &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_exec_prepare(NULL, CUDAG_REPLAY_GRAPH, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_time_gated(NULL, CUDAG_REPLAY_GRAPH, 0, 1, ms,
                                           &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time_gated: exec is NULL");
    assert_int_equal(cudag_exec_time_back_to_back(NULL, CUDAG_REPLAY_GRAPH, 0,
                                                  1, ms, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time_back_to_back: exec is NULL");
    assert_string_equal(cudag_exec_device_name(NULL), "");
    cudag_graph *g;
    cudag_exec *x = start(&g);
    assert_int_equal(cudag_exec_replay(x, CUDAG_REPLAY_COUNT_, 1, &e), CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_replay: 5 is not a cudag_replay");
    assert_int_equal(cudag_exec_prepare(x, (cudag_replay)-2, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 0, 1, NULL, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time: ms is NULL");
    tok(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 0, 0, NULL, &e), &e);
    assert_int_equal(cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 0, 1, NULL,
                                           &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time_gated: ms is NULL");
    assert_int_equal(cudag_exec_time_back_to_back(x, CUDAG_REPLAY_COUNT_, 0, 1,
                                                  ms, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time_back_to_back: 5 is not a "
                                   "cudag_replay");
    assert_int_equal(cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 0, 1,
                                                  NULL, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_time_back_to_back: ms is NULL");
    /* Balanced contexts after every refusal. */
    assert_int_equal(F.pushed, 0);
    finish(x, g);
}

/* The primary context outlives execs while the program retains it; each
 * retain is undone by one release. */
static void device_retain_keeps_the_context(void **state)
{
    (void)state;
    fake_reset();
    cudag_error e;
    tok(cudag_device_retain(0, &e), &e);
    tok(cudag_device_retain(0, &e), &e);
    assert_int_equal(F.retained, 2);
    cudag_graph *g = compute_graph();
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    assert_int_equal(F.retained, 3);
    cudag_exec_destroy(x);
    assert_int_equal(F.retained, 2);
    tok(cudag_device_release(0, &e), &e);
    tok(cudag_device_release(0, &e), &e);
    assert_int_equal(fake_live(), 0);
    assert_int_equal(cudag_device_retain(1, &e), CUDAG_EINVAL);
    assert_string_equal(e.message, "there is no CUDA device 1 (this machine has 1)");
    assert_int_equal(cudag_device_release(-1, &e), CUDAG_EINVAL);
    /* Each driver call failing in turn: reported by name, nothing kept. */
    for (long n = 1;; n++) {
        fake_fail_at(n);
        int rc = cudag_device_retain(0, &e);
        if (!F.failed) {
            tok(rc, &e);
            F.countdown = -1;
            tok(cudag_device_release(0, &e), &e);
            break;
        }
        assert_int_equal(rc, CUDAG_ECUDA);
        assert_non_null(strstr(e.message, F.failed));
        assert_int_equal(F.retained, 0);
    }
    F.countdown = -1;
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static const char yaml_vars[] =
    "cudag: 1\n"
    "vars: {A: 2, K: 2, C: 1000}\n"
    "modules: {m: k.fatbin}\n"
    "kernels:\n"
    "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true}\n"
    "buffers:\n"
    "  x: {type: f32, count: C, init: random}\n"
    "  y: {type: f32, count: C}\n"
    "nodes:\n"
    "  step[i in K]:\n"
    "    kernel: scale_f32\n"
    "    grid: cdiv(C, 256)\n"
    "    block: 256\n"
    "    args: [x, y, A, C]\n"
    "    after:\n"
    "      - step[i-1]: programmatic\n";

/* Loads yaml and instantiates it on a fresh fake driver into *g and *x. */
static void load_and_instantiate(const char *yaml, cudag_graph **g,
                                 cudag_exec **x)
{
    fake_reset();
    tdiag d;
    int lrc = tload(yaml, &d, g);
    if (lrc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(lrc, CUDAG_OK);
    cudag_error e;
    tok(cudag_instantiate(*g, NULL, x, &e), &e);
}

static void exec_set_var_updates_or_explains(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_exec *x;
    cudag_error e;
    load_and_instantiate(yaml_vars, &g, &x);
    static float xs[1000], ys[1000];
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_set_var(x, "A", 3, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    for (int i = 0; i < 1000; i++)
        assert_true(ys[i] == 3.0f * xs[i]);
    /* Twice in a row: the second starts from the first. */
    tok(cudag_exec_set_var(x, "A", -1, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    assert_true(ys[10] == -xs[10]);
    /* Another node: the topology changes, the exec stays as it was. */
    assert_int_equal(cudag_exec_set_var(x, "K", 3, &e), CUDAG_ECUDA);
    assert_non_null(strstr(e.message, "setting K=3 cannot update"));
    assert_non_null(strstr(e.message, "TOPOLOGY_CHANGED"));
    /* A buffer's size cannot change under an instantiated graph. */
    assert_int_equal(cudag_exec_set_var(x, "C", 2000, &e), CUDAG_ENOTSUP);
    assert_non_null(strstr(e.message, "changes buffer 'x' (1000 → 2000"));
    assert_int_equal(cudag_exec_set_var(x, "Q", 1, &e), CUDAG_EUNKNOWN);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    assert_true(ys[10] == -xs[10]);
    /* set_arg and rebind work on the graph set_var made. */
    cudag_arg a = cudag_arg_float(5);
    tok(cudag_exec_set_arg(x, "step[1]", 2, &a, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    assert_true(ys[10] == 5.0f * xs[10]);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Replays x's work once on its stream and asserts the kernels launched, in
 * order. */
static void assert_launches(cudag_exec *x, const char *k0, const char *k1,
                            const char *k2)
{
    cudag_error e;
    F.nlaunched = 0;
    tok(cudag_exec_replay(x, CUDAG_REPLAY_STREAM, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    assert_int_equal(F.nlaunched, 3);
    assert_string_equal(F.launched[0], k0);
    assert_string_equal(F.launched[1], k1);
    assert_string_equal(F.launched[2], k2);
}

/* A variable that changes a node's pick (`kernel: {pick, from}`) updates
 * the node to the other kernel where the instantiated graph loaded it (b
 * launches it), and is refused, the exec unchanged, where it did not. */
static void exec_set_var_changes_a_picked_kernel(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "vars: {P: 0, Q: 0, C: 256}\n"
        "modules: {m: k.fatbin}\n"
        "kernels:\n"
        "  copy_f32: {params: {x: ptr, y: ptr, n: i64}}\n"
        "  nowait_copy_f32: {params: {x: ptr, y: ptr, n: i64}}\n"
        "  ptx80_copy_f32: {params: {x: ptr, y: ptr, n: i64}}\n"
        "buffers:\n"
        "  x: {type: f32, count: C, init: random}\n"
        "  y: {type: f32, count: C}\n"
        "  z: {type: f32, count: C}\n"
        "  w: {type: f32, count: C}\n"
        "nodes:\n"
        "  a: {kernel: {pick: P, from: [copy_f32, nowait_copy_f32]},\n"
        "      grid: 1, block: 256, args: [x, y, C]}\n"
        "  b: {kernel: nowait_copy_f32, grid: 1, block: 256, args: [x, z, C],\n"
        "      after: [a]}\n"
        "  c: {kernel: {pick: Q, from: [copy_f32, ptx80_copy_f32]},\n"
        "      grid: 1, block: 256, args: [x, w, C], after: [b]}\n";
    cudag_graph *g;
    cudag_exec *x;
    cudag_error e;
    load_and_instantiate(yaml, &g, &x);
    assert_launches(x, "copy_f32", "nowait_copy_f32", "copy_f32");
    tok(cudag_exec_set_var(x, "P", 1, &e), &e);
    assert_launches(x, "nowait_copy_f32", "nowait_copy_f32", "copy_f32");
    static float xs[256], ys[256];
    tok(cudag_exec_write(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    assert_memory_equal(xs, ys, sizeof xs);
    /* ptx80_copy_f32 was never loaded. */
    assert_int_equal(cudag_exec_set_var(x, "Q", 1, &e), CUDAG_ENOTSUP);
    assert_string_equal(e.message,
                        "setting Q=1 makes node 'c' launch kernel "
                        "'ptx80_copy_f32', which the instantiated graph does "
                        "not use; instantiate the graph again");
    assert_int_equal(e.line, 18);
    assert_int_equal(cudag_exec_set_var(x, "P", 2, &e), CUDAG_ERANGE);
    assert_string_equal(e.message,
                        "pick 2 is outside the 2 kernels of 'from' (0 to 1)");
    assert_launches(x, "nowait_copy_f32", "nowait_copy_f32", "copy_f32");
    tok(cudag_exec_set_var(x, "P", 0, &e), &e);
    assert_launches(x, "copy_f32", "nowait_copy_f32", "copy_f32");
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* An f32 argument written as an expression is computed in floating point
 * (E/10 with E = 5 is 0.5, not 0), and a floating-point variable changes
 * every argument made from it with one call. */
static void exec_float_arguments_and_variables(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "vars: {E: 5, C: 1000, eps: 0.25}\n"
        "modules: {m: k.fatbin}\n"
        "kernels:\n"
        "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true}\n"
        "buffers:\n"
        "  x: {type: f32, count: C, init: random}\n"
        "  y: {type: f32, count: C}\n"
        "  z: {type: f32, count: C}\n"
        "nodes:\n"
        "  tenth: {kernel: scale_f32, grid: 4, block: 256, args: [x, y, E/10, C]}\n"
        "  twice: {kernel: scale_f32, grid: 4, block: 256, args: [x, z, eps * 2, C]}\n";
    cudag_graph *g;
    cudag_exec *x;
    cudag_error e;
    load_and_instantiate(yaml, &g, &x);
    static float xs[1000], ys[1000], zs[1000];
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_read(x, "z", zs, sizeof zs, &e), &e);
    for (int i = 0; i < 1000; i++) {
        assert_true(ys[i] == 0.5f * xs[i]);
        assert_true(zs[i] == 0.5f * xs[i]);
    }
    /* One call changes eps, and with it every argument made from it. */
    tok(cudag_exec_set_var_float(x, "eps", 1.5, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "z", zs, sizeof zs, &e), &e);
    for (int i = 0; i < 1000; i++)
        assert_true(zs[i] == 3.0f * xs[i]);
    /* An integer value is taken as a double by a floating-point variable. */
    tok(cudag_exec_set_var(x, "eps", 2, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "z", zs, sizeof zs, &e), &e);
    assert_true(zs[10] == 4.0f * xs[10]);
    /* An integer variable refuses a floating-point value; nothing changes. */
    assert_int_equal(cudag_exec_set_var_float(x, "E", 7.5, &e), CUDAG_ETYPE);
    assert_string_equal(e.message, "'E' is an integer variable, and 7.5 is "
                                   "not an integer");
    assert_int_equal(cudag_exec_set_var_float(x, "eps", HUGE_VAL, &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_exec_set_var_float(x, "nope", 1.0, &e),
                     CUDAG_EUNKNOWN);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_read(x, "z", zs, sizeof zs, &e), &e);
    assert_true(ys[10] == 0.5f * xs[10] && zs[10] == 4.0f * xs[10]);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* ---- fault injection ------------------------------------------------------------- */

/* Everything an exec does, from instantiation to destruction; returns the
 * number of counted driver calls made before destruction. */
static long scenario(cudag_graph *g, int *first_rc, const char **failed_call,
                     char *msg, size_t msgcap)
{
    cudag_exec *x = NULL;
    cudag_error e;
    static float buf[N], other[N];
    cudag_arg a = cudag_arg_float(3);
    int rc[10], n = 0;
    rc[n++] = cudag_instantiate(g, NULL, &x, &e);
    if (rc[0] != CUDAG_OK)
        assert_null(x);
    *first_rc = CUDAG_OK;
    *failed_call = NULL;
    if (rc[0] != CUDAG_OK) {
        *first_rc = rc[0];
        snprintf(msg, msgcap, "%s", e.message);
    }
    if (x) {
        float ms[2];
        for (int s = 0; s < 15; s++) {
            int r = CUDAG_OK;
            switch (s) {
            case 0: r = cudag_exec_launch(x, 2, &e); break;
            case 1: r = cudag_exec_sync(x, &e); break;
            case 2: r = cudag_exec_set_arg(x, "scale", 2, &a, &e); break;
            case 3:
                r = cudag_exec_rebind_buffer(x, "y", (uint64_t)(uintptr_t)other,
                                             &e);
                break;
            case 4: r = cudag_exec_write(x, "x", buf, sizeof buf, &e); break;
            case 5: r = cudag_exec_read(x, "z", buf, sizeof buf, &e); break;
            case 6:
                r = cudag_exec_rebind_buffer(x, "w", (uint64_t)(uintptr_t)buf,
                                             &e);
                break;
            case 7: r = cudag_exec_prepare(x, CUDAG_REPLAY_GRAPH_FULL, &e); break;
            case 8:
                r = cudag_exec_time(x, CUDAG_REPLAY_GRAPH_SERIAL, 1, 2, ms, &e);
                break;
            case 9: r = cudag_exec_replay(x, CUDAG_REPLAY_STREAM_PDL, 2, &e); break;
            case 10: r = cudag_exec_time(x, CUDAG_REPLAY_STREAM, 1, 2, ms, &e); break;
            case 11:
                r = cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 1, 2,
                                                 ms, &e);
                break;
            case 12:
                r = cudag_exec_time_back_to_back(x, CUDAG_REPLAY_STREAM_PDL, 1,
                                                 2, ms, &e);
                break;
            case 13:
                r = cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 1, 2, ms, &e);
                break;
            case 14:
                r = cudag_exec_time_gated(x, CUDAG_REPLAY_STREAM_PDL, 1, 2, ms,
                                          &e);
                break;
            }
            if (r != CUDAG_OK && *first_rc == CUDAG_OK) {
                *first_rc = r;
                snprintf(msg, msgcap, "%s", e.message);
            }
        }
    }
    long before = F.calls;
    *failed_call = F.failed;
    cudag_exec_destroy(x);
    return before;
}

/* Instantiates the graph make() loads with each driver call in turn made
 * to fail, until one instantiation makes no call that fails: each failure
 * is reported with the call's name, and nothing is left behind. */
static void every_call_fails(cudag_graph *(*make)(void))
{
    cudag_error e;
    cudag_exec *x;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = make();
        fake_fail_at(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        bool hit = F.failed != NULL;
        if (rc == CUDAG_OK)
            cudag_exec_destroy(x);
        else
            assert_non_null(strstr(e.message, F.failed));
        /* A failed pop leaves the context pushed (the driver's state). */
        int live = fake_live();
        if (hit && strcmp(F.failed, "cuCtxPopCurrent") == 0)
            live -= F.pushed;
        if (live != 0)
            print_error("call %ld (%s) leaked %d\n", n, F.failed, live);
        assert_int_equal(live, 0);
        cudag_graph_destroy(g);
        if (!hit)
            break;
        assert_true(n < 10000);
    }
    fake_reset();
}

/* Two child-graph nodes from one file (tests/data/inc/child_scale.yaml),
 * each with its own variables: each scales its half of x into y by its own
 * factor, as child graphs of the built graph. */
static const char yaml_child[] =
    "cudag: 1\n"
    "modules: {m: k.fatbin}\n"
    "kernels:\n"
    "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}}\n"
    "vars: {H: 256}\n"
    "buffers:\n"
    "  x: {type: f32, count: 2*H, init: random}\n"
    "  y: {type: f32, count: 2*H}\n"
    "nodes:\n"
    "  zero: {memset: y, value: 0}\n"
    "  layer[i in 2]:\n"
    "    graph: child_scale.yaml\n"
    "    vars: {OFF: i*H, N: H, A: i + 2}\n"
    "    after: [zero]\n";

static cudag_graph *child_graph(void)
{
    cudag_graph *g = NULL;
    cudag_error e;
    cudag_options o = topts(NULL, NULL);
    tok(tload_opts(yaml_child, tsrc("tests/data/inc/parent.yaml"), &o, &g, &e),
        &e);
    return g;
}

static void exec_runs_child_graphs_from_files(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = child_graph();
    cudag_error e;
    cudag_plan_info pi;
    char *text;
    tok(cudag_plan(g, &pi, &text, &e), &e);
    assert_int_equal(pi.child_nodes, 2);
    assert_int_equal(pi.nodes, 5);
    tassert_contains(text, "runs once, as a child graph, from "
                           "'child_scale.yaml'", __FILE__, __LINE__);
    tassert_contains(text, "layer[1].s", __FILE__, __LINE__);
    cudag_free(text);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    static float xs[512], ys[512];
    for (int i = 0; i < 512; i++)
        ys[i] = -1.0f;
    tok(cudag_exec_write(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    for (int i = 0; i < 512; i++)
        assert_true(ys[i] == (i < 256 ? 2.0f : 3.0f) * xs[i]);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
    /* Every driver call the child nodes add can fail. */
    every_call_fails(child_graph);
}

/* A child file is read once, when the graph loads: set_var lowers the file
 * as loaded, after it was changed on disk and after it was removed.  y is
 * A·x in both copies' halves (A = S + i), as child_scale.yaml has it. */
static void set_var_lowers_child_files_as_loaded(void **state)
{
    (void)state;
    fake_reset();
    char dir[4096], text[8192];
    snprintf(dir, sizeof dir, "%s", tmkdir("child"));
    twrite(dir, "layer.yaml",
           "vars: {OFF: 0, N: 256, A: 1}\n"
           "nodes:\n"
           "  s: {kernel: scale_f32, grid: 1, block: N,"
           " args: [x + OFF, y + OFF, A, N]}\n");
    snprintf(text, sizeof text,
             "cudag: 1\n"
             "modules: {m: k.fatbin}\n"
             "kernels:\n"
             "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}}\n"
             "vars: {H: 256, S: 2}\n"
             "buffers:\n"
             "  x: {type: f32, count: 2*H, init: random}\n"
             "  y: {type: f32, count: 2*H}\n"
             "nodes:\n"
             "  layer[i in 2]:\n"
             "    graph: %s/layer.yaml\n"
             "    vars: {OFF: i*H, N: H, A: S + i}\n", dir);
    cudag_graph *g = NULL;
    cudag_error e;
    cudag_options o = topts(NULL, NULL);
    tok(tload_opts(text, tsrc("tests/data/inc/parent.yaml"), &o, &g, &e), &e);
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    static float xs[512], ys[512];
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    /* The file changed (a factor of 100), then gone: S + i all the same. */
    twrite(dir, "layer.yaml",
           "nodes:\n"
           "  s: {kernel: scale_f32, grid: 1, block: 256,"
           " args: [x, y, 100.0, 256]}\n");
    for (int round = 0; round < 2; round++) {
        const int sv = round ? -3 : 5;
        tok(cudag_exec_set_var(x, "S", sv, &e), &e);
        for (int i = 0; i < 512; i++)
            ys[i] = NAN;
        tok(cudag_exec_write(x, "y", ys, sizeof ys, &e), &e);
        tok(cudag_exec_launch(x, 1, &e), &e);
        tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
        for (int i = 0; i < 512; i++)
            assert_true(ys[i] == (float)(sv + i / 256) * xs[i]);
        assert_int_equal(trm_tree(dir), round ? -1 : 0);
    }
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Child graphs that a programmatic edge reaches are built inline
 * (kinds/child.c): three copies of tests/data/inc/child_pdl_fork.yaml (two
 * chains of two kernels, s -> t and u -> v, joined by programmatic edges),
 * each after a kernel by a programmatic edge and after a memset by a full
 * one, chained by programmatic edges, a kernel after the last.  Every edge
 * joins each of a copy's first kernels (s, u) or each of its last (t, v),
 * with the kind written. */
static const char yaml_inline[] =
    "cudag: 1\n"
    "modules: {m: k.fatbin}\n"
    "kernels:\n"
    "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true}\n"
    "vars: {H: 256}\n"
    "buffers:\n"
    "  x: {type: f32, count: 3*H, init: random}\n"
    "  w: {type: f32, count: 3*H}\n"
    "  y: {type: f32, count: 3*H}\n"
    "nodes:\n"
    "  head: {kernel: scale_f32, grid: 1, block: H, args: [x, w, 1.0, 3*H]}\n"
    "  zero: {memset: y, value: 0}\n"
    "  layer[i in 3]:\n"
    "    graph: child_pdl_fork.yaml\n"
    "    vars: {OFF: i*H, N: H, A: i + 2}\n"
    "    after: [head: programmatic, zero, \"layer[i-1]\": programmatic]\n"
    "  tail:\n"
    "    kernel: scale_f32\n"
    "    grid: 1\n"
    "    block: H\n"
    "    args: [y, y, 0.5, 3*H]\n"
    "    after: [\"layer[2]\": programmatic]\n";

static cudag_graph *inline_graph(void)
{
    cudag_graph *g = NULL;
    cudag_error e;
    cudag_options o = topts(NULL, NULL);
    tok(tload_opts(yaml_inline, tsrc("tests/data/inc/parent.yaml"), &o, &g, &e),
        &e);
    return g;
}

/* The index of the fake graph's kernel node that reads buffer `in` from
 * element `i` and writes `out` from element `o`, n elements; -1: none. */
static int kernel_node(const fake_graph *fg, const cudag_exec *x,
                       const char *in, int i, const char *out, int o, int n)
{
    const cudag_graph *g = x->g;
    CUdeviceptr pi = x->bufs[cudag_graph_find_buffer(g, in)] + (CUdeviceptr)i * 4;
    CUdeviceptr po = x->bufs[cudag_graph_find_buffer(g, out)] + (CUdeviceptr)o * 4;
    for (int k = 0; k < fg->nnodes; k++)
        if (fg->nodes[k]->type == CU_GRAPH_NODE_TYPE_KERNEL &&
            (CUdeviceptr)fg->nodes[k]->vals[0] == pi &&
            (CUdeviceptr)fg->nodes[k]->vals[1] == po && fg->nodes[k]->vals[3] == (uint64_t)n)
            return k;
    return -1;
}

static int edge_type(const fake_graph *fg, int from, int to)
{
    for (int i = 0; i < fg->nedges; i++)
        if (fg->edges[i].from == from && fg->edges[i].to == to)
            return (int)fg->edges[i].ed.type;
    return -1;
}

static void exec_builds_child_graphs_inline_for_programmatic_edges(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = inline_graph();
    cudag_error e;
    char *text;
    cudag_plan_info pi;
    tok(cudag_plan(g, &pi, &text, &e), &e);
    assert_int_equal(pi.child_nodes, 3);
    tassert_contains(text, "body layer[1]: runs once, from 'child_pdl_fork.yaml', "
                           "its nodes built into the graph that holds it",
                     __FILE__, __LINE__);
    cudag_free(text);
    tdiag d;
    cudag_exec_options xo = xopts(&d, 0);
    cudag_exec *x;
    tok(cudag_instantiate(g, &xo, &x, &e), &e);
    assert_int_equal(d.nwarn, 0);
    const fake_graph *fg = F.last_graph;
    /* head, zero, tail and the copies' twelve kernels, in the graph itself */
    assert_int_equal(fg->nnodes, 15);
    for (int i = 0; i < fg->nnodes; i++)
        assert_int_not_equal(fg->nodes[i]->type, CU_GRAPH_NODE_TYPE_GRAPH);
    const int P = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, FULL = 0;
    const int H = 256, Q = H / 2;
    int head = kernel_node(fg, x, "x", 0, "w", 0, 3 * H), zero = -1;
    int tail = kernel_node(fg, x, "y", 0, "y", 0, 3 * H);
    for (int i = 0; i < fg->nnodes; i++)
        if (fg->nodes[i]->type == CU_GRAPH_NODE_TYPE_MEMSET)
            zero = i;
    assert_true(head >= 0 && zero >= 0 && tail >= 0);
    /* first[i][h], last[i][h]: copy i's chain h (s -> t, u -> v) */
    int first[3][2], last[3][2], edges = 0;
    for (int i = 0; i < 3; i++)
        for (int h = 0; h < 2; h++) {
            first[i][h] = kernel_node(fg, x, "x", i * H + h * Q, "y", i * H + h * Q, Q);
            last[i][h] = kernel_node(fg, x, "y", i * H + h * Q, "y", i * H + h * Q, Q);
            assert_true(first[i][h] >= 0 && last[i][h] >= 0);
        }
    for (int i = 0; i < 3; i++)
        for (int h = 0; h < 2; h++) {
            assert_int_equal(edge_type(fg, head, first[i][h]), P);
            assert_int_equal(edge_type(fg, zero, first[i][h]), FULL);
            assert_int_equal(edge_type(fg, first[i][h], last[i][h]), P);
            assert_int_equal(edge_type(fg, first[i][h], last[i][1 - h]), -1);
            edges += 3;
            for (int k = 0; k < 2 && i > 0; k++, edges++)
                assert_int_equal(edge_type(fg, last[i - 1][k], first[i][h]), P);
            if (i == 2) {
                assert_int_equal(edge_type(fg, last[i][h], tail), P);
                edges++;
            }
        }
    assert_int_equal(fg->nedges, edges);
    cudag_exec_stats st;
    tok(cudag_exec_get_stats(x, &st), &e);
    assert_int_equal(st.downgraded_edges, 0);
    /* and the work: y = 0.5 (i + 2)^2 x over copy i's third */
    static float xs[768], ys[768];
    for (int i = 0; i < 768; i++)
        ys[i] = -1.0f;
    tok(cudag_exec_write(x, "y", ys, sizeof ys, &e), &e);
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    for (int i = 0; i < 768; i++) {
        const float a = (float)(i / H + 2);
        assert_true(ys[i] == 0.5f * (a * (a * xs[i])));
    }
    /* Built without PDL, the same nodes, every edge full. */
    cudag_exec_destroy(x);
    xo = xopts(&d, CUDAG_NO_PDL);
    tok(cudag_instantiate(g, &xo, &x, &e), &e);
    fg = F.last_graph;
    assert_int_equal(fg->nnodes, 15);
    assert_int_equal(fg->nedges, edges);
    for (int i = 0; i < fg->nedges; i++)
        assert_int_equal(fg->edges[i].ed.type, FULL);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
    /* Every driver call the inline build makes can fail. */
    every_call_fails(inline_graph);
}

/* A child graph built inline inside one (tests/data/inc/child_nested.yaml:
 * its first node is child_pdl_fork.yaml, which a programmatic edge leaves),
 * in a while body: the body's programmatic edges reach the innermost
 * kernels, and all of them are the body graph's own. */
static const char yaml_nested_inline[] =
    "cudag: 1\n"
    "modules: {m: k.fatbin}\n"
    "kernels:\n"
    "  scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true}\n"
    "  cond_count_i32: {params: {counter: ptr, k: i64, c: cond}, pdl: true}\n"
    "buffers:\n"
    "  it: {type: i32, count: 1}\n"
    "  x: {type: f32, count: 256, init: random}\n"
    "  w: {type: f32, count: 256}\n"
    "  y: {type: f32, count: 256}\n"
    "conditions:\n"
    "  more: {default: 1}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  loop:\n"
    "    while: more\n"
    "    after: reset\n"
    "    body:\n"
    "      head: {kernel: scale_f32, grid: 1, block: 256, args: [x, w, 1.0, 256]}\n"
    "      n:\n"
    "        graph: child_nested.yaml\n"
    "        vars: {OFF: 0, N: 256, A: 3}\n"
    "        after: [head: programmatic]\n"
    "      next:\n"
    "        kernel: cond_count_i32\n"
    "        grid: 1\n"
    "        block: 32\n"
    "        args: [it, 3, more]\n"
    "        after: [n: programmatic]\n";

static cudag_graph *nested_inline_graph(void)
{
    cudag_graph *g = NULL;
    cudag_error e;
    cudag_options o = topts(NULL, NULL);
    tok(tload_opts(yaml_nested_inline, tsrc("tests/data/inc/parent.yaml"), &o,
                   &g, &e),
        &e);
    return g;
}

static void exec_builds_nested_inline_children_in_a_body(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = nested_inline_graph();
    cudag_error e;
    tdiag d;
    cudag_exec_options xo = xopts(&d, 0);
    cudag_exec *x;
    tok(cudag_instantiate(g, &xo, &x, &e), &e);
    assert_int_equal(d.nwarn, 0);
    const fake_graph *top = F.last_graph;
    const fake_graph *body = NULL;
    for (int i = 0; i < top->nnodes; i++)
        if (top->nodes[i]->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
            body = (const fake_graph *)top->nodes[i]->body[0];
    assert_non_null(body);
    /* head, the fork's four kernels, out, next */
    assert_int_equal(body->nnodes, 7);
    const int P = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, Q = 128;
    int first[2], last[2];
    const int head = kernel_node(body, x, "x", 0, "w", 0, 256);
    const int out = kernel_node(body, x, "y", 0, "y", 0, 256);
    int next = -1;
    for (int i = 0; i < body->nnodes; i++) {
        assert_int_equal(body->nodes[i]->type, CU_GRAPH_NODE_TYPE_KERNEL);
        if (strcmp(body->nodes[i]->k->name, "cond_count_i32") == 0)
            next = i;
    }
    assert_true(head >= 0 && out >= 0 && next >= 0);
    for (int h = 0; h < 2; h++) {
        first[h] = kernel_node(body, x, "x", h * Q, "y", h * Q, Q);
        last[h] = kernel_node(body, x, "y", h * Q, "y", h * Q, Q);
        assert_true(first[h] >= 0 && last[h] >= 0);
        assert_int_equal(edge_type(body, head, first[h]), P);
        assert_int_equal(edge_type(body, first[h], last[h]), P);
        assert_int_equal(edge_type(body, last[h], out), P);
    }
    assert_int_equal(edge_type(body, out, next), P);
    assert_int_equal(body->nedges, 7);
    static float xs[256], ys[256];
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_read(x, "x", xs, sizeof xs, &e), &e);
    tok(cudag_exec_read(x, "y", ys, sizeof ys, &e), &e);
    int it;
    tok(cudag_exec_read(x, "it", &it, sizeof it, &e), &e);
    assert_int_equal(it, 3);
    for (int i = 0; i < 256; i++)
        assert_true(ys[i] == 0.5f * (3.0f * (3.0f * xs[i])));
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
    every_call_fails(nested_inline_graph);
}

static void exec_survives_every_driver_failure(void **state)
{
    (void)state;
    int failures = 0;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = compute_graph();
        fake_fail_at(n);
        int rc;
        const char *call;
        char msg[1024] = "";
        long before = scenario(g, &rc, &call, msg, sizeof msg);
        bool hit = F.failed != NULL;
        if (hit && n <= before) {
            /* The failure was in the scenario: it was reported with the
             * call's name, unless the library rightly shrugged it off (a
             * context pop, the parameter-count probe). */
            if (rc != CUDAG_OK) {
                failures++;
                if (!strstr(msg, call))
                    print_error("call %ld (%s): message '%s'\n", n, call, msg);
                assert_non_null(strstr(msg, call));
                assert_non_null(strstr(msg, "CUDA_ERROR_UNKNOWN"));
            }
            /* A failed pop leaves the context pushed: the driver's state,
             * which the library cannot undo. */
            int live = fake_live();
            if (strcmp(call, "cuCtxPopCurrent") == 0)
                live -= F.pushed;
            if (live != 0)
                print_error("call %ld (%s) leaked %d objects\n", n, call,
                            live);
            assert_int_equal(live, 0);
        }
        cudag_graph_destroy(g);
        if (!hit)
            break;
        assert_true(n < 100000);
    }
    /* Every stage has calls that can fail. */
    print_message("# %d failing driver calls, each reported and cleaned up\n",
                  failures);
    assert_true(failures > 30);
    fake_reset();
}

static void exec_survives_every_allocation_failure(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = compute_graph();
        cudag_exec *x = NULL;
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        cudag_arg a = cudag_arg_float(3);
        int rc2 = x ? cudag_exec_set_arg(x, "scale", 2, &a, &e) : CUDAG_OK;
        int rc3 = x ? cudag_exec_prepare(x, CUDAG_REPLAY_STREAM_PDL, &e) : CUDAG_OK;
        int rc4 = x ? cudag_exec_prepare(x, CUDAG_REPLAY_GRAPH_SERIAL, &e) : CUDAG_OK;
        float ms[2];
        int rc5 = x ? cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 1, 2,
                                                   ms, &e)
                    : CUDAG_OK;
        long made = cudag__alloc_fail_after(-1);
        if (rc != CUDAG_OK) {
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_null(x);
        }
        assert_int_equal(rc2, CUDAG_OK);
        assert_true(rc3 == CUDAG_OK || rc3 == CUDAG_ENOMEM);
        assert_true(rc4 == CUDAG_OK || rc4 == CUDAG_ENOMEM);
        assert_true(rc5 == CUDAG_OK || rc5 == CUDAG_ENOMEM);
        /* What failed is made again on the next use. */
        if (x) {
            tok(cudag_exec_replay(x, CUDAG_REPLAY_GRAPH_SERIAL, 1, &e), &e);
            assert_non_null(x->serial.gexec);
        }
        cudag_exec_destroy(x);
        assert_int_equal(fake_live(), 0);
        cudag_graph_destroy(g);
        if (made < n)
            break;
    }
    fake_reset();
}

/* The inline build's own allocations (an edge joining several first or
 * last kernels) fail cleanly too: at instantiate and building the serial
 * variant, where the inline copies' edges join the chain. */
static void exec_inline_survives_every_allocation_failure(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        fake_reset();
        cudag_graph *g = inline_graph();
        cudag_exec *x = NULL;
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        int rc2 = x ? cudag_exec_prepare(x, CUDAG_REPLAY_GRAPH_SERIAL, &e) : CUDAG_OK;
        long made = cudag__alloc_fail_after(-1);
        if (rc != CUDAG_OK) {
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_null(x);
        }
        assert_true(rc2 == CUDAG_OK || rc2 == CUDAG_ENOMEM);
        if (x) {
            tok(cudag_exec_replay(x, CUDAG_REPLAY_GRAPH_SERIAL, 1, &e), &e);
            tok(cudag_exec_launch(x, 1, &e), &e);
        }
        cudag_exec_destroy(x);
        assert_int_equal(fake_live(), 0);
        cudag_graph_destroy(g);
        if (made < n)
            break;
    }
    fake_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_value_bits_round_to_nearest_even),
        cmocka_unit_test(build_small_floats_match_the_definition),
        cmocka_unit_test(build_pack_arg_checks_like_the_checker),
        cmocka_unit_test(build_adds_edges_sorted_with_edge_data),
        cmocka_unit_test(build_downgrades_unsafe_programmatic_edges),
        cmocka_unit_test(build_memset_and_memcpy_parameters),
        cmocka_unit_test(exec_initialises_buffers_as_declared),
        cmocka_unit_test(exec_fills_large_random_buffers_exactly),
        cmocka_unit_test(exec_checks_free_memory_before_allocating),
        cmocka_unit_test(exec_runs_child_graphs_from_files),
        cmocka_unit_test(set_var_lowers_child_files_as_loaded),
        cmocka_unit_test(exec_builds_child_graphs_inline_for_programmatic_edges),
        cmocka_unit_test(exec_builds_nested_inline_children_in_a_body),
        cmocka_unit_test(exec_checks_code_against_signatures),
        cmocka_unit_test(exec_raises_shared_memory_and_refuses_too_much),
        cmocka_unit_test(exec_sets_cluster_and_priority),
        cmocka_unit_test(exec_instantiate_failure_names_the_node),
        cmocka_unit_test(device_launch_reaches_every_instantiation),
        cmocka_unit_test(exec_refuses_unchecked_graphs_and_bad_devices),
        cmocka_unit_test(exec_replays_and_updates_arguments_and_buffers),
        cmocka_unit_test(exec_set_var_updates_or_explains),
        cmocka_unit_test(exec_set_var_changes_a_picked_kernel),
        cmocka_unit_test(replay_every_way_runs_the_same_work),
        cmocka_unit_test(serialize_builds_the_own_graph_as_one_chain),
        cmocka_unit_test(replay_time_makes_only_the_replay_calls),
        cmocka_unit_test(replay_time_gated_queues_each_replay_behind_the_gate),
        cmocka_unit_test(release_replays_gives_back_the_ways),
        cmocka_unit_test(replay_time_gated_fails_when_the_gate_gives_up),
        cmocka_unit_test(replay_time_back_to_back_makes_the_calls_run_made),
        cmocka_unit_test(exec_reports_the_device_compute_capability),
        cmocka_unit_test(replay_refuses_bad_arguments),
        cmocka_unit_test(device_retain_keeps_the_context),
        cmocka_unit_test(exec_float_arguments_and_variables),
        cmocka_unit_test(exec_survives_every_driver_failure),
        cmocka_unit_test(exec_survives_every_allocation_failure),
        cmocka_unit_test(exec_inline_survives_every_allocation_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fake_finish();
    return rc;
}
