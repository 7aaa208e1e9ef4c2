/* kind.c — the node-kind table (kind.h): one line per kind, in the order of
 * cudag_node_kind, and the lookups the stages use instead of switching on a
 * node's kind. */
#include "kinds/kind.h"
#include "cudag.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Indexed by cudag_node_kind: table[k]->kind == k (tests/test_kind.c checks). */
static const cudag__kind_ops *const table[] = {
    &cudag__kind_kernel,
    &cudag__kind_memset,
    &cudag__kind_memcpy,
    &cudag__kind_cond,
    &cudag__kind_gemm,
    &cudag__kind_capture,
    &cudag__kind_event_record,
    &cudag__kind_event_wait,
    &cudag__kind_host,
    &cudag__kind_child,
};
#define NKINDS (sizeof table / sizeof *table)

const cudag__kind_ops *cudag__kind(cudag_node_kind k)
{
    return (unsigned)k < NKINDS ? table[k] : NULL;
}

const cudag__kind_ops *const *cudag__kinds(size_t *n)
{
    *n = NKINDS;
    return table;
}

const char *cudag__node_kind_name(cudag_node_kind k)
{
    const cudag__kind_ops *ops = cudag__kind(k);
    return ops ? ops->name : table[0]->name;
}

/* cudag__edge_reach's walk: the kinds list one level of a node built
 * inline, and this table sends each node they name through again. */
typedef struct reach {
    cudag__end_fn fn;
    void *user;
    bool last;
} reach;

static bool reach_one(void *user, const cudag_graph *h, uint32_t n)
{
    const reach *r = user;
    const cudag__kind_ops *k = cudag__kind(h->nodes[n].kind);
    int rc = k && k->edge_ends ? k->edge_ends(h, n, r->last, reach_one, user)
                               : -1;
    return rc < 0 ? r->fn(r->user, h, n) : rc > 0;
}

bool cudag__edge_reach(const cudag_graph *h, uint32_t n, bool last,
                       cudag__end_fn fn, void *user)
{
    reach r = {fn, user, last};
    return reach_one(&r, h, n);
}

bool cudag__edge_side(const cudag_graph *h, const cudag__edge *e, bool to,
                      cudag__end_fn fn, void *user)
{
    uint32_t n = to ? e->to : e->from;
    if (e->kind == CUDAG_EDGE_PROGRAMMATIC)
        return cudag__edge_reach(h, n, !to, fn, user);
    return fn(user, h, n);
}
