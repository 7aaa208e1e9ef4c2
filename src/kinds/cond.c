/* cond.c — conditional nodes: `while: COND` with a body, `if: COND`
 * with `then` and an optional `else`, `switch: COND` with `cases`; each body
 * is a sub-graph (kind.h, "Sub-graphs") that the device runs as the
 * condition decides.  The condition's handle is made with
 * cuGraphConditionalHandleCreate before the nodes of the conditional node's
 * graph are added (kernels there and in the bodies take it as a cond
 * argument); the node is added with cuGraphAddNode, and each body graph the
 * driver makes is filled through the build's own step.  The conditions'
 * whole-tree check (one reader each, setters in reach, defaults) is the
 * kind's check_tree step, run once per checked root.  One entry of the
 * node-kind table (kind.h). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "gpu/gpu.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

static const char *const type_key[] = {
    [CUDAG_COND_IF] = "if",
    [CUDAG_COND_WHILE] = "while",
    [CUDAG_COND_SWITCH] = "switch",
};

static bool type_ok(cudag_cond_type t)
{
    return t == CUDAG_COND_IF || t == CUDAG_COND_WHILE ||
           t == CUDAG_COND_SWITCH;
}

/* The bodies a type takes: while 1, if 1 or 2, switch 1 to the limit. */
static bool count_ok(cudag_cond_type t, size_t n)
{
    if (t == CUDAG_COND_WHILE)
        return n == 1;
    if (t == CUDAG_COND_IF)
        return n == 1 || n == 2;
    return n >= 1 && n <= CUDAG__MAX_SUBS_PER_NODE;
}

/* The name of body `slot` of node `name` and its nodes' prefix: "loop",
 * "check.then", "check.else", "route.case[3]". */
static void body_name(char *buf, size_t cap, const char *name,
                      cudag_cond_type t, uint32_t slot)
{
    if (t == CUDAG_COND_WHILE)
        snprintf(buf, cap, "%s", name);
    else if (t == CUDAG_COND_IF)
        snprintf(buf, cap, "%s.%s", name, slot ? "else" : "then");
    else
        snprintf(buf, cap, "%s.case[%u]", name, slot);
}

/* Makes the n bodies of node `node` of g (which the builder adds after
 * them) into bodies[] (arena).  On error the sub-graphs made are dropped
 * and *bodies is NULL. */
static int make_bodies(cudag_graph *g, uint32_t node, const char *name,
                       cudag_cond_type t, uint32_t n, cudag_graph ***bodies,
                       cudag_error *err)
{
    cudag_graph **b = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *b);
    *bodies = NULL;
    if (!b)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory");
    uint32_t keep = g->nsubs;
    for (uint32_t i = 0; i < n; i++) {
        char sub[CUDAG__MAX_FULL_NAME + 32], prefix[sizeof sub + 1];
        body_name(sub, sizeof sub, name, t, i);
        snprintf(prefix, sizeof prefix, "%s.", sub);
        int rc = cudag__subgraph_new(g, node, i, sub, prefix, &b[i], err);
        if (rc != CUDAG_OK) {
            cudag__subgraph_drop(g, keep);
            return rc;
        }
    }
    *bodies = b;
    return CUDAG_OK;
}

/* ---- YAML ------------------------------------------------------------- */

/* The keys each type takes besides its own and `after`, and how messages
 * name the type and those keys. */
static const char *const body_keys[][2] = {
    [CUDAG_COND_IF] = {"then", "else"},
    [CUDAG_COND_WHILE] = {"body", NULL},
    [CUDAG_COND_SWITCH] = {"cases", NULL},
};
static const char *const a_type[] = {
    [CUDAG_COND_IF] = "an if",
    [CUDAG_COND_WHILE] = "a while",
    [CUDAG_COND_SWITCH] = "a switch",
};
static const char *const its_keys[] = {
    [CUDAG_COND_IF] = "'then' and 'else'",
    [CUDAG_COND_WHILE] = "a 'body'",
    [CUDAG_COND_SWITCH] = "'cases'",
};

/* Which of while/if/switch the body is, and its condition; false (and
 * reported) when that is wrong. */
static bool read_head(cudag__lower *lw, const cudag__pending *p,
                      cudag_cond_type *type, const cudag__doc **cond)
{
    const cudag__node *n = &lw->g->nodes[p->node];
    unsigned found = 0;
    for (int t = CUDAG_COND_IF; t <= CUDAG_COND_SWITCH; t++) {
        const cudag__doc *v = cudag__doc_get(p->body, type_key[t]);
        if (v) {
            *cond = v;
            *type = (cudag_cond_type)t;
            found++;
        }
    }
    if (found != 1) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos,
                    "node '%s' has more than one of 'while', 'if' and "
                    "'switch'",
                    n->name);
        return false;
    }
    /* A key of another type ("then" in a while node). */
    for (int t = CUDAG_COND_IF; t <= CUDAG_COND_SWITCH; t++)
        for (int j = 0; j < 2 && t != (int)*type; j++) {
            const char *k = body_keys[t][j];
            const cudag__doc *v = k ? cudag__doc_get(p->body, k) : NULL;
            if (!v)
                continue;
            const cudag__doc *key = NULL;
            for (uint32_t i = 0; i < p->body->n; i++)
                if (p->body->items[2 * i + 1] == v)
                    key = p->body->items[2 * i];
            cudag__lerr(lw, CUDAG_EKEY, key ? key->pos : v->pos,
                        "'%s' belongs to %s node, not to %s node ('%s' has "
                        "%s)",
                        k, a_type[t], a_type[*type], n->name,
                        its_keys[*type]);
            return false;
        }
    return true;
}

/* The mappings of the bodies, in slot order, into docs[] (room for
 * CUDAG__MAX_SUBS_PER_NODE); their count, 0 after an error (reported). */
static uint32_t body_docs(cudag__lower *lw, const cudag__pending *p,
                          cudag_cond_type type, const cudag__doc **docs)
{
    const cudag__node *n = &lw->g->nodes[p->node];
    const char *key = body_keys[type][0];
    const cudag__doc *v = cudag__doc_get(p->body, key);
    if (!v) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "%s node '%s' needs '%s'",
                    type_key[type], n->name, key);
        return 0;
    }
    if (type != CUDAG_COND_SWITCH) {
        if (!cudag__want(lw, v, CUDAG__DOC_MAP, key))
            return 0;
        docs[0] = v;
        const cudag__doc *e = type == CUDAG_COND_IF
                                  ? cudag__doc_get(p->body, "else")
                                  : NULL;
        if (e && !cudag__want(lw, e, CUDAG__DOC_MAP, "else"))
            return 0;
        docs[1] = e;
        return e ? 2 : 1;
    }
    if (!cudag__want(lw, v, CUDAG__DOC_SEQ, "cases"))
        return 0;
    if (v->n == 0) {
        cudag__lerr(lw, CUDAG_EKEY, v->pos,
                    "switch node '%s' has no cases", n->name);
        return 0;
    }
    if (v->n > CUDAG__MAX_SUBS_PER_NODE) {
        cudag__lerr(lw, CUDAG_ELIMIT, v->pos,
                    "switch node '%s' has %u cases (at most %u)", n->name,
                    v->n, CUDAG__MAX_SUBS_PER_NODE);
        return 0;
    }
    for (uint32_t i = 0; i < v->n; i++) {
        /* An empty case is written {} (a mapping): nothing runs then. */
        if (!cudag__want(lw, v->items[i], CUDAG__DOC_MAP, "a case"))
            return 0;
        docs[i] = v->items[i];
    }
    return v->n;
}

static void read_yaml(cudag__lower *lw, const cudag__pending *p)
{
    cudag_graph *g = lw->g;
    cudag__conditional *c = &g->nodes[p->node].u.cnd;
    c->cond = CUDAG__NONE;
    cudag_cond_type type = CUDAG_COND_IF;
    const cudag__doc *cv = NULL;
    if (!read_head(lw, p, &type, &cv))
        return;
    c->type = type;
    c->cond_pos = cv->pos;
    if (cudag__want(lw, cv, CUDAG__DOC_SCALAR, type_key[type])) {
        c->cond = cudag__find_cond(g, cv->str);
        if (c->cond == CUDAG__NONE &&
            !cudag__is_bad(lw, CUDAG__NS_COND, cv->str)) {
            /* Reported once: the kernel that sets it, and other nodes
             * that test it, say nothing more. */
            cudag__mark_bad(lw, CUDAG__NS_COND, cv->str);
            const char *best =
                CUDAG__SUGGEST(lw, conds, nconds, cudag__cond, cv->str);
            if (best)
                cudag__lerr(lw, CUDAG_EUNKNOWN, cv->pos,
                            "unknown condition '%s' (did you mean '%s'?)",
                            cv->str, best);
            else
                cudag__lerr(lw, CUDAG_EUNKNOWN, cv->pos,
                            "unknown condition '%s' (declare it under "
                            "'conditions')",
                            cv->str);
        }
    }
    const cudag__doc **docs =
        cudag__malloc(CUDAG__MAX_SUBS_PER_NODE * sizeof *docs);
    if (!docs) {
        cudag__lerr(lw, CUDAG_ENOMEM, p->body->pos, "out of memory");
        return;
    }
    uint32_t nb = body_docs(lw, p, type, docs);
    cudag_graph **bodies = NULL;
    cudag_error e;
    if (nb && make_bodies(g, p->node, g->nodes[p->node].name, type, nb,
                          &bodies, &e) != CUDAG_OK)
        cudag__lerr(lw, e.code, g->nodes[p->node].pos, "%s", e.message);
    if (bodies) {
        c->nbodies = nb;
        c->bodies = bodies;
        for (uint32_t i = 0; i < nb && !cudag__diag_full(lw->d); i++)
            lw->lower_sub(lw, bodies[i], docs[i], p->env);
    }
    cudag__free(docs);
}

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    const cudag_graph *g = c->g;
    const cudag__conditional *cn = &n->u.cnd;
    if (!type_ok(cn->type)) {
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "node '%s' has an invalid conditional type %d",
                          n->name, (int)cn->type);
        return;
    }
    if (cn->cond >= g->nconds)
        cudag__check_fail(c, CUDAG_EUNKNOWN, cudag__pick(cn->cond_pos, n->pos),
                          "node '%s' refers to condition index %u, but the "
                          "graph has %u conditions",
                          n->name, cn->cond, g->nconds);
    else
        cudag__check_cond_node(c, (uint32_t)(n - g->nodes), cn->cond,
                               cn->cond_pos);
    if (!count_ok(cn->type, cn->nbodies) || !cn->bodies) {
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "%s node '%s' has %u bodies", type_key[cn->type],
                          n->name, cn->nbodies);
        return;
    }
    for (uint32_t i = 0; i < cn->nbodies && !cudag__check_full(c); i++) {
        cudag_graph *b = cn->bodies[i];
        /* A switch case may be empty (nothing runs for its value); an empty
         * loop or branch is a mistake. */
        if (b->nnodes == 0 && cn->type != CUDAG_COND_SWITCH) {
            cudag__check_fail(c, CUDAG_EKEY, n->pos,
                              "the body '%s' of %s node '%s' has no nodes",
                              b->name, type_key[cn->type], n->name);
            continue;
        }
        c->check_sub(c, b);
    }
}

/* What a conditional node does when no kernel sets its condition. */
static void check_unset(cudag__checker *c, uint32_t i)
{
    const cudag_graph *g = c->g;
    const cudag__cond *cd = &g->conds[i];
    const cudag__cond_user *u = &c->cond_node[i];
    const cudag__node *n = &u->g->nodes[u->node];
    const cudag__conditional *cn = &n->u.cnd;
    const char *what = type_key[cn->type];
    if (!cd->has_default) {
        cudag__check_fail(c, CUDAG_ECHECK, u->pos,
                          "condition '%s' has no default and no kernel sets "
                          "it: its value is undefined when %s node '%s' runs",
                          cd->name, what, n->name);
        return;
    }
    if (cn->type == CUDAG_COND_WHILE && cd->value) {
        cudag__check_fail(c, CUDAG_ECHECK, u->pos,
                          "no kernel sets condition '%s': while node '%s' "
                          "would run its body forever (its default is %u)",
                          cd->name, n->name, cd->value);
        return;
    }
    char does[160];
    if (cn->type == CUDAG_COND_WHILE)
        snprintf(does, sizeof does, "never runs its body");
    else if (cn->type == CUDAG_COND_IF)
        snprintf(does, sizeof does, "always %s",
                 cd->value ? "runs its then body"
                 : cn->nbodies == 2 ? "runs its else body"
                                    : "skips its body");
    else if (cd->value < cn->nbodies)
        snprintf(does, sizeof does, "always runs case %u", cd->value);
    else
        snprintf(does, sizeof does, "never runs a case");
    cudag__check_warn(c, CUDAG_ECHECK, u->pos,
                      "no kernel sets condition '%s': %s node '%s' %s (its "
                      "default is %u)",
                      cd->name, what, n->name, does, cd->value);
}

/* A while node's condition set in its body, but by kernels that set it only
 * to 1 (the setter's only_one, kernel.c): once the body runs, it runs
 * forever.  Reports the first such setter where every setter of condition i
 * is one. */
static void check_sets_one(cudag__checker *c, uint32_t i)
{
    const cudag__cond_setter *first = NULL;
    for (uint32_t j = 0; j < c->nsetters; j++) {
        const cudag__cond_setter *s = &c->setters[j];
        if (s->cond != i)
            continue;
        if (!s->only_one)
            return;
        if (!first)
            first = s;
    }
    if (!first)
        return;
    const cudag__cond_user *u = &c->cond_node[i];
    const cudag__node *setter = &first->at.g->nodes[first->at.node];
    cudag__pos at = cudag__pick(first->k_pos, first->at.pos);
    cudag__check_warn(c, CUDAG_ECHECK, at,
                      "node '%s' sets condition '%s' only to 1: "
                      "cond_count_i32's i32 counter never reaches k = %lld, "
                      "so while node '%s' runs its body forever",
                      setter->name, c->g->conds[i].name,
                      (long long)first->k,
                      u->g->nodes[u->node].name);
}

/* Every condition: read by one conditional node, set by kernels in that
 * node's graph or its bodies (where the handle is valid).  The kind's
 * check_tree step; c->cond_scratch: 2 × (conds + 1) zeroed words. */
static void check_conds(cudag__checker *c)
{
    const cudag_graph *g = c->g;
    uint32_t *nset = c->cond_scratch;
    uint32_t *in_body = nset + g->nconds + 1;
    for (uint32_t i = 0; i < c->nsetters && !cudag__check_full(c); i++) {
        const cudag__cond_setter *s = &c->setters[i];
        const cudag__cond_user *u = &c->cond_node[s->cond];
        nset[s->cond]++;
        if (!u->g)
            continue;
        const cudag__node *owner = &u->g->nodes[u->node];
        if (!cudag__graph_within(s->at.g, u->g)) {
            cudag__check_fail(
                c, CUDAG_ECHECK, s->at.pos,
                "node '%s' sets condition '%s' outside the graph of %s node "
                "'%s': a kernel that sets it must run beside that node or "
                "inside its bodies",
                s->at.g->nodes[s->at.node].name, g->conds[s->cond].name,
                type_key[owner->u.cnd.type], owner->name);
            continue;
        }
        if (s->at.g != u->g)
            in_body[s->cond]++;
    }
    for (uint32_t i = 0; i < g->nconds && !cudag__check_full(c); i++) {
        const cudag__cond_user *u = &c->cond_node[i];
        if (!u->g) {
            cudag__check_warn(c, CUDAG_ECHECK, g->conds[i].pos,
                              "condition '%s' is never used",
                              g->conds[i].name);
            continue;
        }
        const cudag__node *n = &u->g->nodes[u->node];
        if (!nset[i])
            check_unset(c, i);
        else if (n->u.cnd.type == CUDAG_COND_WHILE && !in_body[i])
            cudag__check_warn(c, CUDAG_ECHECK, u->pos,
                              "no kernel in the body of while node '%s' sets "
                              "condition '%s': once the body runs, it runs "
                              "forever",
                              n->name, g->conds[i].name);
        else if (n->u.cnd.type == CUDAG_COND_WHILE)
            check_sets_one(c, i);
    }
}

static bool may_loop(const cudag__node *n)
{
    return n->u.cnd.type == CUDAG_COND_WHILE;
}

/* ---- build ------------------------------------------------------------ */

/* The driver that first has each type: IF and WHILE 12.3, IF with an else
 * body and SWITCH 12.8. */
static int driver_needed(const cudag__conditional *c)
{
    return c->type == CUDAG_COND_SWITCH || c->nbodies == 2 ? 12080 : 12030;
}

static int prepare(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
                   cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    uint32_t ci = nd->u.cnd.cond;
    const cudag__cond *cd = &b->g->conds[ci];
    int64_t start = b->starts ? b->starts[ci]
                    : cd->has_default ? (int64_t)cd->value
                                      : CUDAG_COND_NO_DEFAULT;
    unsigned flags = start >= 0 ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0;
    CUresult r = b->gpu->drv->cuGraphConditionalHandleCreate(
        &b->handles[ci], graph, b->gpu->ctx,
        start >= 0 ? (unsigned)start : 0, flags);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, b->gpu->drv, r, nd->pos,
                              "cuGraphConditionalHandleCreate: condition '%s' "
                              "of node '%s'",
                              cd->name, nd->name);
    return CUDAG_OK;
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    const cudag__conditional *c = &nd->u.cnd;
    const cudag__drv *d = b->gpu->drv;
    int need = driver_needed(c);
    if (b->gpu->driver_version && b->gpu->driver_version < need)
        return cudag__fail_at(err, CUDAG_ENOTSUP, nd->pos,
                              "node '%s': this CUDA driver (%d.%d) has no "
                              "%s nodes (they need %d.%d or newer)",
                              nd->name, b->gpu->driver_version / 1000,
                              b->gpu->driver_version % 1000 / 10,
                              c->type == CUDAG_COND_SWITCH ? "switch"
                              : c->nbodies == 2            ? "if/else"
                                                : type_key[c->type],
                              need / 1000, need % 1000 / 10);
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = b->handles[c->cond];
    p.conditional.type = (CUgraphConditionalNodeType)c->type;
    p.conditional.size = c->nbodies;
    p.conditional.ctx = b->gpu->ctx;
    CUresult r = d->cuGraphAddNode(out, graph, NULL, NULL, 0, &p);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos,
                              "cuGraphAddNode: %s node '%s' (the driver or "
                              "device may lack conditional nodes)",
                              type_key[c->type], nd->name);
    for (uint32_t i = 0; i < c->nbodies; i++) {
        int rc = b->build_sub(b, c->bodies[i], p.conditional.phGraph_out[i],
                              err);
        if (rc != CUDAG_OK)
            return rc;
    }
    return CUDAG_OK;
}

/* ---- output ------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g,
                      const cudag__node *n)
{
    const cudag__conditional *c = &n->u.cnd;
    cudag__sb_puts(b, type_key[c->type]);
    cudag__sb_puts(b, " ");
    cudag__sb_dot_escape(b, g->conds[c->cond].name);
}

static void body_label(cudag__sb *b, const cudag_graph *g,
                       const cudag__node *n, uint32_t slot, bool dot)
{
    const cudag__conditional *c = &n->u.cnd;
    const char *cond = g->conds[c->cond].name;
    if (dot) {
        cudag__sb_dot_escape(b, n->name);
        if (c->type == CUDAG_COND_WHILE)
            cudag__sb_puts(b, ": while ");
        else if (c->type == CUDAG_COND_IF)
            cudag__sb_puts(b, slot ? ": else (if not " : ": then (if ");
        else
            cudag__sb_printf(b, ": case %u (switch ", slot);
        cudag__sb_dot_escape(b, cond);
        cudag__sb_puts(b, c->type == CUDAG_COND_WHILE ? "" : ")");
        return;
    }
    if (c->type == CUDAG_COND_WHILE)
        cudag__sb_printf(b, "runs again and again while condition '%s' is "
                            "not 0",
                         cond);
    else if (c->type == CUDAG_COND_IF)
        cudag__sb_printf(b, "runs once if condition '%s' is %s", cond,
                         slot ? "0" : "not 0");
    else
        cudag__sb_printf(b, "runs once if condition '%s' is %u", cond, slot);
    cudag__sb_puts(b, "; decided on the device");
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_conditional(cudag_graph *g, const char *name,
                          cudag_cond_type type, const char *cond,
                          size_t nbodies, cudag_graph **bodies,
                          cudag_error *err)
{
    for (size_t i = 0; bodies && i < nbodies && i < CUDAG__MAX_SUBS_PER_NODE;
         i++)
        bodies[i] = NULL;
    int rc = cudag__builder_start(g, &name, "cudag_add_conditional", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!bodies || !type_ok(type))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_conditional: node '%s': %s", name,
                              bodies ? "invalid conditional type"
                                     : "bodies is NULL");
    if (!count_ok(type, nbodies))
        return cudag__fail_at(
            err, nbodies > CUDAG__MAX_SUBS_PER_NODE ? CUDAG_ELIMIT
                                                    : CUDAG_EINVAL,
            CUDAG__NOPOS,
            "cudag_add_conditional: %s node '%s' takes %s, not %zu",
            type_key[type], name,
            type == CUDAG_COND_WHILE ? "1 body"
            : type == CUDAG_COND_IF  ? "1 or 2 bodies (then, else)"
                                     : "1 to 4096 cases",
            nbodies);
    uint32_t c = cudag__find_cond(g, cond);
    if (c == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "node '%s': unknown condition '%s'", name,
                              cond ? cond : "(null)");
    if (g->depth >= CUDAG__MAX_SUB_DEPTH)
        return cudag__fail_at(err, CUDAG_ELIMIT, CUDAG__NOPOS,
                              "node '%s': bodies nested deeper than %u", name,
                              CUDAG__MAX_SUB_DEPTH);
    if (cudag__find_node(g, name) != CUDAG__NONE)
        return cudag__add_node(g, name, CUDAG__NOPOS, NULL, err);  /* EDUP */
    /* The bodies first: a node added cannot be taken back from the name
     * map, sub-graphs can. */
    uint32_t keep = g->nsubs;
    cudag_graph **made;
    rc = make_bodies(g, g->nnodes, name, type, (uint32_t)nbodies, &made, err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__node *n;
    rc = cudag__add_node(g, name, CUDAG__NOPOS, &n, err);
    if (rc != CUDAG_OK) {
        cudag__subgraph_drop(g, keep);
        return rc;
    }
    n->kind = CUDAG_NODE_CONDITIONAL;
    n->u.cnd.type = type;
    n->u.cnd.cond = c;
    n->u.cnd.nbodies = (uint32_t)nbodies;
    n->u.cnd.bodies = made;
    for (size_t i = 0; i < nbodies; i++)
        bodies[i] = made[i];
    return CUDAG_OK;
}

int cudag_add_condition(cudag_graph *g, const char *name,
                        int64_t default_value, cudag_error *err)
{
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_condition: graph is NULL");
    int rc = cudag__need_root(g, "cudag_add_condition", "add it to graph",
                              err);
    if (rc != CUDAG_OK)
        return rc;
    if (!name || !cudag__is_ident(name, strlen(name)))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_condition: '%s' is not a valid name",
                              name ? name : "(null)");
    if (default_value != CUDAG_COND_NO_DEFAULT &&
        (default_value < 0 || default_value > (int64_t)UINT32_MAX))
        return cudag__fail_at(err, CUDAG_ERANGE, CUDAG__NOPOS,
                              "condition '%s': default %lld is out of range "
                              "(0 to 4294967295, or CUDAG_COND_NO_DEFAULT)",
                              name, (long long)default_value);
    cudag__cond *cd;
    rc = cudag__add_cond(g, name, CUDAG__NOPOS, &cd, err);
    if (rc != CUDAG_OK)
        return rc;
    cd->has_default = default_value >= 0;
    cd->value = cd->has_default ? (uint32_t)default_value : 0;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

static const char *const select_keys[] = {"while", "if", "switch"};
static const char *const keys[] = {"while", "if", "switch", "body", "then",
                                   "else", "cases", "after"};

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* What the nodes of any of its bodies touch: which body runs, and how
 * often, is decided on the device. */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    (void)g;
    for (uint32_t i = 0; i < n->u.cnd.nbodies && s->add_graph; i++)
        if (n->u.cnd.bodies[i])
            s->add_graph(s, n->u.cnd.bodies[i]);
}

const cudag__kind_ops cudag__kind_cond = {
    .kind = CUDAG_NODE_CONDITIONAL,
    .name = "conditional",
    .what = "a conditional node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .select = select_keys,
    .nselect = sizeof select_keys / sizeof *select_keys,
    .pdl_end = false,
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, conditional_nodes),
    .read_yaml = read_yaml,
    .check = check,
    .check_tree = check_conds,
    .access = access,
    .prepare = prepare,
    .add = add,
    .may_loop = may_loop,
    .dot_label = dot_label,
    .dot_shape = ", shape=hexagon, style=filled, fillcolor=lavender",
    .dot_legend = "while / if /\\nswitch",
    .body_label = body_label,
};
