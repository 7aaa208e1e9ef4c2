/* expr.c — integer expressions, by recursive descent over the text.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 *   INTEGER := [0-9][0-9_]* | 0x[0-9a-fA-F_]+
 *
 * Every operation is checked for signed 64-bit overflow, so a size computed
 * here can be trusted by later stages.  Recursion is bounded by
 * CUDAG__MAX_EXPR_DEPTH, so hostile input cannot exhaust the stack.
 */
#include "expr.h"

#include <string.h>

typedef struct ep {
    const char *s;
    size_t len, i;
    cudag__pos pos;
    const cudag__scope *sc;
    cudag__diag *d;
    unsigned depth;
} ep;

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

static int parse_expr(ep *p, int64_t *out);

static int overflow(ep *p, size_t off, const char *op, int64_t a, int64_t b)
{
    return fail(p, off, CUDAG_EOVERFLOW,
                "integer overflow in %lld %s %lld", (long long)a, op,
                (long long)b);
}

static int apply(ep *p, size_t off, char op, int64_t a, int64_t b, int64_t *r)
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

static int parse_number(ep *p, int64_t *out)
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
            return fail(p, start, CUDAG_EOVERFLOW,
                        "integer literal does not fit in 64 bits");
        v = v * base + dv;
    }
    if (!any)
        return fail(p, start, CUDAG_EEXPR, "malformed number");
    if (p->i < p->len && (is_alpha(p->s[p->i]) || p->s[p->i] == '.'))
        return fail(p, start, CUDAG_EEXPR,
                    "malformed number '%.*s' (expressions are integers)",
                    (int)(p->i + 1 - start), p->s + start);
    /* INT64_MIN is written as -9223372036854775808: let unary minus make it. */
    if (v > (uint64_t)INT64_MAX + 1)
        return fail(p, start, CUDAG_EOVERFLOW,
                    "integer literal does not fit in 64 bits");
    if (v == (uint64_t)INT64_MAX + 1) {
        if (start == 0 || p->s[start - 1] != '-')
            return fail(p, start, CUDAG_EOVERFLOW,
                        "integer literal does not fit in 64 bits");
        *out = INT64_MIN;   /* the caller negates: handled in parse_unary */
        return CUDAG_OK;
    }
    *out = (int64_t)v;
    return CUDAG_OK;
}

static bool lookup(const ep *p, const char *name, int64_t *v)
{
    for (const cudag__binding *b = p->sc->env; b; b = b->up)
        if (strcmp(b->name, name) == 0) {
            *v = b->value;
            return true;
        }
    uint32_t i = p->sc->g ? cudag__find_var(p->sc->g, name) : CUDAG__NONE;
    if (i == CUDAG__NONE)
        return false;
    *v = p->sc->g->vars[i].value;
    return true;
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

static int parse_call(ep *p, const char *name, size_t off, int64_t *out)
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
    int64_t args[64];
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
    if (name[0] == 'c') {
        int64_t a = args[0], b = args[1];
        if (b <= 0)
            return fail(p, off, CUDAG_EEXPR,
                        "cdiv(%lld, %lld): the divisor must be positive",
                        (long long)a, (long long)b);
        /* ⌈a/b⌉ without overflowing a + b - 1. */
        int64_t q = a / b;
        *out = (a % b != 0 && a > 0) ? q + 1 : q;
        return CUDAG_OK;
    }
    int64_t r = args[0];
    for (int k = 1; k < n; k++)
        r = name[1] == 'i' ? (args[k] < r ? args[k] : r)
                           : (args[k] > r ? args[k] : r);
    *out = r;
    return CUDAG_OK;
}

static int parse_primary(ep *p, int64_t *out)
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
        if (!lookup(p, name, out))
            return unknown_name(p, start, name);
        return CUDAG_OK;
    }
    return fail(p, start, CUDAG_EEXPR, "unexpected '%.*s' in expression",
                cudag__char_bytes(p->s + start, p->len - start), p->s + start);
}

static int parse_unary(ep *p, int64_t *out)
{
    skip_ws(p);
    if (p->i < p->len && (p->s[p->i] == '-' || p->s[p->i] == '+')) {
        char op = p->s[p->i];
        size_t off = p->i++;
        if (++p->depth > CUDAG__MAX_EXPR_DEPTH)
            return fail(p, off, CUDAG_ELIMIT,
                        "expression nested deeper than %u levels",
                        CUDAG__MAX_EXPR_DEPTH);
        int64_t v;
        int rc = parse_unary(p, &v);
        p->depth--;
        if (rc != CUDAG_OK)
            return rc;
        if (op == '+') {
            *out = v;
        } else if (v == INT64_MIN) {
            /* Only the literal 9223372036854775808 after '-' gets here. */
            *out = INT64_MIN;
            if (off + 1 < p->len && !is_digit(p->s[off + 1]))
                return overflow(p, off, "-", 0, v);
        } else {
            *out = -v;
        }
        return CUDAG_OK;
    }
    return parse_primary(p, out);
}

static int parse_term(ep *p, int64_t *out)
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
        int64_t rhs;
        rc = parse_unary(p, &rhs);
        if (rc == CUDAG_OK)
            rc = apply(p, off, op, *out, rhs, out);
    }
    return rc;
}

static int parse_expr(ep *p, int64_t *out)
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
        int64_t rhs;
        rc = parse_term(p, &rhs);
        if (rc == CUDAG_OK)
            rc = apply(p, off, op, *out, rhs, out);
    }
    p->depth--;
    return rc;
}

int cudag__expr_eval(const char *s, size_t len, cudag__pos pos,
                     const cudag__scope *sc, cudag__diag *d, int64_t *out)
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
            *out = v;
            return CUDAG_OK;
        }
    }
    ep p = {s, len, 0, pos, sc, d, 0};
    if (len > CUDAG__MAX_EXPR_LEN)
        return fail(&p, 0, CUDAG_ELIMIT, "expression longer than %u bytes",
                    CUDAG__MAX_EXPR_LEN);
    skip_ws(&p);
    if (p.i >= len)
        return fail(&p, 0, CUDAG_EEXPR, "empty expression");
    int64_t v;
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
