/* accset.h — what a node may read and write: a list of byte ranges of
 * buffers (accset.c), filled by each kind's access step (kind.h) and used by
 * the analysis of src/check/access.c (the race check, `order: program`, plan). */
#ifndef CUDAG_ACCSET_H
#define CUDAG_ACCSET_H

#include "cudag.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct cudag__node cudag__node;

/* How a node uses a range of a buffer.  A bit set: READ | WRITE is RW.  The
 * same values as cudag_access of cudag.h, which cudag_set_param_access
 * stores as they are. */
enum {
    CUDAG__ACC_READ = 1,
    CUDAG__ACC_WRITE = 2,
    CUDAG__ACC_RW = 3
};

/* One range one node may touch.  `unknown`: nothing says where the node
 * stops (a kernel's pointer with no element count), so the range runs to
 * the buffer's end. */
typedef struct cudag__access {
    uint32_t buffer;
    uint8_t mode;               /* CUDAG__ACC_* */
    bool unknown;
    uint64_t lo, hi;            /* bytes [lo, hi) of the buffer */
    const cudag__node *who;     /* the node that touches it: the node itself,
                                   or a node of its bodies or child graph */
    cudag__pos pos;             /* where `who` names the buffer */
} cudag__access;

/* A growable list of accesses; `oom` once an append failed (the list is
 * then incomplete and must not be trusted).  Zero it to start; the owner
 * frees `a` with cudag__free. */
typedef struct cudag__accset {
    cudag__access *a;
    uint32_t n, cap;
    bool oom;
    /* Set by the analysis for a kind that holds sub-graphs: adds the sets
     * of every node of `sub` (recursively) to s, as the kind's access step
     * is asked to.  NULL outside the analysis. */
    void (*add_graph)(struct cudag__accset *s, const cudag_graph *sub);
    void *user;                 /* the analysis' own */
} cudag__accset;

/* Appends elements [off, off + count) of buffer `buffer` of g (elements of
 * its type) with `mode`, touched by node `who` at pos.  A buffer index out
 * of range or an empty range adds nothing; a range past the buffer's end is
 * cut at it (the kind's check reports it).  count UINT64_MAX: to the end. */
void cudag__access_add(cudag__accset *s, const cudag_graph *g,
                       uint32_t buffer, uint64_t off, uint64_t count,
                       unsigned mode, bool unknown, const cudag__node *who,
                       cudag__pos pos);

/* "read", "write" or "read-write". */
const char *cudag__access_mode_name(unsigned mode);

#endif /* CUDAG_ACCSET_H */
