/* introspect.c — the public calls that tell what a graph declares: counts,
 * names, node kinds, edges, buffers' types and sizes, variables' values.
 * They only read the IR, and every one reports an index out of range the
 * same way (cudag.h): NULL from the calls returning a name, CUDAG_ERANGE
 * from the calls returning a status, nothing written. */
#include "cudag.h"
#include "ir/graph.h"
#include "kinds/kind.h"

#include <stddef.h>
#include <stdint.h>

size_t cudag_graph_node_count(const cudag_graph *g) { return g ? g->nnodes : 0; }
size_t cudag_graph_edge_count(const cudag_graph *g) { return g ? g->nedges : 0; }
size_t cudag_graph_buffer_count(const cudag_graph *g)
{
    return g ? g->nbuffers : 0;
}
size_t cudag_graph_var_count(const cudag_graph *g) { return g ? g->nvars : 0; }
const char *cudag_graph_name(const cudag_graph *g) { return g ? g->name : NULL; }

static long found(uint32_t i) { return i == CUDAG__NONE ? -1 : (long)i; }

const char *cudag_graph_node_name(const cudag_graph *g, size_t i)
{
    return g && i < g->nnodes ? g->nodes[i].name : NULL;
}

int cudag_graph_node_kind(const cudag_graph *g, size_t i, cudag_node_kind *kind)
{
    if (!g || i >= g->nnodes)
        return CUDAG_ERANGE;
    if (kind)
        *kind = g->nodes[i].kind;
    return CUDAG_OK;
}

const char *cudag_node_kind_name(cudag_node_kind k)
{
    const cudag__kind_ops *ops = cudag__kind(k);
    return ops ? ops->name : NULL;
}

long cudag_graph_find_node(const cudag_graph *g, const char *name)
{
    return g ? found(cudag__find_node(g, name)) : -1;
}

int cudag_graph_edge(const cudag_graph *g, size_t i, size_t *from, size_t *to,
                     cudag_edge_kind *kind)
{
    if (!g || i >= g->nedges)
        return CUDAG_ERANGE;
    if (from)
        *from = g->edges[i].from;
    if (to)
        *to = g->edges[i].to;
    if (kind)
        *kind = g->edges[i].kind;
    return CUDAG_OK;
}

const char *cudag_graph_buffer_name(const cudag_graph *g, size_t i)
{
    return g && i < g->nbuffers ? g->buffers[i].name : NULL;
}

long cudag_graph_find_buffer(const cudag_graph *g, const char *name)
{
    return g ? found(cudag__find_buffer(g, name)) : -1;
}

int cudag_graph_buffer(const cudag_graph *g, size_t i, cudag_type *type,
                       uint64_t *count)
{
    if (!g || i >= g->nbuffers)
        return CUDAG_ERANGE;
    if (type)
        *type = g->buffers[i].type;
    if (count)
        *count = g->buffers[i].count;
    return CUDAG_OK;
}

const char *cudag_graph_var_name(const cudag_graph *g, size_t i)
{
    return g && i < g->nvars ? g->vars[i].name : NULL;
}

long cudag_graph_find_var(const cudag_graph *g, const char *name)
{
    return g ? found(cudag__find_var(g, name)) : -1;
}

int cudag_graph_var(const cudag_graph *g, size_t i, cudag_value *value)
{
    if (!g || i >= g->nvars)
        return CUDAG_ERANGE;
    if (value) {
        const cudag__var *v = &g->vars[i];
        value->type = v->is_float ? CUDAG_TYPE_F64 : CUDAG_TYPE_I64;
        value->i = v->is_float ? 0 : v->value;
        value->f = v->is_float ? v->f : 0.0;
    }
    return CUDAG_OK;
}
