/* kernel_yaml.c — a kernel node read from YAML: `kernel: NAME` or `{pick:
 * EXPR, from: [NAME, ...]}` (every name looked up, the kernels checked to
 * take the same parameters), grid, block, smem, cluster, priority and args
 * lowered against the picked kernel's signature.  kernel.c checks, builds
 * and launches what this fills in. */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "code/module.h"
#include "yaml/expr.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "kinds/kernel_yaml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

/* The count of `BUF + OFF: COUNT` into a->count: at least 1. */
static int lower_count(cudag__lower *lw, const cudag__doc *v,
                       const cudag__binding *env, cudag__arg *a)
{
    int64_t n;
    if (v->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EARGS, v->pos,
                           "an element count must be a scalar, not %s",
                           cudag__doc_what(v));
    int rc = cudag__eval(lw, v, env, &n);
    if (rc != CUDAG_OK)
        return rc;
    if (n < 1)
        return cudag__lerr(lw, CUDAG_ERANGE, v->pos,
                           "element count %lld must be at least 1",
                           (long long)n);
    a->count = (uint64_t)n;
    return CUDAG_OK;
}

static int lower_arg(cudag__lower *lw, const cudag__doc *v,
                     const cudag__binding *env, cudag_type want,
                     cudag__arg *a)
{
    /* `BUF + OFF: COUNT` (a mapping of one pair): the elements the kernel
     * may touch from the offset (docs/language.md, "Extents"). */
    const cudag__doc *count = NULL;
    if (v->type == CUDAG__DOC_MAP && v->n == 1) {
        count = v->items[1];
        v = v->items[0];
    }
    a->pos = v->pos;
    if (v->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EARGS, v->pos,
                           "an argument must be a scalar, not %s",
                           cudag__doc_what(v));
    int rc;
    /* A condition, by its name alone (no buffer or variable has it). */
    size_t ni = cudag__skip_ws(v->str, 0, v->len);
    size_t ne = cudag__ident_end(v->str, ni, v->len);
    if (ne > ni && ne - ni <= CUDAG__MAX_NAME &&
        cudag__skip_ws(v->str, ne, v->len) == v->len) {
        char name[CUDAG__MAX_NAME + 1];
        memcpy(name, v->str + ni, ne - ni);
        name[ne - ni] = '\0';
        uint32_t c = cudag__find_cond(lw->g, name);
        if (c != CUDAG__NONE) {
            a->kind = CUDAG_ARG_COND;
            a->buffer = c;
            return CUDAG_OK;
        }
    }
    if (cudag__buffer_ref(lw, v, env, &a->buffer, &a->offset, &rc)) {
        a->kind = CUDAG_ARG_BUFFER;
        if (count && rc == CUDAG_OK)
            rc = lower_count(lw, count, env, a);
        return rc;
    }
    if (count)
        return cudag__lerr(lw, CUDAG_EARGS, count->pos,
                           "an element count (': N') follows a buffer "
                           "argument only");
    if (want == CUDAG_TYPE_COND) {
        char name[CUDAG__MAX_NAME + 1];
        size_t i, n = cudag__leading_name(v, name, &i);
        if (n && cudag__is_bad(lw, CUDAG__NS_COND, name))
            return CUDAG__EBAD;     /* reported where it was first named */
        if (n) {
            const char *best =
                CUDAG__SUGGEST(lw, conds, nconds, cudag__cond, name);
            const char *key = cudag__arena_strdup(&lw->scratch, name);
            if (key)
                cudag__mark_bad(lw, CUDAG__NS_COND, key);
            if (!best)
                return cudag__lerr(lw, CUDAG_EUNKNOWN,
                                   cudag__doc_pos_at(v, i),
                                   "unknown condition '%s' (declare it "
                                   "under 'conditions')",
                                   name);
            return cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(v, i),
                               "unknown condition '%s'%s%s%s", name,
                               CUDAG__DYM(best));
        }
        /* A number for a condition: the checker says what is wrong. */
    }
    if (v->plain && (strcmp(v->str, "null") == 0 || strcmp(v->str, "~") == 0)) {
        a->kind = CUDAG_ARG_NULL;
        return CUDAG_OK;
    }
    if (want == CUDAG_TYPE_PTR) {
        char name[CUDAG__MAX_NAME + 1];
        size_t i, n = cudag__leading_name(v, name, &i);
        if (n) {
            const char *best = cudag__suggest_buffer(lw, name);
            return cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(v, i),
                               "unknown buffer '%s'%s%s%s", name,
                               CUDAG__DYM(best));
        }
        /* A number for a pointer: lowered as an integer, the checker says
         * what is wrong with it. */
    }
    /* For a floating-point parameter the whole expression is computed in
     * floating point: E/10 with E = 5 passes 0.5, not 0. */
    if (cudag__is_float_type(want)) {
        a->kind = CUDAG_ARG_FLOAT;
        return cudag__eval_float(lw, v, env, &a->f);
    }
    double f;
    if (cudag__parse_float(v->str, v->len, &f)) {
        a->kind = CUDAG_ARG_FLOAT;
        a->f = f;
        return CUDAG_OK;
    }
    a->kind = CUDAG_ARG_INT;
    return cudag__eval(lw, v, env, &a->i);
}

static void lower_args(cudag__lower *lw, const cudag__pending *p,
                       const cudag__doc *args, cudag__kernel *k,
                       const cudag__sig *sig)
{
    cudag_graph *g = lw->g;
    const char *self = g->nodes[p->node].name;
    k->args_pos = args ? args->pos : g->nodes[p->node].pos;
    if (!args || (args->type == CUDAG__DOC_SCALAR && args->len == 0))
        return;
    if (args->type == CUDAG__DOC_SCALAR) {
        cudag__lerr(lw, CUDAG_EARGS, args->pos,
                    "args must be a list or a mapping by parameter name");
        return;
    }
    uint32_t n = args->n;
    bool named = args->type == CUDAG__DOC_MAP;
    if (named && !sig)
        return;     /* the unknown kernel was reported already */
    if (named)
        n = sig->nparams;
    if (n > CUDAG__MAX_ARGS) {
        cudag__lerr(lw, CUDAG_ELIMIT, args->pos, "more than %u arguments",
                    CUDAG__MAX_ARGS);
        return;
    }
    cudag__arg *a = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *a);
    if (!a) {
        cudag__lerr(lw, CUDAG_ENOMEM, args->pos, "out of memory");
        return;
    }
    bool ok = true;
    if (!named) {
        for (uint32_t i = 0; i < n; i++) {
            cudag_type want = sig && i < sig->nparams ? sig->types[i]
                                                      : CUDAG_TYPE_NONE;
            if (lower_arg(lw, args->items[i], p->env, want, &a[i]) != CUDAG_OK)
                ok = false;
        }
    } else {
        bool *seen = cudag__calloc(n + 1, sizeof *seen);
        if (!seen) {
            cudag__lerr(lw, CUDAG_ENOMEM, args->pos, "out of memory");
            return;
        }
        for (uint32_t i = 0; i < args->n; i++) {
            const cudag__doc *key = args->items[2 * i];
            if (cudag__free_key(key))
                continue;
            uint32_t j = 0;
            while (j < n && strcmp(sig->pnames[j], key->str) != 0)
                j++;
            if (j == n) {
                const char *best =
                    cudag__suggest_from(key->str, sig->pnames, n);
                cudag__lerr(lw, CUDAG_EARGS, key->pos,
                            "kernel '%s' has no parameter '%s'%s%s%s",
                            sig->name, key->str, CUDAG__DYM(best));
                ok = false;
                continue;
            }
            seen[j] = true;
            if (lower_arg(lw, args->items[2 * i + 1], p->env, sig->types[j],
                          &a[j]) != CUDAG_OK)
                ok = false;
        }
        for (uint32_t j = 0; j < n && ok; j++)
            if (!seen[j]) {
                cudag__lerr(lw, CUDAG_EARGS, args->pos,
                            "node '%s': missing argument '%s' (%s) of kernel "
                            "'%s'",
                            self, sig->pnames[j],
                            cudag_type_name(sig->types[j]), sig->name);
                ok = false;
            }
        cudag__free(seen);
    }
    if (ok) {
        k->args = a;
        k->nargs = n;
    } else {
        /* Errors were reported, and a graph with lowering errors is never
         * checked, so the node is left without arguments. */
        k->args = NULL;
        k->nargs = 0;
    }
}

/* grid/block: EXPR or [X, Y, Z] with 1 to 3 entries. */
static int lower_dims(cudag__lower *lw, const cudag__doc *v,
                      const cudag__binding *env, const char *what,
                      int64_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    if (v->type == CUDAG__DOC_SCALAR)
        return cudag__eval(lw, v, env, &out[0]);
    if (v->type != CUDAG__DOC_SEQ || v->n < 1 || v->n > 3)
        return cudag__lerr(lw, CUDAG_EKEY, v->pos,
                           "%s must be a number or a list of 1 to 3 numbers",
                           what);
    for (uint32_t i = 0; i < v->n; i++) {
        int rc = cudag__eval(lw, v->items[i], env, &out[i]);
        if (rc != CUDAG_OK)
            return rc;
    }
    return CUDAG_OK;
}

/* "x: ptr, y: ptr, a: f32, n: i64", cut short with "…" if it is long. */
void cudag__kernel_sig_text(const cudag__sig *s, char *buf, size_t cap)
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

/* The signature kernel name v stands for, or CUDAG__NONE.  Declared in
 * `kernels:`, or read from a source module (the first node that names it
 * makes the signature).  A kernel reported wrong is left out silently, and
 * so is an unknown one where a module was reported wrong (a missing .cu
 * file: that error was the one); any other failure is reported at v. */
static uint32_t lookup_sig(cudag__lower *lw, const cudag__doc *v)
{
    if (cudag__is_bad(lw, CUDAG__NS_SIG, v->str))
        return CUDAG__NONE;
    cudag_error e;
    uint32_t s = cudag__sig_lookup(lw->g, v->str, v->pos, &e);
    if (s == CUDAG__NONE &&
        !(e.code == CUDAG_EUNKNOWN && lw->bad[CUDAG__NS_MODULE].len))
        cudag__lerr_error(lw, &e, v->pos);
    return s;
}

/* Parameter i's name in s, or NULL where its declaration gave none (a list
 * of types in `kernels:`, an unnamed parameter in source: called "p<i>" in
 * pnames, which a parameter named p0 is too). */
static const char *param_name(const cudag__sig *s, uint32_t i)
{
    if (!s->pnames || !s->pnamed || !s->pnamed[i])
        return NULL;
    return s->pnames[i];
}

/* True when a and b take the same parameters: count and types, and names
 * where both have them (args by name must mean the same to both).  The
 * arguments are lowered once, against the picked kernel, so that another
 * pick (cudag_exec_set_var) must take them as they are. */
static bool same_params(const cudag__sig *a, const cudag__sig *b)
{
    if (a->nparams != b->nparams)
        return false;
    for (uint32_t i = 0; i < a->nparams; i++) {
        const char *na = param_name(a, i), *nb = param_name(b, i);
        if (a->types[i] != b->types[i] || (na && nb && strcmp(na, nb) != 0))
            return false;
    }
    return true;
}

/* `kernel: {pick: EXPR, from: [NAME, ...]}`: k->sig and k->sig_pos of the
 * name `pick` chooses, or left as they are after an error.  Every name is
 * looked up, so that a typo in one not picked today is reported now, and so
 * that a graph lowered again with another pick (cudag_exec_set_var) has the
 * same signatures in the same order. */
static void read_pick(cudag__lower *lw, const cudag__pending *p,
                      const cudag__doc *kern, cudag__kernel *k)
{
    static const char *const pick_keys[] = {"pick", "from"};
    if (cudag__check_keys(lw, kern, pick_keys, 2, "a kernel pick"))
        return;
    const cudag__doc *pick = cudag__doc_get(kern, "pick");
    const cudag__doc *from = cudag__doc_get(kern, "from");
    if (!pick || !from) {
        cudag__lerr(lw, CUDAG_EKEY, kern->pos, "a kernel pick needs '%s'",
                    pick ? "from" : "pick");
        return;
    }
    if (from->type != CUDAG__DOC_SEQ) {
        cudag__lerr(lw, CUDAG_EKEY, from->pos,
                    "from must be a list of kernel names, not %s",
                    cudag__doc_what(from));
        return;
    }
    if (from->n == 0) {
        cudag__lerr(lw, CUDAG_EKEY, from->pos,
                    "from must name at least one kernel");
        return;
    }
    int64_t at;
    bool picked = cudag__eval(lw, pick, p->env, &at) == CUDAG_OK;
    if (picked && (at < 0 || at >= (int64_t)from->n)) {
        cudag__lerr(lw, CUDAG_ERANGE, pick->pos,
                    "pick %lld is outside the %u kernel%s of 'from' (0 to %u)",
                    (long long)at, from->n, cudag__plural(from->n),
                    from->n - 1);
        picked = false;
    }
    for (uint32_t i = 0; i < from->n; i++) {
        const cudag__doc *v = from->items[i];
        if (!cudag__want(lw, v, CUDAG__DOC_SCALAR, "a kernel in 'from'"))
            continue;
        uint32_t s = lookup_sig(lw, v);
        if (s == CUDAG__NONE)
            continue;
        if (picked && (int64_t)i == at) {
            k->sig = s;
            k->sig_pos = v->pos;
        }
        /* Against every earlier one, not the first only: two kernels may
         * each agree with one whose parameters have no names, and not with
         * each other. */
        for (uint32_t j = 0; j < i; j++) {
            const cudag__doc *w = from->items[j];
            uint32_t r = w->type == CUDAG__DOC_SCALAR
                             ? cudag__find_sig(lw->g, w->str)
                             : CUDAG__NONE;
            if (r == CUDAG__NONE ||
                same_params(&lw->g->sigs[r], &lw->g->sigs[s]))
                continue;
            char tr[400], ts[400];
            cudag__kernel_sig_text(&lw->g->sigs[r], tr, sizeof tr);
            cudag__kernel_sig_text(&lw->g->sigs[s], ts, sizeof ts);
            cudag__lerr(lw, CUDAG_ETYPE, v->pos,
                        "kernel '%s' takes (%s) but '%s' takes (%s): the "
                        "kernels a node picks from take the same parameters",
                        v->str, ts, w->str, tr);
            break;
        }
    }
}

void cudag__kernel_read_yaml(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    const cudag__doc *b = p->body;
    cudag__kernel *k = &n->u.k;
    const cudag__doc *kern = cudag__doc_get(b, "kernel");
    const cudag__doc *grid = cudag__doc_get(b, "grid");
    const cudag__doc *block = cudag__doc_get(b, "block");
    const cudag__doc *smem = cudag__doc_get(b, "smem");
    const cudag__doc *cluster = cudag__doc_get(b, "cluster");
    const cudag__doc *priority = cudag__doc_get(b, "priority");
    k->sig = CUDAG__NONE;
    k->sig_pos = kern->pos;
    if (kern->type == CUDAG__DOC_SCALAR)
        k->sig = lookup_sig(lw, kern);
    else if (kern->type == CUDAG__DOC_MAP)
        read_pick(lw, p, kern, k);
    else
        cudag__lerr(lw, CUDAG_EKEY, kern->pos,
                    "kernel must be a kernel name or {pick, from}, not %s",
                    cudag__doc_what(kern));
    const cudag__sig *sig =
        k->sig != CUDAG__NONE ? &lw->g->sigs[k->sig] : NULL;
    if (!grid || !block)
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "kernel node '%s' needs '%s'",
                    n->name, grid ? "block" : "grid");
    if (grid) {
        k->grid_pos = grid->pos;
        lower_dims(lw, grid, p->env, "grid", k->grid);
    }
    if (block) {
        k->block_pos = block->pos;
        lower_dims(lw, block, p->env, "block", k->block);
    }
    if (smem) {
        k->smem_pos = smem->pos;
        cudag__eval(lw, smem, p->env, &k->smem);
    }
    if (cluster) {
        k->cluster_pos = cluster->pos;
        lower_dims(lw, cluster, p->env, "cluster", k->cluster);
    }
    if (priority) {
        k->priority_pos = priority->pos;
        k->has_priority = true;
        cudag__eval(lw, priority, p->env, &k->priority);
    }
    lower_args(lw, p, cudag__doc_get(b, "args"), k, sig);
}
