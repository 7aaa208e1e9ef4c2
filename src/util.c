/* util.c — allocation with a fault-injection seam, the arena, growable arrays,
 * the string map, diagnostics, a growable text buffer, and small string
 * helpers. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- string map ----------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    /* FNV-1a: short keys, no adversary worth a keyed hash (the limits bound
     * what a hostile file can make us do). */
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* A lookup compares stored hashes first: a repeated graph looks names up
 * many times per node, and a strcmp on each probed key (a cache miss to the
 * arena) cost more than the hashing. */
bool cudag__map_get(const cudag__map *m, const char *key, uint32_t *val)
{
    if (!m->cap)
        return false;
    uint32_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i])
            return false;
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) {
            if (val)
                *val = m->vals[i];
            return true;
        }
    }
}

static void map_insert(const char **keys, uint32_t *vals, uint64_t *hashes,
                       uint32_t cap, const char *key, uint64_t h, uint32_t val,
                       bool *added)
{
    uint32_t mask = cap - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        if (!keys[i]) {
            keys[i] = key;
            vals[i] = val;
            hashes[i] = h;
            *added = true;
            return;
        }
        if (hashes[i] == h && strcmp(keys[i], key) == 0) {
            vals[i] = val;
            *added = false;
            return;
        }
    }
}

static int map_grow(cudag__map *m, uint32_t ncap)
{
    bool added;
    const char **nk = cudag__calloc(ncap, sizeof *nk);
    uint32_t *nv = cudag__calloc(ncap, sizeof *nv);
    uint64_t *nh = cudag__calloc(ncap, sizeof *nh);
    if (!nk || !nv || !nh) {
        cudag__free(nk);
        cudag__free(nv);
        cudag__free(nh);
        return CUDAG_ENOMEM;
    }
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            map_insert(nk, nv, nh, ncap, m->keys[i], m->hashes[i], m->vals[i],
                       &added);
    cudag__free(m->keys);
    cudag__free(m->vals);
    cudag__free(m->hashes);
    m->keys = nk;
    m->vals = nv;
    m->hashes = nh;
    m->cap = ncap;
    return CUDAG_OK;
}

int cudag__map_reserve(cudag__map *m, uint32_t n)
{
    uint32_t ncap = m->cap ? m->cap : 64;
    while ((uint64_t)n * 4 > (uint64_t)ncap * 3) {
        if (ncap > UINT32_MAX / 2)
            return CUDAG_ENOMEM;
        ncap *= 2;
    }
    return ncap > m->cap ? map_grow(m, ncap) : CUDAG_OK;
}

int cudag__map_put(cudag__map *m, const char *key, uint32_t val)
{
    bool added;
    if ((uint64_t)(m->len + 1) * 4 > (uint64_t)m->cap * 3) {
        uint32_t ncap = m->cap ? m->cap * 2 : 64;
        if (ncap <= m->cap || map_grow(m, ncap) != CUDAG_OK)
            return CUDAG_ENOMEM;
    }
    map_insert(m->keys, m->vals, m->hashes, m->cap, key, hash_str(key), val,
               &added);
    if (added)
        m->len++;
    return CUDAG_OK;
}

void cudag__map_free(cudag__map *m)
{
    cudag__free(m->keys);
    cudag__free(m->vals);
    cudag__free(m->hashes);
    memset(m, 0, sizeof *m);
}

/* ---- diagnostics ------------------------------------------------------ */

static void fill(cudag_error *e, int sev, int code, cudag__pos pos,
                 const char *fmt, va_list ap)
{
    memset(e, 0, offsetof(cudag_error, file));
    e->code = code;
    e->severity = sev;
    e->file[0] = '\0';
    if (pos.file) {
        snprintf(e->file, sizeof e->file, "%s", pos.file);
        e->line = (int)pos.line;
        e->column = (int)pos.col;
    }
    vsnprintf(e->message, sizeof e->message, fmt, ap);
}

int cudag__vfail_at(cudag_error *err, int code, cudag__pos pos,
                    const char *fmt, va_list ap)
{
    if (err) {
        fill(err, CUDAG_SEV_ERROR, code, pos, fmt, ap);
        err->count = 1;
    }
    return code;
}

int cudag__fail_at(cudag_error *err, int code, cudag__pos pos,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cudag__vfail_at(err, code, pos, fmt, ap);
    va_end(ap);
    return code;
}

int cudag__vfail_call(cudag_error *err, cudag__pos pos, int result,
                      const char *name, const char *desc, const char *fmt,
                      va_list ap)
{
    if (!err)
        return CUDAG_ECUDA;
    char what[700];
    vsnprintf(what, sizeof what, fmt, ap);
    cudag__fail_at(err, CUDAG_ECUDA, pos, "%s: %s (%s)", what, name, desc);
    err->cuda_result = result;
    return CUDAG_ECUDA;
}

void cudag__error_clear(cudag_error *err)
{
    if (err) {
        memset(err, 0, offsetof(cudag_error, file));
        err->file[0] = '\0';
        err->message[0] = '\0';
    }
}

void cudag__error_prefix(cudag_error *err, cudag__pos pos, const char *fmt,
                         ...)
{
    if (!err)
        return;
    char pre[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t p = strlen(pre), m = strlen(err->message);
    if (p + 2 + m >= sizeof err->message)
        m = sizeof err->message - 1 - p - 2;
    memmove(err->message + p + 2, err->message, m);
    err->message[p + 2 + m] = '\0';
    memcpy(err->message, pre, p);
    err->message[p] = ':';
    err->message[p + 1] = ' ';
    err->file[0] = '\0';
    err->line = err->column = 0;
    if (pos.file) {
        snprintf(err->file, sizeof err->file, "%s", pos.file);
        err->line = (int)pos.line;
        err->column = (int)pos.col;
    }
}

void cudag__diag_init(cudag__diag *d, const cudag_options *opts,
                      cudag_error *first)
{
    memset(d, 0, sizeof *d);
    d->first = first;
    d->max_errors = 50;
    /* A size of 0 is taken as this version's struct, so a caller who
     * zero-initialised and forgot .size still gets the options it set. */
    if (opts && (opts->size == 0 ||
                 opts->size >= offsetof(cudag_options, flags) + sizeof(unsigned))) {
        d->fn = opts->diag;
        d->user = opts->diag_user;
        if (opts->max_errors)
            d->max_errors = opts->max_errors;
        d->flags = opts->flags;
    }
    cudag__error_clear(first);
}

int cudag__vreport(cudag__diag *d, cudag_severity sev, int code,
                   cudag__pos pos, const char *fmt, va_list ap)
{
    if (sev == CUDAG_SEV_WARNING && (d->flags & CUDAG_WERROR))
        sev = CUDAG_SEV_ERROR;
    if (sev == CUDAG_SEV_ERROR && d->nerr >= d->max_errors)
        return code;
    cudag_error e;
    fill(&e, sev, code, pos, fmt, ap);
    /* One mistake is one report.  Where it has a position, that and its
     * code identify it: the copies of a repeated node repeat it at the same
     * place, with their own names in the message ("unknown node
     * 'other[2]'").  Without one, the message does, up to a suggestion
     * (searched for only the first few times in a large namespace, so the
     * same mistake may come with or without one). */
    const char *end = strstr(e.message, " (did you mean '");
    if (!end)
        end = e.message + strlen(e.message);
    if (pos.line > 0)
        end = e.message;
    uint64_t sig = UINT64_C(1469598103934665603) ^ ((uint64_t)(unsigned)code << 8);
    for (const char *c = e.message; c < end; c++)
        sig = (sig ^ (unsigned char)*c) * UINT64_C(1099511628211);
    /* The file by its name, not its pointer: a child graph file is read
     * once per node that uses it, and a mistake in it is one mistake. */
    for (const char *c = pos.file; c && *c; c++)
        sig = (sig ^ (unsigned char)*c) * UINT64_C(1099511628211);
    sig ^= ((uint64_t)pos.line << 40) ^ ((uint64_t)pos.col << 20) ^
           (uint64_t)(unsigned)sev;
    for (unsigned i = 0; i < CUDAG__DIAG_RECENT && i < d->nrecent; i++)
        if (d->recent[i] == sig) {
            if (sev == CUDAG_SEV_ERROR)
                d->nrepeat++;
            return sev == CUDAG_SEV_ERROR ? code : CUDAG_OK;
        }
    d->recent[d->nrecent++ % CUDAG__DIAG_RECENT] = sig;
    if (sev == CUDAG_SEV_ERROR) {
        if (d->nerr++ == 0) {
            d->first_code = code;
            if (d->first)
                *d->first = e;
        }
    } else if (sev == CUDAG_SEV_WARNING) {
        d->nwarn++;
    }
    if (d->fn)
        d->fn(d->user, &e);
    return sev == CUDAG_SEV_ERROR ? code : CUDAG_OK;
}

int cudag__report(cudag__diag *d, cudag_severity sev, int code,
                  cudag__pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cudag__vreport(d, sev, code, pos, fmt, ap);
    va_end(ap);
    return r;
}

bool cudag__diag_full(const cudag__diag *d)
{
    return d->nerr >= d->max_errors || d->nrepeat >= d->max_errors;
}

int cudag__diag_finish(cudag__diag *d)
{
    if (d->first)
        d->first->count = (int)d->nerr;
    return d->nerr ? d->first_code : CUDAG_OK;
}

/* ---- text buffer --------------------------------------------------- */

static bool sb_reserve(cudag__sb *b, size_t more)
{
    if (b->oom)
        return false;
    if (more < b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (more >= cap - b->len) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *p = cudag__realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void cudag__sb_puts(cudag__sb *b, const char *s)
{
    size_t n = strlen(s);
    if (!sb_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

void cudag__sb_printf(cudag__sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if (!sb_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cudag__sb_dot_escape(cudag__sb *b, const char *s)
{
    char tmp[2] = {0, 0};
    for (; *s; s++) {
        if (*s == '"')
            cudag__sb_puts(b, "\\\"");
        else if (*s == '\\')
            cudag__sb_puts(b, "\\\\");
        else if ((unsigned char)*s < 0x20 || *s == 0x7f)
            continue;
        else {
            tmp[0] = *s;
            cudag__sb_puts(b, tmp);
        }
    }
}

char *cudag__sb_finish(cudag__sb *b)
{
    char *p = NULL;
    if (b->oom || !sb_reserve(b, 0)) {
        cudag__free(b->p);
    } else {
        p = b->p;
        p[b->len] = '\0';  /* text may never have been appended */
    }
    memset(b, 0, sizeof *b);
    return p;
}

/* ---- strings --------------------------------------------------------- */

size_t cudag__edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    /* The distance is at least the difference in length: most names of a
     * large namespace are ruled out without the dynamic program. */
    if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) >= cap)
        return cap;
    /* Optimal string alignment: insertions, deletions, substitutions and
     * swaps of two adjacent letters ("axyp" for "axpy") cost one each. */
    size_t r0[65], r1[65], r2[65];
    size_t *pp = r0, *prev = r1, *row = r2;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    size_t prev_best = 0;
    for (size_t i = 1; i <= la; i++) {
        size_t best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j - 1] + cost;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            row[j] = v;
            if (v < best)
                best = v;
        }
        /* A swap reaches back two rows: stop once both are past the cap. */
        if (best >= cap && prev_best >= cap)
            return cap;
        prev_best = best;
        size_t *t = pp;
        pp = prev;
        prev = row;
        row = t;
    }
    return prev[lb] < cap ? prev[lb] : cap;
}

const char *cudag__suggest(const char *word, const char *const *cands,
                           size_t n)
{
    /* A typo is at most about a third of the word wrong, and at most 3
     * edits; a one-letter word has no plausible typo of another name. */
    size_t len = strlen(word);
    size_t cap = (len + 1) / 3;
    if (cap > 3)
        cap = 3;
    if (cap == 0)
        return NULL;
    const char *best = NULL;
    size_t bestd = cap + 1;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t d = cudag__edit_distance(word, cands[i], bestd);
        if (d < bestd && d <= cap) {
            bestd = d;
            best = cands[i];
        }
    }
    return best;
}

uint32_t cudag__columns(const char *s, size_t n)
{
    uint32_t cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += ((unsigned char)s[i] & 0xC0) != 0x80;
    return cols;
}

int cudag__char_bytes(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    size_t i = 1;
    while (i < want && i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
        i++;
    return (int)i;
}

bool cudag__is_ident(const char *s, size_t n)
{
    if (n == 0 || n > CUDAG__MAX_NAME)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

uint64_t cudag__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}
