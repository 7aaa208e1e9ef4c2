/* lower.h — the YAML front end: files → document trees → IR.  Parsing is in
 * parse.c, expressions in expr.c, the top-level sections in lower.c and the
 * nodes and edges in nodes.c. */
#ifndef CUDAG_LOWER_H
#define CUDAG_LOWER_H

#include "ir.h"

/* Everything a graph loaded from YAML keeps of its sources, so it can be
 * lowered again with other variable values (cudag_exec_set_var). */
typedef struct cudag__source cudag__source;

/*
 * Loads a graph: reads `path` (or uses text/len when text is not NULL, with
 * `path` as its name), parses it and its includes, lowers to IR and, unless
 * opts has CUDAG_NO_CHECK, checks it.  Every diagnostic goes to d.  On error
 * *out is NULL and nothing is allocated.
 */
int cudag__load(const char *path, const char *text, size_t len,
                const cudag_options *opts, cudag_graph **out, cudag__diag *d);

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

#endif /* CUDAG_LOWER_H */
