/* handbuilt.c — the baseline cudag is measured against: the same topology
 * built by hand with the CUDA driver API, as a user would write it without
 * cudag.  It shares no code with libcudag (it opens libcuda itself), reads
 * the topology that tools/bench/gen_graph.py writes with --topo, builds the graph
 * with cuGraphAddKernelNode and cuGraphAddDependencies, instantiates it, and
 * replays it.
 *
 *   handbuilt FILE.topo FATBIN [--iters N] [--warmup N] [--repeats N] [--no-pdl]
 *
 * Prints one JSON object: host times of build and instantiate (medians over
 * --repeats builds; the first one's too), and the
 * median / p10 / p90 replay time over CUDA events. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALLS(X)                                                              \
    X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain)                      \
    X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuLibraryLoadFromFile) \
    X(cuLibraryGetKernel) X(cuKernelGetFunction) X(cuLibraryUnload)           \
    X(cuMemAlloc) X(cuMemFree) X(cuMemsetD32) X(cuStreamCreate)               \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuGraphCreate)                \
    X(cuGraphAddKernelNode) X(cuGraphAddDependencies) X(cuGraphDestroy)       \
    X(cuGraphInstantiateWithFlags) X(cuGraphExecDestroy) X(cuGraphLaunch)     \
    X(cuGraphUpload) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)  \
    X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorName)

#define DECL(name) static PFN_##name p_##name;
#define PFN_cuGraphAddDependencies PFN_cuGraphAddDependencies_v12030
#define PFN_cuGetProcAddress PFN_cuGetProcAddress_v12000
#define PFN_cuMemAlloc PFN_cuMemAlloc_v3020
#define PFN_cuMemFree PFN_cuMemFree_v3020
#define PFN_cuMemsetD32 PFN_cuMemsetD32_v3020
#define PFN_cuGraphInstantiateWithFlags PFN_cuGraphInstantiateWithFlags_v11040
#define PFN_cuGraphUpload PFN_cuGraphUpload_v11010
#define PFN_cuGraphLaunch PFN_cuGraphLaunch_v10000
#define PFN_cuEventRecord PFN_cuEventRecord_v2000
#define PFN_cuEventElapsedTime PFN_cuEventElapsedTime_v2000
#define PFN_cuEventDestroy PFN_cuEventDestroy_v4000
#define PFN_cuStreamDestroy PFN_cuStreamDestroy_v4000
#define PFN_cuDevicePrimaryCtxRelease PFN_cuDevicePrimaryCtxRelease_v11000
#define PFN_cuStreamSynchronize PFN_cuStreamSynchronize_v2000
#define PFN_cuStreamCreate PFN_cuStreamCreate_v2000
#define PFN_cuInit PFN_cuInit_v2000
#define PFN_cuDeviceGet PFN_cuDeviceGet_v2000
#define PFN_cuDevicePrimaryCtxRetain PFN_cuDevicePrimaryCtxRetain_v7000
#define PFN_cuCtxSetCurrent PFN_cuCtxSetCurrent_v4000
#define PFN_cuLibraryLoadFromFile PFN_cuLibraryLoadFromFile_v12000
#define PFN_cuLibraryGetKernel PFN_cuLibraryGetKernel_v12000
#define PFN_cuKernelGetFunction PFN_cuKernelGetFunction_v12000
#define PFN_cuLibraryUnload PFN_cuLibraryUnload_v12000
#define PFN_cuGraphCreate PFN_cuGraphCreate_v10000
#define PFN_cuGraphAddKernelNode PFN_cuGraphAddKernelNode_v12000
#define PFN_cuGraphDestroy PFN_cuGraphDestroy_v10000
#define PFN_cuGraphExecDestroy PFN_cuGraphExecDestroy_v10000
#define PFN_cuEventCreate PFN_cuEventCreate_v2000
#define PFN_cuEventSynchronize PFN_cuEventSynchronize_v2000
#define PFN_cuGetErrorName PFN_cuGetErrorName_v6000
CALLS(DECL)

static int versions(const char *name)
{
    return strcmp(name, "cuGraphAddDependencies") == 0 ? 12030 : 12000;
}

#define CK(call)                                                              \
    do {                                                                      \
        CUresult r_ = (call);                                                 \
        if (r_ != CUDA_SUCCESS) {                                             \
            const char *n_ = "?";                                             \
            if (p_cuGetErrorName)                                             \
                p_cuGetErrorName(r_, &n_);                                    \
            fprintf(stderr, "handbuilt: %s failed: %s\n", #call, n_);        \
            exit(4);                                                          \
        }                                                                     \
    } while (0)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmpf(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: handbuilt FILE.topo FATBIN [--iters N] "
                        "[--warmup N] [--repeats N] [--no-pdl]\n");
        return 2;
    }
    int iters = 200, warmup = 20, pdl = 1, repeats = 1;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-pdl") == 0)
            pdl = 0;
    }
    if (iters < 1)
        iters = 1;
    if (repeats < 1 || repeats > 1000)
        repeats = 1;

    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "handbuilt: no CUDA driver found (libcuda.so.1): %s\n",
                dlerror());
        return 3;
    }
    /* dlsym returns an object pointer; copy it into the function pointer
     * (ISO C has no cast between the two). */
    PFN_cuGetProcAddress gpa;
    void *sym = dlsym(lib, "cuGetProcAddress_v2");
    memcpy(&gpa, &sym, sizeof gpa);
    if (!gpa) {
        fprintf(stderr, "handbuilt: cuGetProcAddress_v2 missing\n");
        return 3;
    }
#define LOAD(name)                                                            \
    if (gpa(#name, (void **)&p_##name, versions(#name), CU_GET_PROC_ADDRESS_DEFAULT, \
            NULL) != CUDA_SUCCESS || !p_##name) {                             \
        fprintf(stderr, "handbuilt: cannot resolve %s\n", #name);             \
        return 3;                                                             \
    }
    CALLS(LOAD)

    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 5;
    }
    int n = 0, gx = 1, bx = 1;
    char kname[128], line[512];
    /* Parameters: up to 4 of i64, f32 or a device pointer. */
    char ptype[4] = {0};
    long long ival[4] = {0};
    float fval[4] = {0};
    int np = 0;
    if (fscanf(f, "nodes %d\n", &n) != 1 || n < 1 || !fgets(line, sizeof line, f)) {
        fprintf(stderr, "handbuilt: bad topology file\n");
        return 5;
    }
    char *tok = strtok(line, " \n");
    tok = strtok(NULL, " \n");
    snprintf(kname, sizeof kname, "%s", tok ? tok : "");
    tok = strtok(NULL, " \n");
    gx = tok ? atoi(tok) : 1;
    tok = strtok(NULL, " \n");
    bx = tok ? atoi(tok) : 1;
    while ((tok = strtok(NULL, " \n")) && np < 4) {
        if (strncmp(tok, "i64:", 4) == 0)
            ptype[np] = 'i', ival[np] = atoll(tok + 4);
        else if (strncmp(tok, "f32:", 4) == 0)
            ptype[np] = 'f', fval[np] = (float)atof(tok + 4);
        else
            ptype[np] = 'p';
        np++;
    }
    size_t cap = 1024, ne = 0;
    int *eu = malloc(cap * sizeof *eu), *ev = malloc(cap * sizeof *ev), *ek = malloc(cap * sizeof *ek);
    int u, v, k;
    while (fscanf(f, "edge %d %d %d\n", &u, &v, &k) == 3) {
        if (ne == cap) {
            cap *= 2;
            eu = realloc(eu, cap * sizeof *eu);
            ev = realloc(ev, cap * sizeof *ev);
            ek = realloc(ek, cap * sizeof *ek);
        }
        eu[ne] = u, ev[ne] = v, ek[ne] = pdl ? k : 0;
        ne++;
    }
    fclose(f);

    CUdevice dev;
    CUcontext ctx;
    CK(p_cuInit(0));
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUlibrary mod;
    CUkernel kern;
    CUfunction fn;
    CK(p_cuLibraryLoadFromFile(&mod, argv[2], NULL, NULL, 0, NULL, NULL, 0));
    CK(p_cuLibraryGetKernel(&kern, mod, kname));
    CK(p_cuKernelGetFunction(&fn, kern));
    CUdeviceptr buf = 0;
    CK(p_cuMemAlloc(&buf, 1 << 20));
    CK(p_cuMemsetD32(buf, 0, (1 << 20) / 4));
    void *params[4];
    for (int i = 0; i < np; i++)
        params[i] = ptype[i] == 'i' ? (void *)&ival[i]
                    : ptype[i] == 'f' ? (void *)&fval[i] : (void *)&buf;
    CUstream s;
    CK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    /* One-shot host timings move by 10-20 % from call to call: build and
     * instantiate the graph --repeats times and report the medians.  The
     * first graph is kept (it is the one replayed), so every later build
     * runs beside one live graph, as in `cudag bench --host-repeats`. */
    double *tb = malloc((size_t)repeats * sizeof *tb);
    double *ti = malloc((size_t)repeats * sizeof *ti);
    CUgraphNode *nodes = malloc((size_t)n * sizeof *nodes);
    CUgraph g = NULL, g_rep;
    CUgraphExec x = NULL, x_rep;
    for (int rep = 0; rep < repeats; rep++) {
        double t0 = now_ms();
        CK(p_cuGraphCreate(&g_rep, 0));
        CUDA_KERNEL_NODE_PARAMS kp;
        memset(&kp, 0, sizeof kp);
        kp.func = fn;
        kp.gridDimX = (unsigned)gx, kp.gridDimY = 1, kp.gridDimZ = 1;
        kp.blockDimX = (unsigned)bx, kp.blockDimY = 1, kp.blockDimZ = 1;
        kp.kernelParams = np ? params : NULL;
        for (int i = 0; i < n; i++)
            CK(p_cuGraphAddKernelNode(&nodes[i], g_rep, NULL, 0, &kp));
        for (size_t i = 0; i < ne; i++) {
            CUgraphEdgeData ed;
            memset(&ed, 0, sizeof ed);
            if (ek[i]) {
                ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
                ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
            }
            CK(p_cuGraphAddDependencies(g_rep, &nodes[eu[i]], &nodes[ev[i]], &ed, 1));
        }
        double t1 = now_ms();
        CK(p_cuGraphInstantiateWithFlags(&x_rep, g_rep, 0));
        CK(p_cuGraphUpload(x_rep, s));
        CK(p_cuStreamSynchronize(s));
        double t2 = now_ms();
        tb[rep] = t1 - t0;
        ti[rep] = t2 - t1;
        if (rep == 0) {
            g = g_rep, x = x_rep;
        } else {
            CK(p_cuGraphExecDestroy(x_rep));
            CK(p_cuGraphDestroy(g_rep));
        }
    }
    double first_build = tb[0], first_inst = ti[0];
    qsort(tb, (size_t)repeats, sizeof *tb, cmpd);
    qsort(ti, (size_t)repeats, sizeof *ti, cmpd);

    for (int i = 0; i < warmup; i++)
        CK(p_cuGraphLaunch(x, s));
    CK(p_cuStreamSynchronize(s));
    CUevent e0, e1;
    CK(p_cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CK(p_cuEventCreate(&e1, CU_EVENT_DEFAULT));
    float *ms = malloc((size_t)iters * sizeof *ms);
    for (int i = 0; i < iters; i++) {
        CK(p_cuEventRecord(e0, s));
        CK(p_cuGraphLaunch(x, s));
        CK(p_cuEventRecord(e1, s));
        CK(p_cuEventSynchronize(e1));
        CK(p_cuEventElapsedTime(&ms[i], e0, e1));
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmpf);
    printf("{\"tool\": \"handbuilt\", \"nodes\": %d, \"edges\": %zu, \"pdl\": %d, "
           "\"build_ms\": %.4f, \"instantiate_ms\": %.4f, \"repeats\": %d, "
           "\"first_build_ms\": %.4f, \"first_instantiate_ms\": %.4f, "
           "\"replay_us\": {\"median\": %.3f, "
           "\"p10\": %.3f, \"p90\": %.3f, \"min\": %.3f}, \"iters\": %d}\n",
           n, ne, pdl, tb[repeats / 2], ti[repeats / 2], repeats, first_build,
           first_inst, ms[iters / 2] * 1e3, ms[iters / 10] * 1e3,
           ms[iters * 9 / 10] * 1e3, ms[0] * 1e3, iters);
    CK(p_cuEventDestroy(e0));
    CK(p_cuEventDestroy(e1));
    CK(p_cuGraphExecDestroy(x));
    CK(p_cuGraphDestroy(g));
    CK(p_cuStreamDestroy(s));
    CK(p_cuMemFree(buf));
    CK(p_cuLibraryUnload(mod));
    CK(p_cuDevicePrimaryCtxRelease(dev));
    free(ms);
    free(tb);
    free(ti);
    free(nodes);
    free(eu);
    free(ev);
    free(ek);
    return 0;
}
