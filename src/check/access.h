/* access.h — access sets and the race check (access.c): the check stage's
 * analysis of what each node reads and writes.  Also used by plan.c (the
 * sets in `cudag plan --json`) and by `order: program`. */
#ifndef CUDAG_ACCESS_H
#define CUDAG_ACCESS_H

#include "cudag.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct cudag__access cudag__access;
typedef struct cudag__accset cudag__accset;
typedef struct cudag__edge cudag__edge;
typedef struct cudag__topo cudag__topo;
typedef struct cudag__checker cudag__checker;

/* Appends to *s what node n of g may read and write, through its kind
 * (sub-graphs included).  s->oom on a failed allocation. */
void cudag__node_access(cudag__accset *s, const cudag_graph *g, uint32_t n);

/* True when edge e of g orders memory: a full or programmatic edge, or a
 * launch-order edge that is built as a full one. */
bool cudag__edge_orders_memory(const cudag_graph *g, const cudag__edge *e);

/* True when a and b overlap in one buffer and one of them writes. */
bool cudag__access_conflict(const cudag__access *a, const cudag__access *b);

/* One access of a graph's set, by its node there: the race check and
 * `order: program` (order.c) walk each buffer's accesses in an order of the
 * nodes. */
typedef struct cudag__access_entry {
    uint32_t buffer;
    uint32_t node;              /* in the graph */
    uint32_t at;                /* the node's place in the order walked */
    uint32_t acc;               /* index into the set */
} cudag__access_entry;

/* Appends the set of every node of g to *s, in node order, and makes *e:
 * one entry per access, sorted by buffer, then at[node] (at NULL: the
 * node's index), then the access.  False on OOM; the caller frees s->a and
 * *e (NULL when it was not made) either way. */
bool cudag__access_entries(cudag__accset *s, const cudag_graph *g,
                           const uint32_t *at, cudag__access_entry **e);

/* Walks, buffer by buffer, the accesses of e[0..s->n) (from
 * cudag__access_entries) of each buffer that one of them writes, with that
 * buffer's interval map (accmap.h): fn(user, y, x) for each earlier access
 * y of the same buffer that the map names for access x (x's own node's
 * included).  Stops before a buffer, or early, when stop(user).  False on
 * OOM. */
bool cudag__access_walk(const cudag__accset *s, const cudag__access_entry *e,
                        void (*fn)(void *user, const cudag__access_entry *y,
                                   const cudag__access_entry *x),
                        bool (*stop)(void *user), void *user);

/* What a race check did: its result and its work, which tests bound (a
 * count of steps, not a time, so that a slow machine fails nothing). */
typedef struct cudag__race_stats {
    uint32_t races;             /* pairs of nodes found, reported or not */
    uint64_t accesses;          /* accesses of every graph of the tree */
    uint64_t compared;          /* earlier accesses the interval maps named */
    uint64_t searched;          /* nodes the reachability fallback visited */
    uint32_t searching;         /* graphs too wide for the reach table */
} cudag__race_stats;

/*
 * The race check of c->g (topology t) and of every sub-graph of its tree
 * (their own topo): a warning at both nodes of each race (an error under
 * CUDAG_WERROR), once per pair of nodes.  Every graph with a race gets a
 * warning; where writers race with each other, an access behind the newest
 * of them is compared with it only, so some pairs show once that race is
 * fixed.  *st (if not NULL): what it found
 * and did.  Needs a graph checked without errors.  False on OOM (the caller
 * reports it).
 */
bool cudag__check_races(cudag__checker *c, const cudag__topo *t,
                        cudag__race_stats *st);

#endif /* CUDAG_ACCESS_H */
