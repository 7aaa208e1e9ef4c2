/* capture.c — capture nodes (C API only): the program's callback
 * records its own work (launches, library calls, copies) on a stream being
 * captured, at instantiate, and what it recorded becomes one child-graph
 * node that joins the graph's edges.  One entry of the node-kind table
 * (kind.h). */
#include "cudag.h"
#include "base/diag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/stream_capture.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    if (!n->u.cb.capture)
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "capture node '%s' has no callback", n->name);
}

/* ---- build ------------------------------------------------------------ */

/* The capture's work: the program's callback. */
static int record(void *user, CUstream s, cudag_error *err)
{
    const cudag__callback *cb = user;
    int r = cb->capture(cb->user, s);
    if (r != 0)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "the capture callback returned %d", r);
    return CUDAG_OK;
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    return cudag__capture_node(b->gpu, nd, record,
                               (void *)(uintptr_t)&nd->u.cb, graph, out, err);
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g, const cudag__node *n)
{
    (void)g, (void)n;
    cudag__sb_puts(b, "captured work");
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_capture(cudag_graph *g, const char *name, cudag_capture_fn fn,
                      void *user, cudag_error *err)
{
    cudag__node *n;
    int rc = cudag__builder_callback(g, name, "cudag_add_capture", fn != NULL,
                                     "fn", &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = CUDAG_NODE_CAPTURE;
    n->u.cb.capture = fn;
    n->u.cb.user = user;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

const cudag__kind_ops cudag__kind_capture = {
    .kind = CUDAG_NODE_CAPTURE,
    .name = "capture",
    .what = "a capture node",
    .pdl_end = false,
    .pdl_full = "its work runs in a child graph, which has no programmatic "
                "port",
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, capture_nodes),
    .check = check,
    .add = add,
    .dot_label = dot_label,
    .dot_shape = ", shape=component, style=filled, fillcolor=lavender",
    .dot_legend = "captured work",
};
