/* graph.c — the IR container: creating and freeing graphs and their
 * sub-graphs, adding objects (shared by the YAML front end and the C builder
 * API) and lookups; the public introspection calls are in introspect.c. */
#include "ir/graph.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/names.h"
#include "base/text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <math.h>
#include <string.h>

cudag_graph *cudag__graph_new(const char *name)
{
    cudag_graph *g = cudag__calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = cudag__arena_strdup(&g->arena, name ? name : "graph");
    if (!g->name) {
        cudag__free(g);
        return NULL;
    }
    g->root = g;
    g->prefix = "";
    return g;
}

/* What a sub-graph shares with its root: a copy of the root's tables and
 * maps (read through the sub-graph, written only through the root). */
static void share(cudag_graph *sub)
{
    const cudag_graph *r = sub->root;
    sub->vars = r->vars, sub->nvars = r->nvars, sub->cvars = r->cvars;
    sub->modules = r->modules, sub->nmodules = r->nmodules;
    sub->cmodules = r->cmodules;
    sub->sigs = r->sigs, sub->nsigs = r->nsigs, sub->csigs = r->csigs;
    sub->buffers = r->buffers, sub->nbuffers = r->nbuffers;
    sub->cbuffers = r->cbuffers;
    sub->conds = r->conds, sub->nconds = r->nconds, sub->cconds = r->cconds;
    sub->var_map = r->var_map;
    sub->module_map = r->module_map;
    sub->sig_map = r->sig_map;
    sub->buffer_map = r->buffer_map;
    sub->cond_map = r->cond_map;
}

/* After a root's shared tables changed: every sub-graph sees them.  The
 * recursion is bounded by CUDAG__MAX_SUB_DEPTH. */
static void share_down(cudag_graph *g)
{
    for (uint32_t i = 0; i < g->nsubs; i++) {
        share(g->subs[i]);
        share_down(g->subs[i]);
    }
}

/* The graph whose shared tables an add to g writes: g's root.  A sub-graph
 * holds copies of its root's table pointers and maps; an add made through
 * those copies (a kernel first named inside a body or a child graph file,
 * whose signature is made from source there) grew arrays and maps that only
 * that sub-graph saw, which the root never freed, and left the root and its
 * other sub-graphs without the kernel. */
static cudag_graph *owner_of_shared(cudag_graph *g)
{
    return g->root;
}

int cudag__subgraph_new(cudag_graph *g, uint32_t owner, uint32_t slot,
                        const char *name, const char *prefix,
                        cudag_graph **out, cudag_error *err)
{
    *out = NULL;
    if (g->depth >= CUDAG__MAX_SUB_DEPTH)
        return cudag__fail_at(err, CUDAG_ELIMIT,
                              owner < g->nnodes ? g->nodes[owner].pos
                                                : CUDAG__NOPOS,
                              "bodies nested deeper than %u",
                              CUDAG__MAX_SUB_DEPTH);
    cudag_graph *sub = cudag__calloc(1, sizeof *sub);
    if (!sub)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    sub->arena.owner = &g->root->arena;
    sub->name = cudag__arena_strdup(&sub->arena, name);
    sub->prefix = cudag__arena_strdup(&sub->arena, prefix);
    cudag_graph **slotp =
        sub->name && sub->prefix
            ? cudag__vec_push((void **)&g->subs, &g->nsubs, &g->csubs,
                              sizeof *slotp)
            : NULL;
    if (!slotp) {
        cudag__free(sub);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    }
    *slotp = sub;
    sub->parent = g;
    sub->root = g->root;
    sub->owner = owner;
    sub->slot = slot;
    sub->depth = g->depth + 1;
    share(sub);
    cudag__graph_touch(g);
    *out = sub;
    return CUDAG_OK;
}

void cudag__topo_free(cudag__topo *t)
{
    cudag__free(t->order);
    cudag__free(t->level);
    cudag__free(t->out_start);
    cudag__free(t->out_edge);
    cudag__free(t->in_start);
    cudag__free(t->in_edge);
    cudag__free(t->tree);
    cudag__free(t->tree_node);
    memset(t, 0, sizeof *t);
}

void cudag__graph_touch(cudag_graph *g)
{
    /* A root is checked with its whole tree: a change anywhere in it
     * un-checks every graph up to the root. */
    for (; g; g = g->parent) {
        g->checked = false;
        cudag__topo_free(&g->topo);
    }
}

/* Frees g, its sub-graphs and, for a root, the tables they share. */
static void graph_free(cudag_graph *g)
{
    for (uint32_t i = 0; i < g->nsubs; i++)
        graph_free(g->subs[i]);
    cudag__free(g->subs);
    cudag__topo_free(&g->topo);
    if (!g->parent) {
        if (!g->source_borrowed && g->source)
            g->source_free(g->source);
        cudag__free(g->vars);
        cudag__free(g->modules);
        cudag__free(g->sigs);
        cudag__free(g->buffers);
        cudag__free(g->conds);
        cudag__map_free(&g->var_map);
        cudag__map_free(&g->module_map);
        cudag__map_free(&g->sig_map);
        cudag__map_free(&g->buffer_map);
        cudag__map_free(&g->cond_map);
    }
    cudag__free(g->nodes);
    cudag__free(g->edges);
    cudag__free(g->groups);
    cudag__map_free(&g->node_map);
    cudag__arena_free(&g->arena);
    cudag__free(g);
}

void cudag__subgraph_drop(cudag_graph *g, uint32_t keep)
{
    while (g->nsubs > keep)
        graph_free(g->subs[--g->nsubs]);
}

void cudag_graph_destroy(cudag_graph *g)
{
    /* A body belongs to the graph that holds its node. */
    if (g && !g->parent)
        graph_free(g);
}

int cudag_graph_create(const char *name, cudag_graph **out, cudag_error *err)
{
    cudag__error_clear(err);
    if (!out)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_graph_create: out is NULL");
    *out = NULL;
    if (name && !cudag__is_ident(name, strlen(name)))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "graph name '%s' is not a valid name", name);
    cudag_graph *g = cudag__graph_new(name);
    if (!g)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory creating a graph");
    *out = g;
    return CUDAG_OK;
}

/* ---- adding objects ----------------------------------------------------- */

/* The one shape of every add: refuse a duplicate name, intern the name, push
 * the element, register it.  On any failure the graph is unchanged (a pushed
 * element is popped; an interned name is harmless arena garbage). */
static int add_named(cudag_graph *g, void **data, uint32_t *len, uint32_t *cap,
                     size_t elem, uint32_t limit, cudag__map *map,
                     const char *what, const char *name, cudag__pos pos,
                     size_t name_off, size_t pos_off, void **out,
                     cudag_error *err)
{
    uint32_t prev;
    if (cudag__map_get(map, name, &prev)) {
        const cudag__pos *pp =
            (const cudag__pos *)((const char *)*data + (size_t)prev * elem +
                                 pos_off);
        if (pp->file && pp->line)
            return cudag__fail_at(
                err, CUDAG_EDUP, pos,
                "duplicate %s '%s' (first defined at %s:%u:%u)", what, name,
                pp->file, pp->line, pp->col);
        return cudag__fail_at(err, CUDAG_EDUP, pos, "duplicate %s '%s'", what,
                              name);
    }
    if (*len >= limit)
        return cudag__fail_at(err, CUDAG_ELIMIT, pos,
                              "too many %ss (the limit is %u)", what, limit);
    const char *copy = cudag__arena_strdup(&g->arena, name);
    if (!copy)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    void *e = cudag__vec_push(data, len, cap, elem);
    if (!e)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    if (cudag__map_put(map, copy, *len - 1) != CUDAG_OK) {
        (*len)--;
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    }
    *(const char **)((char *)e + name_off) = copy;
    *(cudag__pos *)((char *)e + pos_off) = pos;
    cudag__graph_touch(g);
    if (out)
        *out = e;
    return CUDAG_OK;
}

#define ADD_NAMED(g, arr, n, c, lim, map, what, T, name, pos, out, err)        \
    add_named(g, (void **)&(g)->arr, &(g)->n, &(g)->c, sizeof(T), lim,         \
              &(g)->map, what, name, pos, offsetof(T, name),                   \
              offsetof(T, pos), (void **)(out), err)

int cudag__add_var(cudag_graph *g, const char *name, cudag__pos pos,
                   cudag__var **out, cudag_error *err)
{
    g = owner_of_shared(g);
    uint32_t b;
    if (cudag__map_get(&g->buffer_map, name, &b))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "variable '%s' has the name of a buffer", name);
    if (cudag__map_get(&g->cond_map, name, &b))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "variable '%s' has the name of a condition",
                              name);
    int rc = ADD_NAMED(g, vars, nvars, cvars, CUDAG__MAX_VARS, var_map,
                       "variable", cudag__var, name, pos, out, err);
    if (rc == CUDAG_OK)
        share_down(g);
    return rc;
}

int cudag__add_module(cudag_graph *g, const char *name, cudag__pos pos,
                      cudag__module **out, cudag_error *err)
{
    g = owner_of_shared(g);
    int rc = ADD_NAMED(g, modules, nmodules, cmodules, 4096, module_map,
                       "module", cudag__module, name, pos, out, err);
    if (rc == CUDAG_OK)
        share_down(g);
    return rc;
}

int cudag__add_sig(cudag_graph *g, const char *name, cudag__pos pos,
                   cudag__sig **out, cudag_error *err)
{
    g = owner_of_shared(g);
    int rc = ADD_NAMED(g, sigs, nsigs, csigs, 65536, sig_map, "kernel",
                       cudag__sig, name, pos, out, err);
    if (rc == CUDAG_OK)
        share_down(g);
    return rc;
}

int cudag__add_buffer(cudag_graph *g, const char *name, cudag__pos pos,
                      cudag__buffer **out, cudag_error *err)
{
    g = owner_of_shared(g);
    uint32_t v;
    if (cudag__map_get(&g->var_map, name, &v))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "buffer '%s' has the name of a variable", name);
    if (cudag__map_get(&g->cond_map, name, &v))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "buffer '%s' has the name of a condition", name);
    int rc = ADD_NAMED(g, buffers, nbuffers, cbuffers, CUDAG__MAX_BUFFERS,
                       buffer_map, "buffer", cudag__buffer, name, pos, out,
                       err);
    if (rc == CUDAG_OK)
        share_down(g);
    return rc;
}

int cudag__add_cond(cudag_graph *g, const char *name, cudag__pos pos,
                    cudag__cond **out, cudag_error *err)
{
    g = owner_of_shared(g);
    uint32_t v;
    if (cudag__map_get(&g->buffer_map, name, &v))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "condition '%s' has the name of a buffer", name);
    if (cudag__map_get(&g->var_map, name, &v))
        return cudag__fail_at(err, CUDAG_EDUP, pos,
                              "condition '%s' has the name of a variable",
                              name);
    int rc = ADD_NAMED(g, conds, nconds, cconds, CUDAG__MAX_CONDS, cond_map,
                       "condition", cudag__cond, name, pos, out, err);
    if (rc == CUDAG_OK)
        share_down(g);
    return rc;
}

int cudag__add_node(cudag_graph *g, const char *name, cudag__pos pos,
                    cudag__node **out, cudag_error *err)
{
    int rc = ADD_NAMED(g, nodes, nnodes, cnodes, CUDAG__MAX_NODES, node_map,
                       "node", cudag__node, name, pos, out, err);
    if (rc == CUDAG_OK)
        g->nodes[g->nnodes - 1].group = CUDAG__NONE;
    return rc;
}

#undef ADD_NAMED

int cudag__add_edge(cudag_graph *g, uint32_t from, uint32_t to,
                    cudag_edge_kind kind, cudag__pos pos, cudag_error *err)
{
    if (g->nedges >= CUDAG__MAX_EDGES)
        return cudag__fail_at(err, CUDAG_ELIMIT, pos,
                              "too many edges (the limit is %u)",
                              CUDAG__MAX_EDGES);
    cudag__edge *e = cudag__vec_push((void **)&g->edges, &g->nedges,
                                     &g->cedges, sizeof *e);
    if (!e)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    e->from = from;
    e->to = to;
    e->kind = kind;
    e->pos = pos;
    cudag__graph_touch(g);
    return CUDAG_OK;
}

int cudag__add_group(cudag_graph *g, const char *name, uint32_t parent,
                     uint32_t *out, cudag_error *err)
{
    const char *copy = cudag__arena_strdup(&g->arena, name);
    cudag__group *gr = copy ? cudag__vec_push((void **)&g->groups, &g->ngroups,
                                              &g->cgroups, sizeof *gr)
                            : NULL;
    if (!gr)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    gr->name = copy;
    gr->parent = parent;
    *out = g->ngroups - 1;
    return CUDAG_OK;
}

static uint32_t find(const cudag__map *m, const char *name)
{
    uint32_t v;
    return name && cudag__map_get(m, name, &v) ? v : CUDAG__NONE;
}

uint32_t cudag__find_var(const cudag_graph *g, const char *name)
{
    return find(&g->var_map, name);
}
uint32_t cudag__find_module(const cudag_graph *g, const char *name)
{
    return find(&g->module_map, name);
}
uint32_t cudag__find_sig(const cudag_graph *g, const char *name)
{
    return find(&g->sig_map, name);
}
uint32_t cudag__find_buffer(const cudag_graph *g, const char *name)
{
    return find(&g->buffer_map, name);
}
uint32_t cudag__find_node(const cudag_graph *g, const char *name)
{
    return find(&g->node_map, name);
}
uint32_t cudag__find_cond(const cudag_graph *g, const char *name)
{
    return find(&g->cond_map, name);
}

const cudag_graph *cudag__tree_find(const cudag_graph *g, const char *name,
                                    uint32_t *node)
{
    uint32_t n = cudag__find_node(g, name);
    if (n != CUDAG__NONE) {
        *node = n;
        return g;
    }
    /* Only a sub-graph whose prefix starts the name can hold it. */
    for (uint32_t i = 0; i < g->nsubs; i++) {
        const char *p = g->subs[i]->prefix;
        if (strncmp(name, p, strlen(p)) != 0)
            continue;
        const cudag_graph *in = cudag__tree_find(g->subs[i], name, node);
        if (in)
            return in;
    }
    return NULL;
}

bool cudag__graph_within(const cudag_graph *a, const cudag_graph *b)
{
    for (; a; a = a->parent)
        if (a == b)
            return true;
    return false;
}

int cudag__need_root(const cudag_graph *g, const char *fn, const char *what,
                     cudag_error *err)
{
    if (!g->parent)
        return CUDAG_OK;
    return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                          "%s: graph '%s' is a body of graph '%s': %s '%s'",
                          fn, g->name, g->root->name, what, g->root->name);
}

uint64_t cudag__buffer_bytes(const cudag__buffer *b)
{
    return b->count * cudag_type_size(b->type);
}

/* ---- the public builder ------------------------------------------------ */

/* A builder name is a plain name, or the full name of a node the YAML front
 * end would make ("layer[3].norm"), so both front ends can build the same
 * graph. */
static bool valid_node_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 4 * CUDAG__MAX_NAME)
        return false;
    size_t i = 0;
    for (;;) {
        size_t start = i;
        while (i < n && s[i] != '[' && s[i] != '.')
            i++;
        if (!cudag__is_ident(s + start, i - start))
            return false;
        while (i < n && s[i] == '[') {
            size_t d = ++i;
            while (i < n && s[i] >= '0' && s[i] <= '9')
                i++;
            if (i == d || i - d > 19 || i >= n || s[i] != ']')
                return false;
            i++;
        }
        if (i == n)
            return true;
        if (s[i] != '.')
            return false;
        i++;
    }
}

static int need_graph(cudag_graph *g, const char *name, const char *fn,
                      cudag_error *err)
{
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: graph is NULL", fn);
    if (!name || !cudag__is_ident(name, strlen(name)))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: '%s' is not a valid name", fn,
                              name ? name : "(null)");
    /* Variables, modules, kernels, buffers and conditions are the root's. */
    return cudag__need_root(g, fn, "add it to graph", err);
}

int cudag_add_var(cudag_graph *g, const char *name, int64_t value,
                  cudag_error *err)
{
    int rc = need_graph(g, name, "cudag_add_var", err);
    cudag__var *v;
    if (rc == CUDAG_OK)
        rc = cudag__add_var(g, name, CUDAG__NOPOS, &v, err);
    if (rc == CUDAG_OK)
        v->value = value;
    return rc;
}

int cudag_add_module(cudag_graph *g, const char *name, const char *path,
                     cudag_error *err)
{
    int rc = need_graph(g, name, "cudag_add_module", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!path || !*path)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "module '%s': path is empty", name);
    const char *p = cudag__arena_strdup(&g->arena, path);
    if (!p)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    cudag__module *m;
    rc = cudag__add_module(g, name, CUDAG__NOPOS, &m, err);
    if (rc == CUDAG_OK)
        m->path = p;
    return rc;
}

int cudag_add_signature(cudag_graph *g, const char *name, const char *module,
                        const char *symbol, const cudag_param *params,
                        size_t nparams, int pdl, cudag_error *err)
{
    int rc = need_graph(g, name, "cudag_add_signature", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t mod = cudag__find_module(g, module);
    if (mod == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "kernel '%s': unknown module '%s'", name,
                              module ? module : "(null)");
    return cudag__add_signature(g, name, mod, symbol, params, nparams, pdl,
                                err);
}

int cudag__add_signature(cudag_graph *g, const char *name, uint32_t mod,
                         const char *symbol, const cudag_param *params,
                         size_t nparams, int pdl, cudag_error *err)
{
    int rc = need_graph(g, name, "cudag_add_signature", err);
    if (rc != CUDAG_OK)
        return rc;
    if (nparams > CUDAG__MAX_ARGS || (nparams && !params))
        return cudag__fail_at(err, CUDAG_ELIMIT, CUDAG__NOPOS,
                              "kernel '%s': %zu parameters (at most %u)", name,
                              nparams, CUDAG__MAX_ARGS);
    if (symbol && !*symbol)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "kernel '%s': empty symbol", name);
    cudag_type *types =
        cudag__arena_alloc(&g->arena, (nparams + 1) * sizeof *types);
    const char **names =
        cudag__arena_alloc(&g->arena, (nparams + 1) * sizeof *names);
    bool *named = cudag__arena_alloc(&g->arena, (nparams + 1) * sizeof *named);
    const char *sym = cudag__arena_strdup(&g->arena, symbol ? symbol : name);
    if (!types || !names || !named || !sym)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    for (size_t i = 0; i < nparams; i++) {
        if (!cudag_type_name(params[i].type))
            return cudag__fail_at(
                err, CUDAG_ETYPE, CUDAG__NOPOS,
                "kernel '%s': parameter %zu has an invalid type", name, i);
        types[i] = params[i].type;
        names[i] = params[i].name
                       ? cudag__arena_strdup(&g->arena, params[i].name)
                       : cudag__arena_printf(&g->arena, "p%zu", i);
        named[i] = params[i].name != NULL;
        if (!names[i])
            return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                  "out of memory");
    }
    cudag__sig *s;
    rc = cudag__add_sig(g, name, CUDAG__NOPOS, &s, err);
    if (rc != CUDAG_OK)
        return rc;
    s->symbol = sym;
    s->module = mod;
    s->nparams = (uint32_t)nparams;
    s->types = types;
    s->pnames = names;
    s->pnamed = named;
    s->pdl = pdl != 0;
    return CUDAG_OK;
}

int cudag_add_buffer(cudag_graph *g, const char *name, cudag_type type,
                     uint64_t count, const cudag_init *init, cudag_error *err)
{
    int rc = need_graph(g, name, "cudag_add_buffer", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!cudag__is_elem_type(type))
        return cudag__fail_at(err, CUDAG_ETYPE, CUDAG__NOPOS,
                              "buffer '%s': invalid element type", name);
    if (init &&
        (init->kind < CUDAG_INIT_NONE || init->kind > CUDAG_INIT_RANDOM))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "buffer '%s': invalid init kind", name);
    /* {0, 0} is the documented default, [-1, 1); any other empty range is
     * refused here, as the YAML front end refuses it at its position,
     * rather than filled with something else. */
    if (init && init->kind == CUDAG_INIT_RANDOM &&
        !(init->lo == 0.0 && init->hi == 0.0) && !(init->lo < init->hi))
        return cudag__fail_at(err, CUDAG_ERANGE, CUDAG__NOPOS,
                              "buffer '%s': range [%g, %g] is empty: lo must "
                              "be below hi",
                              name, init->lo, init->hi);
    cudag__buffer *b;
    rc = cudag__add_buffer(g, name, CUDAG__NOPOS, &b, err);
    if (rc != CUDAG_OK)
        return rc;
    b->type = type;
    b->count = count;
    if (init)
        b->init = *init;
    return CUDAG_OK;
}

int cudag__builder_start(cudag_graph *g, const char **name, const char *fn,
                         cudag_error *err)
{
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: graph is NULL", fn);
    if (!*name || !valid_node_name(*name))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: '%s' is not a valid node name", fn,
                              *name ? *name : "(null)");
    /* A body's nodes are named as the YAML front end names them, after the
     * body ("loop.step"), so every node of a tree has a distinct name. */
    if (*g->prefix) {
        const char *full = cudag__arena_cat(&g->arena, g->prefix,
                                            strlen(g->prefix), *name,
                                            strlen(*name));
        if (!full)
            return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                  "out of memory");
        *name = full;
    }
    return CUDAG_OK;
}

int cudag__builder_callback(cudag_graph *g, const char *name, const char *fn,
                            bool given, const char *what, cudag__node **out,
                            cudag_error *err)
{
    int rc = cudag__builder_start(g, &name, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    if (!given)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: node '%s': %s is NULL", fn, name, what);
    return cudag__add_node(g, name, CUDAG__NOPOS, out, err);
}

uint32_t cudag__builder_buffer(cudag_graph *g, const char *node,
                               const char *buf, int *rc, cudag_error *err)
{
    uint32_t b = cudag__find_buffer(g, buf);
    if (b == CUDAG__NONE)
        *rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                             "node '%s': unknown buffer '%s'", node,
                             buf ? buf : "(null)");
    return b;
}

uint32_t cudag__need_buffer(const cudag_graph *g, const char *name,
                            const char *fn, int *rc, cudag_error *err)
{
    uint32_t b = cudag__find_buffer(g, name);
    if (b == CUDAG__NONE)
        *rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                             "%s: graph '%s' has no buffer '%s'", fn, g->name,
                             name ? name : "(null)");
    return b;
}

/* A builder's name for a node of g: as given in a root, after the body's
 * prefix in a body.  CUDAG__NONE when there is none. */
static uint32_t builder_node(const cudag_graph *g, const char *name)
{
    if (!name || !*g->prefix)
        return cudag__find_node(g, name);
    size_t pl = strlen(g->prefix), nl = strlen(name);
    char buf[CUDAG__MAX_FULL_NAME + 1];
    if (pl + nl >= sizeof buf)
        return CUDAG__NONE;
    memcpy(buf, g->prefix, pl);
    memcpy(buf + pl, name, nl + 1);
    return cudag__find_node(g, buf);
}

int cudag_add_edge(cudag_graph *g, const char *from, const char *to,
                   cudag_edge_kind kind, cudag_error *err)
{
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_edge: graph is NULL");
    if (!cudag_edge_kind_name(kind))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_edge: invalid edge kind %d",
                              (int)kind);
    uint32_t f = builder_node(g, from), t = builder_node(g, to);
    if (f == CUDAG__NONE || t == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "edge %s -> %s: unknown node '%s'%s%s%s",
                              from ? from : "(null)", to ? to : "(null)",
                              f == CUDAG__NONE ? (from ? from : "(null)")
                                               : (to ? to : "(null)"),
                              g->parent ? " in body '" : "",
                              g->parent ? g->name : "",
                              g->parent ? "'" : "");
    return cudag__add_edge(g, f, t, kind, CUDAG__NOPOS, err);
}

int cudag_bind_buffer(cudag_graph *g, const char *buffer, uint64_t devptr,
                      cudag_error *err)
{
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_bind_buffer: graph is NULL");
    int rc = cudag__need_root(g, "cudag_bind_buffer", "bind it in graph", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t b = cudag__find_buffer(g, buffer);
    if (b == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "unknown buffer '%s'",
                              buffer ? buffer : "(null)");
    if (devptr == 0)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "buffer '%s': cannot bind a null pointer",
                              buffer);
    g->buffers[b].bound = devptr;
    return CUDAG_OK;
}
