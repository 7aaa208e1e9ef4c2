/* soak.c — replays graphs for a long time and checks that nothing drifts:
 * results, host memory, device memory.
 *
 *   soak [--replays N] [--block N] [--kernels-dir DIR] GRAPH.yaml... 
 *
 * For each graph, two execs run side by side: one as declared (programmatic
 * edges) and one with CUDAG_NO_PDL (every edge full).  Every --block replays
 * (default 10 000) both get the same fresh random inputs, replay the block,
 * and every buffer of the two must be equal bit for bit.  Meanwhile a second
 * host thread keeps loading, instantiating, replaying and destroying other
 * graphs on the same device (the first graph again, as a separate exec), the
 * use docs/api.md allows: distinct handles on distinct threads.  Prints one
 * JSON line; exit status 1 on any mismatch or error. */
#include "cudag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct pair {
    const char *path;
    cudag_graph *g;
    cudag_exec *pdl, *full;
    size_t nbuf;
    void **host_a, **host_b;
    uint64_t *bytes;
} pair;

static atomic_bool stop;
static atomic_long churn_cycles;
static atomic_int churn_failed;

static const char *const *dirs;

static void die(const char *what, const cudag_error *e)
{
    char line[2048];
    cudag_error_format(e, line, sizeof line);
    fprintf(stderr, "soak: %s: %s\n", what, line);
    exit(1);
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Free device memory, read in an exec's context (cuMemGetInfo needs one). */
static size_t device_free(const cudag_exec *x)
{
    cudag_error e;
    size_t fr = 0, total = 0;
    if (cudag__exec_enter(x, &e) != CUDAG_OK)
        die("enter", &e);
    if (x->gpu.drv->cuMemGetInfo(&fr, &total) != CUDA_SUCCESS)
        fr = 0;
    cudag__exec_leave(x);
    return fr;
}

static cudag_exec *make_exec(cudag_graph *g, unsigned flags)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    cudag_exec *x;
    cudag_error e;
    if (cudag_instantiate(g, &o, &x, &e) != CUDAG_OK)
        die("instantiate", &e);
    return x;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fresh inputs for both execs: every buffer the graph initialises gets new
 * random floats in [-1, 1) (the graphs soaked here are f32). */
static void fresh_inputs(pair *p, uint64_t *seed)
{
    cudag_error e;
    for (size_t i = 0; i < p->nbuf; i++) {
        float *h = p->host_a[i];
        size_t n = p->bytes[i] / sizeof(float);
        for (size_t k = 0; k < n; k++)
            h[k] = (float)((double)(splitmix(seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        const char *name = cudag_graph_buffer_name(p->g, i);
        if (cudag_exec_write(p->pdl, name, h, p->bytes[i], &e) != CUDAG_OK ||
            cudag_exec_write(p->full, name, h, p->bytes[i], &e) != CUDAG_OK)
            die("write", &e);
    }
}

static long compare(pair *p)
{
    cudag_error e;
    long bad = 0;
    for (size_t i = 0; i < p->nbuf; i++) {
        const char *name = cudag_graph_buffer_name(p->g, i);
        if (cudag_exec_read(p->pdl, name, p->host_a[i], p->bytes[i], &e) != CUDAG_OK ||
            cudag_exec_read(p->full, name, p->host_b[i], p->bytes[i], &e) != CUDAG_OK)
            die("read", &e);
        if (memcmp(p->host_a[i], p->host_b[i], p->bytes[i]) != 0) {
            fprintf(stderr, "soak: %s: buffer '%s' differs between the PDL and "
                            "the full-edge graph\n", p->path, name);
            bad++;
        }
    }
    return bad;
}

/* The second thread: whole life cycles of other execs, as fast as it can. */
static void *churn(void *arg)
{
    const char *path = arg;
    while (!atomic_load(&stop)) {
        cudag_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.include_dirs = dirs;
        cudag_graph *g;
        cudag_exec *x;
        cudag_error e;
        if (cudag_load_file(path, &o, &g, &e) != CUDAG_OK) {
            atomic_store(&churn_failed, 1);
            break;
        }
        cudag_exec_options eo;
        memset(&eo, 0, sizeof eo);
        eo.size = sizeof eo;
        if (cudag_instantiate(g, &eo, &x, &e) != CUDAG_OK ||
            cudag_exec_launch(x, 10, &e) != CUDAG_OK ||
            cudag_exec_sync(x, &e) != CUDAG_OK) {
            char line[2048];
            cudag_error_format(&e, line, sizeof line);
            fprintf(stderr, "soak: churn: %s\n", line);
            atomic_store(&churn_failed, 1);
            cudag_graph_destroy(g);
            break;
        }
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
        atomic_fetch_add(&churn_cycles, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long replays = 1000000, block = 10000;
    const char *kdir = NULL;
    const char *files[16];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--replays") == 0 && i + 1 < argc)
            replays = atol(argv[++i]);
        else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc)
            block = atol(argv[++i]);
        else if (strcmp(argv[i], "--kernels-dir") == 0 && i + 1 < argc)
            kdir = argv[++i];
        else if (nfiles < 16)
            files[nfiles++] = argv[i];
    }
    if (!nfiles || block < 1 || replays < block) {
        fprintf(stderr, "usage: soak [--replays N] [--block N] "
                        "[--kernels-dir DIR] GRAPH.yaml...\n");
        return 2;
    }
    static const char *dirlist[2];
    dirlist[0] = kdir;
    dirs = kdir ? dirlist : NULL;

    pair p[16];
    memset(p, 0, sizeof p);
    for (int f = 0; f < nfiles; f++) {
        cudag_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.include_dirs = dirs;
        cudag_error e;
        p[f].path = files[f];
        if (cudag_load_file(files[f], &o, &p[f].g, &e) != CUDAG_OK)
            die(files[f], &e);
        p[f].pdl = make_exec(p[f].g, 0);
        p[f].full = make_exec(p[f].g, CUDAG_NO_PDL);
        p[f].nbuf = cudag_graph_buffer_count(p[f].g);
        p[f].host_a = calloc(p[f].nbuf, sizeof(void *));
        p[f].host_b = calloc(p[f].nbuf, sizeof(void *));
        p[f].bytes = calloc(p[f].nbuf, sizeof(uint64_t));
        for (size_t i = 0; i < p[f].nbuf; i++) {
            uint64_t dptr;
            if (cudag_exec_buffer(p[f].pdl, cudag_graph_buffer_name(p[f].g, i),
                                  &dptr, &p[f].bytes[i], &e) != CUDAG_OK)
                die("buffer", &e);
            p[f].host_a[i] = malloc(p[f].bytes[i]);
            p[f].host_b[i] = malloc(p[f].bytes[i]);
        }
    }
    /* Warm up everything once, then take the baselines. */
    uint64_t seed = 12345;
    for (int f = 0; f < nfiles; f++) {
        cudag_error e;
        fresh_inputs(&p[f], &seed);
        if (cudag_exec_launch(p[f].pdl, 10, &e) || cudag_exec_launch(p[f].full, 10, &e) ||
            cudag_exec_sync(p[f].pdl, &e) || cudag_exec_sync(p[f].full, &e))
            die("warm-up", &e);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, churn, (void *)files[0]) != 0)
        return 1;
    sleep(1);   /* let the churn thread reach its steady state */
    long rss0 = rss_kib();
    size_t free0 = device_free(p[0].pdl);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long mismatches = 0, blocks = 0, rss_tenth = 0, rss_half = 0;
    for (long done = 0; done < replays; done += block, blocks++) {
        /* Samples along the way: growth that stops early is a cache warming
         * up, growth that goes on is a leak. */
        if (done == replays / block / 10 * block)
            rss_tenth = rss_kib();
        if (done == replays / block / 2 * block)
            rss_half = rss_kib();
        for (int f = 0; f < nfiles; f++) {
            cudag_error e;
            fresh_inputs(&p[f], &seed);
            if (cudag_exec_launch(p[f].pdl, (unsigned)block, &e) != CUDAG_OK ||
                cudag_exec_launch(p[f].full, (unsigned)block, &e) != CUDAG_OK ||
                cudag_exec_sync(p[f].pdl, &e) != CUDAG_OK ||
                cudag_exec_sync(p[f].full, &e) != CUDAG_OK)
                die("replay", &e);
            mismatches += compare(&p[f]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long rss1 = rss_kib();
    size_t free1 = device_free(p[0].pdl);
    atomic_store(&stop, true);
    pthread_join(th, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("{\"replays_per_graph_and_mode\": %ld, \"graphs\": %d, \"blocks\": %ld, "
           "\"seconds\": %.2f, \"mismatches\": %ld, \"churn_cycles\": %ld, "
           "\"churn_failed\": %d, \"rss_kib\": {\"start\": %ld, \"at_10pct\": %ld, "
           "\"at_50pct\": %ld, \"end\": %ld}, "
           "\"device_free_mib\": {\"start\": %.1f, \"end\": %.1f}}\n",
           replays, nfiles, blocks, secs, mismatches,
           atomic_load(&churn_cycles), atomic_load(&churn_failed), rss0,
           rss_tenth, rss_half, rss1,
           free0 / 1048576.0, free1 / 1048576.0);
    for (int f = 0; f < nfiles; f++) {
        cudag_exec_destroy(p[f].pdl);
        cudag_exec_destroy(p[f].full);
        for (size_t i = 0; i < p[f].nbuf; i++) {
            free(p[f].host_a[i]);
            free(p[f].host_b[i]);
        }
        free(p[f].host_a);
        free(p[f].host_b);
        free(p[f].bytes);
        cudag_graph_destroy(p[f].g);
    }
    return mismatches || atomic_load(&churn_failed) ? 1 : 0;
}
