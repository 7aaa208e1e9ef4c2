/* access.h — access sets and the race check (access.c): the check stage's
 * analysis of what each node reads and writes.  Also used by plan.c (the
 * sets in `cudag plan --json`) and by `order: program`. */
#ifndef CUDAG_ACCESS_H
#define CUDAG_ACCESS_H

#include "accset.h"
#include "checker.h"

/* Appends to *s what node n of g may read and write, through its kind
 * (sub-graphs included).  s->oom on a failed allocation. */
void cudag__node_access(cudag__accset *s, const cudag_graph *g, uint32_t n);

/* True when edge e of g orders memory: a full or programmatic edge, or a
 * launch-order edge that is built as a full one. */
bool cudag__edge_orders_memory(const cudag_graph *g, const cudag__edge *e);

/* True when a and b overlap in one buffer and one of them writes. */
bool cudag__access_conflict(const cudag__access *a, const cudag__access *b);

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
