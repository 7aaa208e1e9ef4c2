/* common.c — shared helpers of the CMocka suites (see common.h). */
#include "common.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tdiag_fn(void *user, const cudag_error *e)
{
    tdiag *d = user;
    if (e->severity == CUDAG_SEV_ERROR)
        d->nerr++;
    else if (e->severity == CUDAG_SEV_WARNING)
        d->nwarn++;
    char line[2048];
    int n = cudag_error_format(e, line, sizeof line);
    if (n < 0)
        return;
    size_t room = sizeof d->text - d->len;
    int w = snprintf(d->text + d->len, room, "%s\n", line);
    if (w > 0 && (size_t)w < room)
        d->len += (size_t)w;
}

const cudag_dim3 TG1 = {1, 1, 1}, TB256 = {256, 1, 1};

void tok(int rc, const cudag_error *e)
{
    if (rc != CUDAG_OK)
        print_error("unexpected error %s: %s:%d:%d: %s\n",
                    cudag_status_name(rc), e->file, e->line, e->column,
                    e->message);
    assert_int_equal(rc, CUDAG_OK);
}

void tnop(cudag_graph *g, const char *name)
{
    cudag_error e;
    int rc = cudag_add_kernel(g, name, "nop", TG1, TB256, 0, NULL, 0, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
}

void tedge(cudag_graph *g, const char *from, const char *to,
           cudag_edge_kind kind)
{
    cudag_error e;
    assert_int_equal(cudag_add_edge(g, from, to, kind, &e), CUDAG_OK);
}

void tcheck_ok(cudag_graph *g)
{
    cudag_error e;
    int rc = cudag_check(g, NULL, &e);
    if (rc)
        print_error("%s\n", e.message);
    assert_int_equal(rc, CUDAG_OK);
}

cudag_options topts(tdiag *d, const char *const *defines)
{
    static const char *dirs[2];
    dirs[0] = getenv("CUDAG_KERNELS_DIR");
    dirs[1] = NULL;
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.defines = defines;
    o.include_dirs = dirs[0] ? dirs : NULL;
    if (d) {
        memset(d, 0, sizeof *d);
        o.diag = tdiag_fn;
        o.diag_user = d;
    }
    return o;
}

int tload_opts(const char *yaml, const char *name, const cudag_options *o,
               cudag_graph **g, cudag_error *err)
{
    return cudag_load_string(yaml, strlen(yaml), name ? name : "t.yaml", o, g,
                             err);
}

int tload(const char *yaml, tdiag *d, cudag_graph **g)
{
    cudag_options o = topts(d, NULL);
    cudag_error err;
    return tload_opts(yaml, "t.yaml", &o, g, &err);
}

static const char *under(const char *env, const char *rel)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ & 7];
    const char *root = getenv(env);
    snprintf(b, sizeof bufs[0], "%s/%s", root ? root : ".", rel);
    return b;
}

const char *tsrc(const char *rel) { return under("CUDAG_SOURCE_ROOT", rel); }
const char *tbuild(const char *rel) { return under("CUDAG_BUILD_ROOT", rel); }

int tmkdir_in(char *buf, size_t size, const char *what)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(buf, size, "%s/cudag-test-%s-XXXXXX",
                     tmp && *tmp ? tmp : "/tmp", what);
    return n > 0 && (size_t)n < size && mkdtemp(buf) ? 0 : -1;
}

const char *tmkdir(const char *what)
{
    static char path[4096];
    assert_int_equal(tmkdir_in(path, sizeof path, what), 0);
    return path;
}

static int rm_entry(const char *p, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int trm_tree(const char *dir)
{
    return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void twrite(const char *dir, const char *name, const char *text)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

void tassert_contains(const char *hay, const char *needle, const char *file,
                      int line)
{
    if (!strstr(hay, needle)) {
        print_error("expected to find:\n  %s\nin:\n%s\n", needle, hay);
        _fail(file, line);
    }
}

double trand(uint64_t *s, double lo, double hi)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return lo + (hi - lo) * (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t tseed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)ts.tv_sec;
    const char *env = getenv("CUDAG_TEST_SEED");
    if (env)
        s = strtoull(env, NULL, 0);
    if (!s)
        s = 88172645463325252ull;
    fprintf(stderr, "# seed %llu (CUDAG_TEST_SEED replays it)\n",
            (unsigned long long)s);
    return s;
}

void tchild(void (*fn)(void *arg, char *out, size_t cap), void *arg,
            char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        char buf[4096] = "";
        fn(arg, buf, sizeof buf);
        size_t n = strlen(buf);
        _exit(write(fds[1], buf, n) == (ssize_t)n ? 0 : 2);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

bool tunder_valgrind(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "vgpreload") != NULL;
    if (f)
        fclose(f);
    return found;
}
