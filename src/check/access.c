/* access.c — what every node may read and write, and the race check built
 * on it: two nodes that may run at the same time (no path of full or
 * programmatic edges between them; a launch-order edge orders launches, not
 * memory) and touch overlapping bytes of one buffer, one of them writing.
 * The kinds say what each node touches (the access step of kind.h); a node
 * that holds sub-graphs (a conditional node, a child graph) touches what
 * their nodes touch, so a body's nodes are checked against the rest of the
 * graph through their owner, and among themselves in their own graph.
 *
 * The check visits each buffer's accesses in topological order with an
 * interval map (accmap.c): a new access is compared with the last writer of
 * each run of bytes it touches and, when it writes, with the readers since;
 * everything older on those bytes is behind them, or was itself reported.
 * Whether one node is before another is one lookup in a reachability index
 * (reach.c).  The cost is linear in the accesses and the runs they cover:
 * measured on the 2-core dev box (2026-11-26, debugoptimized), a chain of
 * 100 000 kernels and a fork-join of 100 000 (tools/gen_access_graph.py)
 * check in seconds (docs/language.md has the figures).
 */
#include "check/access.h"
#include "cudag.h"
#include "base/alloc.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "kinds/checker.h"
#include "kinds/kind.h"
#include "check/accmap.h"
#include "check/reach.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- a graph's accesses, buffer by buffer ------------------------------- */

static int cmp_entry(const void *pa, const void *pb)
{
    const cudag__access_entry *a = pa, *b = pb;
    if (a->buffer != b->buffer)
        return a->buffer < b->buffer ? -1 : 1;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return a->acc < b->acc ? -1 : a->acc > b->acc;
}

bool cudag__access_entries(cudag__accset *s, const cudag_graph *g,
                           const uint32_t *at, cudag__access_entry **e)
{
    *e = NULL;
    uint32_t *owner = cudag__malloc(((size_t)g->nnodes + 1) * sizeof *owner);
    if (!owner)
        return false;
    /* Every node's set, in one list; owner[v] is where v's begin. */
    for (uint32_t v = 0; v < g->nnodes; v++) {
        owner[v] = s->n;
        cudag__node_access(s, g, v);
    }
    *e = s->oom ? NULL : cudag__malloc(((size_t)s->n + 1) * sizeof **e);
    if (!*e) {
        cudag__free(owner);
        return false;
    }
    for (uint32_t v = 0, k = 0; v < g->nnodes; v++) {
        uint32_t end = v + 1 < g->nnodes ? owner[v + 1] : s->n;
        for (; k < end; k++)
            (*e)[k] = (cudag__access_entry){s->a[k].buffer, v,
                                            at ? at[v] : v, k};
    }
    cudag__free(owner);
    qsort(*e, s->n, sizeof **e, cmp_entry);
    return true;
}

/* One buffer's walk: its entries, and the caller's. */
typedef struct walk {
    const cudag__accset *s;
    const cudag__access_entry *cur;
    void (*fn)(void *user, const cudag__access_entry *y,
               const cudag__access_entry *x);
    bool (*stop)(void *user);
    void *user;
} walk;

/* Access i of the buffer being walked. */
static cudag__accmap_item item(void *user, uint32_t i)
{
    const walk *w = user;
    const cudag__access *a = &w->s->a[w->cur[i].acc];
    return (cudag__accmap_item){a->lo, a->hi, w->cur[i].node,
                                a->mode & CUDAG__ACC_WRITE};
}

static void earlier(void *user, uint32_t i, uint32_t ref)
{
    const walk *w = user;
    w->fn(w->user, &w->cur[ref], &w->cur[i]);
}

static bool stop(void *user)
{
    const walk *w = user;
    return w->stop(w->user);
}

bool cudag__access_walk(const cudag__accset *s, const cudag__access_entry *e,
                        void (*fn)(void *user, const cudag__access_entry *y,
                                   const cudag__access_entry *x),
                        bool (*stop_fn)(void *user), void *user)
{
    walk w = {s, NULL, fn, stop_fn, user};
    for (uint32_t i = 0, j; i < s->n && !stop_fn(user); i = j) {
        uint32_t b = e[i].buffer;
        bool writes = false;
        for (j = i; j < s->n && e[j].buffer == b; j++)
            writes |= s->a[e[j].acc].mode & CUDAG__ACC_WRITE;
        w.cur = e + i;
        if (writes && !cudag__accmap_walk(j - i, item, earlier, stop, &w))
            return false;
    }
    return true;
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

/* ---- the race check ------------------------------------------------------ */

typedef cudag__access_entry entry;

typedef struct races {
    cudag__checker *c;
    const cudag_graph *g;
    const cudag__topo *t;
    cudag__accset set;
    entry *e;
    bool *orders;               /* per edge: cudag__edge_orders_memory */
    cudag__reach reach;
    /* Node pairs already reported, open addressing (key 0 = empty). */
    uint64_t *seen;
    uint32_t nseen, cseen;
    cudag__race_stats *st;
    bool oom;                   /* an allocation failed: the check is void */
} races;

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
    if (!first_report(r, y->node, x->node))
        return;
    r->st->races++;
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

/* An earlier access y of the buffer's that access x must come after: a
 * race unless a path orders them. */
static void earlier_race(void *user, const entry *y, const entry *x)
{
    races *r = user;
    r->st->compared++;
    if (y->node == x->node ||
        !cudag__access_conflict(&r->set.a[y->acc], &r->set.a[x->acc]) ||
        cudag__reach_query(&r->reach, y->node, x->node))
        return;
    report(r, y, x);
}

static bool stop_races(void *user)
{
    const races *r = user;
    return cudag__check_full(r->c) || r->oom;
}

/* The races among the nodes of graph g (topology t).  False on OOM. */
static bool check_graph(cudag__checker *c, const cudag_graph *g,
                        const cudag__topo *t, cudag__race_stats *st)
{
    races r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.g = g;
    r.t = t;
    r.st = st;
    bool ok = false;
    bool reach = false;
    r.orders = cudag__malloc(((size_t)g->nedges + 1) * sizeof *r.orders);
    if (!r.orders)
        goto done;
    for (uint32_t i = 0; i < g->nedges; i++)
        r.orders[i] = cudag__edge_orders_memory(g, &g->edges[i]);
    if (!cudag__reach_init(&r.reach, g, t, r.orders, 0))
        goto done;
    reach = true;
    if (!cudag__access_entries(&r.set, g, r.reach.where, &r.e) ||
        !cudag__access_walk(&r.set, r.e, earlier_race, stop_races, &r))
        goto done;
    st->accesses += r.set.n;
    st->searched += r.reach.searched;
    st->searching += !r.reach.table;
    ok = !r.oom;
done:
    if (reach)
        cudag__reach_free(&r.reach);
    cudag__free(r.orders);
    cudag__free(r.e);
    cudag__free(r.set.a);
    cudag__free(r.seen);
    return ok;
}

/* g and, depth first, every sub-graph of its nodes. */
static bool check_tree(cudag__checker *c, const cudag_graph *g,
                       const cudag__topo *t, cudag__race_stats *st)
{
    if (!check_graph(c, g, t, st))
        return false;
    for (uint32_t i = 0; i < g->nsubs && !cudag__check_full(c); i++)
        if (!check_tree(c, g->subs[i], &g->subs[i]->topo, st))
            return false;
    return true;
}

bool cudag__check_races(cudag__checker *c, const cudag__topo *t,
                        cudag__race_stats *st)
{
    cudag__race_stats mine;
    memset(&mine, 0, sizeof mine);
    bool ok = check_tree(c, c->g, t, &mine);
    if (st)
        *st = mine;
    return ok;
}
