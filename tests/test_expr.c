/* test_expr.c — integer expressions: values, precedence, functions, names,
 * overflow and every error with its column. */
#include "common.h"
#include "cudag.h"
#include "base/diag.h"
#include "base/map.h"
#include "ir/graph.h"
#include "yaml/expr.h"

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

__extension__ typedef __int128 i128;

typedef struct ctx {
    cudag_graph *g;
    tdiag td;
    cudag__diag d;
    cudag_error first;
    cudag__map bad;             /* variables reported wrong */
} ctx;

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    assert_int_equal(cudag_graph_create("t", &c->g, NULL), CUDAG_OK);
    assert_int_equal(cudag_add_var(c->g, "N", 4096, NULL), CUDAG_OK);
    assert_int_equal(cudag_add_var(c->g, "T", 64, NULL), CUDAG_OK);
    assert_int_equal(cudag_add_var(c->g, "BIG", INT64_MAX, NULL), CUDAG_OK);
    assert_int_equal(cudag_add_var(c->g, "E", 5, NULL), CUDAG_OK);
    /* A floating-point variable, as the front end makes one. */
    cudag__var *eps;
    assert_int_equal(cudag__add_var(c->g, "eps", CUDAG__NOPOS, &eps, NULL),
                     CUDAG_OK);
    eps->is_float = true;
    eps->f = 1e-5;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    cudag_graph_destroy(c->g);
    cudag__map_free(&c->bad);
    free(c);
    return 0;
}

/* Evaluates s in `mode` with index i = 3 in scope; returns the status. */
static int eval_mode(ctx *c, const char *s, cudag__expr_mode mode,
                     cudag__num *v)
{
    cudag_options o = topts(&c->td, NULL);
    cudag__diag_init(&c->d, &o, &c->first);
    cudag__binding i = {"i", 3, NULL};
    cudag__scope sc = {c->g, &i, &c->bad};
    cudag__pos pos = {"e.yaml", 7, 10};
    return cudag__expr_eval_num(s, strlen(s), pos, &sc, mode, &c->d, v);
}

/* The same in integers, through cudag__expr_eval. */
static int eval(ctx *c, const char *s, int64_t *v)
{
    cudag_options o = topts(&c->td, NULL);
    cudag__diag_init(&c->d, &o, &c->first);
    cudag__binding i = {"i", 3, NULL};
    cudag__scope sc = {c->g, &i, &c->bad};
    cudag__pos pos = {"e.yaml", 7, 10};
    return cudag__expr_eval(s, strlen(s), pos, &sc, &c->d, v);
}

/* s in floating point: its value. */
static double okf(ctx *c, const char *s)
{
    cudag__num v;
    int rc = eval_mode(c, s, CUDAG__EXPR_FLOAT, &v);
    if (rc != CUDAG_OK)
        print_error("'%s': %s\n", s, c->td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_true(v.fl);
    return v.f;
}

static int64_t ok(ctx *c, const char *s)
{
    int64_t v = -12345;
    int rc = eval(c, s, &v);
    if (rc != CUDAG_OK)
        print_error("'%s': %s\n", s, c->td.text);
    assert_int_equal(rc, CUDAG_OK);
    return v;
}

static void bad(ctx *c, const char *s, int code, const char *msg)
{
    int64_t v;
    assert_int_equal(eval(c, s, &v), code);
    assert_diag_contains(&c->td, msg);
    assert_int_equal(c->td.nerr, 1);
}

static void expr_values_and_precedence(void **state)
{
    ctx *c = *state;
    assert_int_equal(ok(c, "42"), 42);
    /* Plain numbers take a short path up to 18 digits, the parser after. */
    assert_int_equal(ok(c, "0"), 0);
    assert_int_equal(ok(c, "007"), 7);
    assert_int_equal(ok(c, "999999999999999999"), INT64_C(999999999999999999));
    assert_int_equal(ok(c, "9223372036854775807"), INT64_MAX);
    assert_int_equal(ok(c, "1_000_000"), 1000000);
    assert_int_equal(ok(c, "0x10"), 16);
    assert_int_equal(ok(c, "0XfF"), 255);
    assert_int_equal(ok(c, "2 + 3 * 4"), 14);
    assert_int_equal(ok(c, "(2 + 3) * 4"), 20);
    assert_int_equal(ok(c, "10 - 4 - 3"), 3);
    assert_int_equal(ok(c, "100 / 10 / 5"), 2);
    assert_int_equal(ok(c, "-7 / 2"), -3);      /* truncates toward zero */
    assert_int_equal(ok(c, "-7 % 3"), -1);
    assert_int_equal(ok(c, "--5"), 5);
    assert_int_equal(ok(c, "+5 - -5"), 10);
    assert_int_equal(ok(c, " T*N "), 64 * 4096);
    assert_int_equal(ok(c, "i * N + 1"), 3 * 4096 + 1);
    assert_int_equal(ok(c, "-9223372036854775808"), INT64_MIN);
    assert_int_equal(ok(c, "BIG"), INT64_MAX);
}

static void expr_functions(void **state)
{
    ctx *c = *state;
    assert_int_equal(ok(c, "cdiv(N, 256)"), 16);
    assert_int_equal(ok(c, "cdiv(N + 1, 256)"), 17);
    assert_int_equal(ok(c, "cdiv(0, 7)"), 0);
    assert_int_equal(ok(c, "cdiv(-7, 2)"), -3);
    assert_int_equal(ok(c, "cdiv(BIG, 2)"), INT64_MAX / 2 + 1);
    assert_int_equal(ok(c, "min(5, 3, 9)"), 3);
    assert_int_equal(ok(c, "max(5, 3, 9)"), 9);
    assert_int_equal(ok(c, "max(i - 4, 0)"), 0);
    assert_int_equal(ok(c, "min(cdiv(N, T), (2 + 2) * 8)"), 32);
}

static void expr_reports_errors_at_their_column(void **state)
{
    ctx *c = *state;
    /* The expression starts at column 10 of line 7. */
    bad(c, "N / 0", CUDAG_EEXPR, "e.yaml:7:12: error: division by zero");
    bad(c, "N % (T - 64)", CUDAG_EEXPR, "e.yaml:7:12: error: division by zero");
    bad(c, "BIG + 1", CUDAG_EOVERFLOW,
        "e.yaml:7:14: error: integer overflow in 9223372036854775807 + 1");
    bad(c, "BIG * 2", CUDAG_EOVERFLOW, "integer overflow");
    bad(c, "-BIG - 2", CUDAG_EOVERFLOW, "integer overflow");
    bad(c, "-9223372036854775808 / -1", CUDAG_EOVERFLOW, "integer overflow");
    bad(c, "--9223372036854775808", CUDAG_EOVERFLOW, "integer overflow");
    bad(c, "9223372036854775808", CUDAG_EOVERFLOW, "does not fit in 64 bits");
    bad(c, "99999999999999999999", CUDAG_EOVERFLOW, "does not fit in 64 bits");
    bad(c, "Nn * 2", CUDAG_EUNKNOWN,
        "e.yaml:7:10: error: unknown variable 'Nn' (did you mean 'N'?)");
    bad(c, "j + 1", CUDAG_EUNKNOWN, "e.yaml:7:10: error: unknown variable 'j'\n");
    bad(c, "cdv(N, 2)", CUDAG_EUNKNOWN,
        "unknown function 'cdv' (did you mean 'cdiv'?)");
    bad(c, "cdiv(N)", CUDAG_EEXPR, "cdiv() takes 2 arguments, got 1");
    bad(c, "cdiv(N, 0)", CUDAG_EEXPR, "the divisor must be positive");
    bad(c, "min(N)", CUDAG_EEXPR, "min() takes at least 2 arguments, got 1");
    bad(c, "(N + 1", CUDAG_EEXPR, "e.yaml:7:10: error: unbalanced '('");
    bad(c, "N + 1)", CUDAG_EEXPR, "e.yaml:7:15: error: unbalanced ')'");
    bad(c, "N 2", CUDAG_EEXPR, "e.yaml:7:12: error: unexpected '2'");
    bad(c, "", CUDAG_EEXPR, "empty expression");
    bad(c, "N +", CUDAG_EEXPR, "expected a number, a name or '('");
    bad(c, "2.5", CUDAG_EEXPR,
        "e.yaml:7:10: error: 2.5 is a floating-point number, and an integer "
        "is needed here");
    bad(c, "T * 1e3", CUDAG_EEXPR,
        "e.yaml:7:14: error: 1e3 is a floating-point number, and an integer "
        "is needed here");
    bad(c, "N + eps", CUDAG_ETYPE,
        "e.yaml:7:14: error: 'eps' is a floating-point variable, and an "
        "integer is needed here");
    bad(c, "2.5.1", CUDAG_EEXPR, "malformed number '2.5.'");
    bad(c, "1e+", CUDAG_EEXPR, "malformed number '1e+'");
    bad(c, "12abc", CUDAG_EEXPR, "malformed number");
    bad(c, "0x", CUDAG_EEXPR, "malformed number");
    bad(c, "N # 2", CUDAG_EEXPR, "unexpected '#'");
}

/* A variable whose declaration was reported wrong fails the expression that
 * names it with CUDAG__EBAD and reports nothing: its mistake is reported
 * once, where it was made. */
static void expr_bad_variable_fails_silently(void **state)
{
    ctx *c = *state;
    assert_int_equal(cudag__map_put(&c->bad, "Q", 0), CUDAG_OK);
    int64_t v = -1;
    assert_int_equal(eval(c, "N + Q * 2", &v), CUDAG__EBAD);
    assert_int_equal(v, -1);
    assert_int_equal(c->td.nerr, 0);
    assert_int_equal(c->td.len, 0);
    /* Any other unknown name is still reported. */
    bad(c, "F + Q", CUDAG_EUNKNOWN, "e.yaml:7:10: error: unknown variable 'F'");
}

/* For a floating-point parameter every value is a double from the start:
 * E/10 with E = 5 is 0.5, 1/T is not 0. */
static void expr_floating_point(void **state)
{
    ctx *c = *state;
    assert_true(okf(c, "E/10") == 0.5);
    assert_true(okf(c, "1/T") == 1.0 / 64);
    assert_true(okf(c, "2.5 * i") == 7.5);
    assert_true(okf(c, "1e-5") == 1e-5);
    assert_true(okf(c, "-1.5e3") == -1500.0);
    assert_true(okf(c, "eps * 2") == 2e-5);
    assert_true(okf(c, "42") == 42.0);
    assert_true(okf(c, "cdiv(N, 3)") == 1366.0);
    assert_true(okf(c, "min(1.5, T, 7)") == 1.5);
    assert_true(okf(c, "max(E / 2, 2)") == 2.5);
    assert_true(okf(c, "N % 3.5") == 1.0);
    assert_true(okf(c, "-(E - 7) / 4") == 0.5);
    cudag__num v;
    assert_int_equal(eval_mode(c, "1 / (E - 5)", CUDAG__EXPR_FLOAT, &v),
                     CUDAG_EEXPR);
    assert_diag_contains(&c->td, "e.yaml:7:12: error: division by zero");
    assert_int_equal(eval_mode(c, "1e308 * 10", CUDAG__EXPR_FLOAT, &v),
                     CUDAG_ERANGE);
    assert_diag_contains(&c->td, "error: the result is not a finite number");
    assert_int_equal(eval_mode(c, "1e400", CUDAG__EXPR_FLOAT, &v),
                     CUDAG_ERANGE);
    assert_diag_contains(&c->td, "error: 1e400 is too large for a double");
    assert_int_equal(eval_mode(c, "cdiv(1, 0.0)", CUDAG__EXPR_FLOAT, &v),
                     CUDAG_EEXPR);
    assert_diag_contains(&c->td, "cdiv(1.0, 0.0): the divisor must be positive");
}

/* A variable's value stays an integer unless a floating-point number or
 * variable joins it; then the rest of it is computed in floating point. */
static void expr_variable_values_keep_their_kind(void **state)
{
    ctx *c = *state;
    cudag__num v;
    assert_int_equal(eval_mode(c, "E / 10", CUDAG__EXPR_ANY, &v), CUDAG_OK);
    assert_false(v.fl);
    assert_int_equal(v.i, 0);
    assert_int_equal(eval_mode(c, "N / 2 + i", CUDAG__EXPR_ANY, &v), CUDAG_OK);
    assert_false(v.fl);
    assert_int_equal(v.i, 2051);
    assert_int_equal(eval_mode(c, "eps * 2", CUDAG__EXPR_ANY, &v), CUDAG_OK);
    assert_true(v.fl && v.f == 2e-5);
    assert_int_equal(eval_mode(c, "N + 0.5", CUDAG__EXPR_ANY, &v), CUDAG_OK);
    assert_true(v.fl && v.f == 4096.5);
    assert_int_equal(eval_mode(c, "min(E, 2.5)", CUDAG__EXPR_ANY, &v), CUDAG_OK);
    assert_true(v.fl && v.f == 2.5);
    /* Integer arithmetic keeps its overflow checks. */
    assert_int_equal(eval_mode(c, "BIG + 1", CUDAG__EXPR_ANY, &v),
                     CUDAG_EOVERFLOW);
}

static void expr_limits_depth_and_length(void **state)
{
    ctx *c = *state;
    char deep[400];
    memset(deep, '(', 100);
    deep[100] = '1';
    memset(deep + 101, ')', 100);
    deep[201] = '\0';
    bad(c, deep, CUDAG_ELIMIT, "nested deeper than 64 levels");
    memset(deep, '-', 100);
    deep[100] = '1';
    deep[101] = '\0';
    bad(c, deep, CUDAG_ELIMIT, "nested deeper than 64 levels");
    char *longx = malloc(5000);
    memset(longx, '1', 4999);
    longx[4999] = '\0';
    bad(c, longx, CUDAG_ELIMIT, "longer than 4096 bytes");
    free(longx);
    char name[300];
    memset(name, 'a', 299);
    name[299] = '\0';
    bad(c, name, CUDAG_ELIMIT, "name longer than 255 bytes");
}

/* Random expressions against a reference evaluator in __int128: every value
 * that fits must match, every overflow must be reported. */
static void expr_matches_reference_on_random_input(void **state)
{
    ctx *c = *state;
    uint64_t seed = tseed();
    for (int round = 0; round < 2000; round++) {
        int64_t a = (int64_t)(trand(&seed, -1e6, 1e6));
        int64_t b = (int64_t)(trand(&seed, -1e6, 1e6));
        int64_t m = (int64_t)(trand(&seed, 1, 1e13));
        char s[256];
        snprintf(s, sizeof s, "(%lld + %lld) * %lld - %lld / %lld",
                 (long long)a, (long long)b, (long long)m, (long long)a,
                 (long long)(b ? b : 1));
        i128 ref = ((i128)a + b) * m - (i128)(a / (b ? b : 1));
        int64_t v;
        int rc = eval(c, s, &v);
        if (ref > INT64_MAX || ref < INT64_MIN)
            assert_int_equal(rc, CUDAG_EOVERFLOW);
        else {
            assert_int_equal(rc, CUDAG_OK);
            assert_true((i128)v == ref);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(expr_values_and_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_reports_errors_at_their_column, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_bad_variable_fails_silently, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_floating_point, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_variable_values_keep_their_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_limits_depth_and_length, setup, teardown),
        cmocka_unit_test_setup_teardown(expr_matches_reference_on_random_input, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
