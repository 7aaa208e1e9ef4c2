/* cudag.c — the command line: `cudag COMMAND [OPTIONS] FILE…`, dispatching
 * to one function per subcommand (cmd_*.c). */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(cli *c, int argc, char **argv);
    const char *summary;
    bool gpu;                   /* takes the options of cli_gpu_help */
} command;

static const command commands[] = {
    {"check", cmd_check, "parse and check graph files (no GPU needed)", false},
    {"dot", cmd_dot, "write the graph in Graphviz DOT, or render it", false},
    {"plan", cmd_plan, "print depth, width, edges by kind and a schedule", false},
    {"run", cmd_run, "build, instantiate and replay the graph on a GPU", true},
    {"bench", cmd_bench, "compare launch modes of the same graph on a GPU", true},
    {"cache", cmd_cache, "clean: empty the compile cache of source modules",
     false},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s COMMAND [OPTIONS] FILE...\n"
            "Build CUDA graphs from a YAML DAG of kernels.\n\nCommands:\n",
            prog);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-8s %s\n", "help",
            "print the usage of a command, or this list");
    fprintf(f,
            "\n'%s COMMAND --help' describes a command's options; "
            "'%s --version'\nprints the version.\n"
            "Exit status: 0 success, 1 graph errors, 2 usage, 3 no CUDA "
            "driver or device,\n4 CUDA error, 5 file error, 6 timeout "
            "(run and bench --timeout).\n",
            prog, prog);
}

static int help_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s help [COMMAND]\n"
            "Print the usage of COMMAND (one of check, dot, plan, run, "
            "bench),\nor the list of commands.\n",
            prog);
    return f == stdout ? CLI_OK : CLI_EUSAGE;
}

static int dispatch(const command *cmd, const char *prog, int argc, char **argv)
{
    cli c;
    cli_init(&c, prog, cmd->name, cmd->gpu);
    int rc = cmd->fn(&c, argc, argv);
    cli_free(&c);
    return rc;
}

int main(int argc, char **argv)
{
    const char *prog = "cudag";
    if (argc < 2) {
        usage(stderr, prog);
        return CLI_EUSAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout, prog);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("cudag %s (graph format %d)\n", cudag_version_string(),
               CUDAG_FORMAT_VERSION);
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            usage(stdout, prog);
            return CLI_OK;
        }
        cmd = argv[2];
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
            strcmp(cmd, "help") == 0)
            return help_usage(stdout, prog);
        if (argc > 3) {
            fprintf(stderr, "%s help: one command at a time\n", prog);
            return help_usage(stderr, prog);
        }
        char *hargv[] = {argv[2], "--help", NULL};
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(commands[i].name, cmd) == 0)
                return dispatch(&commands[i], prog, 2, hargv);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, cmd) == 0)
            return dispatch(&commands[i], prog, argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
    usage(stderr, prog);
    return CLI_EUSAGE;
}
