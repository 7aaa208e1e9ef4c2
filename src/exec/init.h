/* init.h — what instantiate.c takes from init.c: an exec's buffers
 * allocated and initialised. */
#ifndef CUDAG_EXEC_INIT_H
#define CUDAG_EXEC_INIT_H

#include "cudag.h"

/* Allocates every buffer of x's graph not bound to the caller's memory
 * (refused up front, with the sizes, when the device has too little free),
 * records the pointers in x->bufs (x->alloc: what the exec owns), and
 * queues their initial contents on x's stream.  The context is current. */
int cudag__alloc_buffers(cudag_exec *x, cudag_error *err);

#endif /* CUDAG_EXEC_INIT_H */
