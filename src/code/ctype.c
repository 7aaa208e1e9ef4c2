/* ctype.c — a kernel's parameter types in cudag types: the C type table
 * (scalars, pointers and their element types, condition handles) and a
 * parameter list resolved through macros, aliases and template arguments.
 * Its own file: it works on the type strings decls.c collected and needs no
 * lexer. */
#include "code/ctype.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "code/decls.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>

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
    out->pnamed = cudag__arena_alloc(a, (n + 1) * sizeof *out->pnamed);
    if (!out->types || !out->pointee || !out->pnames || !out->pnamed)
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
        out->pnamed[i] = p->name != NULL;
        if (!out->pnames[i])
            goto oom;
    }
    out->nparams = n;
    return CUDAG_OK;
oom:
    memset(out, 0, sizeof *out);
    return cudag__fail_at(err, CUDAG_ENOMEM, CUDAG__NOPOS, "out of memory");
}
