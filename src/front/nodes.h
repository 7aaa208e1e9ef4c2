/* nodes.h — the `nodes` and `edges` sections (nodes.c). */
#ifndef CUDAG_FRONT_NODES_H
#define CUDAG_FRONT_NODES_H


typedef struct cudag__lower cudag__lower;

/* The second half of lowering: the `nodes` and `edges` sections of every
 * file. */
int cudag__lower_nodes(cudag__lower *lw);

#endif /* CUDAG_FRONT_NODES_H */
