/* buffers.c — the `buffers` (type, count, initial contents) and
 * `conditions` sections.  Its own file: the data the nodes name, lowered
 * after the kernels and before the nodes. */
#include "front/buffers.h"
#include "cudag.h"
#include "base/diag.h"
#include "base/names.h"
#include "base/text.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "front/vars.h"

#include <stdbool.h>

#include <stdint.h>
#include <string.h>

/* The init, seed and range of a buffer of element type ty into b.  A
 * constant is computed in floating point for a floating-point buffer. */
static int lower_init(cudag__lower *lw, const cudag__doc *v, cudag_type ty,
                      cudag__buffer *b)
{
    const cudag__doc *init = cudag__doc_get(v, "init");
    const cudag__doc *seed = cudag__doc_get(v, "seed");
    const cudag__doc *range = cudag__doc_get(v, "range");
    b->init.kind = CUDAG_INIT_NONE;
    if (init) {
        double c;
        if (!cudag__want(lw, init, CUDAG__DOC_SCALAR, "init"))
            return CUDAG_EKEY;
        if (strcmp(init->str, "zero") == 0) {
            b->init.kind = CUDAG_INIT_ZERO;
        } else if (strcmp(init->str, "iota") == 0) {
            b->init.kind = CUDAG_INIT_IOTA;
        } else if (strcmp(init->str, "random") == 0) {
            b->init.kind = CUDAG_INIT_RANDOM;
            b->init.seed = 1;
            b->init.lo = -1.0;
            b->init.hi = 1.0;
        } else if (cudag__parse_float(init->str, init->len, &c)) {
            b->init.kind = CUDAG_INIT_CONST;
            b->init.value = c;
        } else {
            cudag__num iv;
            cudag__diag quiet = *lw->d;
            /* An expression is a constant; anything else gets the list of
             * what init takes rather than an expression error. */
            quiet.fn = NULL;
            quiet.first = NULL;
            cudag__scope sc = cudag__scope_of(lw, NULL);
            int rc = cudag__expr_eval_num(
                init->str, init->len, init->pos, &sc,
                cudag__is_float_type(ty) ? CUDAG__EXPR_FLOAT : CUDAG__EXPR_ANY,
                &quiet, &iv);
            if (rc == CUDAG__EBAD)
                return rc;
            if (rc != CUDAG_OK) {
                static const char *const words[] = {"zero", "iota", "random"};
                const char *best = cudag__suggest(init->str, words, 3);
                return cudag__lerr(lw, CUDAG_EKEY, init->pos,
                                   "init must be zero, iota, random or a "
                                   "number, not '%s'%s%s%s",
                                   init->str, best ? " (did you mean '" : "",
                                   best ? best : "", best ? "'?)" : "");
            }
            b->init.kind = CUDAG_INIT_CONST;
            b->init.value = iv.fl ? iv.f : (double)iv.i;
        }
    }
    if ((seed || range) && b->init.kind != CUDAG_INIT_RANDOM)
        return cudag__lerr(lw, CUDAG_EKEY, (seed ? seed : range)->pos,
                           "'%s' only goes with 'init: random'",
                           seed ? "seed" : "range");
    if (seed) {
        int64_t s;
        if (cudag__eval(lw, seed, NULL, &s) != CUDAG_OK)
            return CUDAG_EEXPR;
        if (s < 0)
            return cudag__lerr(lw, CUDAG_ERANGE, seed->pos,
                               "seed must not be negative");
        b->init.seed = (uint64_t)s;
    }
    if (range) {
        if (range->type != CUDAG__DOC_SEQ || range->n != 2)
            return cudag__lerr(lw, CUDAG_EKEY, range->pos,
                               "range must be a list of two numbers [lo, hi]");
        double lim[2];
        for (int j = 0; j < 2; j++) {
            int rc = cudag__eval_float(lw, range->items[j], NULL, &lim[j]);
            if (rc != CUDAG_OK)
                return rc;
        }
        if (!(lim[0] < lim[1]))
            return cudag__lerr(lw, CUDAG_ERANGE, range->pos,
                               "range [%g, %g] is empty: lo must be below hi",
                               lim[0], lim[1]);
        b->init.lo = lim[0];
        b->init.hi = lim[1];
    }
    return CUDAG_OK;
}

/* A count below 1, reported where the mistake is, once: at the -D that set
 * a variable the count names ("-D N=-5: …"), at the variable a count of
 * just its name takes (vars: {N: -4}), else at the count.  The other
 * buffers counted by the same variable repeat it at the same place, which
 * says nothing more. */
static void bad_count(cudag__lower *lw, const cudag__doc *k,
                      const cudag__doc *count, int64_t n)
{
    const cudag__define *df = cudag__define_behind(lw, count);
    uint32_t v = CUDAG__NONE;
    if (count->type == CUDAG__DOC_SCALAR &&
        cudag__ident_end(count->str, 0, count->len) == count->len)
        v = cudag__find_var(lw->g, count->str);
    if (df)
        cudag__lerr(lw, CUDAG_ERANGE, df->pos,
                    "-D %s=%s: buffer '%s' needs a count of at least 1, not "
                    "%lld",
                    df->name, df->expr, k->str, (long long)n);
    else if (v != CUDAG__NONE && lw->g->vars[v].pos.line)
        cudag__lerr(lw, CUDAG_ERANGE, lw->g->vars[v].pos,
                    "variable '%s' is %lld, the count of buffer '%s' (a "
                    "count is at least 1)",
                    count->str, (long long)n, k->str);
    else
        cudag__lerr(lw, CUDAG_ERANGE, count->pos,
                    "buffer '%s' needs a count of at least 1, not %lld",
                    k->str, (long long)n);
}

void cudag__lower_buffers(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *bufs = cudag__doc_get(f->root, "buffers");
    if (!bufs || !cudag__want(lw, bufs, CUDAG__DOC_MAP, "buffers"))
        return;
    static const char *const keys[] = {"type", "count", "init", "seed", "range"};
    for (uint32_t i = 0; i < bufs->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = bufs->items[2 * i], *v = bufs->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__name_ok(lw, k, "buffer"))
            continue;
        /* From here on a mistake leaves the buffer out, marked bad. */
        if (!cudag__want(lw, v, CUDAG__DOC_MAP, "a buffer") ||
            cudag__check_keys(lw, v, keys, 5, "a buffer"))
            goto bad;
        const cudag__doc *type = cudag__doc_get(v, "type");
        const cudag__doc *count = cudag__doc_get(v, "count");
        if (!type || !count) {
            cudag__lerr(lw, CUDAG_EKEY, k->pos, "buffer '%s' needs '%s'",
                        k->str, type ? "count" : "type");
            goto bad;
        }
        if (!cudag__want(lw, type, CUDAG__DOC_SCALAR, "a buffer's type"))
            goto bad;
        cudag_type ty = cudag__type_parse(type->str, type->len);
        if (!cudag__is_elem_type(ty)) {
            cudag__bad_type(lw, type->pos, type->str, true);
            goto bad;
        }
        int64_t n;
        if (cudag__eval(lw, count, NULL, &n) != CUDAG_OK)
            goto bad;
        if (n < 1) {
            bad_count(lw, k, count, n);
            goto bad;
        }
        cudag__buffer tmp;
        memset(&tmp, 0, sizeof tmp);
        if (lower_init(lw, v, ty, &tmp) != CUDAG_OK)
            goto bad;
        cudag__buffer *b;
        cudag_error e;
        if (cudag__add_buffer(lw->g, k->str, k->pos, &b, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        b->type = ty;
        b->count = (uint64_t)n;
        b->count_pos = count->pos;
        b->init = tmp.init;
        const cudag__doc *where = cudag__doc_get(v, "range");
        if (tmp.init.kind != CUDAG_INIT_RANDOM || !where)
            where = cudag__doc_get(v, "init");
        if (where)
            b->init_pos = where->pos;
        continue;
    bad:
        cudag__mark_bad(lw, CUDAG__NS_BUFFER, k->str);
    }
}

/* conditions: NAME: {default: EXPR} — or {} for no default. */
void cudag__lower_conditions(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *conds = cudag__doc_get(f->root, "conditions");
    if (!conds || !cudag__want(lw, conds, CUDAG__DOC_MAP, "conditions"))
        return;
    static const char *const keys[] = {"default"};
    for (uint32_t i = 0; i < conds->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = conds->items[2 * i], *v = conds->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__name_ok(lw, k, "condition") ||
            !cudag__want(lw, v, CUDAG__DOC_MAP, "a condition") ||
            cudag__check_keys(lw, v, keys, 1, "a condition"))
            continue;
        const cudag__doc *dflt = cudag__doc_get(v, "default");
        int64_t value = 0;
        if (dflt && cudag__eval(lw, dflt, NULL, &value) != CUDAG_OK)
            continue;
        if (dflt && (value < 0 || value > (int64_t)UINT32_MAX)) {
            cudag__lerr(lw, CUDAG_ERANGE, dflt->pos,
                        "condition '%s': default %lld is out of range (0 to "
                        "4294967295)",
                        k->str, (long long)value);
            continue;
        }
        cudag__cond *c;
        cudag_error e;
        if (cudag__add_cond(lw->g, k->str, k->pos, &c, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        c->has_default = dflt != NULL;
        c->value = (uint32_t)value;
        if (dflt)
            c->default_pos = dflt->pos;
    }
}
