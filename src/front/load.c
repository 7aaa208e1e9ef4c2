/* load.c — the whole front end: a source read (files.c) is lowered section
 * by section (vars.c, kernels.c, buffers.c, then nodes.c) into a graph and
 * checked; lowering it again with a variable changed; the public load
 * functions.  Its own file: the order of the passes, and the one place
 * that owns a source. */
#include "front/load.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"
#include "front/buffers.h"
#include "front/files.h"
#include "front/kernels.h"
#include "front/nodes.h"
#include "front/vars.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

static int lower_all(cudag__lower *lw)
{
    cudag__source *src = lw->src;
    for (uint32_t i = 0; i < src->nfiles; i++) {
        lw->file = i;
        cudag__lower_header(lw, &src->files[i], i + 1 == src->nfiles);
    }
    if (lw->d->nerr)
        return lw->d->first_code;
    /* Section by section across files, so that every file may use the
     * variables, kernels and buffers of the files it includes. */
    for (uint32_t i = 0; i < src->nfiles; i++)
        cudag__lower_vars(lw, &src->files[i]);
    for (uint32_t i = 0; i < lw->ndefs; i++) {
        cudag__define *df = &lw->defs[i];
        if (df->used || cudag__find_define(lw, df->name) != df)
            continue;
        const char **names = cudag__malloc((lw->g->nvars + 1) * sizeof *names);
        for (uint32_t j = 0; names && j < lw->g->nvars; j++)
            names[j] = lw->g->vars[j].name;
        const char *best = names ? cudag__suggest(df->name, names, lw->g->nvars) : NULL;
        cudag__pos pos = df->pos;
        pos.col = 1;
        cudag__lerr(lw, CUDAG_EUNKNOWN, pos,
                    "-D %s: the graph has no variable '%s'%s%s%s", df->name,
                    df->name, best ? " (did you mean '" : "", best ? best : "",
                    best ? "'?)" : "");
        cudag__free(names);
    }
    /* A variable outside its bounds stops the load here: what the sections
     * below compute from it (a buffer's size, a node's shared memory, a
     * child graph's variables) would say the same mistake again, or pass
     * and launch a kernel past the limits the bound states. */
    cudag__lower_bounds(lw);
    if (lw->nbounds)
        return lw->d->first_code;
    for (uint32_t i = 0; i < src->nfiles; i++) {
        uint32_t first = lw->g->nmodules;
        cudag__lower_modules(lw, &src->files[i]);
        cudag__lower_kernels(lw, &src->files[i], first,
                             lw->g->nmodules - first);
    }
    for (uint32_t i = 0; i < src->nfiles; i++)
        cudag__lower_buffers(lw, &src->files[i]);
    for (uint32_t i = 0; i < src->nfiles; i++)
        cudag__lower_conditions(lw, &src->files[i]);
    if (!cudag__diag_full(lw->d))
        cudag__lower_nodes(lw);
    return lw->d->nerr ? lw->d->first_code : CUDAG_OK;
}

static const char *base_name(cudag__arena *a, const char *path)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    const char *dot = strrchr(s, '.');
    size_t n = dot && dot != s ? (size_t)(dot - s) : strlen(s);
    return cudag__arena_strndup(a, s, n);
}

/* Lowers src into a new graph and checks it.  The graph does not take src. */
static int lower_source(cudag__source *src, const char *const *extra,
                        bool check, cudag_graph **out, cudag__diag *d)
{
    *out = NULL;
    const cudag__file *top = &src->files[src->nfiles - 1];
    cudag_graph *g = cudag__graph_new(NULL);
    cudag__lower lw;
    memset(&lw, 0, sizeof lw);
    lw.g = g;
    lw.src = src;
    lw.d = d;
    lw.read_graph = cudag__read_child_graph;
    int rc;
    if (!g || !(g->name = base_name(&g->arena, top->path))) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, CUDAG__NOPOS,
                           "out of memory");
    } else {
        rc = cudag__parse_defines(&lw, src->defines, extra);
        if (rc == CUDAG_OK)
            rc = lower_all(&lw);
        if (rc == CUDAG_OK && check)
            rc = cudag__check(g, d);
        if (rc == CUDAG_OK && d->nerr)
            rc = d->first_code;
    }
    cudag__free(lw.pend);
    cudag__free(lw.ranges);
    cudag__map_free(&lw.range_map);
    cudag__map_free(&lw.waiting);
    for (int ns = 0; ns < CUDAG__NS_COUNT; ns++)
        cudag__map_free(&lw.bad[ns]);
    cudag__arena_free(&lw.scratch);
    if (rc != CUDAG_OK) {
        cudag_graph_destroy(g);
        return rc;
    }
    *out = g;
    return CUDAG_OK;
}

/*
 * Loads a graph: reads `path` (or uses text/len when text is not NULL, with
 * `path` as its name), parses it and its includes, lowers to IR and, unless
 * opts has CUDAG_NO_CHECK, checks it.  Every diagnostic goes to d.  On error
 * *out is NULL and nothing is allocated.
 */
static int load(const char *path, const char *text, size_t len,
                const cudag_options *opts, cudag_graph **out, cudag__diag *d)
{
    cudag__source *src;
    *out = NULL;
    int rc = cudag__load_source(path, text, len, opts, &src, d);
    if (rc != CUDAG_OK)
        return rc;
    bool check = !(opts && (opts->flags & CUDAG_NO_CHECK));
    cudag_graph *g;
    rc = lower_source(src, NULL, check, &g, d);
    if (rc != CUDAG_OK) {
        cudag__source_free(src);
        return rc;
    }
    g->source = src;
    g->source_free = cudag__source_free;
    *out = g;
    return CUDAG_OK;
}

int cudag__relower(const cudag_graph *g, const char *name, const char *value,
                   cudag_graph **out, cudag_error *err)
{
    *out = NULL;
    cudag__error_clear(err);
    if (!g->source)
        return cudag__fail_at(err, CUDAG_ENOTSUP, CUDAG__NOPOS,
                              "variables can change only in a graph loaded "
                              "from YAML");
    if (!name || cudag__find_var(g, name) == CUDAG__NONE)
        return cudag__fail_at(err, CUDAG_EUNKNOWN, CUDAG__NOPOS,
                              "the graph has no variable '%s'",
                              name ? name : "(null)");
    cudag__diag d;
    cudag__diag_init(&d, NULL, err);
    d.flags = g->source->flags;
    /* The values set before, then this one: the last define of a name wins. */
    const char **ov = cudag__calloc(g->noverrides + 2, sizeof *ov);
    char *mine = NULL;
    if (ov) {
        for (uint32_t i = 0; i < g->noverrides; i++)
            ov[i] = g->overrides[i];
        size_t n = strlen(name) + strlen(value) + 2;
        mine = cudag__malloc(n);
        if (mine)
            snprintf(mine, n, "%s=%s", name, value);
        ov[g->noverrides] = mine;
    }
    int rc;
    cudag_graph *ng = NULL;
    if (!ov || !mine)
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    else
        rc = lower_source(g->source, ov, true, &ng, &d);
    if (rc == CUDAG_OK) {
        ng->source = g->source;
        ng->source_free = g->source_free;
        ng->source_borrowed = true;
        ng->overrides = cudag__copy_list(&ng->arena, ov);
        ng->noverrides = g->noverrides + 1;
        if (!ng->overrides) {
            cudag_graph_destroy(ng);
            ng = NULL;
            rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
        }
    }
    /* Errors reported through d get their count; one set by fail_at has
     * it already. */
    if (d.nerr)
        rc = cudag__diag_finish(&d);
    cudag__free(mine);
    cudag__free(ov);
    *out = ng;
    return rc;
}

static int load_public(const char *path, const char *text, size_t len,
                       const cudag_options *opts, cudag_graph **out,
                       cudag_error *err)
{
    cudag__diag d;
    cudag__diag_init(&d, opts, err);
    if (!out)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "the out pointer is NULL");
    *out = NULL;
    if (!path)
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS,
                              "no file name given");
    int rc = load(path, text, len, opts, out, &d);
    int first = cudag__diag_finish(&d);
    return first != CUDAG_OK ? first : rc;
}

int cudag_load_file(const char *path, const cudag_options *opts,
                    cudag_graph **out, cudag_error *err)
{
    return load_public(path, NULL, 0, opts, out, err);
}

int cudag_load_string(const char *text, size_t len, const char *name,
                      const cudag_options *opts, cudag_graph **out,
                      cudag_error *err)
{
    if (!text) {
        cudag__error_clear(err);
        if (out)
            *out = NULL;
        return cudag__fail_at(err, CUDAG_EINVAL, CUDAG__NOPOS, "text is NULL");
    }
    return load_public(name ? name : "<string>", text, len, opts, out, err);
}
