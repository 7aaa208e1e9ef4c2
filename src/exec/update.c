/* update.c — an instantiated graph changed between replays without
 * instantiating it again: a kernel's argument, a buffer's pointer, a
 * variable (the graph lowered again, the exec updated in place) or a
 * condition's start.  Its own file: each goes through a kind's step or
 * cuGraphExecUpdate, and refuses what an update cannot carry. */
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "gpu/exec.h"
#include "gpu/gpu.h"
#include "kinds/kind.h"
#include "front/load.h"
#include "build/build.h"
#include "exec/exec.h"
#include "exec/instantiate.h"

#include <stdint.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

int cudag_exec_set_arg(cudag_exec *x, const char *node, unsigned index,
                       const cudag_arg *arg, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_set_arg", err);
    if (rc != CUDAG_OK)
        return rc;
    const cudag_graph *g = x->g;
    uint32_t n = CUDAG__NONE;
    const cudag_graph *in = node ? cudag__tree_find(g, node, &n) : NULL;
    if (!in) {
        rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                            "cudag_exec_set_arg: graph '%s' has no node '%s'",
                            g->name, node ? node : "(null)");
        goto out;
    }
    n += in->node_base;
    const cudag__node *nd = cudag__tree_node(g, n);
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (!k || !k->set_arg) {
        rc = cudag__fail_at(err, CUDAG_EINVAL, nd->pos,
                            "cudag_exec_set_arg: node '%s' is not a kernel "
                            "node",
                            nd->name);
        goto out;
    }
    rc = k->set_arg(x, n, index, arg, err);
    cudag__exec_drop_replays(x);
out:
    cudag__exec_leave(x);
    return rc;
}

/* Re-points node n (flat numbering) at the current buffer pointers after
 * buffer b moved. */
static int repoint_all(cudag_exec *x, uint32_t n, uint32_t b, cudag_error *err)
{
    const cudag__kind_ops *k = cudag__kind(cudag__tree_node(x->g, n)->kind);
    return k && k->repoint ? k->repoint(x, n, b, err) : CUDAG_OK;
}

int cudag_exec_rebind_buffer(cudag_exec *x, const char *buffer,
                             uint64_t devptr, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_rebind_buffer", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t b =
        cudag__need_buffer(x->g, buffer, "cudag_exec_rebind_buffer", &rc, err);
    if (rc == CUDAG_OK && devptr == 0)
        rc = cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                            "cudag_exec_rebind_buffer: buffer '%s': cannot "
                            "bind a null pointer",
                            buffer);
    if (rc != CUDAG_OK)
        goto out;
    CUdeviceptr old = x->bufs[b];
    x->bufs[b] = devptr;
    uint32_t n, total = cudag__tree_nnodes(x->g);
    for (n = 0; n < total; n++)
        if ((rc = repoint_all(x, n, b, err)) != CUDAG_OK)
            break;
    if (rc != CUDAG_OK) {
        /* Put back the nodes already moved, so every node agrees again. */
        x->bufs[b] = old;
        for (uint32_t m = 0; m <= n && m < total; m++)
            (void)repoint_all(x, m, b, NULL);
    }
    cudag__exec_drop_replays(x);
out:
    cudag__exec_leave(x);
    return rc;
}

static const char *update_result(CUgraphExecUpdateResult r)
{
    switch (r) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS:
        return "success";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
        return "the graph's topology changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
        return "a node's type changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
        return "a kernel node's function changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
        return "a node's parameters changed in a way an update cannot follow "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
        return "a node cannot be updated "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
        return "a kernel node's function changed in an unsupported way "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
        return "a node's attributes changed "
               "(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED)";
    default:
        return "the update failed (CU_GRAPH_EXEC_UPDATE_ERROR)";
    }
}

/* The new graph may differ from the current one only in what a graph
 * update can carry: the same buffers (sizes included: they are allocated)
 * and the same kernels (their code is loaded). */
static int same_resources(const cudag_exec *x, const cudag_graph *ng,
                          const char *setting, cudag_error *err)
{
    const cudag_graph *g = x->g;
    if (ng->nbuffers != g->nbuffers)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the number of buffers (%u → "
                              "%u); instantiate the graph again",
                              setting, g->nbuffers, ng->nbuffers);
    for (uint32_t b = 0; b < g->nbuffers; b++) {
        const cudag__buffer *o = &g->buffers[b], *n = &ng->buffers[b];
        if (strcmp(o->name, n->name) != 0 || o->type != n->type ||
            o->count != n->count)
            return cudag__fail_at(err, CUDAG_ENOTSUP,
                                  n->count_pos.line ? n->count_pos : n->pos,
                                  "setting %s changes buffer '%s' (%llu → "
                                  "%llu elements of %s), which is already "
                                  "allocated; instantiate the graph again",
                                  setting, o->name,
                                  (unsigned long long)o->count,
                                  (unsigned long long)n->count,
                                  cudag_type_name(n->type));
    }
    if (ng->nsigs != g->nsigs || ng->nmodules != g->nmodules)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the kernels or modules; "
                              "instantiate the graph again",
                              setting);
    for (uint32_t s = 0; s < g->nsigs; s++)
        if (strcmp(g->sigs[s].symbol, ng->sigs[s].symbol) != 0 ||
            g->sigs[s].module != ng->sigs[s].module)
            return cudag__fail_at(err, CUDAG_ENOTSUP, ng->sigs[s].pos,
                                  "setting %s changes kernel '%s'; "
                                  "instantiate the graph again",
                                  setting, ng->sigs[s].name);
    for (uint32_t m = 0; m < g->nmodules; m++)
        if (strcmp(g->modules[m].path, ng->modules[m].path) != 0)
            return cudag__fail_at(err, CUDAG_ENOTSUP, ng->modules[m].pos,
                                  "setting %s changes module '%s'; "
                                  "instantiate the graph again",
                                  setting, ng->modules[m].name);
    if (ng->nconds != g->nconds)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "setting %s changes the conditions; "
                              "instantiate the graph again",
                              setting);
    /* A kernel the old graph never launched has no code loaded. */
    for (uint32_t n = 0; n < cudag__tree_nnodes(ng); n++) {
        const cudag__node *nd = cudag__tree_node(ng, n);
        const cudag__kind_ops *k = cudag__kind(nd->kind);
        cudag__pos at;
        uint32_t s = k && k->code ? k->code(nd, &at) : CUDAG__NONE;
        if (s != CUDAG__NONE && !x->code.funcs[s])
            return cudag__fail_at(err, CUDAG_ENOTSUP, nd->pos,
                                  "setting %s makes node '%s' launch kernel "
                                  "'%s', which the instantiated graph does not "
                                  "use; instantiate the graph again",
                                  setting, nd->name, ng->sigs[s].name);
    }
    return CUDAG_OK;
}

/* Builds graph ng (x->g, or a graph lowered again from it) with the exec's
 * condition starts and updates the instantiated graph from it in place
 * (cuGraphExecUpdate).  On success *nl holds ng's launch descriptions for
 * the exec to keep; on error nothing is left and the exec is as it was. */
static int update_exec(cudag_exec *x, const cudag_graph *ng,
                       const char *setting, cudag__launches *nl,
                       unsigned *downgraded, cudag_error *err)
{
    cudag__built nb;
    int rc = cudag__exec_build(x, ng, nl, &nb, downgraded, err);
    if (rc != CUDAG_OK)
        return rc;
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CUresult r = x->gpu.drv->cuGraphExecUpdate(x->gexec, nb.graph, &info);
    if (r != CUDA_SUCCESS) {
        uint32_t n = cudag__built_find(&nb, info.errorNode);
        uint32_t f = cudag__built_find(&nb, info.errorFromNode);
        char where[600] = "";
        if (n != CUDAG__NONE && f != CUDAG__NONE)
            snprintf(where, sizeof where, " at the edge '%s' -> '%s'",
                     cudag__tree_node(ng, f)->name,
                     cudag__tree_node(ng, n)->name);
        else if (n != CUDAG__NONE)
            snprintf(where, sizeof where, " at node '%s'",
                     cudag__tree_node(ng, n)->name);
        rc = cudag__cu_fail(err, x->gpu.drv, r,
                            n != CUDAG__NONE ? cudag__tree_node(ng, n)->pos
                                             : CUDAG__NOPOS,
                            "cuGraphExecUpdate: setting %s cannot update "
                            "the instantiated graph: %s%s",
                            setting, update_result(info.result), where);
        cudag__launch_free(nl);
    }
    /* The exec runs ng's parameters now.  The CUgraph it was instantiated
     * from stays: its node handles still address the exec's nodes, which
     * the new graph's mirror one for one.  What the new graph's nodes use
     * (gemm workspaces) is what the exec's nodes use now: the old goes with
     * nb. */
    if (rc == CUDAG_OK) {
        cudag__keep *keep = x->built.keep;
        x->built.keep = nb.keep;
        nb.keep = keep;
    }
    cudag__built_free(&x->gpu, &nb);
    return rc;
}

/* Variable `name` set to the number written `value`: the graph lowered
 * again, and the instantiated graph updated in place (cudag_exec_set_var). */
static int set_var(cudag_exec *x, const char *fn, const char *name,
                   const char *value, cudag_error *err)
{
    int rc = cudag__exec_begin(x, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    char setting[300];
    snprintf(setting, sizeof setting, "%s=%s", name ? name : "(null)", value);
    cudag_graph *ng = NULL;
    cudag__launches nl;
    memset(&nl, 0, sizeof nl);
    unsigned downgraded = 0;
    rc = cudag__relower(x->g, name, value, &ng, err);
    if (rc == CUDAG_OK)
        rc = same_resources(x, ng, setting, err);
    if (rc == CUDAG_OK)
        rc = update_exec(x, ng, setting, &nl, &downgraded, err);
    if (rc == CUDAG_OK) {
        cudag__launch_free(&x->launch);
        x->launch = nl;
        cudag_graph_destroy(x->owned);
        x->owned = ng;
        x->g = ng;
        x->stats.downgraded_edges = downgraded;
        cudag__exec_drop_replays(x);
    } else {
        cudag_graph_destroy(ng);
    }
    cudag__exec_leave(x);
    return rc;
}

int cudag_exec_set_var(cudag_exec *x, const char *name, int64_t value,
                       cudag_error *err)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    return set_var(x, "cudag_exec_set_var", name, text, err);
}

int cudag_exec_set_var_float(cudag_exec *x, const char *name, double value,
                             cudag_error *err)
{
    if (!isfinite(value)) {
        cudag__error_clear(err);
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_exec_set_var_float: variable '%s' cannot "
                              "be %g",
                              name ? name : "(null)", value);
    }
    /* Written as a floating-point number ("2.0", not "2"), so that an
     * integer variable refuses it rather than take it. */
    char text[40];
    cudag__fmt_num(text, value);
    return set_var(x, "cudag_exec_set_var_float", name, text, err);
}

int cudag_exec_set_condition(cudag_exec *x, const char *name, int64_t value,
                             cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_set_condition", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t c = name ? cudag__find_cond(x->g, name) : CUDAG__NONE;
    char setting[300];
    snprintf(setting, sizeof setting, "condition %s=%lld",
             name ? name : "(null)", (long long)value);
    cudag__launches nl;
    memset(&nl, 0, sizeof nl);
    unsigned downgraded = 0;
    if (c == CUDAG__NONE) {
        rc = cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                            "cudag_exec_set_condition: graph '%s' has no "
                            "condition '%s'",
                            x->g->name, name ? name : "(null)");
    } else if (value < 0 || value > (int64_t)UINT32_MAX) {
        rc = cudag__fail_at(err, CUDAG_ERANGE, x->g->conds[c].pos,
                            "cudag_exec_set_condition: condition '%s': %lld "
                            "is out of range (0 to 4294967295)",
                            name, (long long)value);
    } else {
        int64_t old = x->starts[c];
        x->starts[c] = value;
        rc = update_exec(x, x->g, setting, &nl, &downgraded, err);
        if (rc == CUDAG_OK) {
            cudag__launch_free(&x->launch);
            x->launch = nl;
            /* The variant graphs were built with the old start. */
            cudag__exec_drop_replays(x);
        } else {
            x->starts[c] = old;
        }
    }
    cudag__exec_leave(x);
    return rc;
}
