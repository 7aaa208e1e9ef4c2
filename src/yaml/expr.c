/* expr.c — expressions, by recursive descent over the text.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 *   NUMBER  := INTEGER | FLOAT
 *   INTEGER := [0-9][0-9_]* | 0x[0-9a-fA-F_]+
 *   FLOAT   := [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?   (a '.' or an e)
 *
 * Three modes (expr.h): integers only, where a size or an index is computed
 * (every operation checked for signed 64-bit overflow, so later stages can
 * trust it); floating point throughout, for an argument of a floating-point
 * parameter (every value is a double from the start, so 1/H is not 0); and
 * for a variable's value, integers that become floating point where a
 * floating-point number or variable joins them.  Recursion is bounded by
 * CUDAG__MAX_EXPR_DEPTH, so hostile input cannot exhaust the stack.
 */
#include "yaml/expr.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/attrs.h"
#include "base/diag.h"
#include "base/map.h"
#include "base/text.h"
#include "ir/graph.h"
#include "ir/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ep {
    const char *s;
    size_t len, i;
    cudag__pos pos;
    const cudag__scope *sc;
    cudag__diag *d;
    unsigned depth;
    cudag__expr_mode mode;
} ep;

/* A value on the way: an integer, or (fl) a double. */
typedef cudag__num num;

static num int_num(int64_t i) { return (num){.i = i}; }
static num float_num(double f) { return (num){.f = f, .fl = true}; }
static double as_double(num v) { return v.fl ? v.f : (double)v.i; }

static cudag__pos at(const ep *p, size_t off)
{
    cudag__pos pos = p->pos;
    pos.col += cudag__columns(p->s, off);
    return pos;
}

static int fail(ep *p, size_t off, int code, const char *fmt, ...)
    CUDAG__PRINTF(4, 5);
static int fail(ep *p, size_t off, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cudag__vreport(p->d, CUDAG_SEV_ERROR, code, at(p, off), fmt, ap);
    va_end(ap);
    return code;
}

static void skip_ws(ep *p)
{
    while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
        p->i++;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_expr(ep *p, num *out);

static int overflow(ep *p, size_t off, const char *op, int64_t a, int64_t b)
{
    return fail(p, off, CUDAG_EOVERFLOW,
                "integer overflow in %lld %s %lld", (long long)a, op,
                (long long)b);
}

static int apply_int(ep *p, size_t off, char op, int64_t a, int64_t b,
                     int64_t *r)
{
    switch (op) {
    case '+':
        if (__builtin_add_overflow(a, b, r))
            return overflow(p, off, "+", a, b);
        return CUDAG_OK;
    case '-':
        if (__builtin_sub_overflow(a, b, r))
            return overflow(p, off, "-", a, b);
        return CUDAG_OK;
    case '*':
        if (__builtin_mul_overflow(a, b, r))
            return overflow(p, off, "*", a, b);
        return CUDAG_OK;
    case '/':
    case '%':
        if (b == 0)
            return fail(p, off, CUDAG_EEXPR, "division by zero");
        if (a == INT64_MIN && b == -1)
            return overflow(p, off, op == '/' ? "/" : "%", a, b);
        *r = op == '/' ? a / b : a % b;
        return CUDAG_OK;
    }
    return fail(p, off, CUDAG_EEXPR, "unknown operator '%c'", op);
}

/* A floating-point result must be a number a kernel can use. */
static int finite(ep *p, size_t off, double v, num *out)
{
    if (!isfinite(v))
        return fail(p, off, CUDAG_ERANGE,
                    "the result is not a finite number");
    *out = float_num(v);
    return CUDAG_OK;
}

/* a op b: in integers where both are, else in double precision. */
static int apply(ep *p, size_t off, char op, num a, num b, num *r)
{
    if (!a.fl && !b.fl) {
        r->fl = false;
        return apply_int(p, off, op, a.i, b.i, &r->i);
    }
    double x = as_double(a), y = as_double(b);
    switch (op) {
    case '+':
        return finite(p, off, x + y, r);
    case '-':
        return finite(p, off, x - y, r);
    case '*':
        return finite(p, off, x * y, r);
    case '/':
    case '%':
        if (y == 0)
            return fail(p, off, CUDAG_EEXPR, "division by zero");
        return finite(p, off, op == '/' ? x / y : fmod(x, y), r);
    }
    return fail(p, off, CUDAG_EEXPR, "unknown operator '%c'", op);
}

/* The floating-point literal at p->s[start] (digits already seen up to
 * p->i): '.' digits, an exponent, or both. */
static int parse_float_literal(ep *p, size_t start, num *out)
{
    size_t i = p->i;
    if (i < p->len && p->s[i] == '.')
        for (i++; i < p->len && is_digit(p->s[i]);)
            i++;
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t e = i + 1;
        if (e < p->len && (p->s[e] == '+' || p->s[e] == '-'))
            e++;
        if (e >= p->len || !is_digit(p->s[e]))
            return fail(p, start, CUDAG_EEXPR, "malformed number '%.*s'",
                        (int)(e - start), p->s + start);
        for (i = e; i < p->len && is_digit(p->s[i]);)
            i++;
    }
    if (i < p->len && (is_alpha(p->s[i]) || p->s[i] == '.'))
        return fail(p, start, CUDAG_EEXPR, "malformed number '%.*s'",
                    (int)(i + 1 - start), p->s + start);
    size_t n = i - start;
    if (p->mode == CUDAG__EXPR_INT)
        return fail(p, start, CUDAG_EEXPR,
                    "%.*s is a floating-point number, and an integer is "
                    "needed here",
                    (int)n, p->s + start);
    char buf[80];
    if (n >= sizeof buf)
        return fail(p, start, CUDAG_EEXPR, "number '%.*s' is too long",
                    (int)n, p->s + start);
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return fail(p, start, CUDAG_ERANGE, "%s is too large for a double",
                    buf);
    p->i = i;
    *out = float_num(v);
    return CUDAG_OK;
}

static int parse_number(ep *p, num *out)
{
    size_t start = p->i;
    uint64_t v = 0;
    unsigned base = 10;
    bool any = false;
    if (p->i + 1 < p->len && p->s[p->i] == '0' &&
        (p->s[p->i + 1] == 'x' || p->s[p->i + 1] == 'X')) {
        base = 16;
        p->i += 2;
    }
    bool big = false;
    for (; p->i < p->len; p->i++) {
        char c = p->s[p->i];
        unsigned dv;
        if (c == '_')
            continue;
        if (is_digit(c))
            dv = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            dv = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            dv = (unsigned)(c - 'A' + 10);
        else
            break;
        any = true;
        if (v > (UINT64_MAX - dv) / base)
            big = true;
        else
            v = v * base + dv;
    }
    if (!any)
        return fail(p, start, CUDAG_EEXPR, "malformed number");
    if (base == 10 && p->i < p->len &&
        (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
        return parse_float_literal(p, start, out);
    if (big)
        return fail(p, start, CUDAG_EOVERFLOW,
                    "integer literal does not fit in 64 bits");
    if (p->i < p->len && is_alpha(p->s[p->i]))
        return fail(p, start, CUDAG_EEXPR, "malformed number '%.*s'",
                    (int)(p->i + 1 - start), p->s + start);
    /* INT64_MIN is written as -9223372036854775808: let unary minus make it. */
    if (v > (uint64_t)INT64_MAX + 1)
        return fail(p, start, CUDAG_EOVERFLOW,
                    "integer literal does not fit in 64 bits");
    if (v == (uint64_t)INT64_MAX + 1) {
        if (start == 0 || p->s[start - 1] != '-')
            return fail(p, start, CUDAG_EOVERFLOW,
                        "integer literal does not fit in 64 bits");
        *out = int_num(INT64_MIN);  /* negated in parse_unary */
        return CUDAG_OK;
    }
    *out = p->mode == CUDAG__EXPR_FLOAT ? float_num((double)v)
                                        : int_num((int64_t)v);
    return CUDAG_OK;
}

/* The value of a repetition index or a variable.  Returns CUDAG_OK, 1 when
 * no such name exists, or an error (reported). */
static int lookup(ep *p, size_t off, const char *name, num *v)
{
    const cudag__binding *b = p->sc->env;
    while (b && strcmp(b->name, name) != 0)
        b = b->up;
    if (b) {
        *v = int_num(b->value);
    } else {
        uint32_t i = p->sc->g ? cudag__find_var(p->sc->g, name) : CUDAG__NONE;
        if (i == CUDAG__NONE)
            return 1;
        const cudag__var *var = &p->sc->g->vars[i];
        if (var->is_float && p->mode == CUDAG__EXPR_INT)
            return fail(p, off, CUDAG_ETYPE,
                        "'%s' is a floating-point variable, and an integer is "
                        "needed here",
                        name);
        *v = var->is_float ? float_num(var->f) : int_num(var->value);
    }
    if (p->mode == CUDAG__EXPR_FLOAT && !v->fl)
        *v = float_num((double)v->i);
    return CUDAG_OK;
}

static int unknown_name(ep *p, size_t off, const char *name)
{
    /* Candidates: indices in scope and every variable (few in practice). */
    const char *best = NULL;
    size_t n = 0;
    for (const cudag__binding *b = p->sc->env; b; b = b->up)
        n++;
    const cudag_graph *g = p->sc->g;
    size_t nv = g ? g->nvars : 0;
    const char **cands = cudag__malloc((n + nv + 1) * sizeof *cands);
    if (cands) {
        size_t k = 0;
        for (const cudag__binding *b = p->sc->env; b; b = b->up)
            cands[k++] = b->name;
        for (size_t i = 0; i < nv; i++)
            cands[k++] = g->vars[i].name;
        best = cudag__suggest(name, cands, k);
    }
    int rc = best ? fail(p, off, CUDAG_EUNKNOWN,
                         "unknown variable '%s' (did you mean '%s'?)", name,
                         best)
                  : fail(p, off, CUDAG_EUNKNOWN, "unknown variable '%s'", name);
    cudag__free(cands);
    return rc;
}

static void expect_ws(ep *p) { skip_ws(p); }

/* cdiv, min and max of the evaluated arguments: in integers where all are,
 * else in double precision. */
static int call(ep *p, const char *name, size_t off, const num *args, int n,
                num *out)
{
    bool fl = false;
    for (int k = 0; k < n; k++)
        fl |= args[k].fl;
    if (name[0] == 'c') {
        num a = args[0], b = args[1];
        if (fl ? as_double(b) <= 0 : b.i <= 0) {
            char x[40], y[40];
            if (fl)
                cudag__fmt_num(x, as_double(a)), cudag__fmt_num(y, as_double(b));
            else
                snprintf(x, sizeof x, "%lld", (long long)a.i),
                    snprintf(y, sizeof y, "%lld", (long long)b.i);
            return fail(p, off, CUDAG_EEXPR,
                        "cdiv(%s, %s): the divisor must be positive", x, y);
        }
        if (fl)
            return finite(p, off, ceil(as_double(a) / as_double(b)), out);
        /* ⌈a/b⌉ without overflowing a + b - 1. */
        int64_t q = a.i / b.i;
        *out = int_num((a.i % b.i != 0 && a.i > 0) ? q + 1 : q);
        return CUDAG_OK;
    }
    bool want_min = name[1] == 'i';
    num r = args[0];
    for (int k = 1; k < n; k++) {
        bool less = fl ? as_double(args[k]) < as_double(r) : args[k].i < r.i;
        bool more = fl ? as_double(args[k]) > as_double(r) : args[k].i > r.i;
        if (want_min ? less : more)
            r = args[k];
    }
    *out = fl ? float_num(as_double(r)) : r;
    return CUDAG_OK;
}

static int parse_call(ep *p, const char *name, size_t off, num *out)
{
    int nargs_min, nargs_max;
    if (strcmp(name, "cdiv") == 0)
        nargs_min = nargs_max = 2;
    else if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
        nargs_min = 2, nargs_max = 64;
    else {
        static const char *const fns[] = {"cdiv", "min", "max"};
        const char *best = cudag__suggest(name, fns, 3);
        if (best)
            return fail(p, off, CUDAG_EUNKNOWN,
                        "unknown function '%s' (did you mean '%s'?)", name,
                        best);
        return fail(p, off, CUDAG_EUNKNOWN,
                    "unknown function '%s' (there are cdiv, min, max)", name);
    }
    p->i++;     /* '(' */
    num args[64];
    int n = 0;
    for (;;) {
        if (n == nargs_max)
            return fail(p, p->i, CUDAG_EEXPR, "%s() takes at most %d arguments",
                        name, nargs_max);
        int rc = parse_expr(p, &args[n]);
        if (rc != CUDAG_OK)
            return rc;
        n++;
        expect_ws(p);
        if (p->i < p->len && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->len && p->s[p->i] == ')') {
            p->i++;
            break;
        }
        return fail(p, p->i, CUDAG_EEXPR, "expected ',' or ')' in %s()", name);
    }
    if (n < nargs_min)
        return fail(p, off, CUDAG_EEXPR, "%s() takes %s%d arguments, got %d",
                    name, nargs_min == nargs_max ? "" : "at least ", nargs_min,
                    n);
    return call(p, name, off, args, n, out);
}

static int parse_primary(ep *p, num *out)
{
    skip_ws(p);
    if (p->i >= p->len)
        return fail(p, p->i, CUDAG_EEXPR, "expected a number, a name or '('");
    char c = p->s[p->i];
    size_t start = p->i;
    if (is_digit(c))
        return parse_number(p, out);
    if (c == '(') {
        p->i++;
        int rc = parse_expr(p, out);
        if (rc != CUDAG_OK)
            return rc;
        skip_ws(p);
        if (p->i >= p->len || p->s[p->i] != ')')
            return fail(p, start, CUDAG_EEXPR,
                        "unbalanced '(' (a ',' inside {...} or [...] splits an "
                        "expression: quote it, or use block style)");
        p->i++;
        return CUDAG_OK;
    }
    if (is_alpha(c)) {
        while (p->i < p->len && (is_alpha(p->s[p->i]) || is_digit(p->s[p->i])))
            p->i++;
        size_t n = p->i - start;
        if (n > CUDAG__MAX_NAME)
            return fail(p, start, CUDAG_ELIMIT, "name longer than %u bytes",
                        CUDAG__MAX_NAME);
        char name[CUDAG__MAX_NAME + 1];
        memcpy(name, p->s + start, n);
        name[n] = '\0';
        skip_ws(p);
        if (p->i < p->len && p->s[p->i] == '(')
            return parse_call(p, name, start, out);
        int rc = lookup(p, start, name, out);
        if (rc != 1)
            return rc;
        return p->sc->bad_vars && cudag__map_get(p->sc->bad_vars, name, NULL)
                   ? CUDAG__EBAD
                   : unknown_name(p, start, name);
    }
    return fail(p, start, CUDAG_EEXPR, "unexpected '%.*s' in expression",
                cudag__char_bytes(p->s + start, p->len - start), p->s + start);
}

static int parse_unary(ep *p, num *out)
{
    skip_ws(p);
    if (p->i < p->len && (p->s[p->i] == '-' || p->s[p->i] == '+')) {
        char op = p->s[p->i];
        size_t off = p->i++;
        if (++p->depth > CUDAG__MAX_EXPR_DEPTH)
            return fail(p, off, CUDAG_ELIMIT,
                        "expression nested deeper than %u levels",
                        CUDAG__MAX_EXPR_DEPTH);
        num v;
        int rc = parse_unary(p, &v);
        p->depth--;
        if (rc != CUDAG_OK)
            return rc;
        if (op == '+') {
            *out = v;
        } else if (v.fl) {
            *out = float_num(-v.f);
        } else if (v.i == INT64_MIN) {
            /* Only the literal 9223372036854775808 after '-' gets here. */
            *out = v;
            if (off + 1 < p->len && !is_digit(p->s[off + 1]))
                return overflow(p, off, "-", 0, v.i);
        } else {
            *out = int_num(-v.i);
        }
        return CUDAG_OK;
    }
    return parse_primary(p, out);
}

static int parse_term(ep *p, num *out)
{
    int rc = parse_unary(p, out);
    while (rc == CUDAG_OK) {
        skip_ws(p);
        if (p->i >= p->len)
            break;
        char op = p->s[p->i];
        if (op != '*' && op != '/' && op != '%')
            break;
        size_t off = p->i++;
        num rhs;
        rc = parse_unary(p, &rhs);
        if (rc == CUDAG_OK)
            rc = apply(p, off, op, *out, rhs, out);
    }
    return rc;
}

static int parse_expr(ep *p, num *out)
{
    if (++p->depth > CUDAG__MAX_EXPR_DEPTH)
        return fail(p, p->i, CUDAG_ELIMIT,
                    "expression nested deeper than %u levels",
                    CUDAG__MAX_EXPR_DEPTH);
    int rc = parse_term(p, out);
    while (rc == CUDAG_OK) {
        skip_ws(p);
        if (p->i >= p->len)
            break;
        char op = p->s[p->i];
        if (op != '+' && op != '-')
            break;
        size_t off = p->i++;
        num rhs;
        rc = parse_term(p, &rhs);
        if (rc == CUDAG_OK)
            rc = apply(p, off, op, *out, rhs, out);
    }
    p->depth--;
    return rc;
}

int cudag__expr_eval_num(const char *s, size_t len, cudag__pos pos,
                         const cudag__scope *sc, cudag__expr_mode mode,
                         cudag__diag *d, cudag__num *out)
{
    /* Most expressions in a file are plain numbers ("grid: 1"), evaluated
     * once per repeated node: read those without the parser.  18 digits
     * cannot overflow. */
    if (len > 0 && len <= 18) {
        int64_t v = 0;
        size_t i = 0;
        while (i < len && is_digit(s[i]))
            v = v * 10 + (s[i++] - '0');
        if (i == len) {
            *out = mode == CUDAG__EXPR_FLOAT ? float_num((double)v) : int_num(v);
            return CUDAG_OK;
        }
    }
    ep p = {s, len, 0, pos, sc, d, 0, mode};
    if (len > CUDAG__MAX_EXPR_LEN)
        return fail(&p, 0, CUDAG_ELIMIT, "expression longer than %u bytes",
                    CUDAG__MAX_EXPR_LEN);
    skip_ws(&p);
    if (p.i >= len)
        return fail(&p, 0, CUDAG_EEXPR, "empty expression");
    num v;
    int rc = parse_expr(&p, &v);
    if (rc != CUDAG_OK)
        return rc;
    skip_ws(&p);
    if (p.i < len) {
        if (s[p.i] == ')')
            return fail(&p, p.i, CUDAG_EEXPR, "unbalanced ')'");
        return fail(&p, p.i, CUDAG_EEXPR, "unexpected '%.*s' in expression",
                    cudag__char_bytes(s + p.i, len - p.i), s + p.i);
    }
    *out = v;
    return CUDAG_OK;
}

int cudag__expr_eval(const char *s, size_t len, cudag__pos pos,
                     const cudag__scope *sc, cudag__diag *d, int64_t *out)
{
    num v;
    int rc = cudag__expr_eval_num(s, len, pos, sc, CUDAG__EXPR_INT, d, &v);
    if (rc == CUDAG_OK)
        *out = v.i;
    return rc;
}
