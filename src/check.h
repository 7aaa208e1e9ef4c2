/* check.h — what the stages after the checker share: a growable text buffer
 * for the DOT and plan writers (dot.c), and the name of a node kind. */
#ifndef CUDAG_CHECK_H
#define CUDAG_CHECK_H

#include "ir.h"

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

/* "kernel", "memset" or "memcpy". */
const char *cudag__node_kind_name(cudag_node_kind k);

#endif /* CUDAG_CHECK_H */
