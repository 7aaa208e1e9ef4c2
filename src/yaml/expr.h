/* expr.h — expressions: `+ - * / %`, parentheses, cdiv/min/max, names of
 * variables and repetition indices; in 64-bit integers with overflow checks,
 * or in double precision where a floating-point value is wanted. */
#ifndef CUDAG_EXPR_H
#define CUDAG_EXPR_H

#include "cudag.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__map cudag__map;

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

/* How an expression is evaluated: every value an integer (sizes, indices,
 * counts, integer arguments: a floating-point number or variable is an
 * error); every value a double from the start (an argument for a
 * floating-point parameter: E/10 with E = 5 is 0.5); or integers that turn
 * floating point where a floating-point number or variable joins them (a
 * variable's value). */
typedef enum cudag__expr_mode {
    CUDAG__EXPR_INT,
    CUDAG__EXPR_FLOAT,
    CUDAG__EXPR_ANY
} cudag__expr_mode;

/* A value: an integer, or (fl) a double. */
typedef struct cudag__num {
    int64_t i;
    double f;
    bool fl;
} cudag__num;

/* Evaluates s[0..len) in `mode` (cudag__expr_eval is this one in integers).
 * Floating-point results are finite; division by zero is an error in both
 * arithmetics. */
int cudag__expr_eval_num(const char *s, size_t len, cudag__pos pos,
                         const cudag__scope *sc, cudag__expr_mode mode,
                         cudag__diag *d, cudag__num *out);

/*
 * Evaluates s[0..len) in integers (CUDAG__EXPR_INT).  `pos` is the position of s[0]; an error is reported
 * to d at the column of the offending token (exact on one line).  Returns
 * CUDAG_OK and sets *out, or the error's code (CUDAG__EBAD, unreported, for
 * a variable in sc->bad_vars).
 */
int cudag__expr_eval(const char *s, size_t len, cudag__pos pos,
                     const cudag__scope *sc, cudag__diag *d, int64_t *out);

#endif /* CUDAG_EXPR_H */
