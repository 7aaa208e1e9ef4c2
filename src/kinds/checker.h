/* checker.h — one checking pass's context and its reports (checker.c),
 * shared by the whole-graph checks (check.c) and each node kind's check
 * step (kind.h). */
#ifndef CUDAG_CHECKER_H
#define CUDAG_CHECKER_H

#include "cudag.h"
#include "base/attrs.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stdint.h>

/* Who uses a condition: the conditional node that reads it, and the kernel
 * nodes that take it as an argument (and so may set it). */
typedef struct cudag__cond_user {
    const cudag_graph *g;       /* NULL: none (yet) */
    uint32_t node;
    cudag__pos pos;             /* where the node names the condition */
} cudag__cond_user;

/* A kernel node that takes a condition, and what its kind knows of the
 * value it sets: only_one when it provably sets it to 1 every time it runs
 * (the kernels library's cond_count_i32 with a k of k_pos beyond its i32
 * counter), which the conditional kind's whole-tree check reads. */
typedef struct cudag__cond_setter {
    uint32_t cond;
    cudag__cond_user at;
    bool only_one;
    int64_t k;
    cudag__pos k_pos;
} cudag__cond_setter;

/* One check pass: where problems go, and the first error code of this pass
 * (the diagnostic sink may already hold errors of an earlier stage). */
typedef struct cudag__checker cudag__checker;
struct cudag__checker {
    cudag_graph *g;             /* the graph being checked: the root, or a
                                   sub-graph during check_sub */
    cudag__diag *d;
    int first;
    bool broken;                /* an error, not a warning made one */
    bool oom;                   /* an allocation of the pass failed */
    bool commit;                /* store what is derived (the graph was not
                                   checked when the pass began) */
    uint32_t *uses;             /* per buffer: the nodes' references */
    /* The check's step for a sub-graph of c->g (kind.h, "Sub-graphs"): its
     * nodes, edges, cycles and topology, reported to the same sink. */
    void (*check_sub)(cudag__checker *c, cudag_graph *sub);
    cudag__cond_user *cond_node;    /* per condition: its conditional node */
    cudag__cond_setter *setters;    /* every cond argument of a kernel */
    uint32_t nsetters, csetters;
    /* 2 × (conditions + 1) zeroed words for the conditional kind's
     * check_tree step, allocated with the pass so that running out of
     * memory is reported before any other error. */
    uint32_t *cond_scratch;
};

/* Reports an error at pos and returns the sink's status (the code, or
 * CUDAG_OK where the sink only counts). */
int cudag__check_fail(cudag__checker *c, int code, cudag__pos pos,
                      const char *fmt, ...) CUDAG__PRINTF(4, 5);

/* Reports a warning (an error under CUDAG_WERROR, counted as one then). */
void cudag__check_warn(cudag__checker *c, int code, cudag__pos pos,
                       const char *fmt, ...) CUDAG__PRINTF(4, 5);

/* Records that node `node` of c->g is the conditional node reading
 * condition `cond` (named at pos); reports a condition read by two. */
void cudag__check_cond_node(cudag__checker *c, uint32_t node, uint32_t cond,
                            cudag__pos pos);

/* Records that kernel node `node` of c->g takes condition `cond` (at pos),
 * and whether it sets it only to 1 (cudag__cond_setter). */
void cudag__check_cond_setter(cudag__checker *c, uint32_t node,
                              uint32_t cond, cudag__pos pos, bool only_one,
                              int64_t k, cudag__pos k_pos);

/* True once the sink holds as many errors as it takes: stop looking. */
bool cudag__check_full(const cudag__checker *c);

/* The more precise of two positions: the first one that has a line. */
static inline cudag__pos cudag__pick(cudag__pos a, cudag__pos b)
{
    return a.line ? a : b;
}

#endif /* CUDAG_CHECKER_H */
