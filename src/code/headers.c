/* headers.c — a CUDA source module's headers: its #include lines, and the
 * headers they name found (next to the includer, -I directories, the
 * library's built-in headers) and read once each.  Its own file: it reads
 * files, which the declaration reader never does. */
#include "code/headers.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/file.h"
#include "code/decls.h"
#include "code/lex.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- includes ------------------------------------------------------------ */

int cudag__src_includes(const char *text, size_t len,
                        int (*fn)(void *user, const char *name, size_t len,
                                  bool angled, uint32_t line),
                        void *user)
{
    cudag__lexer lx = {text, len, 0, 1, 1};
    bool bol = true;
    while (lx.i < lx.n) {
        if (cudag__lex_skip_space(&lx, false))
            bol = true;
        if (lx.i >= lx.n)
            break;
        if (!(bol && lx.s[lx.i] == '#')) {
            cudag__tok t;
            cudag__lex_one(&lx, &t);
            bol = false;
            continue;
        }
        cudag__lex_adv(&lx);
        cudag__lex_skip_space(&lx, true);
        cudag__tok w;
        if (cudag__lex_one(&lx, &w) && w.kind == CUDAG__T_ID && w.len == 7 &&
            memcmp(text + w.off, "include", 7) == 0) {
            cudag__lex_skip_space(&lx, true);
            if (lx.i < lx.n && (lx.s[lx.i] == '"' || lx.s[lx.i] == '<')) {
                char close = lx.s[lx.i] == '"' ? '"' : '>';
                uint32_t line = lx.line;
                size_t s0 = lx.i + 1, e = s0;
                while (e < lx.n && text[e] != close && text[e] != '\n')
                    e++;
                if (e < lx.n && text[e] == close) {
                    int rc = fn(user, text + s0, e - s0, close == '>', line);
                    if (rc)
                        return rc;
                }
            }
        }
        /* The rest of the directive's line. */
        while (lx.i < lx.n && lx.s[lx.i] != '\n') {
            if (lx.s[lx.i] == '\\' && lx.i + 1 < lx.n && lx.s[lx.i + 1] == '\n')
                cudag__lex_adv(&lx);
            cudag__lex_adv(&lx);
        }
        bol = true;
    }
    return 0;
}

typedef struct gather {
    cudag__arena *a;
    cudag__src_text *t;
    uint32_t n, cap;
    char **dirs;                /* per text: where its quoted includes start */
    char **reals;               /* per text: its canonical path, to read a
                                   header once however it is reached */
    const char *const *options;
    const char *const *include_dirs;
    const cudag__src_text *builtins;
    uint32_t nbuiltins;
    uint32_t cur;               /* the text being scanned */
    cudag_error *err;
    int rc;
} gather;

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/name in the arena when it is a file, else NULL (also on OOM, which
 * sets g->rc). */
static char *try_header(gather *g, const char *dir, const char *name)
{
    char *p = name[0] == '/' ? cudag__arena_strdup(g->a, name)
              : cudag__arena_printf(g->a, "%s/%s", dir, name);
    if (!p) {
        g->rc = CUDAG_ENOMEM;
        return NULL;
    }
    return exists(p) ? p : NULL;
}

/* A CUDA toolkit's include directory (cuda_fp16.h) or its CCCL directory
 * (cuda/std/version): what NVRTC is given anyway.  A module that names one
 * with -I still compiles the same; its headers (thousands in CCCL) declare
 * none of the module's kernels. */
static bool toolkit_dir(const char *dir)
{
    static const char *const marks[] = {"cuda_fp16.h", "cuda/std/version"};
    char p[PATH_MAX];
    for (size_t i = 0; i < 2; i++)
        if (snprintf(p, sizeof p, "%s/%s", dir, marks[i]) < (int)sizeof p &&
            exists(p))
            return true;
    return false;
}

/* The header in each -I directory of the options, then each include
 * directory, in order; NULL when none has it, or when the first that has
 * it is the toolkit's (its headers are NVRTC's, as when no -I names it). */
static char *search_dirs(gather *g, const char *name)
{
    const char *const *o = g->options;
    for (size_t i = 0; o && o[i] && !g->rc; i++) {
        const char *d = NULL;
        if (strncmp(o[i], "-I", 2) == 0)
            d = o[i][2] ? o[i] + 2 : o[i + 1];
        else if (strncmp(o[i], "--include-path=", 15) == 0)
            d = o[i] + 15;
        char *p = d ? try_header(g, d, name) : NULL;
        if (p)
            return toolkit_dir(d) ? NULL : p;
    }
    for (size_t i = 0; g->include_dirs && g->include_dirs[i] && !g->rc; i++) {
        char *p = try_header(g, g->include_dirs[i], name);
        if (p)
            return p;
    }
    return NULL;
}

static int on_include(void *user, const char *name, size_t len, bool angled,
                      uint32_t line)
{
    gather *g = user;
    cudag__pos pos = {g->t[g->cur].path, line, 1};
    char *nm = cudag__arena_strndup(g->a, name, len);
    if (!nm)
        return g->rc = CUDAG_ENOMEM;
    const cudag__src_text *builtin = NULL;
    for (uint32_t b = 0; b < g->nbuiltins; b++)
        if (strcmp(g->builtins[b].path, nm) == 0)
            builtin = &g->builtins[b];
    char *path = NULL;
    if (!builtin) {
        if (!angled && g->dirs[g->cur])
            path = try_header(g, g->dirs[g->cur], nm);
        if (!path && !g->rc)
            path = search_dirs(g, nm);
        if (g->rc)
            return g->rc;
        if (!path)
            return 0;
    }
    char rbuf[PATH_MAX];
    const char *real = builtin ? builtin->path : realpath(path, rbuf) ? rbuf
                                                                      : path;
    for (uint32_t i = 1; i < g->n; i++)
        if (g->reals[i] && strcmp(g->reals[i], real) == 0)
            return 0;           /* read once */
    char *rcopy = cudag__arena_strdup(g->a, real);
    if (!rcopy)
        return g->rc = cudag__fail_at(g->err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                      "out of memory");
    if (g->n >= CUDAG__MAX_HEADERS + 1)
        return g->rc = cudag__fail_at(g->err, CUDAG_ELIMIT, pos,
                                      "more than %u headers included",
                                      CUDAG__MAX_HEADERS);
    cudag__src_text *t =
        cudag__vec_push((void **)&g->t, &g->n, &g->cap, sizeof *t);
    char **d = t ? cudag__arena_alloc(g->a, g->cap * sizeof *d) : NULL;
    char **rl = d ? cudag__arena_alloc(g->a, g->cap * sizeof *rl) : NULL;
    if (!rl) {
        if (t)
            g->n--;
        return g->rc = cudag__fail_at(g->err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                      "out of memory");
    }
    memcpy(d, g->dirs, (g->n - 1) * sizeof *d);
    memcpy(rl, g->reals, (g->n - 1) * sizeof *rl);
    g->dirs = d;
    g->reals = rl;
    rl[g->n - 1] = rcopy;
    if (builtin) {
        *t = *builtin;
        d[g->n - 1] = NULL;
        return 0;
    }
    cudag__file_bytes fb;
    char what[300];
    snprintf(what, sizeof what, "header '%s'", nm);
    int rc = cudag__file_read(path, CUDAG__MAX_SOURCE_BYTES, CUDAG__FILE_READ,
                              g->a, what, pos, &fb, NULL, g->err);
    if (rc != CUDAG_OK) {
        g->n--;
        return g->rc = rc;
    }
    t->path = path;
    t->text = fb.p;
    t->len = fb.len;
    char *slash = strrchr(path, '/');
    d[g->n - 1] = slash ? cudag__arena_strndup(g->a, path, (size_t)(slash - path))
                        : cudag__arena_strdup(g->a, ".");
    if (!d[g->n - 1])
        return g->rc = cudag__fail_at(g->err, CUDAG_ENOMEM, CUDAG__NOPOS,
                                      "out of memory");
    return 0;
}

int cudag__src_gather(cudag__arena *a, const cudag__src_text *main,
                      const char *dir, const char *const *options,
                      const char *const *include_dirs,
                      const cudag__src_text *builtins, uint32_t nbuiltins,
                      cudag__src_text **out, uint32_t *n, cudag_error *err)
{
    *out = NULL;
    *n = 0;
    gather g;
    memset(&g, 0, sizeof g);
    g.a = a;
    g.options = options;
    g.include_dirs = include_dirs;
    g.builtins = builtins;
    g.nbuiltins = nbuiltins;
    g.err = err;
    cudag__src_text *t = cudag__vec_push((void **)&g.t, &g.n, &g.cap, sizeof *t);
    g.dirs = cudag__arena_alloc(a, sizeof *g.dirs);
    g.reals = cudag__arena_alloc(a, sizeof *g.reals);
    if (!t || !g.dirs || !g.reals) {
        cudag__free(g.t);
        return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    }
    *t = *main;
    g.dirs[0] = (char *)dir;
    for (g.cur = 0; g.cur < g.n && !g.rc; g.cur++)
        cudag__src_includes(g.t[g.cur].text, g.t[g.cur].len, on_include, &g);
    if (g.rc == CUDAG_ENOMEM && (!err || err->code != CUDAG_ENOMEM))
        cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    cudag__src_text *copy = g.rc ? NULL : cudag__arena_alloc(a, g.n * sizeof *copy);
    if (!g.rc && !copy)
        g.rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
    if (copy) {
        memcpy(copy, g.t, g.n * sizeof *copy);
        *out = copy;
        *n = g.n;
    }
    cudag__free(g.t);
    return g.rc;
}
