/* bounds.c — a variable's entry in `vars` and its bounds:
 *
 *   entry    := EXPR | '{' 'value' ':' EXPR (',' bound)* '}'
 *   bound    := ('min' | 'max' | 'multiple') ':' EXPR
 *
 * (the keys in any order, the mapping in block or flow style).  A bound
 * may name any variable of its scope, those after its own too, and sees
 * the values -D gave: so it is checked once every variable has its value,
 * or earlier, as soon as its variable has its value, where it names only
 * variables before it (then a value computed from one out of bounds is not
 * computed at all: the mistake is said at the bound).  For a graph's own
 * variables (front/vars.c) and a child graph file's (kinds/child.c) alike:
 * below both, in yaml/. */
#include "yaml/bounds.h"
#include "cudag.h"
#include "base/diag.h"
#include "base/map.h"
#include "ir/types.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cudag__var_entry_keys[4] = {"value", "min", "max",
                                              "multiple"};
#define NKEYS (sizeof cudag__var_entry_keys / sizeof *cudag__var_entry_keys)
/* A bound or value as shown in a message (cut there: a message holds
 * 1 KiB). */
#define BUF 400

const cudag__doc *cudag__var_entry_value(const cudag__doc *v)
{
    return v->type == CUDAG__DOC_MAP ? cudag__doc_get(v, "value") : v;
}

const cudag__doc *cudag__var_value(cudag__lower *lw, const cudag__doc *k,
                                   const cudag__doc *v)
{
    if (v->type != CUDAG__DOC_MAP)
        return v;
    char what[CUDAG__MAX_NAME + 16];
    snprintf(what, sizeof what, "variable '%s'", k->str);
    unsigned unknown =
        cudag__check_keys(lw, v, cudag__var_entry_keys, NKEYS, what);
    for (size_t i = 1; i < NKEYS; i++) {
        const cudag__doc *b = cudag__doc_get(v, cudag__var_entry_keys[i]);
        if (b && b->type != CUDAG__DOC_SCALAR)
            cudag__lerr(lw, CUDAG_EEXPR, b->pos,
                        "'%s' of variable '%s' must be a number or an "
                        "expression, not %s",
                        cudag__var_entry_keys[i], k->str, cudag__doc_what(b));
    }
    const cudag__doc *value = cudag__var_entry_value(v);
    /* `valeu: 1` is one mistake, said by its unknown key. */
    if (!value && !unknown)
        cudag__lerr(lw, CUDAG_EKEY, k->pos,
                    "variable '%s' has no 'value' (the mapping form is "
                    "{value: EXPR, min: EXPR, max: EXPR, multiple: EXPR})",
                    k->str);
    return value;
}

static double as_double(cudag__num n)
{
    return n.fl ? n.f : (double)n.i;
}

/* a < b, in floating point (fl) or as integers (a double holds every
 * int64_t only up to 2^53). */
static bool below(cudag__num a, cudag__num b, bool fl)
{
    return fl ? as_double(a) < as_double(b) : a.i < b.i;
}

/* "17", or "NH/NKV = 16" where the text written is not the number itself,
 * into buf. */
static const char *describe(char *buf, size_t cap, const char *text,
                            size_t len, cudag__num n)
{
    char num[40];
    if (n.fl)
        cudag__fmt_num(num, n.f);
    else
        snprintf(num, sizeof num, "%lld", (long long)n.i);
    while (text && len && (*text == ' ' || *text == '\t'))
        text++, len--;
    while (text && len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    if (!text || len == 0) {
        snprintf(buf, cap, "%s", num);
        return buf;
    }
    /* A number written as one (17, 0x10, 1e-5) is shown as written. */
    char lit[64];
    char *end = lit;
    double d = 0;
    if (len < sizeof lit) {
        memcpy(lit, text, len);
        lit[len] = '\0';
        d = strtod(lit, &end);
    }
    if (len < sizeof lit && *end == '\0' && d == as_double(n))
        snprintf(buf, cap, "%s", lit);
    else
        snprintf(buf, cap, "%.*s = %s", (int)len, text, num);
    return buf;
}

/* " (from A and B)", " (from A)" or "" for neither, into buf: where the
 * value and the bound compared came from. */
static const char *why(char *buf, size_t cap, const char *a, const char *b)
{
    if (!a || (b && strcmp(a, b) == 0))
        a = b, b = NULL;
    if (!a)
        snprintf(buf, cap, "%s", "");
    else
        snprintf(buf, cap, " (from %s%s%s)", a, b ? " and " : "", b ? b : "");
    return buf;
}

static bool in_map(void *ctx, const char *name)
{
    return cudag__map_get(ctx, name, NULL);
}

/* The scope of an early check: its variables so far. */
typedef struct early_scope {
    const cudag__lower *lw;
    const cudag__binding *env;
} early_scope;

static bool not_yet(void *ctx, const char *name)
{
    const early_scope *es = ctx;
    for (const cudag__binding *b = es->env; b; b = b->up)
        if (strcmp(b->name, name) == 0)
            return false;
    return es->lw->nchild || cudag__find_var(es->lw->g, name) == CUDAG__NONE;
}

static int check(cudag__lower *lw, const cudag__bounded *b,
                 const cudag__binding *env, bool *waits);

int cudag__check_bounds(cudag__lower *lw, const cudag__bounded *b,
                        const cudag__binding *env, cudag__map *record)
{
    /* Early, a variable computed from one whose check waits waits too, so
     * that the mistake is said at the first; later, one computed from a
     * variable out of bounds is not checked: B = 17 above its max says all
     * there is about BK = B*KB above its own. */
    if (record && cudag__each_name(b->text, b->len, in_map, record)) {
        if (cudag__map_put(record, b->key->str, 0) != CUDAG_OK)
            return cudag__lerr(lw, CUDAG_ENOMEM, b->key->pos, "out of memory");
        return b->early ? CUDAG_OK : CUDAG__EBAD;
    }
    bool waits = false;
    int rc = check(lw, b, env, &waits);
    if (rc != CUDAG_OK && rc != CUDAG__EBAD)
        lw->nbounds++;
    if (record && (waits || (rc != CUDAG_OK && !b->early)) &&
        cudag__map_put(record, b->key->str, 0) != CUDAG_OK)
        return cudag__lerr(lw, CUDAG_ENOMEM, b->key->pos, "out of memory");
    return rc;
}

/* Checks b; early, sets *waits and returns CUDAG_OK where the check must
 * wait for the later pass. */
static int check(cudag__lower *lw, const cudag__bounded *b,
                 const cudag__binding *env, bool *waits)
{
    const cudag__doc *v = b->entry;
    if (v->type != CUDAG__DOC_MAP)
        return CUDAG_OK;
    const char *name = b->key->str;
    bool fl = b->value.fl;
    enum { MIN, MAX, MULTIPLE, NBOUNDS };
    const cudag__doc *d[NBOUNDS];
    cudag__num lim[NBOUNDS];
    cudag__scope sc = cudag__scope_of(lw, env);
    for (int i = 0; i < NBOUNDS; i++) {
        d[i] = cudag__doc_get(v, cudag__var_entry_keys[i + 1]);
        /* A bound that is not a scalar was reported with the entry. */
        if (d[i] && d[i]->type != CUDAG__DOC_SCALAR)
            d[i] = NULL;
        if (!d[i])
            continue;
        /* Early, a bound that names a variable not defined yet leaves the
         * whole check to the later pass (and a mistake to report there). */
        early_scope es = {lw, env};
        if (b->early && ((i == MULTIPLE && fl) ||
                         cudag__each_name(d[i]->str, d[i]->len, not_yet, &es)))
            return (*waits = true), CUDAG_OK;
        if (i == MULTIPLE && fl)
            return cudag__lerr(lw, CUDAG_ETYPE, d[i]->pos,
                               "'%s' is a floating-point variable: "
                               "'multiple' is for integer variables",
                               name);
        int rc = cudag__expr_eval_num(
            d[i]->str, d[i]->len, cudag__doc_pos_at(d[i], 0), &sc,
            fl ? CUDAG__EXPR_FLOAT : CUDAG__EXPR_INT, lw->d, &lim[i]);
        if (rc != CUDAG_OK)
            return rc;
    }
    char val[BUF], lo[BUF], hi[BUF], w[BUF];
    describe(val, sizeof val, b->text, b->len, b->value);
    if (d[MIN])
        describe(lo, sizeof lo, d[MIN]->str, d[MIN]->len, lim[MIN]);
    if (d[MAX])
        describe(hi, sizeof hi, d[MAX]->str, d[MAX]->len, lim[MAX]);
    if (d[MULTIPLE] && lim[MULTIPLE].i < 1) {
        char m[BUF];
        return cudag__lerr(lw, CUDAG_ERANGE, d[MULTIPLE]->pos,
                           "'multiple' of variable '%s' must be at least 1, "
                           "not %s",
                           name,
                           describe(m, sizeof m, d[MULTIPLE]->str,
                                    d[MULTIPLE]->len, lim[MULTIPLE]));
    }
    /* Said first: no value would do, and the bounds are what to fix. */
    if (d[MIN] && d[MAX] && below(lim[MAX], lim[MIN], fl))
        return cudag__lerr(lw, CUDAG_ERANGE, d[MAX]->pos,
                           "variable '%s' can take no value: its max %s is "
                           "below its min %s%s",
                           name, hi, lo,
                           why(w, sizeof w, b->why[1], b->why[2]));
    if (d[MIN] && below(b->value, lim[MIN], fl))
        return cudag__lerr(lw, CUDAG_ERANGE, d[MIN]->pos,
                           "%s = %s is below its min %s%s", name, val, lo,
                           why(w, sizeof w, b->why[0], b->why[1]));
    if (d[MAX] && below(lim[MAX], b->value, fl))
        return cudag__lerr(lw, CUDAG_ERANGE, d[MAX]->pos,
                           "%s = %s is above its max %s%s", name, val, hi,
                           why(w, sizeof w, b->why[0], b->why[2]));
    if (d[MULTIPLE] && b->value.i % lim[MULTIPLE].i != 0) {
        char m[BUF];
        return cudag__lerr(lw, CUDAG_ERANGE, d[MULTIPLE]->pos,
                           "%s = %s is not a multiple of %s%s", name, val,
                           describe(m, sizeof m, d[MULTIPLE]->str,
                                    d[MULTIPLE]->len, lim[MULTIPLE]),
                           why(w, sizeof w, b->why[0], b->why[3]));
    }
    return CUDAG_OK;
}
