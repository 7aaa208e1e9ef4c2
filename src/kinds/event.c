/* event.c — event-record and event-wait nodes (C API only): the
 * program's CUevent recorded at a point of every replay, or waited for
 * before one, so that a cudag graph can signal, or wait for, the program's
 * other streams.  Two entries of the node-kind table (kind.h), one life
 * cycle. */
#include "cudag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/gpu.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    if (!n->u.cb.event)
        cudag__check_fail(c, CUDAG_EINVAL, n->pos, "%s node '%s' has no event",
                          n->kind == CUDAG_NODE_EVENT_RECORD ? "event_record"
                                                             : "event_wait",
                          n->name);
}

/* ---- build ------------------------------------------------------------ */

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    const cudag__drv *d = b->gpu->drv;
    bool rec = nd->kind == CUDAG_NODE_EVENT_RECORD;
    CUevent ev = (CUevent)nd->u.cb.event;
    CUresult r = rec ? d->cuGraphAddEventRecordNode(out, graph, NULL, 0, ev)
                     : d->cuGraphAddEventWaitNode(out, graph, NULL, 0, ev);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos, "%s for node '%s'",
                              rec ? "cuGraphAddEventRecordNode"
                                  : "cuGraphAddEventWaitNode",
                              nd->name);
    return CUDAG_OK;
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g, const cudag__node *n)
{
    (void)g;
    cudag__sb_puts(b, n->kind == CUDAG_NODE_EVENT_RECORD ? "record event"
                                                         : "wait for event");
}

/* ---- the builder API ------------------------------------------------ */

static int add_event(cudag_graph *g, const char *name, const char *fn,
                     cudag_node_kind kind, void *event, cudag_error *err)
{
    cudag__node *n;
    int rc = cudag__builder_callback(g, name, fn, event != NULL, "event", &n,
                                     err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = kind;
    n->u.cb.event = event;
    return CUDAG_OK;
}

int cudag_add_event_record(cudag_graph *g, const char *name, void *event,
                           cudag_error *err)
{
    return add_event(g, name, "cudag_add_event_record",
                     CUDAG_NODE_EVENT_RECORD, event, err);
}

int cudag_add_event_wait(cudag_graph *g, const char *name, void *event,
                         cudag_error *err)
{
    return add_event(g, name, "cudag_add_event_wait", CUDAG_NODE_EVENT_WAIT,
                     event, err);
}

/* ---- the table entries ---------------------------------------------- */

const cudag__kind_ops cudag__kind_event_record = {
    .kind = CUDAG_NODE_EVENT_RECORD,
    .name = "event_record",
    .what = "an event_record node",
    .plan_count = offsetof(cudag_plan_info, event_record_nodes),
    .check = check,
    .add = add,
    .dot_label = dot_label,
    .dot_shape = ", shape=invhouse, style=filled, fillcolor=mistyrose",
    .dot_legend = "record event",
};

const cudag__kind_ops cudag__kind_event_wait = {
    .kind = CUDAG_NODE_EVENT_WAIT,
    .name = "event_wait",
    .what = "an event_wait node",
    .plan_count = offsetof(cudag_plan_info, event_wait_nodes),
    .check = check,
    .add = add,
    .dot_label = dot_label,
    .dot_shape = ", shape=house, style=filled, fillcolor=mistyrose",
    .dot_legend = "wait for event",
};
