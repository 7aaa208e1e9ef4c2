/* alloc.h — allocation (with a fault-injection seam in test builds), an
 * arena and growable arrays: every other container of the library allocates
 * through these, so a test can make any allocation fail. */
#ifndef CUDAG_ALLOC_H
#define CUDAG_ALLOC_H

#include "base/attrs.h"

#include <stddef.h>
#include <stdint.h>

/* ---- allocation ---------------------------------------------------- */

/* Every heap allocation of the library goes through these, so a test build
 * (CUDAG_TESTING) can make the n-th one fail. */
void *cudag__malloc(size_t n);
void *cudag__calloc(size_t n, size_t size);
void *cudag__realloc(void *p, size_t n);
void cudag__free(void *p);
char *cudag__strdup(const char *s);

#ifdef CUDAG_TESTING
/* Makes the n-th allocation from now fail (1 = the next one); a negative n
 * turns failures off.  Returns how many allocations were made since the last
 * call, which lets a test sweep n over every allocation of an operation. */
long cudag__alloc_fail_after(long n);
/* Allocations made through these functions and not yet freed: a test that
 * reads it before and after an operation sees any leak. */
long cudag__alloc_live(void);
#endif

/* ---- arena --------------------------------------------------------- */

/* A bump allocator: objects are never freed one by one, only all at once by
 * cudag__arena_free().  Pointers stay valid until then. */
typedef struct cudag__chunk cudag__chunk;
typedef struct cudag__arena {
    cudag__chunk *head;
    size_t used;                /* bytes handed out, for statistics */
    /* When set, this arena allocates from `owner` and frees nothing: a
     * sub-graph's names live in its root's arena (ir/graph.h), which spares a
     * 64 KiB chunk per switch case. */
    struct cudag__arena *owner;
} cudag__arena;

void *cudag__arena_alloc(cudag__arena *a, size_t n);   /* zeroed; NULL on OOM */
char *cudag__arena_strndup(cudag__arena *a, const char *s, size_t n);
/* x[0..xlen) followed by y[0..ylen), terminated. */
char *cudag__arena_cat(cudag__arena *a, const char *x, size_t xlen,
                       const char *y, size_t ylen);
char *cudag__arena_strdup(cudag__arena *a, const char *s);
char *cudag__arena_printf(cudag__arena *a, const char *fmt, ...)
    CUDAG__PRINTF(2, 3);
void cudag__arena_free(cudag__arena *a);

/* ---- growable arrays ------------------------------------------------ */

/* Grows *data (elements of `elem` bytes) so that one more fits, and returns
 * a pointer to the new zeroed element at index *len (then incremented).
 * Returns NULL on overflow or OOM, leaving *data, *len and *cap unchanged. */
void *cudag__vec_push(void **data, uint32_t *len, uint32_t *cap, size_t elem);

#endif /* CUDAG_ALLOC_H */
