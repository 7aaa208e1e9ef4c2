/* runner.c — the fuzz harnesses' regression runner (see runner.h). */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned ran;
static const char *current, *harness = "fuzz";
static void (*cleanup_fn)(void);
static void (*input_fn)(const uint8_t *, size_t);

void fuzz_setup(const char *name, void (*cleanup)(void))
{
    harness = name;
    cleanup_fn = cleanup;
}

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: contract broken: ", harness);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (cleanup_fn)
        cleanup_fn();
    abort();
}

/* 60 s per input; CUDAG_FUZZ_WATCHDOG_S gives more where everything runs
 * tens of times slower (the valgrind test setup sets it). */
static unsigned watchdog_s(void)
{
    const char *v = getenv("CUDAG_FUZZ_WATCHDOG_S");
    long s = v ? strtol(v, NULL, 10) : 0;
    return s > 0 && s < 86400 ? (unsigned)s : 60;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = ": an input still runs past the watchdog "
                              "(a hang?): ";
    if (write(STDERR_FILENO, harness, strlen(harness)) < 0 ||
        write(STDERR_FILENO, msg, sizeof msg - 1) < 0 ||
        write(STDERR_FILENO, current, strlen(current)) < 0 ||
        write(STDERR_FILENO, "\n", 1) < 0)
        _exit(1);
    if (cleanup_fn)
        cleanup_fn();
    abort();
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot read %s: %s\n", harness, path,
                strerror(errno));
        exit(1);
    }
    size_t cap = 1 << 16, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory reading %s\n", harness, path);
        exit(1);
    }
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact)
        exit(1);
    memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "%s\n", path);
    current = path;
    alarm(watchdog_s());
    input_fn(exact, len);
    alarm(0);
    free(exact);
    ran++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", harness, path, strerror(errno));
        exit(1);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "%s: cannot open %s\n", harness, path);
        exit(1);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                exit(1);
            names = nn;
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(l)))
            exit(1);
        snprintf(names[n++], l, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_path(names[i]);
        free(names[i]);
    }
    free(names);
}

int fuzz_regress_main(int argc, char **argv,
                      void (*fn)(const uint8_t *data, size_t size))
{
    input_fn = fn;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    signal(SIGALRM, on_alarm);
    for (int i = 1; i < argc; i++)
        run_path(argv[i]);
    printf("%s: %u inputs, every variant, no contract broken\n", harness, ran);
    return 0;
}
