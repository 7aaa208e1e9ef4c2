/* checker.h — one checking pass's context and its reports (checker.c),
 * shared by the whole-graph checks (check.c) and each node kind's check
 * step (kind.h). */
#ifndef CUDAG_CHECKER_H
#define CUDAG_CHECKER_H

#include "values.h"

/* One check pass: where problems go, and the first error code of this pass
 * (the diagnostic sink may already hold errors of an earlier stage). */
typedef struct cudag__checker {
    cudag_graph *g;
    cudag__diag *d;
    int first;
    bool broken;                /* an error, not a warning made one */
    uint32_t *uses;             /* per buffer: the nodes' references */
} cudag__checker;

/* Reports an error at pos and returns the sink's status (the code, or
 * CUDAG_OK where the sink only counts). */
int cudag__check_fail(cudag__checker *c, int code, cudag__pos pos,
                      const char *fmt, ...) CUDAG__PRINTF(4, 5);

/* Reports a warning (an error under CUDAG_WERROR, counted as one then). */
void cudag__check_warn(cudag__checker *c, int code, cudag__pos pos,
                       const char *fmt, ...) CUDAG__PRINTF(4, 5);

/* True once the sink holds as many errors as it takes: stop looking. */
bool cudag__check_full(const cudag__checker *c);

/* The more precise of two positions: the first one that has a line. */
static inline cudag__pos cudag__pick(cudag__pos a, cudag__pos b)
{
    return a.line ? a : b;
}

#endif /* CUDAG_CHECKER_H */
