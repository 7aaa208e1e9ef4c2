/* cmd_run.c — `cudag run`: load a graph, instantiate it on a GPU, replay it
 * back to back with a CUDA event between replays (with --gate, each replay
 * alone behind a gate), and print the replay times, the host's time to
 * issue one replay, the host stage times and a checksum of every buffer. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct dump {
    const char *buffer, *path;
} dump;

typedef struct run_opts {
    const char *file;
    unsigned long iters, warmup;
    bool json;
    dump dumps[CLI_MAX_LIST];
    size_t ndumps;
} run_opts;

/* What was timed: the replays (sorted, ms), loading, and the host's time
 * to issue one replay (median over the warm-up, µs; < 0 without one). */
typedef struct measured {
    const float *t;
    uint64_t parse_ns;
    double launch_us;
} measured;

/* What one buffer looked like after the replays. */
typedef struct summary {
    const char *name;
    cudag_type type;
    uint64_t count, bytes;
    double sum;
    uint64_t hash;
    double first[4];
    unsigned nfirst;
    bool ok;                    /* false: could not be read (reason printed) */
} summary;

static const char help[] =
    "Usage: %s run [OPTIONS] FILE\n"
    "Build the graph, instantiate it on a GPU, replay it and report per-replay\n"
    "times (CUDA events), host stage times (saying whether each CUDA source\n"
    "module was compiled or read from the compile cache) and a checksum of\n"
    "every buffer.\n"
    "\nOptions:\n"
    "  --iters N         timed replays (default 100)\n"
    "  --warmup N        untimed replays first (default 10)\n"
    "  --dump BUF=PATH   write buffer BUF's bytes to PATH after the replays\n"
    "  --json            print the results, or the failure, as one JSON object\n"
    "%s%s"
    "\nExit status: 0 success, 1 graph errors, 2 usage, 3 no CUDA driver or\n"
    "device, 4 CUDA error (a failed driver call or kernel), 5 file error,\n"
    "6 timeout (--timeout: the replays still run; the GPU context is lost and\n"
    "stays busy until the process has exited).\n";

static int parse_args(cli *c, int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 100;
    o->warmup = 10;
    for (int i = 1; i < argc;) {
        int r = cli_common_opt(c, argc, argv, &i);
        if (r < 0)
            return CLI_EUSAGE;
        if (r > 0)
            continue;
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--iters") == 0 || strcmp(a, "--warmup") == 0) {
            unsigned long *dst = a[2] == 'i' ? &o->iters : &o->warmup;
            unsigned long least = dst == &o->iters;
            /* A bound that keeps the event array a sane size. */
            if (!has_val || !cli_parse_uint(argv[i + 1], 10000000, dst) ||
                *dst < least)
                return cli_usage(c, "%s takes a count from %lu to 10000000, "
                                    "not '%s'",
                                 a, least, has_val ? argv[i + 1] : "");
            i += 2;
        } else if (strcmp(a, "--dump") == 0) {
            const char *v = has_val ? argv[i + 1] : NULL;
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || !eq[1])
                return cli_usage(c, "--dump takes BUFFER=PATH, not '%s'",
                                 v ? v : "");
            if (o->ndumps == CLI_MAX_LIST)
                return cli_usage(c, "too many '--dump' options");
            /* The name is cut at '=' in place: argv is ours to edit. */
            argv[i + 1][eq - v] = '\0';
            o->dumps[o->ndumps].buffer = v;
            o->dumps[o->ndumps++].path = eq + 1;
            i += 2;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage(c, "unknown option '%s'", a);
        } else {
            if (o->file)
                return cli_usage(c, "one file at a time; extra argument '%s'",
                                 a);
            o->file = a;
            i++;
        }
    }
    if (!o->file)
        return cli_usage(c, "no file given");
    return CLI_OK;
}

/* ---- timing ------------------------------------------------------------ */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[n] by linear interpolation between ranks. */
static double quantile(const float *v, unsigned long n, double q)
{
    double pos = q * (double)(n - 1);
    unsigned long lo = (unsigned long)pos;
    unsigned long hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

/* ---- checksums ------------------------------------------------------------ */

static double f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Element i of a buffer's bytes as a double. */
static double element(const unsigned char *p, cudag_type t, uint64_t i)
{
    size_t es = cudag_type_size(t);
    uint64_t u = 0;
    memcpy(&u, p + i * es, es);
    switch (t) {
    case CUDAG_TYPE_I8: return (double)(int8_t)u;
    case CUDAG_TYPE_U8: return (double)(uint8_t)u;
    case CUDAG_TYPE_I16: return (double)(int16_t)u;
    case CUDAG_TYPE_U16: return (double)(uint16_t)u;
    case CUDAG_TYPE_I32: return (double)(int32_t)u;
    case CUDAG_TYPE_U32: return (double)(uint32_t)u;
    case CUDAG_TYPE_I64: return (double)(int64_t)u;
    case CUDAG_TYPE_U64: return (double)u;
    case CUDAG_TYPE_F16: return f16_value((uint16_t)u);
    case CUDAG_TYPE_BF16: {
        uint32_t w = (uint32_t)u << 16;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    case CUDAG_TYPE_F32: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    case CUDAG_TYPE_F64: {
        double f;
        memcpy(&f, &u, 8);
        return f;
    }
    default:
        return 0;
    }
}

static int summarise(cli *c, cudag_exec *x, const cudag_graph *g, size_t b,
                     summary *s, const run_opts *o)
{
    memset(s, 0, sizeof *s);
    s->name = cudag_graph_buffer_name(g, b);
    (void)cudag_graph_buffer(g, b, &s->type, &s->count);  /* b < its count */
    s->bytes = s->count * cudag_type_size(s->type);
    unsigned char *host = malloc(s->bytes ? s->bytes : 1);
    if (!host) {
        fprintf(stderr, "%s run: no host memory to read buffer '%s' (%llu "
                        "bytes); checksum skipped\n",
                c->prog, s->name, (unsigned long long)s->bytes);
        return CLI_OK;
    }
    cudag_error err;
    int rc = cudag_exec_read(x, s->name, host, s->bytes, &err);
    if (rc != CUDAG_OK) {
        cli_print_error(c, &err);
        free(host);
        return cli_status(rc);
    }
    /* FNV-1a over the bytes: any change in any bit shows. */
    uint64_t h = UINT64_C(1469598103934665603);
    for (uint64_t i = 0; i < s->bytes; i++) {
        h ^= host[i];
        h *= UINT64_C(1099511628211);
    }
    s->hash = h;
    for (uint64_t i = 0; i < s->count; i++) {
        double v = element(host, s->type, i);
        s->sum += v;
        if (i < 4)
            s->first[s->nfirst++] = v;
    }
    s->ok = true;
    int status = CLI_OK;
    for (size_t d = 0; d < o->ndumps; d++) {
        if (strcmp(o->dumps[d].buffer, s->name) != 0)
            continue;
        FILE *f = fopen(o->dumps[d].path, "wb");
        bool ok = f && fwrite(host, 1, s->bytes, f) == s->bytes;
        if (f && fclose(f) != 0)
            ok = false;
        if (!ok) {
            fprintf(stderr, "%s run: cannot write buffer '%s' to '%s': %s\n",
                    c->prog, s->name, o->dumps[d].path, strerror(errno));
            status = CLI_EIO;
        }
    }
    free(host);
    return status;
}

/* ---- output ---------------------------------------------------------------- */

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* Where each source module's code came from, and its time: NVRTC's
 * compile is most of a first run's load, a cache hit a millisecond. */
static const char *origin_word(cudag_module_origin o)
{
    switch (o) {
    case CUDAG_MODULE_FILE:
        return "file";
    case CUDAG_MODULE_COMPILED:
        return "compiled";
    case CUDAG_MODULE_CACHED:
        return "cache";
    default:
        return "unused";
    }
}

/* " (user: compiled 812.345)" after the load time, for the source
 * modules; nothing for a graph of files only. */
static void print_sources(const cudag_exec *x)
{
    bool any = false;
    for (size_t i = 0; i < cudag_exec_module_count(x); i++) {
        cudag_module_stats st;
        if (cudag_exec_module_stats(x, i, &st) != CUDAG_OK ||
            (st.origin != CUDAG_MODULE_COMPILED &&
             st.origin != CUDAG_MODULE_CACHED))
            continue;
        printf("%s%s: %s %.3f", any ? ", " : " (", st.name,
               origin_word(st.origin), ms(st.load_ns));
        any = true;
    }
    if (any)
        printf(")");
}

static void print_text(const cli *c, const cudag_graph *g, const cudag_exec *x,
                       const run_opts *o, const measured *m, const summary *s,
                       size_t ns)
{
    const float *t = m->t;
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    size_t kinds[3] = {0, 0, 0};
    for (size_t e = 0; e < cudag_graph_edge_count(g); e++) {
        cudag_edge_kind k;
        if (cudag_graph_edge(g, e, NULL, NULL, &k) == CUDAG_OK && k <= 2)
            kinds[k]++;
    }
    printf("graph %s (%s): %zu nodes, %zu edges (%zu full, %zu programmatic, "
           "%zu launch_order",
           cudag_graph_name(g), o->file, cudag_graph_node_count(g),
           cudag_graph_edge_count(g), kinds[0], kinds[1], kinds[2]);
    if (st.downgraded_edges)
        printf(", %u built full", st.downgraded_edges);
    printf(")%s%s\n", c->flags & CUDAG_NO_PDL ? ", --no-pdl" : "",
           c->flags & CUDAG_DEVICE_LAUNCH ? ", --device-launch" : "");
    int major = 0, minor = 0;
    (void)cudag_exec_device_cc(x, &major, &minor);  /* x is not NULL */
    printf("device %s (compute %d.%d)\n", cudag_exec_device_name(x), major,
           minor);
    unsigned long n = o->iters;
    printf("replay (us, %lu replays after %lu warm-up%s): median %.2f  "
           "min %.2f  max %.2f  p10 %.2f  p90 %.2f\n",
           n, o->warmup, c->gate ? ", each alone behind a gate" : "",
           1e3 * quantile(t, n, 0.5), 1e3 * t[0],
           1e3 * t[n - 1], 1e3 * quantile(t, n, 0.1),
           1e3 * quantile(t, n, 0.9));
    if (m->launch_us >= 0) {
        printf("launch (us, host time to issue one replay, median of the "
               "warm-up): %.2f",
               m->launch_us);
        /* The GPU then waits for the host: a faster GPU path changes
         * nothing (docs/benchmarks.md, "When the host bounds a replay"). */
        if (m->launch_us >= 0.8 * 1e3 * quantile(t, n, 0.5))
            printf(" -- the host's launch call bounds %s%s",
                   c->gate ? "back-to-back replays" : "the replay",
                   c->flags & CUDAG_DEVICE_LAUNCH ? ""
                                                  : " (try --device-launch)");
        printf("\n");
    }
    printf("host (ms): parse+check %.3f  driver %.3f  load %.3f",
           ms(m->parse_ns), ms(st.driver_ns), ms(st.load_ns));
    print_sources(x);
    printf("  alloc %.3f  build %.3f  instantiate %.3f\n", ms(st.alloc_ns),
           ms(st.build_ns), ms(st.instantiate_ns));
    for (size_t i = 0; i < ns; i++) {
        if (!s[i].ok)
            continue;
        printf("buffer %s %s[%llu]: sum %.9g  fnv1a %016llx  first", s[i].name,
               cudag_type_name(s[i].type), (unsigned long long)s[i].count,
               s[i].sum, (unsigned long long)s[i].hash);
        for (unsigned k = 0; k < s[i].nfirst; k++)
            printf(" %.9g", s[i].first[k]);
        printf("\n");
    }
}

/* JSON has no NaN or infinity: those become null. */
static void json_num(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        printf("null");
}

static void print_json(const cli *c, const cudag_graph *g, const cudag_exec *x,
                       const run_opts *o, const measured *m, const summary *s,
                       size_t ns)
{
    const float *t = m->t;
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    unsigned long n = o->iters;
    printf("{\"graph\": ");
    cli_json_string(stdout, cudag_graph_name(g));
    printf(", \"file\": ");
    cli_json_string(stdout, cli_shown_name(o->file));
    printf(", \"device\": ");
    cli_json_string(stdout, cudag_exec_device_name(x));
    int major = 0, minor = 0;
    (void)cudag_exec_device_cc(x, &major, &minor);  /* x is not NULL */
    printf(", \"compute_capability\": \"%d.%d\", \"nodes\": %zu, \"edges\": "
           "%zu, \"downgraded_edges\": %u, \"no_pdl\": %s, "
           "\"device_launch\": %s, \"gated\": %s",
           major, minor, cudag_graph_node_count(g),
           cudag_graph_edge_count(g), st.downgraded_edges,
           c->flags & CUDAG_NO_PDL ? "true" : "false",
           c->flags & CUDAG_DEVICE_LAUNCH ? "true" : "false",
           c->gate ? "true" : "false");
    printf(", \"iters\": %lu, \"warmup\": %lu, \"replay_us\": {\"median\": ",
           n, o->warmup);
    json_num(1e3 * quantile(t, n, 0.5));
    printf(", \"min\": ");
    json_num(1e3 * t[0]);
    printf(", \"max\": ");
    json_num(1e3 * t[n - 1]);
    printf(", \"p10\": ");
    json_num(1e3 * quantile(t, n, 0.1));
    printf(", \"p90\": ");
    json_num(1e3 * quantile(t, n, 0.9));
    printf("}, \"launch_host_us\": ");
    if (m->launch_us >= 0)
        json_num(m->launch_us);
    else
        printf("null");
    printf(", \"host_ms\": {\"parse_check\": %.6f, \"driver\": %.6f, "
           "\"load\": %.6f, \"alloc\": %.6f, \"build\": %.6f, "
           "\"instantiate\": %.6f}, \"modules\": [",
           ms(m->parse_ns), ms(st.driver_ns), ms(st.load_ns), ms(st.alloc_ns),
           ms(st.build_ns), ms(st.instantiate_ns));
    for (size_t i = 0; i < cudag_exec_module_count(x); i++) {
        cudag_module_stats mst;
        if (cudag_exec_module_stats(x, i, &mst) != CUDAG_OK)
            continue;
        printf("%s{\"name\": ", i ? ", " : "");
        cli_json_string(stdout, mst.name);
        printf(", \"origin\": \"%s\", \"load_ms\": %.6f}",
               origin_word(mst.origin), ms(mst.load_ns));
    }
    printf("], \"buffers\": [");
    bool sep = false;
    for (size_t i = 0; i < ns; i++) {
        if (!s[i].ok)
            continue;
        printf("%s{\"name\": ", sep ? ", " : "");
        sep = true;
        cli_json_string(stdout, s[i].name);
        printf(", \"type\": \"%s\", \"count\": %llu, \"bytes\": %llu, "
               "\"sum\": ",
               cudag_type_name(s[i].type), (unsigned long long)s[i].count,
               (unsigned long long)s[i].bytes);
        json_num(s[i].sum);
        printf(", \"fnv1a\": \"%016llx\", \"first\": [",
               (unsigned long long)s[i].hash);
        for (unsigned k = 0; k < s[i].nfirst; k++) {
            if (k)
                printf(", ");
            json_num(s[i].first[k]);
        }
        printf("]}");
    }
    printf("]}\n");
}

/* ---- the command ------------------------------------------------------------ */

static int run(cli *c, const run_opts *o);

/* Monotonic host time in nanoseconds, for the parse+check figure. */
static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * UINT64_C(1000000000) + (uint64_t)t.tv_nsec;
}

int cmd_run(cli *c, int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf(help, c->prog, cli_gpu_help, cli_common_help);
        return CLI_OK;
    }
    run_opts o;
    int status = parse_args(c, argc, argv, &o);
    if (status != CLI_OK)
        return status;
    /* With --json a failure is one JSON object on standard output too; the
     * diagnostics still go to standard error as text. */
    c->keep = o.json;
    status = run(c, &o);
    if (status != CLI_OK && o.json)
        cli_json_failure(c, status, "cudag run failed");
    return status;
}

/* The warm-up replays, each issued alone (cudag_exec_replay returns
 * without waiting) and timed on the host into us[0..warmup), then waited
 * for: *launch_us is the median time to issue one, left as it was without
 * a warm-up.  Where it is as long as a replay, the GPU waits for the host,
 * whose time to issue a graph of many branches grows with its nodes. */
static int warm_up(cudag_exec *x, float *us, unsigned long warmup,
                   double *launch_us, cudag_error *err)
{
    int rc = CUDAG_OK;
    for (unsigned long i = 0; i < warmup && rc == CUDAG_OK; i++) {
        uint64_t t0 = now_ns();
        rc = cudag_exec_replay(x, CUDAG_REPLAY_GRAPH, 1, err);
        us[i] = (float)((double)(now_ns() - t0) / 1e3);
    }
    if (rc == CUDAG_OK)
        rc = cudag_exec_sync(x, err);
    if (rc == CUDAG_OK && warmup) {
        qsort(us, warmup, sizeof *us, cmp_float);
        *launch_us = quantile(us, warmup, 0.5);
    }
    return rc;
}

/* Loads, instantiates, replays and reports; returns an exit status. */
static int run(cli *c, const run_opts *o)
{
    uint64_t t0 = now_ns();
    cudag_graph *g = NULL;
    int status = cli_load(c, o->file, &g);
    uint64_t parse_ns = now_ns() - t0;
    if (status != CLI_OK)
        return status;
    for (size_t d = 0; d < o->ndumps; d++)
        if (cudag_graph_find_buffer(g, o->dumps[d].buffer) < 0) {
            cli_error(c, CUDAG_EUNKNOWN,
                      "--dump: graph '%s' has no buffer '%s'",
                      cudag_graph_name(g), o->dumps[d].buffer);
            cudag_graph_destroy(g);
            return CLI_EUSAGE;
        }

    cudag_exec_options eo = cli_exec_options(c);
    cudag_exec *x = NULL;
    cudag_error err;
    float *t = NULL, *w = NULL;
    summary *s = NULL;
    size_t nb = cudag_graph_buffer_count(g);
    unsigned errs = c->nerr;
    int rc = cudag_instantiate(g, &eo, &x, &err);
    if (rc != CUDAG_OK) {
        /* Errors reported through the callback (a strict PDL edge) are
         * printed already; the rest are printed here. */
        if (c->nerr == errs)
            cli_print_error(c, &err);
        status = cli_status(rc);
        goto out;
    }
    t = malloc(o->iters * sizeof *t);
    w = malloc((o->warmup ? o->warmup : 1) * sizeof *w);
    s = calloc(nb ? nb : 1, sizeof *s);
    if (!t || !w || !s) {
        cli_error(c, CUDAG_ENOMEM, "out of memory for %lu replay times",
                  o->iters + o->warmup);
        status = CLI_ECUDA;
        goto out;
    }
    measured m = {t, parse_ns, -1};
    rc = warm_up(x, w, o->warmup, &m.launch_us, &err);
    /* Both counts are at most 10000000 (parse_args). */
    if (rc == CUDAG_OK && c->gate)
        rc = cudag_exec_time_gated(x, CUDAG_REPLAY_GRAPH, 0,
                                   (unsigned)o->iters, t, &err);
    else if (rc == CUDAG_OK)
        rc = cudag_exec_time_back_to_back(x, CUDAG_REPLAY_GRAPH, 0,
                                          (unsigned)o->iters, t, &err);
    if (rc != CUDAG_OK) {
        cli_print_error(c, &err);
        status = cli_status(rc);
        goto out;
    }
    qsort(t, o->iters, sizeof *t, cmp_float);
    for (size_t b = 0; b < nb; b++) {
        int r = summarise(c, x, g, b, &s[b], o);
        if (r != CLI_OK && status == CLI_OK)
            status = r;
    }
    if (o->json)
        print_json(c, g, x, o, &m, s, nb);
    else if (!c->quiet)
        print_text(c, g, x, o, &m, s, nb);
out:
    free(t);
    free(w);
    free(s);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    return status;
}
