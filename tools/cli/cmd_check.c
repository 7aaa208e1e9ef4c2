/* cmd_check.c — the subcommands that need no GPU: check, dot and plan. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- check ------------------------------------------------------------- */

int cmd_check(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s check [OPTIONS] FILE...\n"
               "Parse and check graph files without touching a GPU. Every\n"
               "problem is printed as FILE:LINE:COL: error: MESSAGE. A FILE\n"
               "of '-' is read from standard input.\n"
               "Exit status: 0 clean, 1 errors, 2 usage, 5 a file, include,\n"
               "child graph or module could not be read.\n\nOptions:\n%s",
               c->prog, cli_common_help);
        return CLI_OK;
    }
    const char *files[CLI_MAX_LIST];
    size_t nfiles = 0;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage(c, "unknown option '%s'", argv[i]);
        if (nfiles == CLI_MAX_LIST) {
            fprintf(stderr, "%s check: too many files\n", c->prog);
            return CLI_EUSAGE;
        }
        files[nfiles++] = argv[i++];
    }
    if (!nfiles) {
        return cli_usage(c, "no file given");
    }
    int status = CLI_OK;
    for (size_t f = 0; f < nfiles; f++) {
        cudag_graph *g;
        unsigned warn0 = c->nwarn;
        int rc = cli_load(c, files[f], &g);
        if (rc != CLI_OK) {
            if (status == CLI_OK || rc > status)
                status = rc;
            continue;
        }
        if (!c->quiet) {
            unsigned w = c->nwarn - warn0;
            /* The counts cover the bodies of conditional nodes too. */
            cudag_plan_info pi;
            memset(&pi, 0, sizeof pi);
            if (cudag_plan(g, &pi, NULL, NULL) != CUDAG_OK) {
                pi.nodes = cudag_graph_node_count(g);
                pi.edges[0] = cudag_graph_edge_count(g);
            }
            size_t nn = pi.nodes, ne = pi.edges[0] + pi.edges[1] + pi.edges[2];
            size_t nb = cudag_graph_buffer_count(g);
            printf("%s: ok: %zu node%s, %zu edge%s, %zu buffer%s",
                   cli_shown_name(files[f]),
                   nn, cli_plural(nn), ne, cli_plural(ne), nb, cli_plural(nb));
            if (pi.bodies)
                printf(", %zu bod%s", pi.bodies, pi.bodies == 1 ? "y" : "ies");
            if (w)
                printf(", %u warning%s", w, w == 1 ? "" : "s");
            printf("\n");
        }
        cudag_graph_destroy(g);
    }
    return status;
}

/* ---- dot ---------------------------------------------------------------- */

static int write_text(cli *c, const char *path, const char *text)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "%s %s: cannot write '%s': %s\n", c->prog, c->cmd, path,
                strerror(errno));
        return CLI_EIO;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = (path ? fclose(f) == 0 : fflush(f) == 0) && ok;
    if (!ok) {
        fprintf(stderr, "%s %s: cannot write '%s'\n", c->prog, c->cmd,
                path ? path : "standard output");
        return CLI_EIO;
    }
    return CLI_OK;
}

/* Runs Graphviz `dot -T<fmt> -o OUT` with the DOT text on its standard input,
 * without a shell: the output name is passed as one argument. */
static int render(cli *c, const char *text, const char *out)
{
    const char *ext = strrchr(out, '.');
    const char *fmt = ext ? ext + 1 : "";
    if (strcmp(fmt, "svg") != 0 && strcmp(fmt, "png") != 0 &&
        strcmp(fmt, "pdf") != 0) {
        fprintf(stderr,
                "%s dot: --render needs a file ending in .svg, .png or .pdf, "
                "not '%s'\n",
                c->prog, out);
        return CLI_EUSAGE;
    }
    char tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "%s dot: pipe: %s\n", c->prog, strerror(errno));
        return CLI_EIO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *args[] = {"dot", tflag, "-o", (char *)out, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        fprintf(stderr,
                "%s dot: cannot run Graphviz 'dot' (%s); install graphviz "
                "(apt-get install graphviz) or write DOT with -o and render "
                "it elsewhere\n",
                c->prog, strerror(rc));
        return CLI_EIO;
    }
    /* dot may exit early on bad input: do not die of SIGPIPE writing to it. */
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = write(fds[1], text + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fds[1]);
    signal(SIGPIPE, old);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
            fprintf(stderr, "%s dot: Graphviz 'dot' is not installed "
                            "(apt-get install graphviz)\n", c->prog);
        else
            fprintf(stderr, "%s dot: Graphviz 'dot' failed to render '%s'\n",
                    c->prog, out);
        return CLI_EIO;
    }
    if (!c->quiet)
        fprintf(stderr, "%s dot: wrote %s\n", c->prog, out);
    return CLI_OK;
}

int cmd_dot(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s dot [OPTIONS] FILE\n"
               "Write the graph in Graphviz DOT: nodes with kernel, grid and\n"
               "block; programmatic edges dashed blue, launch-order edges\n"
               "dotted; the critical path in red; repeated groups as "
               "clusters.\n\nOptions:\n"
               "  -o OUT            write DOT to OUT instead of standard output\n"
               "  --render OUT      render with Graphviz to OUT (.svg, .png, .pdf)\n"
               "  --no-critical     do not highlight the critical path\n"
               "  --no-clusters     do not group repeated nodes\n%s",
               c->prog, cli_common_help);
        return CLI_OK;
    }
    const char *file = NULL, *out = NULL, *rendered = NULL;
    unsigned flags = 0;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        const char *a = argv[i];
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--render") == 0)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s dot: %s needs a file name\n", c->prog, a);
                return CLI_EUSAGE;
            }
            if (a[1] == 'o')
                out = argv[i + 1];
            else
                rendered = argv[i + 1];
            i += 2;
        } else if (strcmp(a, "--no-critical") == 0) {
            flags |= CUDAG_DOT_NO_CRITICAL;
            i++;
        } else if (strcmp(a, "--no-clusters") == 0) {
            flags |= CUDAG_DOT_NO_CLUSTERS;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage(c, "unknown option '%s'", a);
        } else if (file) {
            return cli_usage(c, "one file at a time");
        } else {
            file = a;
            i++;
        }
    }
    if (!file) {
        return cli_usage(c, "no file given");
    }
    cudag_graph *g;
    int rc = cli_load(c, file, &g);
    if (rc != CLI_OK)
        return rc;
    char *text;
    cudag_error err;
    if (cudag_dot(g, flags, &text, &err) != CUDAG_OK) {
        cli_print_error(c, &err);
        cudag_graph_destroy(g);
        return cli_status(err.code);
    }
    rc = CLI_OK;
    if (out || !rendered)
        rc = write_text(c, out, text);
    if (rc == CLI_OK && rendered)
        rc = render(c, text, rendered);
    cudag_free(text);
    cudag_graph_destroy(g);
    return rc;
}

/* ---- plan ------------------------------------------------------------------ */

/* The plan as JSON: the numbers of cudag_plan_info, then the schedule read
 * back from the plan's text, whose "level L: NAME NAME..." lines are a
 * stable format (src/show/plan.c); node names hold no spaces. */
static void print_plan_json(const cudag_graph *g, const cudag_plan_info *info,
                            const char *text)
{
    printf("{\"graph\": ");
    cli_json_string(stdout, cudag_graph_name(g));
    printf(", \"nodes\": %zu, \"kernel_nodes\": %zu, "
           "\"memset_nodes\": %zu, \"memcpy_nodes\": %zu, "
           "\"conditional_nodes\": %zu, \"bodies\": %zu, \"gemm_nodes\": %zu, "
           "\"edges\": {\"full\": %zu, \"programmatic\": %zu, "
           "\"launch_order\": %zu}, \"depth\": %zu, \"width\": %zu, "
           "\"buffers\": %zu, \"buffer_bytes\": %llu, \"schedule\": [",
           info->nodes, info->kernel_nodes, info->memset_nodes,
           info->memcpy_nodes, info->conditional_nodes, info->bodies,
           info->gemm_nodes, info->edges[0], info->edges[1], info->edges[2],
           info->depth, info->width, cudag_graph_buffer_count(g),
           (unsigned long long)info->buffer_bytes);
    const char *line = strstr(text, "\nschedule:\n");
    const char *level_sep = "";
    for (line = line ? strchr(line + 1, '\n') : NULL; line && line[1];
         line = strchr(line + 1, '\n'), level_sep = ", ") {
        const char *p = strchr(line + 1, ':');
        if (!p || strncmp(line + 1, "level ", 6) != 0)
            break;
        printf("%s[", level_sep);
        const char *sep = "";
        for (p++; *p == ' '; sep = ", ") {
            const char *name = p + 1;
            p = name + strcspn(name, " \n");
            printf("%s\"%.*s\"", sep, (int)(p - name), name);
        }
        printf("]");
    }
    printf("]");
    /* What each node reads and writes (src/check/access.c). */
    char *access = NULL;
    if (cudag_plan_access(g, &access, NULL) == CUDAG_OK)
        printf(", \"access\": %s", access);
    cudag_free(access);
    printf("}\n");
}

int cmd_plan(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s plan [OPTIONS] FILE\n"
               "Print the graph's shape: nodes and edges by kind, depth (the\n"
               "longest chain), width (the most nodes that can run at once on\n"
               "one level), buffer bytes, and a level-by-level schedule.\n\n"
               "Options:\n"
               "  --json            print the same, schedule included, as JSON\n%s",
               c->prog, cli_common_help);
        return CLI_OK;
    }
    const char *file = NULL;
    bool json = false;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        const char *a = argv[i++];
        if (strcmp(a, "--json") == 0)
            json = true;
        else if (a[0] == '-' && a[1])
            return cli_usage(c, "unknown option '%s'", a);
        else if (file) {
            return cli_usage(c, "one file at a time");
        } else
            file = a;
    }
    if (!file) {
        return cli_usage(c, "no file given");
    }
    cudag_graph *g;
    int rc = cli_load(c, file, &g);
    if (rc != CLI_OK)
        return rc;
    cudag_plan_info info;
    char *text = NULL;
    cudag_error err;
    if (cudag_plan(g, &info, &text, &err) != CUDAG_OK) {
        cli_print_error(c, &err);
        cudag_graph_destroy(g);
        return cli_status(err.code);
    }
    if (json)
        print_plan_json(g, &info, text);
    else
        rc = write_text(c, NULL, text);
    cudag_free(text);
    cudag_graph_destroy(g);
    return rc;
}
