/* dot.c — a checked graph as Graphviz DOT: one box per node with its kernel,
 * grid and block, edges styled by kind, the critical path in red, repetition
 * groups as nested clusters, each sub-graph (a conditional node's body) as a
 * cluster attached to its node, and a legend.  Each node kind draws its own
 * label and shape (kind.h). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "ir/graph.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- DOT ---------------------------------------------------------------- */

/* Attributes of each edge kind: full solid, programmatic bold dashed blue
 * with a "PDL" label (the kind that changes what a kernel may assume, so it
 * must stand out), launch order dotted. */
static const char *const edge_style[3] = {
    "",
    "style=\"bold,dashed\", color=blue, fontcolor=blue, label=\"PDL\"",
    "style=dotted, color=darkgreen, fontcolor=darkgreen, label=\"order\"",
};

#define CRITICAL_ATTRS "color=red, penwidth=2.5"

/* A node whose kind gives no shape is drawn as the graph's default node. */
#define DEFAULT_SHAPE "shape=box, style=rounded"

/* Node i of graph g, named n<k> after its flat number (ir/graph.h topo.tree). */
static void put_node(cudag__sb *b, const cudag_graph *g, uint32_t i,
                     bool critical)
{
    const cudag__node *n = &g->nodes[i];
    const cudag__kind_ops *k = cudag__kind(n->kind);
    cudag__sb_printf(b, "  n%u [label=\"", g->node_base + i);
    cudag__sb_dot_escape(b, n->name);
    cudag__sb_puts(b, "\\n");
    if (k)
        k->dot_label(b, g, n);
    cudag__sb_puts(b, "\"");
    cudag__sb_printf(b, "%s%s];\n", k && k->dot_shape ? k->dot_shape : "",
                     critical ? ", " CRITICAL_ATTRS : "");
}

/*
 * Marks the critical path: the longest path by node count.  It ends at the
 * lowest-index node on the deepest level and walks back, at each step, to
 * the lowest-index predecessor one level up (in-edges are sorted by source),
 * so the choice among equally long paths is deterministic.
 */
static void mark_critical(const cudag_graph *g, bool *node_on, bool *edge_on)
{
    const cudag__topo *t = &g->topo;
    if (g->nnodes == 0)
        return;
    uint32_t v = 0;
    for (uint32_t i = 1; i < g->nnodes; i++)
        if (t->level[i] > t->level[v])
            v = i;
    node_on[v] = true;
    while (t->level[v] > 0) {
        uint32_t next = CUDAG__NONE;
        for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++) {
            uint32_t e = t->in_edge[j], u = g->edges[e].from;
            if (t->level[u] + 1 == t->level[v]) {
                edge_on[e] = true;
                next = u;
                break;
            }
        }
        if (next == CUDAG__NONE)
            break; /* cannot happen in a checked graph */
        v = next;
        node_on[v] = true;
    }
}

/*
 * Writes the repetition groups as nested `subgraph cluster_…`.  The nodes
 * are declared (with their attributes) before, at the top level; naming one
 * inside a cluster moves it there.  The walk over the group tree keeps its
 * own stack, so deep nesting costs no recursion.  child_start/child and
 * node_start/member are CSR lists of each group's child groups and nodes.
 * Groups whose parent chain never reaches a root (a malformed IR) are left
 * out, and their nodes stay at the top level.
 */
static void put_clusters(cudag__sb *b, const cudag_graph *g,
                         const uint32_t *child_start, const uint32_t *child,
                         const uint32_t *node_start, const uint32_t *member,
                         uint32_t *stack, uint32_t *next, unsigned indent)
{
    uint32_t ng = g->ngroups;
    for (uint32_t r = 0; r < ng; r++) {
        uint32_t p = g->groups[r].parent;
        if (p != CUDAG__NONE && p < ng && p != r)
            continue;
        uint32_t depth = 0;
        stack[depth] = r;
        next[depth++] = child_start[r];
        bool entering = true;
        while (depth > 0) {
            uint32_t gi = stack[depth - 1];
            if (entering) {
                int in = (int)(2 * depth + indent);
                /* A sub-graph's groups are named after it, so that cluster
                 * names stay distinct across the tree. */
                if (g->parent)
                    cudag__sb_printf(b, "%*ssubgraph \"cluster_%u_%u\" {\n",
                                     in, "", g->node_base, gi);
                else
                    cudag__sb_printf(b, "%*ssubgraph \"cluster_%u\" {\n", in,
                                     "", gi);
                cudag__sb_printf(b, "%*slabel=\"", in + 2, "");
                cudag__sb_dot_escape(b, g->groups[gi].name);
                cudag__sb_puts(b, "\"; style=\"rounded,dashed\"; "
                                  "color=gray50; fontcolor=gray30;\n");
                for (uint32_t j = node_start[gi]; j < node_start[gi + 1]; j++)
                    cudag__sb_printf(b, "%*sn%u;\n", in + 2, "",
                                     g->node_base + member[j]);
                entering = false;
            }
            if (next[depth - 1] < child_start[gi + 1]) {
                uint32_t c = child[next[depth - 1]++];
                stack[depth] = c;
                next[depth++] = child_start[c];
                entering = true;
                continue;
            }
            cudag__sb_printf(b, "%*s}\n", (int)(2 * depth + indent), "");
            depth--;
        }
    }
}

/* Fills CSR lists (start[0..ng], items) of group → child groups or nodes. */
static void group_lists(const cudag_graph *g, bool nodes, uint32_t *start,
                        uint32_t *items)
{
    uint32_t ng = g->ngroups, n = nodes ? g->nnodes : ng;
    memset(start, 0, ((size_t)ng + 1) * sizeof *start);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = nodes ? g->nodes[i].group : g->groups[i].parent;
        if (p < ng && (nodes || p != i))
            start[p + 1]++;
    }
    for (uint32_t k = 0; k < ng; k++)
        start[k + 1] += start[k];
    /* Fill in index order, using start[p] as group p's cursor. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = nodes ? g->nodes[i].group : g->groups[i].parent;
        if (p < ng && (nodes || p != i))
            items[start[p]++] = i;
    }
    /* The fill advanced each start[p] to where p's list ends, which is where
     * p + 1's begins: shift back by one. */
    for (uint32_t k = ng; k > 0; k--)
        start[k] = start[k - 1];
    start[0] = 0;
}

static void put_legend(cudag__sb *b, const cudag_graph *g, bool critical)
{
    /* dot lays a cluster's unconnected parts out right to left, so they are
     * written in reverse to read left to right. */
    cudag__sb_puts(b,
        "  subgraph \"cluster_legend\" {\n"
        "    label=\"legend\"; style=rounded; color=gray70; fontsize=9;\n"
        "    node [shape=point, width=0.05, label=\"\"];\n");
    if (critical)
        cudag__sb_puts(b, "    legend_a3 -> legend_b3 [label=\"critical "
                          "path\", fontcolor=red, " CRITICAL_ATTRS "];\n");
    cudag__sb_printf(b, "    legend_a2 -> legend_b2 [%s];\n", edge_style[2]);
    cudag__sb_printf(b, "    legend_a1 -> legend_b1 [%s];\n", edge_style[1]);
    cudag__sb_puts(b,
        "    legend_a0 -> legend_b0 [label=\"full\"];\n"
        "    node [fontsize=9, width=0.75];\n");
    size_t nkinds;
    const cudag__kind_ops *const *kinds = cudag__kinds(&nkinds);
    for (size_t i = nkinds; i-- > 0;) {
        /* The kinds a file can hold, always; those only the C API adds,
         * where the graph has some. */
        bool present = kinds[i]->read_yaml != NULL;
        for (uint32_t n = 0; n < g->nnodes && !present; n++)
            present = g->nodes[n].kind == kinds[i]->kind;
        if (!present)
            continue;
        cudag__sb_printf(b, "    legend_%s [label=\"%s\"%s];\n", kinds[i]->name,
                         kinds[i]->dot_legend,
                         kinds[i]->dot_shape ? kinds[i]->dot_shape
                                             : ", " DEFAULT_SHAPE);
    }
    cudag__sb_puts(b, "  }\n");
}

/* The repetition groups of g as clusters (when there are any), indented
 * by `indent`.  False on OOM. */
static bool put_groups(cudag__sb *b, const cudag_graph *g, unsigned indent)
{
    uint32_t ng = g->ngroups;
    if (!ng)
        return true;
    /* child_start, child, node_start, member, stack, next */
    size_t words = 4 * ((size_t)ng + 1) + (size_t)ng + g->nnodes;
    uint32_t *lists = cudag__malloc(words * sizeof *lists);
    if (!lists)
        return false;
    uint32_t *child_start = lists, *child = child_start + ng + 1,
             *node_start = child + ng, *member = node_start + ng + 1,
             *stack = member + g->nnodes, *next = stack + ng + 1;
    group_lists(g, false, child_start, child);
    group_lists(g, true, node_start, member);
    put_clusters(b, g, child_start, child, node_start, member, stack, next,
                 indent);
    cudag__free(lists);
    return true;
}

static void put_edges(cudag__sb *b, const cudag_graph *g, const bool *edge_on)
{
    for (uint32_t i = 0; i < g->nedges; i++) {
        const cudag__edge *e = &g->edges[i];
        const char *style = edge_style[e->kind];
        bool on = edge_on && edge_on[i];
        cudag__sb_printf(b, "  n%u -> n%u", g->node_base + e->from,
                         g->node_base + e->to);
        if (*style || on || e->inferred) {
            cudag__sb_printf(b, " [%s%s%s", style, *style && on ? ", " : "",
                             on ? CRITICAL_ATTRS : "");
            /* Inferred by `order: program`: the buffer and bytes why. */
            if (e->inferred && e->why_buffer == CUDAG__NONE)
                cudag__sb_printf(b, "%sxlabel=\"condition %s\"",
                                 *style || on ? ", " : "",
                                 g->conds[e->why_lo].name);
            else if (e->inferred)
                cudag__sb_printf(b, "%sxlabel=\"%s [%llu, %llu)%s\"",
                                 *style || on ? ", " : "",
                                 g->buffers[e->why_buffer].name,
                                 (unsigned long long)e->why_lo,
                                 (unsigned long long)e->why_hi,
                                 e->why_unknown ? ", extent unknown" : "");
            cudag__sb_puts(b, "]");
        }
        cudag__sb_puts(b, ";\n");
    }
}

/* The sub-graphs of g's nodes, each a cluster labelled by its node's kind
 * ("loop: while more") holding its nodes, its groups and, nested, its own
 * sub-graphs; a dashed arrow from the node goes to the cluster.  An empty
 * body shows a placeholder.  The recursion is bounded by
 * CUDAG__MAX_SUB_DEPTH.  False on OOM. */
static bool put_bodies(cudag__sb *b, const cudag_graph *g, unsigned indent,
                       bool groups)
{
    for (uint32_t i = 0; i < g->nsubs; i++) {
        const cudag_graph *s = g->subs[i];
        const cudag__node *owner = &g->nodes[s->owner];
        const cudag__kind_ops *k = cudag__kind(owner->kind);
        cudag__sb_printf(b, "%*ssubgraph \"cluster_body_%u\" {\n", (int)indent,
                         "", s->node_base);
        cudag__sb_printf(b, "%*slabel=\"", (int)indent + 2, "");
        if (k && k->body_label)
            k->body_label(b, g, owner, s->slot, true);
        cudag__sb_puts(b, "\"; style=\"rounded,filled\"; color=slateblue; "
                          "fillcolor=\"#f4f2ff\"; fontcolor=slateblue4;\n");
        for (uint32_t n = 0; n < s->nnodes; n++) {
            cudag__sb_printf(b, "%*s", (int)indent, "");
            put_node(b, s, n, false);
        }
        if (!s->nnodes)
            cudag__sb_printf(b, "%*s  e%u [label=\"(nothing)\", "
                                "shape=plaintext];\n",
                             (int)indent, "", s->node_base);
        if (groups && !put_groups(b, s, indent))
            return false;
        if (!put_bodies(b, s, indent + 2, groups))
            return false;
        cudag__sb_printf(b, "%*s}\n", (int)indent, "");
    }
    for (uint32_t i = 0; i < g->nsubs; i++) {
        const cudag_graph *s = g->subs[i];
        /* To the body's first node in its topological order. */
        uint32_t first = s->topo.order && s->nnodes ? s->topo.order[0] : 0;
        if (s->nnodes)
            cudag__sb_printf(b, "  n%u -> n%u", g->node_base + s->owner,
                             s->node_base + first);
        else
            cudag__sb_printf(b, "  n%u -> e%u", g->node_base + s->owner,
                             s->node_base);
        cudag__sb_printf(b, " [lhead=\"cluster_body_%u\", style=dashed, "
                            "color=slateblue, arrowhead=odot];\n",
                         s->node_base);
        put_edges(b, s, NULL);
    }
    return true;
}

int cudag_dot(const cudag_graph *g, unsigned flags, char **text,
              cudag_error *err)
{
    cudag__error_clear(err);
    if (text)
        *text = NULL;
    if (!g || !text)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_dot: %s is NULL", g ? "text" : "graph");
    int rc = cudag__need_root(g, "cudag_dot", "draw graph", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!g->checked)
        return cudag__fail_at(err, CUDAG_ESTATE, CUDAG__NOPOS,
                              "cudag_dot: graph '%s' has not passed "
                              "cudag_check()",
                              g->name);
    bool critical = !(flags & CUDAG_DOT_NO_CRITICAL);
    bool clusters = !(flags & CUDAG_DOT_NO_CLUSTERS);
    cudag__sb b = {NULL, 0, 0, false};
    bool *node_on = cudag__calloc((size_t)g->nnodes + 1, sizeof *node_on);
    bool *edge_on = cudag__calloc((size_t)g->nedges + 1, sizeof *edge_on);
    if (!node_on || !edge_on)
        goto oom;
    if (critical)
        mark_critical(g, node_on, edge_on);

    cudag__sb_puts(&b, "digraph \"");
    cudag__sb_dot_escape(&b, g->name);
    cudag__sb_puts(&b, "\" {\n  graph [label=\"");
    cudag__sb_dot_escape(&b, g->name);
    cudag__sb_printf(&b,
                     "\\n%u node%s, %u edge%s, %u level%s\", labelloc=t, "
                     "fontname=\"Helvetica\"%s];\n"
                     "  node [fontname=\"Helvetica\", fontsize=10, "
                     DEFAULT_SHAPE "];\n"
                     "  edge [fontname=\"Helvetica\", fontsize=9];\n",
                     g->nnodes, g->nnodes == 1 ? "" : "s", g->nedges,
                     g->nedges == 1 ? "" : "s", g->topo.depth,
                     g->topo.depth == 1 ? "" : "s",
                     /* Arrows end at a body's cluster. */
                     g->nsubs ? ", compound=true" : "");
    for (uint32_t i = 0; i < g->nnodes; i++)
        put_node(&b, g, i, node_on[i]);
    if (clusters && !put_groups(&b, g, 0))
        goto oom;
    put_edges(&b, g, edge_on);
    if (!put_bodies(&b, g, 2, clusters))
        goto oom;
    put_legend(&b, g, critical);
    cudag__sb_puts(&b, "}\n");

    cudag__free(node_on);
    cudag__free(edge_on);
    *text = cudag__sb_finish(&b);
    if (!*text)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory writing DOT");
    return CUDAG_OK;

oom:
    cudag__free(node_on);
    cudag__free(edge_on);
    cudag__free(cudag__sb_finish(&b));
    return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                          "out of memory writing DOT");
}
