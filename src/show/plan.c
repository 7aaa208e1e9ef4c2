/* plan.c — the shape of a checked graph: node and edge counts by kind, depth
 * (levels of the as-soon-as-possible schedule), width (the most nodes on one
 * level, i.e. the parallelism available), total buffer bytes, and the
 * schedule itself, level by level.
 *
 * The text is printed as is by `cudag plan`, so its format is stable (tests
 * and scripts read it).  Each line is "key: value", every one ends with
 * '\n', and the numbers are plain decimal integers:
 *
 *     graph: NAME
 *     nodes: N (K kernel, S memset, C memcpy, G gemm[, …])
 *     edges: E (F full, P programmatic, L launch_order)
 *     depth: D
 *     width: W
 *     buffers: B (BYTES bytes, HUMAN)
 *     schedule:
 *     level 0: a b c
 *     level 1: d
 *     …
 *     body loop: runs again and again while condition 'more' is not 0; …
 *       level 0: loop.step
 *       …
 *
 * The node counts list every kind a file can hold, then the kinds only the
 * C API adds (capture, event_record, event_wait, host) where there are any.
 * D is the number of levels (nodes on the longest path), W the most nodes on
 * one level, B the number of buffers and BYTES their total size.  HUMAN is
 * BYTES in the largest binary unit that keeps it at least 1, with one
 * decimal ("1.5 MiB"; "512 B" below 1 KiB).  Level L holds the nodes whose
 * longest path from a root has L edges, so every predecessor of a node is on
 * a lower level.  Each level line lists its nodes by full name, separated by
 * single spaces, in the order they were added to the graph.  An empty graph
 * prints depth 0, width 0 and no level lines.
 *
 * The counts (nodes, edges, buffers) cover the graph and every sub-graph of
 * its nodes (conditional bodies); depth, width and the first schedule are
 * the graph's own.  Each sub-graph follows, depth first, as a line
 * "body NAME: WHEN" (when it runs, as its node's kind says: for a
 * conditional body, decided on the device) and its own schedule, each line
 * indented two spaces per level of nesting.
 */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "ir/graph.h"
#include "kinds/kind.h"
#include "check/order.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

static void human_bytes(char *buf, size_t cap, uint64_t bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                       "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

/* The counts of the plan (everything but the width). */
static void plan_counts(const cudag_graph *g, cudag_plan_info *pi)
{
    memset(pi, 0, sizeof *pi);
    pi->nodes = cudag__tree_nnodes(g);
    pi->bodies = cudag__tree_ngraphs(g) - 1;
    for (uint32_t i = 0; i < pi->nodes; i++) {
        const cudag__kind_ops *k = cudag__kind(cudag__tree_node(g, i)->kind);
        if (k)
            (*(size_t *)((char *)pi + k->plan_count))++;
    }
    for (uint32_t t = 0; t < cudag__tree_ngraphs(g); t++) {
        const cudag_graph *h = cudag__tree_graph(g, t);
        for (uint32_t i = 0; i < h->nedges; i++)
            pi->edges[h->edges[i].kind]++;
    }
    /* Checked buffers are at most 64 TiB and at most 65536 of them: the sum
     * fits in 64 bits. */
    for (uint32_t i = 0; i < g->nbuffers; i++)
        pi->buffer_bytes += cudag__buffer_bytes(&g->buffers[i]);
    pi->depth = g->topo.depth;
}

/* The nodes grouped by level in index order (a counting sort): level l's
 * are by_level[start[l] .. start[l + 1]).  Returns the width, the most
 * nodes on one level. */
static size_t plan_levels(const cudag_graph *g, uint32_t *start,
                          uint32_t *by_level)
{
    uint32_t depth = g->topo.depth;
    size_t width = 0;
    memset(start, 0, ((size_t)depth + 2) * sizeof *start);
    for (uint32_t i = 0; i < g->nnodes; i++)
        start[g->topo.level[i] + 1]++;
    for (uint32_t l = 0; l < depth; l++) {
        if (start[l + 1] > width)
            width = start[l + 1];
        start[l + 1] += start[l];
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        by_level[start[g->topo.level[i]]++] = i;
    /* The fill moved each start to the next level's; shift back. */
    for (uint32_t l = depth; l > 0; l--)
        start[l] = start[l - 1];
    start[0] = 0;
    return width;
}

/* Graph h's schedule, each line after `indent` spaces. */
static void put_schedule(cudag__sb *b, const cudag_graph *h, unsigned indent,
                         uint32_t *start, uint32_t *by_level)
{
    plan_levels(h, start, by_level);
    for (uint32_t l = 0; l < h->topo.depth; l++) {
        cudag__sb_printf(b, "%*slevel %u:", (int)indent, "", l);
        for (uint32_t j = start[l]; j < start[l + 1]; j++) {
            cudag__sb_puts(b, " ");
            cudag__sb_puts(b, h->nodes[by_level[j]].name);
        }
        cudag__sb_puts(b, "\n");
    }
}

/* The sub-graphs of g's nodes, depth first, with their schedules. */
static void put_bodies(cudag__sb *b, const cudag_graph *g, uint32_t *start,
                       uint32_t *by_level)
{
    for (uint32_t i = 0; i < g->nsubs; i++) {
        const cudag_graph *s = g->subs[i];
        const cudag__node *owner = &g->nodes[s->owner];
        const cudag__kind_ops *k = cudag__kind(owner->kind);
        unsigned indent = 2 * (s->depth - 1);
        cudag__sb_printf(b, "%*sbody %s:", (int)indent, "", s->name);
        if (k && k->body_label) {
            cudag__sb_puts(b, " ");
            k->body_label(b, g, owner, s->slot, false);
        }
        cudag__sb_puts(b, "\n");
        put_schedule(b, s, indent + 2, start, by_level);
        put_bodies(b, s, start, by_level);
    }
}

/* The plan's text (format at the top of this file); NULL on OOM. */
/* The edges `order: program` inferred, each with why (none: nothing). */
static void put_inferred(cudag__sb *b, const cudag_graph *g)
{
    bool any = false;
    for (uint32_t t = 0; t < cudag__tree_ngraphs(g); t++) {
        const cudag_graph *h = cudag__tree_graph(g, t);
        for (uint32_t i = 0; i < h->nedges; i++) {
            const cudag__edge *e = &h->edges[i];
            if (!e->inferred)
                continue;
            if (!any)
                cudag__sb_puts(b, "inferred edges (order: program):\n");
            any = true;
            if (e->why_buffer == CUDAG__NONE) {
                cudag__sb_printf(b, "  %s -> %s (%s): %s, condition '%s'\n",
                                 h->nodes[e->from].name,
                                 h->nodes[e->to].name,
                                 cudag_edge_kind_name(e->kind),
                                 cudag__hazard_name(e->inferred),
                                 h->conds[e->why_lo].name);
                continue;
            }
            const char *buf = h->buffers[e->why_buffer].name;
            cudag__sb_printf(b, "  %s -> %s (%s): %s, buffer '%s' bytes "
                                "[%llu, %llu)%s%s%s\n",
                             h->nodes[e->from].name, h->nodes[e->to].name,
                             cudag_edge_kind_name(e->kind),
                             cudag__hazard_name(e->inferred), buf,
                             (unsigned long long)e->why_lo,
                             (unsigned long long)e->why_hi,
                             e->why_unknown
                                 ? " (an extent is unknown: taken to the "
                                   "buffer's end; state it with '"
                                 : "",
                             e->why_unknown ? buf : "",
                             e->why_unknown ? " + OFFSET: COUNT')" : "");
        }
    }
}

static char *plan_text(const cudag_graph *g, const cudag_plan_info *pi,
                       uint32_t *start, uint32_t *by_level)
{
    char human[32];
    human_bytes(human, sizeof human, pi->buffer_bytes);
    cudag__sb b = {NULL, 0, 0, false};
    cudag__sb_printf(&b, "graph: %s\n", g->name);
    cudag__sb_printf(&b, "nodes: %zu (", pi->nodes);
    size_t nkinds;
    const cudag__kind_ops *const *kinds = cudag__kinds(&nkinds);
    for (size_t k = 0; k < nkinds; k++) {
        size_t count =
            *(const size_t *)((const char *)pi + kinds[k]->plan_count);
        /* The kinds a file can hold, always; those only the C API adds,
         * where the graph has some. */
        if (kinds[k]->read_yaml || count)
            cudag__sb_printf(&b, "%s%zu %s", k ? ", " : "", count,
                             kinds[k]->name);
    }
    cudag__sb_puts(&b, ")\n");
    cudag__sb_printf(&b,
                     "edges: %zu (%zu full, %zu programmatic, %zu "
                     "launch_order)\n",
                     pi->edges[CUDAG_EDGE_FULL] +
                         pi->edges[CUDAG_EDGE_PROGRAMMATIC] +
                         pi->edges[CUDAG_EDGE_LAUNCH_ORDER],
                     pi->edges[CUDAG_EDGE_FULL],
                     pi->edges[CUDAG_EDGE_PROGRAMMATIC],
                     pi->edges[CUDAG_EDGE_LAUNCH_ORDER]);
    cudag__sb_printf(&b, "depth: %zu\n", pi->depth);
    cudag__sb_printf(&b, "width: %zu\n", pi->width);
    cudag__sb_printf(&b, "buffers: %u (%llu bytes, %s)\n", g->nbuffers,
                     (unsigned long long)pi->buffer_bytes, human);
    cudag__sb_puts(&b, "schedule:\n");
    put_schedule(&b, g, 0, start, by_level);
    put_bodies(&b, g, start, by_level);
    put_inferred(&b, g);
    return cudag__sb_finish(&b);
}

int cudag_plan(const cudag_graph *g, cudag_plan_info *info, char **text,
               cudag_error *err)
{
    cudag__error_clear(err);
    if (text)
        *text = NULL;
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_plan: graph is NULL");
    int rc = cudag__need_root(g, "cudag_plan", "plan graph", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!g->checked)
        return cudag__fail_at(err, CUDAG_ESTATE, CUDAG__NOPOS,
                              "cudag_plan: graph '%s' has not passed "
                              "cudag_check()",
                              g->name);
    cudag_plan_info pi;
    plan_counts(g, &pi);
    /* Room for the largest graph of the tree: each schedule reuses it. */
    size_t depth = 0, nodes = 0;
    for (uint32_t t = 0; t < cudag__tree_ngraphs(g); t++) {
        const cudag_graph *h = cudag__tree_graph(g, t);
        depth = h->topo.depth > depth ? h->topo.depth : depth;
        nodes = h->nnodes > nodes ? h->nnodes : nodes;
    }
    uint32_t *start = cudag__calloc(depth + 2, sizeof *start);
    uint32_t *by_level = cudag__malloc((nodes + 1) * sizeof *by_level);
    if (!start || !by_level)
        goto oom;
    pi.width = plan_levels(g, start, by_level);
    if (text && !(*text = plan_text(g, &pi, start, by_level)))
        goto oom;
    cudag__free(start);
    cudag__free(by_level);
    if (info)
        *info = pi;
    return CUDAG_OK;
oom:
    cudag__free(start);
    cudag__free(by_level);
    return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                          "out of memory planning graph '%s'", g->name);
}
