/* load.h — the YAML front end's entry below the public load functions:
 * lowering a loaded graph again with a variable changed (load.c). */
#ifndef CUDAG_FRONT_LOAD_H
#define CUDAG_FRONT_LOAD_H

#include "cudag.h"

/*
 * Lowers g's sources again with variable `name` set to `value`, the text of
 * a number ("42", "1e-05"; a floating-point variable takes an integer, an
 * integer one refuses a floating-point number), on top of the defines g was
 * loaded with and the values given to g by earlier relowers, and checks the
 * result.  The new graph borrows g's source: g (or the graph
 * g borrowed from) must outlive it.  CUDAG_ENOTSUP for a graph built through
 * the C API.  On error *out is NULL.
 */
int cudag__relower(const cudag_graph *g, const char *name, const char *value,
                   cudag_graph **out, cudag_error *err);

#endif /* CUDAG_FRONT_LOAD_H */
