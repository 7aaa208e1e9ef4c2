/* access.c — what every node may read and write, and the race check built
 * on it: two nodes that may run at the same time (no path of full or
 * programmatic edges between them; a launch-order edge orders launches, not
 * memory) and touch overlapping bytes of one buffer, one of them writing.
 * The kinds say what each node touches (the access step of kind.h); a node
 * that holds sub-graphs (a conditional node, a child graph) touches what
 * their nodes touch, so a body's nodes are checked against the rest of the
 * graph through their owner, and among themselves in their own graph.
 *
 * The check visits each buffer's accesses in topological order and keeps,
 * per buffer, the earlier writes and reads: a new access is compared with
 * the earlier ones it conflicts with, newest first, and stops at a write
 * that covers it and is ordered before it (everything older that conflicts
 * was compared with that write).  Whether one node is ordered before
 * another is a backward search over the memory edges, cut at the earlier
 * node's place in the order.  For the usual graphs (chains, fork-joins,
 * repeated layers) both searches end after a step or two: linear in the
 * accesses. */
#include "access.h"
#include "kind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one node's set ------------------------------------------------------ */

static void add_graph(cudag__accset *s, const cudag_graph *sub)
{
    for (uint32_t i = 0; i < sub->nnodes; i++) {
        const cudag__kind_ops *k = cudag__kind(sub->nodes[i].kind);
        if (k && k->access)
            k->access(s, sub, &sub->nodes[i]);
    }
}

void cudag__node_access(cudag__accset *s, const cudag_graph *g, uint32_t n)
{
    const cudag__kind_ops *k = cudag__kind(g->nodes[n].kind);
    s->add_graph = add_graph;
    if (k && k->access)
        k->access(s, g, &g->nodes[n]);
}

bool cudag__access_conflict(const cudag__access *a, const cudag__access *b)
{
    return a->buffer == b->buffer && a->lo < b->hi && b->lo < a->hi &&
           ((a->mode | b->mode) & CUDAG__ACC_WRITE);
}

/* ---- ordering ------------------------------------------------------------ */

bool cudag__edge_orders_memory(const cudag_graph *g, const cudag__edge *e)
{
    if (e->kind != CUDAG_EDGE_LAUNCH_ORDER)
        return true;
    /* A launch-order edge at a node with no programmatic port is built as
     * a full edge (kind.h, pdl_full): then it orders memory. */
    const cudag__node *t = &g->nodes[e->to];
    const cudag__kind_ops *a = cudag__kind(g->nodes[e->from].kind);
    const cudag__kind_ops *b = cudag__kind(t->kind);
    if ((a && !a->pdl_end) || (b && !b->pdl_end))
        return true;
    /* So is one into a kernel that will not wait (check.c warns "will be
     * built as a full edge", and the build does so). */
    char why[600];
    why[0] = '\0';
    if (b && b->pdl_check)
        b->pdl_check(g, t, why, sizeof why);
    return why[0] != '\0';
}

/* Is node u before node x on a path of memory edges (orders[e])?
 * where[v]: v's place in topo.order; stamp/stack: per-node scratch, *tick a
 * fresh mark. */
static bool reaches(const cudag_graph *g, const cudag__topo *t,
                    const bool *orders, const uint32_t *where,
                    uint32_t *stamp, uint32_t *stack, uint32_t *tick,
                    uint32_t u, uint32_t x)
{
    if (u == x)
        return true;
    if (where[u] >= where[x])
        return false;
    uint32_t mark = ++*tick, top = 0;
    stack[top++] = x;
    stamp[x] = mark;
    while (top) {
        uint32_t v = stack[--top];
        for (uint32_t j = t->in_start[v]; j < t->in_start[v + 1]; j++) {
            const cudag__edge *e = &g->edges[t->in_edge[j]];
            uint32_t p = e->from;
            if (!orders[t->in_edge[j]] || stamp[p] == mark ||
                where[p] < where[u])
                continue;
            if (p == u)
                return true;
            stamp[p] = mark;
            stack[top++] = p;
        }
    }
    return false;
}

/* ---- the race check ------------------------------------------------------ */

/* One access of the graph being checked, by its node there. */
typedef struct entry {
    uint32_t buffer;
    uint32_t node;              /* in the graph checked */
    uint32_t at;                /* the node's place in the order */
    uint32_t acc;               /* index into the set */
} entry;

typedef struct races {
    cudag__checker *c;
    const cudag_graph *g;
    const cudag__topo *t;
    cudag__accset set;
    entry *e;
    bool *orders;               /* per edge: cudag__edge_orders_memory */
    uint32_t *where, *stamp, *stack, tick;
    /* Node pairs already reported, open addressing (key 0 = empty). */
    uint64_t *seen;
    uint32_t nseen, cseen;
    uint32_t found;
    bool oom;                   /* an allocation failed: the check is void */
} races;

static int cmp_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->buffer != b->buffer)
        return a->buffer < b->buffer ? -1 : 1;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return a->acc < b->acc ? -1 : a->acc > b->acc;
}

/* True the first time the pair (a, b) of nodes is seen.  False, with
 * r->oom set, when the table cannot grow: the caller's check then fails
 * with CUDAG_ENOMEM rather than report a pair twice or lose one. */
static bool first_report(races *r, uint32_t a, uint32_t b)
{
    uint64_t key = ((uint64_t)(a < b ? a : b) << 32 | (a < b ? b : a)) + 1;
    if (2 * (r->nseen + 1) > r->cseen) {
        uint32_t nc = r->cseen ? 2 * r->cseen : 64;
        uint64_t *ns = cudag__calloc(nc, sizeof *ns);
        if (!ns) {
            r->oom = true;
            return false;
        }
        for (uint32_t i = 0; i < r->cseen; i++) {
            uint64_t k = r->seen[i];
            if (!k)
                continue;
            uint32_t h = (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 32) &
                         (nc - 1);
            while (ns[h])
                h = (h + 1) & (nc - 1);
            ns[h] = k;
        }
        cudag__free(r->seen);
        r->seen = ns;
        r->cseen = nc;
    }
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) &
                 (r->cseen - 1);
    while (r->seen[h]) {
        if (r->seen[h] == key)
            return false;
        h = (h + 1) & (r->cseen - 1);
    }
    r->seen[h] = key;
    r->nseen++;
    return true;
}

/* "node 'loop.step' (in 'loop')": the node that touches the bytes, and the
 * node of this graph that holds it when that is another. */
static void who_text(char *buf, size_t cap, const cudag__access *a,
                     const cudag__node *top)
{
    if (a->who == top)
        snprintf(buf, cap, "node '%s'", top->name);
    else
        snprintf(buf, cap, "node '%s' (in '%s')", a->who->name, top->name);
}

/* How to state an extent that is not known, or "". */
static void unknown_text(char *buf, size_t cap, const cudag_graph *g,
                         const cudag__access *a, const cudag__access *b)
{
    const cudag__access *u = a->unknown ? a : b->unknown ? b : NULL;
    if (!u) {
        buf[0] = '\0';
        return;
    }
    const char *bn = g->buffers[u->buffer].name;
    snprintf(buf, cap,
             "; the extent of node '%s' in buffer '%s' is unknown (a "
             "kernel's pointer runs to the buffer's end): state it with "
             "'%s + OFFSET: COUNT' in its args, or the parameter's access "
             "with 'ptr.read'",
             u->who->name, bn, bn);
}

/* Reports the race between entries x (later) and y (earlier), once per pair
 * of nodes, at both nodes' lines. */
static void report(races *r, const entry *y, const entry *x)
{
    r->found++;
    if (!first_report(r, y->node, x->node))
        return;
    const cudag_graph *g = r->g;
    const cudag__access *a = &r->set.a[y->acc], *b = &r->set.a[x->acc];
    const cudag__node *na = &g->nodes[y->node], *nb = &g->nodes[x->node];
    uint64_t lo = a->lo > b->lo ? a->lo : b->lo;
    uint64_t hi = a->hi < b->hi ? a->hi : b->hi;
    char wa[CUDAG__MAX_FULL_NAME * 2 + 32], wb[sizeof wa], hint[600];
    who_text(wa, sizeof wa, a, na);
    who_text(wb, sizeof wb, b, nb);
    unknown_text(hint, sizeof hint, g, a, b);
    const char *buf = g->buffers[a->buffer].name;
    for (int side = 0; side < 2 && !cudag__check_full(r->c); side++) {
        const cudag__access *p = side ? b : a, *q = side ? a : b;
        cudag__check_warn(
            r->c, CUDAG_ECHECK, p->pos,
            "race: %s (%s) and %s (%s) may run at the same time and both "
            "touch bytes [%llu, %llu) of buffer '%s': no path of full or "
            "programmatic edges orders them (add 'after: [%s]' to '%s')%s",
            side ? wb : wa, cudag__access_mode_name(p->mode),
            side ? wa : wb, cudag__access_mode_name(q->mode),
            (unsigned long long)lo, (unsigned long long)hi, buf, na->name,
            nb->name, hint);
    }
}

static bool covers(const cudag__access *w, const cudag__access *x)
{
    return w->lo <= x->lo && x->hi <= w->hi;
}

/* The accesses of one buffer, e[0..n), in order. */
static void check_buffer(races *r, const entry *e, uint32_t n)
{
    for (uint32_t i = 0; i < n && !cudag__check_full(r->c) && !r->oom; i++) {
        const entry *x = &e[i];
        const cudag__access *ax = &r->set.a[x->acc];
        bool writes = ax->mode & CUDAG__ACC_WRITE;
        uint32_t stop = 0;      /* older reads were compared with a write */
        bool stopped = false;
        for (uint32_t j = i; j-- > 0 && !stopped;) {
            const entry *y = &e[j];
            const cudag__access *ay = &r->set.a[y->acc];
            if (y->node == x->node || !(ay->mode & CUDAG__ACC_WRITE) ||
                !cudag__access_conflict(ay, ax))
                continue;
            if (!reaches(r->g, r->t, r->orders, r->where, r->stamp,
                         r->stack, &r->tick, y->node, x->node)) {
                report(r, y, x);
                continue;
            }
            if (covers(ay, ax)) {
                stop = j;
                stopped = true;
            }
        }
        if (!writes)
            continue;
        for (uint32_t j = i; j-- > stop;) {
            const entry *y = &e[j];
            const cudag__access *ay = &r->set.a[y->acc];
            if (y->node == x->node || (ay->mode & CUDAG__ACC_WRITE) ||
                !cudag__access_conflict(ay, ax))
                continue;
            if (!reaches(r->g, r->t, r->orders, r->where, r->stamp,
                         r->stack, &r->tick, y->node, x->node))
                report(r, y, x);
        }
    }
}

/* The races among the nodes of graph g (topology t).  False on OOM. */
static bool check_graph(cudag__checker *c, const cudag_graph *g,
                        const cudag__topo *t, uint32_t *count)
{
    races r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.g = g;
    r.t = t;
    bool ok = false;
    uint32_t *owner = NULL;
    size_t nn = (size_t)g->nnodes + 1;
    r.where = cudag__malloc(nn * sizeof *r.where);
    r.stamp = cudag__calloc(nn, sizeof *r.stamp);
    r.stack = cudag__malloc(nn * sizeof *r.stack);
    owner = cudag__malloc(nn * sizeof *owner);
    r.orders = cudag__malloc(((size_t)g->nedges + 1) * sizeof *r.orders);
    if (!r.where || !r.stamp || !r.stack || !owner || !r.orders)
        goto done;
    for (uint32_t i = 0; i < g->nedges; i++)
        r.orders[i] = cudag__edge_orders_memory(g, &g->edges[i]);
    for (uint32_t i = 0; i < g->nnodes; i++)
        r.where[t->order[i]] = i;
    /* Every node's set, in one list; owner[v] is where v's begin. */
    for (uint32_t v = 0; v < g->nnodes; v++) {
        owner[v] = r.set.n;
        cudag__node_access(&r.set, g, v);
    }
    if (r.set.oom)
        goto done;
    r.e = cudag__malloc(((size_t)r.set.n + 1) * sizeof *r.e);
    if (!r.e)
        goto done;
    for (uint32_t v = 0, k = 0; v < g->nnodes; v++) {
        uint32_t end = v + 1 < g->nnodes ? owner[v + 1] : r.set.n;
        for (; k < end; k++)
            r.e[k] = (entry){r.set.a[k].buffer, v, r.where[v], k};
    }
    qsort(r.e, r.set.n, sizeof *r.e, cmp_entry);
    for (uint32_t i = 0, j; i < r.set.n && !cudag__check_full(c) && !r.oom;
         i = j) {
        uint32_t b = r.set.a[r.e[i].acc].buffer;
        bool written = false;
        for (j = i; j < r.set.n && r.set.a[r.e[j].acc].buffer == b; j++)
            written |= r.set.a[r.e[j].acc].mode & CUDAG__ACC_WRITE;
        if (written)
            check_buffer(&r, r.e + i, j - i);
    }
    *count += r.found;
    ok = !r.oom;
done:
    cudag__free(r.where);
    cudag__free(r.stamp);
    cudag__free(r.stack);
    cudag__free(owner);
    cudag__free(r.orders);
    cudag__free(r.e);
    cudag__free(r.set.a);
    cudag__free(r.seen);
    return ok;
}

/* g and, depth first, every sub-graph of its nodes. */
static bool check_tree(cudag__checker *c, const cudag_graph *g,
                       const cudag__topo *t, uint32_t *count)
{
    if (!check_graph(c, g, t, count))
        return false;
    for (uint32_t i = 0; i < g->nsubs && !cudag__check_full(c); i++)
        if (!check_tree(c, g->subs[i], &g->subs[i]->topo, count))
            return false;
    return true;
}

bool cudag__check_races(cudag__checker *c, const cudag__topo *t,
                        uint32_t *count)
{
    uint32_t n = 0;
    bool ok = check_tree(c, c->g, t, &n);
    if (count)
        *count = n;
    return ok;
}
