/* check.c — the whole-graph checks on the IR (signatures, buffers, each
 * node through its kind's check step, edges, dependency cycles, and the
 * same for every sub-graph of the tree; then each kind's whole-tree step:
 * the conditions and who sets them, kinds/cond.c) and,
 * for a graph that passes, the topology later stages use: a deterministic
 * topological order, levels and CSR adjacency per graph, and the tree's
 * flat numbering.  Also cudag_check().
 *
 * Everything here is linear or O(E log E) in the size of the graph and uses
 * no recursion, so a 100 000-node chain checks in milliseconds without
 * touching the stack.  The checker reads the graph and writes it only at the
 * very end (buffer use counts, g->topo, g->checked): a failed allocation or a
 * graph with errors leaves it as it was.
 *
 * Every message names the object it is about ("node 'a': …", "buffer 'x': …",
 * "edge a -> b …"), because a graph built through the C API has no source
 * positions; a graph loaded from YAML gets the most precise position the IR
 * holds as well. */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "kinds/checker.h"
#include "kinds/kind.h"
#include "check/access.h"
#include "check/order.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- signatures --------------------------------------------------------- */

/* The bytes a kernel's parameters take, each aligned to its own size, as the
 * CUDA ABI lays them out. */
static uint64_t param_bytes(const cudag__sig *s)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < s->nparams; i++) {
        uint64_t sz = cudag_type_size(s->types[i]);
        if (sz == 0)
            sz = 1;
        off = (off + sz - 1) / sz * sz + sz;
    }
    return off;
}

static void check_sigs(cudag__checker *c)
{
    cudag_graph *g = c->g;
    for (uint32_t i = 0; i < g->nsigs && !cudag__check_full(c); i++) {
        const cudag__sig *s = &g->sigs[i];
        if (s->module >= g->nmodules && !s->handle)
            cudag__check_fail(c, CUDAG_EUNKNOWN, s->pos,
                              "kernel '%s' has no module", s->name);
        for (uint32_t p = 0; p < s->nparams; p++)
            if (!cudag_type_name(s->types[p]))
                cudag__check_fail(
                    c, CUDAG_ETYPE, s->pos,
                    "kernel '%s': parameter %u has an invalid type", s->name,
                    p);
        uint64_t bytes = param_bytes(s);
        if (bytes > CUDAG__MAX_PARAM_BYTES)
            cudag__check_fail(
                c, CUDAG_ELIMIT, s->pos,
                "kernel '%s': parameters take %llu bytes (at most %u)", s->name,
                (unsigned long long)bytes, CUDAG__MAX_PARAM_BYTES);
    }
}

/* ---- buffers ------------------------------------------------------------- */

static void check_buffers(cudag__checker *c)
{
    cudag_graph *g = c->g;
    char n1[40], n2[40];
    for (uint32_t i = 0; i < g->nbuffers && !cudag__check_full(c); i++) {
        const cudag__buffer *b = &g->buffers[i];
        const char *tn = cudag_type_name(b->type);
        size_t es = cudag_type_size(b->type);
        cudag__pos cpos = cudag__pick(b->count_pos, b->pos);
        if (!tn || b->type == CUDAG_TYPE_PTR) {
            cudag__check_fail(c, CUDAG_ETYPE, b->pos,
                              "buffer '%s' has an invalid element type",
                              b->name);
            continue;
        }
        if (b->count == 0)
            cudag__check_fail(c, CUDAG_ERANGE, cpos,
                              "buffer '%s': count is 0 (must be at least 1)",
                              b->name);
        else if (b->count > CUDAG__MAX_BUFFER_BYTES / es)
            /* Dividing the limit instead of multiplying the count catches
             * the products that overflow 64 bits as well. */
            cudag__check_fail(
                c, CUDAG_ELIMIT, cpos,
                "buffer '%s': absurd size: %llu elements of %s is more "
                "than 64 TiB",
                b->name, (unsigned long long)b->count, tn);
        const cudag_init *in = &b->init;
        /* At the init value when the file says where it is. */
        cudag__pos ipos = b->init_pos.line ? b->init_pos : b->pos;
        if (in->kind == CUDAG_INIT_RANDOM && !(in->lo == 0 && in->hi == 0)) {
            if (!isfinite(in->lo) || !isfinite(in->hi))
                cudag__check_fail(
                    c, CUDAG_ERANGE, ipos,
                    "buffer '%s': random range [%s, %s) must be finite",
                    b->name, cudag__fmt_num(n1, in->lo),
                    cudag__fmt_num(n2, in->hi));
            else if (!(in->lo < in->hi))
                cudag__check_fail(
                    c, CUDAG_ERANGE, ipos,
                    "buffer '%s': random range [%s, %s) is empty (lo must "
                    "be less than hi)",
                    b->name, cudag__fmt_num(n1, in->lo),
                    cudag__fmt_num(n2, in->hi));
        } else if (in->kind == CUDAG_INIT_CONST) {
            /* A constant may be an infinity or NaN on purpose (a sentinel),
             * but not a value the element type cannot hold. */
            cudag__fit f = cudag__value_fits(b->type, in->value, false);
            if (f == CUDAG__FIT_NOT_INTEGER)
                cudag__check_fail(
                    c, CUDAG_ERANGE, ipos,
                    "buffer '%s': init value %s is not an integer (the "
                    "buffer is %s)",
                    b->name, cudag__fmt_num(n1, in->value), tn);
            else if (f == CUDAG__FIT_RANGE)
                cudag__check_fail(
                    c, CUDAG_ERANGE, ipos,
                    "buffer '%s': init value %s is out of range for %s",
                    b->name, cudag__fmt_num(n1, in->value), tn);
        }
    }
}

/* ---- nodes ------------------------------------------------------------- */

static void check_nodes(cudag__checker *c)
{
    const cudag_graph *g = c->g;
    for (uint32_t i = 0; i < g->nnodes && !cudag__check_full(c); i++) {
        const cudag__node *n = &g->nodes[i];
        const cudag__kind_ops *k = cudag__kind(n->kind);
        if (!k) {
            cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                              "node '%s' has an invalid kind %d", n->name,
                              (int)n->kind);
            continue;
        }
        if (g->parent && !k->in_body) {
            cudag__check_fail(c, CUDAG_EKEY, n->pos,
                              "node '%s': %s cannot be in the body of "
                              "'%s' (the driver allows kernel, memset, memcpy, "
                              "child-graph and conditional nodes there)",
                              n->name, k->what,
                              g->parent->nodes[g->owner].name);
            continue;
        }
        k->check(c, n);
    }
}

/* ---- edges, order, cycles -------------------------------------------------- */

/* Scratch of the graph part of the check, freed in one place. */
typedef struct work {
    uint32_t *dup;      /* per edge: the earlier edge with the same ends */
    uint32_t *indeg;    /* per node: Kahn's remaining in-degree */
    uint32_t *heap;     /* Kahn's ready nodes, a binary min-heap */
    uint32_t *scc;      /* cycle search: 5 arrays of nnodes, one block */
} work;

static void work_free(work *w)
{
    cudag__free(w->dup);
    cudag__free(w->indeg);
    cudag__free(w->heap);
    cudag__free(w->scc);
}

static bool edge_valid(const cudag_graph *g, const cudag__edge *e)
{
    return e->from < g->nnodes && e->to < g->nnodes &&
           cudag_edge_kind_name(e->kind) != NULL;
}

/*
 * A stable counting sort of edge indices by one end: src[0..m) (or, when src
 * is NULL, every valid edge in index order) goes to dst grouped by the key,
 * and start[0..n] becomes the CSR offsets.  cursor is n words of scratch.
 */
static void sort_edges(const cudag_graph *g, const uint32_t *src, uint32_t m,
                       bool by_from, uint32_t *start, uint32_t *cursor,
                       uint32_t *dst)
{
    uint32_t n = g->nnodes;
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    uint32_t total = src ? m : g->nedges;
    for (uint32_t i = 0; i < total; i++) {
        uint32_t e = src ? src[i] : i;
        if (!src && !edge_valid(g, &g->edges[e]))
            continue;
        start[(by_from ? g->edges[e].from : g->edges[e].to) + 1]++;
    }
    for (uint32_t v = 0; v < n; v++) {
        start[v + 1] += start[v];
        cursor[v] = start[v];
    }
    for (uint32_t i = 0; i < total; i++) {
        uint32_t e = src ? src[i] : i;
        if (!src && !edge_valid(g, &g->edges[e]))
            continue;
        dst[cursor[by_from ? g->edges[e].from : g->edges[e].to]++] = e;
    }
}

/* " (first written at file:line:col)" when the earlier edge has a position. */
static const char *first_at(const cudag__edge *e, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (e->pos.file && e->pos.line)
        snprintf(buf, cap, " (first written at %s:%u:%u)", e->pos.file,
                 e->pos.line, e->pos.col);
    return buf;
}

/* The first node of one side of a programmatic or launch-order edge whose
 * kind has no kernel-node port, and whether every such node runs kernels
 * of its own (pdl_full: the edge is then built full, safely). */
typedef struct bad_end {
    const cudag__node *bad;
    bool all_full;
} bad_end;

static bool note_end(void *user, const cudag_graph *h, uint32_t n)
{
    bad_end *be = user;
    const cudag__node *nd = &h->nodes[n];
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (k && k->pdl_end)
        return true;
    if (!be->bad)
        be->bad = nd;
    be->all_full = be->all_full && k && k->pdl_full;
    return true;
}

/* Both ends of a programmatic or launch-order edge must be of kinds that
 * have the driver's kernel-node ports: where it reaches a child graph built
 * inline, each of the child's first (or last) nodes.  True when they do. */
static bool check_pdl_ends(cudag__checker *c, const cudag__edge *e,
                           const cudag__node *f, const cudag__node *t)
{
    bad_end fb = {NULL, true}, tb = {NULL, true};
    cudag__edge_side(c->g, e, false, note_end, &fb);
    cudag__edge_side(c->g, e, true, note_end, &tb);
    if (!fb.bad && !tb.bad)
        return true;
    /* An end that runs kernels of its own makes the edge a full one,
     * safely: say so where it was written. */
    if ((!fb.bad || fb.all_full) && (!tb.bad || tb.all_full)) {
        const cudag__node *lib = fb.bad ? fb.bad : tb.bad;
        cudag__check_warn(c, CUDAG_EPDL, e->pos,
                          "%s edge %s -> %s built as a full edge: '%s' is a "
                          "%s node (%s)",
                          cudag_edge_kind_name(e->kind), f->name, t->name,
                          lib->name, cudag__node_kind_name(lib->kind),
                          cudag__kind(lib->kind)->pdl_full);
        return false;
    }
    char which[600];
    if (fb.bad && tb.bad)
        snprintf(which, sizeof which, "'%s' is a %s node, '%s' is a %s node",
                 fb.bad->name, cudag__node_kind_name(fb.bad->kind),
                 tb.bad->name, cudag__node_kind_name(tb.bad->kind));
    else
        snprintf(which, sizeof which, "'%s' is a %s node",
                 (fb.bad ? fb.bad : tb.bad)->name,
                 cudag__node_kind_name((fb.bad ? fb.bad : tb.bad)->kind));
    cudag__check_fail(c, CUDAG_EEDGE, e->pos,
                      "%s edge %s -> %s: both ends must be kernel nodes (%s)",
                      cudag_edge_kind_name(e->kind), f->name, t->name, which);
    return false;
}

/* The first reason a node the edge reaches will not wait (into why). */
typedef struct wait_why {
    char why[600];
} wait_why;

static bool note_wait(void *user, const cudag_graph *h, uint32_t n)
{
    wait_why *w = user;
    const cudag__node *nd = &h->nodes[n];
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (k && k->pdl_check)
        k->pdl_check(h, nd, w->why, sizeof w->why);
    return !w->why[0];
}

/* A programmatic or launch-order edge, both of whose ends are kernels
 * (check_pdl_ends), into a kernel that will not wait is a race the GPU
 * build would refuse (downgrading the edge): said here, at the edge,
 * before any GPU; an error under CUDAG_STRICT, in the words of the build's
 * (build.c), so `check --strict` refuses what `run --strict` does.  Not
 * under CUDAG_NO_PDL, which builds it full.  Each kernel of a child graph
 * built inline that the edge reaches must wait. */
static void check_pdl_wait(cudag__checker *c, const cudag__edge *e,
                           const cudag__node *f, const cudag__node *t)
{
    if (c->d->flags & CUDAG_NO_PDL)
        return;
    wait_why w;
    w.why[0] = '\0';
    cudag__edge_side(c->g, e, true, note_wait, &w);
    if (w.why[0] && (c->d->flags & CUDAG_STRICT))
        cudag__check_fail(c, CUDAG_EPDL, cudag__pick(e->pos, t->pos),
                          "%s edge '%s' -> '%s' is not safe: %s",
                          cudag_edge_kind_name(e->kind), f->name, t->name,
                          w.why);
    else if (w.why[0])
        cudag__check_warn(c, CUDAG_EPDL, cudag__pick(e->pos, t->pos),
                          "%s edge '%s' -> '%s' will be built as a full edge: "
                          "%s",
                          cudag_edge_kind_name(e->kind), f->name, t->name,
                          w.why);
}

static void report_edges(cudag__checker *c, const uint32_t *dup)
{
    const cudag_graph *g = c->g;
    char where[600];
    for (uint32_t i = 0; i < g->nedges && !cudag__check_full(c); i++) {
        const cudag__edge *e = &g->edges[i];
        if (e->from >= g->nnodes || e->to >= g->nnodes) {
            cudag__check_fail(
                c, CUDAG_EUNKNOWN, e->pos,
                "edge %u refers to node index %u, but the graph has %u nodes",
                i, e->from >= g->nnodes ? e->from : e->to, g->nnodes);
            continue;
        }
        const cudag__node *f = &g->nodes[e->from], *t = &g->nodes[e->to];
        if (!cudag_edge_kind_name(e->kind)) {
            cudag__check_fail(c, CUDAG_EEDGE, e->pos,
                              "edge %s -> %s has an invalid kind %d", f->name,
                              t->name, (int)e->kind);
            continue;
        }
        if (e->from == e->to) {
            cudag__check_fail(c, CUDAG_EEDGE, e->pos,
                              "node '%s' depends on itself", f->name);
            continue;
        }
        if (e->kind != CUDAG_EDGE_FULL && check_pdl_ends(c, e, f, t))
            check_pdl_wait(c, e, f, t);
        if (dup[i] != CUDAG__NONE) {
            const cudag__edge *e0 = &g->edges[dup[i]];
            if (e0->kind == e->kind)
                cudag__check_fail(c, CUDAG_EEDGE, e->pos,
                                  "duplicate edge %s -> %s%s", f->name, t->name,
                                  first_at(e0, where, sizeof where));
            else
                cudag__check_fail(c, CUDAG_EEDGE, e->pos,
                                  "conflicting edges %s -> %s: %s and %s%s",
                                  f->name, t->name,
                                  cudag_edge_kind_name(e0->kind),
                                  cudag_edge_kind_name(e->kind),
                                  first_at(e0, where, sizeof where));
        }
    }
}

static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p] <= v)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, m = l + 1, s = i;
        uint32_t sv = v;
        if (l < *n && h[l] < sv) {
            s = l;
            sv = h[l];
        }
        if (m < *n && h[m] < sv)
            s = m;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Appends to buf[*len..cap) without overrunning it. */
static void put(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap)
        n = *len < cap - 1 ? cap - 1 - *len : 0;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

/* "a -> b -> c -> a" for path[0..len) (path[0] starts and ends it).  A long
 * cycle keeps its head and its tail around "… (N more) …", so that the
 * message stays readable and within the error's fixed size. */
static void cycle_text(const cudag_graph *g, const uint32_t *path, uint32_t len,
                       char *buf, size_t cap)
{
    size_t total = 0, used = 0, budget = cap / 2;
    buf[0] = '\0';
    for (uint32_t i = 0; i < len; i++)
        total += strlen(g->nodes[path[i]].name) + 4;
    total += strlen(g->nodes[path[0]].name);
    if (total < cap - 1) {
        for (uint32_t i = 0; i < len; i++) {
            put(buf, cap, &used, g->nodes[path[i]].name);
            put(buf, cap, &used, " -> ");
        }
        put(buf, cap, &used, g->nodes[path[0]].name);
        return;
    }
    uint32_t head = 0;
    size_t hl = 0;
    while (head < len && hl + strlen(g->nodes[path[head]].name) + 4 < budget)
        hl += strlen(g->nodes[path[head++]].name) + 4;
    if (head == 0)
        head = 1;
    /* The tail: as many of the last nodes as fit in a third of the room. */
    uint32_t tail = len;
    size_t tl = strlen(g->nodes[path[0]].name);
    while (tail > head + 1 &&
           tl + strlen(g->nodes[path[tail - 1]].name) + 4 < cap / 3)
        tl += strlen(g->nodes[path[--tail]].name) + 4;
    for (uint32_t i = 0; i < head; i++) {
        put(buf, cap, &used, g->nodes[path[i]].name);
        put(buf, cap, &used, " -> ");
    }
    char more[64];
    snprintf(more, sizeof more, "... (%u more) -> ", tail - head);
    if (tail > head)
        put(buf, cap, &used, more);
    for (uint32_t i = tail; i < len; i++) {
        put(buf, cap, &used, g->nodes[path[i]].name);
        put(buf, cap, &used, " -> ");
    }
    put(buf, cap, &used, g->nodes[path[0]].name);
}

/*
 * Reports one cycle per strongly connected component of more than one node
 * among the nodes Kahn's algorithm could not order (those with indeg > 0).
 * Tarjan's algorithm with an explicit stack finds the components; in each, a
 * breadth-first search from its lowest-index node finds a shortest cycle
 * back to it, which is printed starting there and reported at the edge that
 * closes it.  O(N + E).  Returns false on OOM.
 */
static bool report_cycles(cudag__checker *c, const cudag__topo *t,
                          const uint32_t *indeg, uint32_t *stk,
                          uint32_t *cs_node, uint32_t *cs_it, work *w)
{
    const cudag_graph *g = c->g;
    uint32_t n = g->nnodes;
    w->scc = cudag__malloc((size_t)n * 5 * sizeof *w->scc);
    if (!w->scc)
        return false;
    uint32_t *idx = w->scc, *low = idx + n, *comp = low + n, *parent = comp + n,
             *queue = parent + n;
    for (uint32_t v = 0; v < n; v++)
        idx[v] = comp[v] = parent[v] = CUDAG__NONE;
    uint32_t counter = 0, nstk = 0, ncomp = 0;
    char text[800];

    for (uint32_t r = 0; r < n && !cudag__check_full(c); r++) {
        if (indeg[r] == 0 || idx[r] != CUDAG__NONE)
            continue;
        uint32_t depth = 0;
        idx[r] = low[r] = counter++;
        stk[nstk++] = r;
        cs_node[depth] = r;
        cs_it[depth++] = t->out_start[r];
        while (depth > 0 && !cudag__check_full(c)) {
            uint32_t v = cs_node[depth - 1];
            if (cs_it[depth - 1] < t->out_start[v + 1]) {
                uint32_t x = g->edges[t->out_edge[cs_it[depth - 1]++]].to;
                if (indeg[x] == 0)
                    continue;   /* ordered by Kahn: on no cycle */
                if (idx[x] == CUDAG__NONE) {
                    idx[x] = low[x] = counter++;
                    stk[nstk++] = x;
                    cs_node[depth] = x;
                    cs_it[depth++] = t->out_start[x];
                } else if (comp[x] == CUDAG__NONE && idx[x] < low[v]) {
                    low[v] = idx[x];    /* x is on the stack */
                }
                continue;
            }
            depth--;
            if (depth > 0 && low[v] < low[cs_node[depth - 1]])
                low[cs_node[depth - 1]] = low[v];
            if (low[v] != idx[v])
                continue;
            /* v roots a component: pop it, noting its lowest-index node. */
            uint32_t id = ncomp++, size = 0, s = v, x;
            do {
                x = stk[--nstk];
                comp[x] = id;
                size++;
                if (x < s)
                    s = x;
            } while (x != v);
            if (size < 2)
                continue;   /* a self-edge: reported as such */
            uint32_t head = 0, tail = 0, last = CUDAG__NONE, closing = 0;
            parent[s] = s;
            queue[tail++] = s;
            while (head < tail && last == CUDAG__NONE) {
                uint32_t u = queue[head++];
                for (uint32_t j = t->out_start[u]; j < t->out_start[u + 1];
                     j++) {
                    const cudag__edge *e = &g->edges[t->out_edge[j]];
                    if (comp[e->to] != id || e->to == u)
                        continue;
                    if (e->to == s) {
                        last = u;
                        closing = t->out_edge[j];
                        break;
                    }
                    if (parent[e->to] == CUDAG__NONE) {
                        parent[e->to] = u;
                        queue[tail++] = e->to;
                    }
                }
            }
            /* A component of two or more nodes always has a cycle through
             * each of its nodes; `last` is found. */
            uint32_t len = 0;
            for (uint32_t u = last; u != s; u = parent[u])
                len++;
            len++;
            uint32_t k = len;
            for (uint32_t u = last;; u = parent[u]) {
                queue[--k] = u;
                if (u == s)
                    break;
            }
            cycle_text(g, queue, len, text, sizeof text);
            cudag__check_fail(c, CUDAG_ECYCLE, g->edges[closing].pos,
                              "dependency cycle: %s", text);
        }
    }
    return true;
}

/*
 * Sorts the edges into CSR form, reports edge problems and cycles, and
 * computes the topological order and levels into *t.  Returns false on OOM
 * (everything in *t and *w is then the caller's to free).
 */
static bool check_graph(cudag__checker *c, cudag__topo *t, work *w)
{
    const cudag_graph *g = c->g;
    uint32_t n = g->nnodes, m = 0;
    size_t nn = (size_t)n + 1, ne = (size_t)g->nedges + 1;
    t->order = cudag__malloc(nn * sizeof *t->order);
    t->level = cudag__calloc(nn, sizeof *t->level);
    t->out_start = cudag__malloc(nn * sizeof *t->out_start);
    t->in_start = cudag__malloc(nn * sizeof *t->in_start);
    t->out_edge = cudag__malloc(ne * sizeof *t->out_edge);
    t->in_edge = cudag__malloc(ne * sizeof *t->in_edge);
    w->dup = cudag__malloc(ne * sizeof *w->dup);
    w->indeg = cudag__malloc(nn * sizeof *w->indeg);
    w->heap = cudag__malloc(nn * sizeof *w->heap);
    if (!t->order || !t->level || !t->out_start || !t->in_start ||
        !t->out_edge || !t->in_edge || !w->dup || !w->indeg || !w->heap)
        return false;

    /* Three stable counting sorts: by `to`, then by `from` (giving out-edges
     * in (from, to, index) order), then by `to` again (in-edges in (to, from,
     * index) order).  Linear, and deterministic. */
    for (uint32_t i = 0; i < g->nedges; i++)
        m += edge_valid(g, &g->edges[i]);
    sort_edges(g, NULL, 0, false, t->in_start, t->order, t->in_edge);
    sort_edges(g, t->in_edge, m, true, t->out_start, t->order, t->out_edge);
    sort_edges(g, t->out_edge, m, false, t->in_start, t->order, t->in_edge);

    /* Equal ends are adjacent now; the first of a run (lowest index) is the
     * original and the others its duplicates. */
    for (uint32_t i = 0; i < g->nedges; i++)
        w->dup[i] = CUDAG__NONE;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t j = t->out_start[v] + 1; j < t->out_start[v + 1]; j++) {
            uint32_t e = t->out_edge[j], p = t->out_edge[j - 1];
            if (g->edges[e].to == g->edges[p].to)
                w->dup[e] = w->dup[p] == CUDAG__NONE ? p : w->dup[p];
        }
    report_edges(c, w->dup);
    if (cudag__check_full(c))
        return true;

    /* Kahn's algorithm, always taking the lowest-index ready node, so the
     * order depends only on the graph; levels follow in the same pass. */
    uint32_t nheap = 0, done = 0;
    for (uint32_t v = 0; v < n; v++) {
        w->indeg[v] = t->in_start[v + 1] - t->in_start[v];
        if (w->indeg[v] == 0)
            heap_push(w->heap, &nheap, v);
    }
    while (nheap) {
        uint32_t v = heap_pop(w->heap, &nheap);
        t->order[done++] = v;
        for (uint32_t j = t->out_start[v]; j < t->out_start[v + 1]; j++) {
            uint32_t x = g->edges[t->out_edge[j]].to;
            if (t->level[x] < t->level[v] + 1)
                t->level[x] = t->level[v] + 1;
            if (--w->indeg[x] == 0)
                heap_push(w->heap, &nheap, x);
        }
    }
    if (done < n) {
        /* The order and level arrays are not needed once there is a cycle:
         * they become the cycle search's call stack. */
        if (!report_cycles(c, t, w->indeg, w->heap, t->order, t->level, w))
            return false;
        return true;
    }
    uint32_t depth = 0;
    for (uint32_t v = 0; v < n; v++)
        if (t->level[v] + 1 > depth)
            depth = t->level[v] + 1;
    t->depth = depth;
    return true;
}

/* ---- sub-graphs and conditions ------------------------------------------ */

/* The checks of graph c->g: its nodes (and through their kinds its
 * sub-graphs), edges and cycles, its topology into *t.  False on OOM. */
static bool check_one(cudag__checker *c, cudag__topo *t)
{
    work w;
    memset(&w, 0, sizeof w);
    unsigned nerr = c->d->nerr;
    check_nodes(c);
    /* `order: program`: the edges the nodes' accesses need, added before
     * the graph is ordered (and made again when a changed graph is checked
     * again); a body's were added in its own check, within check_nodes. */
    if (c->g->root->order == CUDAG__ORDER_PROGRAM && c->commit &&
        c->d->nerr == nerr && !cudag__check_full(c) &&
        !cudag__infer_order(c->g, c))
        c->oom = true;
    bool ok = cudag__check_full(c) || check_graph(c, t, &w);
    work_free(&w);
    return ok && !c->oom;
}

/* c->check_sub (checker.h): a sub-graph checked in the pass of its root. */
static void check_sub(cudag__checker *c, cudag_graph *sub)
{
    cudag_graph *outer = c->g;
    unsigned nerr = c->d->nerr;
    cudag__topo t;
    memset(&t, 0, sizeof t);
    c->g = sub;
    if (!check_one(c, &t))
        c->oom = true;
    c->g = outer;
    if (c->commit && !c->oom && c->d->nerr == nerr) {
        cudag__topo_free(&sub->topo);
        sub->topo = t;
        sub->checked = true;
    } else {
        cudag__topo_free(&t);
    }
}

/* ---- the tree's numbering ---------------------------------------------- */

/* Counts the graphs, nodes and edges of g's tree; false past the node or
 * edge limit. */
static bool count_tree(const cudag_graph *g, uint32_t *graphs,
                       uint64_t *nodes, uint64_t *edges)
{
    (*graphs)++;
    *nodes += g->nnodes;
    *edges += g->nedges;
    for (uint32_t i = 0; i < g->nsubs; i++)
        if (!count_tree(g->subs[i], graphs, nodes, edges))
            return false;
    return *nodes <= CUDAG__MAX_NODES && *edges <= CUDAG__MAX_EDGES;
}

/* Lays g's tree out flat, depth first, from position *k of t->tree. */
static void lay_out(cudag_graph *g, cudag__topo *t, uint32_t *k,
                    uint32_t *node, uint32_t *edge)
{
    t->tree[(*k)++] = g;
    g->node_base = *node;
    g->edge_base = *edge;
    for (uint32_t i = 0; i < g->nnodes; i++)
        t->tree_node[*node + i] = &g->nodes[i];
    *node += g->nnodes;
    *edge += g->nedges;
    for (uint32_t i = 0; i < g->nsubs; i++)
        lay_out(g->subs[i], t, k, node, edge);
}

/* The root's flat numbering into t (ir/graph.h, topo.tree).  A root without
 * sub-graphs needs no arrays.  False on OOM or past the limits (then
 * reported). */
static bool number_tree(cudag__checker *c, cudag_graph *g, cudag__topo *t)
{
    uint32_t graphs = 0;
    uint64_t nodes = 0, edges = 0;
    if (!count_tree(g, &graphs, &nodes, &edges)) {
        cudag__check_fail(c, CUDAG_ELIMIT, CUDAG__NOPOS,
                          "graph '%s' and its bodies have more than %u nodes "
                          "or %u edges",
                          g->name, CUDAG__MAX_NODES, CUDAG__MAX_EDGES);
        return true;
    }
    t->ntree = graphs;
    t->tree_nodes = (uint32_t)nodes;
    t->tree_edges = (uint32_t)edges;
    if (!g->nsubs)
        return true;
    t->tree = cudag__malloc(graphs * sizeof *t->tree);
    t->tree_node = cudag__malloc((nodes + 1) * sizeof *t->tree_node);
    if (!t->tree || !t->tree_node)
        return false;
    uint32_t k = 0, node = 0, edge = 0;
    lay_out(g, t, &k, &node, &edge);
    return true;
}

/* ---- the pass ------------------------------------------------------------ */

int cudag__check(cudag_graph *g, cudag__diag *d)
{
    cudag__checker c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.d = d;
    c.first = CUDAG_OK;
    c.commit = !g->checked;
    c.check_sub = check_sub;
    cudag__topo t;
    memset(&t, 0, sizeof t);
    uint32_t *uses = cudag__calloc((size_t)g->nbuffers + 1, sizeof *uses);
    c.uses = uses;
    c.cond_node = cudag__calloc((size_t)g->nconds + 1, sizeof *c.cond_node);
    /* Allocated up front, so that running out of memory is reported before
     * any other error. */
    c.cond_scratch = cudag__calloc((size_t)g->nconds + 1,
                                   2 * sizeof *c.cond_scratch);
    if (!uses || !c.cond_node || !c.cond_scratch)
        goto oom;

    check_sigs(&c);
    if (!cudag__check_full(&c))
        check_buffers(&c);
    if (!cudag__check_full(&c) && !check_one(&c, &t))
        goto oom;
    size_t nk;
    const cudag__kind_ops *const *kinds = cudag__kinds(&nk);
    for (size_t i = 0; i < nk && !cudag__check_full(&c); i++)
        if (kinds[i]->check_tree)
            kinds[i]->check_tree(&c);
    if (c.oom)
        goto oom;
    for (uint32_t i = 0; i < g->nbuffers && !cudag__check_full(&c); i++)
        if (uses[i] == 0)
            cudag__check_warn(&c, CUDAG_ECHECK, g->buffers[i].pos,
                              "buffer '%s' is never used", g->buffers[i].name);
    /* Races last: they need a graph without errors and its topology. */
    if (c.first == CUDAG_OK && !cudag__check_full(&c) &&
        !cudag__check_races(&c, &t, NULL))
        goto oom;
    if (c.first == CUDAG_OK && !cudag__check_full(&c) && c.commit &&
        !number_tree(&c, g, &t))
        goto oom;

    /* A graph that already passed has this very topology (the check is
     * deterministic and any change un-checks it), so it is left alone: then
     * several threads may check a checked graph at once, reading only. */
    if (c.first == CUDAG_OK && !cudag__check_full(&c) && c.commit) {
        for (uint32_t i = 0; i < g->nbuffers; i++)
            g->buffers[i].uses = uses[i];
        g->topo = t;
        g->checked = true;
    } else {
        cudag__topo_free(&t);
        /* Errors in a graph marked checked mean its IR was changed behind
         * the builder's back: what was derived from it is stale.  A warning
         * that CUDAG_WERROR counts as an error changes nothing: checking a
         * checked graph stays a read, which other threads may share. */
        if (c.broken && g->checked)
            cudag__graph_touch(g);
    }
    cudag__free(uses);
    cudag__free(c.cond_scratch);
    cudag__free(c.cond_node);
    cudag__free(c.setters);
    return c.first;

oom:
    cudag__topo_free(&t);
    cudag__free(uses);
    cudag__free(c.cond_scratch);
    cudag__free(c.cond_node);
    cudag__free(c.setters);
    c.g = g;
    return cudag__check_fail(&c, CUDAG_ENOMEM, CUDAG__NOPOS,
                             "out of memory checking graph '%s'", g->name);
}

int cudag_check(cudag_graph *g, const cudag_options *opts, cudag_error *err)
{
    cudag__diag d;
    cudag__diag_init(&d, opts, err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_check: graph is NULL");
    /* A body is checked with its whole tree. */
    cudag__check(g->root, &d);
    return cudag__diag_finish(&d);
}
