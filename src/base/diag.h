/* diag.h — positions in a source file, error values, and the diagnostic sink
 * that passes finding many problems report into: how every stage says what
 * went wrong, and where. */
#ifndef CUDAG_DIAG_H
#define CUDAG_DIAG_H

#include "cudag.h"
#include "base/attrs.h"

#include <stddef.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

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

#endif /* CUDAG_DIAG_H */
