/* exec.h (gpu/) — what an instantiated graph (cudag_exec) holds.  Its own
 * file, below the kinds, because the kinds' steps read and change an exec
 * (its buffers, launches, built graph) while exec/, which makes it, calls
 * the kinds: the struct here, the functions in exec/exec.h.  Private to the
 * library and its tests, which read back the instantiated CUgraph. */
#ifndef CUDAG_GPU_EXEC_H
#define CUDAG_GPU_EXEC_H

#include "lib/driver.h"
#include "gpu/gpu.h"

#include <stdbool.h>
#include <stdint.h>
#include "cudag.h"

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

#endif /* CUDAG_GPU_EXEC_H */
