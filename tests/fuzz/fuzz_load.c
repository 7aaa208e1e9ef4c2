/* fuzz_load.c — the fuzz harness over the YAML front end: bytes → load
 * (parse, includes, lower, check) → introspection → DOT → plan → lowering
 * again with a changed variable, then the same once more with one
 * allocation made to fail.  "# define: NAME=VALUE" lines at the top of an
 * input (the header of tests/data/bad/ files) become -D defines.
 *
 * Built two ways (tests/fuzz/meson.build):
 *   - with clang and -fsanitize=fuzzer (CUDAG_FUZZ_LIBFUZZER): libFuzzer
 *     calls LLVMFuzzerTestOneInput with generated inputs;
 *   - as a plain program whose main() runs each file named on the command
 *     line (directories are walked) through every variant once: the
 *     regression test of the seed corpus and of tests/fuzz/regressions/.
 *
 * Besides crashes (and what ASan/UBSan see) it checks the API's contract and
 * aborts with a message when one is broken: a failed load returns no graph
 * and fills the error; every diagnostic is well formed and points inside the
 * text; every node is found by its name; DOT and the plan work on a checked
 * graph and agree with it; nothing is left allocated (cudag__alloc_live).
 *
 * Includes are contained: the text is named as a file in a private
 * temporary sandbox (holding copies of a few include targets from the
 * source tree, and a FIFO), and the library's fopen and open are wrapped at
 * link time (-Wl,--wrap=...) so that it reads nothing outside the sandbox,
 * whatever absolute or "../" path an input names.
 */
#include "cudag.h"
#include "base/alloc.h"
#include "ir/graph.h"
#include "front/load.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CUDAG_FUZZ_SOURCE_ROOT
#define CUDAG_FUZZ_SOURCE_ROOT "."
#endif

static void sandbox_remove(void);

/* ---- the sandbox ------------------------------------------------------------ */

/* The library opens files through fopen, which glibc spells fopen64 under
 * _FILE_OFFSET_BITS=64 (meson's default), or through open/open64. */
FILE *__real_fopen(const char *path, const char *mode);
FILE *__real_fopen64(const char *path, const char *mode);
int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

static char sandbox[PATH_MAX];          /* realpath of the temporary dir */
static char top_name[PATH_MAX + 32];    /* the name the input is loaded as */
static char extra_dir[PATH_MAX + 32];   /* the include directory */
/* Set while the library runs: --wrap redirects every call linked into the
 * program, libFuzzer's own (corpus, artifacts) included, and only the
 * library's reads are confined.  (The library never writes a file;
 * libFuzzer writes a crash's input from inside the library's call.) */
static bool confined;

/* True when a read of `path` may go ahead: outside the library, or a file
 * below the sandbox.  *real gets the canonical path to open. */
static bool may_read(const char *path, char real[PATH_MAX])
{
    size_t n = strlen(sandbox);
    if (!confined) {
        snprintf(real, PATH_MAX, "%s", path);
        return true;
    }
    if (!sandbox[0] || !realpath(path, real)) {
        errno = ENOENT;
        return false;
    }
    if (strncmp(real, sandbox, n) != 0 || real[n] != '/') {
        errno = EACCES;
        return false;
    }
    return true;
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
    char real[PATH_MAX];
    if (mode[0] != 'r')
        return __real_fopen(path, mode);
    return may_read(path, real) ? __real_fopen(real, mode) : NULL;
}

FILE *__wrap_fopen64(const char *path, const char *mode)
{
    char real[PATH_MAX];
    if (mode[0] != 'r')
        return __real_fopen64(path, mode);
    return may_read(path, real) ? __real_fopen64(real, mode) : NULL;
}

/* open's third argument exists only when the flags create a file. */
#ifndef O_TMPFILE
#define O_TMPFILE 0
#endif
#define CREATES(flags) ((flags) & (O_CREAT | O_TMPFILE))

static int mode_arg(int flags, va_list ap)
{
    return CREATES(flags) ? va_arg(ap, int) : 0;
}

/* Writes and creations pass through: only reads are confined. */
int __wrap_open(const char *path, int flags, ...)
{
    char real[PATH_MAX];
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    if ((flags & O_ACCMODE) != O_RDONLY || CREATES(flags))
        return __real_open(path, flags, mode);
    return may_read(path, real) ? __real_open(real, flags) : -1;
}

int __wrap_open64(const char *path, int flags, ...)
{
    char real[PATH_MAX];
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    if ((flags & O_ACCMODE) != O_RDONLY || CREATES(flags))
        return __real_open64(path, flags, mode);
    return may_read(path, real) ? __real_open64(real, flags) : -1;
}

/* Copies a file of the source tree into the sandbox, if it exists there. */
static void plant(const char *root, const char *from, const char *to)
{
    char src[PATH_MAX + 256], dst[PATH_MAX + 256];
    snprintf(src, sizeof src, "%s/%s", root, from);
    snprintf(dst, sizeof dst, "%s/%s", sandbox, to);
    FILE *in = fopen(src, "rb");
    if (!in)
        return;
    FILE *out = fopen(dst, "wb");
    if (out) {
        char buf[8192];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, got, out);
        fclose(out);
    }
    fclose(in);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void sandbox_remove(void)
{
    if (sandbox[0])
        nftw(sandbox, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Makes the sandbox:  top/ (the input's directory, with the include targets
 * the seed files name: the schema corpus' common.yaml,
 * lib/, the 17-file chain of tests/data/bad/deep/, child graph files and a
 * module of each form (tests/fuzz/sandbox/, tests/data/code/: CUDA source,
 * fatbin, PTX), and a FIFO, which must
 * not make a load wait), inc/ (what tests/data/bad reaches as ../inc/) and
 * extra/ (the include directory, with the kernels manifests). */
static void sandbox_make(void)
{
    const char *tmp = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cudag-fuzz-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || !realpath(tmpl, sandbox)) {
        perror("fuzz_load: cannot make a sandbox directory");
        exit(1);
    }
    atexit(sandbox_remove);
    static const char *const dirs[] = {"top", "top/lib", "top/deep", "inc",
                                       "extra"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char d[PATH_MAX + 32];
        snprintf(d, sizeof d, "%s/%s", sandbox, dirs[i]);
        mkdir(d, 0700);
    }
    const char *root = getenv("CUDAG_SOURCE_ROOT");
    if (!root || !*root)
        root = CUDAG_FUZZ_SOURCE_ROOT;
    static const char *const files[][2] = {
        /* In the include directory, where it is an installed manifest
         * whose code is read only if it exists: a source tree has no
         * fatbin, and beside the input every graph that includes it would
         * fail to load and be fuzzed as an error only. */
        {"kernels/cudag_kernels.yaml", "extra/cudag_kernels.yaml"},
        {"kernels/legacy.yaml", "extra/legacy.yaml"},
        {"tests/data/schema-good/common.yaml", "top/common.yaml"},
        {"tests/data/good/lib/common.yaml", "top/lib/common.yaml"},
        {"tests/data/good/lib/shapes.yaml", "top/lib/shapes.yaml"},
        {"tests/data/good/extra/found_by_dir.yaml", "extra/found_by_dir.yaml"},
        {"tests/data/inc/cycle_a.yaml", "inc/cycle_a.yaml"},
        {"tests/data/inc/cycle_b.yaml", "inc/cycle_b.yaml"},
        {"tests/data/inc/nodes_a.yaml", "inc/nodes_a.yaml"},
        /* Child graph files, and a module of each form, for the seeds of
         * tests/fuzz/seeds/ (every kind in every container). */
        {"tests/fuzz/sandbox/layer.yaml", "top/layer.yaml"},
        {"tests/fuzz/sandbox/leaf.yaml", "top/leaf.yaml"},
        {"tests/fuzz/sandbox/layer_cu.yaml", "top/layer_cu.yaml"},
        {"tests/data/code/user.cu", "top/user.cu"},
        {"tests/data/code/user.fatbin", "top/user.fatbin"},
        {"tests/data/code/user.ptx", "top/user.ptx"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        plant(root, files[i][0], files[i][1]);
    for (int i = 1; i <= 17; i++) {
        char from[64], to[64];
        snprintf(from, sizeof from, "tests/data/bad/deep/d%02d.yaml", i);
        snprintf(to, sizeof to, "top/deep/d%02d.yaml", i);
        plant(root, from, to);
    }
    char fifo[PATH_MAX + 32];
    snprintf(fifo, sizeof fifo, "%s/top/fifo.yaml", sandbox);
    mkfifo(fifo, 0600);
    snprintf(top_name, sizeof top_name, "%s/top/fuzz.yaml", sandbox);
    snprintf(extra_dir, sizeof extra_dir, "%s/extra", sandbox);
}

/* ---- checks ------------------------------------------------------------------- */

typedef struct input {
    const char *text;
    size_t len;
    uint64_t hash;
    uint32_t lines;             /* line breaks as libyaml counts them, + 1 */
    unsigned ndiag;
    size_t nodes;               /* of the graph loaded, if one was */
    /* "# define: NAME=VALUE" lines at the top of the input (the format of
     * tests/data/bad/) become -D defines. */
    const char *defines[9];
    char defbuf[8][256];
} input;

static void read_defines(input *in)
{
    static const char tag[] = "# define: ";
    size_t at = 0, n = 0;
    while (at < in->len && in->text[at] == '#' && n < 8) {
        const char *line = in->text + at;
        const char *nl = memchr(line, '\n', in->len - at);
        size_t ll = nl ? (size_t)(nl - line) : in->len - at;
        size_t tl = sizeof tag - 1;
        if (ll > tl && ll - tl < sizeof in->defbuf[0] &&
            memcmp(line, tag, tl) == 0 && !memchr(line + tl, '\0', ll - tl)) {
            memcpy(in->defbuf[n], line + tl, ll - tl);
            in->defbuf[n][ll - tl] = '\0';
            in->defines[n] = in->defbuf[n];
            n++;
        }
        at += ll + 1;
    }
    in->defines[n] = NULL;
}

/* A graph this big (the limits allow 1 Mi nodes from a few hundred bytes)
 * takes seconds under the sanitizers: it is loaded, printed and planned
 * once, but not lowered again nor loaded with a failing allocation, so that
 * the fuzzer keeps its pace.  Decided from the input alone, so a finding
 * replays. */
#define BIG_GRAPH 20000u
#define BIG_ALLOCS 100000

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

/* libyaml ends a line at LF, CR, CR LF, NEL (U+0085), LS and PS (U+2028/9). */
static uint32_t count_lines(const uint8_t *p, size_t n)
{
    uint32_t lines = 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n')
            lines++;
        else if (p[i] == '\r' && !(i + 1 < n && p[i + 1] == '\n'))
            lines++;
        else if (p[i] == 0xC2 && i + 1 < n && p[i + 1] == 0x85)
            lines++;
        else if (p[i] == 0xE2 && i + 2 < n && p[i + 1] == 0x80 &&
                 (p[i + 2] == 0xA8 || p[i + 2] == 0xA9))
            lines++;
    }
    return lines;
}

static void check_error_value(const input *in, const cudag_error *e)
{
    REQUIRE(memchr(e->file, '\0', sizeof e->file), "file not terminated");
    REQUIRE(memchr(e->message, '\0', sizeof e->message),
            "message not terminated");
    REQUIRE(e->message[0], "empty message (code %d)", e->code);
    REQUIRE(e->severity >= CUDAG_SEV_ERROR && e->severity <= CUDAG_SEV_NOTE,
            "severity %d", e->severity);
    REQUIRE(e->line >= 0 && e->column >= 0, "position %d:%d", e->line,
            e->column);
    if (e->severity == CUDAG_SEV_ERROR)
        REQUIRE(e->code < 0 && strcmp(cudag_status_name(e->code),
                                      "CUDAG_UNKNOWN") != 0,
                "error with code %d: %s", e->code, e->message);
    /* A position in the input itself lies within its lines; libyaml puts
     * the end of a text without a final line break on the next line. */
    if (e->line > 0 && strcmp(e->file, top_name) == 0)
        REQUIRE((uint32_t)e->line <= in->lines + 1,
                "line %d of a %u-line input: %s", e->line, in->lines,
                e->message);
    char small[16];
    int n = cudag_error_format(e, small, sizeof small);
    REQUIRE(n > 0 && strlen(small) < sizeof small, "cudag_error_format");
}

static bool verbose;     /* CUDAG_FUZZ_VERBOSE: print every diagnostic */

static void on_diag(void *user, const cudag_error *e)
{
    input *in = user;
    in->ndiag++;
    check_error_value(in, e);
    if (verbose) {
        char line[2048];
        cudag_error_format(e, line, sizeof line);
        fprintf(stderr, "  %s\n", line);
    }
}

/* The promises of one graph of a tree (a root or a body): names found in
 * it, kinds, edges inside it; its bodies' the same, one level deeper.  The
 * recursion is bounded by the library's nesting limit.  Adds the tree's
 * nodes and edges to *nodes and *edges. */
static void exercise_nodes(const cudag_graph *g, unsigned depth, size_t *nodes,
                           size_t *edges)
{
    size_t n = cudag_graph_node_count(g), ne = cudag_graph_edge_count(g);
    REQUIRE(depth <= CUDAG__MAX_SUB_DEPTH && g->depth == depth,
            "body depth %u", depth);
    REQUIRE(depth == 0 || g->checked, "a body of a checked graph is not");
    for (size_t i = 0; i < n; i++) {
        const char *name = cudag_graph_node_name(g, i);
        REQUIRE(name && *name, "node %zu has no name", i);
        REQUIRE(strlen(name) <= CUDAG__MAX_FULL_NAME, "node name too long");
        REQUIRE(cudag_graph_find_node(g, name) == (long)i,
                "node '%s' (%zu) not found by its name", name, i);
        REQUIRE(strncmp(name, g->prefix, strlen(g->prefix)) == 0,
                "node '%s' lacks its body's prefix '%s'", name, g->prefix);
        cudag_node_kind k;
        REQUIRE(cudag_graph_node_kind(g, i, &k) == CUDAG_OK &&
                    cudag_node_kind_name(k),
                "node %zu: kind", i);
    }
    for (size_t i = 0; i < ne; i++) {
        size_t f, t;
        cudag_edge_kind k;
        REQUIRE(cudag_graph_edge(g, i, &f, &t, &k) == CUDAG_OK, "edge %zu", i);
        REQUIRE(f < n && t < n && f != t && cudag_edge_kind_name(k),
                "edge %zu: %zu -> %zu kind %d", i, f, t, (int)k);
    }
    REQUIRE(cudag_graph_edge(g, ne, NULL, NULL, NULL) == CUDAG_ERANGE,
            "edge past the end");
    *nodes += n;
    *edges += ne;
    for (uint32_t i = 0; i < g->nsubs; i++) {
        REQUIRE(g->subs[i]->parent == g && g->subs[i]->owner < n,
                "body %u of graph '%s'", i, g->name);
        exercise_nodes(g->subs[i], depth + 1, nodes, edges);
    }
}

/* Everything a checked graph offers, with the API's promises checked. */
static void exercise(const input *in, const cudag_graph *g, bool failing)
{
    size_t n = cudag_graph_node_count(g), tn = 0, te = 0;
    REQUIRE(g->checked, "a loaded graph is not checked");
    REQUIRE(cudag_graph_name(g) != NULL, "no graph name");
    exercise_nodes(g, 0, &tn, &te);
    for (size_t i = 0; i < cudag_graph_buffer_count(g); i++)
        REQUIRE(cudag_graph_buffer_name(g, i), "buffer %zu has no name", i);

    cudag_error err;
    char *text = NULL;
    unsigned flags = (unsigned)(in->hash >> 8) & 3u;
    int rc = cudag_dot(g, flags, &text, &err);
    if (rc == CUDAG_OK)
        REQUIRE(text && strncmp(text, "digraph \"", 9) == 0, "DOT text");
    else
        REQUIRE(failing && rc == CUDAG_ENOMEM && !text, "cudag_dot: %d %s",
                rc, err.message);
    cudag_free(text);

    cudag_plan_info pi;
    text = NULL;
    rc = cudag_plan(g, &pi, &text, &err);
    if (rc == CUDAG_OK) {
        REQUIRE(text, "plan text");
        REQUIRE(pi.nodes == tn &&
                    pi.kernel_nodes + pi.memset_nodes + pi.memcpy_nodes +
                            pi.conditional_nodes + pi.gemm_nodes +
                            pi.capture_nodes + pi.event_record_nodes +
                            pi.event_wait_nodes + pi.host_nodes +
                            pi.child_nodes ==
                        tn,
                "plan: node counts");
        REQUIRE(pi.edges[0] + pi.edges[1] + pi.edges[2] == te, "plan: edges");
        REQUIRE(pi.depth <= n && pi.width <= n && (n == 0) == (pi.depth == 0) &&
                    (n == 0) == (pi.width == 0),
                "plan: depth %zu width %zu of %zu nodes", pi.depth, pi.width,
                n);
    } else {
        REQUIRE(failing && rc == CUDAG_ENOMEM && !text, "cudag_plan: %d %s",
                rc, err.message);
    }
    cudag_free(text);
}

/* A value for a variable, from the input's hash: near the old one, or at an
 * edge of int64_t. */
static int64_t new_value(uint64_t h, int64_t old)
{
    switch ((h >> 16) % 8) {
    case 0: return old < INT64_MAX ? old + 1 : old;
    case 1: return old > INT64_MIN ? old - 1 : old;
    case 2: return 0;
    case 3: return 1;
    case 4: return -1;
    case 5: return INT64_MAX;
    case 6: return INT64_MIN;
    default: return old / 2;
    }
}

/* Lowers g again with one variable changed, twice in a row (the second from
 * the first, which borrows g's source). */
static void relower(const input *in, const cudag_graph *g, bool failing)
{
    if (!g->nvars || g->nnodes > BIG_GRAPH)
        return;
    const cudag_graph *from = g;
    cudag_graph *made[2] = {NULL, NULL};
    for (int round = 0; round < 2; round++) {
        uint64_t h = in->hash >> (20 + 8 * round);
        const cudag__var *v = &from->vars[h % from->nvars];
        cudag_error err;
        cudag_graph *ng = (cudag_graph *)1;
        char value[32];
        snprintf(value, sizeof value, "%lld",
                 (long long)new_value(h, v->value));
        int rc = cudag__relower(from, v->name, value, &ng, &err);
        if (rc != CUDAG_OK) {
            REQUIRE(!ng, "relower failed (%d) but returned a graph", rc);
            REQUIRE(err.code == rc && err.message[0] && err.count >= 1,
                    "relower: error value %d (count %d) for rc %d", err.code,
                    err.count, rc);
            break;
        }
        REQUIRE(ng && ng->source_borrowed, "relower returned no graph");
        exercise(in, ng, failing);
        made[round] = ng;
        from = ng;
    }
    cudag_graph_destroy(made[1]);
    cudag_graph_destroy(made[0]);
}

/* One pass over the input with one set of options. */
static void run(input *in, unsigned variant, bool failing)
{
    const char *dirs[] = {extra_dir, NULL};
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.include_dirs = dirs;
    o.diag = on_diag;
    o.diag_user = in;
    o.defines = in->defines;
    switch (variant) {
    case 1: o.flags = CUDAG_WERROR; break;
    case 2: o.flags = CUDAG_NO_CHECK; break;
    case 3: o.max_errors = 1; o.flags = CUDAG_STRICT; break;
    default: break;
    }
    long live = cudag__alloc_live();
    cudag_graph *g = (cudag_graph *)1;
    cudag_error err;
    in->ndiag = 0;
    confined = true;
    int rc = cudag_load_string(in->text, in->len, top_name, &o, &g, &err);
    if (rc != CUDAG_OK) {
        REQUIRE(!g, "load failed (%d) but returned a graph", rc);
        REQUIRE(err.code == rc, "load returned %d, error value says %d", rc,
                err.code);
        REQUIRE(err.count >= 1 && in->ndiag >= 1,
                "load failed with %d errors counted, %u reported", err.count,
                in->ndiag);
        check_error_value(in, &err);
    } else {
        REQUIRE(g, "load succeeded without a graph");
        in->nodes = cudag_graph_node_count(g);
        REQUIRE(err.count == 0, "load succeeded with %d errors", err.count);
        if (variant == 2) {
            char *text = (char *)1;
            REQUIRE(cudag_dot(g, 0, &text, &err) == CUDAG_ESTATE && !text,
                    "DOT of an unchecked graph");
            rc = cudag_check(g, &o, &err);
            if (rc != CUDAG_OK)
                REQUIRE(err.code == rc && !g->checked,
                        "cudag_check: %d, error %d", rc, err.code);
        }
        if (rc == CUDAG_OK) {
            exercise(in, g, failing);
            relower(in, g, failing);
        }
        cudag_graph_destroy(g);
    }
    confined = false;
    REQUIRE(cudag__alloc_live() == live, "%ld allocations leaked",
            cudag__alloc_live() - live);
}

/* The whole treatment of one input.  With all_variants (the regression
 * runner) every set of options is tried; libFuzzer gets one, picked by the
 * input's hash so that a crash replays. */
static void one_input(const uint8_t *data, size_t size, bool all_variants)
{
    input in;
    memset(&in, 0, sizeof in);
    in.text = (const char *)data;
    in.len = size;
    in.hash = fnv(data, size);
    in.lines = count_lines(data, size);
    read_defines(&in);
    unsigned first = all_variants ? 0 : (unsigned)(in.hash & 3u);
    unsigned last = all_variants ? 3 : first;
    for (unsigned v = first; v <= last; v++) {
        /* Count the allocations of a clean pass, then fail one of them,
         * chosen by the hash: over many inputs every allocation site is
         * made to fail. */
        cudag__alloc_fail_after(-1);
        run(&in, v, false);
        long made = cudag__alloc_fail_after(-1);
        if (made > 0 && made < BIG_ALLOCS && in.nodes <= BIG_GRAPH) {
            cudag__alloc_fail_after(1 + (long)((in.hash >> 24) % (uint64_t)made));
            run(&in, v, true);
            cudag__alloc_fail_after(-1);
        }
    }
}

/* ---- entry points ------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_setup("fuzz_load", sandbox_remove);
    sandbox_make();
    verbose = getenv("CUDAG_FUZZ_VERBOSE") != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_input(data, size, false);
    return 0;
}

#ifndef CUDAG_FUZZ_LIBFUZZER
static void each_input(const uint8_t *data, size_t size)
{
    one_input(data, size, true);
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    return fuzz_regress_main(argc, argv, each_input);
}
#endif
