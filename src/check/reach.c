/* reach.c — reachability over a checked graph's memory-ordering edges: a
 * cover of the nodes by chains, built greedily in topological order (a node
 * extends a chain whose last node is one of its ancestors, so fork-joins and
 * repeated layers need as many chains as they are wide), and per node the
 * last place on each chain among its ancestors.  Building it is
 * (nodes + edges) x chains; a query is one lookup. */
#include "check/reach.h"
#include "cudag.h"
#include "base/alloc.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#define DEFAULT_BUDGET ((size_t)1 << 23)

/* Fills r->table, or leaves it NULL when the chains pass the stride. */
static bool build_table(cudag__reach *r, size_t budget)
{
    const cudag_graph *g = r->g;
    const cudag__topo *t = r->t;
    uint32_t n = g->nnodes;
    /* Wider than 1 024 chains, a row costs more than the searches it saves
     * (a wide graph's searches are short). */
    size_t stride = budget / (n ? n : 1);
    if (stride > n)
        stride = n;
    if (stride > 1024)
        stride = 1024;
    if (stride < 1)
        return true;
    uint32_t *tab = cudag__calloc((size_t)n * stride, sizeof *tab);
    uint32_t *tail = cudag__malloc(stride * sizeof *tail);   /* chain -> node */
    if (!tab || !tail) {
        cudag__free(tab);
        cudag__free(tail);
        return false;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = t->order[i];
        uint32_t *row = tab + (size_t)v * stride;
        for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++) {
            if (!r->orders[t->in_edge[j]])
                continue;
            const uint32_t *p = tab + (size_t)g->edges[t->in_edge[j]].from *
                                          stride;
            for (uint32_t c = 0; c < k; c++)
                if (p[c] > row[c])
                    row[c] = p[c];
        }
        /* A chain whose last node is an ancestor of v: v continues it. */
        uint32_t c = 0;
        while (c < k && !(row[c] && row[c] == r->idx[tail[c]] + 1))
            c++;
        if (c == k) {
            if (k == stride) {      /* too wide for the budget: search */
                cudag__free(tab);
                cudag__free(tail);
                return true;
            }
            k++;
            r->idx[v] = 0;
        } else {
            r->idx[v] = r->idx[tail[c]] + 1;
        }
        r->chain[v] = c;
        tail[c] = v;
        row[c] = r->idx[v] + 1;
    }
    cudag__free(tail);
    r->table = tab;
    r->stride = (uint32_t)stride;
    return true;
}

bool cudag__reach_init(cudag__reach *r, const cudag_graph *g,
                       const cudag__topo *t, const bool *orders,
                       size_t budget)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    r->t = t;
    r->orders = orders;
    size_t nn = (size_t)g->nnodes + 1;
    r->where = cudag__malloc(nn * sizeof *r->where);
    r->chain = cudag__malloc(nn * sizeof *r->chain);
    r->idx = cudag__malloc(nn * sizeof *r->idx);
    r->stamp = cudag__calloc(nn, sizeof *r->stamp);
    r->stack = cudag__malloc(nn * sizeof *r->stack);
    if (!r->where || !r->chain || !r->idx || !r->stamp || !r->stack)
        goto fail;
    for (uint32_t i = 0; i < g->nnodes; i++)
        r->where[t->order[i]] = i;
    if (!build_table(r, budget ? budget : DEFAULT_BUDGET))
        goto fail;
    return true;
fail:
    cudag__reach_free(r);
    return false;
}

/* The backward search from x over ordering edges, cut at u's place. */
static bool search(cudag__reach *r, uint32_t u, uint32_t x)
{
    const cudag_graph *g = r->g;
    const cudag__topo *t = r->t;
    uint32_t mark = ++r->tick, top = 0;
    if (mark == 0) {                /* wrapped: clear the stamps */
        memset(r->stamp, 0, (size_t)g->nnodes * sizeof *r->stamp);
        mark = r->tick = 1;
    }
    r->stack[top++] = x;
    r->stamp[x] = mark;
    while (top) {
        uint32_t v = r->stack[--top];
        r->searched++;
        for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++) {
            uint32_t p = g->edges[t->in_edge[j]].from;
            if (!r->orders[t->in_edge[j]] || r->stamp[p] == mark ||
                r->where[p] < r->where[u])
                continue;
            if (p == u)
                return true;
            r->stamp[p] = mark;
            r->stack[top++] = p;
        }
    }
    return false;
}

bool cudag__reach_query(cudag__reach *r, uint32_t u, uint32_t x)
{
    if (u == x)
        return true;
    if (r->where[u] >= r->where[x])
        return false;
    if (r->table)
        return r->table[(size_t)x * r->stride + r->chain[u]] > r->idx[u];
    return search(r, u, x);
}

void cudag__reach_free(cudag__reach *r)
{
    cudag__free(r->where);
    cudag__free(r->chain);
    cudag__free(r->idx);
    cudag__free(r->table);
    cudag__free(r->stamp);
    cudag__free(r->stack);
    memset(r, 0, sizeof *r);
}
