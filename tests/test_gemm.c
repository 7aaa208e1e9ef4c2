/* test_gemm.c — gemm nodes on the CPU: the YAML form and the builder give
 * one IR; over the fake driver and the fake cuBLASLt (which computes what
 * the descriptors say, column-major) a gemm node matches a row-major
 * reference on fresh random data, for every operand form (offsets, leading
 * dimensions, transposes, strided batches, c, bias, epilogues, f32 and
 * bf16); programmatic edges become full ones with a warning; rebinding a
 * buffer records the multiply again; a changed variable updates it; and
 * every driver or cuBLASLt call and every allocation may fail without a
 * leak. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "lib/cublaslt.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_cublaslt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static cudag_graph *load(const char *yaml, tdiag *td)
{
    cudag_graph *g = NULL;
    cudag_error e;
    cudag_options o = topts(td, NULL);
    tok(tload_opts(yaml, "g.yaml", &o, &g, &e), &e);
    return g;
}

static cudag_exec *instantiate(const cudag_graph *g, tdiag *td)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    if (td) {
        o.diag = tdiag_fn;
        o.diag_user = td;
    }
    cudag_exec *x = NULL;
    cudag_error e;
    tok(cudag_instantiate(g, &o, &x, &e), &e);
    return x;
}

/* ---- a row-major reference ------------------------------------------------ */

/* The element type's values as floats. */
static void to_float(cudag_type t, const void *raw, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = gr_load(t, raw, (int64_t)i);
}

/* A buffer's contents as floats (malloc'd). */
static float *read_floats(cudag_exec *x, const char *name, size_t *count)
{
    const cudag_graph *g = x->g;
    uint32_t b = cudag__find_buffer(g, name);
    assert_int_not_equal(b, CUDAG__NONE);
    size_t n = g->buffers[b].count, es = cudag_type_size(g->buffers[b].type);
    void *raw = malloc(n * es);
    float *f = malloc(n * sizeof *f);
    assert_non_null(raw);
    assert_non_null(f);
    cudag_error e;
    tok(cudag_exec_read(x, name, raw, n * es, &e), &e);
    to_float(g->buffers[b].type, raw, n, f);
    free(raw);
    if (count)
        *count = n;
    return f;
}

/* Fills a buffer with fresh random values in [-1, 1) (seeded from the
 * clock: the seed is printed, so a failure can be replayed). */
static void fill_random(cudag_exec *x, const char *name, uint64_t *seed)
{
    const cudag_graph *g = x->g;
    uint32_t b = cudag__find_buffer(g, name);
    size_t n = g->buffers[b].count;
    cudag_type t = g->buffers[b].type;
    size_t es = cudag_type_size(t);
    unsigned char *raw = malloc(n * es);
    assert_non_null(raw);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = cudag__value_bits(t, trand(seed, -1, 1));
        memcpy(raw + i * es, &bits, es);
    }
    cudag_error e;
    tok(cudag_exec_write(x, name, raw, n * es, &e), &e);
    free(raw);
}

/* Fresh fakes, graph g loaded from yaml and instantiated, and the buffers
 * named in fill (NULL-terminated) filled with fresh random values. */
static cudag_exec *start(const char *yaml, const char *const *fill,
                         cudag_graph **g, uint64_t *seed)
{
    fake_lt_reset();
    *seed = tseed();
    *g = load(yaml, NULL);
    cudag_exec *x = instantiate(*g, NULL);
    for (; *fill; fill++)
        fill_random(x, *fill, seed);
    return x;
}

/* Destroys both, and checks that the driver holds nothing of them. */
static void finish(cudag_exec *x, cudag_graph *g)
{
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Runs x once and compares buffer d (m·n per batch, rows ldd apart, batches
 * stride_d apart from offset off_d) with the reference, within a relative
 * tolerance for the output type. */
static void expect_reference(cudag_exec *x, const gr_gemm *r, const char *an,
                             const char *bn, const char *cn, const char *dn,
                             const char *biasn, double tol)
{
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    float *a = read_floats(x, an, NULL), *b = read_floats(x, bn, NULL);
    float *c = cn ? read_floats(x, cn, NULL) : NULL;
    float *bias = biasn ? read_floats(x, biasn, NULL) : NULL;
    float *d = read_floats(x, dn, NULL);
    size_t total = (size_t)(r->batch * r->m * r->n);
    double *want = malloc(total * sizeof *want);
    assert_non_null(want);
    gr_reference(r, a, b, c, bias, want);
    int bad;
    double err = gr_error(r, d, want, &bad);
    if (bad || !(err <= tol))
        print_error("%s: error %.3g (limit %.3g), %d non-finite\n", dn, err,
                    tol, bad);
    assert_int_equal(bad, 0);
    assert_true(err <= tol);
    free(a), free(b), free(c), free(bias), free(d), free(want);
}

/* ---- YAML and the builder --------------------------------------------------- */

static const char *const full_yaml =
    "cudag: 1\n"
    "vars: {M: 5, N: 7, K: 9, LDA: 12}\n"
    "buffers:\n"
    "  a: {type: f32, count: 3 + 2*M*LDA}\n"
    "  w: {type: f32, count: N*K}\n"
    "  c: {type: f32, count: 2*M*N}\n"
    "  bias: {type: f32, count: N + 1}\n"
    "  d: {type: f32, count: 2*M*N + 4}\n"
    "nodes:\n"
    "  up:\n"
    "    gemm:\n"
    "      m: M\n"
    "      n: N\n"
    "      k: K\n"
    "      batch: 2\n"
    "      a: a + 3\n"
    "      lda: LDA\n"
    "      stride_a: M*LDA\n"
    "      b: w\n"
    "      trans_b: true\n"
    "      stride_b: 0\n"
    "      c: c\n"
    "      beta: 1.5\n"
    "      alpha: 0.5\n"
    "      d: d + 4\n"
    "      bias: bias + 1\n"
    "      epilogue: relu\n";

static void gemm_lowers_every_key(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g = load(full_yaml, &td);
    const cudag__gemm *mm = &g->nodes[0].u.mm;
    assert_int_equal(g->nodes[0].kind, CUDAG_NODE_GEMM);
    assert_int_equal(mm->m, 5);
    assert_int_equal(mm->n, 7);
    assert_int_equal(mm->k, 9);
    assert_int_equal(mm->batch, 2);
    assert_false(mm->trans_a);
    assert_true(mm->trans_b);
    assert_true(mm->alpha == 0.5 && mm->beta == 1.5);
    assert_int_equal(mm->epilogue, CUDAG_EPILOGUE_RELU);
    const cudag__operand *o = mm->op;
    assert_int_equal(o[CUDAG__GEMM_A].offset, 3);
    assert_int_equal(o[CUDAG__GEMM_A].ld, 12);
    assert_int_equal(o[CUDAG__GEMM_A].stride, 60);
    assert_int_equal(o[CUDAG__GEMM_B].stride, 0);
    assert_int_equal(o[CUDAG__GEMM_B].ld, 0);
    assert_int_equal(o[CUDAG__GEMM_C].stride, -1);
    assert_int_equal(o[CUDAG__GEMM_D].offset, 4);
    assert_int_equal(o[CUDAG__GEMM_BIAS].offset, 1);
    assert_string_equal(g->buffers[o[CUDAG__GEMM_BIAS].buffer].name, "bias");
    assert_int_equal(o[CUDAG__GEMM_A].pos.line, 16);
    assert_int_equal(o[CUDAG__GEMM_A].pos.col, 10);
    assert_int_equal(td.nwarn, 0);
    /* Every buffer is used: no warning, and the counts say so. */
    for (uint32_t b = 0; b < g->nbuffers; b++)
        assert_int_equal(g->buffers[b].uses, 1);
    cudag_graph_destroy(g);
}

static void gemm_builder_matches_yaml(void **state)
{
    (void)state;
    cudag_graph *y = load(full_yaml, NULL), *b;
    cudag_error e;
    tok(cudag_graph_create("g", &b, &e), &e);
    const struct {
        const char *name;
        uint64_t count;
    } bufs[] = {{"a", 123}, {"w", 63}, {"c", 70}, {"bias", 8}, {"d", 74}};
    for (size_t i = 0; i < 5; i++)
        tok(cudag_add_buffer(b, bufs[i].name, CUDAG_TYPE_F32, bufs[i].count,
                             NULL, &e),
            &e);
    cudag_gemm p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    p.m = 5, p.n = 7, p.k = 9, p.batch = 2;
    p.a = (cudag_gemm_operand){"a", 3, 12, 60};
    p.b = (cudag_gemm_operand){"w", 0, 0, 0};
    p.c = (cudag_gemm_operand){"c", 0, 0, -1};
    p.d = (cudag_gemm_operand){"d", 4, 0, -1};
    p.bias = (cudag_gemm_operand){"bias", 1, 0, -1};
    p.trans_b = 1;
    p.alpha = 0.5;
    p.beta = 1.5;
    p.epilogue = CUDAG_EPILOGUE_RELU;
    tok(cudag_add_gemm(b, "up", &p, &e), &e);
    tok(cudag_check(b, NULL, &e), &e);
    const cudag__gemm *x = &y->nodes[0].u.mm, *z = &b->nodes[0].u.mm;
    assert_true(x->m == z->m && x->n == z->n && x->k == z->k &&
                x->batch == z->batch && x->trans_a == z->trans_a &&
                x->trans_b == z->trans_b && x->alpha == z->alpha &&
                x->beta == z->beta && x->epilogue == z->epilogue);
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        assert_int_equal(x->op[i].buffer, z->op[i].buffer);
        assert_int_equal(x->op[i].offset, z->op[i].offset);
        assert_int_equal(x->op[i].ld, z->op[i].ld);
        assert_int_equal(x->op[i].stride, z->op[i].stride);
    }
    char *dy, *db;
    tok(cudag_dot(y, 0, &dy, &e), &e);
    tok(cudag_dot(b, 0, &db, &e), &e);
    tassert_contains(dy, "gemm 5x7x9 (2 batches)\\nd = a * w^T + c + bias, "
                         "relu",
                     __FILE__, __LINE__);
    /* The same drawing but for the graph's name. */
    assert_string_equal(strchr(dy, '\n'), strchr(db, '\n'));
    cudag_free(dy);
    cudag_free(db);
    /* The builder refuses what it can see alone, leaving the graph as it
     * was. */
    p.d.buffer = NULL;
    assert_int_equal(cudag_add_gemm(b, "x", &p, &e), CUDAG_EINVAL);
    assert_string_equal(e.message,
                        "cudag_add_gemm: node 'x' needs a buffer for d");
    p.d.buffer = "nope";
    assert_int_equal(cudag_add_gemm(b, "x", &p, &e), CUDAG_EUNKNOWN);
    assert_string_equal(e.message, "node 'x': unknown buffer 'nope'");
    p.d.buffer = "d";
    p.size = 8;
    assert_int_equal(cudag_add_gemm(b, "x", &p, &e), CUDAG_EINVAL);
    p.size = sizeof p;
    p.epilogue = (cudag_epilogue)7;
    assert_int_equal(cudag_add_gemm(b, "x", &p, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_add_gemm(b, "x", NULL, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_graph_node_count(b), 1);
    cudag_graph_destroy(y);
    cudag_graph_destroy(b);
}

/* ---- on the fakes --------------------------------------------------------- */

static void gemm_computes_like_a_row_major_reference(void **state)
{
    (void)state;
    cudag_graph *g;
    uint64_t seed;
    cudag_exec *x = start(full_yaml,
                          (const char *const[]){"a", "w", "c", "bias", NULL},
                          &g, &seed);
    /* d starts poisoned (NaN): every element the gemm writes is checked. */
    gr_gemm r = {5, 7, 9, 2, 0, 1, {3, 0, 0, 4, 1}, {12, 9, 7, 7},
                 {60, 0, 35, 35}, 0.5, 1.5, CUDAG_EPILOGUE_RELU, 1};
    expect_reference(x, &r, "a", "w", "c", "d", "bias", 1e-5);
    /* One capture at instantiate, one multiply in it; the algorithm's
     * workspace came from the driver and the alignments were told. */
    assert_int_equal(F.captures, 1);
    assert_int_equal(FL.matmuls, 1);
    assert_int_equal(FL.align[0], 256);     /* cuBLASLt's A is our w */
    assert_int_equal(FL.align[1], 4);       /* a + 3 floats: 12 bytes in */
    finish(x, g);
}

static void gemm_bf16_with_transposed_a_gelu_and_f32_output(void **state)
{
    (void)state;
    const char *yaml = "cudag: 1\n"
                       "buffers:\n"
                       "  a: {type: bf16, count: 6*4}\n"
                       "  b: {type: bf16, count: 6*3}\n"
                       "  bias: {type: f32, count: 3}\n"
                       "  d: {type: f32, count: 4*3}\n"
                       "  e: {type: bf16, count: 4*3}\n"
                       "  eb: {type: bf16, count: 3}\n"
                       "nodes:\n"
                       "  f32_out:\n"
                       "    gemm: {m: 4, n: 3, k: 6, a: a, trans_a: true, b: b,\n"
                       "           d: d, bias: bias, epilogue: gelu}\n"
                       "  bf16_out:\n"
                       "    gemm: {m: 4, n: 3, k: 6, a: a, trans_a: true, b: b,\n"
                       "           d: e, bias: eb, epilogue: none, alpha: 2}\n";
    cudag_graph *g;
    uint64_t seed;
    cudag_exec *x = start(yaml,
                          (const char *const[]){"a", "b", "bias", "eb", NULL},
                          &g, &seed);
    gr_gemm r = {4, 3, 6, 1, 1, 0, {0}, {4, 3, 3, 3}, {0, 0, 0, 0},
                 1.0, 0.0, CUDAG_EPILOGUE_GELU, 1};
    expect_reference(x, &r, "a", "b", NULL, "d", "bias", 1e-5);
    r.alpha = 2;
    r.epilogue = CUDAG_EPILOGUE_NONE;
    /* bf16 keeps 8 bits: one rounding of the result. */
    expect_reference(x, &r, "a", "b", NULL, "e", "eb", 1e-2);
    finish(x, g);
}

static void gemm_programmatic_edges_become_full_with_a_warning(void **state)
{
    (void)state;
    fake_lt_reset();
    const char *yaml =
        "cudag: 1\n"
        "modules: {m: k.fatbin}\n"
        "kernels: {scale_f32: {params: {x: ptr, y: ptr, a: f32, n: i64}, "
        "pdl: true}}\n"
        "buffers:\n"
        "  x: {type: f32, count: 16, init: random}\n"
        "  y: {type: f32, count: 16}\n"
        "  z: {type: f32, count: 16}\n"
        "nodes:\n"
        "  s: {kernel: scale_f32, grid: 1, block: 32, args: [x, y, 2.0, 16]}\n"
        "  mm:\n"
        "    gemm: {m: 4, n: 4, k: 4, a: y, b: x, d: z}\n"
        "    after: [s: programmatic]\n";
    tdiag td;
    cudag_graph *g = load(yaml, &td);
    assert_int_equal(td.nwarn, 1);
    assert_string_equal(td.text,
                        "g.yaml:12:13: warning: programmatic edge s -> mm "
                        "built as a full edge: 'mm' is a gemm node "
                        "(cuBLASLt's kernels run in a child graph, which has "
                        "no programmatic port)\n");
    tdiag xd;
    memset(&xd, 0, sizeof xd);
    cudag_exec *x = instantiate(g, &xd);
    /* Built full, silently at instantiate (the load said it), and counted. */
    assert_int_equal(xd.nwarn, 0);
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    assert_int_equal(st.downgraded_edges, 1);
    assert_non_null(F.last_graph);
    assert_int_equal(F.last_graph->nedges, 1);
    assert_int_equal(F.last_graph->edges[0].ed.type, 0);
    assert_int_equal(F.last_graph->edges[0].ed.from_port, 0);
    assert_int_equal(F.last_graph->nodes[1]->type, CU_GRAPH_NODE_TYPE_GRAPH);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    /* With --Werror the warning is an error, and nothing is left. */
    cudag_options o = topts(&td, NULL);
    o.flags = CUDAG_WERROR;
    cudag_error e;
    long live = cudag__alloc_live();
    assert_int_equal(tload_opts(yaml, "g.yaml", &o, &g, &e), CUDAG_EPDL);
    assert_null(g);
    assert_int_equal(cudag__alloc_live(), live);
}

static const char *const rebind_yaml =
    "cudag: 1\n"
    "vars: {BETA: 0}\n"
    "buffers:\n"
    "  a: {type: f32, count: 12}\n"
    "  b: {type: f32, count: 12}\n"
    "  d: {type: f32, count: 9, init: 0}\n"
    "nodes:\n"
    "  mm: {gemm: {m: 3, n: 3, k: 4, a: a, b: b, d: d, beta: BETA}}\n";

/* Rebinds x's buffer a (12 floats) to the program's own memory, aligned as
 * cuMemAlloc's, holding fresh random values; the node is recorded again.
 * The caller frees the memory after destroying x. */
static float *rebind_a(cudag_exec *x, uint64_t *seed)
{
    float *mine = aligned_alloc(256, 256);
    assert_non_null(mine);
    for (int i = 0; i < 12; i++)
        mine[i] = (float)trand(seed, -1, 1);
    cudag_error e;
    long before = F.captures;
    tok(cudag_exec_rebind_buffer(x, "a", (uint64_t)(uintptr_t)mine, &e), &e);
    assert_int_equal(F.captures, before + 1);
    return mine;
}

static void gemm_rebinds_buffers_by_recording_again(void **state)
{
    (void)state;
    cudag_graph *g;
    uint64_t seed;
    cudag_exec *x = start(rebind_yaml, (const char *const[]){"a", "b", NULL},
                          &g, &seed);
    gr_gemm r = {3, 3, 4, 1, 0, 0, {0}, {4, 3, 3, 3}, {0}, 1.0, 0.0,
                 CUDAG_EPILOGUE_NONE, 0};
    expect_reference(x, &r, "a", "b", NULL, "d", NULL, 1e-5);
    float *mine = rebind_a(x, &seed);
    expect_reference(x, &r, "a", "b", NULL, "d", NULL, 1e-5);
    cudag_error e;
    float *d = read_floats(x, "d", NULL);
    float *b = read_floats(x, "b", NULL);
    double want = 0;
    for (int l = 0; l < 4; l++)
        want += (double)mine[l] * b[l * 3];
    assert_true(fabs(d[0] - want) < 1e-5);
    /* An address the chosen algorithm cannot take is refused, and the exec
     * keeps the old one. */
    assert_int_equal(cudag_exec_rebind_buffer(
                         x, "a", (uint64_t)(uintptr_t)mine + 2, &e),
                     CUDAG_ENOTSUP);
    assert_string_equal(e.message,
                        "node 'mm': a is now at an address aligned to 2 "
                        "bytes, but the cuBLASLt algorithm chosen at "
                        "instantiate needs 256; instantiate the graph again");
    uint64_t p;
    tok(cudag_exec_buffer(x, "a", &p, NULL, &e), &e);
    assert_int_equal(p, (uint64_t)(uintptr_t)mine);
    free(d);
    free(b);
    finish(x, g);
    free(mine);
}

/* A gemm inside a conditional body: a child graph, which the driver allows
 * there; built, replayed and rebound like one at the top. */
static void gemm_runs_inside_a_conditional_body(void **state)
{
    (void)state;
    static const char yaml[] =
        "cudag: 1\n"
        "conditions: {go: {default: 1}}\n"
        "buffers:\n"
        "  a: {type: f32, count: 12}\n"
        "  b: {type: f32, count: 12}\n"
        "  d: {type: f32, count: 9}\n"
        "nodes:\n"
        "  maybe:\n"
        "    if: go\n"
        "    then:\n"
        "      mm: {gemm: {m: 3, n: 3, k: 4, a: a, b: b, d: d}}\n";
    cudag_graph *g;
    uint64_t seed;
    cudag_exec *x = start(yaml, (const char *const[]){"a", "b", NULL}, &g,
                          &seed);
    assert_int_equal(cudag_graph_node_count(g), 1);
    gr_gemm r = {3, 3, 4, 1, 0, 0, {0}, {4, 3, 3, 3}, {0}, 1.0, 0.0,
                 CUDAG_EPILOGUE_NONE, 0};
    fill_random(x, "d", &seed);
    expect_reference(x, &r, "a", "b", NULL, "d", NULL, 1e-5);
    float *mine = rebind_a(x, &seed);
    expect_reference(x, &r, "a", "b", NULL, "d", NULL, 1e-5);
    finish(x, g);
    free(mine);
}

static void gemm_set_var_records_the_new_multiply(void **state)
{
    (void)state;
    cudag_graph *g;
    uint64_t seed;
    cudag_exec *x = start(rebind_yaml, (const char *const[]){"a", "b", NULL},
                          &g, &seed);
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    float *once = read_floats(x, "d", NULL);
    /* d += a·b from now on. */
    tok(cudag_exec_set_var(x, "BETA", 1, &e), &e);
    tok(cudag_exec_launch(x, 2, &e), &e);
    float *thrice = read_floats(x, "d", NULL);
    for (int i = 0; i < 9; i++)
        assert_true(fabsf(thrice[i] - 3 * once[i]) < 1e-5f * (1 + fabsf(once[i])));
    free(once);
    free(thrice);
    /* The workspace of the new multiply is the exec's now; the old one
     * went with the old graph: nothing else is held. */
    finish(x, g);
}

/* In a child process: instantiating g with cuBLASLt forced to a missing
 * path; writes the status, the driver objects left and the error. */
static void instantiate_without_cublaslt(void *arg, char *out, size_t cap)
{
    setenv("CUDAG_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    fake_reset();
    cudag__cublaslt_override(NULL);
    cudag_exec *x;
    cudag_error e;
    char buf[1200];
    int rc = cudag_instantiate(arg, NULL, &x, &e);
    cudag_error_format(&e, buf, sizeof buf);
    snprintf(out, cap, "%d %d %s", rc, fake_live(), buf);
}

static void gemm_without_an_algorithm_or_library_says_so(void **state)
{
    (void)state;
    fake_lt_reset();
    FL.no_algo = 1;
    cudag_graph *g = load(rebind_yaml, NULL);
    cudag_exec *x = (cudag_exec *)1;
    cudag_error e;
    long live = cudag__alloc_live();
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENOTSUP);
    assert_null(x);
    char buf[1200];
    cudag_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "g.yaml:8:3: error: node 'mm': cuBLASLt has no "
                             "algorithm for this gemm on device 'Fake GPU' "
                             "(m·n·k = 3·3·4)");
    assert_int_equal(fake_live(), 0);
    assert_int_equal(cudag__alloc_live(), live);
    /* cuBLASLt missing: the library opens once per process, so in a child
     * with the path forced. */
    char got[1400];
    tchild(instantiate_without_cublaslt, g, got, sizeof got);
    char want[1400];
    snprintf(want, sizeof want,
             "%d 0 g.yaml:8:3: error: gemm node 'mm': "
             "CUDAG_CUBLASLT=/nonexistent/libcublasLt.so.13: cuBLASLt not "
             "found (libcublasLt.so.13): /nonexistent/libcublasLt.so.13: "
             "cannot open shared object file: No such file or directory",
             CUDAG_ENODRIVER);
    assert_string_equal(got, want);
    cudag_graph_destroy(g);
}

/* ---- failures anywhere ------------------------------------------------------ */

/* Instantiate, launch, rebind a, launch; returns the calls made before
 * the exec is destroyed. */
static long scenario(const cudag_graph *g, int *rc, char *msg, size_t cap,
                     void *mine)
{
    cudag_exec *x = NULL;
    cudag_error e;
    *rc = cudag_instantiate(g, NULL, &x, &e);
    if (*rc == CUDAG_OK)
        *rc = cudag_exec_launch(x, 1, &e);
    if (*rc == CUDAG_OK)
        *rc = cudag_exec_rebind_buffer(x, "a", (uint64_t)(uintptr_t)mine, &e);
    if (*rc == CUDAG_OK)
        *rc = cudag_exec_launch(x, 1, &e);
    if (*rc != CUDAG_OK)
        snprintf(msg, cap, "%s", e.message);
    long calls = F.calls;
    cudag_exec_destroy(x);
    return calls;
}

static void gemm_survives_every_driver_and_cublaslt_failure(void **state)
{
    (void)state;
    /* Room for a's 123 floats. */
    float *mine = aligned_alloc(256, 512);
    assert_non_null(mine);
    memset(mine, 0, 512);
    int failures = 0, lt_failures = 0;
    for (long n = 1;; n++) {
        fake_lt_reset();
        cudag_graph *g = load(full_yaml, NULL);
        fake_fail_at(n);
        int rc;
        char msg[1024] = "";
        long before = scenario(g, &rc, msg, sizeof msg, mine);
        const char *call = F.failed;
        if (call && n <= before) {
            bool lt = strncmp(call, "cublasLt", 8) == 0;
            /* Reported with the call's name and the library's status,
             * unless the library rightly shrugged it off (a release, a
             * context pop). */
            if (rc != CUDAG_OK) {
                failures++;
                lt_failures += lt;
                if (!strstr(msg, call))
                    print_error("call %ld (%s): message '%s'\n", n, call, msg);
                assert_non_null(strstr(msg, call));
                assert_non_null(strstr(msg, lt ? "CUBLAS_STATUS_INTERNAL_ERROR"
                                               : "CUDA_ERROR_UNKNOWN"));
            }
            fake_expect_clean(n);
        }
        cudag_graph_destroy(g);
        if (!call)
            break;
        assert_true(n < 100000);
    }
    print_message("# %d failing calls (%d of cuBLASLt), each reported and "
                  "cleaned up\n",
                  failures, lt_failures);
    assert_true(lt_failures >= 20);
    free(mine);
    fake_reset();
}

static void gemm_survives_every_allocation_failure(void **state)
{
    (void)state;
    for (long n = 1;; n++) {
        fake_lt_reset();
        cudag_graph *g = load(full_yaml, NULL);
        cudag_exec *x = NULL;
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag_instantiate(g, NULL, &x, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc != CUDAG_OK) {
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_null(x);
        }
        cudag_exec_destroy(x);
        assert_int_equal(fake_live(), 0);
        cudag_graph_destroy(g);
        if (made < n)
            break;
    }
    fake_reset();
}

static int teardown(void **state)
{
    (void)state;
    fake_lt_reset();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_lowers_every_key),
        cmocka_unit_test(gemm_builder_matches_yaml),
        cmocka_unit_test_teardown(gemm_computes_like_a_row_major_reference,
                                  teardown),
        cmocka_unit_test_teardown(
            gemm_bf16_with_transposed_a_gelu_and_f32_output, teardown),
        cmocka_unit_test_teardown(
            gemm_programmatic_edges_become_full_with_a_warning, teardown),
        cmocka_unit_test_teardown(gemm_rebinds_buffers_by_recording_again,
                                  teardown),
        cmocka_unit_test_teardown(gemm_set_var_records_the_new_multiply,
                                  teardown),
        cmocka_unit_test_teardown(gemm_runs_inside_a_conditional_body,
                                  teardown),
        cmocka_unit_test_teardown(gemm_without_an_algorithm_or_library_says_so,
                                  teardown),
        cmocka_unit_test(gemm_survives_every_driver_and_cublaslt_failure),
        cmocka_unit_test(gemm_survives_every_allocation_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fake_reset();
    cudag__driver_override(NULL);
    cudag__cublaslt_override(NULL);
    while (F.nobjs)
        free(F.objs[--F.nobjs]);
    return rc;
}
