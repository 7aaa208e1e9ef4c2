/* order.h — the edges `order: program` infers from what nodes read and
 * write (order.c); called by the check (check.c) before it orders a graph. */
#ifndef CUDAG_ORDER_H
#define CUDAG_ORDER_H

#include "cudag.h"

#include <stdbool.h>

typedef struct cudag__checker cudag__checker;

/*
 * Replaces the inferred edges of graph g (one graph of a tree, not its
 * sub-graphs) with those its nodes' access sets need when they run as if in
 * written order (node index order): read after write, write after read,
 * write after write, and from a kernel that sets a condition to the later
 * conditional node of g that reads it (c's setters and readers, as the
 * kinds' checks recorded them), minus those a path already implies; an edge the file
 * writes is kept and not inferred again.  Needs nodes that passed their
 * kinds' checks.  False on OOM (g keeps its written edges and may have lost
 * inferred ones); CUDAG__MAX_EDGES stops adding (the check then reports the
 * race).
 */
bool cudag__infer_order(cudag_graph *g, const cudag__checker *c);

/* "read after write", "write after read", "write after write". */
const char *cudag__hazard_name(unsigned hazard);

#endif /* CUDAG_ORDER_H */
