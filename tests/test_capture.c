/* test_capture.c — the nodes only the C API makes, on the CPU over the fake
 * driver: captured work (the program's own launches and memsets recorded
 * into a child graph that runs in the graph's order; a callback that fails,
 * synchronizes or allocates is a precise error with nothing left),
 * event-record and event-wait nodes with the program's events, host-function
 * nodes; the builder's refusals, YAML that cannot name these kinds, how
 * plan and DOT show them, and every driver call failing without a leak. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N 64

/* The program's side: its own memory (bound to the graph's buffers) and
 * what its callbacks saw. */
typedef struct program {
    float x[N], y[N], z[N];
    CUfunction copy;            /* the fake's copy_f32 */
    int mode;                   /* what the capture callback does */
    int captured, host_calls;
    float seen_y0;              /* y[0] when the host node ran */
} program;

enum { WORK, FAIL, SYNC, ALLOC };

/* Records memset z = 7, then copy y → z, on the stream it is given, with
 * the fake driver standing for the program's own libcuda. */
static int capture_cb(void *user, void *stream)
{
    program *p = user;
    p->captured++;
    CUstream s = stream;
    if (p->mode == FAIL)
        return 5;
    if (p->mode == SYNC)
        (void)fake_table.cuStreamSynchronize(s);
    if (p->mode == ALLOC) {
        CUdeviceptr d;
        (void)fake_table.cuMemAlloc(&d, 64);
    }
    unsigned seven;
    float f = 7.0f;
    memcpy(&seven, &f, 4);
    if (fake_table.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p->z, seven, N,
                                    s) != CUDA_SUCCESS)
        return 1;
    CUdeviceptr yp = (CUdeviceptr)(uintptr_t)p->y, zp = (CUdeviceptr)(uintptr_t)p->z;
    int64_t n = N;
    void *args[] = {&yp, &zp, &n};
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 64, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = s;
    return fake_table.cuLaunchKernelEx(&cfg, p->copy, args, NULL) ==
                   CUDA_SUCCESS
               ? 0
               : 2;
}

static void host_cb(void *user)
{
    program *p = user;
    p->host_calls++;
    p->seen_y0 = p->y[0];
}

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};

/* scale (y = 2x) -> cap (z = 7; z = y) -> host; scale -> rec(ev_a);
 * wait(ev_b) -> cap.  x, y, z are the program's memory. */
static cudag_graph *program_graph(program *p, CUevent ev_a, CUevent ev_b,
                                  cudag_edge_kind into_capture)
{
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("prog", &g, &e), &e);
    tok(cudag_add_module(g, "m", "/dev/null", &e), &e);
    tok(cudag_add_signature(g, "scale_f32", "m", NULL, P_SCALE, 4, 1, &e), &e);
    const char *names[] = {"x", "y", "z"};
    float *mem[] = {p->x, p->y, p->z};
    for (int i = 0; i < 3; i++) {
        tok(cudag_add_buffer(g, names[i], CUDAG_TYPE_F32, N, NULL, &e), &e);
        tok(cudag_bind_buffer(g, names[i], (uint64_t)(uintptr_t)mem[i], &e),
            &e);
    }
    cudag_arg args[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                        cudag_arg_float(2.0), cudag_arg_int(N)};
    tok(cudag_add_kernel(g, "scale", "scale_f32", (cudag_dim3){1, 1, 1},
                         (cudag_dim3){64, 1, 1}, 0, args, 4, &e),
        &e);
    tok(cudag_add_capture(g, "cap", capture_cb, p, &e), &e);
    tok(cudag_add_host(g, "host", host_cb, p, &e), &e);
    tok(cudag_add_event_record(g, "rec", ev_a, &e), &e);
    tok(cudag_add_event_wait(g, "wait", ev_b, &e), &e);
    tok(cudag_add_edge(g, "scale", "cap", into_capture, &e), &e);
    tok(cudag_add_edge(g, "cap", "host", CUDAG_EDGE_FULL, &e), &e);
    tok(cudag_add_edge(g, "scale", "rec", CUDAG_EDGE_FULL, &e), &e);
    tok(cudag_add_edge(g, "wait", "cap", CUDAG_EDGE_FULL, &e), &e);
    return g;
}

static void program_init(program *p)
{
    memset(p, 0, sizeof *p);
    uint64_t seed = tseed();
    for (int i = 0; i < N; i++) {
        p->x[i] = (float)trand(&seed, -1, 1);
        p->y[i] = p->z[i] = NAN;
    }
    CUkernel k = NULL;
    assert_int_equal(fake_table.cuLibraryGetKernel(&k, NULL, "copy_f32"),
                     CUDA_SUCCESS);
    assert_int_equal(fake_table.cuKernelGetFunction(&p->copy, k),
                     CUDA_SUCCESS);
}

static void capture_runs_the_programs_work_in_graph_order(void **state)
{
    (void)state;
    fake_reset();
    program p;
    program_init(&p);
    CUevent ev_a = NULL, ev_b = NULL;
    fake_table.cuEventCreate(&ev_a, 0);
    fake_table.cuEventCreate(&ev_b, 0);
    cudag_graph *g = program_graph(&p, ev_a, ev_b, CUDAG_EDGE_FULL);
    cudag_error e;
    tok(cudag_check(g, NULL, &e), &e);
    cudag_exec *x = NULL;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    /* Recorded once, at instantiate; nothing ran yet. */
    assert_int_equal(p.captured, 1);
    assert_true(isnan(p.z[0]));
    fake_graph *fg = F.last_graph;
    assert_int_equal(fg->nodes[1]->type, CU_GRAPH_NODE_TYPE_GRAPH);
    assert_int_equal(fg->nodes[1]->child->nnodes, 2);
    assert_int_equal(fg->nodes[2]->type, CU_GRAPH_NODE_TYPE_HOST);
    assert_int_equal(fg->nodes[3]->type, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    assert_int_equal(fg->nodes[4]->type, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    tok(cudag_exec_launch(x, 3, &e), &e);
    /* The captured copy ran after scale (z = y = 2x, not the memset's 7),
     * the host function after it saw y written. */
    for (int i = 0; i < N; i++)
        assert_true(p.z[i] == 2.0f * p.x[i]);
    assert_int_equal(p.host_calls, 3);
    assert_true(p.seen_y0 == 2.0f * p.x[0]);
    assert_int_equal(((long *)(void *)ev_a)[0], 3);   /* recorded */
    assert_int_equal(((long *)(void *)ev_b)[1], 3);   /* waited for */
    assert_int_equal(p.captured, 1);
    /* The kinds are the C API's; nothing to rebind in them. */
    tok(cudag_exec_rebind_buffer(x, "z", (uint64_t)(uintptr_t)p.z, &e), &e);
    cudag_arg a = cudag_arg_int(1);
    assert_int_equal(cudag_exec_set_arg(x, "cap", 0, &a, &e), CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_exec_set_arg: node 'cap' is not a "
                                   "kernel node");
    cudag_exec_destroy(x);
    fake_table.cuEventDestroy(ev_a);
    fake_table.cuEventDestroy(ev_b);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static void capture_plan_and_dot_show_the_c_api_kinds(void **state)
{
    (void)state;
    program p;
    memset(&p, 0, sizeof p);
    int ev[2];
    cudag_graph *g = program_graph(&p, (CUevent)(void *)&ev[0],
                                   (CUevent)(void *)&ev[1], CUDAG_EDGE_FULL);
    cudag_error e;
    tok(cudag_check(g, NULL, &e), &e);
    char *text;
    cudag_plan_info pi;
    tok(cudag_plan(g, &pi, &text, &e), &e);
    tassert_contains(text,
                     "nodes: 5 (1 kernel, 0 memset, 0 memcpy, 0 conditional, "
                     "0 gemm, 1 capture, 1 event_record, 1 event_wait, 1 "
                     "host, 0 graph)\n",
                     __FILE__, __LINE__);
    assert_int_equal(pi.capture_nodes + pi.event_record_nodes +
                         pi.event_wait_nodes + pi.host_nodes,
                     4);
    cudag_free(text);
    tok(cudag_dot(g, 0, &text, &e), &e);
    tassert_contains(text, "label=\"cap\\ncaptured work\", shape=component",
                     __FILE__, __LINE__);
    tassert_contains(text, "legend_host [label=\"host function\"", __FILE__,
                     __LINE__);
    cudag_free(text);
    cudag_graph_destroy(g);
    /* A graph without them does not mention them. */
    tok(cudag_graph_create("k", &g, &e), &e);
    tok(cudag_check(g, NULL, &e), &e);
    tok(cudag_dot(g, 0, &text, &e), &e);
    assert_null(strstr(text, "legend_capture"));
    cudag_free(text);
    tok(cudag_plan(g, NULL, &text, &e), &e);
    tassert_contains(text,
                     "nodes: 0 (0 kernel, 0 memset, 0 memcpy, 0 conditional, "
                     "0 gemm, 0 graph)\n",
                     __FILE__, __LINE__);
    cudag_free(text);
    cudag_graph_destroy(g);
}

static void capture_programmatic_edge_is_built_full(void **state)
{
    (void)state;
    fake_reset();
    program p;
    program_init(&p);
    int ev[2] = {0};
    cudag_graph *g = program_graph(&p, (CUevent)(void *)&ev[0],
                                   (CUevent)(void *)&ev[1],
                                   CUDAG_EDGE_PROGRAMMATIC);
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_error e;
    tok(cudag_check(g, &o, &e), &e);
    /* (z is the callback's alone: the checker sees no node use it.) */
    assert_string_equal(td.text, "warning: programmatic edge scale -> cap "
                                 "built as a full edge: 'cap' is a capture "
                                 "node (its work runs in a child graph, which "
                                 "has no programmatic port)\n"
                                 "warning: buffer 'z' is never used\n");
    cudag_exec *x;
    tok(cudag_instantiate(g, NULL, &x, &e), &e);
    for (int i = 0; i < F.last_graph->nedges; i++)
        assert_int_equal(F.last_graph->edges[i].ed.type, 0);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    /* Into an event or host node it is an error, as into a memset. */
    g = program_graph(&p, (CUevent)(void *)&ev[0], (CUevent)(void *)&ev[1],
                      CUDAG_EDGE_FULL);
    tok(cudag_add_edge(g, "scale", "host", CUDAG_EDGE_LAUNCH_ORDER, &e), &e);
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_EEDGE);
    assert_string_equal(e.message, "launch_order edge scale -> host: both "
                                   "ends must be kernel nodes ('host' is a "
                                   "host node)");
    cudag_graph_destroy(g);
}

/* Instantiating with the callback in `mode` fails with `want`, and leaves
 * no driver object, capture or allocation behind. */
static void expect_capture_error(int mode, int rc_want, const char *want)
{
    fake_reset();
    program p;
    program_init(&p);
    p.mode = mode;
    int ev[2] = {0};
    cudag_graph *g = program_graph(&p, (CUevent)(void *)&ev[0],
                                   (CUevent)(void *)&ev[1], CUDAG_EDGE_FULL);
    cudag_error e;
    tok(cudag_check(g, NULL, &e), &e);
    long live = cudag__alloc_live();
    cudag_exec *x = (cudag_exec *)1;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), rc_want);
    assert_null(x);
    assert_string_equal(e.message, want);
    assert_int_equal(fake_live(), 0);
    assert_null(F.capture_stream);
    assert_int_equal(cudag__alloc_live(), live);
    cudag_graph_destroy(g);
}

static void capture_callback_failures_are_precise(void **state)
{
    (void)state;
    expect_capture_error(FAIL, CUDAG_EINVAL,
                         "node 'cap': the capture callback returned 5");
    /* A synchronize or an allocation breaks the capture, so the memset
     * after it fails too: the capture's reason first, the callback's
     * after. */
    static const char broken[] =
        "cuStreamEndCapture: the work of node 'cap' could not be captured: "
        "something in it synchronized or allocated (a stream or device "
        "synchronize, a blocking copy, cuMemAlloc, an event query), which a "
        "capture cannot hold (then the capture callback returned 1): "
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (fake driver error)";
    expect_capture_error(SYNC, CUDAG_ECUDA, broken);
    expect_capture_error(ALLOC, CUDAG_ECUDA, broken);
}

static void capture_builder_refuses_what_it_can_see(void **state)
{
    (void)state;
    cudag_graph *g;
    cudag_error e;
    tok(cudag_graph_create("b", &g, &e), &e);
    assert_int_equal(cudag_add_capture(g, "c", NULL, NULL, &e), CUDAG_EINVAL);
    assert_string_equal(e.message,
                        "cudag_add_capture: node 'c': fn is NULL");
    assert_int_equal(cudag_add_host(g, "h", NULL, NULL, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_add_event_record(g, "r", NULL, &e), CUDAG_EINVAL);
    assert_string_equal(e.message,
                        "cudag_add_event_record: node 'r': event is NULL");
    assert_int_equal(cudag_add_event_wait(g, "w", NULL, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_add_capture(NULL, "c", capture_cb, NULL, &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_add_host(g, "bad name", host_cb, NULL, &e),
                     CUDAG_EINVAL);
    tok(cudag_add_host(g, "h", host_cb, NULL, &e), &e);
    assert_int_equal(cudag_add_capture(g, "h", capture_cb, NULL, &e),
                     CUDAG_EDUP);
    assert_int_equal(cudag_graph_node_count(g), 1);
    cudag_node_kind k;
    assert_int_equal(cudag_graph_node_kind(g, 0, &k), CUDAG_OK);
    assert_int_equal(k, CUDAG_NODE_HOST);
    assert_string_equal(cudag_node_kind_name(k), "host");
    cudag_graph_destroy(g);
    /* YAML cannot name them: they hold the program's pointers. */
    tdiag td;
    assert_int_equal(tload("cudag: 1\nbuffers: {x: {type: f32, count: 1}}\n"
                           "nodes:\n  c: {capture: f}\n",
                           &td, &g),
                     CUDAG_EKEY);
    assert_diag_contains(&td, "t.yaml:4:16: error: node 'c.capture' must be "
                              "a mapping (a kernel, memset, memcpy, while, "
                              "if, switch, gemm or graph node, or a group of "
                              "nodes), not a scalar");
}

/* Instantiate, launch twice, rebind; the calls made before destroying. */
static long scenario(const cudag_graph *g, program *p, int *rc, char *msg,
                     size_t cap)
{
    cudag_exec *x = NULL;
    cudag_error e;
    *rc = cudag_instantiate(g, NULL, &x, &e);
    if (*rc == CUDAG_OK)
        *rc = cudag_exec_launch(x, 2, &e);
    if (*rc == CUDAG_OK)
        *rc = cudag_exec_rebind_buffer(x, "y", (uint64_t)(uintptr_t)p->y, &e);
    if (*rc != CUDAG_OK)
        snprintf(msg, cap, "%s", e.message);
    long calls = F.calls;
    cudag_exec_destroy(x);
    return calls;
}

static void capture_survives_every_driver_failure(void **state)
{
    (void)state;
    int failures = 0;
    for (long n = 1;; n++) {
        fake_reset();
        program p;
        program_init(&p);
        CUevent ev_a = NULL, ev_b = NULL;
        fake_table.cuEventCreate(&ev_a, 0);
        fake_table.cuEventCreate(&ev_b, 0);
        cudag_graph *g = program_graph(&p, ev_a, ev_b, CUDAG_EDGE_FULL);
        cudag_error e;
        tok(cudag_check(g, NULL, &e), &e);
        fake_fail_at(n);
        int rc;
        char msg[1024] = "";
        long before = scenario(g, &p, &rc, msg, sizeof msg);
        const char *call = F.failed;
        F.countdown = -1;
        fake_table.cuEventDestroy(ev_a);
        fake_table.cuEventDestroy(ev_b);
        if (call && n <= before) {
            /* The program's own calls inside the callback fail as the
             * callback says; the library's are named. */
            bool program_call = strcmp(call, "cuMemsetD32Async") == 0 ||
                                strcmp(call, "cuLaunchKernelEx") == 0;
            if (rc != CUDAG_OK) {
                failures++;
                if (program_call)
                    assert_non_null(strstr(msg, "the capture callback "
                                                "returned"));
                else if (!strstr(msg, call))
                    print_error("call %ld (%s): message '%s'\n", n, call, msg);
                assert_true(program_call || strstr(msg, call));
            }
            fake_expect_clean(n);
        }
        cudag_graph_destroy(g);
        if (!call)
            break;
        assert_true(n < 100000);
    }
    print_message("# %d failing calls, each reported and cleaned up\n",
                  failures);
    assert_true(failures > 15);
    fake_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_runs_the_programs_work_in_graph_order),
        cmocka_unit_test(capture_plan_and_dot_show_the_c_api_kinds),
        cmocka_unit_test(capture_programmatic_edge_is_built_full),
        cmocka_unit_test(capture_callback_failures_are_precise),
        cmocka_unit_test(capture_builder_refuses_what_it_can_see),
        cmocka_unit_test(capture_survives_every_driver_failure),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fake_finish();
    return rc;
}
