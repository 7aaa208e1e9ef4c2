/* lowering.c — what the YAML front end's files share while they turn document
 * trees into IR (yaml/lowering.h): reporting at a position, the shape of a mapping,
 * expressions, numbers, names, suggestions and buffer references.  Below
 * front/, nodes.c and the node kinds' YAML readers; calls only down (parse,
 * expr, graph, util). */
#include "yaml/lowering.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "yaml/expr.h"
#include "yaml/parse.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reports and shapes -------------------------------------------------- */

int cudag__lerr(cudag__lower *lw, int code, cudag__pos pos, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    cudag__vreport(lw->d, CUDAG_SEV_ERROR, code, pos, fmt, ap);
    va_end(ap);
    return code;
}

static const char *type_word(cudag__doc_type t)
{
    return t == CUDAG__DOC_SCALAR ? "a scalar"
           : t == CUDAG__DOC_SEQ  ? "a sequence"
                                  : "a mapping";
}

int cudag__lerr_error(cudag__lower *lw, const cudag_error *e,
                      cudag__pos fallback)
{
    cudag__pos pos = fallback;
    if (e->line > 0) {
        /* The position must outlive the report: a module's path when it is
         * one (the same pointer each time, so that the report of a mistake
         * repeated in every copy of a group is made once), else a copy in
         * the graph's arena (a header). */
        const char *file = NULL;
        for (uint32_t m = 0; m < lw->g->nmodules && !file; m++)
            if (lw->g->modules[m].path &&
                strcmp(lw->g->modules[m].path, e->file) == 0)
                file = lw->g->modules[m].path;
        if (!file)
            file = cudag__arena_strdup(&lw->g->arena, e->file);
        if (file)
            pos = (cudag__pos){file, (uint32_t)e->line, (uint32_t)e->column};
    }
    return cudag__lerr(lw, e->code, pos, "%s", e->message);
}

bool cudag__want(cudag__lower *lw, const cudag__doc *n, cudag__doc_type t,
                 const char *what)
{
    if (n->type == t)
        return true;
    cudag__lerr(lw, CUDAG_EKEY, n->pos, "%s must be %s, not %s", what,
                type_word(t), cudag__doc_what(n));
    return false;
}

bool cudag__name_ok(cudag__lower *lw, const cudag__doc *k, const char *what)
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

int cudag__check_version(cudag__lower *lw, const cudag__doc *v)
{
    if (v->type != CUDAG__DOC_SCALAR || strcmp(v->str, "1") != 0)
        return cudag__lerr(lw, CUDAG_EKEY, v->pos,
                           "unsupported format version '%s' (this cudag reads "
                           "version %d)",
                           v->type == CUDAG__DOC_SCALAR ? v->str : "?",
                           CUDAG_FORMAT_VERSION);
    return CUDAG_OK;
}

unsigned cudag__check_keys(cudag__lower *lw, const cudag__doc *map,
                           const char *const *allowed, size_t n,
                           const char *what)
{
    unsigned bad = 0;
    for (uint32_t i = 0; i < map->n; i++) {
        const cudag__doc *k = map->items[2 * i];
        if (cudag__free_key(k))
            continue;
        size_t j = 0;
        while (j < n && strcmp(allowed[j], k->str) != 0)
            j++;
        if (j < n)
            continue;
        bad++;
        const char *best = cudag__suggest(k->str, allowed, n);
        if (strchr(k->str, ')') && !strchr(k->str, '('))
            cudag__lerr(lw, CUDAG_EKEY, k->pos,
                        "unknown key '%s' in %s: a ',' inside {...} or [...] "
                        "splits an expression; quote it (\"cdiv(N, 256)\") or "
                        "use block style",
                        k->str, what);
        else if (best)
            cudag__lerr(lw, CUDAG_EKEY, k->pos,
                        "unknown key '%s' in %s (did you mean '%s'?)", k->str,
                        what, best);
        else
            cudag__lerr(lw, CUDAG_EKEY, k->pos, "unknown key '%s' in %s",
                        k->str, what);
    }
    return bad;
}

/* Scalar node n as an expression in `mode` (integers or floating point). */
static int eval_in(cudag__lower *lw, const cudag__doc *n,
                   const cudag__binding *env, cudag__expr_mode mode,
                   cudag__num *out)
{
    if (n->type != CUDAG__DOC_SCALAR)
        return cudag__lerr(lw, CUDAG_EEXPR, n->pos, "expected %s, not %s",
                           mode == CUDAG__EXPR_INT
                               ? "an integer expression"
                               : "a number or an expression",
                           cudag__doc_what(n));
    cudag__scope sc = cudag__scope_of(lw, env);
    return cudag__expr_eval_num(n->str, n->len, cudag__doc_pos_at(n, 0), &sc,
                                mode, lw->d, out);
}

int cudag__eval(cudag__lower *lw, const cudag__doc *n,
                const cudag__binding *env, int64_t *out)
{
    cudag__num v;
    int rc = eval_in(lw, n, env, CUDAG__EXPR_INT, &v);
    if (rc == CUDAG_OK)
        *out = v.i;
    return rc;
}

int cudag__eval_float(cudag__lower *lw, const cudag__doc *n,
                      const cudag__binding *env, double *out)
{
    cudag__num v;
    int rc = eval_in(lw, n, env, CUDAG__EXPR_FLOAT, &v);
    if (rc == CUDAG_OK)
        *out = v.f;
    return rc;
}

cudag__scope cudag__scope_of(const cudag__lower *lw, const cudag__binding *env)
{
    cudag__scope sc = {lw->nchild ? NULL : lw->g, env,
                       &lw->bad[CUDAG__NS_VAR]};
    return sc;
}

void cudag__mark_bad(cudag__lower *lw, cudag__ns ns, const char *name)
{
    (void)cudag__map_put(&lw->bad[ns], name, 0);
}

bool cudag__is_bad(const cudag__lower *lw, cudag__ns ns, const char *name)
{
    return cudag__map_get(&lw->bad[ns], name, NULL);
}

bool cudag__parse_bool(const cudag__doc *n, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "on"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "off"};
    if (n->type != CUDAG__DOC_SCALAR)
        return false;
    for (size_t i = 0; i < 5; i++) {
        if (strcmp(n->str, yes[i]) == 0)
            return (*out = true), true;
        if (strcmp(n->str, no[i]) == 0)
            return (*out = false), true;
    }
    return false;
}

bool cudag__parse_float(const char *s, size_t len, double *out)
{
    /* A float is a decimal number with a '.' or an exponent: "2" stays an
     * integer expression, and hex or names are never floats. */
    bool mark = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.' || c == 'e' || c == 'E')
            mark = true;
        else if (!((c >= '0' && c <= '9') || c == '-' || c == '+'))
            return false;
    }
    if (!mark || len == 0 || len > 64)
        return false;
    char buf[65];
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool cudag__free_key(const cudag__doc *k)
{
    return k->type == CUDAG__DOC_SCALAR && strncmp(k->str, "x-", 2) == 0;
}


/* ---- type words ------------------------------------------------------------ */

/* C's (and array libraries') names of the element types. */
static const struct {
    const char *c, *word;
} c_types[] = {
    {"float", "f32"}, {"double", "f64"}, {"half", "f16"}, {"__half", "f16"},
    {"__nv_bfloat16", "bf16"}, {"nv_bfloat16", "bf16"}, {"bfloat16", "bf16"},
    {"__bf16", "bf16"}, {"char", "i8"}, {"signed char", "i8"},
    {"unsigned char", "u8"}, {"short", "i16"}, {"short int", "i16"},
    {"unsigned short", "u16"}, {"int", "i32"}, {"signed", "i32"},
    {"signed int", "i32"}, {"unsigned", "u32"}, {"unsigned int", "u32"},
    {"long", "i64"}, {"long int", "i64"}, {"long long", "i64"},
    {"long long int", "i64"}, {"unsigned long", "u64"},
    {"unsigned long long", "u64"}, {"size_t", "u64"}, {"ssize_t", "i64"},
    {"ptrdiff_t", "i64"}, {"int8_t", "i8"}, {"uint8_t", "u8"},
    {"int16_t", "i16"}, {"uint16_t", "u16"}, {"int32_t", "i32"},
    {"uint32_t", "u32"}, {"int64_t", "i64"}, {"uint64_t", "u64"},
    {"int8", "i8"}, {"uint8", "u8"}, {"int16", "i16"}, {"uint16", "u16"},
    {"int32", "i32"}, {"uint32", "u32"}, {"int64", "i64"}, {"uint64", "u64"},
    {"float16", "f16"}, {"float32", "f32"}, {"float64", "f64"},
    {"fp16", "f16"}, {"fp32", "f32"}, {"fp64", "f64"}, {"bool", "u8"},
    {"pointer", "ptr"}, {"void", "ptr"},
};

/* The cudag word for a C spelling: qualifiers dropped, a pointer is ptr (or,
 * for a buffer's elements, what it points to).  NULL when it is none. */
static const char *c_type_word(const char *word, bool element)
{
    char buf[64];
    size_t n = 0;
    bool pointer = false;
    for (const char *s = word; *s;) {
        while (*s == ' ' || *s == '\t')
            s++;
        const char *e = s;
        while (*e && *e != ' ' && *e != '\t' && *e != '*')
            e++;
        size_t len = (size_t)(e - s);
        bool qualifier = (len == 5 && strncmp(s, "const", 5) == 0) ||
                         (len == 8 && strncmp(s, "volatile", 8) == 0) ||
                         (len == 8 && strncmp(s, "restrict", 8) == 0) ||
                         (len == 12 && strncmp(s, "__restrict__", 12) == 0);
        if (len && !qualifier) {
            if (n + len + 2 > sizeof buf)
                return NULL;
            if (n)
                buf[n++] = ' ';
            memcpy(buf + n, s, len);
            n += len;
        }
        for (s = e; *s == '*'; s++)
            pointer = true;
    }
    buf[n] = '\0';
    if (pointer && !element)
        return "ptr";
    for (size_t i = 0; i < sizeof c_types / sizeof *c_types; i++)
        if (strcmp(buf, c_types[i].c) == 0)
            return element && strcmp(c_types[i].word, "ptr") == 0
                       ? NULL
                       : c_types[i].word;
    return NULL;
}

int cudag__bad_type(cudag__lower *lw, cudag__pos pos, const char *word,
                    bool element)
{
    /* A parameter may be any of them; a buffer's element type one of the
     * twelve between "ptr" and "cond" (a condition handle). */
    static const char *const names[] = {"ptr", "i8", "u8", "i16", "u16",
                                        "i32", "u32", "i64", "u64", "f16",
                                        "bf16", "f32", "f64", "cond"};
    const char *const *valid = element ? names + 1 : names;
    size_t nvalid = element ? 12 : 14;
    const char *best = c_type_word(word, element);
    if (!best)
        best = cudag__suggest(word, valid, nvalid);
    if (!best) {
        /* A typo of a C spelling ("flaot"): that spelling's word. */
        enum { NC = sizeof c_types / sizeof *c_types };
        const char *spellings[NC];
        for (size_t i = 0; i < NC; i++)
            spellings[i] = c_types[i].c;
        const char *c = cudag__suggest(word, spellings, NC);
        best = c ? c_type_word(c, element) : NULL;
    }
    char list[128];
    size_t len = 0;
    for (size_t i = 0; i < nvalid; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i ? ", " : "", valid[i]);
    if (element)
        return cudag__lerr(lw, CUDAG_ETYPE, pos,
                           "'%s' is not an element type (%s%s%sthe element "
                           "types are %s)",
                           word, best ? "did you mean '" : "",
                           best ? best : "", best ? "'? " : "", list);
    return cudag__lerr(lw, CUDAG_ETYPE, pos,
                       "unknown type '%s' (%s%s%sthe types are %s)", word,
                       best ? "did you mean '" : "", best ? best : "",
                       best ? "'? " : "", list);
}

/* ---- names and references --------------------------------------------- */

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool cudag__is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }

size_t cudag__skip_ws(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

size_t cudag__ident_end(const char *s, size_t i, size_t len)
{
    if (i >= len || !is_alpha(s[i]))
        return i;
    while (i < len && cudag__is_alnum(s[i]))
        i++;
    return i;
}

bool cudag__each_name(const char *s, size_t len,
                      bool (*fn)(void *ctx, const char *name), void *ctx)
{
    for (size_t i = 0; s && i < len;) {
        size_t e = cudag__ident_end(s, i, len);
        if (e == i) {
            /* Not a name: skip a number (1e5) whole, or one character. */
            while (++i < len && cudag__is_alnum(s[i - 1]) &&
                   cudag__is_alnum(s[i]))
                ;
            continue;
        }
        char name[CUDAG__MAX_NAME + 1];
        size_t after = cudag__skip_ws(s, e, len);
        if (e - i <= CUDAG__MAX_NAME && (after == len || s[after] != '(')) {
            memcpy(name, s + i, e - i);
            name[e - i] = '\0';
            if (fn(ctx, name))
                return true;
        }
        i = e;
    }
    return false;
}

const char *cudag__suggest_from(const char *word, const char *const *names,
                                size_t n)
{
    return n ? cudag__suggest(word, names, n) : NULL;
}

/* A suggestion among the names of one namespace (an array of structs whose
 * name is at name_off), gathered on the error path only. */
const char *cudag__suggest_in(cudag__lower *lw, const void *arr, uint32_t n,
                              size_t stride, size_t name_off, const char *word)
{
    /* A repeated mistake in a 100 000-node graph would otherwise search
     * every node once per report: the first few errors get the search. */
    if (n > 4096 && lw->big_searches++ >= 4)
        return NULL;
    const char **names = cudag__malloc((n + 1) * sizeof *names);
    if (!names)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        names[i] = *(const char *const *)((const char *)arr + i * stride +
                                          name_off);
    const char *best = cudag__suggest_from(word, names, n);
    cudag__free(names);
    return best;
}

/* "buf", "buf + expr" or "buf+expr": a buffer and an element offset.  Returns
 * false (nothing reported) when the text does not start with a buffer name. */
bool cudag__buffer_ref(cudag__lower *lw, const cudag__doc *sc,
                       const cudag__binding *env, uint32_t *buf,
                       uint64_t *offset, int *rc)
{
    const char *s = sc->str;
    size_t i = cudag__skip_ws(s, 0, sc->len);
    size_t e = cudag__ident_end(s, i, sc->len);
    if (e == i || e - i > CUDAG__MAX_NAME)
        return false;
    char name[CUDAG__MAX_NAME + 1];
    memcpy(name, s + i, e - i);
    name[e - i] = '\0';
    uint32_t b = cudag__find_buffer(lw->g, name);
    if (b == CUDAG__NONE && cudag__is_bad(lw, CUDAG__NS_BUFFER, name)) {
        *rc = CUDAG__EBAD;
        return true;
    }
    if (b == CUDAG__NONE)
        return false;
    *buf = b;
    *offset = 0;
    *rc = CUDAG_OK;
    size_t j = cudag__skip_ws(s, e, sc->len);
    if (j == sc->len)
        return true;
    if (s[j] != '+') {
        *rc = cudag__lerr(lw, CUDAG_EEXPR, cudag__doc_pos_at(sc, j),
                          "after buffer '%s' only '+ OFFSET' (in elements) "
                          "may follow",
                          name);
        return true;
    }
    int64_t off;
    cudag__scope scope = cudag__scope_of(lw, env);
    size_t x = cudag__skip_ws(s, j + 1, sc->len);
    *rc = cudag__expr_eval(s + x, sc->len - x, cudag__doc_pos_at(sc, x),
                           &scope, lw->d, &off);
    if (*rc == CUDAG_OK && off < 0)
        *rc = cudag__lerr(lw, CUDAG_ERANGE, cudag__doc_pos_at(sc, x),
                          "a buffer offset must not be negative (%lld)",
                          (long long)off);
    if (*rc == CUDAG_OK)
        *offset = (uint64_t)off;
    return true;
}

size_t cudag__leading_name(const cudag__doc *v, char name[CUDAG__MAX_NAME + 1],
                           size_t *at)
{
    size_t i = cudag__skip_ws(v->str, 0, v->len);
    size_t e = cudag__ident_end(v->str, i, v->len);
    size_t n = e - i < CUDAG__MAX_NAME ? e - i : CUDAG__MAX_NAME;
    memcpy(name, v->str + i, n);
    name[n] = '\0';
    *at = i;
    return n;
}

/* memset: BUF [+ OFF]  /  memcpy: BUF [+ OFF], from: BUF [+ OFF] */
bool cudag__buffer_target(cudag__lower *lw, const cudag__doc *v,
                          const cudag__binding *env, const char *what,
                          uint32_t *buf, uint64_t *off)
{
    if (!cudag__want(lw, v, CUDAG__DOC_SCALAR, what))
        return false;
    int rc;
    if (cudag__buffer_ref(lw, v, env, buf, off, &rc))
        return rc == CUDAG_OK;  /* a bad one was reported, or is known bad */
    char name[CUDAG__MAX_NAME + 1];
    size_t i, n = cudag__leading_name(v, name, &i);
    const char *best = n ? cudag__suggest_buffer(lw, name) : NULL;
    cudag__lerr(lw, CUDAG_EUNKNOWN, cudag__doc_pos_at(v, i),
                "%s needs a buffer, and '%s' is none%s%s%s", what,
                n ? name : v->str, CUDAG__DYM(best));
    return false;
}

void cudag__lower_count(cudag__lower *lw, const cudag__pending *p,
                        const cudag__doc *count, uint64_t dflt, uint64_t *out)
{
    *out = dflt;
    int64_t c;
    if (!count || cudag__eval(lw, count, p->env, &c) != CUDAG_OK)
        return;
    if (c < 1) {
        cudag__lerr(lw, CUDAG_ERANGE, count->pos,
                    "count must be at least 1, not %lld", (long long)c);
        return;
    }
    *out = (uint64_t)c;
}

