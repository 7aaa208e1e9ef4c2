/* accmap.h — one buffer's interval map (accmap.c): for each byte range, the
 * access that wrote it last and the accesses that read it since.  Walked in
 * an order of the nodes (topological for the race check, written for
 * `order: program`), it names, for each new access, the few earlier ones it
 * must come after; everything older is behind those. */
#ifndef CUDAG_ACCMAP_H
#define CUDAG_ACCMAP_H

#include <stdbool.h>
#include <stdint.h>

/* A set of positions 0..n-1 with the previous and next member in a few word
 * operations: a bitset and, above it, a bitset of its non-zero words, and so
 * on up to one word. */
typedef struct cudag__bits {
    uint64_t *lev[6];
    uint32_t nbits[6];
    int nlev;
} cudag__bits;

typedef struct cudag__accmap {
    uint64_t *cut;              /* the distinct ends of all ranges, sorted */
    uint32_t ncut;
    cudag__bits starts;         /* elementary ranges [cut[e], cut[e+1]) where
                                   a run of equal state starts */
    uint32_t *writer, *readers; /* per run start: the last writer's ref and
                                   the list of readers since (UINT32_MAX
                                   none) */
    struct cudag__accmap_cell {
        uint32_t ref, next;
    } *cell;                    /* readers' lists, tails shared */
    uint32_t ncell, ccell;
} cudag__accmap;

/* Sets up the map for accesses whose ranges start and end at ends[0..n)
 * (in any order, repeats allowed; copied).  False on OOM, nothing to free. */
bool cudag__accmap_init(cudag__accmap *m, const uint64_t *ends, uint32_t n);

/* Calls fn(ctx, ref) for what an access of [lo, hi) (both among the ends
 * given) must come after: the last writer of each run it overlaps and, when
 * it writes, the readers since.  A ref may come more than once. */
void cudag__accmap_visit(const cudag__accmap *m, uint64_t lo, uint64_t hi,
                         bool write, void (*fn)(void *ctx, uint32_t ref),
                         void *ctx);

/* Records access `ref` of [lo, hi): the last writer of those bytes when
 * `write`, else one more reader.  False on OOM (the map is then void). */
bool cudag__accmap_apply(cudag__accmap *m, uint64_t lo, uint64_t hi,
                         bool write, uint32_t ref);

void cudag__accmap_free(cudag__accmap *m);

/* One access as cudag__accmap_walk sees it. */
typedef struct cudag__accmap_item {
    uint64_t lo, hi;
    uint32_t node;              /* accesses of one node are adjacent */
    bool write;
} cudag__accmap_item;

/*
 * Walks accesses 0..n-1 of one buffer in their order with a map of its own:
 * get(ctx, i) says what access i is; each node's accesses are first compared
 * (fn(ctx, i, earlier) for every earlier access that cudag__accmap_visit
 * names, a node's own included) and then recorded.  Stops early when
 * stop(ctx) (if not NULL) is true.  False on OOM.
 */
bool cudag__accmap_walk(uint32_t n,
                        cudag__accmap_item (*get)(void *ctx, uint32_t i),
                        void (*fn)(void *ctx, uint32_t i, uint32_t earlier),
                        bool (*stop)(void *ctx), void *ctx);

#endif /* CUDAG_ACCMAP_H */
