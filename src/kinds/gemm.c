/* gemm.c — gemm nodes: D = alpha·op(A)·op(B) + beta·C (+ bias, then
 * ReLU or GELU) on the graph's buffers, row-major, f32/f16/bf16 with f32
 * accumulation, strided batches.  Shapes, types and overlaps are checked on
 * the CPU at load time; at instantiate cuBLASLt's heuristic picks the
 * algorithm, with a workspace the built graph owns, and the multiply is
 * recorded by stream capture into a child-graph node.  One entry of the
 * node-kind table (kind.h). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "lib/cublaslt.h"
#include "lib/driver.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "gpu/exec.h"
#include "gpu/gpu.h"
#include "gpu/stream_capture.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

static const char *const op_name[CUDAG__GEMM_NOPS] = {"a", "b", "c", "d",
                                                      "bias"};

/* Where the heuristic may use scratch memory: cuBLAS's advice for Hopper. */
#define WORKSPACE_MAX (32u << 20)

/* The largest value a dimension, leading dimension or batch count may
 * have: cuBLASLt takes them as 32-bit integers in its kernels. */
#define DIM_MAX INT32_MAX

/* ---- shapes ------------------------------------------------------------ */

/* The rows and columns operand i is stored as (row-major). */
static void stored(const cudag__gemm *mm, int i, int64_t *rows, int64_t *cols)
{
    switch (i) {
    case CUDAG__GEMM_A:
        *rows = mm->trans_a ? mm->k : mm->m;
        *cols = mm->trans_a ? mm->m : mm->k;
        break;
    case CUDAG__GEMM_B:
        *rows = mm->trans_b ? mm->n : mm->k;
        *cols = mm->trans_b ? mm->k : mm->n;
        break;
    case CUDAG__GEMM_BIAS:
        *rows = 1;
        *cols = mm->n;
        break;
    default:
        *rows = mm->m;
        *cols = mm->n;
        break;
    }
}

/* "m·k = 64·128" or "k·m = 128·64, stored transposed" for messages. */
static const char *shape_text(const cudag__gemm *mm, int i, char *buf,
                              size_t cap)
{
    static const char *const dims[CUDAG__GEMM_NOPS][2] = {
        {"m·k", "k·m"}, {"k·n", "n·k"}, {"m·n", "m·n"}, {"m·n", "m·n"},
        {"n", "n"}};
    bool t = (i == CUDAG__GEMM_A && mm->trans_a) ||
             (i == CUDAG__GEMM_B && mm->trans_b);
    int64_t r, c;
    stored(mm, i, &r, &c);
    if (i == CUDAG__GEMM_BIAS)
        snprintf(buf, cap, "n = %lld", (long long)c);
    else
        snprintf(buf, cap, "%s = %lld·%lld%s", dims[i][t], (long long)r,
                 (long long)c, t ? ", stored transposed" : "");
    return buf;
}

/* "k = " for a's rows of k elements: the dimension a stored row runs
 * along. */
static const char *row_dim(const cudag__gemm *mm, int i)
{
    switch (i) {
    case CUDAG__GEMM_A:
        return mm->trans_a ? "m = " : "k = ";
    case CUDAG__GEMM_B:
        return mm->trans_b ? "k = " : "n = ";
    default:
        return "n = ";
    }
}

static int64_t eff_ld(const cudag__gemm *mm, int i)
{
    int64_t r, c;
    stored(mm, i, &r, &c);
    return mm->op[i].ld ? mm->op[i].ld : c;
}

/* Elements one matrix of operand i spans: (rows − 1)·ld + cols.  Rows,
 * columns and ld are checked to be at most 2^31 − 1, so it fits. */
static int64_t span(const cudag__gemm *mm, int i)
{
    int64_t r, c;
    stored(mm, i, &r, &c);
    return (r - 1) * eff_ld(mm, i) + c;
}

static int64_t eff_stride(const cudag__gemm *mm, int i)
{
    return mm->op[i].stride < 0 ? span(mm, i) : mm->op[i].stride;
}

/* Elements operand i spans over every batch (the bias is one vector for
 * all of them); false when that overflows. */
static bool extent(const cudag__gemm *mm, int i, uint64_t *out)
{
    uint64_t one = (uint64_t)span(mm, i), more;
    if (i == CUDAG__GEMM_BIAS || mm->batch <= 1) {
        *out = one;
        return true;
    }
    if (__builtin_mul_overflow((uint64_t)eff_stride(mm, i),
                               (uint64_t)(mm->batch - 1), &more) ||
        __builtin_add_overflow(one, more, out))
        return false;
    return true;
}

/* The operand cuBLASLt reads as C: c, or d itself when c is absent. */
static int c_operand(const cudag__gemm *mm)
{
    return mm->op[CUDAG__GEMM_C].buffer == CUDAG__NONE ? CUDAG__GEMM_D
                                                       : CUDAG__GEMM_C;
}

/* ---- YAML ------------------------------------------------------------- */

/* Every key of a gemm's mapping. */
static const char *const gemm_keys[] = {
    "m",        "n",        "k",        "a",        "b",        "c",
    "d",        "bias",     "trans_a",  "trans_b",  "alpha",    "beta",
    "epilogue", "batch",    "lda",      "ldb",      "ldc",      "ldd",
    "stride_a", "stride_b", "stride_c", "stride_d"};

/* An integer key of the gemm's mapping v: an expression at least `min`;
 * required keys are reported missing at the mapping. */
static void read_int(cudag__lower *lw, const cudag__pending *p,
                     const cudag__doc *v, const char *key, bool required,
                     int64_t min, int64_t *out, cudag__pos *pos)
{
    const cudag__doc *x = cudag__doc_get(v, key);
    if (!x) {
        if (required)
            cudag__lerr(lw, CUDAG_EKEY, v->pos, "gemm node '%s' needs '%s'",
                        lw->g->nodes[p->node].name, key);
        return;
    }
    if (pos)
        *pos = x->pos;
    int64_t i;
    if (cudag__eval(lw, x, p->env, &i) != CUDAG_OK)
        return;
    if (i < min) {
        cudag__lerr(lw, CUDAG_ERANGE, x->pos,
                    "%s must be at least %lld, not %lld", key, (long long)min,
                    (long long)i);
        return;
    }
    *out = i;
}

/* alpha or beta: a number or an integer expression. */
static void read_scale(cudag__lower *lw, const cudag__pending *p,
                       const cudag__doc *v, const char *key, double *out)
{
    const cudag__doc *x = cudag__doc_get(v, key);
    if (!x || !cudag__want(lw, x, CUDAG__DOC_SCALAR, key))
        return;
    int64_t i;
    if (cudag__parse_float(x->str, x->len, out))
        return;
    if (cudag__eval(lw, x, p->env, &i) == CUDAG_OK)
        *out = (double)i;
}

static void read_epilogue(cudag__lower *lw, const cudag__doc *x,
                          cudag__gemm *mm)
{
    static const char *const names[] = {"none", "relu", "gelu"};
    mm->epilogue_pos = x->pos;
    if (!cudag__want(lw, x, CUDAG__DOC_SCALAR, "epilogue"))
        return;
    for (int i = 0; i < 3; i++)
        if (strcmp(x->str, names[i]) == 0) {
            mm->epilogue = (cudag_epilogue)i;
            return;
        }
    const char *best = cudag__suggest_from(x->str, names, 3);
    cudag__lerr(lw, CUDAG_EKEY, x->pos,
                "unknown epilogue '%s': none, relu or gelu%s%s%s", x->str,
                CUDAG__DYM(best));
}

static void read_operand(cudag__lower *lw, const cudag__pending *p,
                         const cudag__doc *v, int i, cudag__operand *o)
{
    o->buffer = CUDAG__NONE;
    o->stride = -1;
    const cudag__doc *x = cudag__doc_get(v, op_name[i]);
    if (!x) {
        if (i == CUDAG__GEMM_A || i == CUDAG__GEMM_B || i == CUDAG__GEMM_D)
            cudag__lerr(lw, CUDAG_EKEY, v->pos, "gemm node '%s' needs '%s'",
                        lw->g->nodes[p->node].name, op_name[i]);
    } else {
        o->pos = x->pos;
        if (!cudag__buffer_target(lw, x, p->env, op_name[i], &o->buffer,
                                  &o->offset))
            o->buffer = CUDAG__NONE;
    }
    if (i == CUDAG__GEMM_BIAS)
        return;
    char key[16];
    snprintf(key, sizeof key, "ld%s", op_name[i]);
    read_int(lw, p, v, key, false, 1, &o->ld, &o->ld_pos);
    snprintf(key, sizeof key, "stride_%s", op_name[i]);
    read_int(lw, p, v, key, false, 0, &o->stride, &o->stride_pos);
}

static void read_yaml(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    cudag__gemm *mm = &n->u.mm;
    mm->alpha = 1.0;
    mm->batch = 1;
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++)
        mm->op[i].buffer = CUDAG__NONE;
    const cudag__doc *v = cudag__doc_get(p->body, "gemm");
    mm->shape_pos = v->pos;
    if (!cudag__want(lw, v, CUDAG__DOC_MAP, "gemm") ||
        cudag__check_keys(lw, v, gemm_keys,
                          sizeof gemm_keys / sizeof *gemm_keys, "a gemm"))
        return;
    read_int(lw, p, v, "m", true, 1, &mm->m, NULL);
    read_int(lw, p, v, "n", true, 1, &mm->n, NULL);
    read_int(lw, p, v, "k", true, 1, &mm->k, &mm->k_pos);
    read_int(lw, p, v, "batch", false, 1, &mm->batch, &mm->batch_pos);
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++)
        read_operand(lw, p, v, i, &mm->op[i]);
    static const char *const flags[] = {"trans_a", "trans_b"};
    bool *dst[] = {&mm->trans_a, &mm->trans_b};
    for (int i = 0; i < 2; i++) {
        const cudag__doc *x = cudag__doc_get(v, flags[i]);
        if (x && !cudag__parse_bool(x, dst[i]))
            cudag__lerr(lw, CUDAG_EKEY, x->pos, "%s must be true or false",
                        flags[i]);
    }
    read_scale(lw, p, v, "alpha", &mm->alpha);
    read_scale(lw, p, v, "beta", &mm->beta);
    const cudag__doc *epi = cudag__doc_get(v, "epilogue");
    if (epi)
        read_epilogue(lw, epi, mm);
}

/* ---- checks ----------------------------------------------------------- */

static bool is_gemm_type(cudag_type t)
{
    return t == CUDAG_TYPE_F32 || t == CUDAG_TYPE_F16 || t == CUDAG_TYPE_BF16;
}

/* The combinations cuBLASLt computes with f32 accumulation: A and B alike,
 * D of their type or f32. */
static bool types_ok(const cudag_graph *g, const cudag__gemm *mm)
{
    cudag_type a = g->buffers[mm->op[CUDAG__GEMM_A].buffer].type;
    cudag_type b = g->buffers[mm->op[CUDAG__GEMM_B].buffer].type;
    cudag_type d = g->buffers[mm->op[CUDAG__GEMM_D].buffer].type;
    return is_gemm_type(a) && a == b && (d == a || d == CUDAG_TYPE_F32);
}

static void check_dims(cudag__checker *c, const cudag__node *n)
{
    const cudag__gemm *mm = &n->u.mm;
    const char *names[] = {"m", "n", "k", "batch"};
    const int64_t vals[] = {mm->m, mm->n, mm->k, mm->batch};
    for (int i = 0; i < 4; i++) {
        cudag__pos pos = cudag__pick(i == 3 ? mm->batch_pos : mm->shape_pos,
                                     n->pos);
        if (vals[i] < 1)
            cudag__check_fail(c, CUDAG_ERANGE, pos,
                              "node '%s': %s is %lld (must be at least 1)",
                              n->name, names[i], (long long)vals[i]);
        else if (vals[i] > DIM_MAX)
            cudag__check_fail(c, CUDAG_ELIMIT, pos,
                              "node '%s': %s is %lld (at most %d)", n->name,
                              names[i], (long long)vals[i], DIM_MAX);
    }
}

/* The leading dimension and the fit of operand i in its buffer; false when
 * it does not fit (its range is then not compared with others). */
static bool check_operand(cudag__checker *c, const cudag__node *n, int i)
{
    const cudag__gemm *mm = &n->u.mm;
    const cudag__operand *o = &mm->op[i];
    const cudag__buffer *buf = &c->g->buffers[o->buffer];
    char shape[96];
    int64_t rows, cols;
    stored(mm, i, &rows, &cols);
    if (o->ld && (o->ld < cols || o->ld > DIM_MAX)) {
        cudag__check_fail(
            c, o->ld < cols ? CUDAG_ERANGE : CUDAG_ELIMIT,
            cudag__pick(o->ld_pos, n->pos),
            o->ld < cols ? "node '%s': ld%s %lld is less than %s%lld, the "
                           "row length of %s (%s)"
                         : "node '%s': ld%s %lld is more than %s%lld, the "
                           "largest leading dimension, for %s (%s)",
            n->name, op_name[i], (long long)o->ld,
            o->ld < cols ? row_dim(mm, i) : "",
            o->ld < cols ? (long long)cols : (long long)DIM_MAX, op_name[i],
            shape_text(mm, i, shape, sizeof shape));
        return false;
    }
    uint64_t need;
    bool fits = extent(mm, i, &need) &&
                cudag__range_ok(o->offset, need, buf->count);
    if (fits)
        return true;
    char more[160] = "";
    size_t len = 0;
    if (o->ld && o->ld != cols)
        len += (size_t)snprintf(more, sizeof more, ", ld%s %lld", op_name[i],
                                (long long)o->ld);
    if (i != CUDAG__GEMM_BIAS && mm->batch > 1)
        snprintf(more + len, sizeof more - len, ", %lld batches %lld apart",
                 (long long)mm->batch, (long long)eff_stride(mm, i));
    char count[40];
    if (extent(mm, i, &need))
        snprintf(count, sizeof count, "%llu", (unsigned long long)need);
    else
        snprintf(count, sizeof count, "more than 2^64");
    cudag__check_fail(c, CUDAG_ERANGE, cudag__pick(o->pos, n->pos),
                      "node '%s': %s (%s%s) needs %s elements from offset "
                      "%llu, which do not fit in '%s' of %llu element%s",
                      n->name, op_name[i], shape_text(mm, i, shape, sizeof shape),
                      more, count, (unsigned long long)o->offset, buf->name,
                      (unsigned long long)buf->count, cudag__plural(buf->count));
    return false;
}

/* True when operand i's leading dimension is valid and its matrices fit
 * in its buffer: what check_operand reports, without reporting. */
static bool operand_fits(const cudag__checker *c, const cudag__gemm *mm,
                         int i)
{
    const cudag__operand *o = &mm->op[i];
    int64_t rows, cols;
    stored(mm, i, &rows, &cols);
    uint64_t need;
    return !(o->ld && (o->ld < cols || o->ld > DIM_MAX)) &&
           extent(mm, i, &need) &&
           cudag__range_ok(o->offset, need, c->g->buffers[o->buffer].count);
}

/* k is the one dimension a and b share and d lacks: when a and b both
 * overflow their buffers and d fits, k is what is wrong, and that is one
 * error at `k:` (not one at `a:` and one at `b:`).  True when it reported. */
static bool check_k(cudag__checker *c, const cudag__node *n)
{
    const cudag__gemm *mm = &n->u.mm;
    const int ab[2] = {CUDAG__GEMM_A, CUDAG__GEMM_B};
    if (!operand_fits(c, mm, CUDAG__GEMM_D))
        return false;
    char text[2][200];
    for (int j = 0; j < 2; j++) {
        const cudag__operand *o = &mm->op[ab[j]];
        int64_t rows, cols;
        stored(mm, ab[j], &rows, &cols);
        uint64_t need;
        if (operand_fits(c, mm, ab[j]) ||
            (o->ld && (o->ld < cols || o->ld > DIM_MAX)) ||
            !extent(mm, ab[j], &need))
            return false;
        const cudag__buffer *buf = &c->g->buffers[o->buffer];
        char shape[96];
        snprintf(text[j], sizeof text[j],
                 "%s (%s) needs %llu elements from offset %llu, '%s' has "
                 "%llu",
                 op_name[ab[j]], shape_text(mm, ab[j], shape, sizeof shape),
                 (unsigned long long)need, (unsigned long long)o->offset,
                 buf->name, (unsigned long long)buf->count);
    }
    cudag__check_fail(c, CUDAG_ERANGE, cudag__pick(mm->k_pos, n->pos),
                      "node '%s': k %lld is too large for both a and b: %s; "
                      "%s",
                      n->name, (long long)mm->k, text[0], text[1]);
    return true;
}

static bool same_matrix(const cudag__gemm *mm, int i, int j)
{
    const cudag__operand *x = &mm->op[i], *y = &mm->op[j];
    return x->buffer == y->buffer && x->offset == y->offset &&
           eff_ld(mm, i) == eff_ld(mm, j) &&
           (mm->batch <= 1 || eff_stride(mm, i) == eff_stride(mm, j));
}

/* What d writes may not be read as anything else (c only as exactly d). */
static void check_overlaps(cudag__checker *c, const cudag__node *n,
                           const bool *fit)
{
    const cudag__gemm *mm = &n->u.mm;
    const cudag__operand *d = &mm->op[CUDAG__GEMM_D];
    uint64_t dn;
    extent(mm, CUDAG__GEMM_D, &dn);
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        const cudag__operand *o = &mm->op[i];
        if (i == CUDAG__GEMM_D || o->buffer != d->buffer || !fit[i])
            continue;
        uint64_t on;
        extent(mm, i, &on);
        if (o->offset >= d->offset + dn || d->offset >= o->offset + on)
            continue;
        if (i == CUDAG__GEMM_C && same_matrix(mm, i, CUDAG__GEMM_D))
            continue;
        cudag__check_fail(
            c, CUDAG_ERANGE, cudag__pick(o->pos, n->pos),
            "node '%s': %s (elements %llu..%llu) overlaps d (elements "
            "%llu..%llu) in buffer '%s'%s",
            n->name, op_name[i], (unsigned long long)o->offset,
            (unsigned long long)(o->offset + on),
            (unsigned long long)d->offset,
            (unsigned long long)(d->offset + dn), c->g->buffers[d->buffer].name,
            i == CUDAG__GEMM_C ? " (c may be d itself, with the same offset, "
                                 "ld and stride, and nothing else of it)"
                               : "");
    }
}

/* Batches of d one stride apart must not overlap one another. */
static void check_batches(cudag__checker *c, const cudag__node *n)
{
    const cudag__gemm *mm = &n->u.mm;
    int64_t one = span(mm, CUDAG__GEMM_D);
    int64_t s = eff_stride(mm, CUDAG__GEMM_D);
    if (mm->batch <= 1 || s >= one)
        return;
    char shape[96];
    cudag__check_fail(c, CUDAG_ERANGE,
                      cudag__pick(mm->op[CUDAG__GEMM_D].stride_pos,
                                  cudag__pick(mm->batch_pos, n->pos)),
                      "node '%s': stride_d %lld is less than the %lld "
                      "elements one d spans (%s): the %lld batches of d "
                      "would overlap",
                      n->name, (long long)s, (long long)one,
                      shape_text(mm, CUDAG__GEMM_D, shape, sizeof shape),
                      (long long)mm->batch);
}

static void check_types(cudag__checker *c, const cudag__node *n)
{
    const cudag_graph *g = c->g;
    const cudag__gemm *mm = &n->u.mm;
    const char *tn[CUDAG__GEMM_NOPS];
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++)
        tn[i] = mm->op[i].buffer == CUDAG__NONE
                    ? NULL
                    : cudag_type_name(g->buffers[mm->op[i].buffer].type);
    if (!types_ok(g, mm))
        cudag__check_fail(
            c, CUDAG_ETYPE, cudag__pick(mm->shape_pos, n->pos),
            "node '%s': unsupported types a %s, b %s, d %s: cuBLASLt "
            "multiplies f32·f32 → f32, f16·f16 → f16 or f32 and bf16·bf16 → "
            "bf16 or f32, accumulating in f32",
            n->name, tn[CUDAG__GEMM_A], tn[CUDAG__GEMM_B], tn[CUDAG__GEMM_D]);
    for (int i = CUDAG__GEMM_C; i < CUDAG__GEMM_NOPS; i++)
        if (tn[i] && i != CUDAG__GEMM_D &&
            strcmp(tn[i], tn[CUDAG__GEMM_D]) != 0)
            cudag__check_fail(c, CUDAG_ETYPE,
                              cudag__pick(mm->op[i].pos, n->pos),
                              "node '%s': %s is %s, but d is %s (they must "
                              "be of one type)",
                              n->name, op_name[i], tn[i], tn[CUDAG__GEMM_D]);
}

static void check(cudag__checker *c, const cudag__node *n)
{
    const cudag_graph *g = c->g;
    const cudag__gemm *mm = &n->u.mm;
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        uint32_t b = mm->op[i].buffer;
        if (b == CUDAG__NONE &&
            (i == CUDAG__GEMM_A || i == CUDAG__GEMM_B || i == CUDAG__GEMM_D)) {
            cudag__check_fail(c, CUDAG_EUNKNOWN, n->pos,
                              "node '%s' has no %s", n->name, op_name[i]);
            return;
        }
        if (b != CUDAG__NONE && b >= g->nbuffers) {
            cudag__check_fail(c, CUDAG_EUNKNOWN, n->pos,
                              "node '%s': %s refers to buffer index %u, but "
                              "the graph has %u buffers",
                              n->name, op_name[i], b, g->nbuffers);
            return;
        }
        if (b != CUDAG__NONE)
            c->uses[b]++;
    }
    if ((unsigned)mm->epilogue > CUDAG_EPILOGUE_GELU)
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "node '%s' has an invalid epilogue %d", n->name,
                          (int)mm->epilogue);
    check_types(c, n);
    size_t before = c->d->nerr;
    check_dims(c, n);
    if (c->d->nerr != before)
        return;     /* the shapes below would only repeat it */
    bool fit[CUDAG__GEMM_NOPS] = {false};
    bool k_wrong = check_k(c, n);
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++)
        if (mm->op[i].buffer != CUDAG__NONE &&
            !(k_wrong && (i == CUDAG__GEMM_A || i == CUDAG__GEMM_B)))
            fit[i] = check_operand(c, n, i);
    if (fit[CUDAG__GEMM_D]) {
        check_batches(c, n);
        check_overlaps(c, n, fit);
    }
}

/* ---- build ------------------------------------------------------------ */

/* What the built graph keeps for a gemm node: the cuBLASLt handle, the
 * algorithm chosen at instantiate and its workspace, so that a rebound
 * buffer is recorded again with the same algorithm. */
typedef struct gemm_keep {
    cudag__keep base;
    const cudag__lt *lt;
    cudag__lt_handle h;
    cudag__lt_algo algo;
    CUdeviceptr ws;
    size_t ws_bytes;
    uint32_t align[CUDAG__GEMM_NOPS]; /* bytes the algorithm assumes */
} gemm_keep;

static void release(const cudag__gpu *gpu, cudag__keep *k)
{
    gemm_keep *gk = (gemm_keep *)k;
    if (gk->ws)
        (void)gpu->drv->cuMemFree(gk->ws);
    if (gk->h)
        (void)gk->lt->cublasLtDestroy(gk->h);
    cudag__free(gk);
}

/* One cublasLtMatmul call: descriptors in cuBLASLt's column-major terms.
 * A row-major R×C matrix with row stride ld is the column-major C×R one, so
 * row-major D = op(A)·op(B) is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ: cuBLASLt's
 * A is our b, its B our a, and every matrix is described transposed. */
typedef struct lt_call {
    const cudag__lt *lt;
    const cudag__node *n;
    gemm_keep *k;
    cudag__lt_desc desc;
    cudag__lt_layout lay[4];    /* cuBLASLt's A, B, C, D */
    CUdeviceptr ptr[CUDAG__GEMM_NOPS]; /* ours: a, b, c, d, bias */
    float alpha, beta;
} lt_call;

/* Ours, in cuBLASLt's order A, B, C, D. */
static const int lt_order[4] = {CUDAG__GEMM_B, CUDAG__GEMM_A, CUDAG__GEMM_C,
                                CUDAG__GEMM_D};

static void call_free(lt_call *c)
{
    for (int i = 0; i < 4; i++)
        if (c->lay[i])
            (void)c->lt->cublasLtMatrixLayoutDestroy(c->lay[i]);
    if (c->desc)
        (void)c->lt->cublasLtMatmulDescDestroy(c->desc);
    memset(c->lay, 0, sizeof c->lay);
    c->desc = NULL;
}

static uint32_t epilogue_of(const cudag__gemm *mm)
{
    uint32_t e = mm->op[CUDAG__GEMM_BIAS].buffer != CUDAG__NONE
                     ? CUDAG__LT_EPI_BIAS
                     : 0;
    if (mm->epilogue == CUDAG_EPILOGUE_RELU)
        e |= CUDAG__LT_EPI_RELU;
    else if (mm->epilogue == CUDAG_EPILOGUE_GELU)
        e |= CUDAG__LT_EPI_GELU;
    return e ? e : CUDAG__LT_EPI_DEFAULT;
}

static int lt_type(cudag_type t)
{
    return t == CUDAG_TYPE_F16    ? CUDAG__LT_R_16F
           : t == CUDAG_TYPE_BF16 ? CUDAG__LT_R_16BF
                                  : CUDAG__LT_R_32F;
}

/* Fills c's descriptors for node n with the buffers at bufs[]; on error c
 * holds nothing. */
static int call_make(lt_call *c, const cudag_graph *g, const cudag__node *n,
                     const CUdeviceptr *bufs, cudag_error *err)
{
    const cudag__lt *lt = c->lt;
    const cudag__gemm *mm = &n->u.mm;
    c->n = n;
    c->alpha = (float)mm->alpha;
    c->beta = (float)mm->beta;
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        const cudag__operand *o = &mm->op[i == CUDAG__GEMM_C ? c_operand(mm)
                                                             : i];
        c->ptr[i] = o->buffer == CUDAG__NONE
                        ? 0
                        : bufs[o->buffer] +
                              o->offset * cudag_type_size(
                                              g->buffers[o->buffer].type);
    }
    const char *what = "cublasLtMatmulDescCreate";
    cudag__lt_status s = lt->cublasLtMatmulDescCreate(
        &c->desc, CUDAG__LT_COMPUTE_32F, CUDAG__LT_R_32F);
    if (s != CUDAG__LT_SUCCESS)
        c->desc = NULL;
    int32_t ta = mm->trans_b ? CUDAG__LT_OP_T : CUDAG__LT_OP_N;
    int32_t tb = mm->trans_a ? CUDAG__LT_OP_T : CUDAG__LT_OP_N;
    uint32_t epi = epilogue_of(mm);
    void *bias = (void *)(uintptr_t)c->ptr[CUDAG__GEMM_BIAS];
    const struct {
        int attr;
        const void *val;
        size_t size;
    } attrs[] = {{CUDAG__LT_DESC_TRANSA, &ta, sizeof ta},
                 {CUDAG__LT_DESC_TRANSB, &tb, sizeof tb},
                 {CUDAG__LT_DESC_EPILOGUE, &epi, sizeof epi},
                 {CUDAG__LT_DESC_BIAS_POINTER, &bias, sizeof bias}};
    for (size_t i = 0; s == CUDAG__LT_SUCCESS && i < 4; i++) {
        if (attrs[i].attr == CUDAG__LT_DESC_BIAS_POINTER && !bias)
            break;
        what = "cublasLtMatmulDescSetAttribute";
        s = lt->cublasLtMatmulDescSetAttribute(c->desc, attrs[i].attr,
                                               attrs[i].val, attrs[i].size);
    }
    int32_t batch = (int32_t)mm->batch;
    for (int j = 0; s == CUDAG__LT_SUCCESS && j < 4; j++) {
        int i = lt_order[j] == CUDAG__GEMM_C ? c_operand(mm) : lt_order[j];
        int64_t rows, cols;
        stored(mm, i, &rows, &cols);
        what = "cublasLtMatrixLayoutCreate";
        s = lt->cublasLtMatrixLayoutCreate(
            &c->lay[j], lt_type(g->buffers[mm->op[i].buffer].type),
            (uint64_t)cols, (uint64_t)rows, eff_ld(mm, i));
        if (s != CUDAG__LT_SUCCESS) {
            c->lay[j] = NULL;
            break;
        }
        if (batch <= 1)
            continue;
        int64_t stride = eff_stride(mm, i);
        what = "cublasLtMatrixLayoutSetAttribute";
        s = lt->cublasLtMatrixLayoutSetAttribute(
            c->lay[j], CUDAG__LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
        if (s == CUDAG__LT_SUCCESS)
            s = lt->cublasLtMatrixLayoutSetAttribute(
                c->lay[j], CUDAG__LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof stride);
    }
    if (s == CUDAG__LT_SUCCESS)
        return CUDAG_OK;
    call_free(c);
    return cudag__lt_fail(err, lt, s, n->pos, "%s for node '%s'", what,
                          n->name);
}

/* The alignment in bytes of a device address, at most 256 (what cuMemAlloc
 * gives). */
static uint32_t align_of(CUdeviceptr p)
{
    uint32_t a = 256;
    while (a > 1 && (p & (a - 1)))
        a >>= 1;
    return a;
}

/* Asks the heuristic for the best algorithm for c, given the operands'
 * alignment, and allocates its workspace. */
static int choose(const cudag__gpu *gpu, lt_call *c, cudag_error *err)
{
    const cudag__lt *lt = c->lt;
    gemm_keep *k = c->k;
    const cudag__node *n = c->n;
    cudag__lt_pref pref = NULL;
    cudag__lt_status s = lt->cublasLtMatmulPreferenceCreate(&pref);
    if (s != CUDAG__LT_SUCCESS)
        return cudag__lt_fail(err, lt, s, n->pos,
                              "cublasLtMatmulPreferenceCreate for node '%s'",
                              n->name);
    uint64_t ws = WORKSPACE_MAX;
    s = lt->cublasLtMatmulPreferenceSetAttribute(
        pref, CUDAG__LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    static const int pref_align[4] = {CUDAG__LT_PREF_MIN_ALIGNMENT_A_BYTES,
                                      CUDAG__LT_PREF_MIN_ALIGNMENT_B_BYTES,
                                      CUDAG__LT_PREF_MIN_ALIGNMENT_C_BYTES,
                                      CUDAG__LT_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int j = 0; j < 4 && s == CUDAG__LT_SUCCESS; j++) {
        int i = lt_order[j];
        k->align[i] = align_of(c->ptr[i]);
        s = lt->cublasLtMatmulPreferenceSetAttribute(
            pref, pref_align[j], &k->align[i], sizeof k->align[i]);
    }
    cudag__lt_heur best;
    memset(&best, 0, sizeof best);
    int found = 0;
    const char *what = "cublasLtMatmulPreferenceSetAttribute";
    if (s == CUDAG__LT_SUCCESS) {
        what = "cublasLtMatmulAlgoGetHeuristic";
        s = lt->cublasLtMatmulAlgoGetHeuristic(
            k->h, c->desc, c->lay[0], c->lay[1], c->lay[2], c->lay[3], pref, 1,
            &best, &found);
    }
    (void)lt->cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUDAG__LT_SUCCESS)
        return cudag__lt_fail(err, lt, s, n->pos, "%s for node '%s'", what,
                              n->name);
    if (found < 1)
        return cudag__fail_at(err, CUDAG_ENOTSUP, n->pos,
                              "node '%s': cuBLASLt has no algorithm for this "
                              "gemm on device '%s' (m·n·k = %lld·%lld·%lld)",
                              n->name, gpu->name, (long long)n->u.mm.m,
                              (long long)n->u.mm.n, (long long)n->u.mm.k);
    k->algo = best.algo;
    if (best.workspace) {
        CUresult r = gpu->drv->cuMemAlloc(&k->ws, best.workspace);
        if (r != CUDA_SUCCESS) {
            k->ws = 0;
            return cudag__cu_fail(err, gpu->drv, r, n->pos,
                                  "cuMemAlloc: %zu bytes of cuBLASLt "
                                  "workspace for node '%s'",
                                  best.workspace, n->name);
        }
        k->ws_bytes = best.workspace;
    }
    return CUDAG_OK;
}

/* The capture's work: the one matmul. */
static int record(void *user, CUstream s, cudag_error *err)
{
    lt_call *c = user;
    const cudag__lt *lt = c->lt;
    cudag__lt_status st = lt->cublasLtMatmul(
        c->k->h, c->desc, &c->alpha, (const void *)(uintptr_t)c->ptr[lt_order[0]],
        c->lay[0], (const void *)(uintptr_t)c->ptr[lt_order[1]], c->lay[1],
        &c->beta, (const void *)(uintptr_t)c->ptr[CUDAG__GEMM_C], c->lay[2],
        (void *)(uintptr_t)c->ptr[CUDAG__GEMM_D], c->lay[3], &c->k->algo,
        (void *)(uintptr_t)c->k->ws, c->k->ws_bytes, s);
    if (st != CUDAG__LT_SUCCESS)
        return cudag__lt_fail(err, lt, st, CUDAG__NOPOS, "cublasLtMatmul");
    return CUDAG_OK;
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    lt_call c;
    memset(&c, 0, sizeof c);
    int rc = cudag__cublaslt(&c.lt, err);
    if (rc != CUDAG_OK) {
        cudag__error_prefix(err, nd->pos, "gemm node '%s'", nd->name);
        return rc;
    }
    gemm_keep *k = cudag__calloc(1, sizeof *k);
    if (!k)
        return cudag__fail_at(err, CUDAG_ENOMEM, nd->pos,
                              "out of memory building gemm node '%s'",
                              nd->name);
    /* The exec's steps number the tree's nodes flat. */
    k->base.node = b->g->node_base + n;
    k->base.release = release;
    k->lt = c.lt;
    c.k = k;
    cudag__lt_status s = c.lt->cublasLtCreate(&k->h);
    if (s != CUDAG__LT_SUCCESS) {
        k->h = NULL;
        rc = cudag__lt_fail(err, c.lt, s, nd->pos,
                            "cublasLtCreate for node '%s'", nd->name);
    }
    if (rc == CUDAG_OK)
        rc = call_make(&c, b->g, nd, b->bufs, err);
    if (rc == CUDAG_OK)
        rc = choose(b->gpu, &c, err);
    if (rc == CUDAG_OK)
        rc = cudag__capture_node(b->gpu, nd, record, &c, graph, out, err);
    call_free(&c);
    if (rc != CUDAG_OK) {
        release(b->gpu, &k->base);
        return rc;
    }
    k->base.next = *b->keep;
    *b->keep = &k->base;
    return CUDAG_OK;
}

/* ---- the instantiated graph --------------------------------------------- */

/* Records the node again with the buffers' new addresses and the algorithm
 * chosen at instantiate, which must still fit their alignment. */
static int repoint(cudag_exec *x, uint32_t n, uint32_t buf, cudag_error *err)
{
    const cudag__node *nd = cudag__tree_node(x->g, n);
    const cudag__gemm *mm = &nd->u.mm;
    bool uses = false;
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++)
        uses |= mm->op[i].buffer == buf;
    if (!uses)
        return CUDAG_OK;
    cudag__keep *kept = x->built.keep;
    while (kept && kept->node != n)
        kept = kept->next;
    gemm_keep *k = (gemm_keep *)kept;
    if (!k)
        return cudag__fail_at(err, CUDAG_ESTATE, nd->pos,
                              "node '%s' was not built as a gemm", nd->name);
    lt_call c;
    memset(&c, 0, sizeof c);
    c.lt = k->lt;
    c.k = k;
    int rc = call_make(&c, x->g, nd, x->bufs, err);
    for (int i = 0; rc == CUDAG_OK && i < CUDAG__GEMM_BIAS; i++) {
        uint32_t a = align_of(c.ptr[i]);
        if (a < k->align[i])
            rc = cudag__fail_at(err, CUDAG_ENOTSUP, nd->pos,
                                "node '%s': %s is now at an address aligned "
                                "to %u bytes, but the cuBLASLt algorithm "
                                "chosen at instantiate needs %u; instantiate "
                                "the graph again",
                                nd->name, op_name[i], a, k->align[i]);
    }
    if (rc == CUDAG_OK)
        rc = cudag__capture_update(&x->gpu, nd, record, &c, x->gexec,
                                   x->built.nodes[n], err);
    call_free(&c);
    return rc;
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g, const cudag__node *n)
{
    const cudag__gemm *mm = &n->u.mm;
    cudag__sb_printf(b, "gemm %lldx%lldx%lld", (long long)mm->m,
                     (long long)mm->n, (long long)mm->k);
    if (mm->batch > 1)
        cudag__sb_printf(b, " (%lld batches)", (long long)mm->batch);
    cudag__sb_puts(b, "\\n");
    cudag__sb_dot_escape(b, g->buffers[mm->op[CUDAG__GEMM_D].buffer].name);
    cudag__sb_puts(b, " = ");
    cudag__sb_dot_escape(b, g->buffers[mm->op[CUDAG__GEMM_A].buffer].name);
    cudag__sb_puts(b, mm->trans_a ? "^T * " : " * ");
    cudag__sb_dot_escape(b, g->buffers[mm->op[CUDAG__GEMM_B].buffer].name);
    if (mm->trans_b)
        cudag__sb_puts(b, "^T");
    if (mm->beta != 0.0) {
        cudag__sb_puts(b, " + ");
        cudag__sb_dot_escape(b, g->buffers[mm->op[c_operand(mm)].buffer].name);
    }
    if (mm->op[CUDAG__GEMM_BIAS].buffer != CUDAG__NONE) {
        cudag__sb_puts(b, " + ");
        cudag__sb_dot_escape(b,
                             g->buffers[mm->op[CUDAG__GEMM_BIAS].buffer].name);
    }
    if (mm->epilogue != CUDAG_EPILOGUE_NONE)
        cudag__sb_puts(b, mm->epilogue == CUDAG_EPILOGUE_RELU ? ", relu"
                                                              : ", gelu");
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_gemm(cudag_graph *g, const char *name, const cudag_gemm *gemm,
                   cudag_error *err)
{
    int rc = cudag__builder_start(g, &name, "cudag_add_gemm", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!gemm || gemm->size < sizeof *gemm)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_gemm: node '%s': %s", name,
                              gemm ? "gemm.size is not sizeof(cudag_gemm)"
                                   : "gemm is NULL");
    if ((unsigned)gemm->epilogue > CUDAG_EPILOGUE_GELU)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_gemm: node '%s': invalid epilogue %d",
                              name, (int)gemm->epilogue);
    const cudag_gemm_operand *ops[CUDAG__GEMM_NOPS] = {
        &gemm->a, &gemm->b, &gemm->c, &gemm->d, &gemm->bias};
    cudag__operand o[CUDAG__GEMM_NOPS];
    memset(o, 0, sizeof o);
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        o[i].buffer = CUDAG__NONE;
        o[i].offset = ops[i]->offset;
        o[i].ld = ops[i]->ld;
        o[i].stride = ops[i]->stride;
        if (ops[i]->ld < 0)
            return cudag__fail_at(err, CUDAG_ERANGE, CUDAG__NOPOS,
                                  "cudag_add_gemm: node '%s': ld%s is %lld "
                                  "(0 for packed rows, or at least 1)",
                                  name, op_name[i], (long long)ops[i]->ld);
        if (!ops[i]->buffer) {
            if (i == CUDAG__GEMM_A || i == CUDAG__GEMM_B || i == CUDAG__GEMM_D)
                return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                                      "cudag_add_gemm: node '%s' needs a "
                                      "buffer for %s",
                                      name, op_name[i]);
            continue;
        }
        o[i].buffer = cudag__builder_buffer(g, name, ops[i]->buffer, &rc, err);
        if (rc != CUDAG_OK)
            return rc;
    }
    cudag__node *n;
    rc = cudag__add_node(g, name, CUDAG__NOPOS, &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = CUDAG_NODE_GEMM;
    cudag__gemm *mm = &n->u.mm;
    mm->m = gemm->m;
    mm->n = gemm->n;
    mm->k = gemm->k;
    mm->batch = gemm->batch ? gemm->batch : 1;
    mm->trans_a = gemm->trans_a != 0;
    mm->trans_b = gemm->trans_b != 0;
    mm->epilogue = gemm->epilogue;
    mm->alpha = gemm->alpha;
    mm->beta = gemm->beta;
    memcpy(mm->op, o, sizeof o);
    return CUDAG_OK;
}

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* Each operand from its offset over every element it spans (the rows
 * between its leading dimensions included: a hull, exact for packed
 * operands): a, b, c and bias read, d written (and read when it stands for
 * an absent c with beta not 0). */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    const cudag__gemm *mm = &n->u.mm;
    for (int i = 0; i < CUDAG__GEMM_NOPS; i++) {
        const cudag__operand *o = &mm->op[i];
        uint64_t span;
        if (o->buffer == CUDAG__NONE)
            continue;
        if (!extent(mm, i, &span))
            span = UINT64_MAX;
        unsigned mode = CUDAG__ACC_READ;
        if (i == CUDAG__GEMM_D)
            mode = c_operand(mm) == CUDAG__GEMM_D && mm->beta != 0
                       ? CUDAG__ACC_RW
                       : CUDAG__ACC_WRITE;
        cudag__access_add(s, g, o->buffer, o->offset, span, mode, false, n,
                          cudag__pick(o->pos, n->pos));
    }
}

/* ---- the table entry ------------------------------------------------ */

static const char *const keys[] = {"gemm", "after"};

const cudag__kind_ops cudag__kind_gemm = {
    .kind = CUDAG_NODE_GEMM,
    .name = "gemm",
    .what = "a gemm node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .pdl_end = false,
    .pdl_full = "cuBLASLt's kernels run in a child graph, which has no "
                "programmatic port",
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, gemm_nodes),
    .read_yaml = read_yaml,
    .check = check,
    .access = access,
    .add = add,
    .repoint = repoint,
    .dot_label = dot_label,
    .dot_shape = ", shape=box3d, style=filled, fillcolor=honeydew",
    .dot_legend = "gemm",
};
