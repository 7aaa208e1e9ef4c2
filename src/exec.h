/* exec.h — what an instantiated graph (cudag_exec) holds.  Private to the
 * library, its tests and the cudag tool, which time replays with events in
 * the exec's context and read back the instantiated CUgraph. */
#ifndef CUDAG_EXEC_H
#define CUDAG_EXEC_H

#include "build.h"

struct cudag_exec {
    const cudag_graph *orig;    /* the caller's graph, borrowed */
    cudag_graph *owned;         /* made by cudag_exec_set_var; owned */
    const cudag_graph *g;       /* the current one: owned, else orig */
    cudag__gpu gpu;
    bool own_ctx;               /* retained the primary context */
    bool own_stream;
    unsigned flags;             /* cudag_exec_options.flags */
    cudag_diag_fn diag;
    void *diag_user;
    uint32_t nbuffers;
    CUdeviceptr *bufs;          /* per buffer: where nodes point now */
    CUdeviceptr *alloc;         /* per buffer: what the exec allocated, or 0 */
    cudag__code code;
    int64_t *starts;            /* per condition: its default value
                                   (CUDAG_COND_NO_DEFAULT: none) */
    cudag__launches launch;     /* matches the current graph */
    cudag__built built;         /* the CUgraph instantiated; its node
                                 * handles address the exec's nodes */
    CUgraphExec gexec;
    cudag_exec_stats stats;
};

/* Makes the exec's context current on this thread (push) / undoes it.
 * cudag__exec_enter fails with the driver's error. */
int cudag__exec_enter(const cudag_exec *x, cudag_error *err);
void cudag__exec_leave(const cudag_exec *x);

/* Fills n elements of buffer b's declared initial contents, starting at
 * element `first`, into host memory `out` (n × element size bytes).  Used
 * for CONST, IOTA and RANDOM; the same seed gives the same bytes on every
 * machine. */
void cudag__init_fill(const cudag__buffer *b, uint64_t first, uint64_t n,
                      void *out);

#endif /* CUDAG_EXEC_H */
