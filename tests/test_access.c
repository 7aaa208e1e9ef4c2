/* test_access.c — access sets and the race check (src/check/access.c): what each
 * kind says a node touches, which pairs of nodes race and where the warning
 * goes, and the proof by mutation: every edge of every shipped and test
 * graph (and of random DAGs) removed in turn, the checker's verdict
 * compared with a brute-force oracle that compares every pair of unordered
 * nodes' byte ranges directly. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "ir/accset.h"
#include "ir/graph.h"
#include "kinds/checker.h"
#include "check/access.h"
#include "check/reach.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dirent.h>
#include <string.h>
#include <time.h>

#define HEAD                                                               \
    "cudag: 1\nmodules: { m: k.fatbin }\n"                                 \
    "kernels:\n"                                                           \
    "  k: { params: {x: ptr, y: ptr, a: f32, n: i64}, pdl: true }\n"       \
    "  r: { params: {x: ptr.read, y: ptr.read, a: f32, n: i64} }\n"        \
    "  w: { params: {x: ptr.read, y: ptr.write, a: f32, n: i64} }\n"       \
    "  s: { params: {x: ptr.read, c: cond} }\n"                            \
    "vars: { N: 64 }\n"                                                    \
    "buffers:\n"                                                           \
    "  x: { type: f32, count: N }\n"                                       \
    "  y: { type: f32, count: N }\n"
#define KN(args) "{ kernel: k, grid: 1, block: 32, args: " args

/* The race warnings in td. */
static int nraces(const tdiag *td)
{
    int n = 0;
    for (const char *p = td->text; (p = strstr(p, "warning: race: ")); p++)
        n++;
    return n;
}

/* Loads and checks yaml; the diagnostics into *td; the status. */
static int load(const char *yaml, tdiag *td, unsigned flags,
                cudag_graph **g)
{
    cudag_options o = topts(td, NULL);
    o.flags |= flags;
    cudag_error err;
    *g = NULL;
    return tload_opts(yaml, "a.yaml", &o, g, &err);
}

static void race_at_both_nodes(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "nodes:\n"
                       "  a: " KN("[x, y, 1.0, N] }") "\n"
                       "  b: " KN("[y, x, 1.0, N] }") "\n",
                  &td, 0, &g);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_equal(nraces(&td), 2);
    assert_diag_contains(&td, "a.yaml:13:46: warning: race: node 'a' "
                              "(read-write) and node 'b' (read-write) may "
                              "run at the same time and both touch bytes "
                              "[0, 256) of buffer 'x'");
    assert_diag_contains(&td, "a.yaml:14:49: warning: race: node 'b'");
    assert_diag_contains(&td, "(add 'after: [a]' to 'b'); the extent of "
                              "node 'a' in buffer 'x' is unknown");
    cudag_graph_destroy(g);
    /* --strict makes it an error. */
    rc = load(HEAD "nodes:\n"
                   "  a: " KN("[x, y, 1.0, N] }") "\n"
                   "  b: " KN("[y, x, 1.0, N] }") "\n",
              &td, CUDAG_WERROR, &g);
    assert_int_equal(rc, CUDAG_ECHECK);
    assert_true(td.nerr >= 1);
    cudag_graph_destroy(g);
}

/* Which pairs race: one case per line, the count of warnings expected. */
static void which_pairs_race(void **state)
{
    (void)state;
    static const struct {
        const char *nodes;
        int warnings;
    } cases[] = {
        /* Ordered by a full or programmatic edge: no race. */
        {"  a: " KN("[x, y, 1.0, N] }") "\n"
         "  b: " KN("[y, x, 1.0, N], after: [a] }") "\n", 0},
        {"  a: " KN("[x, y, 1.0, N] }") "\n"
         "  b: " KN("[y, x, 1.0, N], after: [a: programmatic] }") "\n", 0},
        /* A launch-order edge orders the launches, not memory. */
        {"  a: " KN("[x, y, 1.0, N] }") "\n"
         "  b: " KN("[y, x, 1.0, N], after: [a: launch_order] }") "\n", 2},
        /* Two readers never race. */
        {"  a: { kernel: r, grid: 1, block: 32, args: [x, y, 1.0, N] }\n"
         "  b: { kernel: r, grid: 1, block: 32, args: [y, x, 1.0, N] }\n", 0},
        /* A reader and a writer of y. */
        {"  a: { kernel: r, grid: 1, block: 32, args: [x, y, 1.0, N] }\n"
         "  b: { kernel: w, grid: 1, block: 32, args: [x, y, 1.0, N] }\n", 2},
        /* Disjoint counts: no race; overlapping ones race. */
        {"  a: " KN("[x: 32, y: 32, 1.0, N] }") "\n"
         "  b: " KN("[x + 32: 32, y + 32: 32, 1.0, N] }") "\n", 0},
        {"  a: " KN("[x: 33, y: 32, 1.0, N] }") "\n"
         "  b: " KN("[x + 32: 32, y + 32: 32, 1.0, N] }") "\n", 2},
        /* Memsets and memcpys are exact. */
        {"  a: { memset: x, count: 32, value: 0 }\n"
         "  b: { memset: x + 32, value: 1 }\n", 0},
        {"  a: { memset: x, count: 33, value: 0 }\n"
         "  b: { memcpy: y, from: x + 32, count: 4 }\n", 2},
        /* A path through a third node orders them. */
        {"  a: { memset: x, value: 0 }\n"
         "  m: { memset: y, value: 0, after: [a] }\n"
         "  b: { memset: x, value: 1, after: [m] }\n", 0},
        /* The same node reading and writing one buffer is no race. */
        {"  a: " KN("[x, x, 1.0, N] }") "\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[4096];
        snprintf(yaml, sizeof yaml, "%snodes:\n%s", HEAD, cases[i].nodes);
        tdiag td;
        cudag_graph *g;
        int rc = load(yaml, &td, 0, &g);
        if (rc != CUDAG_OK || nraces(&td) != cases[i].warnings)
            print_error("case %zu:\n%s\n%s", i, cases[i].nodes, td.text);
        assert_int_equal(rc, CUDAG_OK);
        assert_int_equal(nraces(&td), cases[i].warnings);
        cudag_graph_destroy(g);
    }
}

/* A body's node against the rest of the graph, named through its owner. */
static void body_against_graph(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "conditions: { c: { default: 0 } }\n"
                       "nodes:\n"
                       "  a: { memset: y, value: 0 }\n"
                       "  loop:\n"
                       "    while: c\n"
                       "    body:\n"
                       "      step: " KN("[x, y, 1.0, N] }") "\n"
                       "      test: { kernel: s, grid: 1, block: 32, "
                       "args: [x, c], after: [step] }\n",
                  &td, 0, &g);
    assert_int_equal(rc, CUDAG_OK);
    assert_diag_contains(&td, "race: node 'loop.step' (in 'loop') "
                              "(read-write) and node 'a' (write)");
    cudag_graph_destroy(g);
}

static void extent_checked(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "nodes:\n  a: " KN("[x + 60: 5, y, 1.0, N] }") "\n",
                  &td, 0, &g);
    assert_int_not_equal(rc, CUDAG_OK);
    assert_diag_contains(&td, "node 'a': argument 'x': 5 elements at offset "
                              "60 are outside buffer 'x' (64 elements)");
    rc = load(HEAD "nodes:\n  a: " KN("[x: 0, y, 1.0, N] }") "\n", &td, 0,
              &g);
    assert_int_not_equal(rc, CUDAG_OK);
    assert_diag_contains(&td, "element count 0 must be at least 1");
    rc = load(HEAD "nodes:\n  a: " KN("[x, y, 1.0: 2, N] }") "\n", &td, 0,
              &g);
    assert_int_not_equal(rc, CUDAG_OK);
    assert_diag_contains(&td, "an element count (': N') follows a buffer "
                              "argument only");
    rc = load("cudag: 1\nmodules: { m: k.fatbin }\n"
              "kernels:\n  k: { params: {x: ptr.maybe} }\nnodes: {}\n",
              &td, 0, &g);
    assert_int_not_equal(rc, CUDAG_OK);
    assert_diag_contains(&td, "unknown access 'maybe' (a ptr parameter is "
                              "ptr.read, ptr.write or ptr.rw)");
}

static void plan_lists_sets(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "nodes:\n"
                       "  a: { kernel: w, grid: 1, block: 32, "
                       "args: [x + 4: 8, y, 1.0, N] }\n"
                       "  b: { memcpy: y, from: x, count: 2, after: [a] }\n",
                  &td, 0, &g);
    assert_int_equal(rc, CUDAG_OK);
    char *json = NULL;
    cudag_error err;
    assert_int_equal(cudag_plan_access(g, &json, &err), CUDAG_OK);
    assert_string_equal(
        json,
        "[{\"node\": \"a\", \"access\": [{\"buffer\": \"x\", \"mode\": "
        "\"read\", \"bytes\": [16, 48], \"extent\": \"exact\"}, "
        "{\"buffer\": \"y\", \"mode\": \"write\", \"bytes\": [0, 256], "
        "\"extent\": \"to the end\"}]}, "
        "{\"node\": \"b\", \"access\": [{\"buffer\": \"x\", \"mode\": "
        "\"read\", \"bytes\": [0, 8], \"extent\": \"exact\"}, "
        "{\"buffer\": \"y\", \"mode\": \"write\", \"bytes\": [0, 8], "
        "\"extent\": \"exact\"}]}]");
    cudag_free(json);
    cudag_graph_destroy(g);
}

/* ---- proof by mutation ----------------------------------------------------- */

typedef struct tally {
    unsigned graphs, edges, races, quiet, agree;
    unsigned ordered, needed;   /* order: program DAGs, edges each needed */
} tally;

/* The oracle's ordering: every memory-edge path, by a bitset closure in
 * topological order (nodes of one graph only). */
static uint64_t *closure(const cudag_graph *g, size_t *words)
{
    size_t w = ((size_t)g->nnodes + 63) / 64;
    uint64_t *r = calloc((size_t)g->nnodes * w + 1, sizeof *r);
    assert_non_null(r);
    /* Repeat until nothing changes: no topological order is trusted. */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < g->nedges; i++) {
            const cudag__edge *e = &g->edges[i];
            if (!cudag__edge_orders_memory(g, e))
                continue;
            uint64_t *to = r + (size_t)e->to * w, *from = r + (size_t)e->from * w;
            if (!(to[e->from / 64] >> (e->from % 64) & 1)) {
                to[e->from / 64] |= UINT64_C(1) << (e->from % 64);
                changed = true;
            }
            for (size_t k = 0; k < w; k++)
                if ((to[k] | from[k]) != to[k]) {
                    to[k] |= from[k];
                    changed = true;
                }
        }
    }
    *words = w;
    return r;
}

/* Does any pair of unordered nodes of g (or of any graph of its tree)
 * touch overlapping bytes, one writing? */
static bool oracle_race(const cudag_graph *g)
{
    size_t w;
    uint64_t *r = closure(g, &w);
    cudag__accset *sets = calloc((size_t)g->nnodes + 1, sizeof *sets);
    assert_non_null(sets);
    for (uint32_t v = 0; v < g->nnodes; v++)
        cudag__node_access(&sets[v], g, v);
    bool race = false;
    for (uint32_t a = 0; a < g->nnodes && !race; a++)
        for (uint32_t b = a + 1; b < g->nnodes && !race; b++) {
            if (r[(size_t)b * w + a / 64] >> (a % 64) & 1 ||
                r[(size_t)a * w + b / 64] >> (b % 64) & 1)
                continue;
            for (uint32_t i = 0; i < sets[a].n && !race; i++)
                for (uint32_t j = 0; j < sets[b].n && !race; j++)
                    race = cudag__access_conflict(&sets[a].a[i],
                                                  &sets[b].a[j]);
        }
    for (uint32_t v = 0; v < g->nnodes; v++)
        free(sets[v].a);
    free(sets);
    free(r);
    for (uint32_t i = 0; i < g->nsubs && !race; i++)
        race = oracle_race(g->subs[i]);
    return race;
}

static void count_races(void *user, const cudag_error *e)
{
    if (strncmp(e->message, "race: ", 6) == 0)
        ++*(unsigned *)user;
}

/* Checks g (its root); true when the checker reports a race. */
static bool checker_race(cudag_graph *g)
{
    unsigned races = 0;
    cudag_options o = topts(NULL, NULL);
    o.diag = count_races;
    o.diag_user = &races;
    cudag__diag d;
    cudag_error err;
    cudag__diag_init(&d, &o, &err);
    cudag__check(g, &d);
    return races > 0;
}

/* Removes each edge of graph h (of root g) in turn and compares. */
static void mutate_graph(cudag_graph *g, cudag_graph *h, tally *t)
{
    for (uint32_t i = 0; i < h->nedges; i++) {
        cudag__edge saved = h->edges[i];
        memmove(&h->edges[i], &h->edges[i + 1],
                (h->nedges - i - 1) * sizeof *h->edges);
        h->nedges--;
        cudag__graph_touch(g);
        t->edges++;
        bool found = checker_race(g);
        bool truth = oracle_race(g);
        if (found) {
            t->races++;
            /* The oracle compares the same sets (an unknown extent runs to
             * the buffer's end in both): no false alarm beyond those. */
            if (!truth)
                print_error("false alarm in '%s' without edge %s -> %s\n",
                            g->name, h->nodes[saved.from].name,
                            h->nodes[saved.to].name);
            assert_true(truth);
            t->agree++;
        } else {
            t->quiet++;
            if (!truth)
                t->agree++;
            else
                print_error("missed race in '%s' without edge %s -> %s\n",
                            g->name, h->nodes[saved.from].name,
                            h->nodes[saved.to].name);
            assert_false(truth);
        }
        memmove(&h->edges[i + 1], &h->edges[i],
                (h->nedges - i) * sizeof *h->edges);
        h->edges[i] = saved;
        h->nedges++;
        cudag__graph_touch(g);
    }
    for (uint32_t s = 0; s < h->nsubs; s++)
        mutate_graph(g, h->subs[s], t);
}

static void mutate_file(const char *path, tally *t)
{
    cudag_options o = topts(NULL, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    if (cudag_load_file(path, &o, &g, &err) != CUDAG_OK)
        return;         /* a file that does not load has nothing to mutate */
    /* A graph that races as written is mutated too: with an edge fewer
     * the checker must still find one. */
    t->graphs++;
    /* A graph written with `order: program` keeps the edges it inferred
     * and infers none again: each removal then stands. */
    g->order = CUDAG__ORDER_EDGES;
    mutate_graph(g, g, t);
    cudag_graph_destroy(g);
}

static void mutate_dir(const char *dir, tally *t)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        mutate_file(path, t);
    }
    closedir(d);
}

/* Random DAGs: kernels over a few small buffers, each argument with a
 * random range (a quarter without a count: to the end), x read, y written,
 * z both.  Every conflicting pair gets an edge (full or programmatic), so the
 * graph is race-free as written, plus random extra edges of every kind
 * forward in node order; removing each edge then probes the checker. */
typedef struct racc {
    int buf, lo, hi, mode;
} racc;

static void reach_agrees(const cudag_graph *g)
{
    bool *orders = calloc((size_t)g->nedges + 1, sizeof *orders);
    assert_non_null(orders);
    for (uint32_t i = 0; i < g->nedges; i++)
        orders[i] = cudag__edge_orders_memory(g, &g->edges[i]);
    cudag__reach a, b;
    assert_true(cudag__reach_init(&a, g, &g->topo, orders, 0));
    assert_true(cudag__reach_init(&b, g, &g->topo, orders, 1));
    assert_non_null(a.table);
    assert_null(b.table);
    for (uint32_t u = 0; u < g->nnodes; u++)
        for (uint32_t x = 0; x < g->nnodes; x++)
            assert_int_equal(cudag__reach_query(&a, u, x),
                             cudag__reach_query(&b, u, x));
    cudag__reach_free(&a);
    cudag__reach_free(&b);
    free(orders);
}

/* The random DAG `yaml` without its edges, with `order: program`: the
 * inferred edges leave no race, and each is needed (without it the oracle
 * finds one: the reduction kept nothing a path implies). */
static void order_random(tally *t, const char *yaml, int round)
{
    static char out[1 << 15];
    size_t len = 0;
    for (const char *p = yaml; *p;) {
        if (strncmp(p, "nodes:\n", 7) == 0)
            len += (size_t)snprintf(out + len, sizeof out - len,
                                    "order: program\n");
        if (strncmp(p, ", after: [", 10) == 0) {
            p = strchr(p + 10, ']') + 1;
            continue;
        }
        out[len++] = *p++;
    }
    out[len] = '\0';
    cudag_options o = topts(NULL, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    if (tload_opts(out, "o.yaml", &o, &g, &err) != CUDAG_OK)
        fail_msg("ordered DAG %d does not load: %s\n%s", round, err.message,
                 out);
    t->ordered++;
    if (checker_race(g) || oracle_race(g))
        fail_msg("ordered DAG %d races:\n%s", round, out);
    for (uint32_t i = 0; i < g->nedges; i++) {
        cudag__edge saved = g->edges[i];
        memmove(&g->edges[i], &g->edges[i + 1],
                (g->nedges - i - 1) * sizeof *g->edges);
        g->nedges--;
        cudag__graph_touch(g);
        /* Checked again, the graph would infer the edge anew: the oracle
         * and the checker see it without (no re-inference: order off). */
        g->order = CUDAG__ORDER_EDGES;
        bool truth = oracle_race(g), found = checker_race(g);
        if (!truth || !found)
            fail_msg("ordered DAG %d: edge %s -> %s is not needed "
                     "(oracle %d, checker %d):\n%s",
                     round, g->nodes[saved.from].name,
                     g->nodes[saved.to].name, truth, found, out);
        t->needed++;
        g->order = CUDAG__ORDER_PROGRAM;
        memmove(&g->edges[i + 1], &g->edges[i],
                (g->nedges - i) * sizeof *g->edges);
        g->edges[i] = saved;
        g->nedges++;
        cudag__graph_touch(g);
    }
    cudag_graph_destroy(g);
}

static void mutate_random(tally *t, uint64_t seed)
{
    uint64_t st = seed;
    static const char *const bufs[] = {"p", "q", "u"};
    static const int modes[] = {CUDAG__ACC_READ, CUDAG__ACC_WRITE,
                                CUDAG__ACC_RW};
    /* Under valgrind (100 s for the whole test at 150) a tenth: the same
     * code, fewer shapes. */
    int rounds = tunder_valgrind() ? 15 : 150;
    for (int round = 0; round < rounds; round++) {
        char yaml[1 << 15];
        racc acc[12][3];
        size_t len = (size_t)snprintf(
            yaml, sizeof yaml,
            "cudag: 1\nmodules: { m: k.fatbin }\nkernels:\n"
            "  k: { params: {x: ptr.read, y: ptr.write, z: ptr}, pdl: true }\n"
            "buffers:\n  p: { type: f32, count: 64 }\n"
            "  q: { type: f32, count: 64 }\n  u: { type: f32, count: 64 }\n"
            "nodes:\n");
        int n = 3 + (int)trand(&st, 0, 9);
        for (int v = 0; v < n; v++) {
            len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                                    "  n%d: { kernel: k, grid: 1, block: 32, "
                                    "args: [", v);
            for (int a = 0; a < 3; a++) {
                int off = (int)trand(&st, 0, 48);
                int cnt = 1 + (int)trand(&st, 0, 16);
                int b = (int)trand(&st, 0, 3);
                bool to_end = trand(&st, 0, 4) < 1;
                acc[v][a] = (racc){b, off, to_end ? 64 : off + cnt, modes[a]};
                if (to_end)
                    len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                                            "%s%s + %d", a ? ", " : "",
                                            bufs[b], off);
                else
                    len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                                            "%s%s + %d: %d", a ? ", " : "",
                                            bufs[b], off, cnt);
            }
            len += (size_t)snprintf(yaml + len, sizeof yaml - len, "]");
            char after[1024];
            size_t alen = 0;
            for (int u = 0; u < v; u++) {
                bool conflict = false;
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        const racc *x = &acc[u][i], *y = &acc[v][j];
                        conflict |= x->buf == y->buf && x->lo < y->hi &&
                                    y->lo < x->hi &&
                                    ((x->mode | y->mode) & CUDAG__ACC_WRITE);
                    }
                double p = trand(&st, 0, 1);
                if (!conflict && p > 0.3)
                    continue;
                const char *kind = p < 0.15 ? ": programmatic"
                                   : !conflict && p < 0.25 ? ": launch_order"
                                                           : "";
                alen += (size_t)snprintf(after + alen, sizeof after - alen,
                                         "%sn%d%s", alen ? ", " : "", u,
                                         kind);
            }
            if (alen)
                len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                                        ", after: [%s]", after);
            len += (size_t)snprintf(yaml + len, sizeof yaml - len, " }\n");
        }
        cudag_options o = topts(NULL, NULL);
        cudag_graph *g = NULL;
        cudag_error err;
        if (tload_opts(yaml, "r.yaml", &o, &g, &err) != CUDAG_OK)
            fail_msg("random DAG %d does not load: %s\n%s", round,
                     err.message, yaml);
        t->graphs++;
        /* The reach table and the fallback search agree on every pair. */
        reach_agrees(g);
        /* Race-free as written: the checker must say so. */
        if (checker_race(g))
            fail_msg("random DAG %d: a race reported in a graph that has "
                     "none:\n%s", round, yaml);
        mutate_graph(g, g, t);
        cudag_graph_destroy(g);
        order_random(t, yaml, round);
    }
}

static void mutation_proof(void **state)
{
    (void)state;
    tally t = {0};
    clock_t c0 = clock();
    mutate_dir(tsrc("graphs"), &t);
    mutate_dir(tsrc("tests/data/good"), &t);
    mutate_dir(tsrc("tests/data/schema-good"), &t);
    mutate_dir(tsrc("tests/data/matrix"), &t);
    uint64_t seed = tseed();
    mutate_random(&t, seed);
    printf("mutation: %u graphs, %u edges removed, %u with a race reported, "
           "%u without, oracle agrees on %u of %u (%.1f s)\n",
           t.graphs, t.edges, t.races, t.quiet, t.agree, t.edges,
           (double)(clock() - c0) / CLOCKS_PER_SEC);
    printf("order: program: %u random DAGs without edges, %u edges "
           "inferred, each needed (the oracle races without it)\n",
           t.ordered, t.needed);
    assert_int_equal(t.agree, t.edges);
    assert_true(t.edges > 0);
}

/* ---- order: program -------------------------------------------------------- */

/* The edges of checked graph g (not its bodies) as "a>b" (full), "a~b"
 * (programmatic) or "a.b" (launch order), with a '*' after an inferred
 * one, sorted, one space between. */
static void edge_text(const cudag_graph *g, char *out, size_t cap)
{
    char lines[64][128];
    uint32_t n = g->nedges < 64 ? g->nedges : 64;
    for (uint32_t i = 0; i < n; i++) {
        const cudag__edge *e = &g->edges[i];
        snprintf(lines[i], sizeof lines[i], "%s%c%s%s",
                 g->nodes[e->from].name, ">~."[e->kind],
                 g->nodes[e->to].name, e->inferred ? "*" : "");
    }
    qsort(lines, n, sizeof lines[0],
          (int (*)(const void *, const void *))strcmp);
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "",
                                lines[i]);
}

/* Which edges the order needs: one case per line. */
static void order_infers_minimal_edges(void **state)
{
    (void)state;
    static const struct {
        const char *nodes;
        const char *edges;
    } cases[] = {
        /* Fork-join: three readers of x write a buffer each (parallel). */
        {"  a: { kernel: w, grid: 1, block: 32, args: [x, {y: 16}, 1.0, N] }\n"
         "  b: { kernel: w, grid: 1, block: 32, args: [x, {y + 16: 16}, 1.0, N] }\n"
         "  c: { kernel: r, grid: 1, block: 32, args: [y, x, 1.0, N] }\n",
         "a>c* b>c*"},
        /* Read after write, then write after read; the write after write
         * a -> c goes through b. */
        {"  a: { kernel: w, grid: 1, block: 32, args: [x, y, 1.0, N] }\n"
         "  b: { kernel: r, grid: 1, block: 32, args: [y, x, 1.0, N] }\n"
         "  c: { kernel: w, grid: 1, block: 32, args: [x, y, 1.0, N] }\n",
         "a>b* b>c*"},
        /* Write after write alone; kernels that wait take programmatic. */
        {"  a: " KN("[x, y, 1.0, N] }") "\n"
         "  b: " KN("[x, y, 1.0, N] }") "\n",
         "a~b*"},
        /* Readers only: no edge at all. */
        {"  a: { kernel: r, grid: 1, block: 32, args: [x, y, 1.0, N] }\n"
         "  b: { kernel: r, grid: 1, block: 32, args: [y, x, 1.0, N] }\n",
         ""},
        /* Disjoint memsets run side by side; a memcpy reading both waits
         * for both (full edges: a memset is not a kernel). */
        {"  a: { memset: x, count: 32, value: 0 }\n"
         "  b: { memset: x + 32, value: 1 }\n"
         "  c: { memcpy: y, from: x }\n",
         "a>c* b>c*"},
        /* A written edge stays, is not inferred again, and makes an
         * inferred one redundant. */
        {"  a: { memset: x, value: 0 }\n"
         "  m: { memset: y, value: 0, after: [a] }\n"
         "  b: { memcpy: y, from: x, after: [m] }\n",
         "a>m m>b"},
        /* A written launch-order edge orders no memory: the inferred
         * full edge is still needed, and is one (the same pair once). */
        {"  a: " KN("[x: 8, y: 8, 1.0, N] }") "\n"
         "  q: " KN("[x + 32: 8, y + 32: 8, 1.0, N], after: [a: launch_order] }") "\n"
         "  b: " KN("[x + 4: 8, y + 36: 8, 1.0, N] }") "\n",
         "a.q a~b* q~b*"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[4096], got[2048];
        snprintf(yaml, sizeof yaml, "%sorder: program\nnodes:\n%s", HEAD,
                 cases[i].nodes);
        tdiag td;
        cudag_graph *g;
        int rc = load(yaml, &td, 0, &g);
        if (rc != CUDAG_OK)
            fail_msg("case %zu: %s", i, td.text);
        edge_text(g, got, sizeof got);
        if (strcmp(got, cases[i].edges) != 0 || nraces(&td))
            print_error("case %zu:\n%s\ngot: %s\n%s", i, cases[i].nodes,
                        got, td.text);
        assert_string_equal(got, cases[i].edges);
        assert_int_equal(nraces(&td), 0);
        cudag_graph_destroy(g);
    }
}

/* Why each inferred edge exists, in plan's text and JSON; a body's nodes
 * are ordered among themselves and, through their owner, with the rest; a
 * kernel that sets a condition comes before the node that reads it. */
static void order_says_why(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "order: program\n"
                       "conditions: { c: { default: 1 } }\n"
                       "nodes:\n"
                       "  a: { memset: x, count: 8, value: 0 }\n"
                       "  s: { kernel: s, grid: 1, block: 1, args: [x, c] }\n"
                       "  loop:\n"
                       "    if: c\n"
                       "    then:\n"
                       "      u: { memset: y, value: 1 }\n"
                       "      v: { kernel: r, grid: 1, block: 32, args: "
                       "[y, y, 1.0, N] }\n",
                  &td, 0, &g);
    if (rc != CUDAG_OK)
        fail_msg("%s", td.text);
    assert_int_equal(nraces(&td), 0);
    char got[2048];
    edge_text(g, got, sizeof got);
    /* s sets the condition the if node reads: an edge the access sets do
     * not show, from the checks' record of setters and readers. */
    assert_string_equal(got, "a>s* s>loop*");
    assert_int_equal(g->nsubs, 1);
    edge_text(g->subs[0], got, sizeof got);
    assert_string_equal(got, "loop.then.u>loop.then.v*");
    char *text = NULL;
    cudag_error err;
    assert_int_equal(cudag_plan(g, NULL, &text, &err), CUDAG_OK);
    assert_non_null(strstr(text,
                           "inferred edges (order: program):\n"
                           "  a -> s (full): read after write, buffer 'x' "
                           "bytes [0, 32) (an extent is unknown: taken to "
                           "the buffer's end; state it with 'x + OFFSET: "
                           "COUNT')\n"
                           "  s -> loop (full): read after write, condition "
                           "'c'\n"
                           "  loop.then.u -> loop.then.v (full): read after "
                           "write, buffer 'y' bytes [0, 256) (an extent is "
                           "unknown: taken to the buffer's end; state it "
                           "with 'y + OFFSET: COUNT')\n"));
    cudag_free(text);
    char *json = NULL;
    assert_int_equal(cudag_plan_access(g, &json, &err), CUDAG_OK);
    assert_non_null(strstr(json, "\"inferred\": [{\"from\": \"a\", "
                                 "\"kind\": \"full\", \"why\": \"read "
                                 "after write\", \"buffer\": \"x\", "
                                 "\"bytes\": [0, 32], \"extent\": \"to "
                                 "the end\"}]"));
    assert_non_null(strstr(json, "{\"from\": \"s\", \"kind\": \"full\", "
                                 "\"why\": \"read after write\", "
                                 "\"condition\": \"c\"}"));
    cudag_free(json);
    cudag_graph_destroy(g);
}

/* Each allocation of a check that infers edges fails in turn: CUDAG_ENOMEM,
 * nothing leaked, and once none fails the same edges as at first. */
static void order_survives_oom(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g;
    int rc = load(HEAD "order: program\n"
                       "conditions: { c: { default: 1 } }\n"
                       "nodes:\n"
                       "  a: { memset: x, count: 8, value: 0 }\n"
                       "  b: { kernel: w, grid: 1, block: 32, args: "
                       "[x, {y: 8}, 1.0, N] }\n"
                       "  d: { kernel: w, grid: 1, block: 32, args: "
                       "[x, {y + 8: 8}, 1.0, N] }\n"
                       "  s: { kernel: s, grid: 1, block: 1, args: [y, c] }\n"
                       "  loop:\n"
                       "    if: c\n"
                       "    then:\n"
                       "      u: { memset: y, value: 1 }\n"
                       "      v: { kernel: r, grid: 1, block: 32, args: "
                       "[y, y, 1.0, N] }\n",
                  &td, 0, &g);
    if (rc != CUDAG_OK)
        fail_msg("%s", td.text);
    char want[2048], body[2048], got[2048];
    edge_text(g, want, sizeof want);
    edge_text(g->subs[0], body, sizeof body);
    assert_string_equal(want, "a>b* a>d* b>s* d>s* s>loop*");
    long n;
    for (n = 1;; n++) {
        cudag__graph_touch(g);
        long live = cudag__alloc_live();
        cudag_options o = topts(NULL, NULL);
        cudag_error e;
        cudag__alloc_fail_after(n);
        rc = cudag_check(g, &o, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc == CUDAG_ENOMEM) {
            assert_int_equal(cudag__alloc_live(), live);
            assert_false(g->checked);
            continue;
        }
        assert_int_equal(rc, CUDAG_OK);
        assert_true(made < n);
        break;
    }
    assert_true(n > 10);
    edge_text(g, got, sizeof got);
    assert_string_equal(got, want);
    edge_text(g->subs[0], got, sizeof got);
    assert_string_equal(got, body);
    cudag_graph_destroy(g);
}

/* ---- the cost ----------------------------------------------------------- */

/* The race check's work on graph `yaml` (checked without a race). */
static cudag__race_stats race_work(const char *yaml)
{
    cudag_options o = topts(NULL, NULL);
    cudag_graph *g = NULL;
    cudag_error err;
    if (tload_opts(yaml, "w.yaml", &o, &g, &err) != CUDAG_OK)
        fail_msg("%s", err.message);
    cudag__diag d;
    cudag__diag_init(&d, &o, &err);
    cudag__checker c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.d = &d;
    cudag__race_stats st;
    assert_true(cudag__check_races(&c, &g->topo, &st));
    assert_int_equal(st.races, 0);
    cudag_graph_destroy(g);
    return st;
}

/* Linear work on the shapes tools/gen_access_graph.py times at 100 000
 * nodes, counted, not timed: a fork-join repeated (each join reads what
 * eight slice writers wrote), a chain that reads what its first node wrote
 * (a reader far from its writer), and independent slice writers (wide: the
 * fallback search, which finds no edge to follow).  The quadratic scan this
 * replaced compared ~n^2/2 pairs in the first two. */
static void race_work_is_linear(void **state)
{
    (void)state;
    /* Smaller under valgrind: the counts, not the time, are asserted. */
    const int L = tunder_valgrind() ? 40 : 400;
    const int N = tunder_valgrind() ? 300 : 3000;
    static char yaml[1 << 12];
    static const char head[] =
        "cudag: 1\nmodules: { m: k.fatbin }\nkernels:\n"
        "  k: { params: {x: ptr.read, y: ptr.write, z: ptr}, pdl: true }\n"
        "vars: { K: 64, L: %d, N: %d }\n"
        "buffers:\n  x: { type: f32, count: 8*K }\n"
        "  y: { type: f32, count: 8*K }\n  z: { type: f32, count: N*K }\n"
        "nodes:\n";
    int len = snprintf(yaml, sizeof yaml, head, L, N);
    snprintf(yaml + len, sizeof yaml - len,
             "  l[i in L]:\n"
             "    w[j in 8]: { kernel: k, grid: 1, block: 32, args: "
             "[{x + j*K: K}, {y + j*K: K}, {z + j*K: K}], "
             "after: [\"l[i-1].j\"] }\n"
             "    j: { kernel: k, grid: 1, block: 32, args: [y, x, z + 8*K], "
             "after: [\"w[0]\", \"w[1]\", \"w[2]\", \"w[3]\", \"w[4]\", "
             "\"w[5]\", \"w[6]\", \"w[7]\"] }\n");
    cudag__race_stats st = race_work(yaml);
    assert_int_equal(st.accesses, 3 * 9 * L);
    assert_int_equal(st.searching, 0);
    assert_true(st.compared <= 4 * st.accesses);
    snprintf(yaml + len, sizeof yaml - len,
             "  first: { kernel: k, grid: 1, block: 32, args: [x, y, z] }\n"
             "  s[i in N]: { kernel: k, grid: 1, block: 32, args: "
             "[y, {z + i*K: K}, {x + 0: 1}], after: [\"s[i-1]\", first] }\n");
    st = race_work(yaml);
    assert_int_equal(st.searching, 0);
    assert_true(st.compared <= 4 * st.accesses);
    snprintf(yaml + len, sizeof yaml - len,
             "  s[i in N]: { kernel: k, grid: 1, block: 32, args: "
             "[x, {z + i*K: K}, {z + i*K: K}] }\n");
    st = race_work(yaml);
    /* Past 1 024 chains the table gives way to searches (reach.c). */
    assert_int_equal(st.searching, N > 1024);
    assert_true(st.compared <= 4 * st.accesses);
    assert_true(st.searched <= 4 * st.accesses);
}

/* ---- the C API: access modes and extents --------------------------------- */

/* cudag_set_param_access and cudag_set_kernel_arg_count state what YAML's
 * ptr.read and `x + o: n` do, for graphs built without a file; their
 * errors leave the graph as it was. */
static void api_states_modes_and_extents(void **state)
{
    (void)state;
    static const cudag_param p[] = {{"x", CUDAG_TYPE_PTR},
                                    {"y", CUDAG_TYPE_PTR},
                                    {"n", CUDAG_TYPE_I64}};
    cudag_graph *g = NULL;
    cudag_error e;
    assert_int_equal(cudag_graph_create("api", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_module(g, "m", "m.fatbin", &e), CUDAG_OK);
    assert_int_equal(cudag_add_signature(g, "k", "m", NULL, p, 3, 0, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, 64, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "y", CUDAG_TYPE_F32, 64, NULL, &e),
                     CUDAG_OK);
    cudag_arg a[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                     cudag_arg_int(32)};
    cudag_arg b[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 32),
                     cudag_arg_int(32)};
    cudag_dim3 one = {1, 1, 1};
    assert_int_equal(cudag_add_kernel(g, "a", "k", one, one, 0, a, 3, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_kernel(g, "b", "k", one, one, 0, b, 3, &e),
                     CUDAG_OK);
    tdiag td;
    cudag_options o = topts(&td, NULL);
    /* Nothing said: both may write x and y. */
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_OK);
    assert_int_equal(nraces(&td), 2);
    assert_int_equal(cudag_set_param_access(g, "k", 0, CUDAG_ACCESS_READ, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_set_param_access(g, "k", 1, CUDAG_ACCESS_WRITE,
                                            &e),
                     CUDAG_OK);
    /* x is read only now; a's y runs to the end, over b's. */
    o = topts(&td, NULL);
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_OK);
    assert_int_equal(nraces(&td), 2);
    assert_diag_contains(&td, "bytes [128, 256) of buffer 'y'");
    assert_int_equal(cudag_set_kernel_arg_count(g, "a", 1, 32, &e), CUDAG_OK);
    o = topts(&td, NULL);
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_OK);
    assert_int_equal(nraces(&td), 0);
    /* Past the buffer's end: refused by the check, as in YAML. */
    assert_int_equal(cudag_set_kernel_arg_count(g, "b", 1, 33, &e), CUDAG_OK);
    o = topts(&td, NULL);
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_ERANGE);
    assert_int_equal(cudag_set_kernel_arg_count(g, "b", 1, 0, &e), CUDAG_OK);

    /* Errors. */
    assert_int_equal(cudag_set_param_access(NULL, "k", 0, CUDAG_ACCESS_READ,
                                            &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_set_param_access(g, "nope", 0, CUDAG_ACCESS_READ,
                                            &e),
                     CUDAG_EUNKNOWN);
    assert_string_equal(e.message,
                        "cudag_set_param_access: unknown kernel 'nope'");
    assert_int_equal(cudag_set_param_access(g, "k", 3, CUDAG_ACCESS_READ, &e),
                     CUDAG_ERANGE);
    assert_string_equal(e.message, "cudag_set_param_access: kernel 'k' has "
                                   "3 parameters, not 4");
    assert_int_equal(cudag_set_param_access(g, "k", 2, CUDAG_ACCESS_READ, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_set_param_access: kernel 'k': "
                                   "parameter 'n' is i64, not a pointer");
    assert_int_equal(cudag_set_param_access(g, "k", 0, (cudag_access)4, &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_set_kernel_arg_count(g, "nope", 0, 1, &e),
                     CUDAG_EUNKNOWN);
    assert_int_equal(cudag_set_kernel_arg_count(g, "a", 3, 1, &e),
                     CUDAG_ERANGE);
    assert_string_equal(e.message, "cudag_set_kernel_arg_count: node 'a' "
                                   "has 3 arguments, not 4");
    assert_int_equal(cudag_set_kernel_arg_count(g, "a", 2, 1, &e),
                     CUDAG_EINVAL);
    assert_string_equal(e.message, "cudag_set_kernel_arg_count: node 'a': "
                                   "argument 2 is not a buffer");
    o = topts(&td, NULL);
    assert_int_equal(cudag_check(g, &o, &e), CUDAG_OK);
    assert_int_equal(nraces(&td), 0);
    cudag_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(race_at_both_nodes),
        cmocka_unit_test(api_states_modes_and_extents),
        cmocka_unit_test(which_pairs_race),
        cmocka_unit_test(body_against_graph),
        cmocka_unit_test(extent_checked),
        cmocka_unit_test(plan_lists_sets),
        cmocka_unit_test(mutation_proof),
        cmocka_unit_test(race_work_is_linear),
        cmocka_unit_test(order_infers_minimal_edges),
        cmocka_unit_test(order_says_why),
        cmocka_unit_test(order_survives_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
