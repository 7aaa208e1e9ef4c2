/* build.c — checked IR → CUDA graph: loads the kernels' code and checks it
 * against the signatures, describes each kernel launch once, decides which
 * programmatic edges are safe, and adds nodes and edges to a CUgraph — the
 * sub-graphs' too (kind.h, "Sub-graphs"), each into the driver graph its
 * node made for it, in the tree's flat numbering (ir/graph.h, topo.tree). */
#include "build/build.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "code/binary.h"
#include "code/compile.h"
#include "gpu/gpu.h"
#include "kinds/kind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    cudag__free(c->symbols);
    cudag__free(c->entries);
    cudag__free(c->origin);
    cudag__free(c->load_ns);
    cudag__arena_free(&c->arena);
    memset(c, 0, sizeof *c);
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

/* Compiles CUDA source module m for the device (through the cache), loads
 * the cubin with cuLibraryLoadData, and learns each used signature's
 * symbol (lowered by NVRTC where the signature names an expression) and
 * entry point (parameters, waits) from the PTX.  used[s] marks the
 * signatures some node launches.  Compile errors go to d. */
static int load_source(const cudag__gpu *gpu, const cudag_graph *g,
                       cudag__code *c, uint32_t m, const bool *used,
                       unsigned flags, cudag__diag *d, cudag_error *err)
{
    const cudag__module *mod = &g->modules[m];
    cudag__pos pos = mod->path_pos.line ? mod->path_pos : mod->pos;
    /* The names NVRTC lowers: what the front end marked, and a declared
     * symbol that is a template instance (cudag_add_signature's "axpy<float>"). */
#define EXPR_OF(sig) ((sig)->expr ? (sig)->expr                               \
                      : strchr((sig)->symbol, '<') ? (sig)->symbol : NULL)
    uint32_t nexpr = 0;
    for (uint32_t s = 0; s < g->nsigs; s++)
        nexpr += used[s] && g->sigs[s].module == m && EXPR_OF(&g->sigs[s]);
    const char **exprs = cudag__calloc(nexpr + 1, sizeof *exprs);
    uint32_t *which = cudag__calloc(nexpr + 1, sizeof *which);
    if (!exprs || !which) {
        cudag__free(exprs);
        cudag__free(which);
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    }
    nexpr = 0;
    for (uint32_t s = 0; s < g->nsigs; s++)
        if (used[s] && g->sigs[s].module == m && EXPR_OF(&g->sigs[s])) {
            which[nexpr] = s;
            exprs[nexpr++] = EXPR_OF(&g->sigs[s]);
        }
#undef EXPR_OF
    cudag__compile_req q;
    memset(&q, 0, sizeof q);
    q.module = mod->name;
    q.pos = pos;
    q.path = mod->path;
    q.text = mod->text;
    q.len = mod->len;
    q.dir = mod->dir;
    q.options = mod->options;
    q.std = mod->std;
    q.exprs = exprs;
    q.nexprs = nexpr;
    q.cc_major = gpu->cc_major;
    q.cc_minor = gpu->cc_minor;
    q.no_cache = (flags & CUDAG_NO_CACHE) != 0;
    q.cache_warned = &c->cache_warned;
    cudag__compiled cc;
    int rc = cudag__compile(&q, &cc, d);
    if (rc != CUDAG_OK) {
        cudag__free(exprs);
        cudag__free(which);
        return rc;
    }
    c->compiled += !cc.cached;
    c->cached += cc.cached;
    c->origin[m] = cc.cached ? CUDAG_MODULE_CACHED : CUDAG_MODULE_COMPILED;
    CUresult r = gpu->drv->cuLibraryLoadData(&c->libs[m], cc.cubin, NULL,
                                             NULL, 0, NULL, NULL, 0);
    if (r != CUDA_SUCCESS) {
        c->libs[m] = NULL;
        rc = cudag__cu_fail(err, gpu->drv, r, pos,
                            "cuLibraryLoadData: cannot load module '%s' (%s) "
                            "compiled for sm_%d%d",
                            mod->name, mod->path, gpu->cc_major,
                            gpu->cc_minor);
    }
    cudag__code_info *info = cudag__arena_alloc(&c->arena, sizeof *info);
    if (rc == CUDAG_OK &&
        (!info || cudag__code_read(&c->arena, cc.ptx, cc.ptx_len, info, err) !=
                      CUDAG_OK))
        rc = cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    for (uint32_t i = 0; rc == CUDAG_OK && i < nexpr; i++)
        if (!(c->symbols[which[i]] =
                  cudag__arena_strdup(&c->arena, cc.lowered[i])))
            rc = cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    for (uint32_t s = 0; rc == CUDAG_OK && s < g->nsigs; s++)
        if (used[s] && g->sigs[s].module == m)
            c->entries[s] = cudag__code_find(
                info, c->symbols[s] ? c->symbols[s] : g->sigs[s].symbol);
    cudag__compiled_free(&cc);
    cudag__free(exprs);
    cudag__free(which);
    return rc;
}

/* Confirms the parameters against the signature with cuFuncGetParamInfo.
 * The count comes from the code itself where the CPU could read it (the PTX
 * .entry list, the cubin's parameter records): then only existing
 * parameters are asked for.  Otherwise (a compressed fatbin, a program's
 * handle) the parameter after the last is asked for and must not exist;
 * compute-sanitizer reports that expected failure as an API error. */
static int check_params(const cudag__gpu *gpu, const cudag_graph *g,
                        const cudag__code *c, uint32_t s, CUfunction f,
                        cudag__pos pos, cudag_error *err)
{
    const cudag__sig *sig = &g->sigs[s];
    const cudag__code_entry *e = c->entries[s];
    const char *sym = c->symbols[s] ? c->symbols[s] : sig->symbol;
    const cudag__drv *d = gpu->drv;
    bool counted = e && e->nparams != CUDAG__CODE_UNKNOWN;
    if (counted && e->nparams != sig->nparams)
        return cudag__fail_at(err, CUDAG_EARGS, pos,
                              "kernel '%s': the loaded code of '%s' takes %u "
                              "parameter%s, the signature declares %u",
                              sig->name, sym, e->nparams,
                              e->nparams == 1 ? "" : "s", sig->nparams);
    for (uint32_t i = 0; i < sig->nparams; i++) {
        size_t off = 0, size = 0;
        CUresult r = d->cuFuncGetParamInfo(f, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            return cudag__fail_at(err, CUDAG_EARGS, pos,
                                  "kernel '%s': the loaded code of '%s' takes "
                                  "%u parameter%s, the signature declares %u",
                                  sig->name, sym, i, i == 1 ? "" : "s",
                                  sig->nparams);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, pos,
                                  "cuFuncGetParamInfo(%s, %u)", sym, i);
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
    if (!counted &&
        d->cuFuncGetParamInfo(f, sig->nparams, &off, &size) == CUDA_SUCCESS)
        return cudag__fail_at(err, CUDAG_EARGS, pos,
                              "kernel '%s': the loaded code of '%s' takes more "
                              "than the %u parameter%s its signature declares",
                              sig->name, sym, sig->nparams,
                              sig->nparams == 1 ? "" : "s");
    return CUDAG_OK;
}

/* The CUfunction of signature s: its module's symbol, or the program's own
 * handle. */
static int find_function(const cudag__gpu *gpu, const cudag_graph *g,
                         const cudag__code *c, uint32_t s, cudag__pos pos,
                         CUfunction *f, cudag_error *err)
{
    const cudag__sig *sig = &g->sigs[s];
    const cudag__drv *d = gpu->drv;
    CUkernel k = NULL;
    CUresult r;
    if (sig->handle_kind == CUDAG__HANDLE_FUNCTION) {
        *f = sig->handle;
        return CUDAG_OK;
    }
    if (sig->handle_kind == CUDAG__HANDLE_KERNEL) {
        k = sig->handle;
    } else {
        const cudag__module *mod = &g->modules[sig->module];
        const char *sym = c->symbols[s] ? c->symbols[s] : sig->symbol;
        r = d->cuLibraryGetKernel(&k, c->libs[sig->module], sym);
        if (r == CUDA_ERROR_NOT_FOUND) {
            cudag__fail_at(err, CUDAG_EUNKNOWN, pos,
                           "kernel '%s': no symbol '%s' in module '%s' (%s)",
                           sig->name, sym, mod->name, mod->path);
            if (err)
                err->cuda_result = (int)r;
            return CUDAG_EUNKNOWN;
        }
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, pos,
                                  "cuLibraryGetKernel: kernel '%s' (symbol "
                                  "'%s' in module '%s')",
                                  sig->name, sym, mod->name);
    }
    r = d->cuKernelGetFunction(f, k);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, pos,
                              "cuKernelGetFunction: kernel '%s'", sig->name);
    return CUDAG_OK;
}

static int load_function(const cudag__gpu *gpu, const cudag_graph *g,
                         cudag__code *c, uint32_t s, cudag__pos pos,
                         cudag_error *err)
{
    const cudag__sig *sig = &g->sigs[s];
    const cudag__drv *d = gpu->drv;
    CUfunction f = NULL;
    int rc = find_function(gpu, g, c, s, pos, &f, err);
    if (rc == CUDAG_OK)
        rc = check_params(gpu, g, c, s, f, pos, err);
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
        CUresult r = d->cuFuncGetAttribute(dst[i], attrs[i].a, f);
        if (r != CUDA_SUCCESS)
            return cudag__cu_fail(err, d, r, pos,
                                  "cuFuncGetAttribute(%s): kernel '%s'",
                                  attrs[i].name, sig->name);
    }
    c->funcs[s] = f;
    return CUDAG_OK;
}

/* The signature whose code node n launches (CUDAG__NONE for none) and, in
 * *pos when pos is not NULL, where the node names it. */
static uint32_t node_code(const cudag__node *n, cudag__pos *pos)
{
    const cudag__kind_ops *k = cudag__kind(n->kind);
    cudag__pos where = n->pos;
    uint32_t s = k && k->code ? k->code(n, &where) : CUDAG__NONE;
    if (pos)
        *pos = where;
    return s;
}

int cudag__code_load(const cudag__gpu *gpu, const cudag_graph *g,
                     unsigned flags, cudag__diag *d, cudag__code *c,
                     cudag_error *err)
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
    c->symbols = cudag__calloc(g->nsigs, sizeof *c->symbols);
    c->entries = cudag__calloc(g->nsigs, sizeof *c->entries);
    c->origin = cudag__calloc(g->nmodules + 1, sizeof *c->origin);
    c->load_ns = cudag__calloc(g->nmodules + 1, sizeof *c->load_ns);
    uint32_t *first = cudag__malloc((g->nsigs + 1) * sizeof *first);
    bool *used = cudag__calloc(g->nsigs + 1, sizeof *used);
    int rc = CUDAG_OK;
    if (!c->libs || !c->funcs || !c->static_smem || !c->smem_set ||
        !c->binary_version || !c->ptx_version || !c->symbols ||
        !c->entries || !c->origin || !c->load_ns || !first || !used) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory loading kernels");
        goto fail;
    }
    /* Only what some node uses is loaded: a manifest may declare many
     * kernels (and modules) a graph never launches. */
    for (uint32_t s = 0; s < g->nsigs; s++)
        first[s] = CUDAG__NONE;
    uint32_t total = cudag__tree_nnodes(g);
    for (uint32_t n = 0; n < total; n++) {
        uint32_t s = node_code(cudag__tree_node(g, n), NULL);
        if (s < g->nsigs && first[s] == CUDAG__NONE) {
            first[s] = n;
            used[s] = true;
        }
    }
    for (uint32_t s = 0; s < g->nsigs; s++) {
        if (first[s] == CUDAG__NONE)
            continue;
        /* Where a problem with the code points: where the first node that
         * uses it names it, else the signature itself. */
        cudag__pos pos;
        node_code(cudag__tree_node(g, first[s]), &pos);
        if (!pos.line)
            pos = g->sigs[s].pos;
        uint32_t m = g->sigs[s].module;
        if (m >= g->nmodules && !g->sigs[s].handle) {
            rc = cudag__fail_at(err, CUDAG_EUNKNOWN, pos,
                                "kernel '%s' has no module", g->sigs[s].name);
            goto fail;
        }
        if (m < g->nmodules && !c->libs[m]) {
            const cudag__module *mod = &g->modules[m];
            uint64_t t0 = cudag__now_ns();
            if (mod->kind == CUDAG__CODE_SOURCE) {
                rc = load_source(gpu, g, c, m, used, flags, d, err);
            } else {
                rc = load_module(gpu, g, c, m, pos, err);
                c->origin[m] = CUDAG_MODULE_FILE;
            }
            c->load_ns[m] = cudag__now_ns() - t0;
            if (rc != CUDAG_OK)
                goto fail;
        }
        /* A module file read on the CPU lists its entry points. */
        if (m < g->nmodules && !c->entries[s] && g->modules[m].code)
            c->entries[s] = cudag__code_find(g->modules[m].code,
                                             g->sigs[s].symbol);
        if ((rc = load_function(gpu, g, c, s, pos, err)) != CUDAG_OK)
            goto fail;
    }
    cudag__free(first);
    cudag__free(used);
    return CUDAG_OK;
fail:
    cudag__free(first);
    cudag__free(used);
    cudag__code_free(gpu, c);
    return rc;
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

int cudag__launch_prepare(const cudag__gpu *gpu, const cudag_graph *g,
                          cudag__code *c, const CUdeviceptr *bufs,
                          cudag__launches *l, cudag_error *err)
{
    memset(l, 0, sizeof *l);
    size_t total = 0;
    uint32_t nn = cudag__tree_nnodes(g);
    for (uint32_t n = 0; n < nn; n++) {
        const cudag__node *node = cudag__tree_node(g, n);
        const cudag__kind_ops *k = cudag__kind(node->kind);
        if (k && k->launch_slots)
            total += k->launch_slots(node);
    }
    l->nnodes = nn;
    l->k = cudag__calloc(nn, sizeof *l->k);
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
    /* Graph by graph: a kind's describe step reads its node in its own
     * graph (b.g). */
    for (uint32_t i = 0; i < cudag__tree_ngraphs(g); i++) {
        const cudag_graph *h = cudag__tree_graph(g, i);
        cudag__build_ctx b = {gpu, h, c, bufs, NULL, NULL, NULL, NULL, NULL,
                              NULL};
        for (uint32_t n = 0; n < h->nnodes; n++) {
            const cudag__kind_ops *k = cudag__kind(h->nodes[n].kind);
            if (!k || !k->describe)
                continue;
            cudag__launch *L = &l->k[h->node_base + n];
            uint32_t slots =
                k->launch_slots ? k->launch_slots(&h->nodes[n]) : 0;
            L->params = l->params + at;
            L->vals = l->vals + at;
            L->pbuf = l->pbuf + at;
            L->poff = l->poff + at;
            at += slots;
            if ((rc = k->describe(&b, n, L, err)) != CUDAG_OK)
                goto fail;
            l->priorities |= L->has_priority;
        }
    }
    return CUDAG_OK;
fail:
    cudag__launch_free(l);
    return rc;
}

/* ---- edges ------------------------------------------------------------- */

/* What the nodes one side of an edge reaches say of a programmatic edge
 * (build_end): the first without a kernel-node port, whether any runs
 * kernels of its own (pdl_full), and the first reason a downstream kernel
 * will not wait. */
typedef struct end_state {
    cudag__build_ctx b;         /* b.g: the graph of the node asked */
    bool to, full;
    const cudag__node *bad;
    char why[600];
} end_state;

static bool build_end(void *user, const cudag_graph *h, uint32_t n)
{
    end_state *s = user;
    const cudag__node *nd = &h->nodes[n];
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (k && k->pdl_full) {
        s->full = true;
        return true;
    }
    if (!k || !k->pdl_end) {
        if (!s->bad)
            s->bad = nd;
        return true;
    }
    if (s->to && !s->why[0] && k->pdl_wait) {
        s->b.g = h;
        k->pdl_wait(&s->b, nd, s->why, sizeof s->why);
    }
    return true;
}

/* How edge e of graph h (a graph of g's tree) is built, into *kind; a
 * downgrade is reported to d.  Returns the report's status. */
static int edge_kind(const cudag__gpu *gpu, const cudag_graph *h,
                     const cudag__code *c, unsigned flags, cudag__diag *d,
                     uint32_t e, uint8_t *kind, unsigned *downgraded)
{
    const cudag__edge *ed = &h->edges[e];
    *kind = (uint8_t)ed->kind;
    if (ed->kind == CUDAG_EDGE_FULL)
        return CUDAG_OK;
    if (flags & CUDAG_NO_PDL) {
        *kind = CUDAG_EDGE_FULL;
        return CUDAG_OK;
    }
    const cudag__node *from = &h->nodes[ed->from], *to = &h->nodes[ed->to];
    /* The code is only read here. */
    end_state fs, ts;
    memset(&fs, 0, sizeof fs);
    fs.b = (cudag__build_ctx){gpu, h, (cudag__code *)(uintptr_t)c, NULL, NULL,
                              NULL, NULL, NULL, NULL, NULL};
    ts = fs;
    ts.to = true;
    cudag__edge_side(h, ed, false, build_end, &fs);
    cudag__edge_side(h, ed, true, build_end, &ts);
    if (fs.full || ts.full) {
        /* The checker warned at the edge already. */
        *kind = CUDAG_EDGE_FULL;
        (*downgraded)++;
        return CUDAG_OK;
    }
    char why[600];
    why[0] = '\0';
    if (fs.bad || ts.bad) {
        snprintf(why, sizeof why, "both ends must be kernel nodes");
    } else if (gpu->cc_major < 9) {
        snprintf(why, sizeof why,
                 "the device (%s, compute capability %d.%d) has no "
                 "programmatic dependent launch (needs 9.0)",
                 gpu->name, gpu->cc_major, gpu->cc_minor);
    } else if (ts.why[0]) {
        snprintf(why, sizeof why, "%s", ts.why);
    }
    if (!why[0])
        return CUDAG_OK;
    *kind = CUDAG_EDGE_FULL;
    cudag__pos pos = ed->pos.line ? ed->pos : to->pos;
    const char *kname = cudag_edge_kind_name(ed->kind);
    if (flags & CUDAG_STRICT)
        return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_EPDL, pos,
                             "%s edge '%s' -> '%s' is not safe: %s", kname,
                             from->name, to->name, why);
    (*downgraded)++;
    return cudag__report(d, CUDAG_SEV_WARNING, CUDAG_EPDL, pos,
                         "%s edge '%s' -> '%s' built as a full edge: %s",
                         kname, from->name, to->name, why);
}

int cudag__edge_kinds(const cudag__gpu *gpu, const cudag_graph *g,
                      const cudag__code *c, unsigned flags, cudag__diag *d,
                      uint8_t *kinds, unsigned *downgraded)
{
    *downgraded = 0;
    int rc = CUDAG_OK;
    for (uint32_t i = 0; i < cudag__tree_ngraphs(g); i++) {
        const cudag_graph *h = cudag__tree_graph(g, i);
        for (uint32_t e = 0; e < h->nedges; e++) {
            int r = edge_kind(gpu, h, c, flags, d, e,
                              &kinds[h->edge_base + e], downgraded);
            if (r != CUDAG_OK && rc == CUDAG_OK)
                rc = r;
        }
    }
    return rc;
}

/* ---- the CUgraph -------------------------------------------------------- */

void cudag__built_free(const cudag__gpu *gpu, cudag__built *b)
{
    /* The driver frees the body graphs with their conditional nodes. */
    if (b->graph)
        gpu->drv->cuGraphDestroy(b->graph);
    /* After the graph: nothing in it points at what the list holds now. */
    while (b->keep) {
        cudag__keep *k = b->keep;
        b->keep = k->next;
        k->release(gpu, k);
    }
    cudag__free(b->nodes);
    cudag__free(b->handles);
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

static int add_node(const cudag__build_ctx *bc, uint32_t n, CUgraph graph,
                    cudag_error *err)
{
    const cudag__node *nd = &bc->g->nodes[n];
    const cudag__kind_ops *k = cudag__kind(nd->kind);
    if (!k)
        return cudag__fail_at(err, CUDAG_EINVAL, nd->pos,
                              "node '%s' has an invalid kind", nd->name);
    return k->add(bc, n, graph, &bc->tree_nodes[bc->g->node_base + n], err);
}

/* Edge from -> to of g, into `graph`: one dependency for each pair of the
 * nodes its ends reach (cudag__edge_reach: a child graph built inline joins
 * by its last nodes, or its first), all of the edge's kind.  The walk over
 * the upstream end (add_from) walks the downstream one for each node it
 * reaches (add_pair). */
typedef struct edge_add {
    const cudag__build_ctx *bc;
    const cudag_graph *g;       /* the edge's graph */
    CUgraph graph;
    uint32_t from, to;
    CUgraphEdgeData ed;
    cudag_edge_kind kind;
    cudag__pos pos;
    CUgraphNode src;            /* the upstream node of the pair */
    cudag_error *err;
    int rc;
} edge_add;

static bool add_pair(void *user, const cudag_graph *h, uint32_t n)
{
    edge_add *a = user;
    CUgraphNode dst = a->bc->tree_nodes[h->node_base + n];
    const cudag__gpu *gpu = a->bc->gpu;
    CUresult r = gpu->drv->cuGraphAddDependencies(a->graph, &a->src, &dst,
                                                  &a->ed, 1);
    if (r == CUDA_SUCCESS)
        return true;
    const cudag_graph *g = a->g;
    a->rc = cudag__cu_fail(a->err, gpu->drv, r,
                           a->pos.line ? a->pos : g->nodes[a->to].pos,
                           "cuGraphAddDependencies for the %s edge '%s' -> "
                           "'%s'",
                           cudag_edge_kind_name(a->kind), g->nodes[a->from].name,
                           g->nodes[a->to].name);
    return false;
}

static bool add_from(void *user, const cudag_graph *h, uint32_t n)
{
    edge_add *a = user;
    a->src = a->bc->tree_nodes[h->node_base + n];
    return cudag__edge_reach(a->g, a->to, false, add_pair, a);
}

static int add_edge(const cudag__build_ctx *bc, const cudag_graph *g,
                    CUgraph graph, uint32_t from, uint32_t to,
                    cudag_edge_kind kind, cudag__pos pos, cudag_error *err)
{
    edge_add a = {.bc = bc, .g = g, .graph = graph, .from = from, .to = to,
                  .kind = kind, .pos = pos, .err = err, .rc = CUDAG_OK};
    if (kind == CUDAG_EDGE_PROGRAMMATIC) {
        a.ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
        a.ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    } else if (kind == CUDAG_EDGE_LAUNCH_ORDER) {
        a.ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
        a.ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    }
    cudag__edge_reach(g, from, true, add_from, &a);
    return a.rc;
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
            return (cudag_edge_kind)kinds[g->edge_base + t->out_edge[i]];
    return CUDAG_EDGE_FULL;
}

/* What the build of one tree passes down to each graph of it. */
typedef struct build_state {
    cudag__build_ctx ctx;       /* ctx.g and ctx.l change per graph */
    const cudag__launches *all; /* the whole tree's descriptions */
    const uint8_t *kinds;       /* per edge of the tree, or NULL */
    int mode;
} build_state;

/* Adds graph h's nodes and edges to `graph`: each node's prepare step
 * first (a condition's handle exists before the kernels that set it), then
 * the nodes in index order (a node with sub-graphs fills them through
 * build_sub), then the edges in the checker's (from, to) order. */
static int build_into(const build_state *st, const cudag_graph *h,
                      CUgraph graph, cudag_error *err)
{
    build_state in = *st;
    cudag__launches l;
    if (st->all) {
        /* The kinds index descriptions by their node in h. */
        l = *st->all;
        l.k += h->node_base;
        l.nnodes = h->nnodes;
        in.ctx.l = &l;
    }
    in.ctx.g = h;
    const cudag__build_ctx *bc = &in.ctx;
    int rc;
    for (uint32_t n = 0; n < h->nnodes; n++) {
        const cudag__kind_ops *k = cudag__kind(h->nodes[n].kind);
        if (k && k->prepare && (rc = k->prepare(bc, n, graph, err)) != CUDAG_OK)
            return rc;
    }
    for (uint32_t n = 0; n < h->nnodes; n++)
        if ((rc = add_node(bc, n, graph, err)) != CUDAG_OK)
            return rc;
    const cudag__topo *t = &h->topo;
    if (st->mode == CUDAG__BUILD_SERIAL) {
        for (uint32_t i = 1; i < h->nnodes; i++) {
            uint32_t from = t->order ? t->order[i - 1] : i - 1;
            uint32_t to = t->order ? t->order[i] : i;
            rc = add_edge(bc, h, graph, from, to,
                          serial_kind(h, st->kinds, from, to),
                          h->nodes[to].pos, err);
            if (rc != CUDAG_OK)
                return rc;
        }
        return CUDAG_OK;
    }
    for (uint32_t i = 0; i < h->nedges; i++) {
        /* The checker's CSR lists edges sorted by (from, to); a graph it
         * has not sorted (none today) falls back to declaration order. */
        uint32_t e = t->out_edge ? t->out_edge[i] : i;
        const cudag__edge *ed = &h->edges[e];
        cudag_edge_kind kind = CUDAG_EDGE_FULL;
        if (st->mode == CUDAG__BUILD_EDGES && st->kinds)
            kind = (cudag_edge_kind)st->kinds[h->edge_base + e];
        rc = add_edge(bc, h, graph, ed->from, ed->to, kind, ed->pos, err);
        if (rc != CUDAG_OK)
            return rc;
    }
    return CUDAG_OK;
}

/* ctx.build_sub (kind.h): the ctx is the one build_into handed the kind,
 * the first member of its build_state. */
static int build_sub_graph(const cudag__build_ctx *b, const cudag_graph *sub,
                           CUgraph graph, cudag_error *err)
{
    const build_state *st = (const build_state *)(const void *)b;
    return build_into(st, sub, graph, err);
}

int cudag__build(const cudag__gpu *gpu, const cudag_graph *g,
                 const cudag__launches *l, const CUdeviceptr *bufs,
                 const uint8_t *kinds, const int64_t *starts, int mode,
                 cudag__built *b, cudag_error *err)
{
    memset(b, 0, sizeof *b);
    int rc = CUDAG_OK;
    uint32_t nn = cudag__tree_nnodes(g);
    b->nodes = cudag__calloc(nn, sizeof *b->nodes);
    b->handles = cudag__calloc((size_t)g->nconds + 1, sizeof *b->handles);
    if (!b->nodes || !b->handles) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory building the graph");
        goto fail;
    }
    b->nnodes = nn;
    CUresult r = gpu->drv->cuGraphCreate(&b->graph, 0);
    if (r != CUDA_SUCCESS) {
        b->graph = NULL;
        rc = cudag__cu_fail(err, gpu->drv, r, CUDAG__NOPOS, "cuGraphCreate");
        goto fail;
    }
    /* Nodes first, edges after: every dependency then goes through one
     * call that carries its edge data, in an order that does not depend on
     * how the nodes were declared. */
    build_state st;
    memset(&st, 0, sizeof st);
    st.ctx.gpu = gpu;
    st.ctx.bufs = bufs;
    st.ctx.handles = b->handles;
    st.ctx.starts = starts;
    st.ctx.build_sub = build_sub_graph;
    st.ctx.tree_nodes = b->nodes;
    st.ctx.keep = &b->keep;
    st.all = l;
    st.kinds = kinds;
    st.mode = mode;
    if ((rc = build_into(&st, g, b->graph, err)) != CUDAG_OK)
        goto fail;
    return CUDAG_OK;
fail:
    cudag__built_free(gpu, b);
    return rc;
}
