/* util.h — the small containers every stage shares: allocation (with a
 * fault-injection seam in test builds), an arena, growable arrays, a string
 * map, and the diagnostic sink that turns problems into cudag_error values. */
#ifndef CUDAG_UTIL_H
#define CUDAG_UTIL_H

#include "cudag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CUDAG__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CUDAG__UNUSED __attribute__((unused))
#else
#define CUDAG__PRINTF(f, a)
#define CUDAG__UNUSED
#endif

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
     * sub-graph's names live in its root's arena (ir.h), which spares a
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

/* ---- string map ----------------------------------------------------- */

/* Open addressing from a string (not copied: the caller keeps it alive, in
 * practice in an arena) to a 32-bit value. */
typedef struct cudag__map {
    const char **keys;
    uint32_t *vals;
    uint64_t *hashes;           /* each key's hash: compared before the key */
    uint32_t cap, len;
} cudag__map;

/* Returns true and sets *val when key is present. */
bool cudag__map_get(const cudag__map *m, const char *key, uint32_t *val);
/* Inserts or replaces.  Returns CUDAG_ENOMEM (map unchanged) or CUDAG_OK. */
int cudag__map_put(cudag__map *m, const char *key, uint32_t val);
/* Makes room for n entries in all, so that n puts do not rehash. */
int cudag__map_reserve(cudag__map *m, uint32_t n);
void cudag__map_free(cudag__map *m);

/* ---- positions and diagnostics --------------------------------------- */

/* A place in a source file: 1-based line and column; line 0 = none.  file
 * points into an arena that outlives every object carrying the position. */
typedef struct cudag__pos {
    const char *file;
    uint32_t line, col;
} cudag__pos;

#define CUDAG__NOPOS ((cudag__pos){NULL, 0, 0})

/* Fills *err (which may be NULL) and returns code: failing is one line,
 *   return cudag__fail_at(err, CUDAG_EUNKNOWN, pos, "unknown node '%s'", n); */
int cudag__fail_at(cudag_error *err, int code, cudag__pos pos,
                   const char *fmt, ...) CUDAG__PRINTF(4, 5);
int cudag__vfail_at(cudag_error *err, int code, cudag__pos pos,
                    const char *fmt, va_list ap);

/* Fills err (may be NULL) for a failed call into a run-time library (the
 * driver, cuBLASLt): "<fmt…>: NAME (DESC)", with err->cuda_result = result.
 * Returns CUDAG_ECUDA. */
int cudag__vfail_call(cudag_error *err, cudag__pos pos, int result,
                      const char *name, const char *desc, const char *fmt,
                      va_list ap);

/* Resets *err (may be NULL) to "no error". */
void cudag__error_clear(cudag_error *err);

/* Prepends "<formatted>: " to err's message (when err is not NULL) and
 * moves it to pos; the code stays. */
void cudag__error_prefix(cudag_error *err, cudag__pos pos, const char *fmt,
                         ...) CUDAG__PRINTF(3, 4);

/*
 * Where the stages that find many problems in one pass put them: each goes to
 * the user's callback as it is found, the first error is kept in *first, and
 * errors and warnings are counted.
 */
#define CUDAG__DIAG_RECENT 64

/* Returned, never reported and never public, by a front-end step that fails
 * only because it uses a declaration already reported as wrong (a variable
 * whose value did not evaluate, a buffer with a bad type, …): the caller
 * says nothing more and marks what it declares as wrong in turn, so that
 * one mistake gives one error. */
#define CUDAG__EBAD (-1000)

typedef struct cudag__diag {
    cudag_diag_fn fn;
    void *user;
    cudag_error *first;         /* the caller's error value, may be NULL */
    unsigned nerr, nwarn;
    unsigned max_errors;        /* after this many, cudag__diag_full() */
    unsigned flags;             /* CUDAG_WERROR */
    int first_code;
    /* The last diagnostics reported, so that the same problem met again in
     * each copy of a repeated node is reported once.  As many as one copy
     * of a group may raise: with 8, a group whose copies each had nine
     * mistakes reported them all again in every copy, and never filled up
     * max_errors with repeats. */
    uint64_t recent[CUDAG__DIAG_RECENT];
    unsigned nrecent;
    /* Errors dropped as repeats.  They count towards max_errors, so that a
     * mistake copied a million times by a repetition stops the pass as
     * fifty different ones would. */
    unsigned nrepeat;
} cudag__diag;

void cudag__diag_init(cudag__diag *d, const cudag_options *opts,
                      cudag_error *first);

/* Reports one problem.  Returns `code` for an error, CUDAG_OK for a warning
 * or note (unless CUDAG_WERROR made it an error). */
int cudag__report(cudag__diag *d, cudag_severity sev, int code,
                  cudag__pos pos, const char *fmt, ...) CUDAG__PRINTF(5, 6);
int cudag__vreport(cudag__diag *d, cudag_severity sev, int code,
                   cudag__pos pos, const char *fmt, va_list ap);

/* True once max_errors errors have been reported: stop looking for more. */
bool cudag__diag_full(const cudag__diag *d);

/* Finishes a pass: returns CUDAG_OK when no error was reported, otherwise the
 * first error's code, and stores the count in first->count. */
int cudag__diag_finish(cudag__diag *d);

/* ---- text buffer ---------------------------------------------------- */

/* A NUL-terminated string that grows as text is appended.  A failed
 * allocation sets `oom` and makes every later append a no-op, so writers
 * check once, at the end (cudag__sb_finish). */
typedef struct cudag__sb {
    char *p;
    size_t len, cap;
    bool oom;
} cudag__sb;

void cudag__sb_puts(cudag__sb *b, const char *s);
void cudag__sb_printf(cudag__sb *b, const char *fmt, ...) CUDAG__PRINTF(2, 3);

/* Appends s escaped for a double-quoted DOT string ('"' and '\' escaped,
 * control characters dropped). */
void cudag__sb_dot_escape(cudag__sb *b, const char *s);

/* Returns the text (the caller frees it with cudag__free) or, after a failed
 * allocation, NULL with the buffer freed.  The buffer is empty afterwards. */
char *cudag__sb_finish(cudag__sb *b);

/* ---- strings --------------------------------------------------------- */

/* Of `n` candidates, the one closest to `word` by edit distance when it is
 * close enough to be a likely typo; NULL otherwise. */
const char *cudag__suggest(const char *word, const char *const *cands,
                           size_t n);

/* Levenshtein distance, capped at `cap` (returns cap when at least cap). */
size_t cudag__edit_distance(const char *a, const char *b, size_t cap);

/* The columns that n bytes of UTF-8 text take, in the unit of
 * cudag_error.column: one per character (per byte that does not continue a
 * multi-byte sequence), as libyaml's marks count them.  Columns after a
 * mark are the mark's column plus this count of the text in between. */
uint32_t cudag__columns(const char *s, size_t n);

/* The bytes (1 to 4, at most n) of the UTF-8 character that starts at s, so
 * that a message quoting one character quotes all of it ("'%.*s'"). */
int cudag__char_bytes(const char *s, size_t n);

/* True for [A-Za-z_][A-Za-z0-9_]* of at most CUDAG__MAX_NAME bytes. */
/* Bytes in a name part: an identifier's limit, here with the test for one
 * (ir.h's other limits build on it). */
#define CUDAG__MAX_NAME 255u
bool cudag__is_ident(const char *s, size_t n);

/* Monotonic clock in nanoseconds, for stage timings. */
uint64_t cudag__now_ns(void);

#endif /* CUDAG_UTIL_H */
