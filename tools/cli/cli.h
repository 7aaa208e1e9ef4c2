/* cli.h — what the subcommands of the cudag tool share: common options,
 * diagnostics printed GCC-style with the source line and a caret, loading. */
#ifndef CUDAG_CLI_H
#define CUDAG_CLI_H

#include "cudag.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses of the cudag tool (documented in README.md and cudag.1). */
enum {
    CLI_OK = 0,         /* success */
    CLI_EGRAPH = 1,     /* the graph has errors (or a check failed) */
    CLI_EUSAGE = 2,     /* bad command line */
    CLI_ENODRIVER = 3,  /* no CUDA driver or device */
    CLI_ECUDA = 4,      /* a CUDA call or a kernel failed */
    CLI_EIO = 5         /* a file could not be read or written */
};

#define CLI_MAX_LIST 256

typedef struct cli {
    const char *prog;           /* "cudag" */
    const char *cmd;            /* "check", "run", … */
    const char *defines[CLI_MAX_LIST + 1];
    const char *include_dirs[CLI_MAX_LIST + 1];
    size_t ndefines, ndirs;
    unsigned flags;             /* CUDAG_WERROR, CUDAG_NO_PDL, CUDAG_STRICT,
                                   CUDAG_NVTX */
    unsigned max_errors;
    int device;
    bool quiet;
    bool color;
    unsigned nerr, nwarn;       /* diagnostics printed so far */
    bool shipped_dirs;          /* the kernels' directories were added */
} cli;

/* Sets defaults and the include directories where the shipped kernels live
 * (next to the executable in a build tree, or the installed data dir). */
void cli_init(cli *c, const char *prog, const char *cmd);

/*
 * Parses one common option at argv[*i]: -D NAME=VALUE, -I DIR, --Werror,
 * --max-errors N, --no-pdl, --no-cache, --strict, --nvtx, --device K, -q.
 * Returns 1 and
 * advances
 * *i past it when it was one, 0 when argv[*i] is not a common option, and -1
 * after printing a usage error.
 */
int cli_common_opt(cli *c, int argc, char **argv, int *i);

/* Options for the library, pointing back into c (valid while c lives). */
cudag_options cli_options(cli *c);

/* The diagnostic callback: prints "file:line:col: error: msg", then the
 * source line and a caret under the column.  user is the cli. */
void cli_diag(void *user, const cudag_error *e);

/* Prints an error value (from a function that did not report through the
 * callback) the same way. */
void cli_print_error(cli *c, const cudag_error *e);

/* Loads and checks a file, printing every diagnostic.  Returns CLI_OK and
 * sets *g, or an exit status. */
int cli_load(cli *c, const char *path, cudag_graph **g);

/* Maps a library status to an exit status. */
int cli_status(int code);

/* Prints a usage error for this subcommand ("cudag CMD: MESSAGE" and a hint
 * to --help) and returns CLI_EUSAGE. */
int cli_usage(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when --help or -h is among argv[1..argc-1]. */
bool cli_wants_help(int argc, char **argv);

/* Parses a decimal count in 0..max (no sign, no trailing text). */
bool cli_parse_uint(const char *s, unsigned long max, unsigned long *out);

/* Writes s as a JSON string literal, quotes included. */
void cli_json_string(FILE *f, const char *s);

/* The common options' help text, for each subcommand's --help. */
extern const char cli_common_help[];

/* Subcommands: each returns an exit status.  argv[0] is the subcommand. */
int cmd_check(cli *c, int argc, char **argv);
int cmd_dot(cli *c, int argc, char **argv);
int cmd_plan(cli *c, int argc, char **argv);
int cmd_run(cli *c, int argc, char **argv);
int cmd_bench(cli *c, int argc, char **argv);
int cmd_cache(cli *c, int argc, char **argv);

#endif
