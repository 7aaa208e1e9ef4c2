/* cmd_bench.c — `cudag bench FILE`: the same graph run five ways on one GPU
 * in one run, each warmed up and then timed replay by replay with CUDA
 * events, so that every ratio compares two variants measured side by side:
 *   1 stream launches in topological order (cuLaunchKernelEx), no PDL;
 *   2 the same, with programmatic stream serialization on each kernel that
 *     has a programmatic edge into it;
 *   3 a CUDA graph with every edge full;
 *   4 the graph as declared (programmatic edges, parallel branches);
 *   5 the graph as declared with its branches serialized into one chain
 *     (what capturing the launches on one stream records); each body of a
 *     conditional node is serialized the same way inside it.
 * A graph with conditional nodes has no stream modes (1, 2): only a graph
 * can run a body as its condition decides.
 * Modes 3 and 5 are each timed in a process of their own, forked before
 * this one starts the driver, whose first graph is the mode's: a graph of
 * many branches replays at the same speed from one process to the next
 * only as its process's first graph.  Later graphs replay faster or slower
 * on the device depending on which graphs ran before them (an H100, a
 * 10 000-node random DAG with full edges: 2 608 µs as the first graph,
 * 2 544 µs as the second once the first has run, 2 955 µs if it has not;
 * the same in a fresh context of the same process: 2 561 to 2 690 µs), so
 * modes timed side by side in one process did not match the same graph
 * built and replayed alone.  Mode 4 is this process's own first graph, and
 * modes 1 and 2 launch no graph.  The host stages' repeated loads come
 * after the timing.
 * It also reports the host time of every stage and the host memory the graph
 * adds to a process whose driver and context are up.  The modes are the
 * library's cudag_replay ways (cudag_exec_time), so this file uses only
 * cudag.h. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Mode m + 1 is cudag_replay m: the order above. */
enum { NMODES = CUDAG_REPLAY_COUNT_ };
_Static_assert(NMODES == 5, "one JSON key per mode below");

static const char *const mode_keys[NMODES] = {
    "stream", "stream_pdl", "graph_full", "graph", "graph_serial",
};

typedef struct stats {
    double median, p10, p90, min, max;      /* µs per replay */
    bool run;           /* false: the library has no such way for the graph */
    bool gated;         /* timed behind the gate (--gate, and it held) */
    bool own_process;   /* timed in a process of its own */
} stats;

typedef struct bench {
    cli *c;
    cudag_exec *x;
    const cudag_graph *g;
    float *ms;
    unsigned iters, warmup, host_repeats;
} bench;

/* Host memory (resident KiB) at four points: before the file is read, once
 * it is parsed and checked, once the driver and the device's context are up
 * as well, and after the exec is made.  What the graph adds is
 * (parsed - start) + (graph - context): its IR, its loaded code and buffers'
 * staging, the CUgraph and the executable graph; the rest, start + (context -
 * parsed), is the process with the driver and context alone. */
typedef struct host_mem {
    long start, parsed, context, graph;     /* -1: not known */
} host_mem;

/* Host time of each stage: the first load (what a one-shot run pays) and
 * the median over --host-repeats loads, which is what comparisons use. */
typedef struct host_times {
    double parse_check, driver, load, alloc, build, instantiate; /* ms */
} host_times;

/* Prints a library error and returns the exit status it maps to. */
static int fail(const bench *b, const cudag_error *err)
{
    cli_print_error(b->c, err);
    return cli_status(err->code);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Warm-up, then one event pair around each timed replay (cudag_exec_time;
 * with --gate each behind a gate, cudag_exec_time_gated; with --nvtx each
 * mode is one range in a profile).  A replay the driver's launch queue
 * cannot hold behind the gate (thousands of stream launches) is timed
 * without it, and the table says so. */
static int measure(bench *b, int mode, stats *st)
{
    cudag_error err;
    int rc = CUDAG_ELIMIT;
    st->gated = b->c->gate;
    if (st->gated)
        rc = cudag_exec_time_gated(b->x, (cudag_replay)mode, b->warmup,
                                   b->iters, b->ms, &err);
    if (rc == CUDAG_ELIMIT) {
        st->gated = false;
        rc = cudag_exec_time(b->x, (cudag_replay)mode, b->warmup, b->iters,
                             b->ms, &err);
    }
    if (rc != CUDAG_OK)
        return fail(b, &err);
    qsort(b->ms, b->iters, sizeof *b->ms, cmp_float);
    st->median = b->ms[b->iters / 2] * 1e3;
    st->p10 = b->ms[b->iters / 10] * 1e3;
    st->p90 = b->ms[(b->iters * 9) / 10 < b->iters ? (b->iters * 9) / 10
                                                   : b->iters - 1] * 1e3;
    st->min = b->ms[0] * 1e3;
    st->max = b->ms[b->iters - 1] * 1e3;
    st->run = true;
    return CLI_OK;
}

/* Resident memory now, from /proc/self/statm; -1 where there is none. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long size, resident;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? resident * (page / 1024) : -1;
}

static long graph_kib(const host_mem *m)
{
    if (m->start < 0 || m->parsed < 0 || m->context < 0 || m->graph < 0)
        return -1;
    return (m->parsed - m->start) + (m->graph - m->context);
}

static long context_kib(const host_mem *m)
{
    return graph_kib(m) < 0 ? -1 : m->start + (m->context - m->parsed);
}

/* Starts the driver and retains the device's primary context before the
 * exec does, so that the memory and time they take are measured apart from
 * the graph's.  Returns whether it did: a failure is left for
 * cudag_instantiate to report in its own words. */
static bool context_up(int device)
{
    cudag_error err;
    return cudag_device_retain(device, &err) == CUDAG_OK;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
           (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static host_times host_from(double parse_ms, const cudag_exec_stats *es)
{
    host_times h = {parse_ms, es->driver_ns / 1e6, es->load_ns / 1e6,
                    es->alloc_ns / 1e6, es->build_ns / 1e6,
                    es->instantiate_ns / 1e6};
    return h;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Loads and instantiates the file again host_repeats - 1 times, quietly
 * (the first load printed its diagnostics), and leaves in *med the median
 * of every stage over all the loads.  Driver start-up is paid once per
 * process, so its figure stays the first one. */
static int host_repeat(bench *b, const char *file, const cudag_graph *g,
                       const host_times *first, host_times *med)
{
    unsigned r = b->host_repeats;
    *med = *first;
    if (r < 2)
        return CLI_OK;
    double *v = calloc((size_t)r * 5, sizeof *v);
    if (!v) {
        fprintf(stderr, "%s bench: out of memory\n", b->c->prog);
        return CLI_ECUDA;
    }
    cudag_options o = cli_options(b->c);
    o.diag = NULL;
    o.diag_user = NULL;
    cudag_exec_options eo = cli_exec_options(b->c);
    eo.diag = NULL;
    eo.diag_user = NULL;
    int rc = CLI_OK;
    double *col[5] = {v, v + r, v + 2 * r, v + 3 * r, v + 4 * r};
    col[0][0] = first->parse_check, col[1][0] = first->load;
    col[2][0] = first->alloc, col[3][0] = first->build;
    col[4][0] = first->instantiate;
    for (unsigned i = 1; i < r && rc == CLI_OK; i++) {
        cudag_error err;
        struct timespec t0;
        cudag_graph *g2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (cudag_load_file(file, &o, &g2, &err) != CUDAG_OK) {
            cli_print_error(b->c, &err);
            rc = cli_status(err.code);
            break;
        }
        col[0][i] = ms_since(&t0);
        cudag_graph_destroy(g2);
        cudag_exec *x2;
        if (cudag_instantiate(g, &eo, &x2, &err) != CUDAG_OK) {
            cli_print_error(b->c, &err);
            rc = cli_status(err.code);
            break;
        }
        cudag_exec_stats es;
        cudag_exec_get_stats(x2, &es);
        host_times h = host_from(0, &es);
        col[1][i] = h.load, col[2][i] = h.alloc, col[3][i] = h.build;
        col[4][i] = h.instantiate;
        cudag_exec_destroy(x2);
    }
    if (rc == CLI_OK) {
        for (int k = 0; k < 5; k++)
            qsort(col[k], r, sizeof *v, cmp_double);
        med->parse_check = col[0][r / 2], med->load = col[1][r / 2];
        med->alloc = col[2][r / 2], med->build = col[3][r / 2];
        med->instantiate = col[4][r / 2];
    }
    free(v);
    return rc;
}

static void print_host_json(const char *key, const host_times *h)
{
    printf(" \"%s\": {\"parse_check\": %.3f, \"driver\": %.3f, "
           "\"load\": %.3f, \"alloc\": %.3f, \"build\": %.3f, "
           "\"instantiate\": %.3f},\n",
           key, h->parse_check, h->driver, h->load, h->alloc, h->build,
           h->instantiate);
}

static void print_json(bench *b, const stats *st, const host_times *first,
                       const host_times *med, unsigned downgraded,
                       const host_mem *mem, size_t depth)
{
    const char *name = cudag_graph_name(b->g);
    size_t nodes = cudag_graph_node_count(b->g);
    size_t edges = cudag_graph_edge_count(b->g);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    printf("{\"graph\": ");
    cli_json_string(stdout, name);
    printf(", \"device\": ");
    cli_json_string(stdout, cudag_exec_device_name(b->x));
    printf(", \"date\": \"%s\", \"nodes\": %zu, \"edges\": %zu, \"depth\": %zu, "
           "\"iters\": %u, \"warmup\": %u, \"gated\": %s, "
           "\"device_launch\": %s, \"downgraded_edges\": %u,\n",
           date, nodes, edges, depth, b->iters, b->warmup,
           b->c->gate ? "true" : "false",
           b->c->flags & CUDAG_DEVICE_LAUNCH ? "true" : "false", downgraded);
    printf(" \"host_repeats\": %u,\n", b->host_repeats);
    print_host_json("host_ms", med);
    print_host_json("host_ms_first", first);
    long gk = graph_kib(mem);
    printf(" \"host_kib\": {\"start\": %ld, \"parsed\": %ld, \"context\": %ld, "
           "\"driver_context\": %ld, \"graph\": %ld, \"graph_per_node\": %.3f},\n"
           " \"modes\": {",
           mem->start, mem->parsed, mem->context, context_kib(mem), gk,
           gk < 0 ? -1.0 : (double)gk / nodes);
    for (int m = 0; m < NMODES; m++) {
        if (!st[m].run) {       /* a stream mode of a graph with bodies */
            printf("%s\n  \"%s\": null", m ? "," : "", mode_keys[m]);
            continue;
        }
        printf("%s\n  \"%s\": {\"median_us\": %.3f, \"p10_us\": %.3f, "
               "\"p90_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
               "\"per_node_us\": %.4f, \"gated\": %s, \"own_process\": %s}",
               m ? "," : "", mode_keys[m], st[m].median, st[m].p10, st[m].p90,
               st[m].min, st[m].max, st[m].median / nodes,
               st[m].gated ? "true" : "false",
               st[m].own_process ? "true" : "false");
    }
    printf("}}\n");
}

static void print_table(bench *b, const stats *st, const host_times *first,
                        const host_times *med, unsigned downgraded,
                        const host_mem *mem, size_t depth)
{
    const char *name = cudag_graph_name(b->g);
    size_t nodes = cudag_graph_node_count(b->g);
    size_t edges = cudag_graph_edge_count(b->g);
    printf("%s on %s: %zu nodes, %zu edges, %zu levels; %u replays after %u "
           "warm-up%s%s; modes 3 and 5 each in a process of its own\n\n",
           name, cudag_exec_device_name(b->x), nodes, edges, depth, b->iters,
           b->warmup, b->c->gate ? ", each behind a gate (device time)" : "",
           b->c->flags & CUDAG_DEVICE_LAUNCH ? ", --device-launch" : "");
    printf("  %-33s %11s %9s %9s %11s %8s %8s\n", "mode", "median µs",
           "p10", "p90", "µs/node", "vs 1", "vs 3");
    for (int m = 0; m < NMODES; m++) {
        if (!st[m].run) {
            printf("%d %-33s not run: a body runs only inside a graph\n",
                   m + 1, cudag_replay_name((cudag_replay)m));
            continue;
        }
        char vs1[16] = "-";     /* mode 1 not run: nothing to compare */
        if (st[0].run)
            snprintf(vs1, sizeof vs1, "%.2fx", st[0].median / st[m].median);
        printf("%d %-33s %11.2f %9.2f %9.2f %11.3f %8s %7.2fx%s\n", m + 1,
               cudag_replay_name((cudag_replay)m), st[m].median, st[m].p10, st[m].p90,
               st[m].median / nodes, vs1, st[2].median / st[m].median,
               b->c->gate && !st[m].gated ? "  (not gated: too many launches "
                                            "to queue behind the gate)"
                                          : "");
    }
    double ideal = depth ? (double)nodes / (double)depth : 1.0;
    double branch = st[4].median / st[3].median;
    printf("\nparallel branches: serialized / declared = %.2fx (ideal for "
           "equal nodes %.2fx: %.0f%%)\n",
           branch, ideal, 100.0 * branch / ideal);
    printf("host (median of %u loads): parse+check %.3f ms, load %.3f ms, "
           "alloc %.3f ms, build %.3f ms (%.2f µs/node), instantiate %.3f ms "
           "(%.2f µs/node)\n",
           b->host_repeats, med->parse_check, med->load, med->alloc, med->build,
           med->build * 1e3 / nodes, med->instantiate,
           med->instantiate * 1e3 / nodes);
    printf("host (first load): parse+check %.3f ms, driver %.1f ms, load "
           "%.3f ms, alloc %.3f ms, build %.3f ms, instantiate %.3f ms\n",
           first->parse_check, first->driver, first->load, first->alloc,
           first->build, first->instantiate);
    long gk = graph_kib(mem);
    if (gk >= 0)
        printf("host memory: %ld KiB for the process with the driver and "
               "context up; the graph adds %ld KiB (%.2f KiB/node)\n",
               context_kib(mem), gk, (double)gk / nodes);
    if (downgraded)
        printf("note: %u programmatic edges were built as full edges (see the "
               "warnings above)\n",
               downgraded);
}

static int parse_count(cli *c, const char *opt, const char *v, unsigned *out)
{
    unsigned long n;
    if (!cli_parse_uint(v, 10000000, &n) || n == 0) {
        cli_usage(c, "%s takes a count from 1 to 10000000, not '%s'", opt,
                  v ? v : "");
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

/* Reads the command line into b (iters, warmup, host_repeats), *file and
 * *json.  Returns CLI_OK or, after saying why, CLI_EUSAGE. */
static int parse_args(cli *c, int argc, char **argv, bench *b,
                      const char **file, bool *json)
{
    *file = NULL;
    *json = false;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        const char *a = argv[i++];
        if (strcmp(a, "--json") == 0) {
            *json = true;
        } else if (strcmp(a, "--iters") == 0 || strcmp(a, "--warmup") == 0 ||
                   strcmp(a, "--host-repeats") == 0) {
            unsigned *to = a[2] == 'i' ? &b->iters
                           : a[2] == 'w' ? &b->warmup : &b->host_repeats;
            if (parse_count(c, a, i < argc ? argv[i] : NULL, to) < 0)
                return CLI_EUSAGE;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage(c, "unknown option '%s'", a);
        } else if (*file) {
            return cli_usage(c, "one file at a time");
        } else {
            *file = a;
        }
    }
    if (!*file)
        return cli_usage(c, "no file given");
    return CLI_OK;
}

/* Loads the file into *g (NULL when that failed), measuring host memory
 * (*mem: start, parsed) and time (*parse_ms). */
static int load_file(bench *b, const char *file, cudag_graph **g,
                     host_mem *mem, double *parse_ms)
{
    *mem = (host_mem){rss_kib(), -1, -1, -1};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = cli_load(b->c, file, g);
    if (rc != CLI_OK) {
        *g = NULL;
        return rc;
    }
    *parse_ms = ms_since(&t0);
    mem->parsed = rss_kib();
    b->g = *g;
    return CLI_OK;
}

/* Brings the driver and context up (*retained says whether this did, to be
 * undone) and instantiates b->x from g, measuring host memory (*mem:
 * context, graph) and time (*first) at each step.  On error b->x is NULL. */
static int load_exec(bench *b, const cudag_graph *g, double parse_ms,
                     bool *retained, host_mem *mem, host_times *first)
{
    cli *c = b->c;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *retained = context_up(c->device);
    double driver_ms = ms_since(&t0);
    mem->context = rss_kib();

    cudag_exec_options eo = cli_exec_options(c);
    cudag_error err;
    if (cudag_instantiate(g, &eo, &b->x, &err) != CUDAG_OK)
        return fail(b, &err);
    mem->graph = rss_kib();
    cudag_exec_stats es;
    cudag_exec_get_stats(b->x, &es);
    if (*retained)
        es.driver_ns += (uint64_t)(driver_ms * 1e6);
    *first = host_from(parse_ms, &es);
    return CLI_OK;
}

/* In a forked process: instantiates g built `mode`'s way as the exec's own
 * graph (CUDAG_NO_PDL for the full edges, CUDAG_SERIALIZE for the chain)
 * and times it.  The parent prints the diagnostics, when it instantiates. */
static int time_own_graph(bench *b, const cudag_graph *g, int mode, stats *st)
{
    cudag_exec_options eo = cli_exec_options(b->c);
    eo.flags |= mode == CUDAG_REPLAY_GRAPH_FULL ? CUDAG_NO_PDL : CUDAG_SERIALIZE;
    eo.diag = NULL;
    eo.diag_user = NULL;
    cudag_error err;
    if (cudag_instantiate(g, &eo, &b->x, &err) != CUDAG_OK)
        return fail(b, &err);
    int rc = measure(b, CUDAG_REPLAY_GRAPH, st);
    cudag_exec_destroy(b->x);
    b->x = NULL;
    return rc;
}

/* Reads or writes all n bytes; returns how many went through. */
static size_t pipe_io(int fd, void *p, size_t n, bool out)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = out ? write(fd, (char *)p + done, n - done)
                        : read(fd, (char *)p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    return done;
}

/* Times `mode` in a child process (time_own_graph), forked before this
 * process starts the driver (a child of a process that has may not use it);
 * its figures come back through a pipe.  A child that fails has said why
 * and exits with the status to return. */
static int time_in_own_process(bench *b, const cudag_graph *g, int mode,
                               stats *st)
{
    const char *prog = b->c->prog;
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "%s bench: pipe: %s\n", prog, strerror(errno));
        return CLI_EIO;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s bench: fork: %s\n", prog, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return CLI_EIO;
    }
    if (pid == 0) {
        close(fds[0]);
        stats s;
        memset(&s, 0, sizeof s);
        int rc = time_own_graph(b, g, mode, &s);
        if (rc == CLI_OK && pipe_io(fds[1], &s, sizeof s, true) != sizeof s)
            rc = CLI_EIO;
        _exit(rc);  /* leaves the parent's stdio buffers alone */
    }
    close(fds[1]);
    size_t got = pipe_io(fds[0], st, sizeof *st, false);
    close(fds[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) != CLI_OK)
        return WEXITSTATUS(ws);
    if (!WIFEXITED(ws) || got != sizeof *st) {
        fprintf(stderr, "%s bench: the process timing mode %d (%s) ended "
                        "without its figures%s\n",
                prog, mode + 1, cudag_replay_name((cudag_replay)mode),
                WIFSIGNALED(ws) ? " (killed by a signal)" : "");
        return CLI_ECUDA;
    }
    st->own_process = true;
    return CLI_OK;
}

/* Times the modes this process runs into st[]: its own graph (mode 4)
 * first, then the stream launches.  A mode the library refuses for this
 * graph (CUDAG_ENOTSUP: stream launches of a graph with a conditional
 * node) is left not run. */
static int run_modes(bench *b, stats *st)
{
    int rc = measure(b, CUDAG_REPLAY_GRAPH, &st[CUDAG_REPLAY_GRAPH]);
    for (int m = CUDAG_REPLAY_STREAM; m <= CUDAG_REPLAY_STREAM_PDL && rc == CLI_OK;
         m++) {
        cudag_error err;
        int prc = cudag_exec_prepare(b->x, (cudag_replay)m, &err);
        if (prc == CUDAG_OK)
            rc = measure(b, m, &st[m]);
        else if (prc != CUDAG_ENOTSUP)
            rc = fail(b, &err);
    }
    return rc;
}

int cmd_bench(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s bench [OPTIONS] FILE\n"
               "Run the graph five ways on one GPU and compare: stream "
               "launches,\nstream launches with the PDL attribute, a graph "
               "with full edges,\nthe graph as declared, and the graph "
               "with its branches serialized.\nModes 3 and 5 run each in a "
               "process of its own, so that each graph\nis its process's "
               "first, as in a program that builds it alone.\n\nOptions:\n"
               "  --iters N         timed replays per mode (default 200)\n"
               "  --warmup N        replays before timing (default 20)\n"
               "  --host-repeats N  load and instantiate N times for the host\n"
               "                    stage times, report medians (default 5)\n"
               "  --json            print the results as JSON\n%s%s",
               c->prog, cli_gpu_help, cli_common_help);
        return CLI_OK;
    }
    bench b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.iters = 200;
    b.warmup = 20;
    b.host_repeats = 5;
    const char *file;
    bool json;
    int rc = parse_args(c, argc, argv, &b, &file, &json);
    if (rc != CLI_OK)
        return rc;

    b.ms = calloc(b.iters, sizeof *b.ms);
    if (!b.ms) {
        fprintf(stderr, "%s bench: out of memory\n", c->prog);
        return CLI_ECUDA;
    }
    cudag_graph *g;
    bool retained = false;
    host_mem mem;
    host_times first, med;
    stats st[NMODES];
    memset(&first, 0, sizeof first);
    memset(st, 0, sizeof st);
    cudag_plan_info pi;
    cudag_error err;
    double parse_ms = 0;
    rc = load_file(&b, file, &g, &mem, &parse_ms);
    /* The modes with a graph of their own first, each in its own process
     * (see the top of the file), then this process's; the repeated loads
     * after the timing. */
    if (rc == CLI_OK)
        rc = time_in_own_process(&b, g, CUDAG_REPLAY_GRAPH_FULL,
                                 &st[CUDAG_REPLAY_GRAPH_FULL]);
    if (rc == CLI_OK)
        rc = time_in_own_process(&b, g, CUDAG_REPLAY_GRAPH_SERIAL,
                                 &st[CUDAG_REPLAY_GRAPH_SERIAL]);
    if (rc == CLI_OK)
        rc = load_exec(&b, g, parse_ms, &retained, &mem, &first);
    if (rc == CLI_OK)
        rc = run_modes(&b, st);
    if (rc == CLI_OK)
        rc = host_repeat(&b, file, g, &first, &med);
    if (rc == CLI_OK && cudag_plan(g, &pi, NULL, &err) != CUDAG_OK)
        rc = fail(&b, &err);
    if (rc == CLI_OK) {
        cudag_exec_stats es;
        cudag_exec_get_stats(b.x, &es);
        if (json)
            print_json(&b, st, &first, &med, es.downgraded_edges, &mem, pi.depth);
        else
            print_table(&b, st, &first, &med, es.downgraded_edges, &mem, pi.depth);
    }
    free(b.ms);
    if (b.x && cudag_exec_sync(b.x, &err) != CUDAG_OK && rc == CLI_OK)
        rc = fail(&b, &err);
    cudag_exec_destroy(b.x);
    if (retained)
        (void)cudag_device_release(c->device, &err);
    cudag_graph_destroy(g);
    return rc;
}
