/* test_gpu_llama_limits.c — what the Llama kernels cannot do is refused,
 * twice over, for three limits (and each attention kernel traps on another's
 * heads, below): a batch of 17 rows, one more than the batch GEMV kernels
 * hold sums for; splits longer (S = 32) than the positions an attention
 * block's shared memory holds (AR = 16); and 16 query heads per kv head,
 * where the attention holds 8.
 *   (a) graphs/llama_decode.yaml (at test_gpu_llama's small shape) refuses
 *       each at load, at its bound in graphs/llama/buffers.yaml, with
 *       CUDAG_ERANGE and the bound's message, before the driver is asked;
 *       the neighbour inside each limit (16 rows; S = 16; 8 heads; and 17
 *       rows with batch 1's kernels, which take any batch) runs a step and
 *       advances pos, so the bound is where the kernels' limit is.
 *   (b) the kernels still trap past each limit where no bound stands in the
 *       way: tests/data/llama/unbounded.yaml launches them straight, without
 *       graphs/llama's variables, and the launch fails with the error a trap
 *       gives; the neighbour inside the limit runs.
 * A failed launch leaves the process's context unusable, so every launch
 * runs in a process of its own (tchild), forked before anything touches the
 * driver; the child reports a line through a pipe and the parent asserts on
 * it.  Exits 77 without a device, like every gpu suite. */
#include "gpu_common.h"

#include <sys/wait.h>

static const char *const shape[] = {"L=2", "H=256", "F=512", "V=1000", "CTX=1024"};

#define DECODE "graphs/llama_decode.yaml"
#define UNBOUNDED "tests/data/llama/unbounded.yaml"

/* One launch: a graph file and the NULL-terminated defines it runs with. */
typedef struct launch {
    const char *file;
    const char *const *defines;
} launch;

/* The defines: for the decode graph the shape's, then extra's. */
static void defines_for(const char *file, const char *const *extra,
                        const char *d[16])
{
    size_t n = 0;
    for (; strcmp(file, DECODE) == 0 && n < sizeof shape / sizeof shape[0]; n++)
        d[n] = shape[n];
    for (size_t i = 0; extra[i] && n + 1 < 16; i++)
        d[n++] = extra[i];
    d[n] = NULL;
}

/* In the child: the graph launched once under l's defines, and a line for
 * the parent in out: "ran pos=N" or "failed STATUS: MESSAGE".  No cmocka
 * assertion here: a failure would unwind into the child's copy of the test
 * runner. */
static void one_launch(const launch *l, char *out, size_t cap)
{
    gpu_require();
    const char *d[16];
    defines_for(l->file, l->defines, d);
    cudag_options o = topts(NULL, d);
    cudag_graph *g = NULL;
    cudag_exec *x = NULL;
    cudag_error e;
    int rc = cudag_load_file(tsrc(l->file), &o, &g, &e);
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

/* tchild's function: one_launch of the launch at arg. */
static void launch_child(void *arg, char *out, size_t cap)
{
    one_launch(arg, out, cap);
}

/* The launch runs: the decode step advances pos to 1; the unbounded graph,
 * which has no argmax, leaves it at 0. */
static void expect_runs(const char *file, const char *const *extra,
                        const char *what)
{
    char out[4096];
    launch l = {file, extra};
    tchild(launch_child, &l, out, sizeof out);
    print_message("%s: %s\n", what, out);
    assert_string_equal(out, strcmp(file, DECODE) == 0 ? "ran pos=1"
                                                       : "ran pos=0");
}

/* The launch fails with the error a trap gives (the driver's unspecified
 * launch failure; an illegal instruction on drivers that name it so), named
 * in the error. */
static void expect_traps(const char *const *extra, const char *what)
{
    char out[4096];
    launch l = {UNBOUNDED, extra};
    tchild(launch_child, &l, out, sizeof out);
    print_message("%s: %s\n", what, out);
    assert_true(strncmp(out, "failed ", 7) == 0);
    assert_true(strstr(out, "CUDA_ERROR_LAUNCH_FAILED") ||
                strstr(out, "CUDA_ERROR_ILLEGAL_INSTRUCTION"));
}

/* The decode graph under extra is refused at load (no driver involved: in
 * this process) at graphs/llama/buffers.yaml:LINE:COL with `message`. */
static void expect_refused(const char *const *extra, int line, int col,
                           const char *message)
{
    const char *d[16];
    defines_for(DECODE, extra, d);
    cudag_options o = topts(NULL, d);
    cudag_graph *g = NULL;
    cudag_error e;
    assert_int_equal(cudag_load_file(tsrc(DECODE), &o, &g, &e), CUDAG_ERANGE);
    assert_null(g);
    print_message("refused at load: %s:%d:%d: %s\n", e.file, e.line, e.column,
                  e.message);
    assert_string_equal(e.file, tsrc("graphs/llama/buffers.yaml"));
    assert_int_equal(e.line, line);
    assert_int_equal(e.column, col);
    assert_string_equal(e.message, message);
}

static void batch_of_16_runs_17_is_refused_and_traps(void **state)
{
    (void)state;
    expect_runs(DECODE, (const char *const[]){"B=16", NULL},
                "batch of 16, batch kernels");
    expect_refused((const char *const[]){"B=17", NULL}, 51, 41,
                   "BK = B*max(KB, KR % 2) = 17 is above its max 16 (from -D "
                   "B=17)");
    /* Batch 1's kernels run any batch a row at a time. */
    expect_runs(DECODE, (const char *const[]){"B=17", "KB=0", "KR=0", NULL},
                "batch of 17, batch 1's kernels");
    expect_runs(UNBOUNDED, (const char *const[]){"B=16", NULL},
                "unbounded: batch kernel, 16 rows");
    expect_traps((const char *const[]){"B=17", NULL},
                 "unbounded: batch kernel, 17 rows");
}

static void attention_room_below_s_is_refused_and_traps(void **state)
{
    (void)state;
    /* AR=16: the node's shared memory holds 16 positions. */
    expect_runs(DECODE, (const char *const[]){"AR=16", "S=16", NULL},
                "attention: room for 16 positions, splits of at least 16");
    expect_refused((const char *const[]){"AR=16", "S=32", NULL}, 34, 44,
                   "S = 32 is above its max min(256, AR - AR % 16) = 16 (from "
                   "-D S=32 and -D AR=16)");
    expect_runs(UNBOUNDED, (const char *const[]){"AR=16", "S=16", NULL},
                "unbounded: room for 16 positions, splits of at least 16");
    expect_traps((const char *const[]){"AR=16", "S=32", NULL},
                 "unbounded: room for 16 positions, splits of at least 32");
}

static void attention_of_16_heads_per_kv_head_is_refused_and_traps(void **state)
{
    (void)state;
    expect_runs(DECODE, (const char *const[]){"NH=8", "NKV=1", "HD=32", NULL},
                "attention: 8 query heads per kv head");
    expect_refused((const char *const[]){"NH=16", "NKV=1", "HD=32", NULL}, 20,
                   34,
                   "NH = 16 is above its max 8*NKV = 8 (from -D NH=16 and -D "
                   "NKV=1)");
    expect_runs(UNBOUNDED, (const char *const[]){"NH=8", "NKV=1", "HD=32", NULL},
                "unbounded: 8 query heads per kv head");
    expect_traps((const char *const[]){"NH=16", "NKV=1", "HD=32", NULL},
                 "unbounded: 16 query heads per kv head");
}

/* Heads of 96 (12 chunks a row) take the odd heads' attention kernel, which
 * traps on heads of 64, and the other two trap on heads of 96: a graph that
 * picks wrong fails at replay instead of mixing rows in its shuffles.  The
 * two compiled for heads of 64 alone (AK 3, 4) run there and trap on heads
 * of 32 and 128, which the others take; batch 1's compiled for heads of 128
 * alone (AK 5) runs on those and traps on heads of 64. */
static void attention_kernels_trap_on_each_others_heads(void **state)
{
    (void)state;
    expect_runs(DECODE, (const char *const[]){"NH=4", "NKV=2", "HD=96", NULL},
                "attention: heads of 96, the graph's pick");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=96", NULL},
                "unbounded: heads of 96, llama_attn_odd_bf16");
    expect_traps((const char *const[]){"HD=96", "AK=0", NULL},
                 "unbounded: heads of 96, llama_attn_bf16");
    expect_traps((const char *const[]){"HD=96", "AK=1", NULL},
                 "unbounded: heads of 96, llama_attn_batch_bf16");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=64", NULL},
                "unbounded: heads of 64, llama_attn_bf16");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=64", "AK=1", NULL},
                "unbounded: heads of 64, llama_attn_batch_bf16");
    expect_traps((const char *const[]){"HD=64", "AK=2", NULL},
                 "unbounded: heads of 64, llama_attn_odd_bf16");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=64", "AK=3", NULL},
                "unbounded: heads of 64, llama_attn64_bf16");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=64", "AK=4", NULL},
                "unbounded: heads of 64, llama_attn_batch64_bf16");
    expect_traps((const char *const[]){"HD=32", "AK=3", NULL},
                 "unbounded: heads of 32, llama_attn64_bf16");
    expect_traps((const char *const[]){"HD=128", "AK=4", NULL},
                 "unbounded: heads of 128, llama_attn_batch64_bf16");
    expect_runs(UNBOUNDED, (const char *const[]){"HD=128", "AK=5", NULL},
                "unbounded: heads of 128, llama_attn128_bf16");
    expect_traps((const char *const[]){"HD=64", "AK=5", NULL},
                 "unbounded: heads of 64, llama_attn128_bf16");
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
        cmocka_unit_test(batch_of_16_runs_17_is_refused_and_traps),
        cmocka_unit_test(attention_room_below_s_is_refused_and_traps),
        cmocka_unit_test(attention_of_16_heads_per_kv_head_is_refused_and_traps),
        cmocka_unit_test(attention_kernels_trap_on_each_others_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
