/* kernel.c — kernel nodes (read from YAML in kernel_yaml.c, or added with
 * cudag_add_kernel here): checked against the kernel's signature and the
 * launch limits, added with cuGraphAddKernelNode (cluster and priority as
 * the node's launch attributes) and updated with
 * cuGraphExecKernelNodeSetParams.
 * The only kind that may end a programmatic edge, and the one that sets
 * conditions (a cond argument).  One entry of the node-kind table (kind.h). */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/text.h"
#include "lib/driver.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "ir/types.h"
#include "code/binary.h"
#include "code/module.h"
#include "gpu/exec.h"
#include "gpu/gpu.h"
#include "kinds/checker.h"
#include "kinds/kernel_yaml.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- checks ----------------------------------------------------------- */

/* What an argument is, for messages: "buffer 'x'", "integer 3", … */
static const char *arg_text(const cudag_graph *g, const cudag__arg *a,
                            char *buf, size_t cap)
{
    char num[40];
    switch (a->kind) {
    case CUDAG_ARG_BUFFER:
        if (a->buffer < g->nbuffers)
            snprintf(buf, cap, "buffer '%s'", g->buffers[a->buffer].name);
        else
            snprintf(buf, cap, "a buffer");
        break;
    case CUDAG_ARG_INT:
        snprintf(buf, cap, "integer %lld", (long long)a->i);
        break;
    case CUDAG_ARG_FLOAT:
        snprintf(buf, cap, "number %s", cudag__fmt_num(num, a->f));
        break;
    case CUDAG_ARG_NULL:
        snprintf(buf, cap, "null");
        break;
    case CUDAG_ARG_COND:
        if (a->buffer < g->nconds)
            snprintf(buf, cap, "condition '%s'", g->conds[a->buffer].name);
        else
            snprintf(buf, cap, "a condition");
        break;
    default:
        snprintf(buf, cap, "an invalid argument");
        break;
    }
    return buf;
}

/* Argument i of node n is not what parameter i of s takes. */
static void arg_mismatch(cudag__checker *c, const cudag__node *n,
                         const cudag__sig *s, uint32_t i, cudag__pos pos)
{
    cudag_type t = s->types[i];
    char what[320];
    cudag__check_fail(c, CUDAG_ETYPE, pos,
                      "node '%s': argument '%s' (%s) must be %s, got %s",
                      n->name, s->pnames && s->pnames[i] ? s->pnames[i] : "?",
                      cudag_type_name(t),
                      t == CUDAG_TYPE_PTR     ? "a buffer or null"
                      : t == CUDAG_TYPE_COND  ? "a condition"
                      : cudag__is_int_type(t) ? "an integer"
                                              : "a number",
                      arg_text(c->g, &n->u.k.args[i], what, sizeof what));
}

/* Argument i of node n, a buffer, against parameter i of s: a pointer, to
 * the buffer's element type where the source says, in range. */
static void check_buffer_arg(cudag__checker *c, const cudag__node *n,
                             const cudag__sig *s, uint32_t i, uint32_t *uses,
                             cudag__pos pos)
{
    const cudag_graph *g = c->g;
    const cudag__arg *a = &n->u.k.args[i];
    const char *pn = s->pnames && s->pnames[i] ? s->pnames[i] : "?";
    if (a->buffer >= g->nbuffers) {
        cudag__check_fail(
            c, CUDAG_EUNKNOWN, pos,
            "node '%s': argument '%s' refers to buffer index %u, but "
            "the graph has %u buffers",
            n->name, pn, a->buffer, g->nbuffers);
        return;
    }
    const cudag__buffer *b = &g->buffers[a->buffer];
    uses[a->buffer]++;
    if (s->types[i] != CUDAG_TYPE_PTR) {
        arg_mismatch(c, n, s, i, pos);
        return;
    }
    /* A pointer read from source knows its element type. */
    cudag_type want = s->pointee ? s->pointee[i] : CUDAG_TYPE_NONE;
    if (want != CUDAG_TYPE_NONE && b->type != want) {
        cudag__check_fail(c, CUDAG_ETYPE, pos,
                          "node '%s': argument '%s' (%s*) must be a "
                          "buffer of %s, got buffer '%s' (%s)",
                          n->name, pn, cudag_type_name(want),
                          cudag_type_name(want), b->name,
                          cudag_type_name(b->type));
        return;
    }
    if (a->offset >= b->count && b->count > 0)
        cudag__check_fail(
            c, CUDAG_ERANGE, pos,
            "node '%s': argument '%s': offset %llu is outside buffer "
            "'%s' (%llu element%s)",
            n->name, pn, (unsigned long long)a->offset, b->name,
            (unsigned long long)b->count, cudag__plural(b->count));
    else if (a->count && !cudag__range_ok(a->offset, a->count, b->count))
        cudag__check_fail(
            c, CUDAG_ERANGE, pos,
            "node '%s': argument '%s': %llu element%s at offset %llu "
            "are outside buffer '%s' (%llu element%s)",
            n->name, pn, (unsigned long long)a->count,
            cudag__plural(a->count), (unsigned long long)a->offset,
            b->name, (unsigned long long)b->count,
            cudag__plural(b->count));
}

/* Argument i of node n, a condition, against parameter i of s; records the
 * node as one that sets it, and whether it provably sets it to 1 every time
 * it runs: the kernels library's cond_count_i32 (counter[0] += 1;
 * c = counter[0] < k) given a k beyond what its i32 counter reaches (the
 * conditional kind's check_tree warns then). */
static void check_cond_arg(cudag__checker *c, const cudag__node *n,
                           const cudag__sig *s, uint32_t i, cudag__pos pos)
{
    const cudag_graph *g = c->g;
    const cudag__arg *a = &n->u.k.args[i];
    if (a->buffer >= g->nconds) {
        cudag__check_fail(
            c, CUDAG_EUNKNOWN, pos,
            "node '%s': argument '%s' refers to condition index %u, but "
            "the graph has %u conditions",
            n->name, s->pnames && s->pnames[i] ? s->pnames[i] : "?",
            a->buffer, g->nconds);
        return;
    }
    if (s->types[i] != CUDAG_TYPE_COND) {
        arg_mismatch(c, n, s, i, pos);
        return;
    }
    const cudag__arg *k = n->u.k.nargs == 3 ? &n->u.k.args[1] : NULL;
    bool only_one = k && strcmp(s->name, "cond_count_i32") == 0 &&
                    k->kind == CUDAG_ARG_INT && k->i > INT32_MAX;
    cudag__check_cond_setter(c, (uint32_t)(n - g->nodes), a->buffer, pos,
                             only_one, k ? k->i : 0,
                             k ? k->pos : CUDAG__NOPOS);
}

static void check_arg(cudag__checker *c, const cudag__node *n,
                      const cudag__sig *s, uint32_t i, uint32_t *uses)
{
    const cudag__arg *a = &n->u.k.args[i];
    cudag_type t = s->types[i];
    const char *tn = cudag_type_name(t);
    const char *pn = s->pnames && s->pnames[i] ? s->pnames[i] : "?";
    cudag__pos pos = cudag__pick(a->pos, cudag__pick(n->u.k.args_pos, n->pos));
    char num[40];

    if (a->kind == CUDAG_ARG_BUFFER) {
        check_buffer_arg(c, n, s, i, uses, pos);
        return;
    }
    if (a->kind == CUDAG_ARG_COND) {
        check_cond_arg(c, n, s, i, pos);
        return;
    }
    if (t == CUDAG_TYPE_COND)
        goto mismatch;
    if (a->kind != CUDAG_ARG_INT && a->kind != CUDAG_ARG_FLOAT &&
        a->kind != CUDAG_ARG_NULL) {
        cudag__check_fail(c, CUDAG_EINVAL, pos,
                          "node '%s': argument '%s' has an invalid kind %d",
                          n->name, pn, (int)a->kind);
        return;
    }
    if (t == CUDAG_TYPE_PTR) {
        if (a->kind != CUDAG_ARG_NULL)
            goto mismatch;
        return;
    }
    if (cudag__is_int_type(t)) {
        if (a->kind != CUDAG_ARG_INT)
            goto mismatch;
        int64_t lo, hi;
        cudag__int_range(t, &lo, &hi);
        if (a->i < lo || a->i > hi)
            cudag__check_fail(
                c, CUDAG_ERANGE, pos,
                "node '%s': argument '%s' is %lld, out of range for %s "
                "(%lld to %lld)",
                n->name, pn, (long long)a->i, tn, (long long)lo, (long long)hi);
        return;
    }
    if (cudag__is_float_type(t)) {
        double v;
        if (a->kind == CUDAG_ARG_INT)
            v = (double)a->i;
        else if (a->kind == CUDAG_ARG_FLOAT)
            v = a->f;
        else
            goto mismatch;
        /* An explicit infinity or NaN is passed as it is; a finite value
         * that would become one is a mistake. */
        if (isfinite(v) && fabs(v) > cudag__float_max(t))
            cudag__check_fail(
                c, CUDAG_ERANGE, pos,
                "node '%s': argument '%s' is %s, out of range for %s", n->name,
                pn, cudag__fmt_num(num, v), tn);
        return;
    }
    return; /* an invalid parameter type was reported with its signature */

mismatch:
    arg_mismatch(c, n, s, i, pos);
}

static void check_dims(cudag__checker *c, const cudag__node *n,
                       const char *what, const int64_t dim[3],
                       const uint32_t max[3], cudag__pos pos)
{
    static const char xyz[] = "xyz";
    for (int i = 0; i < 3; i++) {
        if (dim[i] < 1)
            cudag__check_fail(c, CUDAG_ERANGE, pos,
                              "node '%s': %s %c is %lld (must be at least 1)",
                              n->name, what, xyz[i], (long long)dim[i]);
        else if (dim[i] > (int64_t)max[i])
            cudag__check_fail(c, CUDAG_ELIMIT, pos,
                              "node '%s': %s %c is %lld (at most %u)", n->name,
                              what, xyz[i], (long long)dim[i], max[i]);
    }
}

/* A cluster, when the node has one: each dimension at least 1 and dividing
 * the grid's, at most CUDAG__MAX_CLUSTER blocks in all. */
static void check_cluster(cudag__checker *c, const cudag__node *n)
{
    static const char xyz[] = "xyz";
    const cudag__kernel *k = &n->u.k;
    if (!k->cluster[0] && !k->cluster[1] && !k->cluster[2])
        return;
    cudag__pos pos = cudag__pick(k->cluster_pos, n->pos);
    static const uint32_t max[3] = {CUDAG__MAX_CLUSTER, CUDAG__MAX_CLUSTER,
                                    CUDAG__MAX_CLUSTER};
    check_dims(c, n, "cluster", k->cluster, max, pos);
    bool dims_ok = true;
    for (int i = 0; i < 3; i++)
        dims_ok &= k->cluster[i] >= 1 &&
                   k->cluster[i] <= (int64_t)CUDAG__MAX_CLUSTER;
    if (!dims_ok)
        return;
    int64_t blocks = k->cluster[0] * k->cluster[1] * k->cluster[2];
    if (blocks > (int64_t)CUDAG__MAX_CLUSTER) {
        cudag__check_fail(c, CUDAG_ELIMIT, pos,
                          "node '%s': cluster has %lld blocks (%lld x %lld x "
                          "%lld; at most %u, and at most %u where the device "
                          "allows no non-portable size)",
                          n->name, (long long)blocks, (long long)k->cluster[0],
                          (long long)k->cluster[1], (long long)k->cluster[2],
                          CUDAG__MAX_CLUSTER, CUDAG__MAX_CLUSTER_PORTABLE);
        return;
    }
    for (int i = 0; i < 3; i++)
        if (k->grid[i] >= 1 && k->grid[i] % k->cluster[i] != 0)
            cudag__check_fail(c, CUDAG_ERANGE, pos,
                              "node '%s': cluster %c is %lld, which does not "
                              "divide grid %c (%lld)",
                              n->name, xyz[i], (long long)k->cluster[i], xyz[i],
                              (long long)k->grid[i]);
}

static void check(cudag__checker *c, const cudag__node *n)
{
    uint32_t *uses = c->uses;
    static const uint32_t grid_max[3] = {CUDAG__MAX_GRID_X, CUDAG__MAX_GRID_Y,
                                         CUDAG__MAX_GRID_Z};
    static const uint32_t block_max[3] = {
        CUDAG__MAX_BLOCK_X, CUDAG__MAX_BLOCK_Y, CUDAG__MAX_BLOCK_Z};
    const cudag_graph *g = c->g;
    const cudag__kernel *k = &n->u.k;

    check_dims(c, n, "grid", k->grid, grid_max,
               cudag__pick(k->grid_pos, n->pos));
    cudag__pos bpos = cudag__pick(k->block_pos, n->pos);
    check_dims(c, n, "block", k->block, block_max, bpos);
    bool dims_ok = true;
    for (int i = 0; i < 3; i++)
        dims_ok &= k->block[i] >= 1 && k->block[i] <= (int64_t)block_max[i];
    /* Each dimension is at most 1024 here, so the product cannot overflow. */
    if (dims_ok) {
        int64_t threads = k->block[0] * k->block[1] * k->block[2];
        if (threads > (int64_t)CUDAG__MAX_BLOCK_THREADS)
            cudag__check_fail(
                c, CUDAG_ELIMIT, bpos,
                "node '%s': block has %lld threads (%lld x %lld x %lld; at "
                "most %u)",
                n->name, (long long)threads, (long long)k->block[0],
                (long long)k->block[1], (long long)k->block[2],
                CUDAG__MAX_BLOCK_THREADS);
    }
    cudag__pos spos = cudag__pick(k->smem_pos, n->pos);
    if (k->smem < 0)
        cudag__check_fail(c, CUDAG_ERANGE, spos,
                          "node '%s': smem is %lld bytes (must be at least 0)",
                          n->name, (long long)k->smem);
    else if (k->smem > (int64_t)CUDAG__MAX_SMEM)
        cudag__check_fail(c, CUDAG_ELIMIT, spos,
                          "node '%s': smem is %lld bytes (at most %u)", n->name,
                          (long long)k->smem, CUDAG__MAX_SMEM);
    check_cluster(c, n);
    if (k->has_priority && (k->priority < INT_MIN || k->priority > INT_MAX))
        cudag__check_fail(c, CUDAG_ERANGE, cudag__pick(k->priority_pos, n->pos),
                          "node '%s': priority is %lld (an int, %d to %d; "
                          "the driver clamps it to the device's range)",
                          n->name, (long long)k->priority, INT_MIN, INT_MAX);

    if (k->sig >= g->nsigs) {
        cudag__check_fail(
            c, CUDAG_EUNKNOWN, cudag__pick(k->sig_pos, n->pos),
            "node '%s' refers to kernel index %u, but the graph has %u "
            "kernels",
            n->name, k->sig, g->nsigs);
        return;
    }
    const cudag__sig *s = &g->sigs[k->sig];
    if (k->nargs != s->nparams) {
        char sig[700];
        cudag__kernel_sig_text(s, sig, sizeof sig);
        if (s->nparams == 0)
            cudag__check_fail(
                c, CUDAG_EARGS, cudag__pick(k->args_pos, n->pos),
                "node '%s': kernel '%s' takes no arguments, got %u", n->name,
                s->name, k->nargs);
        else
            cudag__check_fail(
                c, CUDAG_EARGS, cudag__pick(k->args_pos, n->pos),
                "node '%s': kernel '%s' takes %u argument%s (%s), got %u",
                n->name, s->name, s->nparams, s->nparams == 1 ? "" : "s", sig,
                k->nargs);
        /* Matching the rest against shifted parameters would only repeat
         * the same mistake; count the buffers so they are not "unused". */
        for (uint32_t i = 0; i < k->nargs; i++)
            if (k->args[i].kind == CUDAG_ARG_BUFFER &&
                k->args[i].buffer < g->nbuffers)
                uses[k->args[i].buffer]++;
        return;
    }
    for (uint32_t i = 0; i < k->nargs && !cudag__check_full(c); i++)
        check_arg(c, n, s, i, uses);
}

static void pdl_check(const cudag_graph *g, const cudag__node *n, char *why,
                      size_t cap)
{
    if (n->u.k.sig >= g->nsigs)
        return;
    const cudag__sig *s = &g->sigs[n->u.k.sig];
    const char *where = s->module < g->nmodules ? g->modules[s->module].path
                                                : "the program's handle";
    if (s->waits < 0)
        snprintf(why, cap,
                 "kernel '%s' never executes griddepcontrol.wait (%s): call "
                 "cudag_pdl_wait() from <cudag/pdl.cuh> before it reads "
                 "upstream data",
                 s->name, where);
    else if (s->waits == 0 && !s->pdl)
        snprintf(why, cap,
                 "kernel '%s' is not declared pdl, so nothing says it waits "
                 "(griddepcontrol.wait) before reading upstream data",
                 s->name);
}

/* ---- build ------------------------------------------------------------ */

static uint32_t code(const cudag__node *n, cudag__pos *pos)
{
    *pos = n->u.k.sig_pos.line ? n->u.k.sig_pos : n->pos;
    return n->u.k.sig;
}

static uint32_t launch_slots(const cudag__node *n) { return n->u.k.nargs; }

static int prepare_smem(const cudag__gpu *gpu, const cudag_graph *g,
                        cudag__code *c, uint32_t node, cudag_error *err)
{
    const cudag__node *n = &g->nodes[node];
    const cudag__kernel *k = &n->u.k;
    const cudag__sig *sig = &g->sigs[k->sig];
    cudag__pos pos = k->smem_pos.line ? k->smem_pos : n->pos;
    int64_t limit = (int64_t)gpu->smem_optin - c->static_smem[k->sig];
    if (k->smem < 0 || k->smem > limit)
        return cudag__fail_at(err, CUDAG_ELIMIT, pos,
                              "node '%s' asks for %lld bytes of dynamic shared "
                              "memory; kernel '%s' may have at most %lld on "
                              "this device (%d opt-in minus %d static)",
                              n->name, (long long)k->smem, sig->name,
                              (long long)(limit > 0 ? limit : 0),
                              gpu->smem_optin, c->static_smem[k->sig]);
    /* smem_set starts at the function's own limit, 48 KiB less its static
     * shared memory: 10 KiB of dynamic beside 40 KiB static needs the opt-in
     * as much as 100 KiB beside none. */
    if (k->smem > c->smem_set[k->sig]) {
        CUresult r = gpu->drv->cuFuncSetAttribute(
            c->funcs[k->sig], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            (int)k->smem);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, gpu->drv, r, pos,
                                  "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_"
                                  "BYTES, %lld) for node '%s'",
                                  (long long)k->smem, n->name);
        c->smem_set[k->sig] = (int)k->smem;
    }
    return CUDAG_OK;
}

/* A cluster needs compute capability 9.0; more than 8 blocks need the
 * function's opt-in to a non-portable size (set once per node: the call is
 * idempotent and cheap).  The driver checks the rest (a size the device
 * cannot schedule, a kernel compiled with other __cluster_dims__) at
 * instantiate, naming the node. */
static int prepare_cluster(const cudag__gpu *gpu, const cudag_graph *g,
                           cudag__code *c, uint32_t node, cudag_error *err)
{
    const cudag__node *n = &g->nodes[node];
    const cudag__kernel *k = &n->u.k;
    if (!k->cluster[0])
        return CUDAG_OK;
    cudag__pos pos = k->cluster_pos.line ? k->cluster_pos : n->pos;
    if (gpu->cc_major < 9)
        return cudag__fail_at(err, CUDAG_ENOTSUP, pos,
                              "node '%s' asks for a thread-block cluster, "
                              "which needs compute capability 9.0 (this "
                              "device has %d.%d)",
                              n->name, gpu->cc_major, gpu->cc_minor);
    int64_t blocks = k->cluster[0] * k->cluster[1] * k->cluster[2];
    if (blocks <= (int64_t)CUDAG__MAX_CLUSTER_PORTABLE)
        return CUDAG_OK;
    CUresult r = gpu->drv->cuFuncSetAttribute(
        c->funcs[k->sig], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, gpu->drv, r, pos,
                              "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_"
                              "ALLOWED) for node '%s' (a cluster of %lld "
                              "blocks)",
                              n->name, (long long)blocks);
    return CUDAG_OK;
}

static int describe(const cudag__build_ctx *b, uint32_t n, cudag__launch *L,
                    cudag_error *err)
{
    const cudag_graph *g = b->g;
    const cudag__node *nd = &g->nodes[n];
    const cudag__kernel *k = &nd->u.k;
    const cudag__sig *sig = &g->sigs[k->sig];
    if (k->nargs != sig->nparams)
        return cudag__fail_at(err, CUDAG_EARGS,
                              k->args_pos.line ? k->args_pos : nd->pos,
                              "node '%s': %u arguments for kernel '%s', which "
                              "takes %u",
                              nd->name, k->nargs, sig->name, sig->nparams);
    int rc = prepare_smem(b->gpu, g, b->code, n, err);
    if (rc == CUDAG_OK)
        rc = prepare_cluster(b->gpu, g, b->code, n, err);
    if (rc != CUDAG_OK)
        return rc;
    L->fn = b->code->funcs[k->sig];
    for (int i = 0; i < 3; i++)
        L->cluster[i] = (unsigned)k->cluster[i];
    L->has_priority = k->has_priority;
    L->priority = (int)k->priority;
    for (int i = 0; i < 3; i++) {
        L->grid[i] = (unsigned)k->grid[i];
        L->block[i] = (unsigned)k->block[i];
    }
    L->smem = (unsigned)k->smem;
    L->nparams = k->nargs;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const cudag__arg *a = &k->args[i];
        rc = cudag__pack_arg(g, sig->types[i], a, b->bufs, &L->vals[i], err);
        if (rc != CUDAG_OK) {
            /* Say which node and argument, at the argument's position
             * (or the node's when it has none). */
            cudag__error_prefix(err, a->pos.line ? a->pos : nd->pos,
                                "node '%s', argument %u ('%s')", nd->name, i,
                                sig->pnames[i]);
            return rc;
        }
        L->params[i] = &L->vals[i];
        bool ptr = a->kind == CUDAG_ARG_BUFFER;
        L->pbuf[i] = ptr ? a->buffer : CUDAG__NONE;
        L->poff[i] = ptr ? a->offset : 0;
    }
    return CUDAG_OK;
}

/* What the loaded code's PTX says of waiting: 1, -1 never, 0 unknown. */
static int code_waits(const cudag__code *c, uint32_t sig)
{
    const cudag__code_entry *e = c->entries ? c->entries[sig] : NULL;
    return !e || e->waits < 0 ? 0 : e->waits ? 1 : -1;
}

/* True when signature `sig`'s loaded code may be the downstream end of a
 * programmatic or launch-order edge: declared pdl, and code built for sm_90 or
 * newer (a PTX JIT from an older virtual architecture lost the wait). */
static bool code_can_wait(const cudag_graph *g, const cudag__code *c,
                          uint32_t sig)
{
    if (sig >= g->nsigs || !c->funcs[sig])
        return false;
    /* The generated code decides when it shows (PTX of a source module or
     * a PTX file); otherwise the declaration, or the source read at load. */
    int w = code_waits(c, sig);
    if (w < 0 || (w == 0 && !g->sigs[sig].pdl))
        return false;
    /* griddepcontrol.wait exists from sm_90 on; code compiled for an older
     * target, or JIT-compiled from older PTX, had it compiled out. */
    if (c->binary_version[sig] < 90)
        return false;
    return c->ptx_version[sig] == 0 || c->ptx_version[sig] >= 90;
}

static void pdl_wait(const cudag__build_ctx *b, const cudag__node *n,
                     char *why, size_t cap)
{
    const cudag_graph *g = b->g;
    const cudag__code *c = b->code;
    uint32_t s = n->u.k.sig;
    if (code_can_wait(g, c, s))
        return;
    const cudag__sig *sig = &g->sigs[s];
    if (code_waits(c, s) < 0)
        snprintf(why, cap,
                 "the loaded code of kernel '%s' never executes "
                 "griddepcontrol.wait",
                 sig->name);
    else if (!sig->pdl)
        snprintf(why, cap,
                 "kernel '%s' is not declared pdl, so nothing says it waits "
                 "(griddepcontrol.wait) before reading upstream data",
                 sig->name);
    else if (c->ptx_version[s] && c->ptx_version[s] < 90)
        snprintf(why, cap,
                 "the loaded code of kernel '%s' was JIT-compiled from "
                 "compute_%d PTX, where griddepcontrol.wait is compiled out",
                 sig->name, c->ptx_version[s]);
    else
        snprintf(why, cap,
                 "the loaded code of kernel '%s' was built for sm_%d, which "
                 "has no griddepcontrol.wait",
                 sig->name, c->binary_version[s]);
}

/* The kernel node parameters of a launch description. */
static void kernel_params(const cudag__launch *k, CUDA_KERNEL_NODE_PARAMS *p)
{
    memset(p, 0, sizeof *p);
    p->func = k->fn;
    p->gridDimX = k->grid[0];
    p->gridDimY = k->grid[1];
    p->gridDimZ = k->grid[2];
    p->blockDimX = k->block[0];
    p->blockDimY = k->block[1];
    p->blockDimZ = k->block[2];
    p->sharedMemBytes = k->smem;
    p->kernelParams = k->params;
}

static int add(const cudag__build_ctx *b, uint32_t n, CUgraph graph,
               CUgraphNode *out, cudag_error *err)
{
    const cudag__node *nd = &b->g->nodes[n];
    const cudag__launch *L = &b->l->k[n];
    /* The conditions' handles exist now (kind.h: prepare). */
    for (uint32_t i = 0; i < nd->u.k.nargs && i < L->nparams; i++)
        if (nd->u.k.args[i].kind == CUDAG_ARG_COND)
            L->vals[i] = b->handles[nd->u.k.args[i].buffer];
    CUDA_KERNEL_NODE_PARAMS p;
    kernel_params(L, &p);
    CUresult r = b->gpu->drv->cuGraphAddKernelNode(out, graph, NULL, 0, &p);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, b->gpu->drv, r, nd->pos,
                              "cuGraphAddKernelNode for node '%s'", nd->name);
    /* The node's launch attributes; the kernel node parameters have no
     * room for them.  The node belongs to graph, which frees it. */
    CUkernelNodeAttrValue v;
    if (L->cluster[0]) {
        memset(&v, 0, sizeof v);
        v.clusterDim.x = L->cluster[0];
        v.clusterDim.y = L->cluster[1];
        v.clusterDim.z = L->cluster[2];
        r = b->gpu->drv->cuGraphKernelNodeSetAttribute(
            *out, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, b->gpu->drv, r,
                                  cudag__pick(nd->u.k.cluster_pos, nd->pos),
                                  "cuGraphKernelNodeSetAttribute(CLUSTER_"
                                  "DIMENSION, %ux%ux%u) for node '%s'",
                                  L->cluster[0], L->cluster[1], L->cluster[2],
                                  nd->name);
    }
    if (L->has_priority) {
        memset(&v, 0, sizeof v);
        v.priority = L->priority;
        r = b->gpu->drv->cuGraphKernelNodeSetAttribute(
            *out, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, b->gpu->drv, r,
                                  cudag__pick(nd->u.k.priority_pos, nd->pos),
                                  "cuGraphKernelNodeSetAttribute(PRIORITY, %d) "
                                  "for node '%s'",
                                  L->priority, nd->name);
    }
    return CUDAG_OK;
}

/* ---- the instantiated graph --------------------------------------------- */

/* Pushes kernel node n's current launch description to the exec. */
static int push_kernel(cudag_exec *x, uint32_t n, cudag_error *err)
{
    CUDA_KERNEL_NODE_PARAMS p;
    kernel_params(&x->launch.k[n], &p);
    CUresult r = x->gpu.drv->cuGraphExecKernelNodeSetParams(
        x->gexec, x->built.nodes[n], &p);
    const cudag__node *nd = cudag__tree_node(x->g, n);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, nd->pos,
                              "cuGraphExecKernelNodeSetParams: node '%s'",
                              nd->name);
    return CUDAG_OK;
}

static int repoint(cudag_exec *x, uint32_t n, uint32_t buf, cudag_error *err)
{
    cudag__launch *L = &x->launch.k[n];
    bool uses = false;
    for (uint32_t i = 0; i < L->nparams; i++)
        if (L->pbuf[i] == buf) {
            size_t es = cudag_type_size(x->g->buffers[buf].type);
            L->vals[i] = x->bufs[buf] + L->poff[i] * es;
            uses = true;
        }
    return uses ? push_kernel(x, n, err) : CUDAG_OK;
}

static int set_arg(cudag_exec *x, uint32_t n, unsigned index,
                   const cudag_arg *arg, cudag_error *err)
{
    const cudag_graph *g = x->g;
    const cudag__node *nd = cudag__tree_node(g, n);
    const cudag__sig *sig = &g->sigs[nd->u.k.sig];
    if (index >= sig->nparams || !arg)
        return cudag__fail_at(err, CUDAG_EARGS, nd->pos,
                              "cudag_exec_set_arg: node '%s': %s (kernel '%s' "
                              "takes %u)",
                              nd->name,
                              arg ? "argument index out of range"
                                  : "argument is NULL",
                              sig->name, sig->nparams);
    /* The handle a cond parameter holds belongs to the graph as it was
     * built: it stays. */
    if (sig->types[index] == CUDAG_TYPE_COND || arg->kind == CUDAG_ARG_COND)
        return cudag__fail_at(err, CUDAG_ENOTSUP, nd->pos,
                              "cudag_exec_set_arg: node '%s', argument %u "
                              "('%s'): a condition argument cannot change "
                              "after instantiation",
                              nd->name, index, sig->pnames[index]);
    cudag__arg a;
    memset(&a, 0, sizeof a);
    a.kind = arg->kind;
    a.pos = nd->pos;
    a.offset = arg->offset;
    a.i = arg->i;
    a.f = arg->f;
    int rc = CUDAG_OK;
    if (arg->kind == CUDAG_ARG_BUFFER) {
        a.buffer = cudag__need_buffer(g, arg->buffer, "cudag_exec_set_arg", &rc,
                                      err);
        if (rc != CUDAG_OK)
            return rc;
    }
    cudag__launch *L = &x->launch.k[n];
    uint64_t slot;
    rc = cudag__pack_arg(g, sig->types[index], &a, x->bufs, &slot, err);
    if (rc != CUDAG_OK) {
        cudag__error_prefix(err, nd->pos,
                            "cudag_exec_set_arg: node '%s', argument %u ('%s')",
                            nd->name, index, sig->pnames[index]);
        return rc;
    }
    /* Commit only what the driver took. */
    uint64_t old = L->vals[index], oldoff = L->poff[index];
    uint32_t oldbuf = L->pbuf[index];
    L->vals[index] = slot;
    L->pbuf[index] = a.kind == CUDAG_ARG_BUFFER ? a.buffer : CUDAG__NONE;
    L->poff[index] = a.kind == CUDAG_ARG_BUFFER ? a.offset : 0;
    rc = push_kernel(x, n, err);
    if (rc != CUDAG_OK) {
        L->vals[index] = old;
        L->pbuf[index] = oldbuf;
        L->poff[index] = oldoff;
    }
    return rc;
}

static int launch(const cudag_exec *x, uint32_t n, bool pdl, cudag_error *err)
{
    const cudag__launch *k = &x->launch.k[n];
    /* The node's own attributes go with every launch, as on its graph node;
     * the PDL attribute only where the replay asks for it. */
    CUlaunchAttribute attr[3];
    unsigned na = 0;
    memset(attr, 0, sizeof attr);
    if (pdl) {
        attr[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr[na++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (k->cluster[0]) {
        attr[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr[na].value.clusterDim.x = k->cluster[0];
        attr[na].value.clusterDim.y = k->cluster[1];
        attr[na++].value.clusterDim.z = k->cluster[2];
    }
    if (k->has_priority) {
        attr[na].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attr[na++].value.priority = k->priority;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = k->grid[0], cfg.gridDimY = k->grid[1];
    cfg.gridDimZ = k->grid[2];
    cfg.blockDimX = k->block[0], cfg.blockDimY = k->block[1];
    cfg.blockDimZ = k->block[2];
    cfg.sharedMemBytes = k->smem;
    cfg.hStream = x->gpu.stream;
    cfg.attrs = attr;
    cfg.numAttrs = na;
    CUresult r = x->gpu.drv->cuLaunchKernelEx(&cfg, k->fn, k->params, NULL);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, x->gpu.drv, r, x->g->nodes[n].pos,
                              "cuLaunchKernelEx: launching node '%s'",
                              x->g->nodes[n].name);
    return CUDAG_OK;
}

/* ---- DOT ---------------------------------------------------------------- */

/* "64", "64x2" or "64x2x3": trailing 1s left out. */
static void put_dim(cudag__sb *b, const int64_t d[3])
{
    if (d[2] != 1)
        cudag__sb_printf(b, "%lldx%lldx%lld", (long long)d[0], (long long)d[1],
                         (long long)d[2]);
    else if (d[1] != 1)
        cudag__sb_printf(b, "%lldx%lld", (long long)d[0], (long long)d[1]);
    else
        cudag__sb_printf(b, "%lld", (long long)d[0]);
}

static void dot_label(cudag__sb *b, const cudag_graph *g,
                      const cudag__node *n)
{
    const cudag__kernel *k = &n->u.k;
    cudag__sb_dot_escape(b, g->sigs[k->sig].name);
    cudag__sb_puts(b, "\\ngrid ");
    put_dim(b, k->grid);
    cudag__sb_puts(b, "  block ");
    put_dim(b, k->block);
    if (k->smem)
        cudag__sb_printf(b, "\\nsmem %lld", (long long)k->smem);
    if (k->cluster[0]) {
        cudag__sb_puts(b, k->smem ? "  cluster " : "\\ncluster ");
        put_dim(b, k->cluster);
    }
    if (k->has_priority)
        cudag__sb_printf(b, "%spriority %lld",
                         k->smem || k->cluster[0] ? "  " : "\\n",
                         (long long)k->priority);
}

/* ---- the builder API ------------------------------------------------ */

int cudag_add_kernel(cudag_graph *g, const char *name, const char *signature,
                     cudag_dim3 grid, cudag_dim3 block, uint32_t shared_bytes,
                     const cudag_arg *args, size_t nargs, cudag_error *err)
{
    int rc = cudag__builder_start(g, &name, "cudag_add_kernel", err);
    if (rc != CUDAG_OK)
        return rc;
    if (!signature)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "node '%s': the kernel is NULL", name);
    cudag_error le;
    uint32_t sig = cudag__sig_lookup(g, signature, CUDAG__NOPOS, &le);
    if (sig == CUDAG__NONE) {
        /* Where the source says what is wrong with the kernel, if it does. */
        cudag__pos at = {le.file, (uint32_t)le.line, (uint32_t)le.column};
        return cudag__fail_at(err, le.code, le.line ? at : CUDAG__NOPOS,
                              "node '%s': %s", name, le.message);
    }
    if (nargs > CUDAG__MAX_ARGS || (nargs && !args))
        return cudag__fail_at(err, CUDAG_ELIMIT, CUDAG__NOPOS,
                              "node '%s': %zu arguments (at most %u)", name,
                              nargs, CUDAG__MAX_ARGS);
    cudag__arg *a = cudag__arena_alloc(&g->arena, (nargs + 1) * sizeof *a);
    if (!a)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    for (size_t i = 0; i < nargs; i++) {
        a[i].kind = args[i].kind;
        switch (args[i].kind) {
        case CUDAG_ARG_BUFFER:
            a[i].buffer = cudag__builder_buffer(g, name, args[i].buffer, &rc,
                                                err);
            if (rc != CUDAG_OK)
                return rc;
            a[i].offset = args[i].offset;
            break;
        case CUDAG_ARG_INT:
            a[i].i = args[i].i;
            break;
        case CUDAG_ARG_FLOAT:
            a[i].f = args[i].f;
            break;
        case CUDAG_ARG_NULL:
            break;
        case CUDAG_ARG_COND:
            a[i].buffer = cudag__find_cond(g, args[i].buffer);
            if (a[i].buffer == CUDAG__NONE)
                return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                                      "node '%s': unknown condition '%s'",
                                      name,
                                      args[i].buffer ? args[i].buffer
                                                     : "(null)");
            break;
        default:
            return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                                  "node '%s': argument %zu has an invalid kind",
                                  name, i);
        }
    }
    cudag__node *n;
    rc = cudag__add_node(g, name, CUDAG__NOPOS, &n, err);
    if (rc != CUDAG_OK)
        return rc;
    n->kind = cudag__kind_kernel.kind;
    n->u.k.sig = sig;
    n->u.k.grid[0] = grid.x;
    n->u.k.grid[1] = grid.y;
    n->u.k.grid[2] = grid.z;
    n->u.k.block[0] = block.x;
    n->u.k.block[1] = block.y;
    n->u.k.block[2] = block.z;
    n->u.k.smem = shared_bytes;
    n->u.k.nargs = (uint32_t)nargs;
    n->u.k.args = a;
    return CUDAG_OK;
}

/* The kernel node `name` of g (a body's node by its name in the body, as
 * cudag_add_kernel took it), or an error naming fn. */
static int builder_kernel(cudag_graph *g, const char *name, const char *fn,
                          cudag__kernel **out, cudag_error *err)
{
    *out = NULL;
    int rc = cudag__builder_start(g, &name, fn, err);
    if (rc != CUDAG_OK)
        return rc;
    uint32_t i = cudag__find_node(g, name);
    if (i == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "%s: unknown node '%s'", fn, name);
    cudag__node *n = &g->nodes[i];
    if (n->kind != cudag__kind_kernel.kind)
        return cudag__fail_at(err, CUDAG_EINVAL, n->pos,
                              "%s: node '%s' is not a kernel node", fn, name);
    *out = &n->u.k;
    cudag__graph_touch(g);
    return CUDAG_OK;
}

int cudag_set_kernel_cluster(cudag_graph *g, const char *node,
                             cudag_dim3 cluster, cudag_error *err)
{
    cudag__kernel *k;
    int rc = builder_kernel(g, node, "cudag_set_kernel_cluster", &k, err);
    if (rc != CUDAG_OK)
        return rc;
    /* {0, 0, 0} takes the cluster away; any other value is checked by
     * cudag_check like the YAML key. */
    bool none = !cluster.x && !cluster.y && !cluster.z;
    k->cluster[0] = none ? 0 : cluster.x;
    k->cluster[1] = none ? 0 : cluster.y;
    k->cluster[2] = none ? 0 : cluster.z;
    return CUDAG_OK;
}

int cudag_set_kernel_priority(cudag_graph *g, const char *node, int priority,
                              cudag_error *err)
{
    cudag__kernel *k;
    int rc = builder_kernel(g, node, "cudag_set_kernel_priority", &k, err);
    if (rc != CUDAG_OK)
        return rc;
    k->priority = priority;
    k->has_priority = true;
    return CUDAG_OK;
}

int cudag_set_param_access(cudag_graph *g, const char *signature,
                           uint32_t param, cudag_access access,
                           cudag_error *err)
{
    static const char fn[] = "cudag_set_param_access";
    cudag__error_clear(err);
    if (!g)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: graph is NULL", fn);
    uint32_t i = signature ? cudag__find_sig(g, signature) : CUDAG__NONE;
    if (i == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "%s: unknown kernel '%s'", fn,
                              signature ? signature : "(null)");
    cudag__sig *s = &g->sigs[i];
    if (param >= s->nparams)
        return cudag__fail_at(err, CUDAG_ERANGE, CUDAG__NOPOS,
                              "%s: kernel '%s' has %u parameter%s, not %u",
                              fn, signature, s->nparams,
                              cudag__plural(s->nparams), param + 1);
    if (s->types[param] != CUDAG_TYPE_PTR)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: kernel '%s': parameter '%s' is %s, not a "
                              "pointer",
                              fn, signature, s->pnames[param],
                              cudag_type_name(s->types[param]));
    if ((unsigned)access > CUDAG_ACCESS_READ_WRITE)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: invalid access %d", fn, (int)access);
    /* The modes are accset.h's bits, 0 for nothing said. */
    if (!s->access) {
        uint8_t *acc = cudag__arena_alloc(&g->arena, s->nparams + 1);
        if (!acc)
            return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                  "out of memory");
        s->access = acc;
    }
    s->access[param] = (uint8_t)access;
    cudag__graph_touch(g);
    return CUDAG_OK;
}

int cudag_set_kernel_arg_count(cudag_graph *g, const char *node, uint32_t arg,
                               uint64_t count, cudag_error *err)
{
    static const char fn[] = "cudag_set_kernel_arg_count";
    cudag__kernel *k;
    int rc = builder_kernel(g, node, fn, &k, err);
    if (rc != CUDAG_OK)
        return rc;
    if (arg >= k->nargs)
        return cudag__fail_at(err, CUDAG_ERANGE, CUDAG__NOPOS,
                              "%s: node '%s' has %u argument%s, not %u", fn,
                              node, k->nargs, cudag__plural(k->nargs),
                              arg + 1);
    if (k->args[arg].kind != CUDAG_ARG_BUFFER)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "%s: node '%s': argument %u is not a buffer",
                              fn, node, arg);
    k->args[arg].count = count;
    return CUDAG_OK;
}

/* ---- the table entry ------------------------------------------------ */

static const char *const keys[] = {"kernel",  "grid",     "block",
                                   "smem",    "cluster",  "priority",
                                   "args",    "after"};

/* ---- access sets (src/check/access.c) ------------------------------------- */

/* Each buffer argument from its offset: over its stated count (`x + o: n`),
 * else to the buffer's end, flagged unknown; read only through a `const T *`
 * or a `ptr.read` parameter, written only through `ptr.write`, else both. */
static void access(cudag__accset *s, const cudag_graph *g,
                   const cudag__node *n)
{
    const cudag__kernel *k = &n->u.k;
    const cudag__sig *sig = k->sig < g->nsigs ? &g->sigs[k->sig] : NULL;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const cudag__arg *a = &k->args[i];
        if (a->kind != CUDAG_ARG_BUFFER)
            continue;
        unsigned mode = sig && sig->access && i < sig->nparams
                            ? sig->access[i]
                            : 0;
        cudag__access_add(s, g, a->buffer, a->offset,
                          a->count ? a->count : UINT64_MAX,
                          mode ? mode : CUDAG__ACC_RW, a->count == 0, n,
                          cudag__pick(a->pos, n->pos));
    }
}

const cudag__kind_ops cudag__kind_kernel = {
    .kind = CUDAG_NODE_KERNEL,
    .name = "kernel",
    .what = "a kernel node",
    .keys = keys,
    .nkeys = sizeof keys / sizeof *keys,
    .pdl_end = true,
    .in_body = true,
    .plan_count = offsetof(cudag_plan_info, kernel_nodes),
    .read_yaml = cudag__kernel_read_yaml,
    .check = check,
    .access = access,
    .code = code,
    .launch_slots = launch_slots,
    .describe = describe,
    .pdl_check = pdl_check,
    .pdl_wait = pdl_wait,
    .add = add,
    .repoint = repoint,
    .set_arg = set_arg,
    .launch = launch,
    .dot_label = dot_label,
    .dot_shape = NULL,
    .dot_legend = "kernel\\ngrid  block",
};
