/* expr.h — integer expressions: `+ - * / %`, parentheses, cdiv/min/max,
 * names of variables and repetition indices; 64-bit with overflow checks. */
#ifndef CUDAG_EXPR_H
#define CUDAG_EXPR_H

#include "ir.h"

/* A repetition index in scope, innermost first through `up`. */
typedef struct cudag__binding {
    const char *name;
    int64_t value;
    const struct cudag__binding *up;
} cudag__binding;

/* What an expression may refer to. */
typedef struct cudag__scope {
    const cudag_graph *g;               /* its variables */
    const cudag__binding *env;          /* repetition indices, or NULL */
    /* Variables whose declaration was reported as wrong: naming one fails
     * with CUDAG__EBAD and says nothing.  May be NULL. */
    const cudag__map *bad_vars;
} cudag__scope;

/*
 * Evaluates s[0..len).  `pos` is the position of s[0]; an error is reported
 * to d at the column of the offending token (exact on one line).  Returns
 * CUDAG_OK and sets *out, or the error's code (CUDAG__EBAD, unreported, for
 * a variable in sc->bad_vars).
 */
int cudag__expr_eval(const char *s, size_t len, cudag__pos pos,
                     const cudag__scope *sc, cudag__diag *d, int64_t *out);

#endif /* CUDAG_EXPR_H */
