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
    "  --strict          an unsafe programmatic edge is an error, not a warning\n"
    "  --max-errors N    stop after N errors (default 50)\n"
    "  -q, --quiet       print errors only\n";

const char cli_gpu_help[] =
    "  --device K        use CUDA device K (default 0)\n"
    "  --no-pdl          build programmatic edges as full edges\n"
    "  --device-launch   instantiate for device launch: one launch costs the\n"
    "                    host a few us whatever the graph's shape\n"
    "  --gate            time each replay alone, held back until the host has\n"
    "                    queued all of it: the device's time, not the host's\n"
    "                    launch call's\n"
    "  --no-cache        compile CUDA source modules without the compile cache\n"
    "  --nvtx            NVTX ranges around each stage and replay\n"
    "  --timeout S       give up when the replays have not finished S seconds\n"
    "                    after a wait for them began (a while loop that never\n"
    "                    ends): name the graph's while nodes and exit with\n"
    "                    status 6; the GPU stays busy until the process ends\n";

void cli_init(cli *c, const char *prog, const char *cmd, bool gpu)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->cmd = cmd;
    c->gpu = gpu;
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

/* Seconds ("2", "0.5") into whole milliseconds, rounded up: a positive,
 * finite number up to 4000000 (an unsigned count of ms holds it). */
static bool parse_seconds(const char *s, unsigned *ms)
{
    char *end;
    errno = 0;
    if (!s || !*s)
        return false;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0.001 && v <= 4e6))
        return false;
    double m = v * 1e3;
    *ms = (unsigned)m + ((double)(unsigned)m < m);
    return true;
}

/* The options that only change how a graph is built and run. */
static bool gpu_option(const char *a)
{
    static const char *const names[] = {"--device",        "--no-pdl",
                                        "--device-launch", "--gate",
                                        "--no-cache", "--nvtx",
                                        "--timeout"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(a, names[i]) == 0)
            return true;
    return false;
}

int cli_common_opt(cli *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *val = NULL;
    if (!c->gpu && gpu_option(a))
        return usage_error(c, "option '%s' applies to run and bench only", a);
    bool takes = strcmp(a, "-D") == 0 || strcmp(a, "-I") == 0 ||
                 strcmp(a, "--max-errors") == 0 || strcmp(a, "--device") == 0 ||
                 strcmp(a, "--timeout") == 0;
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
        /* The library searches these before its shipped kernels, so a
         * user's manifest can shadow the library's. */
        c->include_dirs[c->ndirs++] = val;
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
    } else if (strcmp(a, "--timeout") == 0) {
        if (!parse_seconds(val, &c->timeout_ms))
            return usage_error(c, "--timeout takes seconds from 0.001 to "
                                  "4000000, not '%s'",
                               val);
    } else if (strcmp(a, "--Werror") == 0) {
        c->flags |= CUDAG_WERROR;
    } else if (strcmp(a, "--no-pdl") == 0) {
        c->flags |= CUDAG_NO_PDL;
    } else if (strcmp(a, "--device-launch") == 0) {
        c->flags |= CUDAG_DEVICE_LAUNCH;
    } else if (strcmp(a, "--gate") == 0) {
        c->gate = true;
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

cudag_exec_options cli_exec_options(cli *c)
{
    cudag_exec_options eo;
    memset(&eo, 0, sizeof eo);
    eo.size = sizeof eo;
    eo.device = c->device;
    eo.flags = c->flags;
    eo.timeout_ms = c->timeout_ms;
    eo.diag = cli_diag;
    eo.diag_user = c;
    return eo;
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

/* The name under which a graph read from standard input is shown. */
static const char stdin_name[] = "<stdin>";

const char *cli_shown_name(const char *path)
{
    return strcmp(path, "-") == 0 ? stdin_name : path;
}

/* Prints line `line` and a caret under column `col`, of `file` or of `text`
 * when that is given.  The file is read again only when it changes from one
 * diagnostic to the next. */
static void print_source_line(const char *file, const char *given, int line,
                              int col)
{
    static char cached[PATH_MAX];
    static char *file_text;
    static size_t file_len;
    if (!file[0] || line <= 0 || (file[0] == '<' && !given))
        return;
    char *text = file_text;
    size_t len = file_len;
    if (given) {
        text = (char *)given;
        len = strlen(given);
    } else if (strcmp(cached, file) != 0) {
        free(file_text);
        file_text = text = NULL;
        file_len = len = 0;
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
        file_text = text;
        file_len = len;
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
    bool from_stdin = c && c->stdin_text && strcmp(e->file, stdin_name) == 0;
    print_source_line(e->file, from_stdin ? c->stdin_text : NULL, e->line,
                      e->column);
}

/* Keeps a copy of e for cli_json_failure; a diagnostic that finds no memory
 * is only printed. */
static void keep(cli *c, const cudag_error *e)
{
    if (!c->keep)
        return;
    cudag_error *k = realloc(c->kept, (c->nkept + 1) * sizeof *k);
    if (!k)
        return;
    c->kept = k;
    c->kept[c->nkept++] = *e;
}

void cli_diag(void *user, const cudag_error *e)
{
    cli *c = user;
    if (e->severity == CUDAG_SEV_ERROR)
        c->nerr++;
    else if (e->severity == CUDAG_SEV_WARNING)
        c->nwarn++;
    keep(c, e);
    /* -q prints errors only: a warning goes unprinted, and so do the notes
     * that follow it; an error's notes are part of it. */
    if (e->severity != CUDAG_SEV_NOTE)
        c->hiding = c->quiet && e->severity != CUDAG_SEV_ERROR;
    if (!c->hiding)
        print_one(c, e);
}

void cli_print_error(cli *c, const cudag_error *e)
{
    if (e->severity == CUDAG_SEV_ERROR)
        c->nerr++;
    keep(c, e);
    print_one(c, e);
}

int cli_error(cli *c, int code, const char *fmt, ...)
{
    cudag_error e;
    memset(&e, 0, sizeof e);
    e.code = code;
    e.severity = CUDAG_SEV_ERROR;
    e.count = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.message, sizeof e.message, fmt, ap);
    va_end(ap);
    cli_print_error(c, &e);
    return code;
}

void cli_free(cli *c)
{
    free(c->kept);
    free((char *)c->stdin_text);
    c->kept = NULL;
    c->nkept = 0;
    c->stdin_text = NULL;
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
    case CUDAG_ETIMEOUT:
        return CLI_ETIMEOUT;
    default:
        return CLI_EGRAPH;
    }
}

/* Reads all of standard input into c->stdin_text (once: a second "-" reads
 * what is left, nothing).  Returns CLI_OK or CLI_EIO after a message. */
static int read_stdin(cli *c, size_t *len)
{
    size_t cap = 0, n = 0;
    char *text = NULL;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (n + 4096 + 1) * 2;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fprintf(stderr, "%s %s: out of memory reading standard input\n",
                        c->prog, c->cmd);
                return CLI_EIO;
            }
            text = t;
        }
        size_t got = fread(text + n, 1, cap - n - 1, stdin);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(stdin)) {
        free(text);
        fprintf(stderr, "%s %s: cannot read standard input: %s\n", c->prog,
                c->cmd, strerror(errno));
        return CLI_EIO;
    }
    text[n] = '\0';
    free((char *)c->stdin_text);
    c->stdin_text = text;
    *len = n;
    return CLI_OK;
}

int cli_load(cli *c, const char *path, cudag_graph **g)
{
    cudag_options o = cli_options(c);
    cudag_error err;
    unsigned before = c->nerr;
    int rc;
    if (strcmp(path, "-") == 0) {
        size_t len;
        *g = NULL;
        if ((rc = read_stdin(c, &len)) != CLI_OK)
            return rc;
        path = stdin_name;
        rc = cudag_load_string(c->stdin_text, len, path, &o, g, &err);
    } else {
        rc = cudag_load_file(path, &o, g, &err);
    }
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

const char *cli_plural(unsigned long long n) { return n == 1 ? "" : "s"; }

static void json_kv(const char *key, const char *value)
{
    printf("\"%s\": ", key);
    cli_json_string(stdout, value);
}

void cli_json_failure(cli *c, int status, const char *what)
{
    const char *first = what;
    for (size_t i = 0; i < c->nkept; i++)
        if (c->kept[i].severity == CUDAG_SEV_ERROR) {
            first = c->kept[i].message;
            break;
        }
    printf("{\"error\": {\"exit_status\": %d, ", status);
    json_kv("message", first);
    printf(", \"diagnostics\": [");
    for (size_t i = 0; i < c->nkept; i++) {
        const cudag_error *e = &c->kept[i];
        printf("%s{", i ? ", " : "");
        json_kv("severity", e->severity == CUDAG_SEV_ERROR     ? "error"
                            : e->severity == CUDAG_SEV_WARNING ? "warning"
                                                               : "note");
        printf(", ");
        json_kv("code", cudag_status_name(e->code));
        printf(", ");
        if (e->file[0]) {
            json_kv("file", e->file);
            printf(", \"line\": %d, \"column\": %d, ", e->line, e->column);
        } else {
            printf("\"file\": null, \"line\": null, \"column\": null, ");
        }
        json_kv("message", e->message);
        printf("}");
    }
    printf("]}}\n");
}
