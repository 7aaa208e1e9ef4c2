/* check.c — the whole-graph checks on the IR (kernel arguments against their
 * signatures, launch limits, buffers, memset and memcpy ranges, edges,
 * dependency cycles) and, for a graph that passes, the topology later stages
 * use: a deterministic topological order, levels and CSR adjacency.
 *
 * Everything here is linear or O(E log E) in the size of the graph and uses
 * no recursion, so a 100 000-node chain checks in milliseconds without
 * touching the stack.  The checker reads the graph and writes it only at the
 * very end (buffer use counts, g->topo, g->checked): a failed allocation or a
 * graph with errors leaves it as it was.
 *
 * Every message names the object it is about ("node 'a': …", "buffer 'x': …",
 * "edge a -> b …"), because a graph built through the C API has no source
 * positions; a graph loaded from YAML gets the most precise position the IR
 * holds as well. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One check pass: where problems go, and the first error code of this pass
 * (the diagnostic sink may already hold errors of an earlier stage). */
typedef struct ctx {
    cudag_graph *g;
    cudag__diag *d;
    int first;
    bool broken;                /* an error, not a warning made one */
} ctx;

static int fail(ctx *c, int code, cudag__pos pos, const char *fmt, ...)
    CUDAG__PRINTF(4, 5);

static int fail(ctx *c, int code, cudag__pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cudag__vreport(c->d, CUDAG_SEV_ERROR, code, pos, fmt, ap);
    va_end(ap);
    if (r != CUDAG_OK && c->first == CUDAG_OK)
        c->first = r;
    c->broken = true;
    return r;
}

static void warn(ctx *c, int code, cudag__pos pos, const char *fmt, ...)
    CUDAG__PRINTF(4, 5);

static void warn(ctx *c, int code, cudag__pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* CUDAG_WERROR turns a warning into an error: then it counts as one. */
    int r = cudag__vreport(c->d, CUDAG_SEV_WARNING, code, pos, fmt, ap);
    va_end(ap);
    if (r != CUDAG_OK && c->first == CUDAG_OK)
        c->first = r;
}

static bool full(const ctx *c) { return cudag__diag_full(c->d); }

/* The more precise of two positions: the first one that has a line. */
static cudag__pos pick(cudag__pos a, cudag__pos b) { return a.line ? a : b; }

/* ---- numbers ----------------------------------------------------------- */

/* Writes v in the shortest form that reads back exactly, keeping a ".0" on
 * integral values so that "2.0" is not mistaken for the integer 2. */
static const char *fmt_num(char buf[40], double v)
{
    if (isnan(v))
        return "nan";
    if (isinf(v))
        return v < 0 ? "-inf" : "inf";
    /* %g would print 300 as 3e+02, the shortest form that reads back. */
    if (v == trunc(v) && fabs(v) < 1e16) {
        snprintf(buf, 40, "%.1f", v);
        return buf;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 40, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return buf;
}

/* "s" unless n is 1: "1 element", "2 elements". */
static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

static bool is_int_type(cudag_type t)
{
    return t >= CUDAG_TYPE_I8 && t <= CUDAG_TYPE_U64;
}

static bool is_float_type(cudag_type t)
{
    return t >= CUDAG_TYPE_F16 && t <= CUDAG_TYPE_F64;
}

static void int_range(cudag_type t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case CUDAG_TYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case CUDAG_TYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
    case CUDAG_TYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case CUDAG_TYPE_U16: *lo = 0; *hi = UINT16_MAX; break;
    case CUDAG_TYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case CUDAG_TYPE_U32: *lo = 0; *hi = UINT32_MAX; break;
    /* The language's integers are signed 64-bit, so a negative value for a
     * u64 is a mistake far more often than a way to write 2^63 or more. */
    case CUDAG_TYPE_U64: *lo = 0; *hi = INT64_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* The largest finite value of a floating type. */
static double float_max(cudag_type t)
{
    switch (t) {
    case CUDAG_TYPE_F16: return 65504.0;
    case CUDAG_TYPE_BF16: return 3.38953138925153547590470800371487866880e38;
    case CUDAG_TYPE_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

typedef enum fit {
    FIT_OK,
    FIT_NOT_INTEGER,
    FIT_RANGE,
    FIT_NOT_FINITE
} fit;

/* Whether a value (a memset or constant-init value, always a double) can be
 * stored in an element of type t.  Integers must be integral and in range;
 * floats finite (when need_finite) and not beyond the type's largest value. */
static fit value_fits(cudag_type t, double v, bool need_finite)
{
    if (is_int_type(t)) {
        if (!isfinite(v) || v != trunc(v))
            return FIT_NOT_INTEGER;
        /* Compare in double: the bounds ±2^63, 2^64 are exact there. */
        if (t == CUDAG_TYPE_U64)
            return v >= 0 && v < 18446744073709551616.0 ? FIT_OK : FIT_RANGE;
        if (t == CUDAG_TYPE_I64)
            return v >= -9223372036854775808.0 && v < 9223372036854775808.0
                       ? FIT_OK
                       : FIT_RANGE;
        int64_t lo, hi;
        int_range(t, &lo, &hi);
        return v >= (double)lo && v <= (double)hi ? FIT_OK : FIT_RANGE;
    }
    if (!isfinite(v))
        return need_finite ? FIT_NOT_FINITE : FIT_OK;
    return fabs(v) <= float_max(t) ? FIT_OK : FIT_RANGE;
}

/* The 64-bit pattern a memset of value v writes into an 8-byte element
 * (v already known to fit the type). */
static uint64_t pattern8(cudag_type t, double v)
{
    if (t == CUDAG_TYPE_F64) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        return bits;
    }
    if (t == CUDAG_TYPE_U64)
        return (uint64_t)v;
    return (uint64_t)(int64_t)v;
}

/* ---- signatures --------------------------------------------------------- */

/* The bytes a kernel's parameters take, each aligned to its own size, as the
 * CUDA ABI lays them out. */
static uint64_t param_bytes(const cudag__sig *s)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < s->nparams; i++) {
        uint64_t sz = cudag_type_size(s->types[i]);
        if (sz == 0)
            sz = 1;
        off = (off + sz - 1) / sz * sz + sz;
    }
    return off;
}

static void check_sigs(ctx *c)
{
    cudag_graph *g = c->g;
    for (uint32_t i = 0; i < g->nsigs && !full(c); i++) {
        const cudag__sig *s = &g->sigs[i];
        if (s->module >= g->nmodules)
            fail(c, CUDAG_EUNKNOWN, s->pos, "kernel '%s' has no module",
                 s->name);
        for (uint32_t p = 0; p < s->nparams; p++)
            if (!cudag_type_name(s->types[p]))
                fail(c, CUDAG_ETYPE, s->pos,
                     "kernel '%s': parameter %u has an invalid type", s->name,
                     p);
        uint64_t bytes = param_bytes(s);
        if (bytes > CUDAG__MAX_PARAM_BYTES)
            fail(c, CUDAG_ELIMIT, s->pos,
                 "kernel '%s': parameters take %llu bytes (at most %u)",
                 s->name, (unsigned long long)bytes, CUDAG__MAX_PARAM_BYTES);
    }
}

/* "x: ptr, y: ptr, a: f32, n: i64", cut short with "…" if it is long. */
static void sig_text(const cudag__sig *s, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->nparams; i++) {
        const char *tn = cudag_type_name(s->types[i]);
        int n = snprintf(buf + len, cap - len, "%s%s: %s", i ? ", " : "",
                         s->pnames && s->pnames[i] ? s->pnames[i] : "?",
                         tn ? tn : "?");
        if (n < 0 || (size_t)n >= cap - len - 4) {
            snprintf(buf + len, cap - len, ", ...");
            return;
        }
        len += (size_t)n;
    }
}

/* ---- buffers ------------------------------------------------------------- */

static void check_buffers(ctx *c)
{
    cudag_graph *g = c->g;
    char n1[40], n2[40];
    for (uint32_t i = 0; i < g->nbuffers && !full(c); i++) {
        const cudag__buffer *b = &g->buffers[i];
        const char *tn = cudag_type_name(b->type);
        size_t es = cudag_type_size(b->type);
        cudag__pos cpos = pick(b->count_pos, b->pos);
        if (!tn || b->type == CUDAG_TYPE_PTR) {
            fail(c, CUDAG_ETYPE, b->pos,
                 "buffer '%s' has an invalid element type", b->name);
            continue;
        }
        if (b->count == 0)
            fail(c, CUDAG_ERANGE, cpos,
                 "buffer '%s': count is 0 (must be at least 1)", b->name);
        else if (b->count > CUDAG__MAX_BUFFER_BYTES / es)
            /* Dividing the limit instead of multiplying the count catches
             * the products that overflow 64 bits as well. */
            fail(c, CUDAG_ELIMIT, cpos,
                 "buffer '%s': absurd size: %llu elements of %s is more "
                 "than 64 TiB",
                 b->name, (unsigned long long)b->count, tn);
        const cudag_init *in = &b->init;
        /* At the init value when the file says where it is. */
        cudag__pos ipos = b->init_pos.line ? b->init_pos : b->pos;
        if (in->kind == CUDAG_INIT_RANDOM && !(in->lo == 0 && in->hi == 0)) {
            if (!isfinite(in->lo) || !isfinite(in->hi))
                fail(c, CUDAG_ERANGE, ipos,
                     "buffer '%s': random range [%s, %s) must be finite",
                     b->name, fmt_num(n1, in->lo), fmt_num(n2, in->hi));
            else if (!(in->lo < in->hi))
                fail(c, CUDAG_ERANGE, ipos,
                     "buffer '%s': random range [%s, %s) is empty (lo must "
                     "be less than hi)",
                     b->name, fmt_num(n1, in->lo), fmt_num(n2, in->hi));
        } else if (in->kind == CUDAG_INIT_CONST) {
            /* A constant may be an infinity or NaN on purpose (a sentinel),
             * but not a value the element type cannot hold. */
            fit f = value_fits(b->type, in->value, false);
            if (f == FIT_NOT_INTEGER)
                fail(c, CUDAG_ERANGE, ipos,
                     "buffer '%s': init value %s is not an integer (the "
                     "buffer is %s)",
                     b->name, fmt_num(n1, in->value), tn);
            else if (f == FIT_RANGE)
                fail(c, CUDAG_ERANGE, ipos,
                     "buffer '%s': init value %s is out of range for %s",
                     b->name, fmt_num(n1, in->value), tn);
        }
    }
}

/* ---- kernel nodes --------------------------------------------------------- */

/* What an argument is, for messages: "buffer 'x'", "integer 3", … */
static const char *arg_text(const cudag_graph *g, const cudag__arg *a,
                            char *buf, size_t cap)
{
    char num[40];
    switch (a->kind) {
    case CUDAG_ARG_BUFFER:
        if (a->buffer < g->nbuffers)
            snprintf(buf, cap, "buffer '%s'", g->buffers[a->buffer].name);
        else
            snprintf(buf, cap, "a buffer");
        break;
    case CUDAG_ARG_INT:
        snprintf(buf, cap, "integer %lld", (long long)a->i);
        break;
    case CUDAG_ARG_FLOAT:
        snprintf(buf, cap, "number %s", fmt_num(num, a->f));
        break;
    case CUDAG_ARG_NULL:
        snprintf(buf, cap, "null");
        break;
    default:
        snprintf(buf, cap, "an invalid argument");
        break;
    }
    return buf;
}

static void check_arg(ctx *c, const cudag__node *n, const cudag__sig *s,
                      uint32_t i, uint32_t *uses)
{
    const cudag_graph *g = c->g;
    const cudag__arg *a = &n->u.k.args[i];
    cudag_type t = s->types[i];
    const char *tn = cudag_type_name(t);
    const char *pn = s->pnames && s->pnames[i] ? s->pnames[i] : "?";
    cudag__pos pos = pick(a->pos, pick(n->u.k.args_pos, n->pos));
    char what[320], num[40];

    if (a->kind == CUDAG_ARG_BUFFER) {
        if (a->buffer >= g->nbuffers) {
            fail(c, CUDAG_EUNKNOWN, pos,
                 "node '%s': argument '%s' refers to buffer index %u, but "
                 "the graph has %u buffers",
                 n->name, pn, a->buffer, g->nbuffers);
            return;
        }
        const cudag__buffer *b = &g->buffers[a->buffer];
        uses[a->buffer]++;
        if (t != CUDAG_TYPE_PTR)
            goto mismatch;
        if (a->offset >= b->count && b->count > 0)
            fail(c, CUDAG_ERANGE, pos,
                 "node '%s': argument '%s': offset %llu is outside buffer "
                 "'%s' (%llu element%s)",
                 n->name, pn, (unsigned long long)a->offset, b->name,
                 (unsigned long long)b->count, plural(b->count));
        return;
    }
    if (a->kind != CUDAG_ARG_INT && a->kind != CUDAG_ARG_FLOAT &&
        a->kind != CUDAG_ARG_NULL) {
        fail(c, CUDAG_EINVAL, pos,
             "node '%s': argument '%s' has an invalid kind %d", n->name, pn,
             (int)a->kind);
        return;
    }
    if (t == CUDAG_TYPE_PTR) {
        if (a->kind != CUDAG_ARG_NULL)
            goto mismatch;
        return;
    }
    if (is_int_type(t)) {
        if (a->kind != CUDAG_ARG_INT)
            goto mismatch;
        int64_t lo, hi;
        int_range(t, &lo, &hi);
        if (a->i < lo || a->i > hi)
            fail(c, CUDAG_ERANGE, pos,
                 "node '%s': argument '%s' is %lld, out of range for %s "
                 "(%lld to %lld)",
                 n->name, pn, (long long)a->i, tn, (long long)lo,
                 (long long)hi);
        return;
    }
    if (is_float_type(t)) {
        double v;
        if (a->kind == CUDAG_ARG_INT)
            v = (double)a->i;
        else if (a->kind == CUDAG_ARG_FLOAT)
            v = a->f;
        else
            goto mismatch;
        /* An explicit infinity or NaN is passed as it is; a finite value
         * that would become one is a mistake. */
        if (isfinite(v) && fabs(v) > float_max(t))
            fail(c, CUDAG_ERANGE, pos,
                 "node '%s': argument '%s' is %s, out of range for %s",
                 n->name, pn, fmt_num(num, v), tn);
        return;
    }
    return; /* an invalid parameter type was reported with its signature */

mismatch:
    fail(c, CUDAG_ETYPE, pos, "node '%s': argument '%s' (%s) must be %s, got %s",
         n->name, pn, tn,
         t == CUDAG_TYPE_PTR ? "a buffer or null"
         : is_int_type(t)   ? "an integer"
                            : "a number",
         arg_text(g, a, what, sizeof what));
}

static void check_dims(ctx *c, const cudag__node *n, const char *what,
                       const int64_t dim[3], const uint32_t max[3],
                       cudag__pos pos)
{
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (dim[i] < 1)
            fail(c, CUDAG_ERANGE, pos,
                 "node '%s': %s %c is %lld (must be at least 1)", n->name,
                 what, xyz[i], (long long)dim[i]);
        else if (dim[i] > (int64_t)max[i])
            fail(c, CUDAG_ELIMIT, pos, "node '%s': %s %c is %lld (at most %u)",
                 n->name, what, xyz[i], (long long)dim[i], max[i]);
    }
}

static void check_kernel(ctx *c, const cudag__node *n, uint32_t *uses)
{
    static const uint32_t grid_max[3] = {CUDAG__MAX_GRID_X, CUDAG__MAX_GRID_Y,
                                         CUDAG__MAX_GRID_Z};
    static const uint32_t block_max[3] = {
        CUDAG__MAX_BLOCK_X, CUDAG__MAX_BLOCK_Y, CUDAG__MAX_BLOCK_Z};
    const cudag_graph *g = c->g;
    const cudag__kernel *k = &n->u.k;

    check_dims(c, n, "grid", k->grid, grid_max, pick(k->grid_pos, n->pos));
    cudag__pos bpos = pick(k->block_pos, n->pos);
    check_dims(c, n, "block", k->block, block_max, bpos);
    bool dims_ok = true;
    for (int i = 0; i < 3; i++)
        dims_ok &= k->block[i] >= 1 && k->block[i] <= (int64_t)block_max[i];
    /* Each dimension is at most 1024 here, so the product cannot overflow. */
    if (dims_ok) {
        int64_t threads = k->block[0] * k->block[1] * k->block[2];
        if (threads > (int64_t)CUDAG__MAX_BLOCK_THREADS)
            fail(c, CUDAG_ELIMIT, bpos,
                 "node '%s': block has %lld threads (%lld x %lld x %lld; at "
                 "most %u)",
                 n->name, (long long)threads, (long long)k->block[0],
                 (long long)k->block[1], (long long)k->block[2],
                 CUDAG__MAX_BLOCK_THREADS);
    }
    cudag__pos spos = pick(k->smem_pos, n->pos);
    if (k->smem < 0)
        fail(c, CUDAG_ERANGE, spos,
             "node '%s': smem is %lld bytes (must be at least 0)", n->name,
             (long long)k->smem);
    else if (k->smem > (int64_t)CUDAG__MAX_SMEM)
        fail(c, CUDAG_ELIMIT, spos, "node '%s': smem is %lld bytes (at most %u)",
             n->name, (long long)k->smem, CUDAG__MAX_SMEM);

    if (k->sig >= g->nsigs) {
        fail(c, CUDAG_EUNKNOWN, pick(k->sig_pos, n->pos),
             "node '%s' refers to kernel index %u, but the graph has %u "
             "kernels",
             n->name, k->sig, g->nsigs);
        return;
    }
    const cudag__sig *s = &g->sigs[k->sig];
    if (k->nargs != s->nparams) {
        char sig[700];
        sig_text(s, sig, sizeof sig);
        if (s->nparams == 0)
            fail(c, CUDAG_EARGS, pick(k->args_pos, n->pos),
                 "node '%s': kernel '%s' takes no arguments, got %u", n->name,
                 s->name, k->nargs);
        else
            fail(c, CUDAG_EARGS, pick(k->args_pos, n->pos),
                 "node '%s': kernel '%s' takes %u argument%s (%s), got %u",
                 n->name, s->name, s->nparams, s->nparams == 1 ? "" : "s", sig,
                 k->nargs);
        /* Matching the rest against shifted parameters would only repeat
         * the same mistake; count the buffers so they are not "unused". */
        for (uint32_t i = 0; i < k->nargs; i++)
            if (k->args[i].kind == CUDAG_ARG_BUFFER &&
                k->args[i].buffer < g->nbuffers)
                uses[k->args[i].buffer]++;
        return;
    }
    for (uint32_t i = 0; i < k->nargs && !full(c); i++)
        check_arg(c, n, s, i, uses);
}

/* ---- memset and memcpy nodes -------------------------------------------- */

/* True when [off, off + count) lies inside a buffer of `size` elements,
 * without overflowing. */
static bool range_ok(uint64_t off, uint64_t count, uint64_t size)
{
    return off <= size && count <= size - off;
}

static void check_memset(ctx *c, const cudag__node *n, uint32_t *uses)
{
    const cudag_graph *g = c->g;
    const cudag__memset *m = &n->u.set;
    char num[40];
    if (m->buffer >= g->nbuffers) {
        fail(c, CUDAG_EUNKNOWN, n->pos,
             "node '%s' refers to buffer index %u, but the graph has %u "
             "buffers",
             n->name, m->buffer, g->nbuffers);
        return;
    }
    const cudag__buffer *b = &g->buffers[m->buffer];
    const char *tn = cudag_type_name(b->type);
    uses[m->buffer]++;
    if (!tn || b->type == CUDAG_TYPE_PTR)
        return; /* reported with the buffer */
    if (m->count == 0)
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memset count is 0 (must be at least 1)", n->name);
    else if (!range_ok(m->offset, m->count, b->count))
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memset of %llu element%s at offset %llu is outside "
             "buffer '%s' (%llu element%s)",
             n->name, (unsigned long long)m->count, plural(m->count),
             (unsigned long long)m->offset, b->name,
             (unsigned long long)b->count, plural(b->count));
    cudag__pos vpos = pick(m->value_pos, n->pos);
    switch (value_fits(b->type, m->value, true)) {
    case FIT_NOT_INTEGER:
        fail(c, CUDAG_ERANGE, vpos,
             "node '%s': memset value %s is not an integer (buffer '%s' is "
             "%s)",
             n->name, fmt_num(num, m->value), b->name, tn);
        return;
    case FIT_RANGE:
        fail(c, CUDAG_ERANGE, vpos,
             "node '%s': memset value %s is out of range for %s (buffer '%s')",
             n->name, fmt_num(num, m->value), tn, b->name);
        return;
    case FIT_NOT_FINITE:
        fail(c, CUDAG_ERANGE, vpos,
             "node '%s': memset value %s is not finite (buffer '%s' is %s)",
             n->name, fmt_num(num, m->value), b->name, tn);
        return;
    case FIT_OK:
        break;
    }
    /* CUDA memset nodes write 1-, 2- or 4-byte elements: an 8-byte element
     * can only be set to a value whose two 32-bit halves are the same. */
    if (cudag_type_size(b->type) == 8) {
        uint64_t bits = pattern8(b->type, m->value);
        if ((uint32_t)(bits >> 32) != (uint32_t)bits)
            fail(c, CUDAG_ERANGE, vpos,
                 "node '%s': memset value %s cannot be written into 8-byte "
                 "elements (buffer '%s' is %s): CUDA memsets write 4-byte "
                 "words, so the value's two 32-bit halves must be equal",
                 n->name, fmt_num(num, m->value), b->name, tn);
    }
}

static void check_memcpy(ctx *c, const cudag__node *n, uint32_t *uses)
{
    const cudag_graph *g = c->g;
    const cudag__memcpy *m = &n->u.cpy;
    if (m->dst >= g->nbuffers || m->src >= g->nbuffers) {
        fail(c, CUDAG_EUNKNOWN, n->pos,
             "node '%s' refers to buffer index %u, but the graph has %u "
             "buffers",
             n->name, m->dst >= g->nbuffers ? m->dst : m->src, g->nbuffers);
        return;
    }
    const cudag__buffer *d = &g->buffers[m->dst], *s = &g->buffers[m->src];
    uses[m->dst]++;
    uses[m->src]++;
    if (!cudag_type_name(d->type) || !cudag_type_name(s->type))
        return; /* reported with the buffer */
    size_t ds = cudag_type_size(d->type), ss = cudag_type_size(s->type);
    if (ds != ss)
        fail(c, CUDAG_ETYPE, n->pos,
             "node '%s': memcpy from '%s' (%s, %zu bytes) to '%s' (%s, %zu "
             "bytes): element sizes differ",
             n->name, s->name, cudag_type_name(s->type), ss, d->name,
             cudag_type_name(d->type), ds);
    if (m->count == 0) {
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memcpy count is 0 (must be at least 1)", n->name);
        return;
    }
    bool in = true;
    if (!range_ok(m->src_offset, m->count, s->count)) {
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memcpy of %llu element%s at offset %llu is outside "
             "source buffer '%s' (%llu element%s)",
             n->name, (unsigned long long)m->count, plural(m->count),
             (unsigned long long)m->src_offset, s->name,
             (unsigned long long)s->count, plural(s->count));
        in = false;
    }
    if (!range_ok(m->dst_offset, m->count, d->count)) {
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memcpy of %llu element%s at offset %llu is outside "
             "destination buffer '%s' (%llu element%s)",
             n->name, (unsigned long long)m->count, plural(m->count),
             (unsigned long long)m->dst_offset, d->name,
             (unsigned long long)d->count, plural(d->count));
        in = false;
    }
    /* Both ranges are inside the buffer here, so the sums cannot wrap. */
    if (in && m->dst == m->src && m->src_offset < m->dst_offset + m->count &&
        m->dst_offset < m->src_offset + m->count)
        fail(c, CUDAG_ERANGE, n->pos,
             "node '%s': memcpy source and destination overlap in buffer "
             "'%s' (%llu element%s from offset %llu to offset %llu)",
             n->name, d->name, (unsigned long long)m->count, plural(m->count),
             (unsigned long long)m->src_offset,
             (unsigned long long)m->dst_offset);
}

static void check_nodes(ctx *c, uint32_t *uses)
{
    const cudag_graph *g = c->g;
    for (uint32_t i = 0; i < g->nnodes && !full(c); i++) {
        const cudag__node *n = &g->nodes[i];
        switch (n->kind) {
        case CUDAG_NODE_KERNEL:
            check_kernel(c, n, uses);
            break;
        case CUDAG_NODE_MEMSET:
            check_memset(c, n, uses);
            break;
        case CUDAG_NODE_MEMCPY:
            check_memcpy(c, n, uses);
            break;
        default:
            fail(c, CUDAG_EINVAL, n->pos, "node '%s' has an invalid kind %d",
                 n->name, (int)n->kind);
            break;
        }
    }
}

/* ---- edges, order, cycles -------------------------------------------------- */

/* Scratch of the graph part of the check, freed in one place. */
typedef struct work {
    uint32_t *dup;      /* per edge: the earlier edge with the same ends */
    uint32_t *indeg;    /* per node: Kahn's remaining in-degree */
    uint32_t *heap;     /* Kahn's ready nodes, a binary min-heap */
    uint32_t *scc;      /* cycle search: 5 arrays of nnodes, one block */
} work;

static void work_free(work *w)
{
    cudag__free(w->dup);
    cudag__free(w->indeg);
    cudag__free(w->heap);
    cudag__free(w->scc);
}

static bool edge_valid(const cudag_graph *g, const cudag__edge *e)
{
    return e->from < g->nnodes && e->to < g->nnodes &&
           cudag_edge_kind_name(e->kind) != NULL;
}

/*
 * A stable counting sort of edge indices by one end: src[0..m) (or, when src
 * is NULL, every valid edge in index order) goes to dst grouped by the key,
 * and start[0..n] becomes the CSR offsets.  cursor is n words of scratch.
 */
static void sort_edges(const cudag_graph *g, const uint32_t *src, uint32_t m,
                       bool by_from, uint32_t *start, uint32_t *cursor,
                       uint32_t *dst)
{
    uint32_t n = g->nnodes;
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    uint32_t total = src ? m : g->nedges;
    for (uint32_t i = 0; i < total; i++) {
        uint32_t e = src ? src[i] : i;
        if (!src && !edge_valid(g, &g->edges[e]))
            continue;
        start[(by_from ? g->edges[e].from : g->edges[e].to) + 1]++;
    }
    for (uint32_t v = 0; v < n; v++) {
        start[v + 1] += start[v];
        cursor[v] = start[v];
    }
    for (uint32_t i = 0; i < total; i++) {
        uint32_t e = src ? src[i] : i;
        if (!src && !edge_valid(g, &g->edges[e]))
            continue;
        dst[cursor[by_from ? g->edges[e].from : g->edges[e].to]++] = e;
    }
}

const char *cudag__node_kind_name(cudag_node_kind k)
{
    return k == CUDAG_NODE_MEMSET ? "memset" : k == CUDAG_NODE_MEMCPY ? "memcpy"
                                                                     : "kernel";
}

/* " (first written at file:line:col)" when the earlier edge has a position. */
static const char *first_at(const cudag__edge *e, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (e->pos.file && e->pos.line)
        snprintf(buf, cap, " (first written at %s:%u:%u)", e->pos.file,
                 e->pos.line, e->pos.col);
    return buf;
}

static void report_edges(ctx *c, const uint32_t *dup)
{
    const cudag_graph *g = c->g;
    char where[600];
    for (uint32_t i = 0; i < g->nedges && !full(c); i++) {
        const cudag__edge *e = &g->edges[i];
        if (e->from >= g->nnodes || e->to >= g->nnodes) {
            fail(c, CUDAG_EUNKNOWN, e->pos,
                 "edge %u refers to node index %u, but the graph has %u nodes",
                 i, e->from >= g->nnodes ? e->from : e->to, g->nnodes);
            continue;
        }
        const cudag__node *f = &g->nodes[e->from], *t = &g->nodes[e->to];
        if (!cudag_edge_kind_name(e->kind)) {
            fail(c, CUDAG_EEDGE, e->pos, "edge %s -> %s has an invalid kind %d",
                 f->name, t->name, (int)e->kind);
            continue;
        }
        if (e->from == e->to) {
            fail(c, CUDAG_EEDGE, e->pos, "node '%s' depends on itself",
                 f->name);
            continue;
        }
        if (e->kind != CUDAG_EDGE_FULL &&
            (f->kind != CUDAG_NODE_KERNEL || t->kind != CUDAG_NODE_KERNEL)) {
            char which[600];
            if (f->kind != CUDAG_NODE_KERNEL && t->kind != CUDAG_NODE_KERNEL)
                snprintf(which, sizeof which,
                         "'%s' is a %s node, '%s' is a %s node", f->name,
                         cudag__node_kind_name(f->kind), t->name,
                         cudag__node_kind_name(t->kind));
            else if (f->kind != CUDAG_NODE_KERNEL)
                snprintf(which, sizeof which, "'%s' is a %s node", f->name,
                         cudag__node_kind_name(f->kind));
            else
                snprintf(which, sizeof which, "'%s' is a %s node", t->name,
                         cudag__node_kind_name(t->kind));
            fail(c, CUDAG_EEDGE, e->pos,
                 "%s edge %s -> %s: both ends must be kernel nodes (%s)",
                 cudag_edge_kind_name(e->kind), f->name, t->name, which);
        }
        if (dup[i] != CUDAG__NONE) {
            const cudag__edge *e0 = &g->edges[dup[i]];
            if (e0->kind == e->kind)
                fail(c, CUDAG_EEDGE, e->pos, "duplicate edge %s -> %s%s",
                     f->name, t->name, first_at(e0, where, sizeof where));
            else
                fail(c, CUDAG_EEDGE, e->pos,
                     "conflicting edges %s -> %s: %s and %s%s", f->name,
                     t->name, cudag_edge_kind_name(e0->kind),
                     cudag_edge_kind_name(e->kind),
                     first_at(e0, where, sizeof where));
        }
    }
}

static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p] <= v)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, m = l + 1, s = i;
        uint32_t sv = v;
        if (l < *n && h[l] < sv) {
            s = l;
            sv = h[l];
        }
        if (m < *n && h[m] < sv)
            s = m;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Appends to buf[*len..cap) without overrunning it. */
static void put(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap)
        n = *len < cap - 1 ? cap - 1 - *len : 0;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

/* "a -> b -> c -> a" for path[0..len) (path[0] starts and ends it).  A long
 * cycle keeps its head and its tail around "… (N more) …", so that the
 * message stays readable and within the error's fixed size. */
static void cycle_text(const cudag_graph *g, const uint32_t *path, uint32_t len,
                       char *buf, size_t cap)
{
    size_t total = 0, used = 0, budget = cap / 2;
    buf[0] = '\0';
    for (uint32_t i = 0; i < len; i++)
        total += strlen(g->nodes[path[i]].name) + 4;
    total += strlen(g->nodes[path[0]].name);
    if (total < cap - 1) {
        for (uint32_t i = 0; i < len; i++) {
            put(buf, cap, &used, g->nodes[path[i]].name);
            put(buf, cap, &used, " -> ");
        }
        put(buf, cap, &used, g->nodes[path[0]].name);
        return;
    }
    uint32_t head = 0;
    size_t hl = 0;
    while (head < len && hl + strlen(g->nodes[path[head]].name) + 4 < budget)
        hl += strlen(g->nodes[path[head++]].name) + 4;
    if (head == 0)
        head = 1;
    /* The tail: as many of the last nodes as fit in a third of the room. */
    uint32_t tail = len;
    size_t tl = strlen(g->nodes[path[0]].name);
    while (tail > head + 1 &&
           tl + strlen(g->nodes[path[tail - 1]].name) + 4 < cap / 3)
        tl += strlen(g->nodes[path[--tail]].name) + 4;
    for (uint32_t i = 0; i < head; i++) {
        put(buf, cap, &used, g->nodes[path[i]].name);
        put(buf, cap, &used, " -> ");
    }
    char more[64];
    snprintf(more, sizeof more, "... (%u more) -> ", tail - head);
    if (tail > head)
        put(buf, cap, &used, more);
    for (uint32_t i = tail; i < len; i++) {
        put(buf, cap, &used, g->nodes[path[i]].name);
        put(buf, cap, &used, " -> ");
    }
    put(buf, cap, &used, g->nodes[path[0]].name);
}

/*
 * Reports one cycle per strongly connected component of more than one node
 * among the nodes Kahn's algorithm could not order (those with indeg > 0).
 * Tarjan's algorithm with an explicit stack finds the components; in each, a
 * breadth-first search from its lowest-index node finds a shortest cycle
 * back to it, which is printed starting there and reported at the edge that
 * closes it.  O(N + E).  Returns false on OOM.
 */
static bool report_cycles(ctx *c, const cudag__topo *t, const uint32_t *indeg,
                          uint32_t *stk, uint32_t *cs_node, uint32_t *cs_it,
                          work *w)
{
    const cudag_graph *g = c->g;
    uint32_t n = g->nnodes;
    w->scc = cudag__malloc((size_t)n * 5 * sizeof *w->scc);
    if (!w->scc)
        return false;
    uint32_t *idx = w->scc, *low = idx + n, *comp = low + n, *parent = comp + n,
             *queue = parent + n;
    for (uint32_t v = 0; v < n; v++)
        idx[v] = comp[v] = parent[v] = CUDAG__NONE;
    uint32_t counter = 0, nstk = 0, ncomp = 0;
    char text[800];

    for (uint32_t r = 0; r < n && !full(c); r++) {
        if (indeg[r] == 0 || idx[r] != CUDAG__NONE)
            continue;
        uint32_t depth = 0;
        idx[r] = low[r] = counter++;
        stk[nstk++] = r;
        cs_node[depth] = r;
        cs_it[depth++] = t->out_start[r];
        while (depth > 0 && !full(c)) {
            uint32_t v = cs_node[depth - 1];
            if (cs_it[depth - 1] < t->out_start[v + 1]) {
                uint32_t x = g->edges[t->out_edge[cs_it[depth - 1]++]].to;
                if (indeg[x] == 0)
                    continue;   /* ordered by Kahn: on no cycle */
                if (idx[x] == CUDAG__NONE) {
                    idx[x] = low[x] = counter++;
                    stk[nstk++] = x;
                    cs_node[depth] = x;
                    cs_it[depth++] = t->out_start[x];
                } else if (comp[x] == CUDAG__NONE && idx[x] < low[v]) {
                    low[v] = idx[x];    /* x is on the stack */
                }
                continue;
            }
            depth--;
            if (depth > 0 && low[v] < low[cs_node[depth - 1]])
                low[cs_node[depth - 1]] = low[v];
            if (low[v] != idx[v])
                continue;
            /* v roots a component: pop it, noting its lowest-index node. */
            uint32_t id = ncomp++, size = 0, s = v, x;
            do {
                x = stk[--nstk];
                comp[x] = id;
                size++;
                if (x < s)
                    s = x;
            } while (x != v);
            if (size < 2)
                continue;   /* a self-edge: reported as such */
            uint32_t head = 0, tail = 0, last = CUDAG__NONE, closing = 0;
            parent[s] = s;
            queue[tail++] = s;
            while (head < tail && last == CUDAG__NONE) {
                uint32_t u = queue[head++];
                for (uint32_t j = t->out_start[u]; j < t->out_start[u + 1]; j++) {
                    const cudag__edge *e = &g->edges[t->out_edge[j]];
                    if (comp[e->to] != id || e->to == u)
                        continue;
                    if (e->to == s) {
                        last = u;
                        closing = t->out_edge[j];
                        break;
                    }
                    if (parent[e->to] == CUDAG__NONE) {
                        parent[e->to] = u;
                        queue[tail++] = e->to;
                    }
                }
            }
            /* A component of two or more nodes always has a cycle through
             * each of its nodes; `last` is found. */
            uint32_t len = 0;
            for (uint32_t u = last; u != s; u = parent[u])
                len++;
            len++;
            uint32_t k = len;
            for (uint32_t u = last;; u = parent[u]) {
                queue[--k] = u;
                if (u == s)
                    break;
            }
            cycle_text(g, queue, len, text, sizeof text);
            fail(c, CUDAG_ECYCLE, g->edges[closing].pos, "dependency cycle: %s",
                 text);
        }
    }
    return true;
}

/*
 * Sorts the edges into CSR form, reports edge problems and cycles, and
 * computes the topological order and levels into *t.  Returns false on OOM
 * (everything in *t and *w is then the caller's to free).
 */
static bool check_graph(ctx *c, cudag__topo *t, work *w)
{
    const cudag_graph *g = c->g;
    uint32_t n = g->nnodes, m = 0;
    size_t nn = (size_t)n + 1, ne = (size_t)g->nedges + 1;
    t->order = cudag__malloc(nn * sizeof *t->order);
    t->level = cudag__calloc(nn, sizeof *t->level);
    t->out_start = cudag__malloc(nn * sizeof *t->out_start);
    t->in_start = cudag__malloc(nn * sizeof *t->in_start);
    t->out_edge = cudag__malloc(ne * sizeof *t->out_edge);
    t->in_edge = cudag__malloc(ne * sizeof *t->in_edge);
    w->dup = cudag__malloc(ne * sizeof *w->dup);
    w->indeg = cudag__malloc(nn * sizeof *w->indeg);
    w->heap = cudag__malloc(nn * sizeof *w->heap);
    if (!t->order || !t->level || !t->out_start || !t->in_start ||
        !t->out_edge || !t->in_edge || !w->dup || !w->indeg || !w->heap)
        return false;

    /* Three stable counting sorts: by `to`, then by `from` (giving out-edges
     * in (from, to, index) order), then by `to` again (in-edges in (to, from,
     * index) order).  Linear, and deterministic. */
    for (uint32_t i = 0; i < g->nedges; i++)
        m += edge_valid(g, &g->edges[i]);
    sort_edges(g, NULL, 0, false, t->in_start, t->order, t->in_edge);
    sort_edges(g, t->in_edge, m, true, t->out_start, t->order, t->out_edge);
    sort_edges(g, t->out_edge, m, false, t->in_start, t->order, t->in_edge);

    /* Equal ends are adjacent now; the first of a run (lowest index) is the
     * original and the others its duplicates. */
    for (uint32_t i = 0; i < g->nedges; i++)
        w->dup[i] = CUDAG__NONE;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t j = t->out_start[v] + 1; j < t->out_start[v + 1]; j++) {
            uint32_t e = t->out_edge[j], p = t->out_edge[j - 1];
            if (g->edges[e].to == g->edges[p].to)
                w->dup[e] = w->dup[p] == CUDAG__NONE ? p : w->dup[p];
        }
    report_edges(c, w->dup);
    if (full(c))
        return true;

    /* Kahn's algorithm, always taking the lowest-index ready node, so the
     * order depends only on the graph; levels follow in the same pass. */
    uint32_t nheap = 0, done = 0;
    for (uint32_t v = 0; v < n; v++) {
        w->indeg[v] = t->in_start[v + 1] - t->in_start[v];
        if (w->indeg[v] == 0)
            heap_push(w->heap, &nheap, v);
    }
    while (nheap) {
        uint32_t v = heap_pop(w->heap, &nheap);
        t->order[done++] = v;
        for (uint32_t j = t->out_start[v]; j < t->out_start[v + 1]; j++) {
            uint32_t x = g->edges[t->out_edge[j]].to;
            if (t->level[x] < t->level[v] + 1)
                t->level[x] = t->level[v] + 1;
            if (--w->indeg[x] == 0)
                heap_push(w->heap, &nheap, x);
        }
    }
    if (done < n) {
        /* The order and level arrays are not needed once there is a cycle:
         * they become the cycle search's call stack. */
        if (!report_cycles(c, t, w->indeg, w->heap, t->order, t->level, w))
            return false;
        return true;
    }
    uint32_t depth = 0;
    for (uint32_t v = 0; v < n; v++)
        if (t->level[v] + 1 > depth)
            depth = t->level[v] + 1;
    t->depth = depth;
    return true;
}

/* ---- the pass ------------------------------------------------------------ */

int cudag__check(cudag_graph *g, cudag__diag *d)
{
    ctx c = {g, d, CUDAG_OK, false};
    cudag__topo t;
    work w;
    memset(&t, 0, sizeof t);
    memset(&w, 0, sizeof w);
    uint32_t *uses = cudag__calloc((size_t)g->nbuffers + 1, sizeof *uses);
    if (!uses)
        goto oom;

    check_sigs(&c);
    if (!full(&c))
        check_buffers(&c);
    if (!full(&c))
        check_nodes(&c, uses);
    if (!full(&c) && !check_graph(&c, &t, &w))
        goto oom;
    for (uint32_t i = 0; i < g->nbuffers && !full(&c); i++)
        if (uses[i] == 0)
            warn(&c, CUDAG_ECHECK, g->buffers[i].pos,
                 "buffer '%s' is never used", g->buffers[i].name);
    work_free(&w);

    /* A graph that already passed has this very topology (the check is
     * deterministic and any change un-checks it), so it is left alone: then
     * several threads may check a checked graph at once, reading only. */
    if (c.first == CUDAG_OK && !full(&c) && !g->checked) {
        for (uint32_t i = 0; i < g->nbuffers; i++)
            g->buffers[i].uses = uses[i];
        g->topo = t;
        g->checked = true;
    } else {
        cudag__topo_free(&t);
        /* Errors in a graph marked checked mean its IR was changed behind
         * the builder's back: what was derived from it is stale.  A warning
         * that CUDAG_WERROR counts as an error changes nothing: checking a
         * checked graph stays a read, which other threads may share. */
        if (c.broken && g->checked)
            cudag__graph_touch(g);
    }
    cudag__free(uses);
    return c.first;

oom:
    work_free(&w);
    cudag__topo_free(&t);
    cudag__free(uses);
    return fail(&c, CUDAG_ENOMEM, CUDAG__NOPOS,
                "out of memory checking graph '%s'", g->name);
}
