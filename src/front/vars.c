/* vars.c — the -D defines, each file's header (`cudag:`, `name`, `order`,
 * the top-level keys) and its `vars`.  Its own file: variables are lowered
 * before every other section, which evaluate expressions over them. */
#include "front/vars.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "yaml/bounds.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

static int add_defines(cudag__lower *lw, const char *const *defs,
                       const char *where, bool call)
{
    for (size_t i = 0; defs && defs[i]; i++) {
        const char *s = defs[i];
        const char *eq = strchr(s, '=');
        /* Line i of "<command line>" is its i-th define, so that each has
         * a position of its own. */
        cudag__pos pos = {where, (uint32_t)i + 1, 1};
        if (!eq || !cudag__is_ident(s, (size_t)(eq - s)))
            return cudag__lerr(lw, CUDAG_EINVAL, pos,
                               "-D '%s': expected NAME=VALUE", s);
        cudag__define *df = &lw->defs[lw->ndefs++];
        df->name = cudag__arena_strndup(&lw->scratch, s, (size_t)(eq - s));
        df->expr = cudag__arena_strdup(&lw->scratch, eq + 1);
        if (!df->name || !df->expr)
            return cudag__lerr(lw, CUDAG_ENOMEM, pos, "out of memory");
        df->len = strlen(df->expr);
        pos.col = (uint32_t)(eq - s) + 2;
        df->pos = pos;
        df->call = call;
    }
    return CUDAG_OK;
}

/* The defines of the options, then those of cudag_exec_set_var. */
int cudag__parse_defines(cudag__lower *lw, const char *const *defs,
                         const char *const *extra)
{
    size_t n = 0, m = 0;
    while (defs && defs[n])
        n++;
    while (extra && extra[m])
        m++;
    n += m;
    lw->defs = cudag__arena_alloc(&lw->scratch, (n + 1) * sizeof *lw->defs);
    if (!lw->defs)
        return cudag__lerr(lw, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    int rc = add_defines(lw, defs, "<command line>", false);
    if (rc == CUDAG_OK)
        rc = add_defines(lw, extra, "<cudag_exec_set_var>", true);
    return rc;
}

/* The last define of `name` wins, as on a compiler's command line. */
cudag__define *cudag__find_define(cudag__lower *lw, const char *name)
{
    for (uint32_t i = lw->ndefs; i-- > 0;)
        if (strcmp(lw->defs[i].name, name) == 0)
            return &lw->defs[i];
    return NULL;
}

/* What behind() looks for (latest and deep: see there) and what it found so
 * far. */
typedef struct behind_scan {
    cudag__lower *lw;
    bool latest;
    unsigned deep; /* variables' values still to follow, one inside another */
    const cudag__define *found;
} behind_scan;

static bool same_pos(cudag__pos a, cudag__pos b)
{
    return a.file == b.file && a.line == b.line && a.col == b.col;
}

/* The value the graph's own files write for its variable `name` (the entry
 * at the variable's place: not one of the same name that lost to it), or
 * NULL: none, or inside a child file, whose variables are not the graph's. */
static const cudag__doc *written_value(cudag__lower *lw, const char *name)
{
    uint32_t x = lw->nchild ? CUDAG__NONE : cudag__find_var(lw->g, name);
    if (x == CUDAG__NONE)
        return NULL;
    const cudag__pos at = lw->g->vars[x].pos;
    for (uint32_t i = 0; i < lw->src->nfiles; i++) {
        const cudag__doc *vars = cudag__doc_get(lw->src->files[i].root, "vars");
        for (uint32_t j = 0; vars && vars->type == CUDAG__DOC_MAP && j < vars->n; j++) {
            const cudag__doc *k = vars->items[2 * j];
            if (same_pos(k->pos, at))
                return cudag__var_entry_value(vars->items[2 * j + 1]);
        }
    }
    return NULL;
}

static bool behind_name(void *ctx, const char *name)
{
    behind_scan *bs = ctx;
    const cudag__define *df = cudag__find_define(bs->lw, name);
    if (!df || !df->used) {
        /* No define of its own: one behind the value it is computed from
         * (HD behind AO: min(1, 16 % (HD/8))), so far as deep goes. */
        const cudag__doc *v = bs->deep ? written_value(bs->lw, name) : NULL;
        if (!v || v->type != CUDAG__DOC_SCALAR)
            return false;
        bs->deep--;
        bool stop = cudag__each_name(v->str, v->len, behind_name, bs);
        bs->deep++;
        return stop;
    }
    if (!bs->found || (bs->latest && df->call && df > bs->found))
        bs->found = df;
    return !bs->latest;
}

/* The define behind v: of the first variable it names that a -D set; or
 * (latest) where one of them was set by cudag_exec_set_var, the one given
 * last of those.  deep > 0 follows a variable no define set into its own
 * value, that many levels (a bound's message names the -D behind a helper
 * variable); 0 keeps to the names v writes. */
static const cudag__define *behind(cudag__lower *lw, const cudag__doc *v,
                                   bool latest, unsigned deep)
{
    behind_scan bs = {lw, latest, deep, NULL};
    if (v->type == CUDAG__DOC_SCALAR)
        cudag__each_name(v->str, v->len, behind_name, &bs);
    return bs.found;
}

/* The define behind a value that is wrong: that of the first variable the
 * expression v names that a -D set, or NULL.  The error is then reported at
 * the define ("-D N=-5: …"), and only once: every other use of it repeats
 * the same mistake at the same place. */
const cudag__define *cudag__define_behind(cudag__lower *lw,
                                          const cudag__doc *v)
{
    return behind(lw, v, false, 0);
}

static const char *const top_keys[] = {
    "cudag", "name", "description", "include", "vars", "modules",
    "kernels", "buffers", "conditions", "nodes", "edges", "order",
};

int cudag__lower_header(cudag__lower *lw, const cudag__file *f, bool top)
{
    cudag__pos start = {f->path, 1, 1};
    if (!f->root)
        return cudag__lerr(lw, CUDAG_EKEY, start,
                           "empty file: a cudag file starts with 'cudag: %d'",
                           CUDAG_FORMAT_VERSION);
    if (!cudag__want(lw, f->root, CUDAG__DOC_MAP, "a cudag file"))
        return CUDAG_EKEY;
    cudag__check_keys(lw, f->root, top_keys,
                      sizeof top_keys / sizeof *top_keys, "the top level");
    /* A child graph file (or a fragment meant for `include`) checked on its
     * own names buffers and kernels it does not declare: one error saying
     * what to check instead of one for each name. */
    const cudag__doc *nodes = cudag__doc_get(f->root, "nodes");
    static const char *const own[] = {"include", "modules", "kernels",
                                      "buffers", "conditions"};
    bool declares = false;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        declares = declares || cudag__doc_get(f->root, own[i]);
    if (top && !declares && nodes && nodes->type == CUDAG__DOC_MAP &&
        nodes->n > 0)
        return cudag__lerr(lw, CUDAG_EKEY, f->root->pos,
                           "'%s' has nodes but declares no buffers, kernels "
                           "or includes: a child graph file (or a file meant "
                           "for 'include') uses its parent's; check the graph "
                           "that uses it (graph: %s)",
                           f->path, f->path);
    const cudag__doc *v = cudag__doc_get(f->root, "cudag");
    if (!v)
        return cudag__lerr(lw, CUDAG_EKEY, f->root->pos,
                           "missing 'cudag: %d' (the format version)",
                           CUDAG_FORMAT_VERSION);
    if (cudag__check_version(lw, v) != CUDAG_OK)
        return CUDAG_EKEY;
    const cudag__doc *order = cudag__doc_get(f->root, "order");
    if (order && !top)
        return cudag__lerr(lw, CUDAG_EKEY, order->pos,
                           "'order' belongs to the top file: it orders the "
                           "whole graph (its bodies and child graphs "
                           "included), not an included file's part");
    if (order && cudag__want(lw, order, CUDAG__DOC_SCALAR, "order")) {
        if (strcmp(order->str, "program") == 0)
            lw->g->order = CUDAG__ORDER_PROGRAM;
        else if (strcmp(order->str, "edges") == 0)
            lw->g->order = CUDAG__ORDER_EDGES;
        else
            return cudag__lerr(lw, CUDAG_EKEY, order->pos,
                               "order: '%s' is not an order: 'program' (the "
                               "nodes run as if in written order, edges "
                               "inferred from what they read and write) or "
                               "'edges' (only the edges written; the "
                               "default)",
                               order->str);
    }
    const cudag__doc *name = cudag__doc_get(f->root, "name");
    if (name && cudag__want(lw, name, CUDAG__DOC_SCALAR, "name")) {
        if (name->len == 0 || name->len > CUDAG__MAX_NAME)
            return cudag__lerr(lw, CUDAG_EKEY, name->pos,
                               "a graph name has 1 to %u bytes",
                               CUDAG__MAX_NAME);
        if (top && !(lw->g->name = cudag__arena_strdup(&lw->g->arena, name->str)))
            return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    }
    return CUDAG_OK;
}

/* A variable's value in the file: an integer, or floating point where a
 * floating-point number or variable is in it. */
static int eval_var(cudag__lower *lw, const cudag__doc *v, cudag__num *out)
{
    if (v->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EEXPR, v->pos,
                           "a variable's value must be a number or an "
                           "expression, not %s",
                           cudag__doc_what(v));
    cudag__scope sc = cudag__scope_of(lw, NULL);
    return cudag__expr_eval_num(v->str, v->len, cudag__doc_pos_at(v, 0), &sc,
                                CUDAG__EXPR_ANY, lw->d, out);
}

/* The value -D gives variable `name`, of the kind the file gives it: a
 * floating-point variable takes an integer as a double; an integer one
 * refuses a floating-point value.  (The file's kind is what its value
 * evaluates to, quietly: its errors are reported where it is used.) */
static int eval_define(cudag__lower *lw, const cudag__define *df,
                       const char *name, const cudag__doc *v, cudag__num *out)
{
    cudag__scope sc = cudag__scope_of(lw, NULL);
    /* Its error names the define: "<command line>" has no line to show. */
    cudag_error e;
    cudag__diag one;
    cudag__diag_init(&one, NULL, &e);
    int rc = cudag__expr_eval_num(df->expr, df->len, df->pos, &sc,
                                  CUDAG__EXPR_ANY, &one, out);
    if (rc != CUDAG_OK && one.nerr)
        return cudag__lerr(lw, rc,
                           (cudag__pos){df->pos.file, (uint32_t)e.line,
                                        (uint32_t)e.column},
                           "-D %s=%s: %s", name, df->expr, e.message);
    if (rc != CUDAG_OK)
        return rc;
    cudag__diag quiet = *lw->d;
    quiet.fn = NULL;
    quiet.first = NULL;
    cudag__num file;
    if (v->type != CUDAG__DOC_SCALAR ||
        cudag__expr_eval_num(v->str, v->len, v->pos, &sc, CUDAG__EXPR_ANY,
                             &quiet, &file) != CUDAG_OK)
        return CUDAG_OK;
    if (file.fl && !out->fl)
        *out = (cudag__num){.f = (double)out->i, .fl = true};
    else if (!file.fl && out->fl)
        return cudag__lerr(lw, CUDAG_ETYPE, df->pos,
                           "'%s' is an integer variable, and %s is not an "
                           "integer",
                           name, df->expr);
    return CUDAG_OK;
}

/* How many variables, one computed from another, a bound's message follows
 * to the define behind them. */
enum { HELPERS = 8 };

/* "-D B=17", or "cudag_exec_set_var B=17", into buf. */
static const char *origin(char *buf, size_t cap, const cudag__define *df)
{
    snprintf(buf, cap, "%s %s=%s", df->call ? "cudag_exec_set_var" : "-D",
             df->name, df->expr);
    return buf;
}

/* Checks variable k's bounds (entry v, of value `value`; df: the define
 * that gave it, or NULL) through cudag__check_bounds, early or not, with
 * its record. */
static int bounds(cudag__lower *lw, const cudag__doc *k, const cudag__doc *v,
                  cudag__num value, const cudag__define *df, bool early,
                  cudag__map *record)
{
    const cudag__doc *e = cudag__var_entry_value(v);
    cudag__bounded b = {
        .key = k,
        .entry = v,
        .value = value,
        .text = df ? df->expr : e->str,
        .len = df ? df->len : e->len,
        .early = early,
    };
    /* The -D (or cudag_exec_set_var) behind the value and behind each
     * bound, named in a violation: the file alone does not show it.  Of
     * cudag_exec_set_var's, the one given last: after a refused call, the
     * value that call gave. */
    char why[4][CUDAG__MAX_NAME + 300];
    for (int j = 0; j < 4 && v->type == CUDAG__DOC_MAP; j++) {
        const cudag__doc *x = cudag__doc_get(v, cudag__var_entry_keys[j]);
        const cudag__define *by = j == 0 && df ? df
                                  : x ? behind(lw, x, true, HELPERS)
                                      : NULL;
        b.why[j] = by ? origin(why[j], sizeof why[j], by) : NULL;
    }
    return cudag__check_bounds(lw, &b, NULL, record);
}

void cudag__lower_vars(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *vars = cudag__doc_get(f->root, "vars");
    if (!vars || !cudag__want(lw, vars, CUDAG__DOC_MAP, "vars"))
        return;
    for (uint32_t i = 0; i < vars->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = vars->items[2 * i], *v = vars->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__name_ok(lw, k, "variable"))
            continue;
        const cudag__doc *entry = v;
        v = cudag__var_value(lw, k, v);
        if (!v) {
            cudag__mark_bad(lw, CUDAG__NS_VAR, k->str);
            continue;
        }
        cudag__num value;
        cudag__define *df = cudag__find_define(lw, k->str);
        int rc = CUDAG_EEXPR;
        if (df) {
            df->used = true;
            rc = eval_define(lw, df, k->str, v, &value);
        }
        /* A define that fails has been reported; the file's value stands in
         * for it, so that the variable's uses are checked and say nothing
         * more about that one mistake. */
        const cudag__define *by = rc == CUDAG_OK ? df : NULL;
        if (rc != CUDAG_OK)
            rc = eval_var(lw, v, &value);
        /* Bounds over the variables before it, checked now: a variable
         * out of them is left out, so that those after it, computed from
         * it, say nothing more (B = 0 is the mistake, not cdiv(264, B)). */
        if (rc == CUDAG_OK)
            rc = bounds(lw, k, entry, value, by, true, &lw->waiting);
        cudag__var *var;
        if (rc != CUDAG_OK) {
            cudag__mark_bad(lw, CUDAG__NS_VAR, k->str);
            continue;
        }
        cudag_error e;
        if (cudag__add_var(lw->g, k->str, k->pos, &var, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        var->is_float = value.fl;
        var->value = value.fl ? 0 : value.i;
        var->f = value.fl ? value.f : (double)value.i;
        var->overridden = df != NULL;
    }
}

/* Checks the bounds of f's variables; out: those out of bounds so far. */
static void file_bounds(cudag__lower *lw, const cudag__file *f, cudag__map *out)
{
    const cudag__doc *vars = cudag__doc_get(f->root, "vars");
    if (!vars || vars->type != CUDAG__DOC_MAP)
        return;
    for (uint32_t i = 0; i < vars->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = vars->items[2 * i], *v = vars->items[2 * i + 1];
        const cudag__doc *value = cudag__var_entry_value(v);
        uint32_t x = cudag__find_var(lw->g, k->str);
        if (cudag__free_key(k) || !value || x == CUDAG__NONE ||
            cudag__is_bad(lw, CUDAG__NS_VAR, k->str))
            continue;
        /* The variable of this entry, not one of the same name declared
         * before it (reported as a duplicate). */
        const cudag__var *var = &lw->g->vars[x];
        if (!same_pos(var->pos, k->pos))
            continue;
        const cudag__define *df =
            var->overridden ? cudag__find_define(lw, k->str) : NULL;
        cudag__num now = {.i = var->value, .f = var->f, .fl = var->is_float};
        bounds(lw, k, v, now, df, false, out);
    }
}

void cudag__lower_bounds(cudag__lower *lw)
{
    cudag__map out;
    memset(&out, 0, sizeof out);
    for (uint32_t i = 0; i < lw->src->nfiles; i++)
        file_bounds(lw, &lw->src->files[i], &out);
    cudag__map_free(&out);
}
