/* test_gpu_timeout.c — a while loop that never ends, on a real GPU: its
 * body (one thread counting in i32 towards k = 3000000000) never clears the
 * condition.  With a timeout, `cudag run --timeout` and cudag_exec_sync
 * give up, name the loop at its position, say that the context is lost,
 * and exit with status 6 (the CLI) or return CUDAG_ETIMEOUT (the library,
 * which then refuses the lost exec and destroys it without waiting).  Each
 * runs in a process of its own, started with exec (a child forked from a
 * process that initialised CUDA could not use it): the context is lost
 * after, and the test checks that the process still ends by itself within
 * a minute of the timeout (the driver tears the runaway down at exit).
 * The loop's body is a single thread, so the GPU is busy but barely
 * loaded until then. */
#include "gpu_common.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static char self[4096];         /* this program, for the child process */

/* 'spin' at 9:3 of the file. */
static const char runaway_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "buffers:\n"
    "  it: { type: i32, count: 1 }\n"
    "conditions:\n"
    "  more: { default: 1 }\n"
    "nodes:\n"
    "  reset: { memset: it, value: 0 }\n"
    "  spin:\n"
    "    while: more\n"
    "    after: reset\n"
    "    body:\n"
    "      next: { kernel: cond_count_i32, grid: 1, block: 32,\n"
    "              args: [it, 3000000000, more] }\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs argv with stderr into errpath; waits at most limit_s for it to end
 * (else kills it and fails).  Returns its exit status; *took its time. */
static int run_child(char *const argv[], const char *errpath, double limit_s,
                     double *took)
{
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(errpath, "w", stderr) ||
            !freopen("/dev/null", "w", stdout))
            _exit(120);
        execv(argv[0], argv);
        _exit(121);
    }
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        assert_true(w >= 0);
        if (w == pid)
            break;
        if (now_s() - t0 > limit_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fail_msg("%s did not end within %.0f s", argv[0], limit_s);
        }
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
    *took = now_s() - t0;
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The library's report for runaway.yaml in directory dir with a 1 s
 * timeout, from its first line's text on. */
static void expect_report(const char *err, const char *file)
{
    char want[2048];
    snprintf(want, sizeof want,
             "%s:9:3: error: graph 'runaway' has not finished after 1000 ms: "
             "its while node may still be looping (the driver cannot tell "
             "which node runs): 'spin' (%s:9:3); a running graph cannot be "
             "stopped, so the exec's CUDA context is lost: end the process "
             "to free the device",
             file, file);
    if (!strstr(err, want))
        fail_msg("expected\n%s\nin\n%s", want, err);
}

/* `cudag run --timeout 1` on the runaway loop: status 6 and the report. */
static void cli_run_timeout_ends_a_runaway_loop(void **state)
{
    (void)state;
    const char *dir = tmkdir("gpu-timeout");
    twrite(dir, "runaway.yaml", runaway_yaml);
    char file[4200], errpath[4200];
    snprintf(file, sizeof file, "%s/runaway.yaml", dir);
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    char idir[4200];
    snprintf(idir, sizeof idir, "%s", gpu_kernels(""));
    char *argv[] = {(char *)getenv("CUDAG_EXE"), "run", "--timeout", "1",
                    "-I", idir, file, NULL};
    assert_non_null(argv[0]);
    double took;
    int status = run_child(argv, errpath, 90, &took);
    const char *err = slurp(errpath);
    printf("# cudag run --timeout 1: status %d after %.2f s\n", status, took);
    if (status != 6)
        fail_msg("status %d, stderr:\n%s", status, err);
    expect_report(err, file);
    assert_true(took >= 1.0);
    trm_tree(dir);
}

/* The C API in a child process (below): CUDAG_ETIMEOUT, then the lost exec
 * refused and destroyed without waiting; the child exits 0 when all held. */
static void api_sync_timeout_returns_an_error(void **state)
{
    (void)state;
    const char *dir = tmkdir("gpu-timeout-api");
    twrite(dir, "runaway.yaml", runaway_yaml);
    char file[4200], errpath[4200];
    snprintf(file, sizeof file, "%s/runaway.yaml", dir);
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    char *argv[] = {self, "--api-child", file, NULL};
    double took;
    int status = run_child(argv, errpath, 90, &took);
    const char *err = slurp(errpath);
    printf("# cudag_exec_sync with a 1 s timeout: child status %d after "
           "%.2f s\n",
           status, took);
    if (status != 0)
        fail_msg("child status %d, stderr:\n%s", status, err);
    expect_report(err, file);
    trm_tree(dir);
}

/* The child: prints the error (as the CLI would) and exits 0 only when the
 * library behaved: ETIMEOUT after at least the timeout, the exec refused
 * afterwards, destroy returning at once. */
static int api_child(const char *file)
{
    tdiag d;
    cudag_options o = topts(&d, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    if (cudag_load_file(file, &o, &g, &e) != CUDAG_OK) {
        fprintf(stderr, "load: %s\n%s", e.message, d.text);
        return 2;
    }
    cudag_exec_options xo;
    memset(&xo, 0, sizeof xo);
    xo.size = sizeof xo;
    xo.timeout_ms = 1000;
    cudag_exec *x = NULL;
    if (cudag_instantiate(g, &xo, &x, &e) != CUDAG_OK) {
        fprintf(stderr, "instantiate: %s\n", e.message);
        return 3;
    }
    if (cudag_exec_launch(x, 1, &e) != CUDAG_OK) {
        fprintf(stderr, "launch: %s\n", e.message);
        return 4;
    }
    double t0 = now_s();
    int rc = cudag_exec_sync(x, &e);
    double waited = now_s() - t0;
    char line[2048];
    cudag_error_format(&e, line, sizeof line);
    fprintf(stderr, "%s\n", line);
    if (rc != CUDAG_ETIMEOUT || waited < 1.0 || waited > 30) {
        fprintf(stderr, "sync: %s after %.2f s\n", cudag_status_name(rc),
                waited);
        return 5;
    }
    if (cudag_exec_launch(x, 1, &e) != CUDAG_ESTATE ||
        !strstr(e.message, "the exec is lost")) {
        fprintf(stderr, "launch after the timeout: %s\n", e.message);
        return 6;
    }
    t0 = now_s();
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    if (now_s() - t0 > 5) {
        fprintf(stderr, "destroying the lost exec took %.2f s\n",
                now_s() - t0);
        return 7;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--api-child") == 0)
        return api_child(argv[2]);
    gpu_require();
    if (!realpath("/proc/self/exe", self))
        snprintf(self, sizeof self, "%s", argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cli_run_timeout_ends_a_runaway_loop),
        cmocka_unit_test(api_sync_timeout_returns_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
