/* lower.c — from files to IR: reading a file and its includes into a source,
 * then lowering the top-level sections (vars, modules, kernels, buffers);
 * nodes and edges are in nodes.c.  Also the public load functions. */
#include "accset.h"
#include "front.h"
#include "modules.h"
#include "paths.h"
#include "values.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool name_ok(cudag__lower *lw, const cudag__doc *k, const char *what)
{
    if (cudag__is_ident(k->str, k->len))
        return true;
    if (k->len > CUDAG__MAX_NAME)
        cudag__lerr(lw, CUDAG_ELIMIT, k->pos, "%s name longer than %u bytes",
                    what, CUDAG__MAX_NAME);
    else
        cudag__lerr(lw, CUDAG_EKEY, k->pos,
                    "'%s' is not a valid %s name (letters, digits and '_', "
                    "not starting with a digit)",
                    k->str, what);
    return false;
}

/* ---- reading files --------------------------------------------------------- */

static char *join(cudag__arena *a, const char *dir, const char *name)
{
    if (name[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return cudag__arena_strdup(a, name);
    size_t dl = strlen(dir);
    return cudag__arena_printf(a, "%s%s%s", dir,
                               dir[dl - 1] == '/' ? "" : "/", name);
}

static char *dir_of(cudag__arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return cudag__arena_strdup(a, ".");
    if (slash == path)
        return cudag__arena_strdup(a, "/");
    return cudag__arena_strndup(a, path, (size_t)(slash - path));
}

/* Reads a whole file into the arena.  Errors are reported at `at` (the
 * include that named it), or without a position for the top file. */
static int read_file(cudag__arena *a, const char *path, cudag__pos at,
                     cudag__diag *d, char **text, size_t *len)
{
    /* O_NONBLOCK: a file may name any path, and opening a FIFO would wait
     * for a writer forever.  Only a regular file is read (checked below),
     * where the flag changes nothing. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return cudag__report(d, CUDAG_SEV_ERROR, CUDAG_EIO, at,
                             "cannot read '%s': %s", path, strerror(e));
    }
    int rc = CUDAG_OK;
    long size = -1;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_EIO, at,
                           "cannot read '%s': not a regular file", path);
    } else if ((unsigned long)size > CUDAG__MAX_FILE_BYTES) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ELIMIT, at,
                           "'%s' is larger than %u bytes", path,
                           CUDAG__MAX_FILE_BYTES);
    } else {
        *text = cudag__arena_alloc(a, (size_t)size + 1);
        if (!*text)
            rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, at,
                               "out of memory");
        else if (fread(*text, 1, (size_t)size, f) != (size_t)size || ferror(f))
            rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_EIO, at,
                               "cannot read '%s': %s", path, strerror(errno));
        else
            *len = (size_t)size;
    }
    fclose(f);
    return rc;
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
 * include directory, then in the shipped kernels' directory (paths.c).  Sets
 * *out to the path found and returns CUDAG_OK, or reports every place
 * searched (or running out of memory) and returns the code. */
static int find_include(loader *ld, const char *dir, const cudag__doc *item,
                        const char **out)
{
    cudag__arena *a = &ld->src->arena;
    const char *name = item->str;
    const char *p = join(a, dir, name);
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
            const char *q = join(a, list[i], name);
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
            const char *near = join(&ld->src->arena, dir, item->str);
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
    const char *dir = path ? dir_of(a, path) : NULL;
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

static const char **copy_list(cudag__arena *a, const char *const *list)
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
static int load_source(const char *path, const char *text, size_t len,
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
    src->defines = copy_list(&src->arena, has_opts ? opts->defines : NULL);
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

/* ---- defines ------------------------------------------------------------- */

static int add_defines(cudag__lower *lw, const char *const *defs,
                       const char *where)
{
    for (size_t i = 0; defs && defs[i]; i++) {
        const char *s = defs[i];
        const char *eq = strchr(s, '=');
        /* Line i of "<command line>" is its i-th define, so that each has
         * a position of its own. */
        cudag__pos pos = {where, (uint32_t)i + 1, 1};
        if (!eq || !cudag__is_ident(s, (size_t)(eq - s)))
            return cudag__lerr(lw, CUDAG_EINVAL, pos,
                               "-D '%s': expected NAME=VALUE", s);
        cudag__define *df = &lw->defs[lw->ndefs++];
        df->name = cudag__arena_strndup(&lw->scratch, s, (size_t)(eq - s));
        df->expr = cudag__arena_strdup(&lw->scratch, eq + 1);
        if (!df->name || !df->expr)
            return cudag__lerr(lw, CUDAG_ENOMEM, pos, "out of memory");
        df->len = strlen(df->expr);
        pos.col = (uint32_t)(eq - s) + 2;
        df->pos = pos;
    }
    return CUDAG_OK;
}

/* The defines of the options, then those of cudag_exec_set_var. */
static int parse_defines(cudag__lower *lw, const char *const *defs,
                         const char *const *extra)
{
    size_t n = 0, m = 0;
    while (defs && defs[n])
        n++;
    while (extra && extra[m])
        m++;
    n += m;
    lw->defs = cudag__arena_alloc(&lw->scratch, (n + 1) * sizeof *lw->defs);
    if (!lw->defs)
        return cudag__lerr(lw, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    int rc = add_defines(lw, defs, "<command line>");
    if (rc == CUDAG_OK)
        rc = add_defines(lw, extra, "<cudag_exec_set_var>");
    return rc;
}

/* The last define of `name` wins, as on a compiler's command line. */
static cudag__define *find_define(cudag__lower *lw, const char *name)
{
    for (uint32_t i = lw->ndefs; i-- > 0;)
        if (strcmp(lw->defs[i].name, name) == 0)
            return &lw->defs[i];
    return NULL;
}

/* The define behind a value that is wrong: that of the first variable the
 * expression v names that a -D set, or NULL.  The error is then reported at
 * the define ("-D N=-5: …"), and only once: every other use of it repeats
 * the same mistake at the same place. */
static const cudag__define *define_behind(cudag__lower *lw,
                                          const cudag__doc *v)
{
    for (size_t i = 0; v->type == CUDAG__DOC_SCALAR && i < v->len;) {
        size_t e = cudag__ident_end(v->str, i, v->len);
        if (e == i) {
            /* Not a name: skip a number (1e5) whole, or one character. */
            while (++i < v->len && cudag__is_alnum(v->str[i - 1]) &&
                   cudag__is_alnum(v->str[i]))
                ;
            continue;
        }
        char name[CUDAG__MAX_NAME + 1];
        if (e - i <= CUDAG__MAX_NAME) {
            memcpy(name, v->str + i, e - i);
            name[e - i] = '\0';
            const cudag__define *df = find_define(lw, name);
            if (df && df->used)
                return df;
        }
        i = e;
    }
    return NULL;
}

/* ---- sections -------------------------------------------------------------- */

static const char *const top_keys[] = {
    "cudag", "name", "description", "include", "vars", "modules",
    "kernels", "buffers", "conditions", "nodes", "edges", "order",
};

static int lower_header(cudag__lower *lw, const cudag__file *f, bool top)
{
    cudag__pos start = {f->path, 1, 1};
    if (!f->root)
        return cudag__lerr(lw, CUDAG_EKEY, start,
                           "empty file: a cudag file starts with 'cudag: %d'",
                           CUDAG_FORMAT_VERSION);
    if (!cudag__want(lw, f->root, CUDAG__DOC_MAP, "a cudag file"))
        return CUDAG_EKEY;
    cudag__check_keys(lw, f->root, top_keys,
                      sizeof top_keys / sizeof *top_keys, "the top level");
    /* A child graph file (or a fragment meant for `include`) checked on its
     * own names buffers and kernels it does not declare: one error saying
     * what to check instead of one for each name. */
    const cudag__doc *nodes = cudag__doc_get(f->root, "nodes");
    static const char *const own[] = {"include", "modules", "kernels",
                                      "buffers", "conditions"};
    bool declares = false;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        declares = declares || cudag__doc_get(f->root, own[i]);
    if (top && !declares && nodes && nodes->type == CUDAG__DOC_MAP &&
        nodes->n > 0)
        return cudag__lerr(lw, CUDAG_EKEY, f->root->pos,
                           "'%s' has nodes but declares no buffers, kernels "
                           "or includes: a child graph file (or a file meant "
                           "for 'include') uses its parent's; check the graph "
                           "that uses it (graph: %s)",
                           f->path, f->path);
    const cudag__doc *v = cudag__doc_get(f->root, "cudag");
    if (!v)
        return cudag__lerr(lw, CUDAG_EKEY, f->root->pos,
                           "missing 'cudag: %d' (the format version)",
                           CUDAG_FORMAT_VERSION);
    if (cudag__check_version(lw, v) != CUDAG_OK)
        return CUDAG_EKEY;
    const cudag__doc *order = cudag__doc_get(f->root, "order");
    if (order && !top)
        return cudag__lerr(lw, CUDAG_EKEY, order->pos,
                           "'order' belongs to the top file: it orders the "
                           "whole graph (its bodies and child graphs "
                           "included), not an included file's part");
    if (order && cudag__want(lw, order, CUDAG__DOC_SCALAR, "order")) {
        if (strcmp(order->str, "program") == 0)
            lw->g->order = CUDAG__ORDER_PROGRAM;
        else if (strcmp(order->str, "edges") == 0)
            lw->g->order = CUDAG__ORDER_EDGES;
        else
            return cudag__lerr(lw, CUDAG_EKEY, order->pos,
                               "order: '%s' is not an order: 'program' (the "
                               "nodes run as if in written order, edges "
                               "inferred from what they read and write) or "
                               "'edges' (only the edges written; the "
                               "default)",
                               order->str);
    }
    const cudag__doc *name = cudag__doc_get(f->root, "name");
    if (name && cudag__want(lw, name, CUDAG__DOC_SCALAR, "name")) {
        if (name->len == 0 || name->len > CUDAG__MAX_NAME)
            return cudag__lerr(lw, CUDAG_EKEY, name->pos,
                               "a graph name has 1 to %u bytes",
                               CUDAG__MAX_NAME);
        if (top && !(lw->g->name = cudag__arena_strdup(&lw->g->arena, name->str)))
            return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    }
    return CUDAG_OK;
}

/* A variable's value in the file: an integer, or floating point where a
 * floating-point number or variable is in it. */
static int eval_var(cudag__lower *lw, const cudag__doc *v, cudag__num *out)
{
    if (v->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EEXPR, v->pos,
                           "a variable's value must be a number or an "
                           "expression, not %s",
                           cudag__doc_what(v));
    cudag__scope sc = cudag__scope_of(lw, NULL);
    return cudag__expr_eval_num(v->str, v->len, cudag__doc_pos_at(v, 0), &sc,
                                CUDAG__EXPR_ANY, lw->d, out);
}

/* The value -D gives variable `name`, of the kind the file gives it: a
 * floating-point variable takes an integer as a double; an integer one
 * refuses a floating-point value.  (The file's kind is what its value
 * evaluates to, quietly: its errors are reported where it is used.) */
static int eval_define(cudag__lower *lw, const cudag__define *df,
                       const char *name, const cudag__doc *v, cudag__num *out)
{
    cudag__scope sc = cudag__scope_of(lw, NULL);
    /* Its error names the define: "<command line>" has no line to show. */
    cudag_error e;
    cudag__diag one;
    cudag__diag_init(&one, NULL, &e);
    int rc = cudag__expr_eval_num(df->expr, df->len, df->pos, &sc,
                                  CUDAG__EXPR_ANY, &one, out);
    if (rc != CUDAG_OK && one.nerr)
        return cudag__lerr(lw, rc,
                           (cudag__pos){df->pos.file, (uint32_t)e.line,
                                        (uint32_t)e.column},
                           "-D %s=%s: %s", name, df->expr, e.message);
    if (rc != CUDAG_OK)
        return rc;
    cudag__diag quiet = *lw->d;
    quiet.fn = NULL;
    quiet.first = NULL;
    cudag__num file;
    if (v->type != CUDAG__DOC_SCALAR ||
        cudag__expr_eval_num(v->str, v->len, v->pos, &sc, CUDAG__EXPR_ANY,
                             &quiet, &file) != CUDAG_OK)
        return CUDAG_OK;
    if (file.fl && !out->fl)
        *out = (cudag__num){.f = (double)out->i, .fl = true};
    else if (!file.fl && out->fl)
        return cudag__lerr(lw, CUDAG_ETYPE, df->pos,
                           "'%s' is an integer variable, and %s is not an "
                           "integer",
                           name, df->expr);
    return CUDAG_OK;
}

static void lower_vars(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *vars = cudag__doc_get(f->root, "vars");
    if (!vars || !cudag__want(lw, vars, CUDAG__DOC_MAP, "vars"))
        return;
    for (uint32_t i = 0; i < vars->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = vars->items[2 * i], *v = vars->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!name_ok(lw, k, "variable"))
            continue;
        cudag__num value;
        cudag__define *df = find_define(lw, k->str);
        int rc = CUDAG_EEXPR;
        if (df) {
            df->used = true;
            rc = eval_define(lw, df, k->str, v, &value);
        }
        /* A define that fails has been reported; the file's value stands in
         * for it, so that the variable's uses are checked and say nothing
         * more about that one mistake. */
        if (rc != CUDAG_OK)
            rc = eval_var(lw, v, &value);
        cudag__var *var;
        if (rc != CUDAG_OK) {
            cudag__mark_bad(lw, CUDAG__NS_VAR, k->str);
            continue;
        }
        cudag_error e;
        if (cudag__add_var(lw->g, k->str, k->pos, &var, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        var->is_float = value.fl;
        var->value = value.fl ? 0 : value.i;
        var->f = value.fl ? value.f : (double)value.i;
        var->overridden = df != NULL;
    }
}

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
                                         join(&lw->g->arena, f->dir,
                                              e->str + 2))
                   : e->str;
        if (!o[i]) {
            cudag__lerr(lw, CUDAG_ENOMEM, e->pos, "out of memory");
            return NULL;
        }
    }
    *ok = true;
    return v->n ? o : NULL;
}

static void lower_modules(cudag__lower *lw, const cudag__file *f)
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
        if (!name_ok(lw, k, "module"))
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
        const char *path = join(&lw->g->arena, f->dir, p->str);
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
    if (!s->types || !s->pnames)
        return cudag__lerr(lw, CUDAG_ENOMEM, params->pos, "out of memory");
    for (uint32_t i = 0, src = 0; i < n; src++) {
        const cudag__doc *t = map ? params->items[2 * src + 1] : params->items[src];
        const cudag__doc *pn = map ? params->items[2 * src] : NULL;
        if (pn && cudag__free_key(pn))
            continue;
        if (pn && !name_ok(lw, pn, "parameter"))
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
        if (!s->pnames[i])
            return cudag__lerr(lw, CUDAG_ENOMEM, t->pos, "out of memory");
        i++;
    }
    s->nparams = n;
    return CUDAG_OK;
}

static void lower_kernels(cudag__lower *lw, const cudag__file *f,
                          uint32_t file_first_module, uint32_t file_nmodules)
{
    const cudag__doc *ks = cudag__doc_get(f->root, "kernels");
    if (!ks || !cudag__want(lw, ks, CUDAG__DOC_MAP, "kernels"))
        return;
    static const char *const keys[] = {"module", "symbol", "params", "pdl"};
    cudag_graph *g = lw->g;
    for (uint32_t i = 0; i < ks->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = ks->items[2 * i], *v = ks->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!name_ok(lw, k, "kernel"))
            continue;
        /* From here on a mistake leaves the kernel out, marked bad. */
        if (!cudag__want(lw, v, CUDAG__DOC_MAP, "a kernel signature") ||
            cudag__check_keys(lw, v, keys, 4, "a kernel signature"))
            goto bad;
        const cudag__doc *mod = cudag__doc_get(v, "module");
        const cudag__doc *sym = cudag__doc_get(v, "symbol");
        const cudag__doc *params = cudag__doc_get(v, "params");
        const cudag__doc *pdl = cudag__doc_get(v, "pdl");
        uint32_t m = CUDAG__NONE;
        if (mod) {
            if (!cudag__want(lw, mod, CUDAG__DOC_SCALAR, "module"))
                goto bad;
            m = cudag__find_module(g, mod->str);
            if (cudag__is_bad(lw, CUDAG__NS_MODULE, mod->str))
                goto bad;
            if (m == CUDAG__NONE) {
                const char **names = cudag__malloc((g->nmodules + 1) * sizeof *names);
                for (uint32_t j = 0; names && j < g->nmodules; j++)
                    names[j] = g->modules[j].name;
                const char *best = names ? cudag__suggest(mod->str, names, g->nmodules) : NULL;
                cudag__lerr(lw, CUDAG_EUNKNOWN, mod->pos,
                            "unknown module '%s'%s%s%s", mod->str,
                            CUDAG__DYM(best));
                cudag__free(names);
                goto bad;
            }
        } else if (file_nmodules == 1) {
            m = file_first_module;
            if (cudag__is_bad(lw, CUDAG__NS_MODULE, g->modules[m].name))
                goto bad;
        } else if (g->nmodules == 1 && lw->bad[CUDAG__NS_MODULE].len == 0) {
            m = 0;
        } else if (lw->bad[CUDAG__NS_MODULE].len) {
            goto bad;   /* its module may be the one that was left out */
        } else {
            cudag__lerr(lw, CUDAG_EKEY, k->pos,
                        "kernel '%s' needs 'module:' (%u modules are declared)",
                        k->str, g->nmodules);
            goto bad;
        }
        if (sym && !cudag__want(lw, sym, CUDAG__DOC_SCALAR, "symbol"))
            goto bad;
        if (sym && sym->len == 0) {
            cudag__lerr(lw, CUDAG_EKEY, sym->pos,
                        "kernel '%s' has an empty symbol", k->str);
            goto bad;
        }
        bool is_pdl = false;
        if (pdl && !cudag__parse_bool(pdl, &is_pdl)) {
            cudag__lerr(lw, CUDAG_EKEY, pdl->pos,
                        "pdl must be true or false");
            goto bad;
        }
        /* A CUDA source module says the parameters itself. */
        bool from_source = g->modules[m].decls != NULL;
        if (!params && !from_source) {
            cudag__lerr(lw, CUDAG_EKEY, v->pos,
                        "kernel '%s' has no params (write 'params: {}' for "
                        "none)",
                        k->str);
            goto bad;
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
                goto bad;
            if (from_source)
                cudag__sig_declared_in_source(g, &tmp);
        } else if (cudag__sig_from_source(g, &tmp, sym ? sym->str : NULL, at,
                                          &e) != CUDAG_OK) {
            cudag__lerr_error(lw, &e, at);
            goto bad;
        }
        if (cudag__sig_against_code(g, &tmp, at, &e) != CUDAG_OK) {
            cudag__lerr_error(lw, &e, at);
            goto bad;
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
            continue;
        }
        const char *name = s->name;
        *s = tmp;
        s->name = name;
        s->pos = k->pos;
        continue;
    bad:
        cudag__mark_bad(lw, CUDAG__NS_SIG, k->str);
    }
}

/* The init, seed and range of a buffer of element type ty into b.  A
 * constant is computed in floating point for a floating-point buffer. */
static int lower_init(cudag__lower *lw, const cudag__doc *v, cudag_type ty,
                      cudag__buffer *b)
{
    const cudag__doc *init = cudag__doc_get(v, "init");
    const cudag__doc *seed = cudag__doc_get(v, "seed");
    const cudag__doc *range = cudag__doc_get(v, "range");
    b->init.kind = CUDAG_INIT_NONE;
    if (init) {
        double c;
        if (!cudag__want(lw, init, CUDAG__DOC_SCALAR, "init"))
            return CUDAG_EKEY;
        if (strcmp(init->str, "zero") == 0) {
            b->init.kind = CUDAG_INIT_ZERO;
        } else if (strcmp(init->str, "iota") == 0) {
            b->init.kind = CUDAG_INIT_IOTA;
        } else if (strcmp(init->str, "random") == 0) {
            b->init.kind = CUDAG_INIT_RANDOM;
            b->init.seed = 1;
            b->init.lo = -1.0;
            b->init.hi = 1.0;
        } else if (cudag__parse_float(init->str, init->len, &c)) {
            b->init.kind = CUDAG_INIT_CONST;
            b->init.value = c;
        } else {
            cudag__num iv;
            cudag__diag quiet = *lw->d;
            /* An expression is a constant; anything else gets the list of
             * what init takes rather than an expression error. */
            quiet.fn = NULL;
            quiet.first = NULL;
            cudag__scope sc = cudag__scope_of(lw, NULL);
            int rc = cudag__expr_eval_num(
                init->str, init->len, init->pos, &sc,
                cudag__is_float_type(ty) ? CUDAG__EXPR_FLOAT : CUDAG__EXPR_ANY,
                &quiet, &iv);
            if (rc == CUDAG__EBAD)
                return rc;
            if (rc != CUDAG_OK) {
                static const char *const words[] = {"zero", "iota", "random"};
                const char *best = cudag__suggest(init->str, words, 3);
                return cudag__lerr(lw, CUDAG_EKEY, init->pos,
                                   "init must be zero, iota, random or a "
                                   "number, not '%s'%s%s%s",
                                   init->str, best ? " (did you mean '" : "",
                                   best ? best : "", best ? "'?)" : "");
            }
            b->init.kind = CUDAG_INIT_CONST;
            b->init.value = iv.fl ? iv.f : (double)iv.i;
        }
    }
    if ((seed || range) && b->init.kind != CUDAG_INIT_RANDOM)
        return cudag__lerr(lw, CUDAG_EKEY, (seed ? seed : range)->pos,
                           "'%s' only goes with 'init: random'",
                           seed ? "seed" : "range");
    if (seed) {
        int64_t s;
        if (cudag__eval(lw, seed, NULL, &s) != CUDAG_OK)
            return CUDAG_EEXPR;
        if (s < 0)
            return cudag__lerr(lw, CUDAG_ERANGE, seed->pos,
                               "seed must not be negative");
        b->init.seed = (uint64_t)s;
    }
    if (range) {
        if (range->type != CUDAG__DOC_SEQ || range->n != 2)
            return cudag__lerr(lw, CUDAG_EKEY, range->pos,
                               "range must be a list of two numbers [lo, hi]");
        double lim[2];
        for (int j = 0; j < 2; j++) {
            int rc = cudag__eval_float(lw, range->items[j], NULL, &lim[j]);
            if (rc != CUDAG_OK)
                return rc;
        }
        if (!(lim[0] < lim[1]))
            return cudag__lerr(lw, CUDAG_ERANGE, range->pos,
                               "range [%g, %g] is empty: lo must be below hi",
                               lim[0], lim[1]);
        b->init.lo = lim[0];
        b->init.hi = lim[1];
    }
    return CUDAG_OK;
}

/* A count below 1, reported where the mistake is, once: at the -D that set
 * a variable the count names ("-D N=-5: …"), at the variable a count of
 * just its name takes (vars: {N: -4}), else at the count.  The other
 * buffers counted by the same variable repeat it at the same place, which
 * says nothing more. */
static void bad_count(cudag__lower *lw, const cudag__doc *k,
                      const cudag__doc *count, int64_t n)
{
    const cudag__define *df = define_behind(lw, count);
    uint32_t v = CUDAG__NONE;
    if (count->type == CUDAG__DOC_SCALAR &&
        cudag__ident_end(count->str, 0, count->len) == count->len)
        v = cudag__find_var(lw->g, count->str);
    if (df)
        cudag__lerr(lw, CUDAG_ERANGE, df->pos,
                    "-D %s=%s: buffer '%s' needs a count of at least 1, not "
                    "%lld",
                    df->name, df->expr, k->str, (long long)n);
    else if (v != CUDAG__NONE && lw->g->vars[v].pos.line)
        cudag__lerr(lw, CUDAG_ERANGE, lw->g->vars[v].pos,
                    "variable '%s' is %lld, the count of buffer '%s' (a "
                    "count is at least 1)",
                    count->str, (long long)n, k->str);
    else
        cudag__lerr(lw, CUDAG_ERANGE, count->pos,
                    "buffer '%s' needs a count of at least 1, not %lld",
                    k->str, (long long)n);
}

static void lower_buffers(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *bufs = cudag__doc_get(f->root, "buffers");
    if (!bufs || !cudag__want(lw, bufs, CUDAG__DOC_MAP, "buffers"))
        return;
    static const char *const keys[] = {"type", "count", "init", "seed", "range"};
    for (uint32_t i = 0; i < bufs->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = bufs->items[2 * i], *v = bufs->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!name_ok(lw, k, "buffer"))
            continue;
        /* From here on a mistake leaves the buffer out, marked bad. */
        if (!cudag__want(lw, v, CUDAG__DOC_MAP, "a buffer") ||
            cudag__check_keys(lw, v, keys, 5, "a buffer"))
            goto bad;
        const cudag__doc *type = cudag__doc_get(v, "type");
        const cudag__doc *count = cudag__doc_get(v, "count");
        if (!type || !count) {
            cudag__lerr(lw, CUDAG_EKEY, k->pos, "buffer '%s' needs '%s'",
                        k->str, type ? "count" : "type");
            goto bad;
        }
        if (!cudag__want(lw, type, CUDAG__DOC_SCALAR, "a buffer's type"))
            goto bad;
        cudag_type ty = cudag__type_parse(type->str, type->len);
        if (!cudag__is_elem_type(ty)) {
            cudag__bad_type(lw, type->pos, type->str, true);
            goto bad;
        }
        int64_t n;
        if (cudag__eval(lw, count, NULL, &n) != CUDAG_OK)
            goto bad;
        if (n < 1) {
            bad_count(lw, k, count, n);
            goto bad;
        }
        cudag__buffer tmp;
        memset(&tmp, 0, sizeof tmp);
        if (lower_init(lw, v, ty, &tmp) != CUDAG_OK)
            goto bad;
        cudag__buffer *b;
        cudag_error e;
        if (cudag__add_buffer(lw->g, k->str, k->pos, &b, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        b->type = ty;
        b->count = (uint64_t)n;
        b->count_pos = count->pos;
        b->init = tmp.init;
        const cudag__doc *where = cudag__doc_get(v, "range");
        if (tmp.init.kind != CUDAG_INIT_RANDOM || !where)
            where = cudag__doc_get(v, "init");
        if (where)
            b->init_pos = where->pos;
        continue;
    bad:
        cudag__mark_bad(lw, CUDAG__NS_BUFFER, k->str);
    }
}

/* conditions: NAME: {default: EXPR} — or {} for no default. */
static void lower_conditions(cudag__lower *lw, const cudag__file *f)
{
    const cudag__doc *conds = cudag__doc_get(f->root, "conditions");
    if (!conds || !cudag__want(lw, conds, CUDAG__DOC_MAP, "conditions"))
        return;
    static const char *const keys[] = {"default"};
    for (uint32_t i = 0; i < conds->n && !cudag__diag_full(lw->d); i++) {
        const cudag__doc *k = conds->items[2 * i], *v = conds->items[2 * i + 1];
        if (cudag__free_key(k))
            continue;
        if (!name_ok(lw, k, "condition") ||
            !cudag__want(lw, v, CUDAG__DOC_MAP, "a condition") ||
            cudag__check_keys(lw, v, keys, 1, "a condition"))
            continue;
        const cudag__doc *dflt = cudag__doc_get(v, "default");
        int64_t value = 0;
        if (dflt && cudag__eval(lw, dflt, NULL, &value) != CUDAG_OK)
            continue;
        if (dflt && (value < 0 || value > (int64_t)UINT32_MAX)) {
            cudag__lerr(lw, CUDAG_ERANGE, dflt->pos,
                        "condition '%s': default %lld is out of range (0 to "
                        "4294967295)",
                        k->str, (long long)value);
            continue;
        }
        cudag__cond *c;
        cudag_error e;
        if (cudag__add_cond(lw->g, k->str, k->pos, &c, &e) != CUDAG_OK) {
            cudag__lerr(lw, e.code, k->pos, "%s", e.message);
            continue;
        }
        c->has_default = dflt != NULL;
        c->value = (uint32_t)value;
        if (dflt)
            c->default_pos = dflt->pos;
    }
}

/* ---- child-graph files -------------------------------------------------- */

/* lw->read_graph (front.h). */
static int read_graph(cudag__lower *lw, const char *dir,
                      const cudag__doc *name, cudag__file *out)
{
    cudag__arena *a = &lw->src->arena;
    memset(out, 0, sizeof *out);
    const char *path = join(a, dir, name->str);
    if (!path || !(out->dir = dir_of(a, path)))
        return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    if (name_fits(lw->d, path, name->pos) != CUDAG_OK)
        return CUDAG_ELIMIT;
    out->path = path;
    out->real = real_name(a, path);
    if (!out->real)
        return cudag__lerr(lw, CUDAG_ENOMEM, name->pos, "out of memory");
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(a, path, name->pos, lw->d, &text, &len);
    cudag__doc *root = NULL;
    if (rc == CUDAG_OK)
        rc = cudag__parse(a, path, text, len, &root, lw->d);
    out->root = root;
    return rc;
}

/* ---- the whole front end ------------------------------------------------ */

static int lower_all(cudag__lower *lw)
{
    cudag__source *src = lw->src;
    for (uint32_t i = 0; i < src->nfiles; i++) {
        lw->file = i;
        lower_header(lw, &src->files[i], i + 1 == src->nfiles);
    }
    if (lw->d->nerr)
        return lw->d->first_code;
    /* Section by section across files, so that every file may use the
     * variables, kernels and buffers of the files it includes. */
    for (uint32_t i = 0; i < src->nfiles; i++)
        lower_vars(lw, &src->files[i]);
    for (uint32_t i = 0; i < lw->ndefs; i++) {
        cudag__define *df = &lw->defs[i];
        if (df->used || find_define(lw, df->name) != df)
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
    for (uint32_t i = 0; i < src->nfiles; i++) {
        uint32_t first = lw->g->nmodules;
        lower_modules(lw, &src->files[i]);
        lower_kernels(lw, &src->files[i], first, lw->g->nmodules - first);
    }
    for (uint32_t i = 0; i < src->nfiles; i++)
        lower_buffers(lw, &src->files[i]);
    for (uint32_t i = 0; i < src->nfiles; i++)
        lower_conditions(lw, &src->files[i]);
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
    lw.read_graph = read_graph;
    int rc;
    if (!g || !(g->name = base_name(&g->arena, top->path))) {
        rc = cudag__report(d, CUDAG_SEV_ERROR, CUDAG_ENOMEM, CUDAG__NOPOS,
                           "out of memory");
    } else {
        rc = parse_defines(&lw, src->defines, extra);
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

int cudag__load(const char *path, const char *text, size_t len,
                const cudag_options *opts, cudag_graph **out, cudag__diag *d)
{
    cudag__source *src;
    *out = NULL;
    int rc = load_source(path, text, len, opts, &src, d);
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
        ng->source_borrowed = true;
        ng->overrides = copy_list(&ng->arena, ov);
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

/* ---- public entry points ------------------------------------------------- */

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
    int rc = cudag__load(path, text, len, opts, out, &d);
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
