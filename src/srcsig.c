/* srcsig.c — reads kernel declarations from CUDA C++ source without a
 * compiler: a lexer that knows comments, strings and preprocessor lines; a
 * walk over top-level declarations that descends into extern "C" blocks and
 * namespaces and skips every other body; the C type table.
 *
 * What it accepts, at file scope (in any namespace or extern "C" block):
 *
 *   [template <PARAMS>] [extern "C"] [static|inline|…] __global__ void
 *       [__launch_bounds__(…)] NAME ( [TYPE [NAME] {, TYPE [NAME]}] ) {…}|;
 *
 * where TYPE is a type of the table (see cudag__src_ctype) after macros
 * (#define, -D), aliases (typedef, using) and template arguments are
 * replaced.  Function bodies are scanned only for what they call, to decide
 * which kernels reach a PDL wait. */
#include "srcsig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- lexer ------------------------------------------------------------- */

enum { T_ID, T_NUM, T_STR, T_CHR, T_PUNCT };

typedef struct tok {
    uint32_t off, len;          /* in the text */
    uint32_t line, col;
    uint8_t kind;
    uint8_t text;               /* which text */
    bool bol;                   /* first token of its line */
} tok;

typedef struct lexer {
    const char *s;
    size_t n, i;
    uint32_t line, col;
} lexer;

static bool is_id0(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (unsigned char)c >= 0x80;
}

static bool is_id(char c) { return is_id0(c) || (c >= '0' && c <= '9'); }

static void adv(lexer *lx)
{
    if (lx->s[lx->i] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->i++;
}

/* Skips spaces, comments and backslash-newlines; true if a newline passed. */
static bool skip_space(lexer *lx, bool stop_at_newline)
{
    bool nl = false;
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (c == '\\' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '\n') {
            adv(lx);
            adv(lx);
        } else if (c == '\n') {
            if (stop_at_newline)
                return true;
            nl = true;
            adv(lx);
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
                   c == '\v') {
            adv(lx);
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '/') {
            while (lx->i < lx->n && lx->s[lx->i] != '\n') {
                if (lx->s[lx->i] == '\\' && lx->i + 1 < lx->n &&
                    lx->s[lx->i + 1] == '\n')
                    adv(lx);
                adv(lx);
            }
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '*') {
            adv(lx);
            adv(lx);
            while (lx->i < lx->n &&
                   !(lx->s[lx->i] == '*' && lx->i + 1 < lx->n &&
                     lx->s[lx->i + 1] == '/'))
                adv(lx);
            if (lx->i < lx->n) {
                adv(lx);
                adv(lx);
            }
        } else {
            break;
        }
    }
    return nl;
}

/* Lexes one token at lx->i (which is not a space); false at the end. */
static bool lex_one(lexer *lx, tok *t)
{
    if (lx->i >= lx->n)
        return false;
    t->off = (uint32_t)lx->i;
    t->line = lx->line;
    t->col = lx->col;
    const char *s = lx->s;
    char c = s[lx->i];
    if (is_id0(c)) {
        while (lx->i < lx->n && is_id(s[lx->i]))
            adv(lx);
        size_t l = lx->i - t->off;
        /* A raw string: R"delim( … )delim", with an optional prefix. */
        if (lx->i < lx->n && s[lx->i] == '"' && s[lx->i - 1] == 'R' && l <= 3) {
            adv(lx);
            size_t d0 = lx->i;
            while (lx->i < lx->n && s[lx->i] != '(' && lx->i - d0 < 16)
                adv(lx);
            size_t dl = lx->i - d0;
            while (lx->i < lx->n) {
                if (s[lx->i] == ')' && lx->i + dl + 1 < lx->n &&
                    memcmp(s + lx->i + 1, s + d0, dl) == 0 &&
                    s[lx->i + 1 + dl] == '"') {
                    for (size_t k = 0; k < dl + 2; k++)
                        adv(lx);
                    break;
                }
                adv(lx);
            }
            t->kind = T_STR;
        } else if (lx->i < lx->n && (s[lx->i] == '"' || s[lx->i] == '\'') &&
                   l <= 2) {
            /* u8"…", L'…': the prefix belongs to the literal. */
            char q = s[lx->i];
            adv(lx);
            while (lx->i < lx->n && s[lx->i] != q && s[lx->i] != '\n') {
                if (s[lx->i] == '\\' && lx->i + 1 < lx->n)
                    adv(lx);
                adv(lx);
            }
            if (lx->i < lx->n && s[lx->i] == q)
                adv(lx);
            t->kind = q == '"' ? T_STR : T_CHR;
        } else {
            t->kind = T_ID;
        }
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && lx->i + 1 < lx->n && s[lx->i + 1] >= '0' &&
                s[lx->i + 1] <= '9')) {
        /* pp-number: digits, letters, dots, quotes, and signs after e/p. */
        while (lx->i < lx->n) {
            char d = s[lx->i];
            if (is_id(d) || d == '.' ||
                (d == '\'' && lx->i + 1 < lx->n && is_id(s[lx->i + 1])))
                adv(lx);
            else if ((d == '+' || d == '-') &&
                     strchr("eEpP", s[lx->i - 1]) != NULL)
                adv(lx);
            else
                break;
        }
        t->kind = T_NUM;
    } else if (c == '"' || c == '\'') {
        adv(lx);
        while (lx->i < lx->n && s[lx->i] != c && s[lx->i] != '\n') {
            if (s[lx->i] == '\\' && lx->i + 1 < lx->n)
                adv(lx);
            adv(lx);
        }
        if (lx->i < lx->n && s[lx->i] == c)
            adv(lx);
        t->kind = c == '"' ? T_STR : T_CHR;
    } else {
        t->kind = T_PUNCT;
        if ((c == ':' && lx->i + 1 < lx->n && s[lx->i + 1] == ':') ||
            (c == '-' && lx->i + 1 < lx->n && s[lx->i + 1] == '>')) {
            adv(lx);
        } else if (c == '.' && lx->i + 2 < lx->n && s[lx->i + 1] == '.' &&
                   s[lx->i + 2] == '.') {
            adv(lx);
            adv(lx);
        }
        adv(lx);
    }
    t->len = (uint32_t)(lx->i - t->off);
    return true;
}

/* ---- reading state ------------------------------------------------------ */

/* A function seen with a body: its name and the range of its body's tokens,
 * for the wait analysis. */
typedef struct func {
    uint32_t text;
    uint32_t name_off, name_len;
    uint32_t body, end;         /* token indices in that text's array */
    bool waits;
} func;

typedef struct reader {
    cudag__arena *a;
    const cudag__src_text *texts;
    uint32_t ntexts;
    /* The texts' tokens, one array each (toks[t], ntoks[t]). */
    tok **toks;
    uint32_t *ntoks;
    /* What is collected, in growable arrays copied into the arena at the
     * end. */
    cudag__src_kernel *k;   uint32_t nk, ck;
    cudag__src_macro *mac;  uint32_t nmac, cmac;
    cudag__src_alias *ali;  uint32_t nali, cali;
    func *fn;               uint32_t nfn, cfn;
    uint32_t *kfunc;        /* per kernel: its func with a body, or NOFUNC */
    uint32_t nkfunc, ckfunc;
    bool oom;
} reader;

#define NOFUNC UINT32_MAX

static const char *tstr(const reader *r, uint32_t text, const tok *t)
{
    return r->texts[text].text + t->off;
}

static bool teq(const reader *r, uint32_t text, const tok *t, const char *w)
{
    size_t l = strlen(w);
    return t->len == l && memcmp(tstr(r, text, t), w, l) == 0;
}

static bool tpunct(const reader *r, uint32_t text, const tok *t, char c)
{
    return t->kind == T_PUNCT && t->len == 1 && *tstr(r, text, t) == c;
}

static cudag__pos tpos(const reader *r, uint32_t text, const tok *t)
{
    return (cudag__pos){r->texts[text].path, t->line, t->col};
}

/* Records a #define or #undef from the directive starting after '#'. */
static void directive(reader *r, uint32_t text, lexer *lx)
{
    skip_space(lx, true);
    tok w;
    if (!lex_one(lx, &w) || w.kind != T_ID)
        goto rest;
    const char *s = lx->s;
    bool def = w.len == 6 && memcmp(s + w.off, "define", 6) == 0;
    bool undef = w.len == 5 && memcmp(s + w.off, "undef", 5) == 0;
    if (!def && !undef)
        goto rest;
    skip_space(lx, true);
    tok name;
    if (lx->i >= lx->n || lx->s[lx->i] == '\n' || !lex_one(lx, &name) ||
        name.kind != T_ID)
        goto rest;
    bool function = def && lx->i < lx->n && s[lx->i] == '(';
    if (function) {
        while (lx->i < lx->n && s[lx->i] != ')' && s[lx->i] != '\n')
            adv(lx);
        if (lx->i < lx->n && s[lx->i] == ')')
            adv(lx);
    }
    skip_space(lx, true);
    size_t b0 = lx->i;
    while (lx->i < lx->n && s[lx->i] != '\n') {
        if (s[lx->i] == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n')
            adv(lx);
        adv(lx);
    }
    size_t b1 = lx->i;
    /* The body without trailing comments or spaces: lexing it again later
     * skips comments, so only the end needs trimming. */
    while (b1 > b0 && (s[b1 - 1] == ' ' || s[b1 - 1] == '\t' ||
                       s[b1 - 1] == '\r'))
        b1--;
    cudag__src_macro *m =
        cudag__vec_push((void **)&r->mac, &r->nmac, &r->cmac, sizeof *m);
    if (!m) {
        r->oom = true;
        return;
    }
    m->name = cudag__arena_strndup(r->a, s + name.off, name.len);
    /* An #undef is a macro with no name match: recorded as a NULL body. */
    m->body = undef ? NULL : cudag__arena_strndup(r->a, s + b0, b1 - b0);
    m->function = function;
    if (!m->name || (!undef && !m->body))
        r->oom = true;
    (void)text;
    return;
rest:
    while (lx->i < lx->n && lx->s[lx->i] != '\n') {
        if (lx->s[lx->i] == '\\' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '\n')
            adv(lx);
        /* A comment may hide a newline that does not end the directive. */
        if (lx->s[lx->i] == '/' && lx->i + 1 < lx->n &&
            (lx->s[lx->i + 1] == '*' || lx->s[lx->i + 1] == '/')) {
            if (lx->s[lx->i + 1] == '/')
                break;
            skip_space(lx, true);
            continue;
        }
        adv(lx);
    }
}

/* Tokenises text t, taking in its directives. */
static int tokenize(reader *r, uint32_t t)
{
    lexer lx = {r->texts[t].text, r->texts[t].len, 0, 1, 1};
    tok *v = NULL;
    uint32_t n = 0, cap = 0;
    bool bol = true;
    for (;;) {
        if (skip_space(&lx, false))
            bol = true;
        if (lx.i >= lx.n)
            break;
        if (bol && lx.s[lx.i] == '#') {
            adv(&lx);
            directive(r, t, &lx);
            if (r->oom)
                goto oom;
            continue;
        }
        tok *k = cudag__vec_push((void **)&v, &n, &cap, sizeof *k);
        if (!k)
            goto oom;
        lex_one(&lx, k);
        k->text = (uint8_t)t;
        k->bol = bol;
        bol = false;
    }
    r->toks[t] = v;
    r->ntoks[t] = n;
    return CUDAG_OK;
oom:
    cudag__free(v);
    r->oom = true;
    return CUDAG_ENOMEM;
}

/* ---- declarations ------------------------------------------------------- */

/* Index of the token closing the bracket opened at i (same kind), or n. */
static uint32_t match(const reader *r, uint32_t text, uint32_t i, uint32_t n)
{
    const tok *v = r->toks[text];
    char open = *tstr(r, text, &v[i]);
    char close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
    uint32_t depth = 0;
    for (uint32_t j = i; j < n; j++) {
        if (v[j].kind != T_PUNCT || v[j].len != 1)
            continue;
        char c = *tstr(r, text, &v[j]);
        if (c == open)
            depth++;
        else if (c == close && --depth == 0)
            return j;
        /* Inside angle brackets a paren group may hold '<' or '>'. */
        else if (open == '<' && c == '(')
            j = match(r, text, j, n);
        else if (open == '<' && (c == ';' || c == '{' || c == '}'))
            return n;
    }
    return n;
}

/* Joins tokens [i, j) with single spaces, in the arena. */
static char *join(reader *r, uint32_t text, uint32_t i, uint32_t j)
{
    const tok *v = r->toks[text];
    size_t len = 0;
    for (uint32_t k = i; k < j; k++)
        len += v[k].len + 1;
    char *out = cudag__arena_alloc(r->a, len + 1);
    if (!out) {
        r->oom = true;
        return NULL;
    }
    size_t o = 0;
    for (uint32_t k = i; k < j; k++) {
        if (o)
            out[o++] = ' ';
        memcpy(out + o, tstr(r, text, &v[k]), v[k].len);
        o += v[k].len;
    }
    out[o] = '\0';
    return out;
}

static bool is_attribute_call(const reader *r, uint32_t text, const tok *t)
{
    static const char *const attrs[] = {
        "__launch_bounds__", "__cluster_dims__", "__maxnreg__",
        "__attribute__", "__declspec", "alignas", "__align__",
        "__grid_constant__"};
    if (t->kind != T_ID)
        return false;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (teq(r, text, t, attrs[i]))
            return true;
    return false;
}

/* Splits the parameter list (i, j) — i the '(' and j the ')' — into
 * parameters and records them on kernel k. */
static void read_params(reader *r, uint32_t text, uint32_t i, uint32_t j,
                        cudag__src_kernel *k)
{
    const tok *v = r->toks[text];
    /* `( )` and `(void)` declare no parameters. */
    if (j == i + 1 || (j == i + 2 && teq(r, text, &v[i + 1], "void")))
        return;
    uint32_t count = 1;
    for (uint32_t p = i + 1; p < j; p++) {
        if (tpunct(r, text, &v[p], '(') || tpunct(r, text, &v[p], '[') ||
            tpunct(r, text, &v[p], '{') || tpunct(r, text, &v[p], '<'))
            p = match(r, text, p, j);
        else if (tpunct(r, text, &v[p], ','))
            count++;
    }
    k->params = cudag__arena_alloc(r->a, count * sizeof *k->params);
    if (!k->params) {
        r->oom = true;
        return;
    }
    uint32_t s = i + 1, np = 0;
    for (uint32_t p = i + 1; p <= j && np < count; p++) {
        if (p < j && (tpunct(r, text, &v[p], '(') || tpunct(r, text, &v[p], '[') ||
                      tpunct(r, text, &v[p], '{') || tpunct(r, text, &v[p], '<'))) {
            p = match(r, text, p, j);
            if (p >= j)
                p = j - 1;
            continue;
        }
        if (p < j && !tpunct(r, text, &v[p], ','))
            continue;
        cudag__src_param *pp = &k->params[np++];
        uint32_t e = p;             /* one past the parameter's last token */
        pp->pos = tpos(r, text, &v[s < j ? s : i]);
        if (s >= e) {
            if (!k->refusal) {
                k->refusal = "an empty parameter";
                k->refusal_pos = pp->pos;
            }
            s = p + 1;
            continue;
        }
        /* A default argument: refused, since every argument is passed. */
        for (uint32_t q = s; q < e; q++) {
            if (tpunct(r, text, &v[q], '(') || tpunct(r, text, &v[q], '<')) {
                uint32_t m = match(r, text, q, e);
                q = m < e ? m : q;
                continue;
            }
            if (tpunct(r, text, &v[q], '=')) {
                if (!k->refusal) {
                    const char *dflt = join(r, text, q + 1, e);
                    char *why = dflt ? cudag__arena_printf(
                        r->a,
                        "parameter %u has a default argument (= %s): cudag "
                        "passes every argument, so remove the default",
                        np - 1, dflt) : NULL;
                    k->refusal = why ? why : "a default argument";
                    k->refusal_pos = tpos(r, text, &v[q]);
                }
                e = q;
                break;
            }
        }
        if (e - s == 1 && teq(r, text, &v[s], "...")) {
            if (!k->refusal) {
                k->refusal = "its parameter list is variadic (...)";
                k->refusal_pos = pp->pos;
            }
            s = p + 1;
            continue;
        }
        /* The name is the last identifier, unless it is the whole type or
         * a keyword of it ("unsigned", "int", "const"), or followed by [ ]. */
        uint32_t last = e;
        while (last > s && tpunct(r, text, &v[last - 1], ']')) {
            /* x[] or x[N]: an array parameter is a pointer. */
            uint32_t o = last - 1;
            while (o > s && !tpunct(r, text, &v[o], '['))
                o--;
            last = o;
        }
        bool array = last < e;
        static const char *const kw[] = {
            "const", "volatile", "unsigned", "signed", "int", "long", "short",
            "char", "float", "double", "bool", "void", "__restrict__",
            "__restrict", "restrict", "size_t", "__half", "__nv_bfloat16",
            "half", "nv_bfloat16", "cudaGraphConditionalHandle",
            "CUgraphConditionalHandle"};
        uint32_t tend = last;
        if (last > s + 1 && v[last - 1].kind == T_ID) {
            bool keyword = false;
            for (size_t w = 0; w < sizeof kw / sizeof kw[0]; w++)
                keyword |= teq(r, text, &v[last - 1], kw[w]);
            if (!keyword) {
                pp->name = cudag__arena_strndup(r->a, tstr(r, text, &v[last - 1]),
                                                v[last - 1].len);
                if (!pp->name)
                    r->oom = true;
                tend = last - 1;
            }
        }
        char *ct = join(r, text, s, tend);
        if (ct && array)
            ct = cudag__arena_printf(r->a, "%s *", ct);
        if (!ct)
            r->oom = true;
        pp->ctype = ct;
        s = p + 1;
    }
    k->nparams = np;
}

/* Reads a template parameter list <…> at i (the '<'), up to its '>' at j. */
static void read_tparams(reader *r, uint32_t text, uint32_t i, uint32_t j,
                         cudag__src_kernel *k)
{
    const tok *v = r->toks[text];
    uint32_t count = 1;
    for (uint32_t p = i + 1; p < j; p++) {
        if (tpunct(r, text, &v[p], '<') || tpunct(r, text, &v[p], '('))
            p = match(r, text, p, j);
        else if (tpunct(r, text, &v[p], ','))
            count++;
    }
    k->tparams = cudag__arena_alloc(r->a, count * sizeof *k->tparams);
    k->tdefaults = cudag__arena_alloc(r->a, count * sizeof *k->tdefaults);
    if (!k->tparams || !k->tdefaults) {
        r->oom = true;
        return;
    }
    uint32_t s = i + 1;
    k->ntparams = 0;
    for (uint32_t p = i + 1; p <= j; p++) {
        if (p < j && (tpunct(r, text, &v[p], '<') || tpunct(r, text, &v[p], '('))) {
            uint32_t m = match(r, text, p, j);
            p = m < j ? m : p;
            continue;
        }
        if (p < j && !tpunct(r, text, &v[p], ','))
            continue;
        uint32_t e = p;
        for (uint32_t q = s; q < p; q++)
            if (tpunct(r, text, &v[q], '=')) {
                e = q;
                break;
            }
        const char *name = "";
        if (e > s && v[e - 1].kind == T_ID)
            name = cudag__arena_strndup(r->a, tstr(r, text, &v[e - 1]),
                                        v[e - 1].len);
        const char *dflt = e < p ? join(r, text, e + 1, p) : NULL;
        if (!name || (e < p && !dflt))
            r->oom = true;
        if (k->ntparams < count) {
            k->tdefaults[k->ntparams] = dflt;
            k->tparams[k->ntparams++] = name;
        }
        s = p + 1;
    }
}

static bool same_params(const cudag__src_kernel *x, const cudag__src_kernel *y)
{
    if (x->nparams != y->nparams || x->ntparams != y->ntparams)
        return false;
    for (uint32_t i = 0; i < x->nparams; i++) {
        const char *a = x->params[i].ctype, *b = y->params[i].ctype;
        if (!a || !b || strcmp(a, b) != 0)
            return false;
    }
    return true;
}

/* Adds kernel k (a copy), merging it with an earlier declaration of the same
 * name: identical parameter lists are one kernel (a prototype and its
 * definition), different ones an overload. */
static uint32_t add_kernel(reader *r, const cudag__src_kernel *k)
{
    for (uint32_t i = 0; i < r->nk; i++) {
        cudag__src_kernel *o = &r->k[i];
        if (strcmp(o->name, k->name) != 0)
            continue;
        if (!same_params(o, k) && !o->other_pos.line)
            o->other_pos = k->pos;
        o->extern_c |= k->extern_c;
        return i;
    }
    cudag__src_kernel *n =
        cudag__vec_push((void **)&r->k, &r->nk, &r->ck, sizeof *n);
    if (!n) {
        r->oom = true;
        return NOFUNC;
    }
    *n = *k;
    uint32_t *kf = cudag__vec_push((void **)&r->kfunc, &r->nkfunc,
                                   &r->ckfunc, sizeof *kf);
    if (!kf) {
        r->oom = true;
        r->nk--;
        return NOFUNC;
    }
    *kf = NOFUNC;
    return r->nk - 1;
}

/* The object-like macro that t names when its text declares a kernel. */
static const cudag__src_macro *decl_macro(const reader *r, uint32_t text,
                                          const tok *t)
{
    for (uint32_t m = r->nmac; m-- > 0;) {
        const cudag__src_macro *mc = &r->mac[m];
        if (strlen(mc->name) == t->len &&
            memcmp(mc->name, tstr(r, text, t), t->len) == 0)
            return mc->body && !mc->function && strstr(mc->body, "__global__")
                       ? mc
                       : NULL;
    }
    return NULL;
}

/* Walks the declarations of tokens [i, end) of a text: descends into
 * extern "C" blocks and namespaces, records kernels, functions with bodies
 * and aliases, skips the rest. */
static void walk(reader *r, uint32_t text, uint32_t i, uint32_t end,
                 bool extern_c)
{
    const tok *v = r->toks[text];
    uint32_t start = i;             /* first token of the current declaration */
    uint32_t tlt = NOFUNC, tgt = 0; /* its template <…>, if any */
    bool ext = false, global = false, typed = false;
    while (i < end && !r->oom) {
        const tok *t = &v[i];
        if (t->kind == T_PUNCT && t->len == 1) {
            char c = *tstr(r, text, t);
            if (c == ';') {
                /* typedef X NAME; / using NAME = X; */
                if (typed && i > start + 2) {
                    const tok *f = &v[start];
                    uint32_t name = NOFUNC, t0 = 0, t1 = 0;
                    if (teq(r, text, f, "typedef") && v[i - 1].kind == T_ID)
                        name = i - 1, t0 = start + 1, t1 = i - 1;
                    else if (teq(r, text, f, "using") &&
                             v[start + 1].kind == T_ID &&
                             tpunct(r, text, &v[start + 2], '='))
                        name = start + 1, t0 = start + 3, t1 = i;
                    if (name != NOFUNC) {
                        cudag__src_alias *al = cudag__vec_push(
                            (void **)&r->ali, &r->nali, &r->cali, sizeof *al);
                        if (al) {
                            al->name = cudag__arena_strndup(
                                r->a, tstr(r, text, &v[name]), v[name].len);
                            al->ctype = join(r, text, t0, t1);
                        }
                        if (!al || !al->name || !al->ctype)
                            r->oom = true;
                    }
                }
                start = ++i;
                tlt = NOFUNC;
                ext = global = typed = false;
                continue;
            }
            if (c == '{') {
                uint32_t close = match(r, text, i, end);
                bool block_c = ext && i == start + 2;
                bool ns = i > start && teq(r, text, &v[start], "namespace");
                if (block_c || ns)
                    walk(r, text, i + 1, close, extern_c || block_c);
                i = close < end ? close + 1 : end;
                /* `struct S {…} s;` continues to its ';'; a body or block
                 * ends the declaration. */
                bool record = false;
                for (uint32_t q = start; q < i && !record; q++)
                    record = teq(r, text, &v[q], "struct") ||
                             teq(r, text, &v[q], "class") ||
                             teq(r, text, &v[q], "union") ||
                             teq(r, text, &v[q], "enum");
                if (!record || block_c || ns) {
                    start = i;
                    tlt = NOFUNC;
                    ext = global = typed = false;
                }
                continue;
            }
            if (c == '}') {     /* stray: unbalanced text */
                start = ++i;
                tlt = NOFUNC;
                ext = global = typed = false;
                continue;
            }
            if (c == '<' && i > start && teq(r, text, &v[i - 1], "template") &&
                i == start + 1) {
                uint32_t close = match(r, text, i, end);
                if (close >= end)
                    return;
                tlt = i;
                tgt = close;
                i = close + 1;
                continue;
            }
            if (c == '(' && i > start && v[i - 1].kind == T_ID &&
                !is_attribute_call(r, text, &v[i - 1])) {
                uint32_t close = match(r, text, i, end);
                if (close >= end)
                    return;
                /* A function declarator NAME( … ), then a body, ';', or
                 * trailing qualifiers. */
                uint32_t after = close + 1;
                while (after < end && v[after].kind == T_ID &&
                       !tpunct(r, text, &v[after], '{'))
                    after++;
                bool body = after < end && tpunct(r, text, &v[after], '{');
                uint32_t bend = body ? match(r, text, after, end) : after;
                if (body && bend >= end)
                    bend = end;
                const tok *nm = &v[i - 1];
                uint32_t fidx = NOFUNC;
                if (body) {
                    func *f = cudag__vec_push((void **)&r->fn, &r->nfn,
                                              &r->cfn, sizeof *f);
                    if (!f) {
                        r->oom = true;
                        return;
                    }
                    f->text = text;
                    f->name_off = nm->off;
                    f->name_len = nm->len;
                    f->body = after + 1;
                    f->end = bend;
                    fidx = r->nfn - 1;
                }
                if (global) {
                    cudag__src_kernel k;
                    memset(&k, 0, sizeof k);
                    k.name = cudag__arena_strndup(r->a, tstr(r, text, nm),
                                                  nm->len);
                    if (!k.name) {
                        r->oom = true;
                        return;
                    }
                    k.extern_c = extern_c || ext;
                    k.pos = tpos(r, text, nm);
                    if (tlt != NOFUNC)
                        read_tparams(r, text, tlt, tgt, &k);
                    read_params(r, text, i, close, &k);
                    uint32_t ki = add_kernel(r, &k);
                    if (ki != NOFUNC && fidx != NOFUNC)
                        r->kfunc[ki] = fidx;
                }
                if (body) {
                    i = bend < end ? bend + 1 : end;
                    start = i;
                    tlt = NOFUNC;
                    ext = global = typed = false;
                } else {
                    i = close + 1;      /* on to its ';' */
                }
                continue;
            }
            if (c == '(' || c == '[') {
                uint32_t close = match(r, text, i, end);
                i = close < end ? close + 1 : end;
                continue;
            }
            i++;
            continue;
        }
        if (t->kind == T_ID) {
            const cudag__src_macro *m = NULL;
            if (teq(r, text, t, "__global__"))
                global = true;
            else if ((m = decl_macro(r, text, t)) != NULL) {
                /* #define KERNEL extern "C" __global__ void: the common way
                 * to spell a family of kernels' prefix once. */
                global = true;
                ext |= strstr(m->body, "extern \"C\"") != NULL;
            }
            else if (teq(r, text, t, "typedef") || teq(r, text, t, "using"))
                typed = i == start;
            else if (teq(r, text, t, "extern") && i + 1 < end &&
                     v[i + 1].kind == T_STR && teq(r, text, &v[i + 1], "\"C\"")) {
                ext = true;
                i += 2;
                continue;
            } else if (is_attribute_call(r, text, t) && i + 1 < end &&
                       tpunct(r, text, &v[i + 1], '(')) {
                uint32_t close = match(r, text, i + 1, end);
                i = close < end ? close + 1 : end;
                continue;
            }
        }
        i++;
    }
}

/* ---- waits -------------------------------------------------------------- */

/* Names that wait themselves: the runtime's and the shipped header's. */
static bool wait_builtin(const char *s, size_t n)
{
    static const char *const w[] = {"cudaGridDependencySynchronize",
                                    "cudag_pdl_wait"};
    for (size_t i = 0; i < 2; i++)
        if (strlen(w[i]) == n && memcmp(s, w[i], n) == 0)
            return true;
    return false;
}

static bool has_wait_text(const char *s, size_t n)
{
    static const char w[] = "griddepcontrol.wait";
    for (size_t i = 0; i + sizeof w - 1 <= n; i++)
        if (memcmp(s + i, w, sizeof w - 1) == 0)
            return true;
    return false;
}

/* Marks each function that reaches a wait: directly (an asm string with
 * griddepcontrol.wait, a waiting builtin, a macro whose text waits) or by
 * naming a function that does.  A name counts whether or not it is called:
 * erring towards "waits" only costs a missing warning. */
static void find_waits(reader *r)
{
    /* Macros that expand to a wait (a PDL_WAIT() of the user's). */
    for (uint32_t f = 0; f < r->nfn; f++) {
        func *fn = &r->fn[f];
        const tok *v = r->toks[fn->text];
        for (uint32_t i = fn->body; i < fn->end && !fn->waits; i++) {
            const char *s = tstr(r, fn->text, &v[i]);
            if (v[i].kind == T_STR)
                fn->waits = has_wait_text(s, v[i].len);
            else if (v[i].kind == T_ID) {
                fn->waits = wait_builtin(s, v[i].len);
                for (uint32_t m = 0; m < r->nmac && !fn->waits; m++)
                    fn->waits = r->mac[m].body &&
                                strlen(r->mac[m].name) == v[i].len &&
                                memcmp(r->mac[m].name, s, v[i].len) == 0 &&
                                has_wait_text(r->mac[m].body,
                                              strlen(r->mac[m].body));
            }
        }
    }
    /* Propagate through calls until nothing changes: at most one round per
     * function. */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t f = 0; f < r->nfn; f++) {
            func *fn = &r->fn[f];
            if (fn->waits)
                continue;
            const tok *v = r->toks[fn->text];
            for (uint32_t i = fn->body; i < fn->end && !fn->waits; i++) {
                if (v[i].kind != T_ID)
                    continue;
                const char *s = tstr(r, fn->text, &v[i]);
                for (uint32_t g = 0; g < r->nfn; g++) {
                    const func *o = &r->fn[g];
                    if (o->waits && o->name_len == v[i].len &&
                        memcmp(r->texts[o->text].text + o->name_off, s,
                               v[i].len) == 0) {
                        fn->waits = changed = true;
                        break;
                    }
                }
            }
        }
    }
    for (uint32_t k = 0; k < r->nk; k++)
        r->k[k].waits = r->kfunc[k] != NOFUNC && r->fn[r->kfunc[k]].waits;
}

/* ---- the reader ---------------------------------------------------------- */

static int add_defines(reader *r, const char *const *defines)
{
    for (size_t i = 0; defines && defines[i]; i++) {
        const char *d = defines[i];
        const char *eq = strchr(d, '=');
        size_t nl = eq ? (size_t)(eq - d) : strlen(d);
        bool function = memchr(d, '(', nl) != NULL;
        cudag__src_macro *m =
            cudag__vec_push((void **)&r->mac, &r->nmac, &r->cmac, sizeof *m);
        if (!m)
            return CUDAG_ENOMEM;
        if (function)
            nl = (size_t)((const char *)memchr(d, '(', nl) - d);
        m->name = cudag__arena_strndup(r->a, d, nl);
        /* -DNAME alone means NAME=1, as for a compiler. */
        m->body = cudag__arena_strdup(r->a, eq ? eq + 1 : "1");
        m->function = function;
        if (!m->name || !m->body)
            return CUDAG_ENOMEM;
    }
    return CUDAG_OK;
}

#define COPY_OUT(dst, src, n)                                                  \
    do {                                                                       \
        if (n) {                                                               \
            (dst) = cudag__arena_alloc(r.a, (n) * sizeof *(dst));              \
            if (!(dst))                                                        \
                goto oom;                                                      \
            memcpy((dst), (src), (n) * sizeof *(dst));                         \
        }                                                                      \
    } while (0)

int cudag__src_read(cudag__arena *a, const cudag__src_text *texts, uint32_t n,
                    const char *const *defines, cudag__src_decls *out,
                    cudag_error *err)
{
    memset(out, 0, sizeof *out);
    reader r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.texts = texts;
    r.ntexts = n > 256 ? 256 : n;
    r.toks = cudag__calloc(r.ntexts ? r.ntexts : 1, sizeof *r.toks);
    r.ntoks = cudag__calloc(r.ntexts ? r.ntexts : 1, sizeof *r.ntoks);
    if (!r.toks || !r.ntoks)
        goto oom;
    /* Headers first, so that the main file's own #defines come last and win
     * for names both define, roughly as the preprocessor would see them. */
    for (uint32_t t = r.ntexts; t-- > 0;)
        if (tokenize(&r, t) != CUDAG_OK)
            goto oom;
    if (add_defines(&r, defines) != CUDAG_OK)
        goto oom;
    for (uint32_t t = 0; t < r.ntexts && !r.oom; t++)
        walk(&r, t, 0, r.ntoks[t], false);
    if (r.oom)
        goto oom;
    find_waits(&r);
    for (uint32_t m = 0; m < r.nmac; m++)
        out->macro_kernels |= r.mac[m].function && r.mac[m].body &&
                              strstr(r.mac[m].body, "__global__") != NULL;
    COPY_OUT(out->k, r.k, r.nk);
    COPY_OUT(out->macros, r.mac, r.nmac);
    COPY_OUT(out->aliases, r.ali, r.nali);
    out->nk = r.nk;
    out->nmacros = r.nmac;
    out->naliases = r.nali;
    int rc = CUDAG_OK;
    if (0) {
oom:
        memset(out, 0, sizeof *out);
        rc = cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS,
                            "out of memory reading kernel declarations");
    }
    for (uint32_t t = 0; r.toks && t < r.ntexts; t++)
        cudag__free(r.toks[t]);
    cudag__free(r.toks);
    cudag__free(r.ntoks);
    cudag__free(r.k);
    cudag__free(r.mac);
    cudag__free(r.ali);
    cudag__free(r.fn);
    cudag__free(r.kfunc);
    return rc;
}

const cudag__src_kernel *cudag__src_find(const cudag__src_decls *d,
                                         const char *name)
{
    for (uint32_t i = 0; d && i < d->nk; i++)
        if (strcmp(d->k[i].name, name) == 0)
            return &d->k[i];
    return NULL;
}

/* ---- types --------------------------------------------------------------- */

/* Splits a type string into words at spaces and around '*', '&', '<', '>',
 * ',', "::"; at most max words of at most 63 bytes. */
static uint32_t words(const char *s, char w[][64], uint32_t max)
{
    uint32_t n = 0;
    while (*s && n < max) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        size_t l;
        if (strchr("*&<>,()[]", *s))
            l = 1;
        else if (s[0] == ':' && s[1] == ':')
            l = 2;
        else {
            l = 0;
            while (s[l] && !strchr(" \t*&<>,()[]", s[l]) &&
                   !(s[l] == ':' && s[l + 1] == ':'))
                l++;
        }
        if (l >= 64)
            l = 63;
        memcpy(w[n], s, l);
        w[n][l] = '\0';
        n++;
        s += l;
        while (*s && l == 63 && !strchr(" \t*&<>,()[]:", *s))
            s++;
    }
    return n;
}

/* The scalar type a list of base words names, or NONE. */
static cudag_type base_type(char w[][64], uint32_t n, bool *is_void)
{
    static const struct {
        const char *name;
        cudag_type t;
    } named[] = {
        {"float", CUDAG_TYPE_F32},       {"double", CUDAG_TYPE_F64},
        {"__half", CUDAG_TYPE_F16},      {"half", CUDAG_TYPE_F16},
        {"__nv_bfloat16", CUDAG_TYPE_BF16}, {"nv_bfloat16", CUDAG_TYPE_BF16},
        {"int8_t", CUDAG_TYPE_I8},       {"uint8_t", CUDAG_TYPE_U8},
        {"int16_t", CUDAG_TYPE_I16},     {"uint16_t", CUDAG_TYPE_U16},
        {"int32_t", CUDAG_TYPE_I32},     {"uint32_t", CUDAG_TYPE_U32},
        {"int64_t", CUDAG_TYPE_I64},     {"uint64_t", CUDAG_TYPE_U64},
        {"size_t", CUDAG_TYPE_U64},      {"ptrdiff_t", CUDAG_TYPE_I64},
        {"intptr_t", CUDAG_TYPE_I64},    {"uintptr_t", CUDAG_TYPE_U64},
        {"bool", CUDAG_TYPE_U8},
    };
    *is_void = false;
    if (n == 1) {
        for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
            if (strcmp(w[0], named[i].name) == 0)
                return named[i].t;
        if (strcmp(w[0], "void") == 0) {
            *is_void = true;
            return CUDAG_TYPE_NONE;
        }
    }
    /* Builtin integer spellings in any order: "unsigned long long int". */
    int sign = 0, longs = 0, shorts = 0, ints = 0, chars = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(w[i], "unsigned") == 0)
            sign = sign ? 9 : 1;
        else if (strcmp(w[i], "signed") == 0)
            sign = sign ? 9 : -1;
        else if (strcmp(w[i], "long") == 0)
            longs++;
        else if (strcmp(w[i], "short") == 0)
            shorts++;
        else if (strcmp(w[i], "int") == 0)
            ints++;
        else if (strcmp(w[i], "char") == 0)
            chars++;
        else
            return CUDAG_TYPE_NONE;
    }
    if (sign == 9 || ints > 1 || longs > 2 || shorts > 1 || chars > 1 ||
        (chars && (ints || longs || shorts)) || (shorts && longs))
        return CUDAG_TYPE_NONE;
    bool u = sign == 1;
    if (chars)
        return u ? CUDAG_TYPE_U8 : CUDAG_TYPE_I8;
    if (shorts)
        return u ? CUDAG_TYPE_U16 : CUDAG_TYPE_I16;
    if (longs)     /* long is 64 bits on the 64-bit Linux hosts CUDA runs on */
        return u ? CUDAG_TYPE_U64 : CUDAG_TYPE_I64;
    return u ? CUDAG_TYPE_U32 : CUDAG_TYPE_I32;
}

cudag_type cudag__src_ctype(const char *ctype, cudag_type *pointee)
{
    char w[24][64];
    uint32_t n = words(ctype, w, 24);
    char base[24][64];
    uint32_t nb = 0, stars = 0;
    *pointee = CUDAG_TYPE_NONE;
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(w[i], "*") == 0) {
            stars++;
            continue;
        }
        if (strcmp(w[i], "&") == 0 || strcmp(w[i], "<") == 0 ||
            strcmp(w[i], "(") == 0 || strcmp(w[i], "[") == 0)
            return CUDAG_TYPE_NONE;
        /* Qualifiers do not change the bytes passed; std:: and :: name the
         * same fixed-width types. */
        if (strcmp(w[i], "const") == 0 || strcmp(w[i], "volatile") == 0 ||
            strcmp(w[i], "__restrict__") == 0 ||
            strcmp(w[i], "__restrict") == 0 || strcmp(w[i], "restrict") == 0 ||
            strcmp(w[i], "struct") == 0 || strcmp(w[i], "::") == 0 ||
            (strcmp(w[i], "std") == 0 && i + 1 < n &&
             strcmp(w[i + 1], "::") == 0))
            continue;
        if (stars)      /* a word after the '*': "float * x" is read apart */
            return CUDAG_TYPE_NONE;
        memcpy(base[nb++], w[i], 64);
    }
    if (nb == 0)
        return CUDAG_TYPE_NONE;
    /* A condition's handle (the runtime's and the driver's spelling of one
     * 8-byte value), passed by value: a `cond` parameter.  A pointer to one
     * is a plain pointer. */
    if (nb == 1 && (strcmp(base[0], "cudaGraphConditionalHandle") == 0 ||
                    strcmp(base[0], "CUgraphConditionalHandle") == 0))
        return stars ? CUDAG_TYPE_PTR : CUDAG_TYPE_COND;
    bool is_void;
    cudag_type t = base_type(base, nb, &is_void);
    if (stars == 0)
        return t;
    /* Any pointer is passed as 8 bytes; only T* knows its element. */
    *pointee = stars == 1 ? t : CUDAG_TYPE_NONE;
    return CUDAG_TYPE_PTR;
}

bool cudag__src_ptr_const(const char *ctype)
{
    char w[24][64];
    uint32_t n = words(ctype, w, 24);
    bool is_const = false;
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(w[i], "*") == 0)
            return is_const && (i + 1 == n || strcmp(w[i + 1], "*") != 0);
        is_const |= strcmp(w[i], "const") == 0;
    }
    return false;
}

/* Replaces, in a type string, each word bound by a template argument, an
 * alias or an object-like macro, repeatedly (at most 8 rounds).  Returns the
 * new string in the arena, or NULL with *why set when a function-like macro
 * appears (or on OOM, *why NULL). */
static const char *expand(cudag__arena *a, const cudag__src_decls *d,
                          const cudag__src_kernel *k, char targs[][128],
                          uint32_t ntargs, const char *ctype, const char **why)
{
    *why = NULL;
    const char *cur = ctype;
    for (int round = 0; round < 8; round++) {
        char w[24][64];
        uint32_t n = words(cur, w, 24);
        bool changed = false;
        size_t cap = strlen(cur) + 1;
        const char *rep[24];
        for (uint32_t i = 0; i < n; i++) {
            rep[i] = NULL;
            for (uint32_t t = 0; t < ntargs && t < k->ntparams; t++)
                if (strcmp(w[i], k->tparams[t]) == 0)
                    rep[i] = targs[t];
            if (!rep[i])
                for (uint32_t m = d->nmacros; m-- > 0;)
                    if (strcmp(w[i], d->macros[m].name) == 0) {
                        if (!d->macros[m].body)
                            break;      /* #undef */
                        if (d->macros[m].function) {
                            /* NULL either way; *why NULL means OOM. */
                            *why = cudag__arena_printf(
                                a, "its parameter list uses the function-like "
                                   "macro '%s', which cudag does not expand: "
                                   "write the type, or declare the kernel in "
                                   "'kernels:'",
                                w[i]);
                            return NULL;
                        }
                        rep[i] = d->macros[m].body;
                        break;
                    }
            if (!rep[i])
                for (uint32_t l = d->naliases; l-- > 0;)
                    if (strcmp(w[i], d->aliases[l].name) == 0) {
                        rep[i] = d->aliases[l].ctype;
                        break;
                    }
            if (rep[i]) {
                changed = true;
                cap += strlen(rep[i]) + 1;
            }
            cap += strlen(w[i]) + 1;
        }
        if (!changed)
            return cur;
        char *out = cudag__arena_alloc(a, cap);
        if (!out)
            return NULL;
        size_t o = 0;
        for (uint32_t i = 0; i < n; i++) {
            const char *s = rep[i] ? rep[i] : w[i];
            if (o)
                out[o++] = ' ';
            size_t l = strlen(s);
            memcpy(out + o, s, l);
            o += l;
        }
        out[o] = '\0';
        cur = out;
    }
    return cur;
}

/* Splits "name<a, b<c>, d>" into its template arguments; returns their count
 * or -1 when the text is not name<…> with the kernel's name. */
static int split_targs(const char *expr, const char *name, char targs[][128],
                       uint32_t max)
{
    size_t nl = strlen(name);
    const char *s = expr;
    while (*s == ' ')
        s++;
    if (strncmp(s, name, nl) != 0)
        return -1;
    s += nl;
    while (*s == ' ')
        s++;
    if (*s != '<')
        return -1;
    s++;
    int n = 0, depth = 0;
    const char *a0 = s;
    for (; *s; s++) {
        if (*s == '<' || *s == '(')
            depth++;
        else if ((*s == '>' || *s == ')') && depth > 0)
            depth--;
        else if ((*s == ',' && depth == 0) || (*s == '>' && depth == 0)) {
            if ((uint32_t)n >= max)
                return -1;
            size_t l = (size_t)(s - a0);
            while (l && a0[0] == ' ')
                a0++, l--;
            while (l && a0[l - 1] == ' ')
                l--;
            if (l == 0 || l >= 128)
                return -1;
            memcpy(targs[n], a0, l);
            targs[n][l] = '\0';
            n++;
            a0 = s + 1;
            if (*s == '>') {
                s++;
                while (*s == ' ')
                    s++;
                return *s ? -1 : n;
            }
        }
    }
    return -1;
}

int cudag__src_signature(cudag__arena *a, const cudag__src_decls *d,
                         const cudag__src_kernel *k, const char *expr,
                         cudag__src_sig *out, cudag_error *err)
{
    memset(out, 0, sizeof *out);
    if (k->refusal)
        return cudag__fail_at(err, CUDAG_EARGS, k->refusal_pos,
                              "kernel '%s': %s", k->name, k->refusal);
    if (k->other_pos.line)
        return cudag__fail_at(err, CUDAG_EARGS, k->other_pos,
                              "kernel '%s' is declared twice with different "
                              "parameters (here and at line %u): overloaded, "
                              "or one per #if branch; give it one definition, "
                              "or declare it in 'kernels:'",
                              k->name, k->pos.line);
    char targs[16][128];
    uint32_t ntargs = 0;
    if (k->ntparams) {
        int got = expr ? split_targs(expr, k->name, targs, 16) : -1;
        if (got < 0)
            return cudag__fail_at(err, CUDAG_EARGS, k->pos,
                                  "kernel '%s' is a template: name an instance "
                                  "in 'kernels:' with symbol: \"%s<…>\" (for "
                                  "example \"%s<float>\")",
                                  k->name, k->name, k->name);
        uint32_t need = k->ntparams;
        while (need > 0 && k->tdefaults[need - 1])
            need--;
        if ((uint32_t)got > k->ntparams || (uint32_t)got < need)
            return cudag__fail_at(err, CUDAG_EARGS, k->pos,
                                  "'%s' gives %d template argument%s; "
                                  "template '%s' takes %s%u",
                                  expr, got, got == 1 ? "" : "s", k->name,
                                  need < k->ntparams ? "at least " : "", need);
        /* The arguments left out take their defaults. */
        for (uint32_t t = (uint32_t)got; t < k->ntparams && t < 16; t++)
            snprintf(targs[t], sizeof targs[t], "%s", k->tdefaults[t]);
        ntargs = k->ntparams < 16 ? k->ntparams : 16;
    }
    uint32_t n = k->nparams;
    out->types = cudag__arena_alloc(a, (n + 1) * sizeof *out->types);
    out->pointee = cudag__arena_alloc(a, (n + 1) * sizeof *out->pointee);
    out->pnames = cudag__arena_alloc(a, (n + 1) * sizeof *out->pnames);
    if (!out->types || !out->pointee || !out->pnames)
        goto oom;
    for (uint32_t i = 0; i < n; i++) {
        const cudag__src_param *p = &k->params[i];
        const char *why;
        const char *ct = expand(a, d, k, targs, ntargs, p->ctype, &why);
        if (!ct) {
            if (!why)
                goto oom;
            memset(out, 0, sizeof *out);
            return cudag__fail_at(err, CUDAG_EARGS, p->pos, "kernel '%s': %s",
                                  k->name, why);
        }
        cudag_type pt;
        cudag_type t = cudag__src_ctype(ct, &pt);
        const char *pname = p->name ? p->name : "";
        if (t == CUDAG_TYPE_NONE) {
            memset(out, 0, sizeof *out);
            if (strchr(ct, '&'))
                return cudag__fail_at(err, CUDAG_EARGS, p->pos,
                                      "kernel '%s': parameter %u%s%s%s is a "
                                      "reference ('%s'); kernels take values "
                                      "and pointers",
                                      k->name, i, *pname ? " ('" : "", pname,
                                      *pname ? "')" : "", ct);
            return cudag__fail_at(err, CUDAG_EARGS, p->pos,
                                  "kernel '%s': parameter %u%s%s%s has type "
                                  "'%s', which cudag cannot read from source "
                                  "(a struct passed by value?): pass a "
                                  "pointer, or declare its layout in "
                                  "'kernels:' with params",
                                  k->name, i, *pname ? " ('" : "", pname,
                                  *pname ? "')" : "", ct);
        }
        out->types[i] = t;
        out->pointee[i] = pt;
        out->pnames[i] = p->name ? p->name : cudag__arena_printf(a, "p%u", i);
        if (!out->pnames[i])
            goto oom;
    }
    out->nparams = n;
    return CUDAG_OK;
oom:
    memset(out, 0, sizeof *out);
    return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
}

/* ---- includes ------------------------------------------------------------ */

int cudag__src_includes(const char *text, size_t len,
                        int (*fn)(void *user, const char *name, size_t len,
                                  bool angled, uint32_t line),
                        void *user)
{
    lexer lx = {text, len, 0, 1, 1};
    bool bol = true;
    while (lx.i < lx.n) {
        if (skip_space(&lx, false))
            bol = true;
        if (lx.i >= lx.n)
            break;
        if (!(bol && lx.s[lx.i] == '#')) {
            tok t;
            lex_one(&lx, &t);
            bol = false;
            continue;
        }
        adv(&lx);
        skip_space(&lx, true);
        tok w;
        if (lex_one(&lx, &w) && w.kind == T_ID && w.len == 7 &&
            memcmp(text + w.off, "include", 7) == 0) {
            skip_space(&lx, true);
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
                adv(&lx);
            adv(&lx);
        }
        bol = true;
    }
    return 0;
}

/* ---- files ---------------------------------------------------------------- */

int cudag__read_file(cudag__arena *a, const char *path, size_t max,
                     const char *what, cudag__pos pos, char **text,
                     size_t *len, cudag_error *err)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO would wait for a writer forever; only a
     * regular file is read (checked below), where the flag changes
     * nothing. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return cudag__fail_at(err, CUDAG_EIO, pos, "%s: cannot read '%s': %s",
                              what, path, strerror(errno));
    struct stat st;
    int rc = CUDAG_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = cudag__fail_at(err, CUDAG_EIO, pos,
                            "%s: cannot read '%s': not a regular file", what,
                            path);
    } else if ((uint64_t)st.st_size > max) {
        rc = cudag__fail_at(err, CUDAG_ELIMIT, pos,
                            "%s: '%s' is %llu bytes (at most %zu)", what, path,
                            (unsigned long long)st.st_size, max);
    } else if (!(*text = cudag__arena_alloc(a, (size_t)st.st_size + 1))) {
        rc = cudag__fail_at(err, CUDAG_ENOMEM, pos, "out of memory");
    } else {
        size_t got = 0, size = (size_t)st.st_size;
        while (got < size) {
            ssize_t r = read(fd, *text + got, size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                rc = cudag__fail_at(err, CUDAG_EIO, pos,
                                    "%s: cannot read '%s': %s", what, path,
                                    r < 0 ? strerror(errno) : "file shrank");
                break;
            }
            got += (size_t)r;
        }
        *len = got;
    }
    close(fd);
    if (rc != CUDAG_OK)
        *text = NULL, *len = 0;
    return rc;
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
    char *text;
    size_t tl;
    char what[300];
    snprintf(what, sizeof what, "header '%s'", nm);
    int rc = cudag__read_file(g->a, path, CUDAG__MAX_SOURCE_BYTES, what, pos,
                              &text, &tl, g->err);
    if (rc != CUDAG_OK) {
        g->n--;
        return g->rc = rc;
    }
    t->path = path;
    t->text = text;
    t->len = tl;
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
