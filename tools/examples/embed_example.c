/* embed_example.c — cudag inside a host program that owns its GPU memory,
 * its context and its stream: load a graph from YAML, bind the program's
 * device pointers to the graph's buffers, instantiate on the program's
 * stream, then replay in a loop, changing a scalar argument before each
 * replay, and read the result back.
 *
 * Build it against an installed cudag with nothing else:
 *     cc embed_example.c $(pkg-config --cflags --libs cudag) -o embed_example
 * A real program would include <cuda.h> and link -lcuda (or use the CUDA
 * runtime) for its own allocations; this one opens the driver itself, like
 * cudag does, so that it needs neither the CUDA toolkit to build nor a GPU
 * to link.
 *
 * Usage: embed_example [KERNELS_DIR]
 *   KERNELS_DIR holds cudag_kernels.yaml and its fatbin; default: the
 *   environment's CUDAG_KERNELS_DIR, else the installed kernels (found by
 *   the library on its own).
 * Exit status: 0 when the result is right, 1 on an error, 77 when this
 * machine has no CUDA driver or device (a test harness's "skipped"). */
#include <cudag.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few driver entry points the program uses, as the driver exports
 * them (the _v2 names are the current ABI of these functions). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*PrimaryCtxRelease)(CUdevice);
    CUresult (*CtxPush)(CUcontext);
    CUresult (*CtxPop)(CUcontext *);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
} cu;

/* dlsym's result stored through a void ** is POSIX's way to fill a function
 * pointer. */
#define LOAD(field, name)                                                      \
    if (!(*(void **)&cu.field = dlsym(h, name)))                               \
        return -1;

static int open_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    LOAD(Init, "cuInit")
    LOAD(DeviceGet, "cuDeviceGet")
    LOAD(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
    LOAD(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
    LOAD(CtxPush, "cuCtxPushCurrent_v2")
    LOAD(CtxPop, "cuCtxPopCurrent_v2")
    LOAD(StreamCreate, "cuStreamCreate")
    LOAD(StreamDestroy, "cuStreamDestroy_v2")
    LOAD(MemAlloc, "cuMemAlloc_v2")
    LOAD(MemFree, "cuMemFree_v2")
    return 0;
}

/* y = a·x + y over N floats: one kernel node from the shipped library. */
static const char graph_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 1048576}\n"
    "buffers:\n"
    "  x: {type: f32, count: N}\n"
    "  y: {type: f32, count: N}\n"
    "nodes:\n"
    "  step:\n"
    "    kernel: axpy_f32\n"
    "    grid: cdiv(N, 1024)\n"
    "    block: 256\n"
    "    args: [x, y, 1.0, N]\n";

#define N 1048576
#define STEPS 10

static int fail(const char *what, const cudag_error *e)
{
    char buf[2048];
    cudag_error_format(e, buf, sizeof buf);
    fprintf(stderr, "embed_example: %s: %s\n", what, buf);
    return e->code == CUDAG_ENODRIVER ? 77 : 1;
}

int main(int argc, char **argv)
{
    if (open_driver() != 0 || cu.Init(0) != 0) {
        printf("embed_example: no CUDA driver or device: nothing to run\n");
        return 77;
    }
    /* The program's own context, stream and memory. */
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dx = 0, dy = 0;
    if (cu.DeviceGet(&dev, 0) || cu.PrimaryCtxRetain(&ctx, dev)) {
        printf("embed_example: no CUDA device: nothing to run\n");
        return 77;
    }
    if (cu.CtxPush(ctx) || cu.StreamCreate(&stream, 1 /* non-blocking */) ||
        cu.MemAlloc(&dx, N * sizeof(float)) ||
        cu.MemAlloc(&dy, N * sizeof(float))) {
        fprintf(stderr, "embed_example: CUDA set-up failed\n");
        return 1;
    }

    /* Load the graph; the kernels' manifest comes from KERNELS_DIR or the
     * installed library. */
    const char *kdir = argc > 1 ? argv[1] : getenv("CUDAG_KERNELS_DIR");
    const char *dirs[] = {kdir, NULL};
    cudag_options opts;
    memset(&opts, 0, sizeof opts);
    opts.size = sizeof opts;
    opts.include_dirs = kdir ? dirs : NULL;
    cudag_graph *g = NULL;
    cudag_exec *x = NULL;
    cudag_error err;
    int status = 1;
    if (cudag_load_string(graph_yaml, strlen(graph_yaml), "embedded.yaml",
                          &opts, &g, &err) != CUDAG_OK) {
        status = fail("loading the graph", &err);
        goto out;
    }
    /* The graph works on the program's memory, in its context, on its
     * stream: cudag allocates nothing. */
    if (cudag_bind_buffer(g, "x", dx, &err) != CUDAG_OK ||
        cudag_bind_buffer(g, "y", dy, &err) != CUDAG_OK) {
        status = fail("binding buffers", &err);
        goto out;
    }
    cudag_exec_options xo;
    memset(&xo, 0, sizeof xo);
    xo.size = sizeof xo;
    xo.context = ctx;
    xo.stream = stream;
    if (cudag_instantiate(g, &xo, &x, &err) != CUDAG_OK) {
        status = fail("instantiating", &err);
        goto out;
    }

    float *hx = malloc(N * sizeof *hx), *hy = malloc(N * sizeof *hy);
    if (!hx || !hy) {
        free(hx);
        free(hy);
        fprintf(stderr, "embed_example: out of memory\n");
        goto out;
    }
    for (long i = 0; i < N; i++) {
        hx[i] = (float)(i % 101) - 50.0f;
        hy[i] = 0.0f;
    }
    /* Whole-buffer copies through the exec go on its stream, in order with
     * the replays. */
    if (cudag_exec_write(x, "x", hx, N * sizeof *hx, &err) != CUDAG_OK ||
        cudag_exec_write(x, "y", hy, N * sizeof *hy, &err) != CUDAG_OK) {
        status = fail("writing inputs", &err);
        goto done;
    }
    /* The loop: a new scalar each iteration, no re-instantiation. */
    for (int i = 1; i <= STEPS; i++) {
        cudag_arg a = cudag_arg_float((double)i);
        if (cudag_exec_set_arg(x, "step", 2, &a, &err) != CUDAG_OK ||
            cudag_exec_launch(x, 1, &err) != CUDAG_OK) {
            status = fail("replaying", &err);
            goto done;
        }
    }
    if (cudag_exec_read(x, "y", hy, N * sizeof *hy, &err) != CUDAG_OK) {
        status = fail("reading the result", &err);
        goto done;
    }
    /* y = (1 + 2 + … + 10)·x = 55·x, exactly in floats for these values. */
    status = 0;
    for (long i = 0; i < N; i++)
        if (hy[i] != 55.0f * hx[i]) {
            fprintf(stderr, "embed_example: y[%ld] = %g, expected %g\n", i,
                    (double)hy[i], 55.0 * hx[i]);
            status = 1;
            break;
        }
    if (status == 0)
        printf("embed_example: ok: y = 55*x over %d floats after %d replays "
               "with a new scalar each (cudag %s)\n",
               N, STEPS, cudag_version_string());
done:
    free(hx);
    free(hy);
out:
    cudag_exec_destroy(x);      /* the program's memory and stream stay */
    cudag_graph_destroy(g);
    cu.MemFree(dx);
    cu.MemFree(dy);
    cu.StreamDestroy(stream);
    CUcontext popped;
    cu.CtxPop(&popped);
    cu.PrimaryCtxRelease(dev);
    return status;
}
