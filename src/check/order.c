/* order.c — `order: program`: the nodes of a graph run as if one after the
 * other in the order written, and the edges that order needs are derived
 * from their access sets.  Each buffer is walked in written order with an
 * interval map (accmap.c), which names for each access the last writer of
 * the bytes (read after write, write after write) and, for a write, the
 * readers since (write after read): the candidates, linear in the accesses
 * and the runs of bytes they cover.  A candidate that another path already
 * implies (through a later candidate or a written edge) is dropped, with
 * one lookup each in a reachability index (reach.c), so independent nodes
 * stay parallel branches and a chain stays a chain.  An edge is
 * programmatic where both ends are kernels and the consumer waits
 * (griddepcontrol.wait, as a written programmatic edge needs), else full. */
#include "check/order.h"
#include "cudag.h"
#include "base/alloc.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "kinds/checker.h"
#include "kinds/kind.h"
#include "check/access.h"
#include "check/accmap.h"
#include "check/reach.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

const char *cudag__hazard_name(unsigned hazard)
{
    static const char *const names[] = {"", "read after write",
                                        "write after read",
                                        "write after write"};
    return hazard < 4 ? names[hazard] : "";
}

typedef cudag__access_entry entry;

/* An edge the order needs: from u to v, for the bytes of one buffer. */
typedef struct cand {
    uint32_t u, v, buffer;
    uint8_t hazard;
    bool unknown;
    uint64_t lo, hi;
} cand;

typedef struct infer {
    cudag_graph *g;
    cudag__accset set;
    entry *e;
    cand *c;
    uint32_t nc, cc;
    bool oom;
} infer;

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    if (a->u != b->u)
        return a->u < b->u ? -1 : 1;
    if (a->buffer != b->buffer)
        return a->buffer < b->buffer ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Room for one more candidate; false (in->oom) when there is none. */
static bool grow(infer *in)
{
    if (in->nc == in->cc) {
        uint32_t nc = in->cc ? 2 * in->cc : 64;
        void *p = cudag__realloc(in->c, (size_t)nc * sizeof *in->c);
        if (!p) {
            in->oom = true;
            return false;
        }
        in->c = p;
        in->cc = nc;
    }
    return true;
}

/* An earlier access y of the buffer's that access x needs. */
static void earlier(void *user, const entry *y, const entry *x)
{
    infer *in = user;
    const cudag__access *a = &in->set.a[y->acc], *b = &in->set.a[x->acc];
    if (y->node == x->node || !cudag__access_conflict(a, b))
        return;
    if (!grow(in))
        return;
    bool bw = b->mode & CUDAG__ACC_WRITE, aw = a->mode & CUDAG__ACC_WRITE;
    in->c[in->nc++] = (cand){
        y->node, x->node, a->buffer,
        !bw ? CUDAG__HAZARD_RAW : aw ? CUDAG__HAZARD_WAW : CUDAG__HAZARD_WAR,
        a->unknown || b->unknown, a->lo > b->lo ? a->lo : b->lo,
        a->hi < b->hi ? a->hi : b->hi};
}

static bool stop(void *user)
{
    return ((const infer *)user)->oom;
}

/* Programmatic where both ends are kernels and the consumer waits. */
static cudag_edge_kind edge_kind(const cudag_graph *g, uint32_t u, uint32_t v)
{
    const cudag__kind_ops *a = cudag__kind(g->nodes[u].kind);
    const cudag__kind_ops *b = cudag__kind(g->nodes[v].kind);
    if (!a || !b || !a->pdl_end || !b->pdl_end || !b->pdl_check)
        return CUDAG_EDGE_FULL;
    char why[600];
    why[0] = '\0';
    b->pdl_check(g, &g->nodes[v], why, sizeof why);
    return why[0] ? CUDAG_EDGE_FULL : CUDAG_EDGE_PROGRAMMATIC;
}

/* Drops the inferred edges of g that a path implies.  The in-edges and an
 * order (Kahn's) of g as it now is; none when g has a cycle (reported by
 * the check: nothing is dropped).  False on OOM. */
static bool reduce(cudag_graph *g)
{
    uint32_t n = g->nnodes, m = g->nedges;
    size_t nn = (size_t)n + 1, ne = (size_t)m + 1;
    cudag__topo t;
    memset(&t, 0, sizeof t);
    uint32_t *indeg = cudag__calloc(nn, sizeof *indeg);
    bool *orders = cudag__malloc(ne * sizeof *orders);
    bool *drop = cudag__calloc(ne, sizeof *drop);
    t.order = cudag__malloc(nn * sizeof *t.order);
    t.in_start = cudag__calloc(nn + 1, sizeof *t.in_start);
    t.in_edge = cudag__malloc(ne * sizeof *t.in_edge);
    t.out_start = cudag__calloc(nn + 1, sizeof *t.out_start);
    t.out_edge = cudag__malloc(ne * sizeof *t.out_edge);
    cudag__reach r;
    bool ok = false, have_reach = false;
    if (!indeg || !orders || !drop || !t.order || !t.in_start ||
        !t.in_edge || !t.out_start || !t.out_edge)
        goto done;
    for (uint32_t i = 0; i < m; i++) {
        t.in_start[g->edges[i].to + 1]++;
        t.out_start[g->edges[i].from + 1]++;
        orders[i] = cudag__edge_orders_memory(g, &g->edges[i]);
    }
    for (uint32_t v = 0; v < n; v++) {
        t.in_start[v + 1] += t.in_start[v];
        t.out_start[v + 1] += t.out_start[v];
    }
    for (uint32_t i = 0; i < m; i++) {
        t.in_edge[t.in_start[g->edges[i].to] + indeg[g->edges[i].to]++] = i;
        t.out_edge[t.out_start[g->edges[i].from]++] = i;
    }
    for (uint32_t v = n; v > 0; v--)    /* the out-counts moved them up */
        t.out_start[v] = t.out_start[v - 1];
    t.out_start[0] = 0;
    /* Kahn's algorithm, first in first out; indeg holds the in-degrees. */
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!indeg[v])
            t.order[tail++] = v;
    while (head < tail) {
        uint32_t v = t.order[head++];
        for (uint32_t j = t.out_start[v]; j < t.out_start[v + 1]; j++)
            if (!--indeg[g->edges[t.out_edge[j]].to])
                t.order[tail++] = g->edges[t.out_edge[j]].to;
    }
    if (tail < n) {             /* a cycle: the check reports it */
        ok = true;
        goto done;
    }
    if (!cudag__reach_init(&r, g, &t, orders, 0))
        goto done;
    have_reach = true;
    /* An inferred edge u -> v goes when u is before another of v's
     * ordering predecessors: the path through it orders the same. */
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t j = t.in_start[v]; j < t.in_start[v + 1]; j++) {
            const cudag__edge *e = &g->edges[t.in_edge[j]];
            if (!e->inferred)
                continue;
            for (uint32_t k = t.in_start[v]; k < t.in_start[v + 1]; k++) {
                const cudag__edge *f = &g->edges[t.in_edge[k]];
                if (k != j && orders[t.in_edge[k]] && f->from != e->from &&
                    cudag__reach_query(&r, e->from, f->from)) {
                    drop[t.in_edge[j]] = true;
                    break;
                }
            }
        }
    uint32_t k = 0;
    for (uint32_t i = 0; i < m; i++)
        if (!drop[i])
            g->edges[k++] = g->edges[i];
    g->nedges = k;
    ok = true;
done:
    if (have_reach)
        cudag__reach_free(&r);
    cudag__free(indeg);
    cudag__free(orders);
    cudag__free(drop);
    cudag__topo_free(&t);
    return ok;
}

/* Is key (u << 32 | v) among w[0..nw), sorted? */
static bool written(const uint64_t *w, uint32_t nw, uint32_t u, uint32_t v)
{
    uint64_t key = (uint64_t)u << 32 | v;
    return bsearch(&key, w, nw, sizeof *w, cudag__cmp_u64) != NULL;
}

/* The candidates of g's nodes, sorted by (v, u), into in->c.  False on
 * OOM. */
/* A kernel that sets a condition, before the conditional node reading it
 * (both of g): read after write of the condition (why_buffer CUDAG__NONE,
 * why_lo the condition). */
static void condition_candidates(infer *in, const cudag__checker *c)
{
    for (uint32_t i = 0; i < c->nsetters && !in->oom; i++) {
        const cudag__cond_setter *s = &c->setters[i];
        const cudag__cond_user *r = &c->cond_node[s->cond];
        if (s->at.g != in->g || r->g != in->g || s->at.node >= r->node)
            continue;
        if (!grow(in))
            return;
        in->c[in->nc++] = (cand){s->at.node, r->node, CUDAG__NONE,
                                 CUDAG__HAZARD_RAW, false, s->cond,
                                 s->cond + 1};
    }
}

static bool candidates(infer *in, const cudag__checker *c)
{
    /* Written order: a node's index is its place. */
    if (!cudag__access_entries(&in->set, in->g, NULL, &in->e))
        return false;
    if (!cudag__access_walk(&in->set, in->e, earlier, stop, in))
        in->oom = true;
    condition_candidates(in, c);
    if (in->oom)
        return false;
    if (in->nc > 1) /* none: the array was never made (qsort wants one) */
        qsort(in->c, in->nc, sizeof *in->c, cmp_cand);
    return true;
}

bool cudag__infer_order(cudag_graph *g, const cudag__checker *c)
{
    infer in;
    memset(&in, 0, sizeof in);
    in.g = g;
    bool ok = false;
    uint64_t *w = NULL;
    /* The written edges stay; the inferred ones are made again. */
    uint32_t nw = 0;
    for (uint32_t i = 0; i < g->nedges; i++)
        if (!g->edges[i].inferred)
            g->edges[nw++] = g->edges[i];
    g->nedges = nw;
    w = cudag__malloc(((size_t)nw + 1) * sizeof *w);
    if (!w || !candidates(&in, c))
        goto done;
    for (uint32_t i = 0; i < nw; i++)
        w[i] = (uint64_t)g->edges[i].from << 32 | g->edges[i].to;
    qsort(w, nw, sizeof *w, cudag__cmp_u64);
    /* One edge per pair of nodes, for the first bytes that need it. */
    for (uint32_t i = 0; i < in.nc; i++) {
        const cand *k = &in.c[i];
        if ((i && k->u == in.c[i - 1].u && k->v == in.c[i - 1].v) ||
            written(w, nw, k->u, k->v) || g->nedges >= CUDAG__MAX_EDGES)
            continue;
        cudag__edge *e = cudag__vec_push((void **)&g->edges, &g->nedges,
                                         &g->cedges, sizeof *e);
        if (!e)
            goto done;
        *e = (cudag__edge){.from = k->u, .to = k->v,
                           .kind = edge_kind(g, k->u, k->v),
                           .pos = g->nodes[k->v].pos,
                           .inferred = k->hazard,
                           .why_unknown = k->unknown,
                           .why_buffer = k->buffer,
                           .why_lo = k->lo, .why_hi = k->hi};
    }
    ok = reduce(g);
done:
    cudag__free(w);
    cudag__free(in.set.a);
    cudag__free(in.e);
    cudag__free(in.c);
    return ok;
}
