/* test_timeout.c — loops that never end (exec/'s timeout_ms, timing.c's
 * waits), on the fake driver: a while loop past the fake's iteration bound
 * keeps its stream busy for good (fake_state.runaway), as a device would.
 * With a timeout every wait polls and gives up with CUDAG_ETIMEOUT naming
 * the graph's while nodes; the exec is then lost: every call refuses, and
 * destroying it neither waits nor frees what the running graph uses.
 * Without a runaway the timeout changes nothing. */
#include "common.h"
#include "cudag.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "fake_driver.h"

#include <string.h>
#include <time.h>

#define HEAD                                                                   \
    "cudag: 1\n"                                                               \
    "include: cudag_kernels.yaml\n"                                            \
    "buffers:\n"                                                               \
    "  it: {type: i32, count: 1}\n"                                            \
    "  x: {type: f32, count: 64, init: 1}\n"

/* A loop whose counter never reaches k (cond_count_i32 counts in i32):
 * 'spin' is at 10:3. */
static const char *const RUNAWAY =
    HEAD
    "conditions:\n"
    "  more: {default: 1}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  spin:\n"
    "    while: more\n"
    "    after: reset\n"
    "    body:\n"
    "      next: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, "
    "3000000000, more]}\n";

/* The same with K iterations: it ends. */
static const char *const ENDS =
    HEAD
    "conditions:\n"
    "  more: {default: 1}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  spin:\n"
    "    while: more\n"
    "    after: reset\n"
    "    body:\n"
    "      next: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, 5, "
    "more]}\n";

/* Two while nodes, one inside an if's body: 'outer' at 11:3,
 * 'check.then.inner' at 20:7. */
static const char *const TWO =
    HEAD
    "conditions:\n"
    "  more: {default: 1}\n"
    "  ok: {default: 1}\n"
    "  again: {default: 1}\n"
    "nodes:\n"
    "  outer:\n"
    "    while: more\n"
    "    body:\n"
    "      next: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, "
    "3000000000, more]}\n"
    "  check:\n"
    "    if: ok\n"
    "    after: outer\n"
    "    then:\n"
    "      pre: {memset: it, value: 0}\n"
    "      inner:\n"
    "        while: again\n"
    "        after: pre\n"
    "        body:\n"
    "          n2: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, "
    "4, again]}\n";

static cudag_graph *load(const char *yaml)
{
    tdiag d;
    cudag_graph *g = NULL;
    int rc = tload(yaml, &d, &g);
    if (rc != CUDAG_OK)
        print_error("%s", d.text);
    assert_int_equal(rc, CUDAG_OK);
    return g;
}

static cudag_exec *instantiate(const cudag_graph *g, unsigned timeout_ms)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.timeout_ms = timeout_ms;
    cudag_exec *x;
    cudag_error e;
    tok(cudag_instantiate(g, &o, &x, &e), &e);
    return x;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static const char LOST[] =
    "; a running graph cannot be stopped, so the exec's CUDA context is "
    "lost: end the process to free the device";

/* The wait gives up after the timeout, naming the loop at its position;
 * the exec is lost: later calls refuse it without touching the driver,
 * and destroying it calls nothing that would wait for the running graph. */
static void timeout_reports_a_loop_that_never_ends(void **state)
{
    (void)state;
    fake_reset();
    F.runaway = 1;
    cudag_graph *g = load(RUNAWAY);
    cudag_exec *x = instantiate(g, 50);
    cudag_error e;
    tok(cudag_exec_launch(x, 2, &e), &e);
    assert_true(F.busy);
    double t0 = now_ms();
    assert_int_equal(cudag_exec_sync(x, &e), CUDAG_ETIMEOUT);
    double waited = now_ms() - t0;
    assert_true(waited >= 50 && waited < 5000);
    assert_int_equal(e.code, CUDAG_ETIMEOUT);
    assert_string_equal(e.file, "t.yaml");
    assert_int_equal(e.line, 10);
    assert_int_equal(e.column, 3);
    char want[1024];
    snprintf(want, sizeof want,
             "graph 't' has not finished after 50 ms: its while node may "
             "still be looping (the driver cannot tell which node runs): "
             "'spin' (t.yaml:10:3)%s",
             LOST);
    assert_string_equal(e.message, want);
    assert_int_equal(F.busy_waits, 0);
    assert_true(x->lost);
    /* Every later call refuses the lost exec. */
    long calls = F.calls;
    assert_int_equal(cudag_exec_launch(x, 1, &e), CUDAG_ESTATE);
    assert_string_equal(e.message,
                        "cudag_exec_launch: the exec is lost: a replay of "
                        "graph 't' ran past its 50 ms timeout and cannot be "
                        "stopped; end the process to free the device");
    int it;
    assert_int_equal(cudag_exec_read(x, "it", &it, sizeof it, &e),
                     CUDAG_ESTATE);
    assert_int_equal(cudag_exec_sync(x, &e), CUDAG_ESTATE);
    float ms[2];
    assert_int_equal(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 0, 2, ms, &e),
                     CUDAG_ESTATE);
    assert_int_equal(cudag_exec_set_condition(x, "more", 0, &e),
                     CUDAG_ESTATE);
    assert_int_equal(F.calls, calls);
    cudag_exec_destroy(x);
    assert_int_equal(F.busy_waits, 0);
    cudag_graph_destroy(g);
    fake_reset();
}

/* A timeout changes nothing for replays that end: the waits poll, copies
 * and timings work, and destroying the exec releases everything. */
static void timeout_lets_a_loop_that_ends_finish(void **state)
{
    (void)state;
    fake_reset();
    F.runaway = 1;
    cudag_graph *g = load(ENDS);
    cudag_exec *x = instantiate(g, 1000);
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    tok(cudag_exec_sync(x, &e), &e);
    int it = 0;
    tok(cudag_exec_read(x, "it", &it, sizeof it, &e), &e);
    assert_int_equal(it, 5);
    float ms[3];
    tok(cudag_exec_time(x, CUDAG_REPLAY_GRAPH, 1, 3, ms, &e), &e);
    tok(cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 1, 3, ms, &e), &e);
    tok(cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 1, 3, ms, &e), &e);
    assert_false(F.busy);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Every while node of the tree is named, bodies included, in the tree's
 * order; the timings give up the same way. */
static void timeout_names_every_while_node(void **state)
{
    (void)state;
    fake_reset();
    F.runaway = 1;
    cudag_graph *g = load(TWO);
    cudag_exec *x = instantiate(g, 20);
    cudag_error e;
    float ms[4];
    assert_int_equal(cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 1, 4,
                                                  ms, &e),
                     CUDAG_ETIMEOUT);
    char want[1024];
    snprintf(want, sizeof want,
             "graph 't' has not finished after 20 ms: one of its while nodes "
             "may still be looping (the driver cannot tell which node runs): "
             "'outer' (t.yaml:11:3), 'check.then.inner' (t.yaml:20:7)%s",
             LOST);
    assert_string_equal(e.message, want);
    assert_int_equal(e.line, 11);
    cudag_exec_destroy(x);
    assert_int_equal(F.busy_waits, 0);
    cudag_graph_destroy(g);
    fake_reset();
}

/* A graph without while nodes that does not finish has a kernel that never
 * returns; copies wait (and give up) before they copy. */
static void timeout_without_a_loop_blames_a_kernel(void **state)
{
    (void)state;
    fake_reset();
    cudag_graph *g = load(HEAD "nodes:\n  reset: {memset: it, value: 0}\n");
    cudag_exec *x = instantiate(g, 10);
    cudag_error e;
    tok(cudag_exec_launch(x, 1, &e), &e);
    F.busy = 1;     /* as if a kernel never returned */
    int it;
    assert_int_equal(cudag_exec_read(x, "it", &it, sizeof it, &e),
                     CUDAG_ETIMEOUT);
    char want[1024];
    snprintf(want, sizeof want,
             "graph 't' has not finished after 10 ms: it has no while node, "
             "so a kernel may never return%s",
             LOST);
    assert_string_equal(e.message, want);
    assert_int_equal(e.line, 0);
    cudag_exec_destroy(x);
    assert_int_equal(F.busy_waits, 0);
    cudag_graph_destroy(g);
    fake_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timeout_reports_a_loop_that_never_ends),
        cmocka_unit_test(timeout_lets_a_loop_that_ends_finish),
        cmocka_unit_test(timeout_names_every_while_node),
        cmocka_unit_test(timeout_without_a_loop_blames_a_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
