/* reach.h — is one node of a checked graph before another on a path of
 * memory-ordering edges (reach.c)?  Used by the race check and by the
 * edges `order: program` infers (access.c). */
#ifndef CUDAG_REACH_H
#define CUDAG_REACH_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__topo cudag__topo;

/*
 * The nodes are covered by chains (each a path of the graph); each node
 * keeps, per chain, the last place on it among its ancestors, so a query is
 * one lookup.  That table is n x chains; when it would pass a budget (a
 * wide graph: many chains), queries fall back to a backward search cut at
 * the earlier node's place in the order, which is short exactly there.
 */
typedef struct cudag__reach {
    const cudag_graph *g;
    const cudag__topo *t;
    const bool *orders;         /* per edge: does it order memory */
    uint32_t *where;            /* node -> place in t->order */
    uint32_t *chain, *idx;      /* node -> its chain, its place on it */
    uint32_t *table;            /* [node * stride + chain]: 1 + the last
                                   place on the chain among the node's
                                   ancestors (itself included), 0 none;
                                   NULL: search instead */
    uint32_t stride;
    uint32_t *stamp, *stack, tick;
    uint64_t searched;          /* nodes the fallback search visited */
} cudag__reach;

/* Builds the index of g (topology t; orders[e]: edge e orders memory,
 * kept, not copied, as g and t are).  False on OOM, with nothing to free.
 * `budget`: the most table entries (0: the default, 2^23). */
bool cudag__reach_init(cudag__reach *r, const cudag_graph *g,
                       const cudag__topo *t, const bool *orders,
                       size_t budget);

/* True when u == x or a path of ordering edges runs from u to x. */
bool cudag__reach_query(cudag__reach *r, uint32_t u, uint32_t x);

void cudag__reach_free(cudag__reach *r);

#endif /* CUDAG_REACH_H */
