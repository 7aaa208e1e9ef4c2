/* files.c — reading a graph file and the files it includes into a source
 * (parsed, in lowering order, cycles and limits refused), and a child
 * graph's file for kinds/child.c.  Its own file: it is the front end's only
 * contact with the file system; the sections lowered from the trees are in
 * vars.c, kernels.c and buffers.c. */
#include "front/files.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/file.h"
#include "base/map.h"
#include "ir/graph.h"
#include "code/shipped.h"
#include "yaml/lowering.h"
#include "yaml/parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *cudag__path_join(cudag__arena *a, const char *dir, const char *name)
{
    if (name[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return cudag__arena_strdup(a, name);
    size_t dl = strlen(dir);
    return cudag__arena_printf(a, "%s%s%s", dir,
                               dir[dl - 1] == '/' ? "" : "/", name);
}

/* A YAML file's text into a, NUL-terminated, through the library's one
 * reader; its errors reported at `at` into d.  Past the limit the message
 * names it as it always has (tests pin it). */
static int read_file(cudag__arena *a, const char *path, cudag__pos at,
                     cudag__diag *d, char **text, size_t *len)
{
    cudag__file_bytes fb;
    cudag_error e;
    int rc = cudag__file_read(path, CUDAG__MAX_FILE_BYTES, CUDAG__FILE_READ, a,
                              NULL, at, &fb, NULL, &e);
    if (rc == CUDAG_ELIMIT)
        return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, at,
                             "'%s' is larger than %u bytes", path,
                             CUDAG__MAX_FILE_BYTES);
    if (rc != CUDAG_OK)
        return cudag__report(d, CUDAG_SEV_ERROR, rc, at, "%s", e.message);
    *text = (char *)fb.p;
    *len = fb.len;
    return CUDAG_OK;
}

typedef struct loader {
    cudag__source *src;
    cudag__diag *d;
    const char *const *include_dirs;
    cudag__map loaded;          /* canonical path → file index */
    const char *stack[CUDAG__MAX_INCLUDE_DEPTH + 2];   /* shown paths */
    const char *stack_real[CUDAG__MAX_INCLUDE_DEPTH + 2];
    unsigned depth;
    bool installed;             /* the next file was found in an include
                                   directory */
} loader;

/* True when dir (canonical) is one of the include directories. */
static bool is_include_dir(const loader *ld, const char *dir)
{
    char real[PATH_MAX];
    for (const char *const *id = ld->include_dirs; id && *id; id++)
        if (realpath(*id, real) && strcmp(real, dir) == 0)
            return true;
    return false;
}

/* Where an include names a file: next to the including file, then in each
 * include directory, then in the shipped kernels' directory (code/shipped.c).  Sets
 * *out to the path found and returns CUDAG_OK, or reports every place
 * searched (or running out of memory) and returns the code. */
static int find_include(loader *ld, const char *dir, const cudag__doc *item,
                        const char **out)
{
    cudag__arena *a = &ld->src->arena;
    const char *name = item->str;
    const char *p = cudag__path_join(a, dir, name);
    /* A file beside the includer that exists but cannot be read is read
     * anyway, so that the error says why; so is a name too long to be a
     * path (load_tree refuses it with its length). */
    if (p && (name[0] == '/' || strlen(p) >= CUDAG_PATH_MAX ||
              access(p, F_OK) == 0))
        return (*out = p), CUDAG_OK;
    const char *shipped = p ? cudag__shipped_dir(a) : NULL;
    const char *const shipped_list[] = {shipped, NULL};
    char places[1024];
    size_t off = (size_t)snprintf(places, sizeof places, "%s", dir);
    for (size_t pass = 0; p && pass < 2; pass++) {
        const char *const *list = pass ? shipped_list : ld->include_dirs;
        for (size_t i = 0; list && list[i]; i++) {
            if (pass && is_include_dir(ld, list[i]))
                continue;
            const char *q = cudag__path_join(a, list[i], name);
            if (q && access(q, R_OK) == 0)
                return (*out = q), CUDAG_OK;
            if (!(p = q))
                break;
            if (off < sizeof places)
                off += (size_t)snprintf(places + off, sizeof places - off,
                                        ", %s", list[i]);
        }
    }
    if (!p)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, item->pos,
                             "out of memory");
    return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_EIO, item->pos,
                         "cannot find included file '%s' (searched %s; add a "
                         "directory with -I)",
                         name, places);
}

static int load_tree(loader *ld, const char *shown, const char *text,
                     size_t len, cudag__pos at);

static int load_includes(loader *ld, const cudag__doc *root, const char *dir)
{
    const cudag__doc *inc = cudag__doc_get(root, "include");
    if (!inc)
        return CUDAG_OK;
    uint32_t n = inc->type == CUDAG__DOC_SEQ ? inc->n : 1;
    if (inc->type == CUDAG__DOC_MAP)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_EKEY, inc->pos,
                             "include must be a file name or a list of them, "
                             "not a mapping");
    int rc = CUDAG_OK;
    for (uint32_t i = 0; i < n && rc == CUDAG_OK; i++) {
        const cudag__doc *item = inc->type == CUDAG__DOC_SEQ ? inc->items[i] : inc;
        if (item->type != CUDAG__DOC_SCALAR || item->len == 0) {
            rc = cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_EKEY, item->pos,
                               "an include must be a file name");
            break;
        }
        const char *path = NULL;
        rc = find_include(ld, dir, item, &path);
        if (rc == CUDAG_OK) {
            const char *near = cudag__path_join(&ld->src->arena, dir,
                                                item->str);
            ld->installed = near && strcmp(path, near) != 0;
            rc = load_tree(ld, path, NULL, 0, item->pos);
        }
    }
    return rc;
}

static int include_cycle(loader *ld, const char *real, cudag__pos at)
{
    char chain[2048];
    size_t off = 0;
    unsigned first = 0;
    /* Text loaded from memory has no canonical path (NULL): it can be on
     * the stack but never be the file that closes the cycle. */
    while (first < ld->depth && (!ld->stack_real[first] ||
                                 strcmp(ld->stack_real[first], real) != 0))
        first++;
    for (unsigned i = first; i < ld->depth && off < sizeof chain; i++)
        off += (size_t)snprintf(chain + off, sizeof chain - off, "%s -> ",
                                ld->stack[i]);
    if (off < sizeof chain)
        snprintf(chain + off, sizeof chain - off, "%s", ld->stack[first]);
    return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_EINCLUDE, at,
                         "include cycle: %s", chain);
}

/* Every error names its file whole in cudag_error.file: a name that would
 * not fit there (nor be opened by the system) is refused, at `at`. */
static int name_fits(cudag__diag *d, const char *shown, cudag__pos at)
{
    size_t n = strlen(shown);
    if (n < CUDAG_PATH_MAX)
        return CUDAG_OK;
    return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, at,
                         "file name of %zu bytes is longer than %u: "
                         "'%.40s...%s'", n, CUDAG_PATH_MAX - 1, shown,
                         shown + n - 40);
}

/* The file's canonical name (realpath, else the name as shown), in the
 * arena: what include and child-graph cycles compare.  NULL: no memory. */
static const char *real_name(cudag__arena *a, const char *shown)
{
    char rbuf[PATH_MAX];
    return cudag__arena_strdup(a, realpath(shown, rbuf) ? rbuf : shown);
}

/* Parses a file (reading it unless text is given), then its includes, then
 * appends it: the files list ends up in lowering order. */
static int load_tree(loader *ld, const char *shown, const char *text,
                     size_t len, cudag__pos at)
{
    cudag__arena *a = &ld->src->arena;
    bool installed = ld->installed;
    ld->installed = false;
    if (!shown)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                             "out of memory");
    if (name_fits(ld->d, shown, at) != CUDAG_OK)
        return CUDAG_ELIMIT;
    const char *real = NULL;
    if (!text) {
        real = real_name(a, shown);
        if (!real)
            return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                                 "out of memory");
        for (unsigned i = 0; i < ld->depth; i++)
            if (ld->stack_real[i] && strcmp(ld->stack_real[i], real) == 0)
                return include_cycle(ld, real, at);
        if (cudag__map_get(&ld->loaded, real, NULL))
            return CUDAG_OK;    /* included before: read once */
    }
    if (ld->depth > CUDAG__MAX_INCLUDE_DEPTH)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, at,
                             "includes nested deeper than %u",
                             CUDAG__MAX_INCLUDE_DEPTH);
    if (ld->src->nfiles >= CUDAG__MAX_FILES)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, at,
                             "more than %u files included",
                             CUDAG__MAX_FILES);
    char *buf = NULL;
    if (!text) {
        int rc = read_file(a, shown, at, ld->d, &buf, &len);
        if (rc != CUDAG_OK)
            return rc;
        text = buf;
    }
    const char *path = cudag__arena_strdup(a, shown);
    const char *dir = path ? cudag__dir_of(a, path) : NULL;
    if (!dir)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                             "out of memory");
    cudag__doc *root;
    int rc = cudag__parse(a, path, text, len, &root, ld->d);
    if (rc != CUDAG_OK)
        return rc;
    if (real && cudag__map_put(&ld->loaded, real, 0) != CUDAG_OK)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                             "out of memory");
    if (root && root->type == CUDAG__DOC_MAP) {
        ld->stack[ld->depth] = path;
        ld->stack_real[ld->depth] = real;
        ld->depth++;
        rc = load_includes(ld, root, dir);
        ld->depth--;
        if (rc != CUDAG_OK)
            return rc;
    }
    cudag__file *f = cudag__vec_push((void **)&ld->src->files, &ld->src->nfiles,
                                     &ld->src->cfiles, sizeof *f);
    if (!f)
        return cudag__report(ld->d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                             "out of memory");
    f->path = path;
    f->dir = dir;
    f->real = real;
    f->root = root;
    f->installed = installed;
    return CUDAG_OK;
}

const char **cudag__copy_list(cudag__arena *a, const char *const *list)
{
    size_t n = 0;
    while (list && list[n])
        n++;
    const char **out = cudag__arena_alloc(a, (n + 1) * sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        if (!(out[i] = cudag__arena_strdup(a, list[i])))
            return NULL;
    return out;
}

/* Reads the top file and everything it includes.  On error *out is NULL. */
int cudag__load_source(const char *path, const char *text, size_t len,
                       const cudag_options *opts, cudag__source **out,
                       cudag__diag *d)
{
    *out = NULL;
    cudag__source *src = cudag__calloc(1, sizeof *src);
    if (!src)
        return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, CUDAG__NOPOS,
                             "out of memory");
    bool has_opts = opts != NULL;
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.src = src;
    ld.d = d;
    ld.include_dirs = has_opts ? opts->include_dirs : NULL;
    src->flags = has_opts ? opts->flags : 0;
    src->defines = cudag__copy_list(&src->arena,
                                    has_opts ? opts->defines : NULL);
    int rc;
    if (!src->defines) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, CUDAG__NOPOS,
                           "out of memory");
    } else {
        char *shown = cudag__arena_strdup(&src->arena, path);
        /* Text given in memory has no canonical path: it is never an
         * include target, so no cycle can pass through it. */
        rc = load_tree(&ld, shown, text, len, CUDAG__NOPOS);
    }
    cudag__map_free(&ld.loaded);
    if (rc != CUDAG_OK) {
        cudag__source_free(src);
        return rc;
    }
    *out = src;
    return CUDAG_OK;
}

/* lw->read_graph (yaml/lowering.h).  Each file is read and parsed once per
 * source, on first use, and kept there: its copies share the tree, and
 * cudag_exec_set_var lowers the file as it was loaded, not as the disk has
 * it since (changed or gone), without growing the source each time. */
int cudag__read_child_graph(cudag__lower *lw, const char *dir,
                            const cudag__doc *name, cudag__file *out)
{
    cudag__source *src = lw->src;
    cudag__arena *a = &src->arena;
    memset(out, 0, sizeof *out);
    const char *want = cudag__path_join(&lw->scratch, dir, name->str);
    if (!want)
        return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    for (uint32_t i = 0; i < src->nchildren; i++)
        if (strcmp(src->children[i].path, want) == 0) {
            *out = src->children[i];
            return CUDAG_OK;
        }
    if (name_fits(lw->d, want, name->pos) != CUDAG_OK)
        return CUDAG_ELIMIT;
    const char *path = cudag__arena_strdup(a, want);
    if (!path || !(out->dir = cudag__dir_of(a, path)) ||
        !(out->real = real_name(a, path)))
        return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    out->path = path;
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(a, path, name->pos, lw->d, &text, &len);
    cudag__doc *root = NULL;
    if (rc == CUDAG_OK)
        rc = cudag__parse(a, path, text, len, &root, lw->d);
    out->root = root;
    if (rc != CUDAG_OK)
        return rc;
    cudag__file *kept = cudag__vec_push((void **)&src->children,
                                        &src->nchildren, &src->cchildren,
                                        sizeof *kept);
    if (!kept)
        return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    *kept = *out;
    return CUDAG_OK;
}
