/* test_gpu_llama_limits.c — what the Llama kernels cannot do fails the
 * launch instead of leaving garbage: graphs/llama_decode.yaml (at
 * test_gpu_llama's small shape) with a batch of 17 rows, one more than the
 * batch GEMV kernels hold sums for; an attention node whose shared memory
 * holds fewer positions than S; and 16 query heads per kv head, where the
 * attention holds 8.  Each beside its neighbour inside the limit (16 rows,
 * S equal to the positions held, 8 heads), which runs one step and advances
 * pos, so the limit is where the kernels say it is.  A failed launch leaves
 * the process's context unusable, so every case runs in a process of its
 * own (tchild), forked before anything touches the driver; the child reports
 * a line through a pipe and the parent asserts on it.
 * Exits 77 without a device, like every gpu suite. */
#include "gpu_common.h"

#include <sys/wait.h>

static const char *const shape[] = {"L=2", "H=256", "F=512", "V=1000", "CTX=1024"};

/* In the child: one step of the graph under the shape's defines and extra's
 * (NULL-terminated), and a
 * line for the parent in out: "ran pos=N" or "failed STATUS: MESSAGE".
 * No cmocka assertion here: a failure would unwind into the child's copy
 * of the test runner. */
static void one_step(const char *const *extra, char *out, size_t cap)
{
    gpu_require();
    const char *d[16];
    size_t n = 0;
    for (; n < sizeof shape / sizeof shape[0]; n++)
        d[n] = shape[n];
    for (size_t i = 0; extra[i] && n + 1 < sizeof d / sizeof d[0]; i++)
        d[n++] = extra[i];
    d[n] = NULL;
    cudag_options o = topts(NULL, d);
    cudag_graph *g = NULL;
    cudag_exec *x = NULL;
    cudag_error e;
    int rc = cudag_load_file(tsrc("graphs/llama_decode.yaml"), &o, &g, &e);
    if (rc == CUDAG_OK) {
        cudag_exec_options xo = gpu_opts(0, NULL);
        rc = cudag_instantiate(g, &xo, &x, &e);
    }
    if (rc == CUDAG_OK)
        rc = cudag_exec_launch(x, 1, &e);
    if (rc == CUDAG_OK)
        rc = cudag_exec_sync(x, &e);
    int pos = -1;
    if (rc == CUDAG_OK)
        rc = cudag_exec_read(x, "pos", &pos, sizeof pos, &e);
    if (rc == CUDAG_OK) {
        snprintf(out, cap, "ran pos=%d", pos);
    } else {
        char msg[2048];
        cudag_error_format(&e, msg, sizeof msg);
        snprintf(out, cap, "failed %s: %s", cudag_status_name(rc), msg);
    }
    /* After a trap the context is gone, and destroying the exec must still
     * return (what gpu_faults checks for every driver failure). */
    if (x)
        cudag_exec_destroy(x);
    cudag_graph_destroy(g);
}

/* tchild's function: one_step of the NULL-terminated defines at arg. */
static void step_child(void *arg, char *out, size_t cap)
{
    one_step((const char *const *)arg, out, cap);
}

static void expect_runs(const char *const *extra, const char *what)
{
    char out[4096];
    tchild(step_child, (void *)extra, out, sizeof out);
    print_message("%s: %s\n", what, out);
    assert_string_equal(out, "ran pos=1");
}

/* The step fails with the error a trap gives (the driver's unspecified
 * launch failure; an illegal instruction on drivers that name it so), named
 * in the error. */
static void expect_fails(const char *const *extra, const char *what)
{
    char out[4096];
    tchild(step_child, (void *)extra, out, sizeof out);
    print_message("%s: %s\n", what, out);
    assert_true(strncmp(out, "failed ", 7) == 0);
    assert_true(strstr(out, "CUDA_ERROR_LAUNCH_FAILED") ||
                strstr(out, "CUDA_ERROR_ILLEGAL_INSTRUCTION"));
}

static void batch_of_16_runs_17_fails(void **state)
{
    (void)state;
    expect_runs((const char *const[]){"B=16", NULL}, "batch of 16, batch kernels");
    expect_fails((const char *const[]){"B=17", NULL}, "batch of 17, batch kernels");
    /* Batch 1's kernels run any batch a row at a time. */
    expect_runs((const char *const[]){"B=17", "KB=0", "KR=0", NULL},
                "batch of 17, batch 1's kernels");
}

static void attention_room_below_s_fails(void **state)
{
    (void)state;
    /* AR=16: the node's shared memory holds 16 positions. */
    expect_runs((const char *const[]){"AR=16", "S=16", NULL},
                "attention: room for 16 positions, splits of at least 16");
    expect_fails((const char *const[]){"AR=16", "S=32", NULL},
                 "attention: room for 16 positions, splits of at least 32");
}

static void attention_of_16_heads_per_kv_head_fails(void **state)
{
    (void)state;
    expect_runs((const char *const[]){"NH=8", "NKV=1", "HD=32", NULL},
                "attention: 8 query heads per kv head");
    expect_fails((const char *const[]){"NH=16", "NKV=1", "HD=32", NULL},
                 "attention: 16 query heads per kv head");
}

int main(void)
{
    /* The skip rule, in a child too: the parent never touches the driver. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        gpu_require();
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return 1;
    if (WEXITSTATUS(st) == 77)
        return 77; /* the child printed why */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_of_16_runs_17_fails),
        cmocka_unit_test(attention_room_below_s_fails),
        cmocka_unit_test(attention_of_16_heads_per_kv_head_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
