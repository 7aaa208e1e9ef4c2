/* launch_c.c — the C side of python/bench/replay_overhead.py: host time of
 * one cudag_exec_launch(x, 1, &err) call, measured as the Python side
 * measures exe.launch(): batches of CALLS calls timed with the monotonic
 * clock, the stream synchronised between batches (so the GPU never holds
 * back the launches), the median over the batches.  Prints one JSON object.
 *
 *     launch_c FILE.yaml [CALLS] [BATCHES]
 *
 * Includes are found in $CUDAG_KERNELS_DIR.  Exit status 77 without a
 * CUDA driver or device. */
#include <cudag.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int fail(const char *what, const cudag_error *e)
{
    char buf[2048];
    cudag_error_format(e, buf, sizeof buf);
    fprintf(stderr, "launch_c: %s: %s\n", what, buf);
    return e->code == CUDAG_ENODRIVER ? 77 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: launch_c FILE.yaml [CALLS] [BATCHES]\n");
        return 2;
    }
    int calls = argc > 2 ? atoi(argv[2]) : 50;
    int batches = argc > 3 ? atoi(argv[3]) : 200;
    if (calls < 1 || batches < 1 || batches > 100000)
        return 2;
    const char *kdir = getenv("CUDAG_KERNELS_DIR");
    const char *dirs[] = {kdir, NULL};
    cudag_options o = {.size = sizeof o, .include_dirs = kdir ? dirs : NULL};
    cudag_graph *g = NULL;
    cudag_exec *x = NULL;
    cudag_error err;
    if (cudag_load_file(argv[1], &o, &g, &err) != CUDAG_OK)
        return fail("load", &err);
    cudag_exec_options xo = {.size = sizeof xo};
    int rc = cudag_instantiate(g, &xo, &x, &err);
    if (rc != CUDAG_OK) {
        rc = fail("instantiate", &err);
        cudag_graph_destroy(g);
        return rc;
    }
    double *per = malloc((size_t)batches * sizeof *per);
    rc = per ? 0 : 1;
    for (int b = -batches / 10 - 1; rc == 0 && b < batches; b++) {
        double t0 = now_ns();
        for (int i = 0; i < calls; i++)
            if (cudag_exec_launch(x, 1, &err) != CUDAG_OK) {
                rc = fail("launch", &err);
                break;
            }
        double t1 = now_ns();
        if (rc == 0 && cudag_exec_sync(x, &err) != CUDAG_OK)
            rc = fail("sync", &err);
        if (b >= 0)                     /* the first tenth warms up */
            per[b] = (t1 - t0) / calls;
    }
    if (rc == 0) {
        qsort(per, (size_t)batches, sizeof *per, cmp);
        printf("{\"c_launch_ns\": %.1f, \"p10_ns\": %.1f, \"p90_ns\": %.1f, "
               "\"calls\": %d, \"batches\": %d}\n",
               per[batches / 2], per[batches / 10], per[batches * 9 / 10],
               calls, batches);
    }
    free(per);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    return rc;
}
