/* handbuilt.c — the baseline cudag is measured against: the same topology
 * built by hand with the CUDA driver API, as a user would write it without
 * cudag.  It shares no code with libcudag (it opens libcuda itself), reads
 * the topology that tools/bench/gen_graph.py writes with --topo, builds the graph
 * with cuGraphAddKernelNode and cuGraphAddDependencies, instantiates it, and
 * replays it.
 *
 *   handbuilt FILE.topo FATBIN [--iters N] [--warmup N] [--repeats N] [--no-pdl]
 *             [--device-launch] [--gate]
 *
 * --device-launch instantiates with CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH
 * (what `cudag run --device-launch` does); --gate holds each timed replay
 * behind a host function until it is queued whole, as
 * `cudag run --gate` (cudag_exec_time_gated) does, written here again with
 * the driver API alone.
 *
 * Prints one JSON object: host times of build and instantiate (medians over
 * --repeats builds; the first one's too), and the
 * median / p10 / p90 replay time over CUDA events. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdatomic.h>
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
    X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorName) X(cuLaunchHostFunc)

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
#define PFN_cuLaunchHostFunc PFN_cuLaunchHostFunc_v10000
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

/* What the command line asks for. */
typedef struct opts {
    const char *topo, *fatbin;
    int iters, warmup, pdl, repeats, device_launch, gate;
} opts;

/* The topology file: n nodes all launching kernel kname on a gx x bx grid
 * with up to 4 parameters (i64, f32 or a device pointer), and ne edges
 * eu[i] -> ev[i], programmatic when ek[i]. */
typedef struct topo {
    int n, gx, bx, np;
    char kname[128];
    char ptype[4];
    long long ival[4];
    float fval[4];
    size_t ne;
    int *eu, *ev, *ek;
} topo;

/* The device side every build shares. */
typedef struct setup {
    CUdevice dev;
    CUlibrary mod;
    CUfunction fn;
    CUdeviceptr buf;
    CUstream s;
    void *params[4];
    unsigned long long inst_flags;
} setup;

/* Returns 0, or 2 (the exit status) after printing the usage. */
static int parse_args(int argc, char **argv, opts *o)
{
    if (argc < 3) {
        fprintf(stderr, "usage: handbuilt FILE.topo FATBIN [--iters N] "
                        "[--warmup N] [--repeats N] [--no-pdl] "
                        "[--device-launch] [--gate]\n");
        return 2;
    }
    o->topo = argv[1], o->fatbin = argv[2];
    o->iters = 200, o->warmup = 20, o->pdl = 1, o->repeats = 1;
    o->device_launch = 0, o->gate = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            o->iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            o->warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            o->repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-pdl") == 0)
            o->pdl = 0;
        else if (strcmp(argv[i], "--device-launch") == 0)
            o->device_launch = 1;
        else if (strcmp(argv[i], "--gate") == 0)
            o->gate = 1;
    }
    if (o->iters < 1)
        o->iters = 1;
    if (o->repeats < 1 || o->repeats > 1000)
        o->repeats = 1;
    return 0;
}

/* Opens libcuda and resolves every entry point.  Returns 0, or 3 (the exit
 * status) after printing why. */
static int load_driver(void)
{
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
    return 0;
}

/* Reads the topology at path; with pdl 0 every edge is full.  Returns 0, or
 * 5 (the exit status) after printing why. */
static int read_topo(const char *path, int pdl, topo *t)
{
    memset(t, 0, sizeof *t);
    t->gx = t->bx = 1;
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 5;
    }
    char line[512];
    if (fscanf(f, "nodes %d\n", &t->n) != 1 || t->n < 1 ||
        !fgets(line, sizeof line, f)) {
        fprintf(stderr, "handbuilt: bad topology file\n");
        return 5;
    }
    char *tok = strtok(line, " \n");
    tok = strtok(NULL, " \n");
    snprintf(t->kname, sizeof t->kname, "%s", tok ? tok : "");
    tok = strtok(NULL, " \n");
    t->gx = tok ? atoi(tok) : 1;
    tok = strtok(NULL, " \n");
    t->bx = tok ? atoi(tok) : 1;
    while ((tok = strtok(NULL, " \n")) && t->np < 4) {
        int p = t->np;
        if (strncmp(tok, "i64:", 4) == 0)
            t->ptype[p] = 'i', t->ival[p] = atoll(tok + 4);
        else if (strncmp(tok, "f32:", 4) == 0)
            t->ptype[p] = 'f', t->fval[p] = (float)atof(tok + 4);
        else
            t->ptype[p] = 'p';
        t->np++;
    }
    size_t cap = 1024;
    t->eu = malloc(cap * sizeof *t->eu);
    t->ev = malloc(cap * sizeof *t->ev);
    t->ek = malloc(cap * sizeof *t->ek);
    int u, v, k;
    while (fscanf(f, "edge %d %d %d\n", &u, &v, &k) == 3) {
        if (t->ne == cap) {
            cap *= 2;
            t->eu = realloc(t->eu, cap * sizeof *t->eu);
            t->ev = realloc(t->ev, cap * sizeof *t->ev);
            t->ek = realloc(t->ek, cap * sizeof *t->ek);
        }
        t->eu[t->ne] = u, t->ev[t->ne] = v, t->ek[t->ne] = pdl ? k : 0;
        t->ne++;
    }
    fclose(f);
    return 0;
}

/* The context, the kernel, one zeroed 1 MiB buffer every pointer parameter
 * points at, and a stream. */
static void open_device(const topo *t, const char *fatbin, setup *d)
{
    CUcontext ctx;
    CK(p_cuInit(0));
    CK(p_cuDeviceGet(&d->dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, d->dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUkernel kern;
    CK(p_cuLibraryLoadFromFile(&d->mod, fatbin, NULL, NULL, 0, NULL, NULL, 0));
    CK(p_cuLibraryGetKernel(&kern, d->mod, t->kname));
    CK(p_cuKernelGetFunction(&d->fn, kern));
    d->buf = 0;
    CK(p_cuMemAlloc(&d->buf, 1 << 20));
    CK(p_cuMemsetD32(d->buf, 0, (1 << 20) / 4));
    for (int i = 0; i < t->np; i++)
        d->params[i] = t->ptype[i] == 'i'   ? (void *)&t->ival[i]
                       : t->ptype[i] == 'f' ? (void *)&t->fval[i]
                                            : (void *)&d->buf;
    CK(p_cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING));
}

/* Builds the graph (nodes[] gets its node handles), instantiates and
 * uploads it; *build_ms and *inst_ms get the host time of each. */
static void build_graph(const topo *t, const setup *d, CUgraphNode *nodes,
                        CUgraph *g, CUgraphExec *x, double *build_ms,
                        double *inst_ms)
{
    double t0 = now_ms();
    CK(p_cuGraphCreate(g, 0));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = d->fn;
    kp.gridDimX = (unsigned)t->gx, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = (unsigned)t->bx, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.kernelParams = t->np ? (void **)d->params : NULL;
    for (int i = 0; i < t->n; i++)
        CK(p_cuGraphAddKernelNode(&nodes[i], *g, NULL, 0, &kp));
    for (size_t i = 0; i < t->ne; i++) {
        CUgraphEdgeData ed;
        memset(&ed, 0, sizeof ed);
        if (t->ek[i]) {
            ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
            ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        }
        CK(p_cuGraphAddDependencies(*g, &nodes[t->eu[i]], &nodes[t->ev[i]], &ed, 1));
    }
    double t1 = now_ms();
    CK(p_cuGraphInstantiateWithFlags(x, *g, d->inst_flags));
    CK(p_cuGraphUpload(*x, d->s));
    CK(p_cuStreamSynchronize(d->s));
    *build_ms = t1 - t0;
    *inst_ms = now_ms() - t1;
}

/* The gate (--gate): a host function queued ahead of each timed replay
 * holds the stream until the host has queued the whole replay, so the
 * events time the device alone and not the host's launch call.  It gives
 * up after two seconds (a replay too large for the launch queue would
 * otherwise never let the host open it), and says so. */
typedef struct gate {
    atomic_int open, gave_up;
} gate;

static void CUDA_CB gate_hold(void *p)
{
    gate *g = p;
    double t0 = now_ms();
    while (!atomic_load(&g->open))
        if (now_ms() - t0 > 2000) {
            atomic_store(&g->gave_up, 1);
            return;
        }
}

/* Replays x warmup times, then times iters replays one by one with a CUDA
 * event pair (behind a gate when gated), into ms[], sorted. */
static void time_replays(CUgraphExec x, CUstream s, int warmup, int iters,
                         int gated, float *ms)
{
    for (int i = 0; i < warmup; i++)
        CK(p_cuGraphLaunch(x, s));
    CK(p_cuStreamSynchronize(s));
    CUevent e0, e1;
    CK(p_cuEventCreate(&e0, CU_EVENT_DEFAULT));
    CK(p_cuEventCreate(&e1, CU_EVENT_DEFAULT));
    gate g;
    atomic_init(&g.gave_up, 0);
    for (int i = 0; i < iters; i++) {
        atomic_init(&g.open, 0);
        if (gated)
            CK(p_cuLaunchHostFunc(s, gate_hold, &g));
        CK(p_cuEventRecord(e0, s));
        CK(p_cuGraphLaunch(x, s));
        CK(p_cuEventRecord(e1, s));
        atomic_store(&g.open, 1);
        CK(p_cuEventSynchronize(e1));
        CK(p_cuEventElapsedTime(&ms[i], e0, e1));
        if (atomic_load(&g.gave_up)) {
            fprintf(stderr, "handbuilt: --gate: one replay did not fit in "
                            "the launch queue; time it without --gate\n");
            exit(4);
        }
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmpf);
    CK(p_cuEventDestroy(e0));
    CK(p_cuEventDestroy(e1));
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == 0)
        rc = load_driver();
    topo t;
    if (rc == 0)
        rc = read_topo(o.topo, o.pdl, &t);
    if (rc != 0)
        return rc;
    setup d;
    open_device(&t, o.fatbin, &d);
    d.inst_flags =
        o.device_launch ? CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH : 0;

    /* One-shot host timings move by 10-20 % from call to call: build and
     * instantiate the graph --repeats times and report the medians.  The
     * first graph is kept (it is the one replayed: the first graph a
     * process instantiates replays as fast as any), so every later build
     * runs beside one live graph, as `cudag bench --host-repeats`'s do. */
    double *tb = malloc((size_t)o.repeats * sizeof *tb);
    double *ti = malloc((size_t)o.repeats * sizeof *ti);
    CUgraphNode *nodes = malloc((size_t)t.n * sizeof *nodes);
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    for (int rep = 0; rep < o.repeats; rep++) {
        CUgraph g_rep;
        CUgraphExec x_rep;
        build_graph(&t, &d, nodes, &g_rep, &x_rep, &tb[rep], &ti[rep]);
        if (rep == 0) {
            g = g_rep, x = x_rep;
        } else {
            CK(p_cuGraphExecDestroy(x_rep));
            CK(p_cuGraphDestroy(g_rep));
        }
    }
    double first_build = tb[0], first_inst = ti[0];
    qsort(tb, (size_t)o.repeats, sizeof *tb, cmpd);
    qsort(ti, (size_t)o.repeats, sizeof *ti, cmpd);

    float *ms = malloc((size_t)o.iters * sizeof *ms);
    time_replays(x, d.s, o.warmup, o.iters, o.gate, ms);
    printf("{\"tool\": \"handbuilt\", \"nodes\": %d, \"edges\": %zu, \"pdl\": %d, "
           "\"device_launch\": %d, \"gate\": %d, "
           "\"build_ms\": %.4f, \"instantiate_ms\": %.4f, \"repeats\": %d, "
           "\"first_build_ms\": %.4f, \"first_instantiate_ms\": %.4f, "
           "\"replay_us\": {\"median\": %.3f, "
           "\"p10\": %.3f, \"p90\": %.3f, \"min\": %.3f}, \"iters\": %d}\n",
           t.n, t.ne, o.pdl, o.device_launch, o.gate, tb[o.repeats / 2],
           ti[o.repeats / 2], o.repeats,
           first_build, first_inst, ms[o.iters / 2] * 1e3, ms[o.iters / 10] * 1e3,
           ms[o.iters * 9 / 10] * 1e3, ms[0] * 1e3, o.iters);
    CK(p_cuGraphExecDestroy(x));
    CK(p_cuGraphDestroy(g));
    CK(p_cuStreamDestroy(d.s));
    CK(p_cuMemFree(d.buf));
    CK(p_cuLibraryUnload(d.mod));
    CK(p_cuDevicePrimaryCtxRelease(d.dev));
    free(ms);
    free(tb);
    free(ti);
    free(nodes);
    free(t.eu);
    free(t.ev);
    free(t.ek);
    return 0;
}
