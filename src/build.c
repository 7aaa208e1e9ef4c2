/* build.c — checked IR → CUDA graph: loads the kernels' code and checks it
 * against the signatures, describes each kernel launch once, decides which
 * programmatic edges are safe, and adds nodes and edges to a CUgraph. */
#include "build.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- values ------------------------------------------------------------- */

/* v rounded to nearest even into a binary format with `eb` exponent and `mb`
 * mantissa bits (binary16: 5/10, bfloat16: 8/7).  ldexp and nearbyint are
 * exact here, so rounding happens once, straight from the double. */
static uint16_t small_float(double v, int eb, int mb)
{
    uint32_t sign = signbit(v) ? 1u << (eb + mb) : 0u;
    uint32_t inf = ((1u << eb) - 1u) << mb;
    if (isnan(v))
        return (uint16_t)(inf | 1u << (mb - 1));    /* quiet NaN */
    double a = fabs(v);
    if (a == 0.0)
        return (uint16_t)sign;
    int bias = (1 << (eb - 1)) - 1, emin = 1 - bias;
    int e;
    frexp(a, &e);
    e -= 1;                     /* a = 1.f × 2^e */
    if (isinf(a) || e > bias)
        return (uint16_t)(sign | inf);
    if (e < emin) {
        /* Subnormal: units of 2^(emin-mb).  Rounding up to 2^mb lands on the
         * smallest normal number, whose bits are exactly that value. */
        double q = nearbyint(ldexp(a, mb - emin));
        return (uint16_t)(sign | (uint32_t)q);
    }
    double q = nearbyint(ldexp(a, mb - e));   /* in [2^mb, 2^(mb+1)] */
    if (q >= ldexp(1.0, mb + 1)) {
        q = ldexp(1.0, mb);
        e++;
        if (e > bias)
            return (uint16_t)(sign | inf);
    }
    uint32_t frac = (uint32_t)q - (1u << mb);
    return (uint16_t)(sign | (uint32_t)(e + bias) << mb | frac);
}

uint16_t cudag__f16_bits(double v) { return small_float(v, 5, 10); }
uint16_t cudag__bf16_bits(double v) { return small_float(v, 8, 7); }

/* A double truncated toward zero and wrapped to 64 bits; NaN is 0. */
static uint64_t int_bits(double v)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (v >= 18446744073709551616.0 || v < -9223372036854775808.0)
        return v < 0 ? UINT64_C(1) << 63 : UINT64_MAX;
    if (v >= 9223372036854775808.0)
        return (uint64_t)v;
    return (uint64_t)(int64_t)v;
}

uint64_t cudag__value_bits(cudag_type t, double v)
{
    switch (t) {
    case CUDAG_TYPE_F16:
        return cudag__f16_bits(v);
    case CUDAG_TYPE_BF16:
        return cudag__bf16_bits(v);
    case CUDAG_TYPE_F32: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    case CUDAG_TYPE_F64: {
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    default: {
        size_t size = cudag_type_size(t);
        uint64_t u = int_bits(v);
        return size >= 8 ? u : u & ((UINT64_C(1) << (size * 8)) - 1);
    }
    }
}

static bool is_float(cudag_type t)
{
    return t == CUDAG_TYPE_F16 || t == CUDAG_TYPE_BF16 ||
           t == CUDAG_TYPE_F32 || t == CUDAG_TYPE_F64;
}

static bool is_signed(cudag_type t)
{
    return t == CUDAG_TYPE_I8 || t == CUDAG_TYPE_I16 || t == CUDAG_TYPE_I32 ||
           t == CUDAG_TYPE_I64;
}

static const char *arg_kind_name(cudag_arg_kind k)
{
    switch (k) {
    case CUDAG_ARG_BUFFER:
        return "a buffer";
    case CUDAG_ARG_INT:
        return "an integer";
    case CUDAG_ARG_FLOAT:
        return "a number";
    case CUDAG_ARG_NULL:
        return "null";
    }
    return "an invalid argument";
}

int cudag__pack_arg(const cudag_graph *g, cudag_type t, const cudag__arg *a,
                    const CUdeviceptr *bufs, uint64_t *slot, cudag_error *err)
{
    *slot = 0;
    if (t == CUDAG_TYPE_PTR) {
        if (a->kind == CUDAG_ARG_NULL)
            return CUDAG_OK;
        if (a->kind != CUDAG_ARG_BUFFER)
            return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                                  "expected a buffer for a ptr parameter, "
                                  "got %s", arg_kind_name(a->kind));
        if (a->buffer >= g->nbuffers)
            return cudag__fail_at(err, CUDAG_EUNKNOWN, a->pos,
                                  "buffer index %u out of range", a->buffer);
        const cudag__buffer *b = &g->buffers[a->buffer];
        if (a->offset >= b->count)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "offset %llu is outside buffer '%s' "
                                  "(%llu elements)",
                                  (unsigned long long)a->offset, b->name,
                                  (unsigned long long)b->count);
        *slot = bufs[a->buffer] + a->offset * cudag_type_size(b->type);
        return CUDAG_OK;
    }
    if (is_float(t)) {
        double v;
        if (a->kind == CUDAG_ARG_FLOAT)
            v = a->f;
        else if (a->kind == CUDAG_ARG_INT)
            v = (double)a->i;
        else
            return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                                  "expected a number for a %s parameter, got %s",
                                  cudag_type_name(t), arg_kind_name(a->kind));
        /* As the checker: a finite value beyond the type's largest finite
         * number is an error; an explicit infinity or NaN passes. */
        double max = t == CUDAG_TYPE_F16    ? 65504.0
                     : t == CUDAG_TYPE_BF16 ? 0x1.fep127
                     : t == CUDAG_TYPE_F32  ? FLT_MAX
                                            : DBL_MAX;
        if (isfinite(v) && fabs(v) > max)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "%g is out of range for %s", v,
                                  cudag_type_name(t));
        uint64_t bits = cudag__value_bits(t, v);
        *slot = bits;
        return CUDAG_OK;
    }
    if (a->kind != CUDAG_ARG_INT)
        return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                              "expected an integer for a %s parameter, got %s",
                              cudag_type_name(t), arg_kind_name(a->kind));
    size_t size = cudag_type_size(t);
    int64_t v = a->i;
    if (size < 8) {
        int64_t lo, hi;
        if (is_signed(t)) {
            hi = (INT64_C(1) << (size * 8 - 1)) - 1;
            lo = -hi - 1;
        } else {
            lo = 0;
            hi = (INT64_C(1) << (size * 8)) - 1;
        }
        if (v < lo || v > hi)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "%lld does not fit a %s parameter "
                                  "(%lld to %lld)",
                                  (long long)v, cudag_type_name(t),
                                  (long long)lo, (long long)hi);
        *slot = (uint64_t)v & ((UINT64_C(1) << (size * 8)) - 1);
    } else {
        /* i64 takes any value; u64 takes the bits, as the API documents. */
        *slot = (uint64_t)v;
    }
    return CUDAG_OK;
}

void cudag__error_prefix(cudag_error *err, cudag__pos pos, const char *fmt,
                         ...)
{
    if (!err)
        return;
    char pre[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t p = strlen(pre), m = strlen(err->message);
    if (p + 2 + m >= sizeof err->message)
        m = sizeof err->message - 1 - p - 2;
    memmove(err->message + p + 2, err->message, m);
    err->message[p + 2 + m] = '\0';
    memcpy(err->message, pre, p);
    err->message[p] = ':';
    err->message[p + 1] = ' ';
    err->file[0] = '\0';
    err->line = err->column = 0;
    if (pos.file) {
        snprintf(err->file, sizeof err->file, "%s", pos.file);
        err->line = (int)pos.line;
        err->column = (int)pos.col;
    }
}

/* ---- code -------------------------------------------------------------- */

void cudag__code_free(const cudag__gpu *gpu, cudag__code *c)
{
    if (c->libs)
        for (uint32_t m = 0; m < c->nmodules; m++)
            if (c->libs[m])
                gpu->drv->cuLibraryUnload(c->libs[m]);
    cudag__free(c->libs);
    cudag__free(c->funcs);
    cudag__free(c->static_smem);
    cudag__free(c->smem_set);
    cudag__free(c->binary_version);
    cudag__free(c->ptx_version);
    memset(c, 0, sizeof *c);
}

/* Where a problem with signature s points: the first node that uses it
 * (its `kernel:` value, else its key), else the signature itself. */
static cudag__pos sig_use_pos(const cudag_graph *g, uint32_t s, uint32_t node)
{
    if (node != CUDAG__NONE) {
        const cudag__node *n = &g->nodes[node];
        if (n->u.k.sig_pos.line)
            return n->u.k.sig_pos;
        if (n->pos.line)
            return n->pos;
    }
    return g->sigs[s].pos;
}

static int load_module(const cudag__gpu *gpu, const cudag_graph *g,
                       cudag__code *c, uint32_t m, cudag__pos pos,
                       cudag_error *err)
{
    const cudag__module *mod = &g->modules[m];
    const cudag__drv *d = gpu->drv;
    CUresult r = d->cuLibraryLoadFromFile(&c->libs[m], mod->path, NULL, NULL,
                                          0, NULL, NULL, 0);
    if (r == CUDA_SUCCESS)
        return CUDAG_OK;
    c->libs[m] = NULL;
    /* The driver's "file not found" says nothing about why; errno does. */
    if (access(mod->path, R_OK) != 0) {
        int e = errno;
        cudag__fail_at(err, CUDAG_EIO, pos, "cannot open module '%s' (%s): %s",
                       mod->name, mod->path, strerror(e));
        if (err)
            err->cuda_result = (int)r;
        return CUDAG_EIO;
    }
    return cudag__cu_fail(err, d, r, pos,
                          "cuLibraryLoadFromFile: cannot load module '%s' (%s)",
                          mod->name, mod->path);
}

/* Confirms parameter count and sizes against the signature: every declared
 * parameter exists with its size, and there is none after the last.  The
 * driver API has no parameter count, so the check asks for the parameter
 * after the last and expects CUDA_ERROR_INVALID_VALUE; compute-sanitizer
 * reports that expected failure as an API error (once per kernel). */
static int check_params(const cudag__gpu *gpu, const cudag_graph *g,
                        uint32_t s, CUfunction f, cudag__pos pos,
                        cudag_error *err)
{
    const cudag__sig *sig = &g->sigs[s];
    const cudag__drv *d = gpu->drv;
    for (uint32_t i = 0; i < sig->nparams; i++) {
        size_t off = 0, size = 0;
        CUresult r = d->cuFuncGetParamInfo(f, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return cudag__fail_at(err, CUDAG_EARGS, pos,
                                  "kernel '%s': the loaded code of '%s' takes "
                                  "%u parameter%s, the signature declares %u",
                                  sig->name, sig->symbol, i, i == 1 ? "" : "s",
                                  sig->nparams);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, pos,
                                  "cuFuncGetParamInfo(%s, %u)", sig->symbol, i);
        size_t want = cudag_type_size(sig->types[i]);
        if (size != want)
            return cudag__fail_at(err, CUDAG_EARGS, pos,
                                  "kernel '%s': parameter %u ('%s') is %zu "
                                  "bytes in the loaded code, but the signature "
                                  "says %s (%zu bytes)",
                                  sig->name, i, sig->pnames[i], size,
                                  cudag_type_name(sig->types[i]), want);
    }
    size_t off = 0, size = 0;
    if (d->cuFuncGetParamInfo(f, sig->nparams, &off, &size) == CUDA_SUCCESS)
        return cudag__fail_at(err, CUDAG_EARGS, pos,
                              "kernel '%s': the loaded code of '%s' takes more "
                              "than the %u parameter%s its signature declares",
                              sig->name, sig->symbol, sig->nparams,
                              sig->nparams == 1 ? "" : "s");
    return CUDAG_OK;
}

static int load_function(const cudag__gpu *gpu, const cudag_graph *g,
                         cudag__code *c, uint32_t s, cudag__pos pos,
                         cudag_error *err)
{
    const cudag__sig *sig = &g->sigs[s];
    const cudag__module *mod = &g->modules[sig->module];
    const cudag__drv *d = gpu->drv;
    CUkernel k = NULL;
    CUresult r = d->cuLibraryGetKernel(&k, c->libs[sig->module], sig->symbol);
    if (r == CUDA_ERROR_NOT_FOUND) {
        cudag__fail_at(err, CUDAG_EUNKNOWN, pos,
                       "kernel '%s': no symbol '%s' in module '%s' (%s)",
                       sig->name, sig->symbol, mod->name, mod->path);
        if (err)
            err->cuda_result = (int)r;
        return CUDAG_EUNKNOWN;
    }
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, pos,
                              "cuLibraryGetKernel: kernel '%s' (symbol '%s' in "
                              "module '%s')",
                              sig->name, sig->symbol, mod->name);
    CUfunction f = NULL;
    r = d->cuKernelGetFunction(&f, k);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, pos, "cuKernelGetFunction: kernel '%s'",
                              sig->name);
    int rc = check_params(gpu, g, s, f, pos, err);
    if (rc != CUDAG_OK)
        return rc;
    static const struct {
        CUfunction_attribute a;
        const char *name;
    } attrs[] = {
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
         "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "BINARY_VERSION"},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX_VERSION"},
    };
    int *dst[] = {&c->static_smem[s], &c->smem_set[s], &c->binary_version[s],
                  &c->ptx_version[s]};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        r = d->cuFuncGetAttribute(dst[i], attrs[i].a, f);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, pos,
                                  "cuFuncGetAttribute(%s): kernel '%s'",
                                  attrs[i].name, sig->name);
    }
    c->funcs[s] = f;
    return CUDAG_OK;
}

int cudag__code_load(const cudag__gpu *gpu, const cudag_graph *g,
                     cudag__code *c, cudag_error *err)
{
    memset(c, 0, sizeof *c);
    c->nmodules = g->nmodules;
    c->nsigs = g->nsigs;
    c->libs = cudag__calloc(g->nmodules, sizeof *c->libs);
    c->funcs = cudag__calloc(g->nsigs, sizeof *c->funcs);
    c->static_smem = cudag__calloc(g->nsigs, sizeof(int));
    c->smem_set = cudag__calloc(g->nsigs, sizeof(int));
    c->binary_version = cudag__calloc(g->nsigs, sizeof(int));
    c->ptx_version = cudag__calloc(g->nsigs, sizeof(int));
    uint32_t *first = cudag__malloc((g->nsigs + 1) * sizeof *first);
    int rc = CUDAG_OK;
    if (!c->libs || !c->funcs || !c->static_smem || !c->smem_set ||
        !c->binary_version || !c->ptx_version || !first) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory loading kernels");
        goto fail;
    }
    /* Only what some node uses is loaded: a manifest may declare many
     * kernels (and modules) a graph never launches. */
    for (uint32_t s = 0; s < g->nsigs; s++)
        first[s] = CUDAG__NONE;
    for (uint32_t n = 0; n < g->nnodes; n++) {
        const cudag__node *nd = &g->nodes[n];
        if (nd->kind == CUDAG_NODE_KERNEL && nd->u.k.sig < g->nsigs &&
            first[nd->u.k.sig] == CUDAG__NONE)
            first[nd->u.k.sig] = n;
    }
    for (uint32_t s = 0; s < g->nsigs; s++) {
        if (first[s] == CUDAG__NONE)
            continue;
        cudag__pos pos = sig_use_pos(g, s, first[s]);
        uint32_t m = g->sigs[s].module;
        if (m >= g->nmodules) {
            rc = cudag__fail_at(err, CUDAG_EUNKNOWN, pos,
                                "kernel '%s' has no module", g->sigs[s].name);
            goto fail;
        }
        if (!c->libs[m] &&
            (rc = load_module(gpu, g, c, m, pos, err)) != CUDAG_OK)
            goto fail;
        if ((rc = load_function(gpu, g, c, s, pos, err)) != CUDAG_OK)
            goto fail;
    }
    cudag__free(first);
    return CUDAG_OK;
fail:
    cudag__free(first);
    cudag__code_free(gpu, c);
    return rc;
}

bool cudag__code_can_wait(const cudag_graph *g, const cudag__code *c,
                          uint32_t sig)
{
    if (sig >= g->nsigs || !g->sigs[sig].pdl || !c->funcs[sig])
        return false;
    /* griddepcontrol.wait exists from sm_90 on; code compiled for an older
     * target, or JIT-compiled from older PTX, had it compiled out. */
    if (c->binary_version[sig] < 90)
        return false;
    return c->ptx_version[sig] == 0 || c->ptx_version[sig] >= 90;
}

/* ---- launch descriptions ---------------------------------------------- */

void cudag__launch_free(cudag__launches *l)
{
    cudag__free(l->k);
    cudag__free(l->params);
    cudag__free(l->vals);
    cudag__free(l->pbuf);
    cudag__free(l->poff);
    memset(l, 0, sizeof *l);
}

/* Default dynamic shared memory every function accepts without opting in. */
#define SMEM_DEFAULT (48u * 1024u)

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
    if (k->smem > SMEM_DEFAULT && k->smem > c->smem_set[k->sig]) {
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

int cudag__launch_prepare(const cudag__gpu *gpu, const cudag_graph *g,
                          cudag__code *c, const CUdeviceptr *bufs,
                          cudag__launches *l, cudag_error *err)
{
    memset(l, 0, sizeof *l);
    size_t total = 0;
    for (uint32_t n = 0; n < g->nnodes; n++)
        if (g->nodes[n].kind == CUDAG_NODE_KERNEL)
            total += g->nodes[n].u.k.nargs;
    l->nnodes = g->nnodes;
    l->k = cudag__calloc(g->nnodes, sizeof *l->k);
    l->params = cudag__calloc(total, sizeof *l->params);
    l->vals = cudag__calloc(total, sizeof *l->vals);
    l->pbuf = cudag__calloc(total, sizeof *l->pbuf);
    l->poff = cudag__calloc(total, sizeof *l->poff);
    int rc = CUDAG_OK;
    if (!l->k || !l->params || !l->vals || !l->pbuf || !l->poff) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory describing kernel launches");
        goto fail;
    }
    size_t at = 0;
    for (uint32_t n = 0; n < g->nnodes; n++) {
        const cudag__node *nd = &g->nodes[n];
        if (nd->kind != CUDAG_NODE_KERNEL)
            continue;
        const cudag__kernel *k = &nd->u.k;
        const cudag__sig *sig = &g->sigs[k->sig];
        cudag__launch *L = &l->k[n];
        if (k->nargs != sig->nparams) {
            rc = cudag__fail_at(err, CUDAG_EARGS,
                                k->args_pos.line ? k->args_pos : nd->pos,
                                "node '%s': %u arguments for kernel '%s', which "
                                "takes %u",
                                nd->name, k->nargs, sig->name, sig->nparams);
            goto fail;
        }
        if ((rc = prepare_smem(gpu, g, c, n, err)) != CUDAG_OK)
            goto fail;
        L->fn = c->funcs[k->sig];
        for (int i = 0; i < 3; i++) {
            L->grid[i] = (unsigned)k->grid[i];
            L->block[i] = (unsigned)k->block[i];
        }
        L->smem = (unsigned)k->smem;
        L->nparams = k->nargs;
        L->params = l->params + at;
        L->vals = l->vals + at;
        L->pbuf = l->pbuf + at;
        L->poff = l->poff + at;
        at += k->nargs;
        for (uint32_t i = 0; i < k->nargs; i++) {
            const cudag__arg *a = &k->args[i];
            rc = cudag__pack_arg(g, sig->types[i], a, bufs, &L->vals[i], err);
            if (rc != CUDAG_OK) {
                /* Say which node and argument, at the argument's position
                 * (or the node's when it has none). */
                cudag__error_prefix(err, a->pos.line ? a->pos : nd->pos,
                                    "node '%s', argument %u ('%s')", nd->name,
                                    i, sig->pnames[i]);
                goto fail;
            }
            L->params[i] = &L->vals[i];
            bool ptr = a->kind == CUDAG_ARG_BUFFER;
            L->pbuf[i] = ptr ? a->buffer : CUDAG__NONE;
            L->poff[i] = ptr ? a->offset : 0;
        }
    }
    return CUDAG_OK;
fail:
    cudag__launch_free(l);
    return rc;
}

void cudag__kernel_params(const cudag__launch *k, CUDA_KERNEL_NODE_PARAMS *p)
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

void cudag__memset_params(const cudag_graph *g, const cudag__node *n,
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

void cudag__memcpy_params(const cudag_graph *g, const cudag__node *n,
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

/* ---- edges ------------------------------------------------------------- */

int cudag__edge_kinds(const cudag__gpu *gpu, const cudag_graph *g,
                      const cudag__code *c, unsigned flags, cudag__diag *d,
                      uint8_t *kinds, unsigned *downgraded)
{
    *downgraded = 0;
    int rc = CUDAG_OK;
    for (uint32_t i = 0; i < g->nedges; i++) {
        const cudag__edge *e = &g->edges[i];
        kinds[i] = (uint8_t)e->kind;
        if (e->kind == CUDAG_EDGE_FULL)
            continue;
        if (flags & CUDAG_NO_PDL) {
            kinds[i] = CUDAG_EDGE_FULL;
            continue;
        }
        const cudag__node *from = &g->nodes[e->from], *to = &g->nodes[e->to];
        char why[600];
        why[0] = '\0';
        if (from->kind != CUDAG_NODE_KERNEL || to->kind != CUDAG_NODE_KERNEL) {
            snprintf(why, sizeof why, "both ends must be kernel nodes");
        } else if (gpu->cc_major < 9) {
            snprintf(why, sizeof why,
                     "the device (%s, compute capability %d.%d) has no "
                     "programmatic dependent launch (needs 9.0)",
                     gpu->name, gpu->cc_major, gpu->cc_minor);
        } else if (!cudag__code_can_wait(g, c, to->u.k.sig)) {
            const cudag__sig *s = &g->sigs[to->u.k.sig];
            if (!s->pdl)
                snprintf(why, sizeof why,
                         "kernel '%s' is not declared pdl, so nothing says "
                         "it waits (griddepcontrol.wait) before reading "
                         "upstream data",
                         s->name);
            else if (c->ptx_version[to->u.k.sig] &&
                     c->ptx_version[to->u.k.sig] < 90)
                snprintf(why, sizeof why,
                         "the loaded code of kernel '%s' was JIT-compiled "
                         "from compute_%d PTX, where griddepcontrol.wait is "
                         "compiled out",
                         s->name, c->ptx_version[to->u.k.sig]);
            else
                snprintf(why, sizeof why,
                         "the loaded code of kernel '%s' was built for "
                         "sm_%d, which has no griddepcontrol.wait",
                         s->name, c->binary_version[to->u.k.sig]);
        }
        if (!why[0])
            continue;
        kinds[i] = CUDAG_EDGE_FULL;
        cudag__pos pos = e->pos.line ? e->pos : to->pos;
        const char *kind = cudag_edge_kind_name(e->kind);
        int r;
        if (flags & CUDAG_STRICT) {
            r = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_EPDL, pos,
                              "%s edge '%s' -> '%s' is not safe: %s", kind,
                              from->name, to->name, why);
        } else {
            (*downgraded)++;
            r = cudag__report(d, CUDAG_SEV_WARNING, CUDAG_EPDL, pos,
                              "%s edge '%s' -> '%s' built as a full edge: %s",
                              kind, from->name, to->name, why);
        }
        if (r != CUDAG_OK && rc == CUDAG_OK)
            rc = r;
    }
    return rc;
}

/* ---- the CUgraph -------------------------------------------------------- */

void cudag__built_free(const cudag__gpu *gpu, cudag__built *b)
{
    if (b->graph)
        gpu->drv->cuGraphDestroy(b->graph);
    cudag__free(b->nodes);
    memset(b, 0, sizeof *b);
}

uint32_t cudag__built_find(const cudag__built *b, CUgraphNode h)
{
    if (!h)
        return CUDAG__NONE;
    for (uint32_t i = 0; i < b->nnodes; i++)
        if (b->nodes[i] == h)
            return i;
    return CUDAG__NONE;
}

static int add_node(const cudag__gpu *gpu, const cudag_graph *g,
                    const cudag__launches *l, const CUdeviceptr *bufs,
                    uint32_t n, cudag__built *b, cudag_error *err)
{
    const cudag__drv *d = gpu->drv;
    const cudag__node *nd = &g->nodes[n];
    CUresult r;
    const char *call;
    switch (nd->kind) {
    case CUDAG_NODE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS p;
        cudag__kernel_params(&l->k[n], &p);
        call = "cuGraphAddKernelNode";
        r = d->cuGraphAddKernelNode(&b->nodes[n], b->graph, NULL, 0, &p);
        break;
    }
    case CUDAG_NODE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS p;
        cudag__memset_params(g, nd, bufs, &p);
        call = "cuGraphAddMemsetNode";
        r = d->cuGraphAddMemsetNode(&b->nodes[n], b->graph, NULL, 0, &p,
                                    gpu->ctx);
        break;
    }
    case CUDAG_NODE_MEMCPY: {
        CUDA_MEMCPY3D p;
        cudag__memcpy_params(g, nd, bufs, &p);
        call = "cuGraphAddMemcpyNode";
        r = d->cuGraphAddMemcpyNode(&b->nodes[n], b->graph, NULL, 0, &p,
                                    gpu->ctx);
        break;
    }
    default:
        return cudag__fail_at(err, CUDAG_EINVAL, nd->pos,
                              "node '%s' has an invalid kind", nd->name);
    }
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, nd->pos, "%s for node '%s'", call,
                              nd->name);
    return CUDAG_OK;
}

static int add_edge(const cudag__gpu *gpu, const cudag_graph *g,
                    cudag__built *b, uint32_t from, uint32_t to,
                    cudag_edge_kind kind, cudag__pos pos, cudag_error *err)
{
    CUgraphEdgeData ed;
    memset(&ed, 0, sizeof ed);
    if (kind == CUDAG_EDGE_PROGRAMMATIC) {
        ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
        ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    } else if (kind == CUDAG_EDGE_LAUNCH_ORDER) {
        ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
        ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    }
    CUresult r = gpu->drv->cuGraphAddDependencies(b->graph, &b->nodes[from],
                                                  &b->nodes[to], &ed, 1);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, gpu->drv, r,
                              pos.line ? pos : g->nodes[to].pos,
                              "cuGraphAddDependencies for the %s edge '%s' -> "
                              "'%s'",
                              cudag_edge_kind_name(kind), g->nodes[from].name,
                              g->nodes[to].name);
    return CUDAG_OK;
}

/* In the serial chain, consecutive nodes keep the kind of the edge written
 * between them (what capturing PDL launches on one stream records); any other
 * pair gets a full edge. */
static cudag_edge_kind serial_kind(const cudag_graph *g, const uint8_t *kinds,
                                   uint32_t from, uint32_t to)
{
    const cudag__topo *t = &g->topo;
    if (!kinds || !t->out_start)
        return CUDAG_EDGE_FULL;
    for (uint32_t i = t->out_start[from]; i < t->out_start[from + 1]; i++)
        if (g->edges[t->out_edge[i]].to == to)
            return (cudag_edge_kind)kinds[t->out_edge[i]];
    return CUDAG_EDGE_FULL;
}

int cudag__build(const cudag__gpu *gpu, const cudag_graph *g,
                 const cudag__launches *l, const CUdeviceptr *bufs,
                 const uint8_t *kinds, int mode, cudag__built *b,
                 cudag_error *err)
{
    memset(b, 0, sizeof *b);
    int rc = CUDAG_OK;
    b->nodes = cudag__calloc(g->nnodes, sizeof *b->nodes);
    if (!b->nodes) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory building the graph");
        goto fail;
    }
    b->nnodes = g->nnodes;
    CUresult r = gpu->drv->cuGraphCreate(&b->graph, 0);
    if (r != CUDA_SUCCESS) {
        b->graph = NULL;
        rc = cudag__cu_fail(err, gpu->drv, r, CUDAG__NOPOS, "cuGraphCreate");
        goto fail;
    }
    /* Nodes first, edges after: every dependency then goes through one
     * call that carries its edge data, in an order that does not depend on
     * how the nodes were declared. */
    for (uint32_t n = 0; n < g->nnodes; n++)
        if ((rc = add_node(gpu, g, l, bufs, n, b, err)) != CUDAG_OK)
            goto fail;
    const cudag__topo *t = &g->topo;
    if (mode == CUDAG__BUILD_SERIAL) {
        for (uint32_t i = 1; i < g->nnodes; i++) {
            uint32_t from = t->order ? t->order[i - 1] : i - 1;
            uint32_t to = t->order ? t->order[i] : i;
            rc = add_edge(gpu, g, b, from, to, serial_kind(g, kinds, from, to),
                          g->nodes[to].pos, err);
            if (rc != CUDAG_OK)
                goto fail;
        }
        return CUDAG_OK;
    }
    for (uint32_t i = 0; i < g->nedges; i++) {
        /* The checker's CSR lists edges sorted by (from, to); a graph it
         * has not sorted (none today) falls back to declaration order. */
        uint32_t e = t->out_edge ? t->out_edge[i] : i;
        const cudag__edge *ed = &g->edges[e];
        cudag_edge_kind kind = CUDAG_EDGE_FULL;
        if (mode == CUDAG__BUILD_EDGES && kinds)
            kind = (cudag_edge_kind)kinds[e];
        rc = add_edge(gpu, g, b, ed->from, ed->to, kind, ed->pos, err);
        if (rc != CUDAG_OK)
            goto fail;
    }
    return CUDAG_OK;
fail:
    cudag__built_free(gpu, b);
    return rc;
}
