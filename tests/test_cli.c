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
 * the source tree, capturing both outputs. */
static result *run(const char *const *args)
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
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fo);
    close(fe);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    r.status = WEXITSTATUS(st);
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    return &r;
}

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})

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
    r = RUN("help", "check");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Usage: cudag check"));
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
    assert_non_null(strstr(
        r->out, "nodes: 5 (5 kernel, 0 memset, 0 memcpy, 0 conditional)\n"));
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

static void cli_gpu_commands_without_a_driver(void **state)
{
    (void)state;
    /* Where libcuda.so.1 exists (the GPU machine), the GPU suites cover run
     * and bench; here they must fail with one clear sentence and status 3. */
    if (access("/usr/lib/x86_64-linux-gnu/libcuda.so.1", F_OK) == 0 ||
        access("/usr/local/nvidia/lib64/libcuda.so.1", F_OK) == 0) {
        print_message("a CUDA driver is installed: the no-driver path is not "
                      "tested here\n");
        return;
    }
    for (const char *const *cmd = (const char *const[]){"run", "bench", NULL};
         *cmd; cmd++) {
        result *r = RUN(*cmd, "graphs/single.yaml");
        assert_int_equal(r->status, 3);
        assert_non_null(strstr(r->err, "no CUDA driver found (libcuda.so.1): "));
    }
    result *r = RUN("bench", "--iters", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--iters takes a count from 1, not '0'"));
    r = RUN("bench", "--host-repeats", "0", "graphs/single.yaml");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--host-repeats takes a count from 1, not '0'"));
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
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
