/* kernels.c — the `modules` (their files read now, so that `cudag check`
 * finds a wrong one without a GPU) and `kernels` sections: each kernel's
 * module, symbol and parameters, from the file or from its CUDA source.
 * Its own file: the one section that reads kernel code (code/module.h). */
#include "front/kernels.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/names.h"
#include "base/text.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "code/module.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "front/files.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#include <unistd.h>

/* A module's NVRTC options: a list of strings, copied, with each relative
 * -I directory made relative to the graph file's directory as the module's
 * path is. */
static const char **lower_options(cudag__lower *lw, const cudag__file *f,
                                  const cudag__doc *v, bool *ok)
{
    *ok = false;
    if (v->type != CUDAG__DOC_SEQ) {
        cudag__lerr(lw, CUDAG_EKEY, v->pos,
                    "options must be a list of strings, such as "
                    "[\"-DTILE=128\", \"-Iinclude\"]");
        return NULL;
    }
    const char **o = cudag__arena_alloc(&lw->g->arena, (v->n + 1) * sizeof *o);
    if (!o) {
        cudag__lerr(lw, CUDAG_ENOMEM, v->pos, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < v->n; i++) {
        const cudag__doc *e = v->items[i];
        if (!cudag__want(lw, e, CUDAG__DOC_SCALAR, "an option"))
            return NULL;
        bool inc = strncmp(e->str, "-I", 2) == 0 && e->len > 2;
        o[i] = inc ? cudag__arena_printf(&lw->g->arena, "-I%s",
                                         cudag__path_join(&lw->g->arena,
                                                          f->dir, e->str + 2))
                   : e->str;
        if (!o[i]) {
            cudag__lerr(lw, CUDAG_ENOMEM, e->pos, "out of memory");
            return NULL;
        }
    }
    *ok = true;
    return v->n ? o : NULL;
}

void cudag__lower_modules(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *mods = cudag__doc_get(f->root, "modules");
    if (!mods || !cudag__want(lw, mods, CUDAG__DOC_MAP, "modules"))
        return;
    static const char *const keys[] = {"path", "options", "std"};
    static const char *const stds[] = {"c++03", "c++11", "c++14", "c++17",
                                       "c++20"};
    for (uint32_t i = 0; i < mods->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = mods->items[2 * i], *v = mods->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__name_ok(lw, k, "module"))
            continue;
        /* From here on a mistake leaves the module out, marked bad. */
        const cudag__doc *p = v, *opts = NULL, *std = NULL;
        if (v->type == CUDAG__DOC_MAP) {
            cudag__check_keys(lw, v, keys, 3, "a module");
            p = cudag__doc_get(v, "path");
            opts = cudag__doc_get(v, "options");
            std = cudag__doc_get(v, "std");
            if (!p) {
                cudag__lerr(lw, CUDAG_EKEY, v->pos, "module '%s' has no path",
                            k->str);
                goto bad;
            }
        }
        if (!cudag__want(lw, p, CUDAG__DOC_SCALAR, "a module's path"))
            goto bad;
        if (p->len == 0) {
            cudag__lerr(lw, CUDAG_EKEY, p->pos, "module '%s' has an empty path",
                        k->str);
            goto bad;
        }
        if (std && !cudag__want(lw, std, CUDAG__DOC_SCALAR, "std"))
            goto bad;
        size_t si = 0;
        while (std && si < 5 && strcmp(std->str, stds[si]) != 0)
            si++;
        if (std && si == 5) {
            const char *best = cudag__suggest_from(std->str, stds, 5);
            cudag__lerr(lw, CUDAG_EKEY, std->pos,
                        "std must be c++03, c++11, c++14, c++17 or c++20, not "
                        "'%s'%s%s%s",
                        std->str, CUDAG__DYM(best));
            goto bad;
        }
        bool ok = true;
        const char **o = opts ? lower_options(lw, f, opts, &ok) : NULL;
        if (!ok)
            goto bad;
        const char *path = cudag__path_join(&lw->g->arena, f->dir, p->str);
        cudag__module *m;
        cudag_error e;
        if (!path) {
            cudag__lerr(lw, CUDAG_ENOMEM, p->pos, "out of memory");
        } else if (cudag__add_module(lw->g, k->str, k->pos, &m, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
        } else {
            m->path = path;
            m->path_pos = p->pos;
            m->options = o;
            m->std = std ? std->str : NULL;
            /* The file is read now, so that `cudag check` finds a missing
             * or wrong file (and reads a source's kernels) without a GPU.
             * An error from a source's headers carries their position.  An
             * installed manifest may name code not built on this machine
             * (a CPU-only build): the driver judges it when it is needed. */
            if (f->installed && access(path, F_OK) != 0)
                continue;
            if (cudag__module_read(lw->g, m, p->pos, &e) != CUDAG_OK) {
                cudag__lerr_error(lw, &e, p->pos);
                goto bad;   /* its kernels' uses say nothing more */
            }
        }
        continue;
    bad:
        cudag__mark_bad(lw, CUDAG__NS_MODULE, k->str);
    }
}

/* A declared parameter type with its access mode (docs/language.md,
 * "Access modes"): "ptr.read" gives *mode CUDAG__ACC_READ and returns 3, the
 * length of the type; 0 for "ptr." and an unknown word after it; len (and
 * *mode 0) for any other type. */
static size_t ptr_access(const char *str, size_t len, unsigned *mode)
{
    static const struct { const char *word; unsigned mode; } modes[] = {
        {"read", CUDAG__ACC_READ}, {"write", CUDAG__ACC_WRITE},
        {"rw", CUDAG__ACC_RW}};
    *mode = 0;
    if (len < 4 || strncmp(str, "ptr.", 4) != 0)
        return len;
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (strcmp(str + 4, modes[i].word) == 0) {
            *mode = modes[i].mode;
            return 3;
        }
    return 0;
}

static int lower_params(cudag__lower *lw, const cudag__doc *k,
                        const cudag__doc *params, cudag__sig *s)
{
    cudag_graph *g = lw->g;
    if (params->type == CUDAG__DOC_SCALAR && params->len == 0)
        return CUDAG_OK;    /* `params:` with nothing: no parameters */
    if (params->type == CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EKEY, params->pos,
                           "params must be a mapping {name: type} or a list "
                           "of types, not a scalar");
    bool map = params->type == CUDAG__DOC_MAP;
    uint32_t n = 0;
    for (uint32_t i = 0; i < params->n; i++)
        n += !(map && cudag__free_key(params->items[2 * i]));
    if (n > CUDAG__MAX_ARGS)
        return cudag__lerr(lw, CUDAG_ELIMIT, params->pos,
                           "kernel '%s' has %u parameters (at most %u)",
                           k->str, n, CUDAG__MAX_ARGS);
    s->types = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *s->types);
    s->pnames = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *s->pnames);
    bool *named = cudag__arena_alloc(&g->arena, (n + 1) * sizeof *named);
    if (!s->types || !s->pnames || !named)
        return cudag__lerr(lw, CUDAG_ENOMEM, params->pos, "out of memory");
    s->pnamed = named;
    for (uint32_t i = 0, src = 0; i < n; src++) {
        const cudag__doc *t = map ? params->items[2 * src + 1] : params->items[src];
        const cudag__doc *pn = map ? params->items[2 * src] : NULL;
        if (pn && cudag__free_key(pn))
            continue;
        if (pn && !cudag__name_ok(lw, pn, "parameter"))
            return CUDAG_EKEY;
        if (t->type != CUDAG__DOC_SCALAR)
            return cudag__lerr(lw, CUDAG_ETYPE, t->pos,
                               "a parameter type must be a scalar, not %s",
                               cudag__doc_what(t));
        unsigned mode = 0;
        size_t tlen = ptr_access(t->str, t->len, &mode);
        if (tlen == 0)
            return cudag__lerr(lw, CUDAG_ETYPE, t->pos,
                               "unknown access '%s' (a ptr parameter is "
                               "ptr.read, ptr.write or ptr.rw)",
                               t->str + 4);
        cudag_type ty = cudag__type_parse(t->str, tlen);
        if (ty == CUDAG_TYPE_NONE)
            return cudag__bad_type(lw, t->pos, t->str, false);
        if (mode && !s->access)
            s->access = cudag__arena_alloc(&g->arena, n + 1);
        if (mode && !s->access)
            return cudag__lerr(lw, CUDAG_ENOMEM, t->pos, "out of memory");
        if (mode)
            s->access[i] = (uint8_t)mode;
        s->types[i] = ty;
        s->pnames[i] = pn ? pn->str : cudag__arena_printf(&g->arena, "p%u", i);
        named[i] = pn != NULL;
        if (!s->pnames[i])
            return cudag__lerr(lw, CUDAG_ENOMEM, t->pos, "out of memory");
        i++;
    }
    s->nparams = n;
    return CUDAG_OK;
}

/* The module of kernel k (`mod`: its `module:` key, or NULL) into *m: the
 * one named, else the one its file declares, else the graph's only one.
 * False when k is to be left out (reported, or its module was). */
static bool kernel_module(cudag__lower *lw, const cudag__doc *k,
                          const cudag__doc *mod, uint32_t file_first_module,
                          uint32_t file_nmodules, uint32_t *m)
{
    cudag_graph *g = lw->g;
    *m = CUDAG__NONE;
    if (mod) {
        if (!cudag__want(lw, mod, CUDAG__DOC_SCALAR, "module"))
            return false;
        *m = cudag__find_module(g, mod->str);
        if (cudag__is_bad(lw, CUDAG__NS_MODULE, mod->str))
            return false;
        if (*m == CUDAG__NONE) {
            const char **names = cudag__malloc((g->nmodules + 1) * sizeof *names);
            for (uint32_t j = 0; names && j < g->nmodules; j++)
                names[j] = g->modules[j].name;
            const char *best = names ? cudag__suggest(mod->str, names, g->nmodules) : NULL;
            cudag__lerr(lw, CUDAG_EUNKNOWN, mod->pos,
                        "unknown module '%s'%s%s%s", mod->str,
                        CUDAG__DYM(best));
            cudag__free(names);
            return false;
        }
    } else if (file_nmodules == 1) {
        *m = file_first_module;
        if (cudag__is_bad(lw, CUDAG__NS_MODULE, g->modules[*m].name))
            return false;
    } else if (g->nmodules == 1 && lw->bad[CUDAG__NS_MODULE].len == 0) {
        *m = 0;
    } else if (lw->bad[CUDAG__NS_MODULE].len) {
        return false;   /* its module may be the one that was left out */
    } else {
        cudag__lerr(lw, CUDAG_EKEY, k->pos,
                    "kernel '%s' needs 'module:' (%u modules are declared)",
                    k->str, g->nmodules);
        return false;
    }
    return true;
}

/* Kernel k with signature v into lw->g.  False when a mistake leaves it
 * out, to be marked bad (reported, or following one that was). */
static bool lower_kernel_entry(cudag__lower *lw, const cudag__doc *k,
                               const cudag__doc *v, uint32_t file_first_module,
                               uint32_t file_nmodules)
{
    static const char *const keys[] = {"module", "symbol", "params", "pdl"};
    cudag_graph *g = lw->g;
    if (!cudag__want(lw, v, CUDAG__DOC_MAP, "a kernel signature") ||
        cudag__check_keys(lw, v, keys, 4, "a kernel signature"))
        return false;
    const cudag__doc *mod = cudag__doc_get(v, "module");
    const cudag__doc *sym = cudag__doc_get(v, "symbol");
    const cudag__doc *params = cudag__doc_get(v, "params");
    const cudag__doc *pdl = cudag__doc_get(v, "pdl");
    uint32_t m;
    if (!kernel_module(lw, k, mod, file_first_module, file_nmodules, &m))
        return false;
    if (sym && !cudag__want(lw, sym, CUDAG__DOC_SCALAR, "symbol"))
        return false;
    if (sym && sym->len == 0) {
        cudag__lerr(lw, CUDAG_EKEY, sym->pos,
                    "kernel '%s' has an empty symbol", k->str);
        return false;
    }
    bool is_pdl = false;
    if (pdl && !cudag__parse_bool(pdl, &is_pdl)) {
        cudag__lerr(lw, CUDAG_EKEY, pdl->pos,
                    "pdl must be true or false");
        return false;
    }
    /* A CUDA source module says the parameters itself. */
    bool from_source = g->modules[m].decls != NULL;
    if (!params && !from_source) {
        cudag__lerr(lw, CUDAG_EKEY, v->pos,
                    "kernel '%s' has no params (write 'params: {}' for "
                    "none)",
                    k->str);
        return false;
    }
    cudag__sig tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = k->str;
    tmp.module = m;
    tmp.pdl = is_pdl;
    tmp.symbol = sym ? sym->str : k->str;
    cudag__pos at = sym ? sym->pos : k->pos;
    cudag_error e;
    if (params) {
        if (lower_params(lw, k, params, &tmp) != CUDAG_OK)
            return false;
        if (from_source)
            cudag__sig_declared_in_source(g, &tmp);
    } else if (cudag__sig_from_source(g, &tmp, sym ? sym->str : NULL, at,
                                      &e) != CUDAG_OK) {
        cudag__lerr_error(lw, &e, at);
        return false;
    }
    if (cudag__sig_against_code(g, &tmp, at, &e) != CUDAG_OK) {
        cudag__lerr_error(lw, &e, at);
        return false;
    }
    if (pdl && is_pdl && tmp.waits < 0)
        cudag__report(lw->d, CUDAG_SEV_WARNING, CUDAG_EPDL, pdl->pos,
                      "kernel '%s' is declared pdl, but its code (%s) "
                      "never executes griddepcontrol.wait: a "
                      "programmatic edge into it would race",
                      k->str, g->modules[m].path);
    cudag__sig *s;
    if (cudag__add_sig(g, k->str, k->pos, &s, &e) != CUDAG_OK) {
        cudag__lerr(lw, e.code, k->pos, "%s", e.message);
        return true;    /* reported; the kernel of that name stays */
    }
    const char *name = s->name;
    *s = tmp;
    s->name = name;
    s->pos = k->pos;
    return true;
}

void cudag__lower_kernels(cudag__lower *lw, const cudag__file *f,
                          uint32_t file_first_module, uint32_t file_nmodules)
{
    const cudag__doc *ks = cudag__doc_get(f->root, "kernels");
    if (!ks || !cudag__want(lw, ks, CUDAG__DOC_MAP, "kernels"))
        return;
    for (uint32_t i = 0; i < ks->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = ks->items[2 * i], *v = ks->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!cudag__name_ok(lw, k, "kernel"))
            continue;
        /* From here on a mistake leaves the kernel out, marked bad. */
        if (!lower_kernel_entry(lw, k, v, file_first_module, file_nmodules))
            cudag__mark_bad(lw, CUDAG__NS_SIG, k->str);
    }
}
