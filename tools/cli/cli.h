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
    CLI_EIO = 5,        /* a file could not be read or written */
    CLI_ETIMEOUT = 6    /* a replay ran past --timeout: the context is lost */
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
    unsigned timeout_ms;        /* --timeout, in ms; 0: wait forever */
    bool quiet;
    bool color;
    bool gpu;                   /* the command runs the graph (run, bench) */
    bool gate;                  /* --gate: each timed replay alone, held
                                   until queued (cudag_exec_time_gated) */
    unsigned nerr, nwarn;       /* diagnostics reported so far */
    bool hiding;                /* -q: the last warning, and its notes, go
                                   unprinted */
    const char *stdin_text;     /* the graph read from "-", for carets */
    /* With --json, every diagnostic is also kept here (owned; freed by
     * cli_free) so that a failure can be printed as one JSON object. */
    bool keep;
    cudag_error *kept;
    size_t nkept;
} cli;

/* Sets defaults.  gpu: the command builds and runs the graph, so it takes
 * the options of cli_gpu_help too. */
void cli_init(cli *c, const char *prog, const char *cmd, bool gpu);

/* Frees what the cli holds (kept diagnostics, text read from stdin). */
void cli_free(cli *c);

/*
 * Parses one common option at argv[*i]: -D NAME=VALUE, -I DIR, --Werror,
 * --strict, --max-errors N, -q.  For a gpu command (run, bench) also one of
 * --no-pdl, --no-cache, --nvtx, --device K, --timeout S; other commands
 * refuse these by name.
 * Returns 1 and advances *i past it when it was one, 0 when argv[*i] is not
 * such an option, and -1 after printing a usage error.
 */
int cli_common_opt(cli *c, int argc, char **argv, int *i);

/* Options for the library, pointing back into c (valid while c lives). */
cudag_options cli_options(cli *c);

/* Instantiation options from c: --device, --timeout, the flags,
 * diagnostics printed. */
cudag_exec_options cli_exec_options(cli *c);

/* The diagnostic callback: prints "file:line:col: error: msg", then the
 * source line and a caret under the column.  user is the cli. */
void cli_diag(void *user, const cudag_error *e);

/* Prints an error value (from a function that did not report through the
 * callback) the same way. */
void cli_print_error(cli *c, const cudag_error *e);

/* The name a file is shown under, in diagnostics and in any other line:
 * "<stdin>" for "-", the path itself otherwise. */
const char *cli_shown_name(const char *path);

/* Loads and checks a file ("-": standard input), printing every diagnostic.
 * Returns CLI_OK and sets *g, or an exit status. */
int cli_load(cli *c, const char *path, cudag_graph **g);

/* Prints an error of the command's own (one without a file position, such
 * as a name the graph does not have) as the library's errors are printed,
 * kept for --json too, with library status `code`; returns `code`. */
int cli_error(cli *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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

/* Prints, on standard output, the failure of a --json command as one JSON
 * object: {"error": {"exit_status", "message", "diagnostics": [...]}} with
 * every diagnostic kept since cli_init (the first error's message, or `what`
 * when none was kept). */
void cli_json_failure(cli *c, int status, const char *what);

/* "s" unless n is 1: "%zu node%s". */
const char *cli_plural(unsigned long long n);

/* The options' help text for each subcommand's --help: those of every
 * command, and those of the commands that run the graph. */
extern const char cli_common_help[];
extern const char cli_gpu_help[];

/* Subcommands: each returns an exit status.  argv[0] is the subcommand. */
int cmd_check(cli *c, int argc, char **argv);
int cmd_dot(cli *c, int argc, char **argv);
int cmd_plan(cli *c, int argc, char **argv);
int cmd_run(cli *c, int argc, char **argv);
int cmd_bench(cli *c, int argc, char **argv);
int cmd_cache(cli *c, int argc, char **argv);

#endif
