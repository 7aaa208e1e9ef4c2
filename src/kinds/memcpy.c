/* memcpy.c — memcpy nodes: `memcpy: BUF [+ OFF]` with `from: BUF
 * [+ OFF]` and an optional count, device to device within the graph's
 * buffers (same element size, no overlap), added with cuGraphAddMemcpyNode.
 * One entry of the node-kind table (kind.h). */
#include "cudag.h"
#include "base/diag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "gpu/exec.h"
#include "kinds/checker.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

/* ---- YAML ------------------------------------------------------------- */

static void read_yaml(cudag__lower *lw, const cudag__pending *p)
{
    cudag__node *n = &lw->g->nodes[p->node];
    const cudag__doc *b = p->body;
    cudag__memcpy *m = &n->u.cpy;
    const cudag__doc *from = cudag__doc_get(b, "from");
    if (!from) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "memcpy node '%s' needs 'from'",
                    n->name);
        return;
    }
    m->dst = m->src = CUDAG__NONE;
    if (!cudag__buffer_target(lw, cudag__doc_get(b, "memcpy"), p->env, "memcpy",
                              &m->dst, &m->dst_offset) ||
        !cudag__buffer_target(lw, from, p->env, "from", &m->src,
                              &m->src_offset))
        return;
    const cudag__buffer *src = &lw->g->buffers[m->src];
    uint64_t rest = m->src_offset < src->count ? src->count - m->src_offset : 0;
    cudag__lower_count(lw, p, cudag__doc_get(b, "count"), rest, &m->count);
}

/* ---- checks ----------------------------------------------------------- */

static void check(cudag__checker *c, const cudag__node *n)
{
    uint32_t *uses = c->uses;
    const cudag_graph *g = c->g;
    const cudag__memcpy *m = &n->u.cpy;
    if (m->dst >= g->nbuffers || m->src >= g->nbuffers) {
        cudag__check_fail(
            c, CUDAG_EUNKNOWN, n->pos,
            "node '%s' refers to buffer index %u, but the graph has %u "
            "buffers",
            n->name, m->dst >= g->nbuffers ? m->dst : m->src, g->nbuffers);
        return;
    }
    const cudag__buffer *d = &g->buffers[m->dst], *s = &g->buffers[m->src];
    uses[m->dst]++;
    uses[m->src]++;
    if (!cudag_type_name(d->type) || !cudag_type_name(s->type))
        return; /* reported with the buffer */
    size_t ds = cudag_type_size(d->type), ss = cudag_type_size(s->type);
    if (ds != ss)
        cudag__check_fail(
            c, CUDAG_ETYPE, n->pos,
            "node '%s': memcpy from '%s' (%s, %zu bytes) to '%s' (%s, %zu "
            "bytes): element sizes differ",
            n->name, s->name, cudag_type_name(s->type), ss, d->name,
            cudag_type_name(d->type), ds);
    if (m->count == 0) {
        cudag__check_fail(c, CUDAG_ERANGE, n->pos,
                          "node '%s': memcpy count is 0 (must be at least 1)",
                          n->name);
        return;
    }
    bool in = true;
    if (!cudag__range_ok(m->src_offset, m->count, s->count)) {
        cudag__check_fail(
            c, CUDAG_ERANGE, n->pos,
            "node '%s': memcpy of %llu element%s at offset %llu is outside "
            "source buffer '%s' (%llu element%s)",
            n->name, (unsigned long long)m->count, cudag__plural(m->count),
            (unsigned long long)m->src_offset, s->name,
            (unsigned long long)s->count, cudag__plural(s->count));
        in = false;
    }
    if (!cudag__range_ok(m->dst_offset, m->count, d->count)) {
        cudag__check_fail(
            c, CUDAG_ERANGE, n->pos,
            "node '%s': memcpy of %llu element%s at offset %llu is outside "
            "destination buffer '%s' (%llu element%s)",
            n->name, (unsigned long long)m->count, cudag__plural(m->count),
            (unsigned long long)m->dst_offset, d->name,
            (unsigned long long)d->count, cudag__plural(d->count));
        in = false;
    }
    /* Both ranges are inside the buffer here, so the sums cannot wrap. */
    if (in && m->dst == m->src && m->src_offset < m->dst_offset + m->count &&
        m->dst_offset < m->src_offset + m->count)
        cudag__check_fail(
            c, CUDAG_ERANGE, n->pos,
            "node '%s': memcpy source and destination overlap in buffer "
            "'%s' (%llu element%s from offset %llu to offset %llu)",
            n->name, d->name, (unsigned long long)m->count,
            cudag__plural(m->count), (unsigned long long)m->src_offset,
            (unsigned long long)m->dst_offset);
}

/* ---- build ------------------------------------------------------------ */

/* The driver parameters of a memcpy node for buffers at bufs[]. */
static void memcpy_params(const cudag_graph *g, const cudag__node *n,
                          const CUdeviceptr *bufs, CUDA_MEMCPY3D *p)
{
    const cudag__memcpy *c = &n->u.cpy;
    size_t es = cudag_type_size(g->buffers[c->src].type);
    size_t ed = cudag_type_size(g->buffers[c->dst].type);
    memset(p, 0, sizeof *p);
    p->srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p->srcDevice = bufs[c->src] + c->src_offset * es;
    p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p->dstDevice = bufs[c->dst] + c->dst_offset * ed;
    p->WidthInBytes = c->count * es;
    p->Height = 1;
    p->Depth = 1;
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    CUDA_MEMCPY3D p;
    memcpy_params(b->g, nd, b->bufs, &p);
    CUresult r = b->gpu->drv->cuGraphAddMemcpyNode(out, graph, NULL, 0, &p,
                                                   b->gpu->ctx);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, b->gpu->drv, r, nd->pos,
                              "cuGraphAddMemcpyNode for node '%s'", nd->name);
    return CUDAG_OK;
}

/* ---- the instantiated graph --------------------------------------------- */

static int repoint(cudag_exec *x, uint32_t n, uint32_t buf, cudag_error *err)
{
    const cudag__node *nd = cudag__tree_node(x->g, n);
    if (nd->u.cpy.src != buf && nd->u.cpy.dst != buf)
        return CUDAG_OK;
    CUDA_MEMCPY3D p;
    memcpy_params(x->g, nd, x->bufs, &p);
    CUresult r = x->gpu.drv->cuGraphExecMemcpyNodeSetParams(
        x->gexec, x->built.nodes[n], &p, x->gpu.ctx);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, nd->pos,
                              "cuGraphExecMemcpyNodeSetParams: node '%s'",
                              nd->name);
    return CUDAG_OK;
}

static int launch(const cudag_exec *x, uint32_t n, bool pdl, cudag_error *err)
{
    (void)pdl;
    const cudag__memcpy *m = &x->g->nodes[n].u.cpy;
    size_t es = cudag_type_size(x->g->buffers[m->src].type);
    CUresult r = x->gpu.drv->cuMemcpyDtoDAsync(
        x->bufs[m->dst] + m->dst_offset * es,
        x->bufs[m->src] + m->src_offset * es, m->count * es, x->gpu.stream);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, x->g->nodes[n].pos,
                              "cuMemcpyDtoDAsync: launching node '%s'",
                              x->g->nodes[n].name);
    return CUDAG_OK;
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g,
                      const cudag__node *n)
{
    const cudag__memcpy *m = &n->u.cpy;
    cudag__sb_puts(b, "memcpy ");
    cudag__sb_dot_escape(b, g->buffers[m->src].name);
    cudag__sb_printf(b, "[%llu..%llu) -> ", (unsigned long long)m->src_offset,
                     (unsigned long long)(m->src_offset + m->count));
    cudag__sb_dot_escape(b, g->buffers[m->dst].name);
    cudag__sb_printf(b, "[%llu..%llu)", (unsigned long long)m->dst_offset,
                     (unsigned long long)(m->dst_offset + m->count));
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_memcpy(cudag_graph *g, const char *name, const char *dst,
                     uint64_t dst_offset, const char *src, uint64_t src_offset,
                     uint64_t count, cudag_error *err)
{
    int rc = cudag__builder_start(g, &name, "cudag_add_memcpy", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t d = cudag__builder_buffer(g, name, dst, &rc, err);
    uint32_t s =
        rc == CUDAG_OK ? cudag__builder_buffer(g, name, src, &rc, err) : 0;
    if (rc != CUDAG_OK)
        return rc;
    cudag__node *n;
    rc = cudag__add_node(g, name, CUDAG__NOPOS, &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = CUDAG_NODE_MEMCPY;
    n->u.cpy.dst = d;
    n->u.cpy.src = s;
    n->u.cpy.dst_offset = dst_offset;
    n->u.cpy.src_offset = src_offset;
    n->u.cpy.count = count;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

static const char *const keys[] = {"memcpy", "from", "count", "after"};

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* Exactly the elements it reads and writes. */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    const cudag__memcpy *m = &n->u.cpy;
    cudag__access_add(s, g, m->src, m->src_offset, m->count, CUDAG__ACC_READ,
                      false, n, n->pos);
    cudag__access_add(s, g, m->dst, m->dst_offset, m->count, CUDAG__ACC_WRITE,
                      false, n, n->pos);
}

const cudag__kind_ops cudag__kind_memcpy = {
    .kind = CUDAG_NODE_MEMCPY,
    .name = "memcpy",
    .what = "a memcpy node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .pdl_end = false,
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, memcpy_nodes),
    .read_yaml = read_yaml,
    .check = check,
    .access = access,
    .add = add,
    .repoint = repoint,
    .launch = launch,
    .dot_label = dot_label,
    .dot_shape = ", shape=cds, style=filled, fillcolor=lightcyan",
    .dot_legend = "memcpy",
};
