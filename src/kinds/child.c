/* child.c — child-graph nodes: another graph file's nodes, lowered
 * once per node with the variables the node sets, built into a child graph
 * (cuGraphAddChildGraphNode), or, where a programmatic edge reaches them,
 * into the graph that holds the node.  `include` inlines a file into its
 * includer; a child graph stays one node of its parent (to the checker and
 * the user, however it is built), so that a layer written once is used N
 * times.  One entry of the node-kind table (kind.h). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "yaml/bounds.h"
#include "yaml/expr.h"
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

/* ---- YAML ------------------------------------------------------------- */

/* What a child file may hold: its nodes name its parent's kernels, buffers
 * and conditions, so that it declares none of its own. */
static const char *const file_keys[] = {"cudag", "vars", "nodes"};

/* Reports a child file that closes a cycle of child graphs (the file the
 * node is in, or one instantiating it, again) and returns true. */
static bool cycle(cudag__lower *lw, const cudag__file *top,
                  const cudag__file *f, cudag__pos at)
{
    const cudag__file *chain[CUDAG__MAX_SUB_DEPTH + 2];
    unsigned n = 0;
    chain[n++] = top;
    for (unsigned i = 0; i < lw->nchild; i++)
        chain[n++] = lw->child[i];
    unsigned first = 0;
    while (first < n && (!chain[first]->real ||
                         strcmp(chain[first]->real, f->real) != 0))
        first++;
    if (first == n)
        return false;
    char text[2048];
    size_t off = 0;
    for (unsigned i = first; i < n && off < sizeof text; i++)
        off += (size_t)snprintf(text + off, sizeof text - off, "%s -> ",
                                chain[i]->path);
    if (off < sizeof text)
        snprintf(text + off, sizeof text - off, "%s", f->path);
    cudag__lerr(lw, CUDAG_EINCLUDE, at, "child graph cycle: %s", text);
    return true;
}

/* Checks child variable k (entry v in file f) of value `value` against its
 * bounds (env: the child's variables bound; early: those before k only,
 * see cudag__bounded; record: cudag__check_bounds').  A violation is
 * reported at the child's bound, with a note at the parent's node: at the
 * value its `vars` gives k, or at its `graph` for a value of the file's.
 * False after an error. */
static bool in_bounds(cudag__lower *lw, const cudag__pending *p,
                      const cudag__file *f, const cudag__doc *set,
                      const cudag__doc *k, const cudag__doc *v, int64_t value,
                      const cudag__binding *env, bool early,
                      cudag__map *record)
{
    if (cudag__free_key(k))
        return true;
    const cudag__doc *given = set ? cudag__doc_get(set, k->str) : NULL;
    const cudag__doc *e = cudag__var_entry_value(v);
    /* A value the node gives was written in the parent: the number alone. */
    cudag__bounded b = {.key = k, .entry = v, .value = {.i = value},
                        .text = !given && e ? e->str : NULL,
                        .len = !given && e ? e->len : 0, .early = early};
    int rc = cudag__check_bounds(lw, &b, env, record);
    if (rc == CUDAG_OK)
        return true;
    const char *node = lw->g->nodes[p->node].name;
    if (rc != CUDAG__EBAD && given)
        cudag__report(lw->d, CUDAG_SEV_NOTE, CUDAG_OK, given->pos,
                      "node '%s' gives %s = %lld to child graph '%s'", node,
                      k->str, (long long)value, f->path);
    else if (rc != CUDAG__EBAD)
        cudag__report(lw->d, CUDAG_SEV_NOTE, CUDAG_OK,
                      cudag__doc_get(p->body, "graph")->pos,
                      "in child graph '%s' of node '%s'", f->path, node);
    return false;
}

/* Binds the child's variables, in its file's order, onto *env: the node's
 * `vars` evaluated in the parent's scope (p->env), the others from the
 * file in the child's own scope (the variables bound before them).  Called
 * with lw->nchild not yet counting the child.  False after an error. */
static bool bind_vars(cudag__lower *lw, const cudag__pending *p,
                      const cudag__file *f, const cudag__doc *set,
                      const cudag__binding **env)
{
    const cudag__doc *vars = cudag__doc_get(f->root, "vars");
    if (vars && !cudag__want(lw, vars, CUDAG__DOC_MAP, "vars"))
        return false;
    bool ok = true;
    for (uint32_t i = 0; set && i < set->n; i++) {
        const cudag__doc *k = set->items[2 * i];
        if (cudag__free_key(k) || (vars && cudag__doc_get(vars, k->str)))
            continue;
        cudag__lerr(lw, CUDAG_EUNKNOWN, k->pos,
                    "graph file '%s' has no variable '%s'", f->path, k->str);
        ok = false;
    }
    uint32_t nv = vars && ok ? vars->n : 0;
    int64_t *val = cudag__arena_alloc(&lw->scratch, (nv + 1) * sizeof *val);
    bool *given = cudag__arena_alloc(&lw->scratch, nv + 1);
    if (!val || !given)
        return cudag__lerr(lw, CUDAG_ENOMEM, p->body->pos, "out of memory"),
               false;
    for (uint32_t i = 0; i < nv; i++) {
        const cudag__doc *k = vars->items[2 * i];
        const cudag__doc *v = set ? cudag__doc_get(set, k->str) : NULL;
        given[i] = v != NULL;
        if (v && cudag__eval(lw, v, p->env, &val[i]) != CUDAG_OK)
            ok = false;
    }
    lw->child[lw->nchild++] = f;
    cudag__map waiting;
    memset(&waiting, 0, sizeof waiting);
    for (uint32_t i = 0; i < nv && ok; i++) {
        const cudag__doc *k = vars->items[2 * i], *v = vars->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__is_ident(k->str, k->len)) {
            cudag__lerr(lw, CUDAG_EKEY, k->pos,
                        "'%s' is not a valid variable name", k->str);
            ok = false;
            break;
        }
        /* Bounds over the variables before it, checked as soon as it has
         * its value: those after it, computed from it, then say nothing
         * (B = 0 is the mistake, not cdiv(264, B)). */
        const cudag__doc *e = cudag__var_value(lw, k, v);
        if (!e ||
            (!given[i] && cudag__eval(lw, e, *env, &val[i]) != CUDAG_OK) ||
            !in_bounds(lw, p, f, set, k, v, val[i], *env, true, &waiting)) {
            ok = false;
            break;
        }
        cudag__binding *b = cudag__arena_alloc(&lw->scratch, sizeof *b);
        if (!b) {
            cudag__lerr(lw, CUDAG_ENOMEM, k->pos, "out of memory");
            ok = false;
            break;
        }
        *b = (cudag__binding){k->str, val[i], *env};
        *env = b;
    }
    /* Every bound, now that every variable has its value: a bound may
     * name a variable after its own. */
    bool inside = true;
    cudag__map out;
    memset(&out, 0, sizeof out);
    for (uint32_t i = 0; i < nv && ok; i++)
        inside = in_bounds(lw, p, f, set, vars->items[2 * i],
                           vars->items[2 * i + 1], val[i], *env, false,
                           &out) &&
                 inside;
    cudag__map_free(&out);
    cudag__map_free(&waiting);
    lw->nchild--;
    return ok && inside;
}

static void read_yaml(cudag__lower *lw, const cudag__pending *p)
{
    cudag_graph *g = lw->g;
    cudag__node *n = &g->nodes[p->node];
    cudag__child *ch = &n->u.ch;
    ch->sub = NULL;
    const cudag__doc *name = cudag__doc_get(p->body, "graph");
    const cudag__doc *set = cudag__doc_get(p->body, "vars");
    if (!cudag__want(lw, name, CUDAG__DOC_SCALAR, "graph") ||
        (set && !cudag__want(lw, set, CUDAG__DOC_MAP, "vars")))
        return;
    if (name->len == 0) {
        cudag__lerr(lw, CUDAG_EKEY, name->pos, "graph must name a file");
        return;
    }
    ch->file = name->str;
    const cudag__file *top = &lw->src->files[p->file];
    const char *dir = lw->nchild ? lw->child[lw->nchild - 1]->dir : top->dir;
    cudag__file *f = cudag__arena_alloc(&lw->scratch, sizeof *f);
    if (!f) {
        cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
        return;
    }
    if (lw->read_graph(lw, dir, name, f) != CUDAG_OK ||
        cycle(lw, top, f, name->pos))
        return;
    if (lw->nchild >= CUDAG__MAX_SUB_DEPTH) {
        cudag__lerr(lw, CUDAG_ELIMIT, name->pos,
                    "child graphs nested deeper than %u",
                    CUDAG__MAX_SUB_DEPTH);
        return;
    }
    if (!f->root) {
        cudag__lerr(lw, CUDAG_EKEY, name->pos, "graph file '%s' is empty",
                    f->path);
        return;
    }
    const cudag__doc *nodes = cudag__doc_get(f->root, "nodes");
    if (!cudag__want(lw, f->root, CUDAG__DOC_MAP, "a graph file") ||
        cudag__check_keys(lw, f->root, file_keys,
                          sizeof file_keys / sizeof *file_keys,
                          "a child graph file (its kernels, buffers and "
                          "conditions are its parent's)"))
        return;
    /* `cudag: 1` as in every other file: optional here, checked when
     * written. */
    const cudag__doc *ver = cudag__doc_get(f->root, "cudag");
    if (ver && cudag__check_version(lw, ver) != CUDAG_OK)
        return;
    if (!nodes) {
        cudag__lerr(lw, CUDAG_EKEY, name->pos, "graph file '%s' has no nodes",
                    f->path);
        return;
    }
    if (!cudag__want(lw, nodes, CUDAG__DOC_MAP, "nodes"))
        return;
    const cudag__binding *env = NULL;
    if (!bind_vars(lw, p, f, set, &env))
        return;
    const char *prefix = cudag__arena_printf(&lw->scratch, "%s.", n->name);
    cudag_error e;
    if (!prefix)
        cudag__lerr(lw, CUDAG_ENOMEM, n->pos, "out of memory");
    else if (cudag__subgraph_new(g, p->node, 0, n->name, prefix, &ch->sub,
                                 &e) != CUDAG_OK)
        cudag__lerr(lw, e.code, n->pos, "%s", e.message);
    if (!ch->sub)
        return;
    unsigned nerr = lw->d->nerr, nrepeat = lw->d->nrepeat;
    lw->child[lw->nchild++] = f;
    lw->lower_sub(lw, ch->sub, nodes, env);
    lw->nchild--;
    /* The error is in the child's file, said once however many nodes use
     * it (a repeat is dropped); where each was instantiated from tells
     * which copies. */
    if (lw->d->nerr > nerr || lw->d->nrepeat > nrepeat)
        cudag__report(lw->d, CUDAG_SEV_NOTE, CUDAG_OK, name->pos,
                      "in child graph '%s' of node '%s'", f->path, n->name);
}

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    const cudag_graph *sub = n->u.ch.sub;
    if (!sub) {
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "child-graph node '%s' has no graph", n->name);
        return;
    }
    c->check_sub(c, n->u.ch.sub);
}

/* ---- built inline ------------------------------------------------------ */

/* A child graph that a programmatic edge goes into or out of is built
 * inline: its nodes are added to the graph that holds the node, since a
 * child-graph node has no programmatic port and its kernels do.  Every edge
 * of the node then joins its first nodes (those no edge of the child goes
 * into) or its last ones (no edge goes out of): the same order as the child
 * graph's, a full edge included, and a programmatic one reaches each kernel
 * (the checker refuses it where one of them is not a kernel). */
static bool built_inline(const cudag_graph *h, uint32_t n)
{
    /* An empty child has no kernel to reach: it stays one node, and the
     * edge is refused at it. */
    const cudag_graph *sub = h->nodes[n].u.ch.sub;
    if (!sub || !sub->nnodes)
        return false;
    /* The build asks once per edge end: a checked graph's node lists its
     * own edges (else every edge is looked at, each time). */
    const cudag__topo *t = &h->topo;
    if (h->checked && t->out_start) {
        for (uint32_t k = t->out_start[n]; k < t->out_start[n + 1]; k++)
            if (h->edges[t->out_edge[k]].kind == CUDAG_EDGE_PROGRAMMATIC)
                return true;
        for (uint32_t k = t->in_start[n]; k < t->in_start[n + 1]; k++)
            if (h->edges[t->in_edge[k]].kind == CUDAG_EDGE_PROGRAMMATIC)
                return true;
        return false;
    }
    for (uint32_t e = 0; e < h->nedges; e++)
        if ((h->edges[e].from == n || h->edges[e].to == n) &&
            h->edges[e].kind == CUDAG_EDGE_PROGRAMMATIC)
            return true;
    return false;
}

/* kind.h, edge_ends: the child's first (last) nodes, when it is built
 * inline. */
static int edge_ends(const cudag_graph *h, uint32_t n, bool last,
                     cudag__end_fn fn, void *user)
{
    if (!built_inline(h, n))
        return -1;
    const cudag_graph *sub = h->nodes[n].u.ch.sub;
    /* Which nodes no edge of the child leaves (last) or enters: from its
     * checked topology, or, before the child passed its checks, a scan of
     * its edges per node (no allocation: a check must not fail for want of
     * memory it does not need). */
    const cudag__topo *t = &sub->topo;
    const uint32_t *start = !sub->checked ? NULL
                            : last        ? t->out_start
                                          : t->in_start;
    bool go = true;
    for (uint32_t m = 0; m < sub->nnodes && go; m++) {
        bool end = true;
        if (start)
            end = start[m + 1] == start[m];
        for (uint32_t e = 0; !start && e < sub->nedges && end; e++)
            end = (last ? sub->edges[e].from : sub->edges[e].to) != m;
        if (end)
            go = fn(user, sub, m);
    }
    return go ? 1 : 0;
}

/* ---- build ------------------------------------------------------------ */

/* The child's nodes are added to the graph the node embeds (not to a graph
 * the node copies), so that their handles stay those of the built graph;
 * built inline, to the graph that holds the node, which then has no handle
 * of its own (its edges are built at edge_ends). */
static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    const cudag__drv *d = b->gpu->drv;
    if (built_inline(b->g, n)) {
        *out = NULL;
        return b->build_sub(b, nd->u.ch.sub, graph, err);
    }
    CUgraph empty = NULL, child = NULL;
    CUresult r = d->cuGraphCreate(&empty, 0);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos,
                              "cuGraphCreate: child graph of node '%s'",
                              nd->name);
    r = d->cuGraphAddChildGraphNode(out, graph, NULL, 0, empty);
    (void)d->cuGraphDestroy(empty);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos,
                              "cuGraphAddChildGraphNode for node '%s'",
                              nd->name);
    r = d->cuGraphChildGraphNodeGetGraph(*out, &child);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos,
                              "cuGraphChildGraphNodeGetGraph for node '%s'",
                              nd->name);
    return b->build_sub(b, nd->u.ch.sub, child, err);
}

/* ---- output ------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g, const cudag__node *n)
{
    (void)g;
    cudag__sb_puts(b, "graph ");
    cudag__sb_dot_escape(b, n->u.ch.file ? n->u.ch.file : "");
}

static void body_label(cudag__sb *b, const cudag_graph *g,
                       const cudag__node *n, uint32_t slot, bool dot)
{
    (void)slot;
    const char *file = n->u.ch.file ? n->u.ch.file : "";
    bool flat = built_inline(g, (uint32_t)(n - g->nodes));
    if (dot) {
        cudag__sb_dot_escape(b, n->name);
        cudag__sb_puts(b, flat ? ": graph (inline) " : ": graph ");
        cudag__sb_dot_escape(b, file);
        return;
    }
    if (flat)
        cudag__sb_printf(b, "runs once, from '%s', its nodes built into the "
                            "graph that holds it (a programmatic edge "
                            "reaches them)", file);
    else
        cudag__sb_printf(b, "runs once, as a child graph, from '%s'", file);
}

/* ---- the table entry ------------------------------------------------ */

static const char *const keys[] = {"graph", "vars", "after"};

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* What the child graph's nodes touch. */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    (void)g;
    if (n->u.ch.sub && s->add_graph)
        s->add_graph(s, n->u.ch.sub);
}

const cudag__kind_ops cudag__kind_child = {
    .kind = CUDAG_NODE_CHILD,
    .name = "graph",
    .what = "a child-graph node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .pdl_end = false,
    .edge_ends = edge_ends,
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, child_nodes),
    .read_yaml = read_yaml,
    .check = check,
    .access = access,
    .add = add,
    .dot_label = dot_label,
    .dot_shape = ", shape=component, style=filled, fillcolor=lightyellow",
    .dot_legend = "child graph",
    .body_label = body_label,
};
