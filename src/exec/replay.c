/* replay.c — the other ways to run an exec's work (cudag_replay), to compare
 * them with its own graph: the nodes launched one by one on the stream, with
 * or without programmatic stream serialization, and two more CUDA graphs of
 * the same nodes (every edge full; one chain in topological order).  timing.c
 * times them.  The exec owns what this file makes (exec.h) and drops it when
 * it changes. */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "kinds/kind.h"
#include "build/build.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

/* How each way runs: stream launches (with the PDL attribute or not), the
 * exec's own graph, or one of its variants built with `build`. */
typedef enum { BY_STREAM, BY_EXEC, BY_VARIANT } by;

static const struct way {
    const char *name;
    by by;
    bool pdl;
    int build;                  /* CUDAG__BUILD_*, for BY_VARIANT */
} ways[CUDAG_REPLAY_COUNT_] = {
    [CUDAG_REPLAY_STREAM] = {"stream launches", BY_STREAM, false, 0},
    [CUDAG_REPLAY_STREAM_PDL] = {"stream launches + PDL attribute", BY_STREAM,
                                 true, 0},
    [CUDAG_REPLAY_GRAPH_FULL] = {"graph, every edge full", BY_VARIANT, false,
                                 CUDAG__BUILD_ALL_FULL},
    [CUDAG_REPLAY_GRAPH] = {"graph as declared", BY_EXEC, false, 0},
    [CUDAG_REPLAY_GRAPH_SERIAL] = {"graph, branches serialized", BY_VARIANT,
                                   false, CUDAG__BUILD_SERIAL},
};

const char *cudag_replay_name(cudag_replay how)
{
    return (unsigned)how < CUDAG_REPLAY_COUNT_ ? ways[how].name : NULL;
}

static cudag__variant *variant(cudag_exec *x, cudag_replay how)
{
    return how == CUDAG_REPLAY_GRAPH_FULL ? &x->full : &x->serial;
}

/* The kind each edge of the tree was built with (flat numbering: the root's
 * edges first), and the root's nodes a programmatic or launch-order edge
 * ends at (stream launches run only a graph without bodies).  The exec
 * reported its downgrades when it was built; CUDAG_STRICT made them errors
 * then, so here they are only kinds. */
static int edge_kinds(cudag_exec *x, cudag_error *err)
{
    if (x->kinds)
        return CUDAG_OK;
    const cudag_graph *g = x->g;
    uint8_t *kinds = cudag__calloc(cudag__tree_nedges(g) + 1, 1);
    bool *pdl_in = cudag__calloc(g->nnodes + 1, sizeof *pdl_in);
    if (!kinds || !pdl_in) {
        cudag__free(kinds);
        cudag__free(pdl_in);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                              "out of memory preparing replays of graph '%s'",
                              g->name);
    }
    cudag__diag quiet;
    cudag__diag_init(&quiet, NULL, err);
    unsigned downgraded;
    cudag__edge_kinds(&x->gpu, g, &x->code, x->flags & ~CUDAG_STRICT, &quiet,
                      kinds, &downgraded);
    int rc = cudag__diag_finish(&quiet);
    if (rc != CUDAG_OK) {
        cudag__free(kinds);
        cudag__free(pdl_in);
        return rc;
    }
    for (uint32_t e = 0; e < g->nedges; e++)
        if (kinds[e] != CUDAG_EDGE_FULL)
            pdl_in[g->edges[e].to] = true;
    x->kinds = kinds;
    x->pdl_in = pdl_in;
    return CUDAG_OK;
}

/* Builds and instantiates variant v, uploading it on the exec's stream as
 * the timed replays will launch it. */
static int make_variant(cudag_exec *x, cudag_replay how, cudag_error *err)
{
    cudag__variant *v = variant(x, how);
    if (v->gexec)
        return CUDAG_OK;
    int rc = edge_kinds(x, err);
    if (rc == CUDAG_OK)
        rc = cudag__build(&x->gpu, x->g, &x->launch, x->bufs, x->kinds,
                          x->starts, ways[how].build, &v->built, err);
    if (rc != CUDAG_OK)
        return rc;
    const cudag__drv *d = x->gpu.drv;
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    ip.hUploadStream = x->gpu.stream;
    ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | cudag__instantiate_flags(x);
    CUresult r = d->cuGraphInstantiateWithParams(&v->gexec, v->built.graph, &ip);
    if (r == CUDA_SUCCESS && ip.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) {
        /* Not documented to happen; never keep a half-made graph. */
        (void)d->cuGraphExecDestroy(v->gexec);
        r = CUDA_ERROR_UNKNOWN;
    }
    if (r != CUDA_SUCCESS) {
        v->gexec = NULL;
        cudag__built_free(&x->gpu, &v->built);
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS,
                              "cuGraphInstantiateWithParams (%s, graph '%s')%s",
                              ways[how].name, x->g->name,
                              cudag__instantiate_hint(x));
    }
    return CUDAG_OK;
}

/* Refuses stream launches of a graph with a node whose kind runs only
 * inside a graph (no launch step). */
static int stream_launchable(const cudag_exec *x, cudag_error *err)
{
    const cudag_graph *g = x->g;
    for (uint32_t n = 0; n < g->nnodes; n++) {
        const cudag__kind_ops *k = cudag__kind(g->nodes[n].kind);
        if (!k->launch)
            return cudag__fail_at(err, CUDAG_ENOTSUP, g->nodes[n].pos,
                                  "node '%s' is %s, which runs only inside a "
                                  "graph: graph '%s' has no stream launches",
                                  g->nodes[n].name, k->what, g->name);
    }
    return CUDAG_OK;
}

/* Makes what `how` needs (the context is current). */
static int prepare(cudag_exec *x, cudag_replay how, cudag_error *err)
{
    if (ways[how].by == BY_VARIANT)
        return make_variant(x, how, err);
    if (ways[how].by != BY_STREAM)
        return CUDAG_OK;
    int rc = stream_launchable(x, err);
    if (rc == CUDAG_OK && ways[how].pdl)
        rc = edge_kinds(x, err);
    return rc;
}

int cudag__replay_once(cudag_exec *x, cudag_replay how, cudag_error *err)
{
    const struct way *w = &ways[how];
    const cudag_graph *g = x->g;
    if (w->by == BY_STREAM) {
        for (uint32_t i = 0; i < g->nnodes; i++) {
            uint32_t n = g->topo.order[i];
            const cudag__kind_ops *k = cudag__kind(g->nodes[n].kind);
            int rc = k->launch(x, n, w->pdl && x->pdl_in[n], err);
            if (rc != CUDAG_OK)
                return rc;
        }
        return CUDAG_OK;
    }
    CUgraphExec ge = w->by == BY_EXEC ? x->gexec : variant(x, how)->gexec;
    CUresult r = x->gpu.drv->cuGraphLaunch(ge, x->gpu.stream);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, CUDAG__NOPOS,
                              "cuGraphLaunch (%s, graph '%s')", w->name,
                              g->name);
    return CUDAG_OK;
}

int cudag__replay_begin(cudag_exec *x, cudag_replay how, const char *fn,
                 cudag_error *err)
{
    int rc = cudag__exec_begin(x, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    if ((unsigned)how >= CUDAG_REPLAY_COUNT_)
        rc = cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                            "%s: %d is not a cudag_replay", fn, (int)how);
    else
        rc = prepare(x, how, err);
    if (rc != CUDAG_OK)
        cudag__exec_leave(x);
    return rc;
}

int cudag_exec_prepare(cudag_exec *x, cudag_replay how, cudag_error *err)
{
    int rc = cudag__replay_begin(x, how, "cudag_exec_prepare", err);
    if (rc == CUDAG_OK)
        cudag__exec_leave(x);
    return rc;
}

int cudag_exec_release_replays(cudag_exec *x, cudag_error *err)
{
    int rc = cudag__exec_begin(x, "cudag_exec_release_replays", err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__exec_drop_replays(x);
    cudag__exec_leave(x);
    return CUDAG_OK;
}

int cudag_exec_replay(cudag_exec *x, cudag_replay how, unsigned times,
                      cudag_error *err)
{
    int rc = cudag__replay_begin(x, how, "cudag_exec_replay", err);
    if (rc != CUDAG_OK)
        return rc;
    for (unsigned i = 0; i < times && rc == CUDAG_OK; i++)
        rc = cudag__replay_once(x, how, err);
    cudag__exec_leave(x);
    return rc;
}

