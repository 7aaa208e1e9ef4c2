/* exec.h — what the exec's files (context, instantiate, replay) offer the
 * rest of the library: entering an exec's context, waiting for its replays,
 * the instantiate flags, the other replays.  The struct is gpu/exec.h's.
 * Private to the library and its tests. */
#ifndef CUDAG_EXEC_H
#define CUDAG_EXEC_H

#include "cudag.h"
#include "lib/driver.h"

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

#endif /* CUDAG_EXEC_H */
