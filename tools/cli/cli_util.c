/* cli_util.c — what the subcommands share: common options, diagnostics with
 * the offending source line and a caret, loading a file. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_common_help[] =
    "  -D NAME=VALUE     set a variable of the graph (repeatable)\n"
    "  -I DIR            search DIR for included files (repeatable)\n"
    "  --Werror          treat warnings as errors\n"
    "  --max-errors N    stop after N errors (default 50)\n"
    "  --no-pdl          build programmatic edges as full edges (run, bench)\n"
    "  --no-cache        compile CUDA source modules without the compile cache\n"
    "                    (run, bench)\n"
    "  --strict          an unsafe programmatic edge is an error (run, bench)\n"
    "  --nvtx            NVTX ranges around each stage and replay (run, bench)\n"
    "  --device K        use CUDA device K (run, bench; default 0)\n"
    "  -q, --quiet       print only diagnostics\n";

static char exe_dirs[2][PATH_MAX + 32];

/* The shipped kernels sit next to the tool: build/kernels beside
 * build/tools/cudag, or PREFIX/share/cudag beside PREFIX/bin/cudag. */
static void add_exe_dirs(cli *c)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    snprintf(exe_dirs[0], sizeof exe_dirs[0], "%s/../kernels", exe);
    snprintf(exe_dirs[1], sizeof exe_dirs[1], "%s/../share/cudag", exe);
    for (int i = 0; i < 2; i++)
        if (access(exe_dirs[i], R_OK) == 0 && c->ndirs < CLI_MAX_LIST)
            c->include_dirs[c->ndirs++] = exe_dirs[i];
}

void cli_init(cli *c, const char *prog, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->cmd = cmd;
    const char *nc = getenv("NO_COLOR");
    c->color = isatty(STDERR_FILENO) && !(nc && *nc);
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

int cli_usage(cli *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s %s: ", c->prog, c->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s %s --help'.\n", c->prog, c->cmd);
    return CLI_EUSAGE;
}

/* cli_common_opt reports a usage error as -1. */
#define usage_error(...) (cli_usage(__VA_ARGS__), -1)

bool cli_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

int cli_common_opt(cli *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *val = NULL;
    bool takes = strcmp(a, "-D") == 0 || strcmp(a, "-I") == 0 ||
                 strcmp(a, "--max-errors") == 0 || strcmp(a, "--device") == 0;
    if (takes) {
        if (*i + 1 >= argc)
            return usage_error(c, "option '%s' needs a value", a);
        val = argv[*i + 1];
    } else if (strncmp(a, "-D", 2) == 0 && a[2]) {
        val = a + 2;
        a = "-D";
    } else if (strncmp(a, "-I", 2) == 0 && a[2]) {
        val = a + 2;
        a = "-I";
    }
    unsigned long n;
    if (strcmp(a, "-D") == 0) {
        if (!strchr(val, '=') || val[0] == '=')
            return usage_error(c, "-D takes NAME=VALUE, not '%s'", val);
        if (c->ndefines == CLI_MAX_LIST)
            return usage_error(c, "%s", "too many -D options");
        c->defines[c->ndefines++] = val;
    } else if (strcmp(a, "-I") == 0) {
        if (c->ndirs == CLI_MAX_LIST)
            return usage_error(c, "%s", "too many -I options");
        /* Directories given on the command line come before the shipped
         * ones, so a user's manifest can shadow the library's. */
        memmove(&c->include_dirs[1], &c->include_dirs[0],
                c->ndirs * sizeof c->include_dirs[0]);
        c->include_dirs[0] = val;
        c->ndirs++;
    } else if (strcmp(a, "--max-errors") == 0) {
        if (!cli_parse_uint(val, 100000, &n) || n == 0)
            return usage_error(c, "--max-errors takes a number from 1, not '%s'",
                               val);
        c->max_errors = (unsigned)n;
    } else if (strcmp(a, "--device") == 0) {
        if (!cli_parse_uint(val, 1024, &n))
            return usage_error(c, "--device takes a device number, not '%s'",
                               val);
        c->device = (int)n;
    } else if (strcmp(a, "--Werror") == 0) {
        c->flags |= CUDAG_WERROR;
    } else if (strcmp(a, "--no-pdl") == 0) {
        c->flags |= CUDAG_NO_PDL;
    } else if (strcmp(a, "--no-cache") == 0) {
        c->flags |= CUDAG_NO_CACHE;
    } else if (strcmp(a, "--strict") == 0) {
        c->flags |= CUDAG_STRICT;
    } else if (strcmp(a, "--nvtx") == 0) {
        c->flags |= CUDAG_NVTX;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
        c->quiet = true;
    } else {
        return 0;
    }
    *i += takes ? 2 : 1;
    return 1;
}

cudag_options cli_options(cli *c)
{
    if (!c->shipped_dirs)
        add_exe_dirs(c);
    c->shipped_dirs = true;
    c->defines[c->ndefines] = NULL;
    c->include_dirs[c->ndirs] = NULL;
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.defines = c->defines;
    o.include_dirs = c->include_dirs;
    o.diag = cli_diag;
    o.diag_user = c;
    o.max_errors = c->max_errors;
    o.flags = c->flags;
    return o;
}

/* Writes n bytes of s with control bytes (an ESC sequence in a hostile file
 * could retitle or reprogram the terminal) shown as \xNN instead; tabs
 * stay, so carets still line up. */
static void put_safe(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
}

/* Prints line `line` of `file` and a caret under column `col`.  The file is
 * read again only when it changes from one diagnostic to the next. */
static void print_source_line(const char *file, int line, int col)
{
    static char cached[PATH_MAX];
    static char *text;
    static size_t len;
    if (!file[0] || line <= 0 || file[0] == '<')
        return;
    if (strcmp(cached, file) != 0) {
        free(text);
        text = NULL;
        len = 0;
        snprintf(cached, sizeof cached, "%s", file);
        FILE *f = fopen(file, "rb");
        if (!f)
            return;
        size_t cap = 0;
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
            if (len + n + 1 > cap) {
                cap = (len + n + 1) * 2;
                char *nt = realloc(text, cap);
                if (!nt) {
                    free(text);
                    text = NULL;
                    len = 0;
                    break;
                }
                text = nt;
            }
            memcpy(text + len, buf, n);
            len += n;
        }
        fclose(f);
        if (text)
            text[len] = '\0';
    }
    if (!text)
        return;
    const char *p = text;
    for (int l = 1; l < line && p; l++) {
        p = memchr(p, '\n', len - (size_t)(p - text));
        if (p)
            p++;
    }
    if (!p || p >= text + len)
        return;
    const char *e = memchr(p, '\n', len - (size_t)(p - text));
    int n = e ? (int)(e - p) : (int)(text + len - p);
    if (n > 400)
        return;
    fprintf(stderr, " %5d | ", line);
    put_safe(stderr, p, (size_t)n);
    fputs("\n       | ", stderr);
    /* The column counts characters (cudag.h): one space for each character
     * before it, a tab for a tab, and four for a control byte that
     * put_safe wrote as \xNN, so the caret lines up under them. */
    const char *q = p, *end = p + n;
    for (int i = 1; i < col && q < end; i++) {
        unsigned char ch = (unsigned char)*q;
        fputs(ch == '\t' ? "\t" : ch < 0x20 || ch == 0x7f ? "    " : " ",
              stderr);
        do
            q++;
        while (q < end && ((unsigned char)*q & 0xC0) == 0x80);
    }
    fputs("^\n", stderr);
}

static void print_one(cli *c, const cudag_error *e)
{
    char buf[2048];
    cudag_error_format(e, buf, sizeof buf);
    if (c && c->color) {
        const char *col = e->severity == CUDAG_SEV_ERROR     ? "\033[1;31m"
                          : e->severity == CUDAG_SEV_WARNING ? "\033[1;35m"
                                                             : "\033[1;36m";
        /* Colour the "error:" word only; the rest stays plain text. */
        const char *w = e->severity == CUDAG_SEV_ERROR     ? "error:"
                        : e->severity == CUDAG_SEV_WARNING ? "warning:"
                                                           : "note:";
        char *at = strstr(buf, w);
        if (at) {
            fputs("\033[1m", stderr);
            put_safe(stderr, buf, (size_t)(at - buf));
            fprintf(stderr, "\033[0m%s%s\033[0m", col, w);
            put_safe(stderr, at + strlen(w), SIZE_MAX);
            fputc('\n', stderr);
        } else {
            put_safe(stderr, buf, SIZE_MAX);
            fputc('\n', stderr);
        }
    } else {
        put_safe(stderr, buf, SIZE_MAX);
        fputc('\n', stderr);
    }
    print_source_line(e->file, e->line, e->column);
}

void cli_diag(void *user, const cudag_error *e)
{
    cli *c = user;
    if (e->severity == CUDAG_SEV_ERROR)
        c->nerr++;
    else if (e->severity == CUDAG_SEV_WARNING)
        c->nwarn++;
    print_one(c, e);
}

void cli_print_error(cli *c, const cudag_error *e)
{
    if (e->severity == CUDAG_SEV_ERROR)
        c->nerr++;
    print_one(c, e);
}

int cli_status(int code)
{
    switch (code) {
    case CUDAG_OK:
        return CLI_OK;
    case CUDAG_ENODRIVER:
        return CLI_ENODRIVER;
    case CUDAG_ECUDA:
        return CLI_ECUDA;
    case CUDAG_EIO:
        return CLI_EIO;
    case CUDAG_EINVAL:
        return CLI_EUSAGE;
    default:
        return CLI_EGRAPH;
    }
}

int cli_load(cli *c, const char *path, cudag_graph **g)
{
    cudag_options o = cli_options(c);
    cudag_error err;
    unsigned before = c->nerr;
    int rc = cudag_load_file(path, &o, g, &err);
    if (rc != CUDAG_OK) {
        /* Errors without a callback call (bad arguments) still get printed. */
        if (c->nerr == before)
            cli_print_error(c, &err);
        unsigned n = c->nerr - before;
        fprintf(stderr, "%s: %u error%s%s\n", path, n, n == 1 ? "" : "s",
                err.count >= (int)(c->max_errors ? c->max_errors : 50)
                    ? " (stopped at the limit; --max-errors N for more)"
                    : "");
        return cli_status(rc);
    }
    return CLI_OK;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}
