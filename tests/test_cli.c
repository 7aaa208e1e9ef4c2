/* test_cli.c — the cudag tool as a user runs it: exit statuses, messages on
 * standard error with the source line and a caret, DOT and plan output,
 * defines and include directories from the command line. */
#include "common.h"

#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct result {
    int status;
    char out[1 << 17];
    char err[1 << 16];
} result;

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
    unlink(path);
}

/* Runs the cudag tool with argv (NULL-terminated, without the program) in
 * the source tree, with `input` (or nothing) on its standard input,
 * capturing both outputs. */
static result *run_in(const char *input, const char *const *args)
{
    static result r;
    const char *exe = getenv("CUDAG_EXE");
    assert_non_null(exe);
    char *argv[64];
    size_t n = 0;
    argv[n++] = (char *)exe;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    char out[] = "/tmp/cudag-cli-out-XXXXXX", err[] = "/tmp/cudag-cli-err-XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err);
    assert_true(fo >= 0 && fe >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fe, STDERR_FILENO);
    char in[] = "/tmp/cudag-cli-in-XXXXXX";
    int fi = mkstemp(in);
    assert_true(fi >= 0);
    size_t inlen = input ? strlen(input) : 0;
    assert_int_equal(write(fi, input ? input : "", inlen), (ssize_t)inlen);
    assert_int_equal(lseek(fi, 0, SEEK_SET), 0);
    unlink(in);
    posix_spawn_file_actions_adddup2(&fa, fi, STDIN_FILENO);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fo);
    close(fe);
    close(fi);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    r.status = WEXITSTATUS(st);
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    return &r;
}

static result *run(const char *const *args) { return run_in(NULL, args); }

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})
#define RUN_IN(input, ...) run_in(input, (const char *const[]){__VA_ARGS__, NULL})

static int setup(void **state)
{
    (void)state;
    /* Paths in the tests are relative to the source tree, as a user's are. */
    const char *src = getenv("CUDAG_SOURCE_ROOT");
    if (!src || chdir(src) != 0)
        return -1;
    setenv("NO_COLOR", "1", 1);
    return 0;
}

static void cli_version_help_and_usage(void **state)
{
    (void)state;
    result *r = RUN("--version");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "cudag 0.1.0 (graph format 1)\n");
    r = RUN("--help");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Usage: cudag COMMAND"));
    for (const char *const *c = (const char *const[]){"check", "dot", "plan",
                                                      "run", "bench", NULL};
         *c; c++)
        assert_non_null(strstr(r->out, *c));
    /* The list names help and --version too (README's synopsis). */
    assert_non_null(strstr(r->out, "\n  help     print the usage of a command, "
                                   "or this list\n"));
    assert_non_null(strstr(r->out, "'cudag --version'\nprints the version."));
    r = RUN("help", "check");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Usage: cudag check"));
    /* check returns 5 for a file it cannot read, and says so. */
    assert_non_null(strstr(r->out, " 5 a file, include,\n"));
    r = RUN("check", "tests/data/no-such-file.yaml");
    assert_int_equal(r->status, 5);
    r = RUN("check", "--help");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "-D NAME=VALUE"));
    r = RUN("frobnicate");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "unknown command 'frobnicate'"));
    r = run((const char *const[]){NULL});
    assert_int_equal(r->status, 2);
    r = RUN("check");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "no file given"));
    r = RUN("check", "--frob", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "unknown option '--frob'"));
    r = RUN("check", "-D", "N", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "-D takes NAME=VALUE, not 'N'"));
    r = RUN("check", "--max-errors", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    r = RUN("check", "-I");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "option '-I' needs a value"));
}

static void cli_check_good_and_bad_files(void **state)
{
    (void)state;
    result *r = RUN("check", "graphs/fork_join.yaml", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "graphs/fork_join.yaml: ok: 5 nodes, 4 edges, 6 buffers"));
    assert_non_null(strstr(r->out, "graphs/pdl_chain.yaml: ok"));
    r = RUN("check", "-q", "graphs/fork_join.yaml");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "");
    /* A bad file: GCC-style message, the line, a caret under the column. */
    r = RUN("check", "tests/data/bad/node_unknown_kernel.yaml");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err,
        "tests/data/bad/node_unknown_kernel.yaml:11:16: error: unknown kernel "
        "'sacle' (did you mean 'scale'?)\n"
        "    11 |   a: { kernel: sacle, grid: 4, block: 256, args: [x, y, 2.0, 1024] }\n"
        "       |                ^\n"));
    assert_non_null(strstr(r->err, "node_unknown_kernel.yaml: 1 error\n"));
    assert_null(strstr(r->err, "\033["));   /* NO_COLOR */
    /* Good and bad together: every file is checked, the status is 1. */
    r = RUN("check", "tests/data/bad/cycle_three.yaml", "graphs/single.yaml");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "dependency cycle: a -> b -> c -> a"));
    assert_non_null(strstr(r->out, "graphs/single.yaml: ok"));
    r = RUN("check", "no/such/file.yaml");
    assert_int_equal(r->status, 5);
    assert_non_null(strstr(r->err, "cannot read 'no/such/file.yaml': No such file or directory"));
    /* Warnings do not fail a check, unless --Werror. */
    r = RUN("check", "-I", "tests/data/bad", "tests/data/bad/warning_unused_werror.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->err, "warning: buffer 'spare' is never used"));
    assert_non_null(strstr(r->out, "1 warning"));
    r = RUN("check", "--Werror", "tests/data/bad/warning_unused_werror.yaml");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "error: buffer 'spare' is never used"));
}

static void cli_control_bytes_are_not_sent_to_the_terminal(void **state)
{
    (void)state;
    char path[] = "/tmp/cudag-cli-esc-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* An escape sequence in a name would retitle the terminal if echoed. */
    const char text[] = "cudag: 1\nvars:\n  \"a\\e]0;pwned\\a\": 1\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    result *r = RUN("check", path);
    unlink(path);
    assert_int_equal(r->status, 1);
    assert_null(strchr(r->err, '\033'));
    assert_null(strchr(r->err, '\a'));
    assert_non_null(strstr(r->err, "\\x1b]0;pwned\\x07"));
}

/* The column counts characters (cudag.h), so the caret skips one space per
 * character before it, whatever its length in bytes, and keeps tabs. */
static void cli_caret_counts_characters(void **state)
{
    (void)state;
    char path[] = "/tmp/cudag-cli-utf8-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "cudag: 1\nvars: { t: \"\xc3\xa9\t\xe2\x86\x92\", "
                        "n: 1 + nope }\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    result *r = RUN("check", path);
    unlink(path);
    assert_int_equal(r->status, 1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:2:26: error: unknown variable 'nope'\n"
             "     2 | vars: { t: \"\xc3\xa9\t\xe2\x86\x92\", n: 1 + nope }\n"
             "       | %12s \t %10s^\n", path, "", "");
    assert_non_null(strstr(r->err, want));
}

static void cli_defines_change_the_graph(void **state)
{
    (void)state;
    result *r = RUN("plan", "--json", "graphs/repeat.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"nodes\": 41,"));
    r = RUN("plan", "--json", "-D", "DEPTH=64", "-DWIDTH=16", "graphs/repeat.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"nodes\": 81,"));
    assert_non_null(strstr(r->out, "\"programmatic\": 63,"));
    r = RUN("plan", "-D", "DEPHT=3", "graphs/repeat.yaml");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "<command line>:1:1: error: -D DEPHT: the graph "
                                   "has no variable 'DEPHT' (did you mean 'DEPTH'?)"));
    /* A define that is not a number is one mistake: one error, not one per
     * use of the variable. */
    r = RUN("check", "-D", "N=abc", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 1);
    assert_string_equal(r->err, "<command line>:1:3: error: -D N=abc: unknown "
                                "variable 'abc'\n"
                                "graphs/pdl_chain.yaml: 1 error\n");
    /* A define that makes four buffers' count negative is one mistake,
     * reported at the define and naming it. */
    r = RUN("check", "-D", "N=-5", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 1);
    assert_string_equal(r->err, "<command line>:1:3: error: -D N=-5: buffer "
                                "'x' needs a count of at least 1, not -5\n"
                                "graphs/pdl_chain.yaml: 1 error\n");
    /* A mistake in a child graph file that two nodes use: one error, and a
     * note at each use. */
    r = RUN("check", "tests/data/bad/child_error_used_twice.yaml");
    assert_int_equal(r->status, 1);
    const char *one = strstr(r->err, "error: unknown buffer 'nope'");
    assert_non_null(one);
    assert_null(strstr(one + 1, "error: unknown buffer"));
    assert_non_null(strstr(r->err, "child_error_used_twice.yaml:12:15: note: "
                                   "in child graph "
                                   "'tests/data/bad/../inc/child_bad_arg.yaml' "
                                   "of node 'a'\n"));
    assert_non_null(strstr(r->err, "child_error_used_twice.yaml:13:15: note: "
                                   "in child graph "
                                   "'tests/data/bad/../inc/child_bad_arg.yaml' "
                                   "of node 'b'\n"));
    assert_non_null(strstr(r->err, "child_error_used_twice.yaml: 1 error\n"));
    r = RUN("plan", "-D", "DEPTH=0", "graphs/repeat.yaml");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "index -1 is out of range for 'chain' (0..0)"));
}

static void cli_plan_text(void **state)
{
    (void)state;
    result *r = RUN("plan", "graphs/fork_join.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "graph: fork_join\n"));
    assert_non_null(strstr(r->out, "nodes: 5 (5 kernel, 0 memset, 0 memcpy, "
                                   "0 conditional, 0 gemm, 0 graph)\n"));
    assert_non_null(strstr(r->out, "depth: 3\n"));
    assert_non_null(strstr(r->out, "width: 3\n"));
    assert_non_null(strstr(r->out, "level 0: times2 times3 times4\n"));
    assert_non_null(strstr(r->out, "level 2: join\n"));
}

static void cli_dot_output_and_render(void **state)
{
    (void)state;
    result *r = RUN("dot", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 0);
    assert_true(strncmp(r->out, "digraph", 7) == 0);
    assert_non_null(strstr(r->out, "PDL"));
    char dotfile[] = "/tmp/cudag-cli-dot-XXXXXX";
    int fd = mkstemp(dotfile);
    close(fd);
    r = RUN("dot", "-o", dotfile, "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "");
    struct stat st;
    assert_int_equal(stat(dotfile, &st), 0);
    assert_true(st.st_size > 100);
    unlink(dotfile);
    r = RUN("dot", "--render", "/tmp/x.txt", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--render needs a file ending in .svg, .png or .pdf"));
    if (system("command -v dot >/dev/null 2>&1") != 0) {
        print_message("Graphviz 'dot' is not installed: the render check is skipped\n");
        return;
    }
    char dir[] = "/tmp/cudag-cli-svg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char svg[64];
    snprintf(svg, sizeof svg, "%s/g.svg", dir);
    r = RUN("dot", "--render", svg, "graphs/wavefront.yaml");
    assert_int_equal(r->status, 0);
    char head[64] = {0};
    FILE *f = fopen(svg, "r");
    assert_non_null(f);
    assert_true(fread(head, 1, sizeof head - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(head, "<?xml"));
    unlink(svg);
    rmdir(dir);
    r = RUN("dot", "--render", "/nonexistent-dir/x.svg", "graphs/single.yaml");
    assert_int_equal(r->status, 5);
}

/* The sentence run and bench stop with where they cannot run a graph: a
 * library built without the CUDA toolkit never looks for a driver; one
 * built with it finds none on a machine without one. */
#ifdef CUDAG_NO_TOOLKIT
#define CANNOT_RUN "this cudag was built without the CUDA toolkit (no cuda.h), " \
                   "so it checks, draws and plans graphs but runs none: "       \
                   "rebuild it where the toolkit is (meson setup -Dtoolkit=DIR)"
#else
#define CANNOT_RUN "no CUDA driver found (libcuda.so.1): "
#endif

/* True where run and bench stop with CANNOT_RUN. */
static bool cannot_run_here(void)
{
#ifdef CUDAG_NO_TOOLKIT
    return true;
#else
    return access("/usr/lib/x86_64-linux-gnu/libcuda.so.1", F_OK) != 0 &&
           access("/usr/local/nvidia/lib64/libcuda.so.1", F_OK) != 0;
#endif
}

/* The JSON object of `mode` in bench's output, cut at its closing brace
 * (into a static buffer); fails the test where there is none. */
static const char *bench_mode(const char *out, const char *mode)
{
    static char obj[512];
    char key[64];
    snprintf(key, sizeof key, "\"%s\": {", mode);
    const char *p = strstr(out, key);
    assert_non_null(p);
    const char *end = strchr(p, '}');
    assert_non_null(end);
    size_t n = (size_t)(end - p);
    assert_true(n < sizeof obj);
    memcpy(obj, p, n);
    obj[n] = '\0';
    return obj;
}

/* The median of `mode` in bench's JSON. */
static double bench_median(const char *out, const char *mode)
{
    const char *m = bench_mode(out, mode);
    const char *v = strstr(m, "\"median_us\": ");
    assert_non_null(v);
    return atof(v + strlen("\"median_us\": "));
}

/* Where a driver is: bench times modes 3 and 5 each in a process of its
 * own and gets their figures back, from a file, from standard input and
 * for a graph with a loop (no stream modes); a child that fails says why
 * once, and bench exits with its status. */
static void cli_bench_times_modes_3_and_5_alone(void **state)
{
    (void)state;
    if (cannot_run_here()) {
        print_message("no CUDA driver: bench's forked modes are tested on "
                      "the GPU machine\n");
        return;
    }
    static char text[4096];
    FILE *f = fopen("graphs/fork_join.yaml", "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    for (int in = 0; in < 2; in++) {
        result *r = in ? RUN_IN(text, "bench", "--json", "--iters", "20",
                                "--warmup", "2", "--host-repeats", "1", "-")
                       : RUN("bench", "--json", "--gate", "--iters", "20",
                             "--warmup", "2", "--host-repeats", "1",
                             "graphs/fork_join.yaml");
        assert_int_equal(r->status, 0);
        const char *own[] = {"graph_full", "graph_serial"};
        const char *here[] = {"stream", "stream_pdl", "graph"};
        for (int i = 0; i < 2; i++) {
            assert_non_null(strstr(bench_mode(r->out, own[i]),
                                   "\"own_process\": true"));
            assert_true(bench_median(r->out, own[i]) > 0);
        }
        for (int i = 0; i < 3; i++)
            assert_non_null(strstr(bench_mode(r->out, here[i]),
                                   "\"own_process\": false"));
    }
    result *r = RUN("bench", "--json", "--iters", "10", "--warmup", "1",
                    "--host-repeats", "1", "graphs/jacobi.yaml");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"stream\": null"));
    assert_non_null(strstr(bench_mode(r->out, "graph_serial"),
                           "\"own_process\": true"));
    r = RUN("bench", "--device", "1000", "graphs/single.yaml");
    assert_int_not_equal(r->status, 0);
    assert_non_null(strstr(r->err, "device"));
    assert_ptr_equal(strchr(r->err, '\n'), r->err + strlen(r->err) - 1);
}

/* Against the fake driver (python/tests/fake_libcuda.c, whose events time a
 * graph launch as its longest path: 1 µs per node, 1 µs more per full edge),
 * on a programmatic pair s -> u beside a lone t: each mode's figures come
 * from the graph built its way, modes 3 and 5 from processes of their own
 * (full edges 3 µs, as declared 2 µs, one chain 4 µs), from standard input
 * and gated or not; a child that fails says why once, and bench exits with
 * its status. */
static void cli_bench_forks_modes_3_and_5(void **state)
{
    (void)state;
    const char *dir = getenv("CUDAG_FAKE_CUDA_DIR");
    if (!dir) {
        print_message("no fake driver in this build (no CUDA toolkit)\n");
        return;
    }
    const char *old = getenv("LD_LIBRARY_PATH");
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("LD_LIBRARY_PATH", path, 1), 0);
    assert_int_equal(setenv("CUDAG_FAKE_PATH_TIME", "1", 1), 0);
    const char *yaml =
        "cudag: 1\ninclude: cudag_kernels.yaml\nvars: { N: 1024 }\n"
        "buffers:\n"
        "  x: { type: f32, count: N, init: random }\n"
        "  a: { type: f32, count: N }\n  b: { type: f32, count: N }\n"
        "  c: { type: f32, count: N }\n"
        "nodes:\n"
        "  s: { kernel: scale_f32, grid: 4, block: 256, args: [x, a, 2.0, N] }\n"
        "  u: { kernel: add_f32, grid: 4, block: 256, args: [a, x, b, N],\n"
        "       after: {s: programmatic} }\n"
        "  t: { kernel: scale_f32, grid: 4, block: 256, args: [x, c, 3.0, N] }\n";
    for (int gate = 0; gate < 2; gate++) {
        result *r = RUN_IN(yaml, "bench", "--json", gate ? "--gate" : "-q",
                           "--iters", "5", "--warmup", "1", "--host-repeats",
                           "1", "-");
        assert_int_equal(r->status, 0);
        assert_true(bench_median(r->out, "graph_full") == 3.0);
        assert_true(bench_median(r->out, "graph") == 2.0);
        assert_true(bench_median(r->out, "graph_serial") == 4.0);
        assert_non_null(strstr(bench_mode(r->out, "graph_full"),
                               "\"own_process\": true"));
        assert_non_null(strstr(bench_mode(r->out, "graph_serial"),
                               "\"own_process\": true"));
        assert_non_null(strstr(bench_mode(r->out, "graph"),
                               "\"own_process\": false"));
        assert_non_null(strstr(bench_mode(r->out, "stream"),
                               "\"own_process\": false"));
    }
    /* The fake has one device: mode 3's process is the first to look. */
    result *r = RUN("bench", "--device", "1", "graphs/fork_join.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "error: there is no CUDA device 1 (this "
                                "machine has 1)\n");
    assert_string_equal(r->out, "");
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    free(saved);
    unsetenv("CUDAG_FAKE_PATH_TIME");
}

/* Against the fake driver, with the real NVRTC and a compile cache of its
 * own: `cudag run` of the user-kernel example says on its host line that
 * module 'mine' was compiled the first time and read from the cache the
 * second, with its time, and --json says the same per module. */
static void cli_run_says_compiled_or_cache(void **state)
{
    (void)state;
    const char *dir = getenv("CUDAG_FAKE_CUDA_DIR");
    if (!dir) {
        print_message("no fake driver in this build (no CUDA toolkit)\n");
        return;
    }
    char cache[256];
    assert_int_equal(tmkdir_in(cache, sizeof cache, "cli-cache"), 0);
    const char *old = getenv("LD_LIBRARY_PATH");
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("LD_LIBRARY_PATH", path, 1), 0);
    assert_int_equal(setenv("CUDAG_CACHE_DIR", cache, 1), 0);
    result *r = RUN("run", "--iters", "2", "--warmup", "1", "-D", "N=1024",
                    "graphs/user_kernels.yaml");
    if (r->status != 0 && strstr(r->err, "NVRTC")) {
        print_message("skipped: %s", r->err);
    } else {
        assert_int_equal(r->status, 0);
        const char *host = strstr(r->out, "host (ms): parse+check ");
        assert_non_null(host);
        const char *at = strstr(host, " (mine: compiled ");
        assert_non_null(at);
        assert_true(at < strchr(host, '\n'));
        assert_non_null(strstr(at, ")  alloc "));
        r = RUN("run", "--iters", "2", "--warmup", "1", "-D", "N=1024",
                "graphs/user_kernels.yaml");
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, " (mine: cache "));
        r = RUN("run", "--json", "--iters", "2", "--warmup", "1", "-D",
                "N=1024", "graphs/user_kernels.yaml");
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, "\"modules\": [{\"name\": \"mine\", "
                                       "\"origin\": \"cache\", \"load_ms\": "));
        /* A graph of files only: nothing to say on the host line. */
        r = RUN("run", "--iters", "2", "--warmup", "1", "graphs/single.yaml");
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, "host (ms): parse+check "));
        assert_null(strstr(r->out, "compiled"));
    }
    unsetenv("CUDAG_CACHE_DIR");
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    free(saved);
    assert_int_equal(trm_tree(cache), 0);
}

/* Against the fake driver with CUDAG_FAKE_RUNAWAY (a while loop that does
 * not end keeps the stream busy, as a device would): `run --timeout` gives
 * up, names the loop at its position with the source line, says the
 * context is lost and exits with status 6, its own; --json says the same
 * as one object.  Bad values are usage errors, and check refuses it. */
static void cli_run_timeout_reports_a_runaway_loop(void **state)
{
    (void)state;
    result *r = RUN("run", "--timeout", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--timeout takes seconds from 0.001 to "
                                   "4000000, not '0'"));
    r = RUN("run", "--timeout", "1s", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    r = RUN("check", "--timeout", "1", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "option '--timeout' applies to run and "
                                   "bench only"));
    const char *dir = getenv("CUDAG_FAKE_CUDA_DIR");
    if (!dir) {
        print_message("no fake driver in this build (no CUDA toolkit)\n");
        return;
    }
    const char *old = getenv("LD_LIBRARY_PATH");
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("LD_LIBRARY_PATH", path, 1), 0);
    assert_int_equal(setenv("CUDAG_FAKE_RUNAWAY", "1", 1), 0);
    const char *yaml =
        "cudag: 1\ninclude: cudag_kernels.yaml\n"
        "buffers:\n  it: { type: i32, count: 1 }\n"
        "conditions:\n  more: { default: 1 }\n"
        "nodes:\n"
        "  spin:\n"
        "    while: more\n"
        "    body:\n"
        "      next: { kernel: cond_count_i32, grid: 1, block: 32,\n"
        "              args: [it, 3000000000, more] }\n";
    r = RUN_IN(yaml, "run", "--timeout", "0.2", "--warmup", "2", "-");
    assert_int_equal(r->status, 6);
    assert_string_equal(r->out, "");
    assert_non_null(strstr(
        r->err,
        "<stdin>:8:3: error: graph '<stdin>' has not finished after 200 ms: its "
        "while node may still be looping (the driver cannot tell which node "
        "runs): 'spin' (<stdin>:8:3); a running graph cannot be stopped, so "
        "the exec's CUDA context is lost: end the process to free the "
        "device\n"
        "     8 |   spin:\n"));
    /* The warning cudag check gives for the same loop, first. */
    assert_non_null(strstr(r->err, "sets condition 'more' only to 1"));
    r = RUN_IN(yaml, "run", "--json", "--timeout", "0.05", "-");
    assert_int_equal(r->status, 6);
    assert_non_null(strstr(r->out, "\"exit_status\": 6"));
    assert_non_null(strstr(r->out, "has not finished after 50 ms"));
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    free(saved);
    unsetenv("CUDAG_FAKE_RUNAWAY");
}

static void cli_gpu_commands_without_a_driver(void **state)
{
    (void)state;
    /* Where libcuda.so.1 exists (the GPU machine), the GPU suites cover run
     * and bench; here they must fail with one clear sentence and status 3. */
    if (!cannot_run_here()) {
        print_message("a CUDA driver is installed: the no-driver path is not "
                      "tested here\n");
        return;
    }
    for (const char *const *cmd = (const char *const[]){"run", "bench", NULL};
         *cmd; cmd++) {
        result *r = RUN(*cmd, "graphs/single.yaml");
        assert_int_equal(r->status, 3);
        assert_true(strncmp(r->err, "error: " CANNOT_RUN,
                            strlen("error: " CANNOT_RUN)) == 0);
        /* One sentence, on one line. */
        assert_ptr_equal(strchr(r->err, '\n'), r->err + strlen(r->err) - 1);
    }
    result *r = RUN("bench", "--iters", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "cudag bench: --iters takes a count from 1 to "
                                "10000000, not '0'\nTry 'cudag bench --help'.\n");
    r = RUN("bench", "--host-repeats", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "cudag bench: --host-repeats takes a count from 1 to "
                                "10000000, not '0'\nTry 'cudag bench --help'.\n");
    r = RUN("bench", "--host-repeats");
    assert_int_equal(r->status, 2);
    r = RUN("bench", "graphs/single.yaml", "graphs/pdl_chain.yaml");
    assert_int_equal(r->status, 2);
    /* A bad graph is reported before any driver is looked for. */
    r = RUN("bench", "tests/data/bad/cycle_three.yaml");
    assert_int_equal(r->status, 1);
    r = RUN("bench", "--help");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "graph with its branches serialized"));
    assert_non_null(strstr(r->out, "--host-repeats N"));
}

/* Counts the occurrences of needle in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void cli_help_lists_each_option_that_applies_once(void **state)
{
    (void)state;
    static const char *const common[] = {"  -D NAME=VALUE ", "  -I DIR ",
                                         "  --Werror ", "  --strict ",
                                         "  --max-errors N ",
                                         "  -q, --quiet ", NULL};
    static const char *const gpu[] = {"  --device K ", "  --no-pdl ",
                                      "  --device-launch ", "  --gate ",
                                      "  --nvtx ", "  --timeout S ", NULL};
    for (const char *const *cmd = (const char *const[]){"check", "dot", "plan",
                                                        "run", "bench", NULL};
         *cmd; cmd++) {
        bool runs = strcmp(*cmd, "run") == 0 || strcmp(*cmd, "bench") == 0;
        result *r = RUN(*cmd, "--help");
        assert_int_equal(r->status, 0);
        for (const char *const *o = common; *o; o++)
            if (count(r->out, *o) != 1)
                fail_msg("cudag %s --help lists '%s' %d times", *cmd, *o,
                         count(r->out, *o));
        for (const char *const *o = gpu; *o; o++)
            if (count(r->out, *o) != (runs ? 1 : 0))
                fail_msg("cudag %s --help lists '%s' %d times", *cmd, *o,
                         count(r->out, *o));
    }
    result *r = RUN("check", "--help");
    assert_string_equal(r->out,
        "Usage: cudag check [OPTIONS] FILE...\n"
        "Parse and check graph files without touching a GPU. Every\n"
        "problem is printed as FILE:LINE:COL: error: MESSAGE. A FILE\n"
        "of '-' is read from standard input.\n"
        "Exit status: 0 clean, 1 errors, 2 usage, 5 a file, include,\n"
        "child graph or module could not be read.\n\nOptions:\n"
        "  -D NAME=VALUE     set a variable of the graph (repeatable)\n"
        "  -I DIR            search DIR for included files (repeatable)\n"
        "  --Werror          treat warnings as errors\n"
        "  --strict          an unsafe programmatic edge is an error, not a warning\n"
        "  --max-errors N    stop after N errors (default 50)\n"
        "  -q, --quiet       print errors only\n");
    /* What the help leaves out is refused by name, not ignored. */
    for (const char *const *cmd = (const char *const[]){"check", "dot", "plan",
                                                        NULL};
         *cmd; cmd++) {
        for (const char *const *o = (const char *const[]){"--no-pdl",
                                                            "--gate", NULL};
             *o; o++) {
            r = RUN(*cmd, *o, "graphs/single.yaml");
            assert_int_equal(r->status, 2);
            char want[256];
            snprintf(want, sizeof want,
                     "cudag %s: option '%s' applies to run and bench only\n"
                     "Try 'cudag %s --help'.\n",
                     *cmd, *o, *cmd);
            assert_string_equal(r->err, want);
        }
    }
    r = RUN("help", "--help");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out,
        "Usage: cudag help [COMMAND]\n"
        "Print the usage of COMMAND (one of check, dot, plan, run, bench),\n"
        "or the list of commands.\n");
    r = RUN("help", "help");
    assert_int_equal(r->status, 0);
    assert_true(strncmp(r->out, "Usage: cudag help [COMMAND]\n", 28) == 0);
    r = RUN("help", "frob");
    assert_int_equal(r->status, 2);
    assert_true(strncmp(r->err, "cudag: unknown command 'frob'\n", 30) == 0);
    r = RUN("help", "run", "check");
    assert_int_equal(r->status, 2);
    assert_true(strncmp(r->err, "cudag help: one command at a time\n", 34) == 0);
}

static void cli_check_reads_standard_input(void **state)
{
    (void)state;
    static const char good[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "buffers: {x: {type: f32, count: 1024}, y: {type: f32, count: 1024}}\n"
        "nodes:\n"
        "  s: {kernel: scale_f32, grid: 1, block: 256, args: [x, y, 2.0, 1024]}\n";
    result *r = RUN_IN(good, "check", "-");
    assert_int_equal(r->status, 0);
    /* Named <stdin> everywhere: the ok line as the diagnostics. */
    assert_string_equal(r->out, "<stdin>: ok: 1 node, 0 edges, 2 buffers\n");
    assert_string_equal(r->err, "");
    /* Diagnostics name it <stdin> and still show the line and a caret. */
    static const char bad[] =
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "buffers: {x: {type: f32, count: 1024}, y: {type: f32, count: 1024}}\n"
        "nodes:\n"
        "  s: {kernel: scale_f23, grid: 1, block: 256, args: [x, y, 2.0, 1024]}\n";
    r = RUN_IN(bad, "check", "-");
    assert_int_equal(r->status, 1);
    assert_string_equal(r->out, "");
    assert_string_equal(r->err,
        "<stdin>:5:15: error: unknown kernel 'scale_f23' (did you mean "
        "'scale_f32'?)\n"
        "     5 |   s: {kernel: scale_f23, grid: 1, block: 256, args: [x, y, 2.0, 1024]}\n"
        "       |               ^\n"
        "<stdin>: 1 error\n");
    /* Every command takes it. */
    r = RUN_IN(good, "plan", "-");
    assert_int_equal(r->status, 0);
    assert_true(strncmp(r->out, "graph: <stdin>\n", 15) == 0);
}

/* --strict is a check-time guard too: check refuses the edge run --strict
 * refuses, at the edge, where plain check warns. */
static void cli_check_strict_refuses_an_unsafe_edge(void **state)
{
    (void)state;
    const char *f = "tests/data/bad/pdl_strict_not_waiting.yaml";
    result *r = RUN("check", f);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->err, "pdl_strict_not_waiting.yaml:12:66: warning: "
                                   "programmatic edge 'up' -> 'down' will be "
                                   "built as a full edge: kernel 'nowait'"));
    r = RUN("check", "--strict", f);
    assert_int_equal(r->status, 1);
    assert_string_equal(r->out, "");
    assert_non_null(strstr(r->err, "pdl_strict_not_waiting.yaml:12:66: error: "
                                   "programmatic edge 'up' -> 'down' is not "
                                   "safe: kernel 'nowait' is not declared pdl"));
    assert_int_equal(count(r->err, "error:"), 1);
    for (const char *const *cmd = (const char *const[]){"dot", "plan", NULL};
         *cmd; cmd++) {
        r = RUN(*cmd, "--strict", f);
        assert_int_equal(r->status, 1);
    }
}

/* -q prints errors only: no ok line, no warning (nor its notes). */
static void cli_quiet_prints_errors_only(void **state)
{
    (void)state;
    const char *f = "tests/data/bad/pdl_strict_not_waiting.yaml";
    result *r = RUN("check", "-q", f);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "");
    assert_string_equal(r->err, "");
    r = RUN("check", "-q", "--strict", f);
    assert_int_equal(r->status, 1);
    assert_int_equal(count(r->err, "error:"), 1);
    assert_int_equal(count(r->err, "warning:"), 0);
}

static void cli_counts_are_singular_for_one(void **state)
{
    (void)state;
    result *r = RUN("check", "graphs/single.yaml");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "graphs/single.yaml: ok: 1 node, 0 edges, 2 buffers\n");
    r = RUN("check", "graphs/fork_join.yaml");
    assert_string_equal(r->out, "graphs/fork_join.yaml: ok: 5 nodes, 4 edges, 6 buffers\n");
}

static void cli_plan_json_has_the_schedule(void **state)
{
    (void)state;
    result *r = RUN("plan", "--json", "graphs/fork_join.yaml");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out,
        "{\"graph\": \"fork_join\", \"nodes\": 5, \"kernel_nodes\": 5, "
        "\"memset_nodes\": 0, \"memcpy_nodes\": 0, \"conditional_nodes\": 0, "
        "\"bodies\": 0, \"gemm_nodes\": 0, \"edges\": {\"full\": 4, "
        "\"programmatic\": 0, \"launch_order\": 0}, \"depth\": 3, \"width\": 3, "
        "\"buffers\": 6, \"buffer_bytes\": 25165824, \"schedule\": "
        "[[\"times2\", \"times3\", \"times4\"], [\"join_ab\"], [\"join\"]], "
        "\"access\": [{\"node\": \"times2\", \"access\": [{\"buffer\": "
        "\"x\", \"mode\": \"read\", \"bytes\": [0, 4194304], \"extent\": "
        "\"to the end\"}, {\"buffer\": \"a\", \"mode\": \"write\", "
        "\"bytes\": [0, 4194304], \"extent\": \"to the end\"}]}, "
        "{\"node\": \"times3\", \"access\": [{\"buffer\": \"x\", "
        "\"mode\": \"read\", \"bytes\": [0, 4194304], \"extent\": "
        "\"to the end\"}, {\"buffer\": \"b\", \"mode\": \"write\", "
        "\"bytes\": [0, 4194304], \"extent\": \"to the end\"}]}, "
        "{\"node\": \"times4\", \"access\": [{\"buffer\": \"x\", "
        "\"mode\": \"read\", \"bytes\": [0, 4194304], \"extent\": "
        "\"to the end\"}, {\"buffer\": \"c\", \"mode\": \"write\", "
        "\"bytes\": [0, 4194304], \"extent\": \"to the end\"}]}, "
        "{\"node\": \"join_ab\", \"access\": [{\"buffer\": \"a\", "
        "\"mode\": \"read\", \"bytes\": [0, 4194304], \"extent\": "
        "\"to the end\"}, {\"buffer\": \"b\", \"mode\": \"read\", "
        "\"bytes\": [0, 4194304], \"extent\": \"to the end\"}, "
        "{\"buffer\": \"ab\", \"mode\": \"write\", \"bytes\": "
        "[0, 4194304], \"extent\": \"to the end\"}]}, {\"node\": "
        "\"join\", \"access\": [{\"buffer\": \"ab\", \"mode\": "
        "\"read\", \"bytes\": [0, 4194304], \"extent\": \"to the end\"}, "
        "{\"buffer\": \"c\", \"mode\": \"read\", \"bytes\": "
        "[0, 4194304], \"extent\": \"to the end\"}, {\"buffer\": \"y\", "
        "\"mode\": \"write\", \"bytes\": [0, 4194304], \"extent\": "
        "\"to the end\"}]}]}\n");
    /* The same levels as the text. */
    r = RUN("plan", "graphs/fork_join.yaml");
    assert_non_null(strstr(r->out, "level 0: times2 times3 times4\n"
                                   "level 1: join_ab\nlevel 2: join\n"));
}

static void cli_run_options_and_json_failures(void **state)
{
    (void)state;
    result *r = RUN("run", "--iters", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "cudag run: --iters takes a count from 1 to "
                                "10000000, not '0'\nTry 'cudag run --help'.\n");
    r = RUN("run", "--warmup", "x", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "cudag run: --warmup takes a count from 0 to "
                                "10000000, not 'x'\nTry 'cudag run --help'.\n");
    r = RUN("run", "--frob", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_string_equal(r->err, "cudag run: unknown option '--frob'\n"
                                "Try 'cudag run --help'.\n");
    /* A graph error under --json: one JSON object on standard output, the
     * text on standard error as always. */
    r = RUN("run", "--json", "tests/data/bad/cycle_three.yaml");
    assert_int_equal(r->status, 1);
    assert_string_equal(r->out,
        "{\"error\": {\"exit_status\": 1, \"message\": \"dependency cycle: a -> "
        "b -> c -> a\", \"diagnostics\": [{\"severity\": \"error\", \"code\": "
        "\"CUDAG_ECYCLE\", \"file\": \"tests/data/bad/cycle_three.yaml\", "
        "\"line\": 11, \"column\": 77, \"message\": \"dependency cycle: a -> b "
        "-> c -> a\"}]}}\n");
    assert_non_null(strstr(r->err, "cycle_three.yaml:11:77: error: dependency cycle"));
    r = RUN("run", "--json", "--dump", "nope=/tmp/x", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->out, "\"message\": \"--dump: graph 'single' has no "
                                   "buffer 'nope'\""));
    if (!cannot_run_here())
        return;     /* the no-driver failure needs a machine without one */
    r = RUN("run", "--json", "graphs/single.yaml");
    assert_int_equal(r->status, 3);
    const char head[] = "{\"error\": {\"exit_status\": 3, \"message\": \""
                        CANNOT_RUN;
    assert_true(strncmp(r->out, head, sizeof head - 1) == 0);
    assert_non_null(strstr(r->out, "\"diagnostics\": [{\"severity\": \"error\", "
                                    "\"code\": \"CUDAG_ENODRIVER\", \"file\": null, "
                                    "\"line\": null, \"column\": null, \"message\": "
                                    "\"" CANNOT_RUN));
    assert_string_equal(r->out + strlen(r->out) - 5, "}]}}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cli_version_help_and_usage),
        cmocka_unit_test(cli_check_good_and_bad_files),
        cmocka_unit_test(cli_control_bytes_are_not_sent_to_the_terminal),
        cmocka_unit_test(cli_caret_counts_characters),
        cmocka_unit_test(cli_defines_change_the_graph),
        cmocka_unit_test(cli_plan_text),
        cmocka_unit_test(cli_dot_output_and_render),
        cmocka_unit_test(cli_gpu_commands_without_a_driver),
        cmocka_unit_test(cli_bench_times_modes_3_and_5_alone),
        cmocka_unit_test(cli_bench_forks_modes_3_and_5),
        cmocka_unit_test(cli_run_timeout_reports_a_runaway_loop),
        cmocka_unit_test(cli_help_lists_each_option_that_applies_once),
        cmocka_unit_test(cli_check_reads_standard_input),
        cmocka_unit_test(cli_check_strict_refuses_an_unsafe_edge),
        cmocka_unit_test(cli_quiet_prints_errors_only),
        cmocka_unit_test(cli_counts_are_singular_for_one),
        cmocka_unit_test(cli_plan_json_has_the_schedule),
        cmocka_unit_test(cli_run_options_and_json_failures),
        cmocka_unit_test(cli_run_says_compiled_or_cache),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
