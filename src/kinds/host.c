/* host.c — host-function nodes (C API only): the program's function
 * called at a point of every replay, after the nodes before it and before
 * the nodes after it (cuGraphAddHostNode).  One entry of the node-kind table
 * (kind.h). */
#include "cudag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/gpu.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stddef.h>
#include <stdint.h>

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    if (!n->u.cb.host)
        cudag__check_fail(c, CUDAG_EINVAL, n->pos,
                          "host node '%s' has no function", n->name);
}

/* ---- build ------------------------------------------------------------ */

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    CUDA_HOST_NODE_PARAMS p = {nd->u.cb.host, nd->u.cb.user};
    CUresult r = b->gpu->drv->cuGraphAddHostNode(out, graph, NULL, 0, &p);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, b->gpu->drv, r, nd->pos,
                              "cuGraphAddHostNode for node '%s'", nd->name);
    return CUDAG_OK;
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g, const cudag__node *n)
{
    (void)g, (void)n;
    cudag__sb_puts(b, "host function");
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_host(cudag_graph *g, const char *name, cudag_host_fn fn,
                   void *user, cudag_error *err)
{
    cudag__node *n;
    int rc = cudag__builder_callback(g, name, "cudag_add_host", fn != NULL,
                                     "fn", &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = CUDAG_NODE_HOST;
    n->u.cb.host = fn;
    n->u.cb.user = user;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

const cudag__kind_ops cudag__kind_host = {
    .kind = CUDAG_NODE_HOST,
    .name = "host",
    .what = "a host node",
    .plan_count = offsetof(cudag_plan_info, host_nodes),
    .check = check,
    .add = add,
    .dot_label = dot_label,
    .dot_shape = ", shape=octagon, style=filled, fillcolor=whitesmoke",
    .dot_legend = "host function",
};
