/* memset.c — memset nodes: `memset: BUF [+ OFF]` with a value and an
 * optional count, checked against the buffer's element type (CUDA sets 1-,
 * 2- or 4-byte words), added with cuGraphAddMemsetNode.  One entry of the
 * node-kind table (kind.h). */
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
    cudag__memset *m = &n->u.set;
    m->buffer = CUDAG__NONE;
    if (!cudag__buffer_target(lw, cudag__doc_get(b, "memset"), p->env, "memset",
                              &m->buffer, &m->offset))
        return;
    const cudag__buffer *buf = &lw->g->buffers[m->buffer];
    uint64_t rest = m->offset < buf->count ? buf->count - m->offset : 0;
    cudag__lower_count(lw, p, cudag__doc_get(b, "count"), rest, &m->count);
    const cudag__doc *value = cudag__doc_get(b, "value");
    if (!value) {
        cudag__lerr(lw, CUDAG_EKEY, n->pos, "memset node '%s' needs 'value'",
                    n->name);
        return;
    }
    m->value_pos = value->pos;
    int64_t iv;
    /* A floating-point buffer's value is computed in floating point. */
    if (cudag__is_float_type(buf->type)) {
        cudag__eval_float(lw, value, p->env, &m->value);
        return;
    }
    if (value->type == CUDAG__DOC_SCALAR &&
        cudag__parse_float(value->str, value->len, &m->value))
        return;
    if (cudag__eval(lw, value, p->env, &iv) == CUDAG_OK)
        m->value = (double)iv;
}

/* ---- checks ----------------------------------------------------------- */

/* The 64-bit pattern a memset of value v writes into an 8-byte element
 * (v already known to fit the type). */
static uint64_t pattern8(cudag_type t, double v)
{
    if (t == CUDAG_TYPE_F64) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        return bits;
    }
    if (t == CUDAG_TYPE_U64)
        return (uint64_t)v;
    return (uint64_t)(int64_t)v;
}

static void check(cudag__checker *c, const cudag__node *n)
{
    uint32_t *uses = c->uses;
    const cudag_graph *g = c->g;
    const cudag__memset *m = &n->u.set;
    char num[40];
    if (m->buffer >= g->nbuffers) {
        cudag__check_fail(
            c, CUDAG_EUNKNOWN, n->pos,
            "node '%s' refers to buffer index %u, but the graph has %u "
            "buffers",
            n->name, m->buffer, g->nbuffers);
        return;
    }
    const cudag__buffer *b = &g->buffers[m->buffer];
    const char *tn = cudag_type_name(b->type);
    uses[m->buffer]++;
    if (!tn || b->type == CUDAG_TYPE_PTR)
        return; /* reported with the buffer */
    if (m->count == 0)
        cudag__check_fail(c, CUDAG_ERANGE, n->pos,
                          "node '%s': memset count is 0 (must be at least 1)",
                          n->name);
    else if (!cudag__range_ok(m->offset, m->count, b->count))
        cudag__check_fail(
            c, CUDAG_ERANGE, n->pos,
            "node '%s': memset of %llu element%s at offset %llu is outside "
            "buffer '%s' (%llu element%s)",
            n->name, (unsigned long long)m->count, cudag__plural(m->count),
            (unsigned long long)m->offset, b->name,
            (unsigned long long)b->count, cudag__plural(b->count));
    cudag__pos vpos = cudag__pick(m->value_pos, n->pos);
    switch (cudag__value_fits(b->type, m->value, true)) {
    case CUDAG__FIT_NOT_INTEGER:
        cudag__check_fail(
            c, CUDAG_ERANGE, vpos,
            "node '%s': memset value %s is not an integer (buffer '%s' is "
            "%s)",
            n->name, cudag__fmt_num(num, m->value), b->name, tn);
        return;
    case CUDAG__FIT_RANGE:
        cudag__check_fail(
            c, CUDAG_ERANGE, vpos,
            "node '%s': memset value %s is out of range for %s (buffer '%s')",
            n->name, cudag__fmt_num(num, m->value), tn, b->name);
        return;
    case CUDAG__FIT_NOT_FINITE:
        cudag__check_fail(
            c, CUDAG_ERANGE, vpos,
            "node '%s': memset value %s is not finite (buffer '%s' is %s)",
            n->name, cudag__fmt_num(num, m->value), b->name, tn);
        return;
    case CUDAG__FIT_OK:
        break;
    }
    /* CUDA memset nodes write 1-, 2- or 4-byte elements: an 8-byte element
     * can only be set to a value whose two 32-bit halves are the same. */
    if (cudag_type_size(b->type) == 8) {
        uint64_t bits = pattern8(b->type, m->value);
        if ((uint32_t)(bits >> 32) != (uint32_t)bits)
            cudag__check_fail(
                c, CUDAG_ERANGE, vpos,
                "node '%s': memset value %s cannot be written into 8-byte "
                "elements (buffer '%s' is %s): CUDA memsets write 4-byte "
                "words, so the value's two 32-bit halves must be equal",
                n->name, cudag__fmt_num(num, m->value), b->name, tn);
    }
}


/* ---- build ------------------------------------------------------------ */

/* The driver parameters of a memset node for buffers at bufs[]. */
static void memset_params(const cudag_graph *g, const cudag__node *n,
                          const CUdeviceptr *bufs, CUDA_MEMSET_NODE_PARAMS *p)
{
    const cudag__memset *s = &n->u.set;
    const cudag__buffer *b = &g->buffers[s->buffer];
    size_t es = cudag_type_size(b->type);
    uint64_t bits = cudag__value_bits(b->type, s->value);
    memset(p, 0, sizeof *p);
    p->dst = bufs[s->buffer] + s->offset * es;
    p->height = 1;
    if (es == 8) {
        /* The driver sets at most 4-byte elements; the checker made sure
         * both halves of an 8-byte value are the same. */
        p->elementSize = 4;
        p->width = s->count * 2;
        p->value = (unsigned)(bits & 0xffffffffu);
    } else {
        p->elementSize = (unsigned)es;
        p->width = s->count;
        p->value = (unsigned)bits;
    }
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    CUDA_MEMSET_NODE_PARAMS p;
    memset_params(b->g, nd, b->bufs, &p);
    CUresult r = b->gpu->drv->cuGraphAddMemsetNode(out, graph, NULL, 0, &p,
                                                   b->gpu->ctx);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, b->gpu->drv, r, nd->pos,
                              "cuGraphAddMemsetNode for node '%s'", nd->name);
    return CUDAG_OK;
}

/* ---- the instantiated graph --------------------------------------------- */

static int repoint(cudag_exec *x, uint32_t n, uint32_t buf, cudag_error *err)
{
    const cudag__node *nd = cudag__tree_node(x->g, n);
    if (nd->u.set.buffer != buf)
        return CUDAG_OK;
    CUDA_MEMSET_NODE_PARAMS p;
    memset_params(x->g, nd, x->bufs, &p);
    CUresult r = x->gpu.drv->cuGraphExecMemsetNodeSetParams(
        x->gexec, x->built.nodes[n], &p, x->gpu.ctx);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, nd->pos,
                              "cuGraphExecMemsetNodeSetParams: node '%s'",
                              nd->name);
    return CUDAG_OK;
}

static int launch(const cudag_exec *x, uint32_t n, bool pdl, cudag_error *err)
{
    (void)pdl;
    const cudag__drv *d = x->gpu.drv;
    CUstream s = x->gpu.stream;
    CUDA_MEMSET_NODE_PARAMS p;
    memset_params(x->g, &x->g->nodes[n], x->bufs, &p);
    CUresult r;
    const char *call;
    if (p.elementSize == 1) {
        call = "cuMemsetD8Async";
        r = d->cuMemsetD8Async(p.dst, (unsigned char)p.value, p.width, s);
    } else if (p.elementSize == 2) {
        call = "cuMemsetD16Async";
        r = d->cuMemsetD16Async(p.dst, (unsigned short)p.value, p.width, s);
    } else {
        call = "cuMemsetD32Async";
        r = d->cuMemsetD32Async(p.dst, p.value, p.width, s);
    }
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, x->g->nodes[n].pos,
                              "%s: launching node '%s'", call,
                              x->g->nodes[n].name);
    return CUDAG_OK;
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_label(cudag__sb *b, const cudag_graph *g,
                      const cudag__node *n)
{
    const cudag__memset *m = &n->u.set;
    cudag__sb_puts(b, "memset ");
    cudag__sb_dot_escape(b, g->buffers[m->buffer].name);
    cudag__sb_printf(b, "[%llu..%llu) = %g", (unsigned long long)m->offset,
                     (unsigned long long)(m->offset + m->count), m->value);
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_memset(cudag_graph *g, const char *name, const char *buffer,
                     uint64_t offset, uint64_t count, double value,
                     cudag_error *err)
{
    int rc = cudag__builder_start(g, &name, "cudag_add_memset", err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t b = cudag__builder_buffer(g, name, buffer, &rc, err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__node *n;
    rc = cudag__add_node(g, name, CUDAG__NOPOS, &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = CUDAG_NODE_MEMSET;
    n->u.set.buffer = b;
    n->u.set.offset = offset;
    n->u.set.count = count;
    n->u.set.value = value;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

static const char *const keys[] = {"memset", "value", "count", "after"};

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* Exactly the elements it sets. */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    const cudag__memset *m = &n->u.set;
    cudag__access_add(s, g, m->buffer, m->offset, m->count, CUDAG__ACC_WRITE,
                      false, n, n->pos);
}

const cudag__kind_ops cudag__kind_memset = {
    .kind = CUDAG_NODE_MEMSET,
    .name = "memset",
    .what = "a memset node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .pdl_end = false,
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, memset_nodes),
    .read_yaml = read_yaml,
    .check = check,
    .access = access,
    .add = add,
    .repoint = repoint,
    .launch = launch,
    .dot_label = dot_label,
    .dot_shape = ", shape=parallelogram, style=filled, fillcolor=lightyellow",
    .dot_legend = "memset",
};
