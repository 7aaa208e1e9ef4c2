/* alloc.c — allocation with a fault-injection seam, the arena and growable
 * arrays: the one place the library takes memory from the system, so that a
 * test build counts and fails it here. */
#include "base/alloc.h"

#include <stddef.h>
#include <stdint.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- allocation ---------------------------------------------------- */

#ifdef CUDAG_TESTING
/* Test builds only: the countdown that makes the n-th allocation fail.  It is
 * process-wide because allocation is; tests that use it run single-threaded. */
static long fail_countdown = -1;
static long alloc_count;
static long live;

long cudag__alloc_live(void) { return live; }

long cudag__alloc_fail_after(long n)
{
    long made = alloc_count;
    alloc_count = 0;
    fail_countdown = n;
    return made;
}

static bool should_fail(void)
{
    alloc_count++;
    if (fail_countdown < 0)
        return false;
    if (--fail_countdown == 0) {
        fail_countdown = -1;
        return true;
    }
    return false;
}
#else
static bool should_fail(void) { return false; }
#endif

#ifdef CUDAG_TESTING
#define COUNT(p, delta) ((p) ? (void)(live += (delta)) : (void)0)
#else
#define COUNT(p, delta) ((void)0)
#endif

void *cudag__malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = malloc(n ? n : 1);
    COUNT(p, 1);
    return p;
}

void *cudag__calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    COUNT(p, 1);
    return p;
}

void *cudag__realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    void *q = realloc(p, n ? n : 1);
    if (!p)
        COUNT(q, 1);
    return q;
}

void cudag__free(void *p)
{
    COUNT(p, -1);
    free(p);
}

char *cudag__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = cudag__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- arena --------------------------------------------------------- */

struct cudag__chunk {
    cudag__chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define CHUNK_MIN (64u * 1024u)

/* Space for n bytes, not zeroed: for callers that write all of it. */
static void *arena_raw(cudag__arena *a, size_t n);

void *cudag__arena_alloc(cudag__arena *a, size_t n)
{
    void *p = arena_raw(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static void *arena_raw(cudag__arena *a, size_t n)
{
    while (a->owner)
        a = a->owner;
    if (n > SIZE_MAX - 15u)
        return NULL;    /* rounding up would wrap to a tiny object */
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    cudag__chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
        /* Chunks grow with the arena so a big graph needs few of them. */
        if (c && c->size * 2 > size && c->size < (64u << 20))
            size = c->size * 2;
        if (size > SIZE_MAX - sizeof *c)
            return NULL;
        cudag__chunk *nc = cudag__malloc(sizeof *nc + size);
        if (!nc)
            return NULL;
        nc->size = size;
        nc->used = 0;
        /* A request larger than the current chunk's rest gets its own chunk
         * behind the head, so the head's free space is not wasted. */
        if (c && n > CHUNK_MIN && c->size - c->used >= CHUNK_MIN / 4) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    return p;
}

char *cudag__arena_strndup(cudag__arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = arena_raw(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *cudag__arena_strdup(cudag__arena *a, const char *s)
{
    return cudag__arena_strndup(a, s, strlen(s));
}

char *cudag__arena_cat(cudag__arena *a, const char *x, size_t xlen,
                       const char *y, size_t ylen)
{
    if (xlen > SIZE_MAX - ylen - 1)
        return NULL;
    char *d = cudag__arena_alloc(a, xlen + ylen + 1);
    if (!d)
        return NULL;
    memcpy(d, x, xlen);
    memcpy(d + xlen, y, ylen);
    d[xlen + ylen] = '\0';
    return d;
}

char *cudag__arena_printf(cudag__arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *d = cudag__arena_alloc(a, (size_t)n + 1);
    if (!d)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

void cudag__arena_free(cudag__arena *a)
{
    if (a->owner)
        return;     /* the owner's to free */
    cudag__chunk *c = a->head;
    while (c) {
        cudag__chunk *next = c->next;
        cudag__free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

/* ---- growable arrays ------------------------------------------------ */

void *cudag__vec_push(void **data, uint32_t *len, uint32_t *cap, size_t elem)
{
    if (*len == UINT32_MAX - 1)
        return NULL;
    if (*len == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 16;
        if (ncap < *cap || (size_t)ncap > SIZE_MAX / elem)
            return NULL;
        void *nd = cudag__realloc(*data, (size_t)ncap * elem);
        if (!nd)
            return NULL;
        *data = nd;
        *cap = ncap;
    }
    unsigned char *p = (unsigned char *)*data + (size_t)*len * elem;
    memset(p, 0, elem);
    (*len)++;
    return p;
}
