/* accmap.c — a buffer's interval map: runs of elementary ranges (between
 * consecutive range ends) with one state each, the last writer and the
 * readers since.  A write merges the runs it covers into one, so a run
 * boundary is made once and removed at most once; a read adds one list cell
 * per run it covers, sharing the older cells.  An access costs a binary
 * search plus the runs it covers. */
#include "check/accmap.h"
#include "base/alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

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

#define NONE UINT32_MAX

/* ---- the run starts: a bitset with a summary per level --------------------- */

static bool bits_init(cudag__bits *b, uint32_t n)
{
    memset(b, 0, sizeof *b);
    do {
        uint32_t words = (n + 63) / 64;
        b->nbits[b->nlev] = n;
        b->lev[b->nlev] = cudag__calloc(words ? words : 1, sizeof(uint64_t));
        if (!b->lev[b->nlev++])
            return false;
        n = words;
    } while (n > 1 && b->nlev < 6);
    return true;
}

static void bits_free(cudag__bits *b)
{
    for (int l = 0; l < b->nlev; l++)
        cudag__free(b->lev[l]);
    memset(b, 0, sizeof *b);
}

static void bits_set(cudag__bits *b, uint32_t i)
{
    for (int l = 0; l < b->nlev; l++, i >>= 6)
        b->lev[l][i >> 6] |= 1ull << (i & 63);
}

static void bits_clear(cudag__bits *b, uint32_t i)
{
    for (int l = 0; l < b->nlev; l++, i >>= 6) {
        b->lev[l][i >> 6] &= ~(1ull << (i & 63));
        if (b->lev[l][i >> 6])
            break;
    }
}

static bool bits_has(const cudag__bits *b, uint32_t i)
{
    return b->lev[0][i >> 6] >> (i & 63) & 1;
}

static int top_bit(uint64_t x)
{
#if defined(__GNUC__)
    return 63 - __builtin_clzll(x);
#else
    int r = 0;
    while (x >>= 1)
        r++;
    return r;
#endif
}

static int low_bit(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int r = 0;
    while (!(x & 1)) {
        x >>= 1;
        r++;
    }
    return r;
#endif
}

/* The largest member <= i at level l, or -1. */
static int64_t bits_prev(const cudag__bits *b, int l, int64_t i)
{
    if (i < 0)
        return -1;
    uint64_t w = b->lev[l][i >> 6] & (~0ull >> (63 - (i & 63)));
    if (w)
        return (i & ~(int64_t)63) | top_bit(w);
    if (l + 1 == b->nlev)
        return -1;
    int64_t up = bits_prev(b, l + 1, (i >> 6) - 1);
    return up < 0 ? -1 : up * 64 + top_bit(b->lev[l][up]);
}

/* The smallest member >= i at level l, or -1. */
static int64_t bits_next(const cudag__bits *b, int l, int64_t i)
{
    if (i >= b->nbits[l])
        return -1;
    uint64_t w = b->lev[l][i >> 6] & (~0ull << (i & 63));
    if (w)
        return (i & ~(int64_t)63) | low_bit(w);
    if (l + 1 == b->nlev)
        return -1;
    int64_t up = bits_next(b, l + 1, (i >> 6) + 1);
    return up < 0 ? -1 : up * 64 + low_bit(b->lev[l][up]);
}

/* ---- the map ------------------------------------------------------------- */

int cudag__cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static void accmap_free(cudag__accmap *m);

/* Sets up the map for accesses whose ranges start and end at ends[0..n)
 * (in any order, repeats allowed; copied).  False on OOM, nothing to free. */
static bool accmap_init(cudag__accmap *m, const uint64_t *ends, uint32_t n)
{
    memset(m, 0, sizeof *m);
    m->cut = cudag__malloc(((size_t)n + 1) * sizeof *m->cut);
    if (!m->cut)
        return false;
    if (n) { /* ends may be null when empty; memcpy wants it not to be */
        memcpy(m->cut, ends, (size_t)n * sizeof *ends);
        qsort(m->cut, n, sizeof *m->cut, cudag__cmp_u64);
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!k || m->cut[k - 1] != m->cut[i])
            m->cut[k++] = m->cut[i];
    m->ncut = k;
    uint32_t runs = k ? k - 1 : 0;
    m->writer = cudag__malloc(((size_t)runs + 1) * sizeof *m->writer);
    m->readers = cudag__malloc(((size_t)runs + 1) * sizeof *m->readers);
    if (!m->writer || !m->readers || !bits_init(&m->starts, runs + 1)) {
        accmap_free(m);
        return false;
    }
    /* One run over everything, never written nor read. */
    bits_set(&m->starts, 0);
    m->writer[0] = m->readers[0] = NONE;
    return true;
}

static void accmap_free(cudag__accmap *m)
{
    cudag__free(m->cut);
    cudag__free(m->writer);
    cudag__free(m->readers);
    cudag__free(m->cell);
    bits_free(&m->starts);
    memset(m, 0, sizeof *m);
}

/* The elementary range that starts at byte x (one of the ends). */
static uint32_t find(const cudag__accmap *m, uint64_t x)
{
    uint32_t lo = 0, hi = m->ncut;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->cut[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Calls fn(ctx, ref) for what an access of [lo, hi) (both among the ends
 * given) must come after: the last writer of each run it overlaps and, when
 * it writes, the readers since.  A ref may come more than once. */
static void accmap_visit(const cudag__accmap *m, uint64_t lo, uint64_t hi,
                         bool write, void (*fn)(void *ctx, uint32_t ref),
                         void *ctx)
{
    if (lo >= hi)
        return;
    uint32_t a = find(m, lo), b = find(m, hi);
    for (int64_t s = bits_prev(&m->starts, 0, a); s >= 0 && s < b;
         s = bits_next(&m->starts, 0, s + 1)) {
        if (m->writer[s] != NONE)
            fn(ctx, m->writer[s]);
        if (write)
            for (uint32_t c = m->readers[s]; c != NONE; c = m->cell[c].next)
                fn(ctx, m->cell[c].ref);
    }
}

/* Makes elementary range e start a run (of its run's state). */
static void split(cudag__accmap *m, uint32_t e)
{
    if (e + 1 >= m->ncut || bits_has(&m->starts, e))
        return;
    int64_t s = bits_prev(&m->starts, 0, e);
    bits_set(&m->starts, e);
    m->writer[e] = m->writer[s];
    m->readers[e] = m->readers[s];
}

/* Records access `ref` of [lo, hi): the last writer of those bytes when
 * `write`, else one more reader.  False on OOM (the map is then void). */
static bool accmap_apply(cudag__accmap *m, uint64_t lo, uint64_t hi,
                         bool write, uint32_t ref)
{
    if (lo >= hi)
        return true;
    uint32_t a = find(m, lo), b = find(m, hi);
    split(m, a);
    split(m, b);
    if (write) {
        for (int64_t s = bits_next(&m->starts, 0, a + 1); s >= 0 && s < b;
             s = bits_next(&m->starts, 0, s + 1))
            bits_clear(&m->starts, (uint32_t)s);
        m->writer[a] = ref;
        m->readers[a] = NONE;
        return true;
    }
    for (int64_t s = a; s >= 0 && s < b;
         s = bits_next(&m->starts, 0, s + 1)) {
        if (m->ncell == m->ccell) {
            uint32_t nc = m->ccell ? 2 * m->ccell : 64;
            void *p = cudag__realloc(m->cell, (size_t)nc * sizeof *m->cell);
            if (!p)
                return false;
            m->cell = p;
            m->ccell = nc;
        }
        m->cell[m->ncell] = (struct cudag__accmap_cell){ref, m->readers[s]};
        m->readers[s] = m->ncell++;
    }
    return true;
}

/* ---- a walk ---------------------------------------------------------------- */

typedef struct walk {
    void (*fn)(void *ctx, uint32_t i, uint32_t earlier);
    void *ctx;
    uint32_t i;
} walk;

static void walk_one(void *user, uint32_t ref)
{
    walk *w = user;
    w->fn(w->ctx, w->i, ref);
}

bool cudag__accmap_walk(uint32_t n,
                        cudag__accmap_item (*get)(void *ctx, uint32_t i),
                        void (*fn)(void *ctx, uint32_t i, uint32_t earlier),
                        bool (*stop)(void *ctx), void *ctx)
{
    uint64_t *ends = cudag__malloc(((size_t)n * 2 + 1) * sizeof *ends);
    cudag__accmap m;
    if (!ends)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        cudag__accmap_item it = get(ctx, i);
        ends[2 * i] = it.lo;
        ends[2 * i + 1] = it.hi;
    }
    bool ok = accmap_init(&m, ends, 2 * n);
    cudag__free(ends);
    if (!ok)
        return false;
    walk w = {fn, ctx, 0};
    for (uint32_t i = 0, j; i < n && ok && !(stop && stop(ctx)); i = j) {
        uint32_t node = get(ctx, i).node;
        for (j = i; j < n; j++) {
            cudag__accmap_item it = get(ctx, j);
            if (it.node != node)
                break;
            w.i = j;
            accmap_visit(&m, it.lo, it.hi, it.write, walk_one, &w);
        }
        for (uint32_t k = i; k < j && ok; k++) {
            cudag__accmap_item it = get(ctx, k);
            ok = accmap_apply(&m, it.lo, it.hi, it.write, k);
        }
    }
    accmap_free(&m);
    return ok;
}
