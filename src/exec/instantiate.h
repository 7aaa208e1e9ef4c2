/* instantiate.h — what update.c takes from instantiate.c: a graph built the
 * way the exec builds it, to update the instantiated one from. */
#ifndef CUDAG_EXEC_INSTANTIATE_H
#define CUDAG_EXEC_INSTANTIATE_H

#include "cudag.h"

typedef struct cudag__built cudag__built;
typedef struct cudag__launches cudag__launches;

/* Builds the CUgraph of graph g (the exec's, or one lowered again from it)
 * into *b with x's buffers and condition starts: launch descriptions in *l,
 * edge kinds decided and reported to x's diagnostic callback (*downgraded:
 * the edges built full).  On error nothing is left. */
int cudag__exec_build(cudag_exec *x, const cudag_graph *g, cudag__launches *l,
                      cudag__built *b, unsigned *downgraded, cudag_error *err);

#endif /* CUDAG_EXEC_INSTANTIATE_H */
