/* text.h — a growable text buffer and the string helpers of messages: typo
 * suggestions, columns of UTF-8 text, identifiers. */
#ifndef CUDAG_TEXT_H
#define CUDAG_TEXT_H

#include "base/attrs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * (ir/graph.h's other limits build on it). */
#define CUDAG__MAX_NAME 255u
bool cudag__is_ident(const char *s, size_t n);

#endif /* CUDAG_TEXT_H */
