/* cmd_bench.c — `cudag bench FILE`: the same graph run five ways on one GPU
 * in one process, each warmed up and then timed replay by replay with CUDA
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
 * Before any mode is timed, the graph as declared (the exec's own, the first
 * one instantiated) is replayed: until that graph has run once, the driver
 * replays every other graph in the process slower (measured: 0.18 µs per
 * dependent kernel on an H100), which made mode 3, timed first, slower than
 * the same graph built and replayed alone.
 * It also reports the host time of every stage and the host memory the graph
 * adds to a process whose driver and context are up. */
#include "cli.h"
#include "exec.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CUDAG_HAVE_NVTX
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wcast-align"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop
#endif
#include <time.h>

enum { NMODES = 5 };

static const char *const mode_names[NMODES] = {
    "stream launches",
    "stream launches + PDL attribute",
    "graph, every edge full",
    "graph as declared",
    "graph, branches serialized",
};

static const char *const mode_keys[NMODES] = {
    "stream", "stream_pdl", "graph_full", "graph", "graph_serial",
};

typedef struct stats {
    double median, p10, p90, min, max;      /* µs per replay */
} stats;

typedef struct bench {
    cli *c;
    cudag_exec *x;
    const cudag_graph *g;
    const cudag__drv *drv;
    uint8_t *kinds;             /* effective kind per edge */
    bool *pdl_in;               /* per node: launched with the PDL attribute */
    CUgraphExec gx[NMODES];     /* graph modes; NULL for stream modes */
    cudag__built built[NMODES];
    CUevent e0, e1;
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

static int cu(bench *b, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return CLI_OK;
    cudag_error err;
    cudag__cu_fail(&err, b->drv, r, CUDAG__NOPOS, "%s", what);
    cli_print_error(b->c, &err);
    return CLI_ECUDA;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* One replay of the stream modes: every node in topological order. */
static int launch_stream(bench *b, bool pdl)
{
    const cudag_graph *g = b->g;
    cudag_exec *x = b->x;
    CUstream s = x->gpu.stream;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        uint32_t n = g->topo.order[i];
        const cudag__node *node = &g->nodes[n];
        CUresult r;
        if (node->kind == CUDAG_NODE_KERNEL) {
            const cudag__launch *k = &x->launch.k[n];
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr.value.programmaticStreamSerializationAllowed = 1;
            CUlaunchConfig cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDimX = k->grid[0], cfg.gridDimY = k->grid[1];
            cfg.gridDimZ = k->grid[2];
            cfg.blockDimX = k->block[0], cfg.blockDimY = k->block[1];
            cfg.blockDimZ = k->block[2];
            cfg.sharedMemBytes = k->smem;
            cfg.hStream = s;
            cfg.attrs = &attr;
            cfg.numAttrs = pdl && b->pdl_in[n] ? 1 : 0;
            r = b->drv->cuLaunchKernelEx(&cfg, k->fn, k->params, NULL);
        } else if (node->kind == CUDAG_NODE_MEMSET) {
            CUDA_MEMSET_NODE_PARAMS p;
            cudag__memset_params(g, node, x->bufs, &p);
            r = p.elementSize == 1
                    ? b->drv->cuMemsetD8Async(p.dst, (unsigned char)p.value, p.width, s)
                : p.elementSize == 2
                    ? b->drv->cuMemsetD16Async(p.dst, (unsigned short)p.value, p.width, s)
                    : b->drv->cuMemsetD32Async(p.dst, p.value, p.width, s);
        } else {
            const cudag__memcpy *m = &node->u.cpy;
            size_t es = cudag_type_size(g->buffers[m->src].type);
            r = b->drv->cuMemcpyDtoDAsync(x->bufs[m->dst] + m->dst_offset * es,
                                          x->bufs[m->src] + m->src_offset * es,
                                          m->count * es, s);
        }
        if (r != CUDA_SUCCESS) {
            cudag_error err;
            cudag__cu_fail(&err, b->drv, r, node->pos, "launching node '%s'",
                           node->name);
            cli_print_error(b->c, &err);
            return CLI_ECUDA;
        }
    }
    return CLI_OK;
}

static int replay(bench *b, int mode)
{
    if (mode < 2)
        return launch_stream(b, mode == 1);
    return cu(b, b->drv->cuGraphLaunch(b->gx[mode], b->x->gpu.stream),
              "cuGraphLaunch");
}

/* Warm-up, then one event pair around each timed replay. */
static int measure_runs(bench *b, int mode)
{
    CUstream s = b->x->gpu.stream;
    int rc = CLI_OK;
    for (unsigned i = 0; i < b->warmup && rc == CLI_OK; i++)
        rc = replay(b, mode);
    if (rc == CLI_OK)
        rc = cu(b, b->drv->cuStreamSynchronize(s), "warm-up");
    for (unsigned i = 0; i < b->iters && rc == CLI_OK; i++) {
        rc = cu(b, b->drv->cuEventRecord(b->e0, s), "cuEventRecord");
        if (rc == CLI_OK)
            rc = replay(b, mode);
        if (rc == CLI_OK)
            rc = cu(b, b->drv->cuEventRecord(b->e1, s), "cuEventRecord");
        if (rc == CLI_OK)
            rc = cu(b, b->drv->cuEventSynchronize(b->e1),
                    "a replay (a kernel failed?)");
        if (rc == CLI_OK)
            rc = cu(b, b->drv->cuEventElapsedTime(&b->ms[i], b->e0, b->e1),
                    "cuEventElapsedTime");
    }
    return rc;
}

/* With --nvtx, each mode is one range in a profile, named after the graph. */
static void mode_range(const bench *b, int mode, bool push)
{
#ifdef CUDAG_HAVE_NVTX
    if (!(b->c->flags & CUDAG_NVTX))
        return;
    if (!push) {
        nvtxRangePop();
        return;
    }
    char name[320];
    snprintf(name, sizeof name, "cudag %s: bench %d (%s)", b->g->name, mode + 1,
             mode_names[mode]);
    nvtxRangePushA(name);
#else
    (void)b, (void)mode, (void)push;
#endif
}

static int measure(bench *b, int mode, stats *st)
{
    mode_range(b, mode, true);
    int rc = measure_runs(b, mode);
    mode_range(b, mode, false);
    if (rc != CLI_OK)
        return rc;
    qsort(b->ms, b->iters, sizeof *b->ms, cmp_float);
    st->median = b->ms[b->iters / 2] * 1e3;
    st->p10 = b->ms[b->iters / 10] * 1e3;
    st->p90 = b->ms[(b->iters * 9) / 10 < b->iters ? (b->iters * 9) / 10
                                                   : b->iters - 1] * 1e3;
    st->min = b->ms[0] * 1e3;
    st->max = b->ms[b->iters - 1] * 1e3;
    return CLI_OK;
}

/* Builds and instantiates the graph of modes 3 and 5. */
static int make_graph(bench *b, int mode, int build_mode)
{
    cudag_error err;
    cudag_exec *x = b->x;
    if (cudag__build(&x->gpu, b->g, &x->launch, x->bufs, b->kinds, x->starts,
                     build_mode, &b->built[mode], &err) != CUDAG_OK) {
        cli_print_error(b->c, &err);
        return cli_status(err.code);
    }
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    ip.hUploadStream = x->gpu.stream;
    ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
    return cu(b, b->drv->cuGraphInstantiateWithParams(&b->gx[mode],
                                                      b->built[mode].graph, &ip),
              "cuGraphInstantiateWithParams");
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
 * the graph's.  Any failure leaves *dev at -1 and is left for
 * cudag_instantiate to report in its own words. */
static void context_up(int device, CUdevice *dev, const cudag__drv **drv)
{
    cudag_error err;
    CUcontext ctx;
    *dev = -1;
    if (cudag__driver(drv, &err) != CUDAG_OK)
        return;
    CUdevice d;
    if ((*drv)->cuDeviceGet(&d, device) == CUDA_SUCCESS &&
        (*drv)->cuDevicePrimaryCtxRetain(&ctx, d) == CUDA_SUCCESS)
        *dev = d;
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
    cudag_exec_options eo;
    memset(&eo, 0, sizeof eo);
    eo.size = sizeof eo;
    eo.device = b->c->device;
    eo.flags = b->c->flags;
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
    const cudag_graph *g = b->g;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    printf("{\"graph\": ");
    cli_json_string(stdout, g->name);
    printf(", \"device\": ");
    cli_json_string(stdout, b->x->gpu.name);
    printf(", \"date\": \"%s\", \"nodes\": %u, \"edges\": %u, \"depth\": %zu, "
           "\"iters\": %u, \"warmup\": %u, \"downgraded_edges\": %u,\n",
           date, g->nnodes, g->nedges, depth, b->iters, b->warmup,
           downgraded);
    printf(" \"host_repeats\": %u,\n", b->host_repeats);
    print_host_json("host_ms", med);
    print_host_json("host_ms_first", first);
    long gk = graph_kib(mem);
    printf(" \"host_kib\": {\"start\": %ld, \"parsed\": %ld, \"context\": %ld, "
           "\"driver_context\": %ld, \"graph\": %ld, \"graph_per_node\": %.3f},\n"
           " \"modes\": {",
           mem->start, mem->parsed, mem->context, context_kib(mem), gk,
           gk < 0 ? -1.0 : (double)gk / g->nnodes);
    for (int m = 0; m < NMODES; m++) {
        if (!st[m].median) {    /* not run: a stream mode of a tree */
            printf("%s\n  \"%s\": null", m ? "," : "", mode_keys[m]);
            continue;
        }
        printf("%s\n  \"%s\": {\"median_us\": %.3f, \"p10_us\": %.3f, "
               "\"p90_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
               "\"per_node_us\": %.4f}",
               m ? "," : "", mode_keys[m], st[m].median, st[m].p10, st[m].p90,
               st[m].min, st[m].max, st[m].median / g->nnodes);
    }
    printf("}}\n");
}

static void print_table(bench *b, const stats *st, const host_times *first,
                        const host_times *med, unsigned downgraded,
                        const host_mem *mem, size_t depth)
{
    const cudag_graph *g = b->g;
    printf("%s on %s: %u nodes, %u edges, %zu levels; %u replays after %u "
           "warm-up\n\n",
           g->name, b->x->gpu.name, g->nnodes, g->nedges, depth, b->iters,
           b->warmup);
    printf("  %-33s %11s %9s %9s %11s %8s %8s\n", "mode", "median µs",
           "p10", "p90", "µs/node", "vs 1", "vs 3");
    for (int m = 0; m < NMODES; m++) {
        if (!st[m].median) {
            printf("%d %-33s not run: a body runs only inside a graph\n",
                   m + 1, mode_names[m]);
            continue;
        }
        printf("%d %-33s %11.2f %9.2f %9.2f %11.3f %7.2fx %7.2fx\n", m + 1,
               mode_names[m], st[m].median, st[m].p10, st[m].p90,
               st[m].median / g->nnodes, st[0].median / st[m].median,
               st[2].median / st[m].median);
    }
    double ideal = depth ? (double)g->nnodes / (double)depth : 1.0;
    double branch = st[4].median / st[3].median;
    printf("\nparallel branches: serialized / declared = %.2fx (ideal for "
           "equal nodes %.2fx: %.0f%%)\n",
           branch, ideal, 100.0 * branch / ideal);
    printf("host (median of %u loads): parse+check %.3f ms, load %.3f ms, "
           "alloc %.3f ms, build %.3f ms (%.2f µs/node), instantiate %.3f ms "
           "(%.2f µs/node)\n",
           b->host_repeats, med->parse_check, med->load, med->alloc, med->build,
           med->build * 1e3 / g->nnodes, med->instantiate,
           med->instantiate * 1e3 / g->nnodes);
    printf("host (first load): parse+check %.3f ms, driver %.1f ms, load "
           "%.3f ms, alloc %.3f ms, build %.3f ms, instantiate %.3f ms\n",
           first->parse_check, first->driver, first->load, first->alloc,
           first->build, first->instantiate);
    long gk = graph_kib(mem);
    if (gk >= 0)
        printf("host memory: %ld KiB for the process with the driver and "
               "context up; the graph adds %ld KiB (%.2f KiB/node)\n",
               context_kib(mem), gk, (double)gk / g->nnodes);
    if (downgraded)
        printf("note: %u programmatic edges were built as full edges (see the "
               "warnings above)\n",
               downgraded);
}

static int parse_count(cli *c, const char *opt, const char *v, unsigned *out)
{
    unsigned long n;
    if (!cli_parse_uint(v, 10000000, &n) || n == 0) {
        cli_usage(c, "%s takes a count from 1, not '%s'", opt, v ? v : "");
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

int cmd_bench(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s bench [OPTIONS] FILE\n"
               "Run the graph five ways on one GPU and compare: stream "
               "launches,\nstream launches with the PDL attribute, a graph "
               "with full edges,\nthe graph as declared, and the graph "
               "with its branches serialized.\n\nOptions:\n"
               "  --iters N         timed replays per mode (default 200)\n"
               "  --warmup N        replays before timing (default 20)\n"
               "  --host-repeats N  load and instantiate N times for the host\n"
               "                    stage times, report medians (default 5)\n"
               "  --json            print the results as JSON\n%s",
               c->prog, cli_common_help);
        return CLI_OK;
    }
    const char *file = NULL;
    bool json = false;
    bench b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.iters = 200;
    b.warmup = 20;
    b.host_repeats = 5;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        const char *a = argv[i++];
        if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--iters") == 0 || strcmp(a, "--warmup") == 0 ||
                   strcmp(a, "--host-repeats") == 0) {
            unsigned *to = a[2] == 'i' ? &b.iters
                           : a[2] == 'w' ? &b.warmup : &b.host_repeats;
            if (parse_count(c, a, i < argc ? argv[i] : NULL, to) < 0)
                return CLI_EUSAGE;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage(c, "unknown option '%s'", a);
        } else if (file) {
            return cli_usage(c, "one file at a time");
        } else {
            file = a;
        }
    }
    if (!file) {
        return cli_usage(c, "no file given");
    }

    host_mem mem = {rss_kib(), -1, -1, -1};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cudag_graph *g;
    int rc = cli_load(c, file, &g);
    if (rc != CLI_OK)
        return rc;
    double parse_ms = ms_since(&t0);
    mem.parsed = rss_kib();
    b.g = g;
    CUdevice dev;
    const cudag__drv *drv0 = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    context_up(c->device, &dev, &drv0);
    double driver_ms = ms_since(&t0);
    mem.context = rss_kib();

    cudag_exec_options eo;
    memset(&eo, 0, sizeof eo);
    eo.size = sizeof eo;
    eo.device = c->device;
    eo.flags = c->flags;
    eo.diag = cli_diag;
    eo.diag_user = c;
    cudag_error err;
    if ((rc = cudag_instantiate(g, &eo, &b.x, &err)) != CUDAG_OK) {
        cli_print_error(c, &err);
        rc = cli_status(rc);
        goto out;
    }
    mem.graph = rss_kib();
    cudag_exec_stats es;
    cudag_exec_get_stats(b.x, &es);
    if (dev >= 0)
        es.driver_ns += (uint64_t)(driver_ms * 1e6);
    b.drv = b.x->gpu.drv;
    /* The exec may have lowered the graph again; it uses b.x->g. */
    b.g = b.x->g;
    /* Repeated before the other modes' graphs exist, so each load runs
     * beside one live graph, as tools/handbuilt's repeats do. */
    host_times first = host_from(parse_ms, &es), med;
    if ((rc = host_repeat(&b, file, g, &first, &med)) != CLI_OK)
        goto out;
    stats st[NMODES];
    memset(st, 0, sizeof st);
    rc = cudag__exec_enter(b.x, &err) == CUDAG_OK ? CLI_OK : CLI_ECUDA;
    if (rc != CLI_OK) {
        cli_print_error(c, &err);
        goto out;
    }
    b.kinds = calloc(cudag__tree_nedges(b.g) + 1, 1);
    b.pdl_in = calloc(b.g->nnodes + 1, sizeof *b.pdl_in);
    b.ms = calloc(b.iters, sizeof *b.ms);
    if (!b.kinds || !b.pdl_in || !b.ms) {
        fprintf(stderr, "%s bench: out of memory\n", c->prog);
        rc = CLI_ECUDA;
        goto leave;
    }
    /* The kinds the exec built (its warnings were printed already). */
    cudag__diag quiet;
    cudag__diag_init(&quiet, NULL, NULL);
    unsigned down;
    if (cudag__edge_kinds(&b.x->gpu, b.g, &b.x->code, c->flags & ~CUDAG_STRICT,
                          &quiet, b.kinds, &down) != CUDAG_OK) {
        rc = CLI_EGRAPH;
        goto leave;
    }
    for (uint32_t e = 0; e < b.g->nedges; e++)
        if (b.kinds[e] != CUDAG_EDGE_FULL)
            b.pdl_in[b.g->edges[e].to] = true;
    b.gx[3] = b.x->gexec;
    if ((rc = make_graph(&b, 2, CUDAG__BUILD_ALL_FULL)) != CLI_OK ||
        (rc = make_graph(&b, 4, CUDAG__BUILD_SERIAL)) != CLI_OK)
        goto leave;
    if ((rc = cu(&b, b.drv->cuEventCreate(&b.e0, CU_EVENT_DEFAULT), "cuEventCreate")) ||
        (rc = cu(&b, b.drv->cuEventCreate(&b.e1, CU_EVENT_DEFAULT), "cuEventCreate")))
        goto leave;
    /* The exec's graph runs first, as in `cudag run`: see the top of the
     * file for what the others cost before it has. */
    for (unsigned i = 0; i < b.warmup && rc == CLI_OK; i++)
        rc = replay(&b, 3);
    if (rc == CLI_OK)
        rc = cu(&b, b.drv->cuStreamSynchronize(b.x->gpu.stream),
                "the first replays of the graph as declared");
    for (int m = 0; m < NMODES && rc == CLI_OK; m++)
        if (m >= 2 || !b.g->nsubs)
            rc = measure(&b, m, &st[m]);
    if (rc == CLI_OK) {
        size_t depth = b.g->topo.depth;
        if (json)
            print_json(&b, st, &first, &med, es.downgraded_edges, &mem, depth);
        else
            print_table(&b, st, &first, &med, es.downgraded_edges, &mem, depth);
    }
leave:
    if (b.e0)
        b.drv->cuEventDestroy(b.e0);
    if (b.e1)
        b.drv->cuEventDestroy(b.e1);
    for (int m = 0; m < NMODES; m++) {
        if (m != 3 && b.gx[m])
            b.drv->cuGraphExecDestroy(b.gx[m]);
        cudag__built_free(&b.x->gpu, &b.built[m]);
    }
    cudag__exec_leave(b.x);
out:
    free(b.kinds);
    free(b.pdl_in);
    free(b.ms);
    if (b.x && cudag_exec_sync(b.x, &err) != CUDAG_OK && rc == CLI_OK) {
        cli_print_error(c, &err);
        rc = CLI_ECUDA;
    }
    cudag_exec_destroy(b.x);
    if (dev >= 0)
        (void)drv0->cuDevicePrimaryCtxRelease(dev);
    cudag_graph_destroy(g);
    return rc;
}
