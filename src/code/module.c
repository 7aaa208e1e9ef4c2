/* module.c — what the CPU learns of a graph's kernel code: a module file
 * mapped and sniffed, its entry points listed; a CUDA source read with its
 * headers for its kernels; signatures made from those kernels, or checked
 * against the entry points; and cudag_add_module_source(). */
#include "code/module.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/file.h"
#include "base/text.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "code/binary.h"
#include "code/cache.h"
#include "code/compile.h"
#include "code/ctype.h"
#include "code/decls.h"
#include "code/headers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

/* The -D options of a module, for the declaration reader ("NAME=VALUE"). */
static const char **defines_of(cudag__arena *a, const char *const *opts)
{
    size_t n = 0;
    while (opts && opts[n])
        n++;
    const char **d = cudag__arena_alloc(a, (n + 1) * sizeof *d);
    if (!d)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(opts[i], "-D", 2) == 0)
            d[k++] = opts[i][2] ? opts[i] + 2 : opts[i + 1] ? opts[++i] : "";
        else if (strncmp(opts[i], "--define-macro=", 15) == 0)
            d[k++] = opts[i] + 15;
    }
    return d;
}

static int source_decls(cudag_graph *g, cudag__module *m, cudag__pos pos,
                        cudag_error *err)
{
    /* The reader takes -D options as defines; every option goes to gather
     * for its -I directories. */
    const char **defs = defines_of(&g->arena, m->options);
    if (!defs)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    cudag__src_text main = {m->path, m->text, m->len}, *texts;
    uint32_t n, nb;
    const cudag__src_text *bi = cudag__builtin_headers(&nb);
    cudag__src_decls *d = cudag__arena_alloc(&g->arena, sizeof *d);
    if (!d)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    int rc = cudag__src_gather(&g->arena, &main, m->dir, m->options, NULL, bi,
                               nb, &texts, &n, err);
    if (rc == CUDAG_OK)
        rc = cudag__src_read(&g->arena, texts, n, defs, d, err);
    if (rc != CUDAG_OK)
        return rc;
    m->decls = d;
    m->kind = CUDAG__CODE_SOURCE;
    return CUDAG_OK;
}

/*
 * Makes m a CUDA source held in memory: copies text[0..len) and reads its
 * kernels (headers through m->options' -I directories only).  Errors:
 * CUDAG_ETYPE for text that is not (NUL bytes, invalid UTF-8),
 * CUDAG_ELIMIT over CUDAG__MAX_SOURCE_BYTES, CUDAG_ENOMEM.
 */
static int module_set_source(cudag_graph *g, cudag__module *m,
                             const char *text, size_t len, cudag__pos pos,
                             cudag_error *err)
{
    if (len > CUDAG__MAX_SOURCE_BYTES)
        return cudag__fail_at(err, CUDAG_ELIMIT, pos,
                              "module '%s': the source is %zu bytes (at most "
                              "%u)",
                              m->name, len, CUDAG__MAX_SOURCE_BYTES);
    if (cudag__code_sniff(text, len, NULL) != CUDAG__CODE_SOURCE)
        return cudag__fail_at(err, CUDAG_ETYPE, pos,
                              "module '%s': the source is not text (a NUL "
                              "byte or invalid UTF-8)",
                              m->name);
    char *copy = cudag__arena_strndup(&g->arena, text, len);
    if (!copy)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    m->text = copy;
    m->len = len;
    return source_decls(g, m, pos, err);
}

/* Why a module's code of this kind cannot be used as given, or CUDAG_OK:
 * options or std on code that is not source, a host object file, or no
 * kernel code at all. */
static int refuse_kind(const cudag__module *m, int kind, bool source_name,
                       cudag__pos pos, cudag_error *err)
{
    if (kind != CUDAG__CODE_SOURCE && (m->options || m->std))
        return cudag__fail_at(err, CUDAG_ETYPE, pos,
                              "module '%s': options and std apply to CUDA "
                              "source (.cu), and '%s' is %s",
                              m->name, m->path,
                              kind == CUDAG__CODE_PTX ? "PTX"
                              : kind == CUDAG__CODE_OTHER
                                  ? "not kernel code"
                                  : kind == CUDAG__CODE_CUBIN ? "a cubin"
                                                              : "a fatbin");
    if (kind == CUDAG__CODE_HOSTOBJ)
        return cudag__fail_at(err, CUDAG_ETYPE, pos,
                              "module '%s': '%s' is a host object file (nvcc "
                              "-c), which the driver cannot load: build a "
                              "fatbin (nvcc -fatbin -arch=sm_90 FILE.cu -o "
                              "FILE.fatbin) or list the .cu",
                              m->name, m->path);
    if (kind != CUDAG__CODE_OTHER)
        return CUDAG_OK;
    /* A .cu that is not text (a NUL byte, invalid UTF-8) says so. */
    if (source_name)
        return cudag__fail_at(err, CUDAG_ETYPE, pos,
                              "module '%s': '%s' is not text (a NUL byte or "
                              "invalid UTF-8), so not CUDA source",
                              m->name, m->path);
    return cudag__fail_at(err, CUDAG_ETYPE, pos,
                          "module '%s': '%s' is not a fatbin, cubin, PTX "
                          "or CUDA source (.cu)",
                          m->name, m->path);
}

/* Module m's source text: copied, its directory, its kernels. */
static int read_source(cudag_graph *g, cudag__module *m, const char *bytes,
                       size_t size, cudag__pos pos, cudag_error *err)
{
    m->text = cudag__arena_strndup(&g->arena, bytes, size);
    m->dir = cudag__dir_of(&g->arena, m->path);
    if (!m->text || !m->dir)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    m->len = size;
    int rc = source_decls(g, m, pos, err);
    /* A failure without a place of its own (out of memory) is the
     * module's. */
    if (rc != CUDAG_OK && err && err->line == 0 && pos.file) {
        snprintf(err->file, sizeof err->file, "%s", pos.file);
        err->line = (int)pos.line;
        err->column = (int)pos.col;
    }
    return rc;
}

int cudag__module_read(cudag_graph *g, cudag__module *m, cudag__pos pos,
                       cudag_error *err)
{
    char *what = cudag__arena_printf(&g->arena, "module '%s'", m->name);
    if (!what)
        return cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    /* Mapped: sniffing and listing entry points touch a few pages of a
     * fatbin of megabytes. */
    cudag__file_bytes f;
    int rc = cudag__file_read(m->path, CUDAG__MAX_CODE_BYTES, CUDAG__FILE_MAP,
                              NULL, what, pos, &f, NULL, err);
    if (rc != CUDAG_OK)
        return rc;
    const void *bytes = f.p;
    size_t size = f.len;
    /* A source file too big to read is refused by its size, before its
     * bytes are looked at. */
    bool source_name = cudag__code_sniff("x", 1, m->path) == CUDAG__CODE_SOURCE;
    int kind = CUDAG__CODE_OTHER;
    if (source_name && size > CUDAG__MAX_SOURCE_BYTES)
        rc = cudag__fail_at(err, CUDAG_ELIMIT, pos,
                            "module '%s': '%s' is %zu bytes (at most %u for "
                            "CUDA source)",
                            m->name, m->path, size, CUDAG__MAX_SOURCE_BYTES);
    else
        kind = cudag__code_sniff(bytes, size, m->path);
    if (rc == CUDAG_OK)
        rc = refuse_kind(m, kind, source_name, pos, err);
    if (rc == CUDAG_OK && kind == CUDAG__CODE_SOURCE) {
        rc = read_source(g, m, bytes, size, pos, err);
    } else if (rc == CUDAG_OK) {
        cudag__code_info *c = cudag__arena_alloc(&g->arena, sizeof *c);
        if (!c || cudag__code_read(&g->arena, bytes, size, c, NULL) != CUDAG_OK)
            rc = cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
        else
            m->code = c, m->kind = kind;
    }
    cudag__file_release(&f);
    return rc;
}

/* ---- signatures ----------------------------------------------------------- */

/* The kernel that a signature's source names: "axpy<float>" → axpy. */
static const cudag__src_kernel *decl_of(const cudag__src_decls *d,
                                        const char *expr)
{
    char base[CUDAG__MAX_NAME + 1];
    size_t n = strcspn(expr, "< ");
    if (n == 0 || n > CUDAG__MAX_NAME)
        return NULL;
    memcpy(base, expr, n);
    base[n] = '\0';
    return cudag__src_find(d, base);
}

/* Kernel names of a source that a plain name can find (no templates). */
static uint32_t usable_names(const cudag__src_decls *d, const char **out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; d && i < d->nk; i++)
        if (!d->k[i].ntparams) {
            if (out)
                out[n] = d->k[i].name;
            n++;
        }
    return n;
}

/* Per parameter of kernel k (resolved into *ss): CUDAG__ACC_READ for a
 * pointer to const data, 0 (may read and write) for the rest; NULL when no
 * parameter is read only, or on OOM (then nothing is known, which is
 * safe: every pointer may be written). */
static uint8_t *source_access(cudag__arena *a, const cudag__src_kernel *k,
                              const cudag__src_sig *ss)
{
    uint8_t *acc = NULL;
    for (uint32_t i = 0; i < ss->nparams && i < k->nparams; i++) {
        if (ss->types[i] != CUDAG_TYPE_PTR ||
            !cudag__src_ptr_const(k->params[i].ctype))
            continue;
        if (!acc && !(acc = cudag__arena_alloc(a, ss->nparams + 1)))
            return NULL;
        acc[i] = CUDAG__ACC_READ;
    }
    return acc;
}

int cudag__sig_from_source(cudag_graph *g, cudag__sig *s, const char *expr,
                           cudag__pos use, cudag_error *err)
{
    const cudag__module *m = &g->modules[s->module];
    const char *e = expr ? expr : s->name;
    const cudag__src_kernel *k = decl_of(m->decls, e);
    if (!k) {
        const char **names =
            cudag__malloc((m->decls->nk + 1) * sizeof *names);
        uint32_t n = names ? usable_names(m->decls, names) : 0;
        const char *best = names ? cudag__suggest(e, names, n) : NULL;
        char hint[300] = "";
        if (m->decls->macro_kernels)
            snprintf(hint, sizeof hint,
                     "; kernels written by a function-like macro are not "
                     "seen: declare it in 'kernels:' with params");
        cudag__fail_at(err, CUDAG_EUNKNOWN, use,
                       "module '%s' (%s) has no kernel '%s'%s%s%s%s", m->name,
                       m->path, e, best ? " (did you mean '" : "",
                       best ? best : "", best ? "'?)" : "", hint);
        cudag__free(names);
        return CUDAG_EUNKNOWN;
    }
    cudag__src_sig ss;
    int rc = cudag__src_signature(&g->arena, m->decls, k,
                                  k->ntparams ? e : NULL, &ss, err);
    if (rc != CUDAG_OK)
        return rc;
    s->nparams = ss.nparams;
    s->types = ss.types;
    s->pnames = ss.pnames;
    s->pnamed = ss.pnamed;
    bool typed = false;
    for (uint32_t i = 0; i < ss.nparams; i++)
        typed |= ss.pointee[i] != CUDAG_TYPE_NONE;
    s->pointee = typed ? ss.pointee : NULL;
    s->access = source_access(&g->arena, k, &ss);
    s->waits = k->waits ? 1 : -1;
    s->pdl |= k->waits;
    /* An extern "C" kernel's symbol is its name; anything else is lowered
     * by NVRTC from the expression (a template instance, a C++ name). */
    if (k->extern_c && !k->ntparams) {
        s->symbol = k->name;
        s->expr = NULL;
    } else {
        s->expr = cudag__arena_strdup(&g->arena, e);
        s->symbol = s->expr;
        if (!s->expr)
            return cudag__fail_at(err, CUDAG_ENOMEM, use, "out of memory");
    }
    return CUDAG_OK;
}

void cudag__sig_declared_in_source(cudag_graph *g, cudag__sig *s)
{
    const cudag__module *m = &g->modules[s->module];
    const cudag__src_kernel *k = m->decls ? decl_of(m->decls, s->symbol) : NULL;
    if (!k)
        return;
    s->waits = k->waits ? 1 : -1;
    s->pdl |= k->waits;
    if (!k->extern_c || k->ntparams)
        s->expr = s->symbol;    /* NVRTC lowers it (arena string already) */
}

/* The names of every kernel a lookup could find: the declared signatures
 * and the source modules' kernels (templates left out), into a new array
 * (cudag__free) of *n names that live as long as g; NULL on OOM. */
static const char **kernel_names(const cudag_graph *g, uint32_t *n)
{
    uint32_t total = g->nsigs;
    for (uint32_t m = 0; m < g->nmodules; m++)
        total += usable_names(g->modules[m].decls, NULL);
    const char **names = cudag__malloc((total + 1) * sizeof *names);
    if (!names)
        return NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->nsigs; i++)
        names[k++] = g->sigs[i].name;
    for (uint32_t m = 0; m < g->nmodules; m++)
        k += usable_names(g->modules[m].decls, names + k);
    *n = k;
    return names;
}

uint32_t cudag__sig_lookup(cudag_graph *g, const char *name, cudag__pos use,
                           cudag_error *err)
{
    uint32_t s = cudag__find_sig(g, name);
    if (s != CUDAG__NONE)
        return s;
    uint32_t found = CUDAG__NONE;
    for (uint32_t m = 0; m < g->nmodules; m++) {
        const cudag__src_kernel *k =
            g->modules[m].decls ? cudag__src_find(g->modules[m].decls, name)
                                : NULL;
        if (!k)
            continue;
        if (found != CUDAG__NONE) {
            const cudag__module *a = &g->modules[found], *b = &g->modules[m];
            const cudag__src_kernel *ka = cudag__src_find(a->decls, name);
            cudag__fail_at(err, CUDAG_EDUP, use,
                           "kernel '%s' is defined in module '%s' (%s:%u) and "
                           "in module '%s' (%s:%u): declare it in 'kernels:' "
                           "with module: to choose",
                           name, a->name, a->path, ka->pos.line, b->name,
                           b->path, k->pos.line);
            return CUDAG__NONE;
        }
        found = m;
    }
    if (found == CUDAG__NONE) {
        uint32_t n = 0;
        const char **names = kernel_names(g, &n);
        const char *best = names ? cudag__suggest(name, names, n) : NULL;
        cudag__fail_at(err, CUDAG_EUNKNOWN, use, "unknown kernel '%s'%s%s%s",
                       name, best ? " (did you mean '" : "", best ? best : "",
                       best ? "'?)" : "");
        cudag__free(names);
        return CUDAG__NONE;
    }
    cudag__sig tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = name;
    tmp.module = found;
    int rc = cudag__sig_from_source(g, &tmp, NULL, use, err);
    if (rc != CUDAG_OK)
        return CUDAG__NONE;
    cudag__sig *ns;
    /* Positioned where the source defines it: a message about the
     * signature points at the kernel. */
    const cudag__src_kernel *k = cudag__src_find(g->modules[found].decls, name);
    if (cudag__add_sig(g, name, k->pos, &ns, err) != CUDAG_OK)
        return CUDAG__NONE;
    const char *nm = ns->name;
    *ns = tmp;
    ns->name = nm;
    ns->pos = k->pos;
    return g->root->nsigs - 1;
}

/* A C++ (mangled) name whose identifier is `name`: "_Z5scalePffi" for
 * "scale", or the template "_Z4axpyIfEv…". */
static bool mangles(const char *sym, const char *name)
{
    char pre[CUDAG__MAX_NAME + 16];
    int n = snprintf(pre, sizeof pre, "_Z%zu%s", strlen(name), name);
    return n > 0 && strncmp(sym, pre, (size_t)n) == 0;
}

int cudag__sig_against_code(cudag_graph *g, cudag__sig *s, cudag__pos pos,
                            cudag_error *err)
{
    if (s->module >= g->nmodules || !g->modules[s->module].code)
        return CUDAG_OK;
    const cudag__module *m = &g->modules[s->module];
    const cudag__code_info *c = m->code;
    const cudag__code_entry *e = cudag__code_find(c, s->symbol);
    if (!e) {
        if (!c->complete)
            return CUDAG_OK;
        for (uint32_t i = 0; i < c->n; i++)
            if (mangles(c->e[i].name, s->symbol))
                return cudag__fail_at(
                    err, CUDAG_EUNKNOWN, pos,
                    "kernel '%s': module '%s' (%s) has no symbol '%s', but "
                    "'%s', its C++ name: declare the kernel extern \"C\", or "
                    "write symbol: %s",
                    s->name, m->name, m->path, s->symbol, c->e[i].name,
                    c->e[i].name);
        const char **names = cudag__malloc((c->n + 1) * sizeof *names);
        for (uint32_t i = 0; names && i < c->n; i++)
            names[i] = c->e[i].name;
        const char *best = names ? cudag__suggest(s->symbol, names, c->n) : NULL;
        cudag__fail_at(err, CUDAG_EUNKNOWN, pos,
                       "kernel '%s': module '%s' (%s) has no symbol '%s'%s%s%s",
                       s->name, m->name, m->path, s->symbol,
                       best ? " (did you mean '" : "", best ? best : "",
                       best ? "'?)" : "");
        cudag__free(names);
        return CUDAG_EUNKNOWN;
    }
    if (e->nparams != CUDAG__CODE_UNKNOWN) {
        if (e->nparams != s->nparams)
            return cudag__fail_at(err, CUDAG_EARGS, pos,
                                  "kernel '%s': the code of '%s' in %s takes "
                                  "%u parameter%s, the signature declares %u",
                                  s->name, s->symbol, m->path, e->nparams,
                                  e->nparams == 1 ? "" : "s", s->nparams);
        for (uint32_t i = 0; i < s->nparams; i++)
            if (e->sizes[i] != cudag_type_size(s->types[i]))
                return cudag__fail_at(
                    err, CUDAG_EARGS, pos,
                    "kernel '%s': parameter %u ('%s') is %u bytes in the code "
                    "of '%s' in %s, but the signature says %s (%zu bytes)",
                    s->name, i, s->pnames[i], e->sizes[i], s->symbol, m->path,
                    cudag_type_name(s->types[i]),
                    cudag_type_size(s->types[i]));
    }
    if (e->waits >= 0) {
        s->waits = e->waits ? 1 : -1;
        s->pdl |= e->waits;
    }
    return CUDAG_OK;
}

/* ---- the builder API -------------------------------------------------------- */

int cudag_add_module_source(cudag_graph *g, const char *name,
                            const char *text, const char *const *options,
                            cudag_error *err)
{
    cudag__error_clear(err);
    if (!g || !name || !text)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_module_source: %s is NULL",
                              !g ? "graph" : !name ? "name" : "text");
    size_t n = 0;
    while (options && options[n])
        n++;
    const char **opts = n ? cudag__arena_alloc(&g->arena,
                                               (n + 1) * sizeof *opts)
                          : NULL;
    const char *path = cudag__arena_printf(&g->arena, "%s.cu", name);
    if ((n && !opts) || !path)
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(opts[i] = cudag__arena_strdup(&g->arena, options[i])))
            return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                  "out of memory");
    /* Read into a scratch module first, so that a failure leaves the graph
     * without it (the arena keeps the bytes until the graph goes). */
    cudag__module tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = name;
    tmp.path = path;
    tmp.options = opts;
    int rc = module_set_source(g, &tmp, text, strlen(text),
                                      CUDAG__NOPOS, err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__module *m;
    rc = cudag__add_module(g, name, CUDAG__NOPOS, &m, err);
    if (rc != CUDAG_OK)
        return rc;
    const char *nm = m->name;
    *m = tmp;
    m->name = nm;
    cudag__graph_touch(g);
    return CUDAG_OK;
}

int cudag_add_signature_handle(cudag_graph *g, const char *name, void *handle,
                               cudag_handle_kind kind,
                               const cudag_param *params, size_t nparams,
                               int pdl, cudag_error *err)
{
    cudag__error_clear(err);
    if (!g || !name)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "cudag_add_signature_handle: %s is NULL",
                              g ? "name" : "graph");
    if (!handle || (kind != CUDAG_HANDLE_FUNCTION && kind != CUDAG_HANDLE_KERNEL))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "kernel '%s': %s", name,
                              handle ? "unknown handle kind" : "handle is NULL");
    uint32_t n0 = g->nsigs;
    int rc = cudag__add_signature(g, name, CUDAG__NONE, NULL, params, nparams,
                                  pdl, err);
    if (rc != CUDAG_OK)
        return rc;
    cudag__sig *s = &g->sigs[n0];
    s->handle = handle;
    s->handle_kind = kind == CUDAG_HANDLE_FUNCTION ? CUDAG__HANDLE_FUNCTION
                                                   : CUDAG__HANDLE_KERNEL;
    return CUDAG_OK;
}

int cudag_cache_clean(unsigned *removed, cudag_error *err)
{
    cudag__error_clear(err);
    unsigned n = 0;
    char dir[4096];
    if (!cudag__cache_dir(dir, sizeof dir))
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "no compile cache directory: set "
                              "XDG_CACHE_HOME or HOME");
    int rc = cudag__cache_clean(dir, &n, err);
    if (removed)
        *removed = n;
    return rc;
}
