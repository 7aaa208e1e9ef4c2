/* exec.h — what an instantiated graph (cudag_exec) holds.  Private to the
 * library and its tests, which read back the instantiated CUgraph. */
#ifndef CUDAG_EXEC_H
#define CUDAG_EXEC_H

#include "build.h"

#include <stdatomic.h>

/* One of the other CUDA graphs of an exec's nodes (replay.c): the CUgraph
 * built and its instantiation, both NULL until first asked for. */
typedef struct cudag__variant {
    cudag__built built;
    CUgraphExec gexec;
} cudag__variant;

struct cudag_exec {
    const cudag_graph *orig;    /* the caller's graph, borrowed */
    cudag_graph *owned;         /* made by cudag_exec_set_var; owned */
    const cudag_graph *g;       /* the current one: owned, else orig */
    cudag__gpu gpu;
    bool own_ctx;               /* retained the primary context */
    bool own_stream;
    unsigned flags;             /* cudag_exec_options.flags */
    unsigned timeout_ms;        /* cudag_exec_options.timeout_ms; 0: none */
    bool lost;                  /* a wait ran out (cudag__exec_wait): a
                                   replay still runs and cannot be stopped */
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
    /* For the other ways to replay (cudag_replay, replay.c): made on first
     * use, dropped by cudag__exec_drop_replays when the exec changes. */
    uint8_t *kinds;             /* per edge: its kind as built; or NULL */
    bool *pdl_in;               /* per node: a programmatic edge ends here */
    cudag__variant full, serial;    /* CUDAG_REPLAY_GRAPH_FULL, _SERIAL */
    CUevent timing[2];          /* cudag_exec_time's, made on first use */
    /* cudag_exec_time_gated's gate (timing.c): a host function on the
     * stream waits for `open`, or gives up after limit_ms and sets
     * gave_up.  The exec outlives every gate it queued: each timing opens
     * its gate and waits for the stream before it returns. */
    struct {
        atomic_int open, gave_up;
        int limit_ms;
    } gate;
};

/* Waits for event e, or for the exec's stream when e is NULL: with the
 * driver's synchronize call, or with a timeout (x->timeout_ms) by polling
 * its query call until the deadline.  The context is current.  Returns
 * CUDAG_OK; CUDAG_ECUDA with the driver's failure in *r and err untouched,
 * for the caller to report naming what it waited for; or CUDAG_ETIMEOUT
 * with err filled (the graph's while nodes named, the context said lost)
 * and the exec marked lost. */
int cudag__exec_wait(cudag_exec *x, CUevent e, CUresult *r, cudag_error *err);

/* Makes the exec's context current on this thread (push) / undoes it.
 * cudag__exec_enter fails with the driver's error. */
int cudag__exec_enter(const cudag_exec *x, cudag_error *err);
void cudag__exec_leave(const cudag_exec *x);

/* For public function fn: clears *err, refuses a NULL exec (CUDAG_EINVAL,
 * naming fn) and a lost one (CUDAG_ESTATE), and enters its context
 * (cudag__exec_leave undoes it). */
int cudag__exec_begin(const cudag_exec *x, const char *fn, cudag_error *err);

/* The flags every CUDA graph of x is instantiated with (device launch, as
 * x's flags ask), and what to add to an instantiate failure's message. */
cuuint64_t cudag__instantiate_flags(const cudag_exec *x);
const char *cudag__instantiate_hint(const cudag_exec *x);

/* With CUDAG_NVTX in flags, opens / closes an NVTX range named
 * "cudag GRAPH: STAGE"; otherwise (or built without NVTX) nothing. */
void cudag__nvtx_push(unsigned flags, const char *graph, const char *stage);
void cudag__nvtx_pop(unsigned flags);

/* Releases what the other ways to replay made (the next replay that needs
 * it makes it again, from the exec as it is then).  The exec's context is
 * current.  Called by every change to the exec, and by its destruction. */
void cudag__exec_drop_replays(cudag_exec *x);

/* Checks the arguments of public function fn, enters the exec's context and
 * prepares `how` (replay.c).  On success the caller leaves the context. */
int cudag__replay_begin(cudag_exec *x, cudag_replay how, const char *fn,
                        cudag_error *err);

/* One replay of `how`, prepared, the context current: the driver calls
 * alone. */
int cudag__replay_once(cudag_exec *x, cudag_replay how, cudag_error *err);

/* Fills n elements of buffer b's declared initial contents, starting at
 * element `first`, into host memory `out` (n × element size bytes).  Used
 * for CONST, IOTA and RANDOM; the same seed gives the same bytes on every
 * machine. */
void cudag__init_fill(const cudag__buffer *b, uint64_t first, uint64_t n,
                      void *out);

#endif /* CUDAG_EXEC_H */
