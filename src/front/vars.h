/* vars.h — the -D defines, a file's header and its `vars` (vars.c). */
#ifndef CUDAG_FRONT_VARS_H
#define CUDAG_FRONT_VARS_H


#include <stdbool.h>

typedef struct cudag__define cudag__define;
typedef struct cudag__lower cudag__lower;
typedef struct cudag__doc cudag__doc;
typedef struct cudag__file cudag__file;

/* Sets lw->defs to the defines defs (from the options, "<command line>")
 * then extra (from cudag_exec_set_var), each NAME=VALUE.  Reports and
 * returns the code of the first malformed one. */
int cudag__parse_defines(cudag__lower *lw, const char *const *defs,
                         const char *const *extra);

/* The define of `name` that wins (the last), or NULL. */
cudag__define *cudag__find_define(cudag__lower *lw, const char *name);

/* The used define behind expression v's value (that of the first variable
 * v names that a -D set), or NULL: where an error about v is reported. */
const cudag__define *cudag__define_behind(cudag__lower *lw,
                                          const cudag__doc *v);

/* Checks file f's top level (`cudag:`, the keys, `order`, `name`; top: f is
 * the top file).  Reports and returns the code of the first error that
 * stops lowering f. */
int cudag__lower_header(cudag__lower *lw, const cudag__file *f, bool top);

/* Lowers f's `vars` into lw->g, each overridden by its -D; a wrong one is
 * reported and marked bad. */
void cudag__lower_vars(cudag__lower *lw, const cudag__file *f);

/* Checks the bounds of every file's variables (`B: {value: 1, max: 16}`)
 * once all are lowered and overridden, so that a bound may name any
 * variable; each violation is reported at its bound, naming the -D or
 * cudag_exec_set_var value behind it.  A variable whose value follows from
 * one out of bounds is not checked (one mistake, one error). */
void cudag__lower_bounds(cudag__lower *lw);

#endif /* CUDAG_FRONT_VARS_H */
