/* accmap.h — one buffer's interval map (accmap.c): for each byte range, the
 * access that wrote it last and the accesses that read it since.  Walked in
 * an order of the nodes (topological for the race check, written for
 * `order: program`), it names, for each new access, the few earlier ones it
 * must come after; everything older is behind those. */
#ifndef CUDAG_ACCMAP_H
#define CUDAG_ACCMAP_H

#include <stdbool.h>
#include <stdint.h>

/* qsort's and bsearch's comparison of two uint64_t. */
int cudag__cmp_u64(const void *pa, const void *pb);

/* One access as cudag__accmap_walk sees it. */
typedef struct cudag__accmap_item {
    uint64_t lo, hi;
    uint32_t node;              /* accesses of one node are adjacent */
    bool write;
} cudag__accmap_item;

/*
 * Walks accesses 0..n-1 of one buffer in their order with a map of its own:
 * get(ctx, i) says what access i is; each node's accesses are first compared
 * (fn(ctx, i, earlier) for every earlier access that the map
 * names, a node's own included) and then recorded.  Stops early when
 * stop(ctx) (if not NULL) is true.  False on OOM.
 */
bool cudag__accmap_walk(uint32_t n,
                        cudag__accmap_item (*get)(void *ctx, uint32_t i),
                        void (*fn)(void *ctx, uint32_t i, uint32_t earlier),
                        bool (*stop)(void *ctx), void *ctx);

#endif /* CUDAG_ACCMAP_H */
