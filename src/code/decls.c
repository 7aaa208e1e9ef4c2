/* decls.c — reads kernel declarations from CUDA C++ source without a
 * compiler, over lex.c's tokens: a walk over top-level declarations that
 * descends into extern "C" blocks and namespaces and skips every other body;
 * #define and -D macros, typedef and using aliases; which kernels wait.
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
#include "code/decls.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "code/lex.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cudag__tok **toks;
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

static const char *tstr(const reader *r, uint32_t text, const cudag__tok *t)
{
    return r->texts[text].text + t->off;
}

static bool teq(const reader *r, uint32_t text, const cudag__tok *t, const char *w)
{
    size_t l = strlen(w);
    return t->len == l && memcmp(tstr(r, text, t), w, l) == 0;
}

static bool tpunct(const reader *r, uint32_t text, const cudag__tok *t, char c)
{
    return t->kind == CUDAG__T_PUNCT && t->len == 1 && *tstr(r, text, t) == c;
}

static cudag__pos tpos(const reader *r, uint32_t text, const cudag__tok *t)
{
    return (cudag__pos){r->texts[text].path, t->line, t->col};
}

/* Records a #define or #undef from the directive starting after '#'. */
static void directive(reader *r, uint32_t text, cudag__lexer *lx)
{
    cudag__lex_skip_space(lx, true);
    cudag__tok w;
    if (!cudag__lex_one(lx, &w) || w.kind != CUDAG__T_ID)
        goto rest;
    const char *s = lx->s;
    bool def = w.len == 6 && memcmp(s + w.off, "define", 6) == 0;
    bool undef = w.len == 5 && memcmp(s + w.off, "undef", 5) == 0;
    if (!def && !undef)
        goto rest;
    cudag__lex_skip_space(lx, true);
    cudag__tok name;
    if (lx->i >= lx->n || lx->s[lx->i] == '\n' || !cudag__lex_one(lx, &name) ||
        name.kind != CUDAG__T_ID)
        goto rest;
    bool function = def && lx->i < lx->n && s[lx->i] == '(';
    if (function) {
        while (lx->i < lx->n && s[lx->i] != ')' && s[lx->i] != '\n')
            cudag__lex_adv(lx);
        if (lx->i < lx->n && s[lx->i] == ')')
            cudag__lex_adv(lx);
    }
    cudag__lex_skip_space(lx, true);
    size_t b0 = lx->i;
    while (lx->i < lx->n && s[lx->i] != '\n') {
        if (s[lx->i] == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n')
            cudag__lex_adv(lx);
        cudag__lex_adv(lx);
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
            cudag__lex_adv(lx);
        /* A comment may hide a newline that does not end the directive. */
        if (lx->s[lx->i] == '/' && lx->i + 1 < lx->n &&
            (lx->s[lx->i + 1] == '*' || lx->s[lx->i + 1] == '/')) {
            if (lx->s[lx->i + 1] == '/')
                break;
            cudag__lex_skip_space(lx, true);
            continue;
        }
        cudag__lex_adv(lx);
    }
}

/* Tokenises text t, taking in its directives. */
static int tokenize(reader *r, uint32_t t)
{
    cudag__lexer lx = {r->texts[t].text, r->texts[t].len, 0, 1, 1};
    cudag__tok *v = NULL;
    uint32_t n = 0, cap = 0;
    bool bol = true;
    for (;;) {
        if (cudag__lex_skip_space(&lx, false))
            bol = true;
        if (lx.i >= lx.n)
            break;
        if (bol && lx.s[lx.i] == '#') {
            cudag__lex_adv(&lx);
            directive(r, t, &lx);
            if (r->oom)
                goto oom;
            continue;
        }
        cudag__tok *k = cudag__vec_push((void **)&v, &n, &cap, sizeof *k);
        if (!k)
            goto oom;
        cudag__lex_one(&lx, k);
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
    const cudag__tok *v = r->toks[text];
    char open = *tstr(r, text, &v[i]);
    char close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
    uint32_t depth = 0;
    for (uint32_t j = i; j < n; j++) {
        if (v[j].kind != CUDAG__T_PUNCT || v[j].len != 1)
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
static char *join_tokens(reader *r, uint32_t text, uint32_t i, uint32_t j)
{
    const cudag__tok *v = r->toks[text];
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

static bool is_attribute_call(const reader *r, uint32_t text, const cudag__tok *t)
{
    static const char *const attrs[] = {
        "__launch_bounds__", "__cluster_dims__", "__maxnreg__",
        "__attribute__", "__declspec", "alignas", "__align__",
        "__grid_constant__"};
    if (t->kind != CUDAG__T_ID)
        return false;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (teq(r, text, t, attrs[i]))
            return true;
    return false;
}

/* How many parameters the list (i, j) holds: its commas outside brackets,
 * plus one. */
static uint32_t count_params(const reader *r, uint32_t text, uint32_t i,
                             uint32_t j)
{
    const cudag__tok *v = r->toks[text];
    uint32_t count = 1;
    for (uint32_t p = i + 1; p < j; p++) {
        if (tpunct(r, text, &v[p], '(') || tpunct(r, text, &v[p], '[') ||
            tpunct(r, text, &v[p], '{') || tpunct(r, text, &v[p], '<'))
            p = match(r, text, p, j);
        else if (tpunct(r, text, &v[p], ','))
            count++;
    }
    return count;
}

/* Parameter idx of kernel k, tokens [s, e), into pp (its pos set): its name
 * and type, or k's refusal (the first one wins). */
static void read_param(reader *r, uint32_t text, cudag__src_kernel *k,
                       cudag__src_param *pp, uint32_t idx, uint32_t s,
                       uint32_t e)
{
    const cudag__tok *v = r->toks[text];
    if (s >= e) {
        if (!k->refusal) {
            k->refusal = "an empty parameter";
            k->refusal_pos = pp->pos;
        }
        return;
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
                const char *dflt = join_tokens(r, text, q + 1, e);
                char *why = dflt ? cudag__arena_printf(
                    r->a,
                    "parameter %u has a default argument (= %s): cudag "
                    "passes every argument, so remove the default",
                    idx, dflt) : NULL;
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
        return;
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
    if (last > s + 1 && v[last - 1].kind == CUDAG__T_ID) {
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
    char *ct = join_tokens(r, text, s, tend);
    if (ct && array)
        ct = cudag__arena_printf(r->a, "%s *", ct);
    if (!ct)
        r->oom = true;
    pp->ctype = ct;
}

/* Splits the parameter list (i, j) — i the '(' and j the ')' — into
 * parameters and records them on kernel k. */
static void read_params(reader *r, uint32_t text, uint32_t i, uint32_t j,
                        cudag__src_kernel *k)
{
    const cudag__tok *v = r->toks[text];
    /* `( )` and `(void)` declare no parameters. */
    if (j == i + 1 || (j == i + 2 && teq(r, text, &v[i + 1], "void")))
        return;
    uint32_t count = count_params(r, text, i, j);
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
        read_param(r, text, k, pp, np - 1, s, e);
        s = p + 1;
    }
    k->nparams = np;
}

/* Reads a template parameter list <…> at i (the '<'), up to its '>' at j. */
static void read_tparams(reader *r, uint32_t text, uint32_t i, uint32_t j,
                         cudag__src_kernel *k)
{
    const cudag__tok *v = r->toks[text];
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
        if (e > s && v[e - 1].kind == CUDAG__T_ID)
            name = cudag__arena_strndup(r->a, tstr(r, text, &v[e - 1]),
                                        v[e - 1].len);
        const char *dflt = e < p ? join_tokens(r, text, e + 1, p) : NULL;
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
                                          const cudag__tok *t)
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

static void walk(reader *r, uint32_t text, uint32_t i, uint32_t end,
                 bool extern_c);

/* The alias that a `;` at i ends, from the declaration at start:
 * typedef X NAME; / using NAME = X; */
static void end_alias(reader *r, uint32_t text, uint32_t start, uint32_t i)
{
    const cudag__tok *v = r->toks[text];
    const cudag__tok *f = &v[start];
    uint32_t name = NOFUNC, t0 = 0, t1 = 0;
    if (teq(r, text, f, "typedef") && v[i - 1].kind == CUDAG__T_ID)
        name = i - 1, t0 = start + 1, t1 = i - 1;
    else if (teq(r, text, f, "using") &&
             v[start + 1].kind == CUDAG__T_ID &&
             tpunct(r, text, &v[start + 2], '='))
        name = start + 1, t0 = start + 3, t1 = i;
    if (name != NOFUNC) {
        cudag__src_alias *al = cudag__vec_push(
            (void **)&r->ali, &r->nali, &r->cali, sizeof *al);
        if (al) {
            al->name = cudag__arena_strndup(
                r->a, tstr(r, text, &v[name]), v[name].len);
            al->ctype = join_tokens(r, text, t0, t1);
        }
        if (!al || !al->name || !al->ctype)
            r->oom = true;
    }
}

/* The block opened at *i, in the declaration at start: walked into for a
 * namespace or an extern "C" block, skipped otherwise; *i moves past it.
 * True when it ends the declaration (`struct S {…} s;` goes on to its
 * ';'). */
static bool open_block(reader *r, uint32_t text, uint32_t start, uint32_t *i,
                       uint32_t end, bool ext, bool extern_c)
{
    const cudag__tok *v = r->toks[text];
    uint32_t close = match(r, text, *i, end);
    bool block_c = ext && *i == start + 2;
    bool ns = *i > start && teq(r, text, &v[start], "namespace");
    if (block_c || ns)
        walk(r, text, *i + 1, close, extern_c || block_c);
    *i = close < end ? close + 1 : end;
    /* `struct S {…} s;` continues to its ';'; a body or block
     * ends the declaration. */
    bool record = false;
    for (uint32_t q = start; q < *i && !record; q++)
        record = teq(r, text, &v[q], "struct") ||
                 teq(r, text, &v[q], "class") ||
                 teq(r, text, &v[q], "union") ||
                 teq(r, text, &v[q], "enum");
    return !record || block_c || ns;
}

/* The function declarator NAME( … ) at i (the '(', its ')' at close), of a
 * declaration with template <…> at tlt (NOFUNC: none) to tgt: its body
 * recorded for the wait analysis, a __global__ one (global) added as a
 * kernel.  Returns the index of the body's '}' (end if unclosed), NOFUNC
 * when it has none; r->oom on OOM. */
static uint32_t declarator(reader *r, uint32_t text, uint32_t i, uint32_t close,
                           uint32_t end, uint32_t tlt, uint32_t tgt,
                           bool global, bool extern_c)
{
    const cudag__tok *v = r->toks[text];
    /* Then a body, ';', or trailing qualifiers. */
    uint32_t after = close + 1;
    while (after < end && v[after].kind == CUDAG__T_ID &&
           !tpunct(r, text, &v[after], '{'))
        after++;
    bool body = after < end && tpunct(r, text, &v[after], '{');
    uint32_t bend = body ? match(r, text, after, end) : after;
    if (body && bend >= end)
        bend = end;
    const cudag__tok *nm = &v[i - 1];
    uint32_t fidx = NOFUNC;
    if (body) {
        func *f = cudag__vec_push((void **)&r->fn, &r->nfn, &r->cfn,
                                  sizeof *f);
        if (!f) {
            r->oom = true;
            return NOFUNC;
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
        k.name = cudag__arena_strndup(r->a, tstr(r, text, nm), nm->len);
        if (!k.name) {
            r->oom = true;
            return NOFUNC;
        }
        k.extern_c = extern_c;
        k.pos = tpos(r, text, nm);
        if (tlt != NOFUNC)
            read_tparams(r, text, tlt, tgt, &k);
        read_params(r, text, i, close, &k);
        uint32_t ki = add_kernel(r, &k);
        if (ki != NOFUNC && fidx != NOFUNC)
            r->kfunc[ki] = fidx;
    }
    return body ? bend : NOFUNC;
}

/* Walks the declarations of tokens [i, end) of a text: descends into
 * extern "C" blocks and namespaces, records kernels, functions with bodies
 * and aliases, skips the rest. */
static void walk(reader *r, uint32_t text, uint32_t i, uint32_t end,
                 bool extern_c)
{
    const cudag__tok *v = r->toks[text];
    uint32_t start = i;             /* first token of the current declaration */
    uint32_t tlt = NOFUNC, tgt = 0; /* its template <…>, if any */
    bool ext = false, global = false, typed = false;
    while (i < end && !r->oom) {
        const cudag__tok *t = &v[i];
        if (t->kind == CUDAG__T_PUNCT && t->len == 1) {
            char c = *tstr(r, text, t);
            if (c == ';') {
                if (typed && i > start + 2)
                    end_alias(r, text, start, i);
                start = ++i;
                tlt = NOFUNC;
                ext = global = typed = false;
                continue;
            }
            if (c == '{') {
                if (open_block(r, text, start, &i, end, ext, extern_c)) {
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
            if (c == '(' && i > start && v[i - 1].kind == CUDAG__T_ID &&
                !is_attribute_call(r, text, &v[i - 1])) {
                uint32_t close = match(r, text, i, end);
                if (close >= end)
                    return;
                uint32_t bend = declarator(r, text, i, close, end, tlt, tgt,
                                           global, extern_c || ext);
                if (r->oom)
                    return;
                bool body = bend != NOFUNC;
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
        if (t->kind == CUDAG__T_ID) {
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
                     v[i + 1].kind == CUDAG__T_STR && teq(r, text, &v[i + 1], "\"C\"")) {
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
        const cudag__tok *v = r->toks[fn->text];
        for (uint32_t i = fn->body; i < fn->end && !fn->waits; i++) {
            const char *s = tstr(r, fn->text, &v[i]);
            if (v[i].kind == CUDAG__T_STR)
                fn->waits = has_wait_text(s, v[i].len);
            else if (v[i].kind == CUDAG__T_ID) {
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
            const cudag__tok *v = r->toks[fn->text];
            for (uint32_t i = fn->body; i < fn->end && !fn->waits; i++) {
                if (v[i].kind != CUDAG__T_ID)
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

static int add_option_macros(reader *r, const char *const *defines)
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
    if (add_option_macros(&r, defines) != CUDAG_OK)
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
