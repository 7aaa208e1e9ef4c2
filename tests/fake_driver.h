/* fake_driver.h — a CUDA driver table that runs on the CPU, for the CPU
 * suites (test_driver.c, test_build.c, test_cond.c, test_gemm.c,
 * test_capture.c).  Device memory is host memory, a few kernels have host
 * implementations (the condition setters of kernels/cond.cuh among them),
 * graph launches run nodes in topological order, conditional nodes run their
 * bodies as the driver would (while, if and else, switch; defaults applied
 * at each launch), child graphs, host functions and event nodes run too,
 * stream capture records stream-ordered calls into a graph (and breaks, as
 * the driver's does, on a synchronize or an allocation), and every call can
 * be made to fail: arm the n-th call with fake_fail_at(n) and sweep n over a
 * whole scenario.  Every object the fake hands out is tracked, so a test can
 * assert that the library released everything (fake_live()).  Header-only:
 * each suite gets its own copy. */
#ifndef CUDAG_FAKE_DRIVER_H
#define CUDAG_FAKE_DRIVER_H

#include "lib/driver.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAXN 64
#define FAKE_MAXE 256
#define FAKE_MAXP 8
#define FAKE_MAXOBJ 4096
#define FAKE_MAXB 8             /* bodies of a conditional node */
#define FAKE_MAXC 64            /* condition handles */
#define FAKE_MAXITER 100000     /* a while loop's iterations before the fake
                                   calls it a hang */
#define FAKE_MAXTRACE 64

typedef struct fake_kernel {
    const char *name;
    unsigned nparams;
    size_t sizes[FAKE_MAXP];
    int binary, ptx, static_smem;
    void (*run)(void **params, const unsigned grid[3], const unsigned block[3]);
    int cond_slot;              /* the cond parameter's index + 1, or 0 */
} fake_kernel;

typedef struct fake_graph fake_graph;

typedef struct fake_node {
    CUgraphNodeType type;
    int index;
    const fake_kernel *k;
    unsigned grid[3], block[3], smem;
    uint64_t vals[FAKE_MAXP];
    CUDA_MEMSET_NODE_PARAMS set;
    CUDA_MEMCPY3D cpy;
    CUDA_CONDITIONAL_NODE_PARAMS cnd;   /* phGraph_out points at body */
    CUgraph body[FAKE_MAXB];
    fake_graph *in;             /* the graph that holds the node */
    fake_graph *child;          /* GRAPH: a copy the node owns */
    CUhostFn host;              /* HOST: called with host_arg, or with the */
    void *host_arg;             /* node's blob when blob_arg is set */
    int blob_arg;
    CUevent event;              /* EVENT_RECORD, WAIT_EVENT */
    unsigned char blob[512];    /* what a fake library recorded */
    /* KERNEL: its launch attributes (cuGraphKernelNodeSetAttribute). */
    unsigned cluster[3];
    int priority, has_priority;
} fake_node;

typedef struct fake_edge {
    int from, to;
    CUgraphEdgeData ed;
} fake_edge;

struct fake_graph {
    fake_node *nodes[FAKE_MAXN];
    int nnodes;
    fake_edge edges[FAKE_MAXE];
    int nedges;
};

/* A condition handle: the value kernels set and conditional nodes read. */
typedef struct fake_cond {
    fake_graph *graph;          /* NULL: free */
    unsigned value, dflt, flags;
} fake_cond;

typedef struct fake_exec {
    fake_node nodes[FAKE_MAXN];
    int nnodes;
    fake_edge edges[FAKE_MAXE];
    int nedges;
    int launches;
    const fake_graph *from;     /* the graph it was instantiated from */
} fake_exec;

typedef struct fake_state {
    long countdown;             /* fail when it reaches 0; < 0: never */
    long calls;                 /* counted calls since fake_reset */
    const char *failed;         /* the call that was made to fail */
    CUresult init_result, version_result;
    int version;
    int device_count, cc_major, cc_minor, smem_optin;
    size_t mem_free, mem_total;
    long allocs;                /* cuMemAlloc calls that succeeded */
    int pushed;                 /* context stack depth */
    int retained;               /* primary context references */
    int instantiate_fail_node;  /* ≥ 0: instantiation fails there */
    unsigned long long instantiate_flags;   /* of the last instantiation */
    void *objs[FAKE_MAXOBJ];    /* every live object */
    int nobjs;
    fake_graph *last_graph;     /* the graph last instantiated */
    fake_exec *last_exec;
    long set_params;            /* exec node updates (any kind) */
    CUresult set_attr_result;
    int smem_attr_value;        /* last MAX_DYNAMIC_SHARED_SIZE_BYTES set */
    int nonportable_sets;       /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 1 set */
    /* Per stream launch: its cluster's x dimension (0: none) and priority
     * (INT_MIN: none). */
    unsigned launched_cluster[FAKE_MAXN];
    int launched_priority[FAKE_MAXN];
    fake_cond conds[FAKE_MAXC]; /* handle h is conds[h - FAKE_COND_BASE] */
    long cond_sets;             /* device-side sets, all handles */
    long body_runs;             /* bodies run by conditional nodes */
    int no_conditional;         /* ≥ 1: cuGraphAddNode refuses conditional
                                   nodes, as an old driver would */
    unsigned char loaded_data[64];  /* the head of the last code in memory */
    int loaded_data_count;
    int probes_past_end;        /* cuFuncGetParamInfo past the last param */
    /* Stream launches of kernels (cuLaunchKernelEx), in order: the kernel,
     * and whether it asked for programmatic stream serialization. */
    const char *launched[FAKE_MAXN];
    int launched_pdl[FAKE_MAXN];
    int nlaunched;
    /* While tracing, the names of the calls made, in order (the first
     * FAKE_MAXTRACE). */
    int tracing;
    const char *trace[FAKE_MAXTRACE];
    int ntrace;
    CUstream capture_stream;    /* the stream being captured, or NULL */
    fake_graph *capture;        /* what its capture recorded */
    int capture_last;           /* the last node recorded, -1 for none */
    CUresult capture_broken;    /* why the capture became invalid, or 0 */
    long captures;              /* captures begun */
    /* A host function queued on a stream (cuLaunchHostFunc): the fake runs
     * it when the stream or an event is next waited for, as a device would
     * reach it only after the host had queued what follows.  With
     * host_fn_at_once it runs inside the call, before anything after it is
     * queued. */
    CUhostFn host_fn;
    void *host_fn_arg;
    long host_fns;              /* host functions run */
    int host_fn_at_once;
    /* With runaway set, a while loop past FAKE_MAXITER iterations does not
     * fail its launch: it keeps running, as on a device (busy), and the
     * stream never completes: cuStreamQuery and cuEventQuery answer
     * CUDA_ERROR_NOT_READY, later launches queue behind it.  A call that
     * would wait for it forever or pull memory from under it
     * (synchronize, cuMemFree, cuLibraryUnload, cuGraphExecDestroy, the
     * primary context's release) is counted in busy_waits and fails with
     * CUDA_ERROR_LAUNCH_TIMEOUT (so a test sees it instead of hanging). */
    int runaway, busy;
    long busy_waits;
} fake_state;

/* Handles are offset so that 0, an unset parameter, is never one. */
#define FAKE_COND_BASE 0x100

static fake_state F;

/* ---- kernels with host implementations ---------------------------------- */

static long fake_n(void *p) { return (long)*(int64_t *)p; }
static float *fake_f(void *p) { return (float *)(uintptr_t)*(CUdeviceptr *)p; }

static void fake_scale(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    float *x = fake_f(p[0]), *y = fake_f(p[1]), a = *(float *)p[2];
    for (long i = 0; i < fake_n(p[3]); i++)
        y[i] = a * x[i];
}

static void fake_add(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    float *x = fake_f(p[0]), *y = fake_f(p[1]), *z = fake_f(p[2]);
    for (long i = 0; i < fake_n(p[3]); i++)
        z[i] = x[i] + y[i];
}

static void fake_copy(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    float *x = fake_f(p[0]), *y = fake_f(p[1]);
    for (long i = 0; i < fake_n(p[2]); i++)
        y[i] = x[i];
}

/* A device-side cudaGraphSetConditional. */
static void fake_set_cond(void *handle_param, unsigned v)
{
    uint64_t h = *(uint64_t *)handle_param;
    if (h >= FAKE_COND_BASE && h < FAKE_COND_BASE + FAKE_MAXC &&
        F.conds[h - FAKE_COND_BASE].graph) {
        F.conds[h - FAKE_COND_BASE].value = v;
        F.cond_sets++;
    }
}

static int *fake_i(void *p) { return (int *)(uintptr_t)*(CUdeviceptr *)p; }

static void fake_cond_count(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    int *counter = fake_i(p[0]);
    counter[0]++;
    fake_set_cond(p[2], counter[0] < fake_n(p[1]));
}

static void fake_cond_lt(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    fake_set_cond(p[2], fake_f(p[0])[0] < *(float *)p[1]);
}

static void fake_cond_index(void **p, const unsigned *g, const unsigned *b)
{
    (void)g;
    (void)b;
    fake_set_cond(p[1], (unsigned)fake_i(p[0])[0]);
}

static const fake_kernel fake_kernels[] = {
    {"scale_f32", 4, {8, 8, 4, 8}, 90, 90, 0, fake_scale, 0},
    {"add_f32", 4, {8, 8, 8, 8}, 90, 90, 0, fake_add, 0},
    {"copy_f32", 3, {8, 8, 8}, 90, 90, 0, fake_copy, 0},
    {"util_noop", 0, {0}, 90, 90, 0, NULL, 0},
    {"nowait_copy_f32", 3, {8, 8, 8}, 90, 90, 0, fake_copy, 0},
    {"ptx80_copy_f32", 3, {8, 8, 8}, 90, 80, 0, fake_copy, 0},
    {"sm80_copy_f32", 3, {8, 8, 8}, 80, 0, 0, fake_copy, 0},
    {"scale_short", 3, {8, 8, 4}, 90, 90, 0, NULL, 0},
    {"scale_wide", 4, {8, 8, 8, 8}, 90, 90, 0, NULL, 0},
    {"scale_long", 5, {8, 8, 4, 8, 8}, 90, 90, 0, NULL, 0},
    {"smem_user", 0, {0}, 90, 90, 1024, NULL, 0},
    {"cond_count_i32", 3, {8, 8, 8}, 90, 90, 0, fake_cond_count, 3},
    {"cond_lt_f32", 3, {8, 4, 8}, 90, 90, 0, fake_cond_lt, 3},
    {"cond_index_i32", 2, {8, 8}, 90, 90, 0, fake_cond_index, 2},
    /* graphs/user_kernels.cu, and a template instance of a source module. */
    {"scale", 4, {8, 8, 4, 4}, 90, 90, 0, NULL, 0},
    {"square", 3, {8, 8, 4}, 90, 90, 0, NULL, 0},
    {"axpby", 6, {8, 8, 8, 4, 4, 4}, 90, 90, 0, NULL, 0},
    {"offset_pdl", 4, {8, 8, 4, 4}, 90, 90, 0, NULL, 0},
    {"_Z4axpyIfEvPT_PKS0_S0_i", 4, {8, 8, 4, 4}, 90, 90, 0, NULL, 0},
};
#define FAKE_NKERNELS (sizeof fake_kernels / sizeof fake_kernels[0])

/* A suite's own kernels, found after the table's (test_matrix.c's). */
static const fake_kernel *fake_extra;
static size_t fake_nextra;

/* ---- bookkeeping --------------------------------------------------------- */

static void *fake_obj(size_t n)
{
    if (F.nobjs == FAKE_MAXOBJ)
        return NULL;
    /* 256-byte aligned, as cuMemAlloc's memory is. */
    size_t size = ((n ? n : 1) + 255) & ~(size_t)255;
    void *p = aligned_alloc(256, size);
    if (p) {
        memset(p, 0, size);
        F.objs[F.nobjs++] = p;
    }
    return p;
}

static int fake_drop(void *p)
{
    for (int i = 0; i < F.nobjs; i++)
        if (F.objs[i] == p) {
            F.objs[i] = F.objs[--F.nobjs];
            free(p);
            return 1;
        }
    return 0;
}

/* Objects the library still holds (memory, streams, graphs, …), plus
 * unbalanced context pushes and primary-context references. */
CUDAG__UNUSED static int fake_live(void) { return F.nobjs + F.pushed + F.retained; }

/* Counts a call and decides whether it fails. */
static int fake_tick(const char *name)
{
    F.calls++;
    if (F.tracing && F.ntrace < FAKE_MAXTRACE)
        F.trace[F.ntrace++] = name;
    if (F.countdown > 0 && --F.countdown == 0) {
        F.failed = name;
        return 1;
    }
    return 0;
}

#define FAKE_CALL(name)                                                        \
    do {                                                                       \
        if (fake_tick(name))                                                   \
            return CUDA_ERROR_UNKNOWN;                                         \
    } while (0)

/* A call that a device running away would never let return (runaway). */
#define FAKE_NOT_WHILE_BUSY()                                                  \
    do {                                                                       \
        if (F.busy) {                                                          \
            F.busy_waits++;                                                    \
            return CUDA_ERROR_LAUNCH_TIMEOUT;                                  \
        }                                                                      \
    } while (0)

/* ---- graphs and capture ---------------------------------------------------- */

static int fake_graph_free(fake_graph *g);

/* A deep copy (child graphs included); NULL when out of objects. */
static fake_graph *fake_clone(const fake_graph *src)
{
    fake_graph *g = fake_obj(sizeof *g);
    if (!g)
        return NULL;
    for (int i = 0; i < src->nnodes; i++) {
        fake_node *n = fake_obj(sizeof *n);
        if (!n) {
            fake_graph_free(g);
            return NULL;
        }
        *n = *src->nodes[i];
        n->child = NULL;
        /* A conditional node's bodies are its own, like a child graph: a
         * copy that shared them would free them twice. */
        int cond = n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL;
        for (unsigned b = 0; cond && b < n->cnd.size && b < FAKE_MAXB; b++)
            n->body[b] = NULL;
        g->nodes[g->nnodes++] = n;
        if (src->nodes[i]->child &&
            !(n->child = fake_clone(src->nodes[i]->child))) {
            fake_graph_free(g);
            return NULL;
        }
        for (unsigned b = 0; cond && b < n->cnd.size && b < FAKE_MAXB; b++)
            if (src->nodes[i]->body[b] &&
                !(n->body[b] = (CUgraph)fake_clone(
                      (const fake_graph *)src->nodes[i]->body[b]))) {
                fake_graph_free(g);
                return NULL;
            }
    }
    memcpy(g->edges, src->edges, sizeof g->edges);
    g->nedges = src->nedges;
    return g;
}

/* The node a stream-ordered call on s records, when s is being captured
 * (after the last one, with a full edge); NULL when it is not. */
static fake_node *fake_record(CUstream s, CUgraphNodeType type)
{
    if (!F.capture_stream || s != F.capture_stream)
        return NULL;
    fake_graph *g = F.capture;
    fake_node *n = g->nnodes < FAKE_MAXN ? fake_obj(sizeof *n) : NULL;
    if (!n) {
        F.capture_broken = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    n->type = type;
    n->index = g->nnodes;
    g->nodes[g->nnodes++] = n;
    if (F.capture_last >= 0 && g->nedges < FAKE_MAXE) {
        g->edges[g->nedges].from = F.capture_last;
        g->edges[g->nedges].to = n->index;
        g->nedges++;
    }
    F.capture_last = n->index;
    return n;
}

/* What a call that a capture cannot hold does while one is under way (this
 * fake's captures are all thread-local): it breaks the capture. */
static CUresult fake_unsafe_in_capture(void)
{
    if (!F.capture_stream)
        return CUDA_SUCCESS;
    F.capture_broken = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

#define FAKE_IN_CAPTURE(s)                                                     \
    do {                                                                       \
        if (F.capture_stream && (s) == F.capture_stream && F.capture_broken)   \
            return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;                      \
    } while (0)

/* ---- the entry points ---------------------------------------------------- */

static CUresult fk_GetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case CUDA_ERROR_UNKNOWN: *s = "CUDA_ERROR_UNKNOWN"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_FILE_NOT_FOUND: *s = "CUDA_ERROR_FILE_NOT_FOUND"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE:
        *s = "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_ILLEGAL_STATE: *s = "CUDA_ERROR_ILLEGAL_STATE"; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
        break;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
        *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
        break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
static CUresult fk_GetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_UNKNOWN ? "unknown error (injected by the fake)"
                                 : "fake driver error";
    return CUDA_SUCCESS;
}
static CUresult fk_Init(unsigned f)
{
    (void)f;
    FAKE_CALL("cuInit");
    return F.init_result;
}
static CUresult fk_DriverGetVersion(int *v)
{
    FAKE_CALL("cuDriverGetVersion");
    *v = F.version;
    return F.version_result;
}
static CUresult fk_DeviceGetCount(int *n)
{
    FAKE_CALL("cuDeviceGetCount");
    *n = F.device_count;
    return CUDA_SUCCESS;
}
static CUresult fk_DeviceGet(CUdevice *d, int o)
{
    FAKE_CALL("cuDeviceGet");
    *d = o;
    return CUDA_SUCCESS;
}
static CUresult fk_DeviceGetName(char *s, int n, CUdevice d)
{
    (void)d;
    FAKE_CALL("cuDeviceGetName");
    snprintf(s, (size_t)n, "Fake GPU");
    return CUDA_SUCCESS;
}
static CUresult fk_DeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    FAKE_CALL("cuDeviceGetAttribute");
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = F.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = F.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *v = F.smem_optin;
        break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
static CUresult fk_PrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    FAKE_CALL("cuDevicePrimaryCtxRetain");
    F.retained++;
    *c = (CUcontext)(uintptr_t)0xc0;
    return CUDA_SUCCESS;
}
static CUresult fk_PrimaryCtxRelease(CUdevice d)
{
    (void)d;
    FAKE_CALL("cuDevicePrimaryCtxRelease");
    FAKE_NOT_WHILE_BUSY();
    F.retained--;
    return CUDA_SUCCESS;
}
static CUresult fk_CtxPush(CUcontext c)
{
    (void)c;
    FAKE_CALL("cuCtxPushCurrent");
    F.pushed++;
    return CUDA_SUCCESS;
}
static CUresult fk_CtxPop(CUcontext *c)
{
    FAKE_CALL("cuCtxPopCurrent");
    *c = NULL;
    F.pushed--;
    return CUDA_SUCCESS;
}
static CUresult fk_CtxGetDevice(CUdevice *d)
{
    FAKE_CALL("cuCtxGetDevice");
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult fk_CtxSynchronize(void)
{
    FAKE_CALL("cuCtxSynchronize");
    FAKE_NOT_WHILE_BUSY();
    return fake_unsafe_in_capture();
}
static CUresult fk_StreamCreate(CUstream *s, unsigned f)
{
    (void)f;
    FAKE_CALL("cuStreamCreate");
    *s = fake_obj(8);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fk_StreamDestroy(CUstream s)
{
    /* A release that fails has released (as cuGraphDestroy below). */
    int fail = fake_tick("cuStreamDestroy");
    int found = fake_drop(s);
    return fail ? CUDA_ERROR_UNKNOWN
                : found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
/* Runs the host function the stream holds, if any. */
static void fake_run_host_fn(void)
{
    CUhostFn fn = F.host_fn;
    F.host_fn = NULL;
    if (fn) {
        F.host_fns++;
        fn(F.host_fn_arg);
    }
}
static CUresult fk_LaunchHostFunc(CUstream s, CUhostFn fn, void *arg)
{
    (void)s;
    FAKE_CALL("cuLaunchHostFunc");
    fake_run_host_fn();
    F.host_fn = fn;
    F.host_fn_arg = arg;
    if (F.host_fn_at_once)
        fake_run_host_fn();
    return CUDA_SUCCESS;
}
static CUresult fk_StreamSynchronize(CUstream s)
{
    (void)s;
    FAKE_CALL("cuStreamSynchronize");
    FAKE_NOT_WHILE_BUSY();
    fake_run_host_fn();
    return fake_unsafe_in_capture();
}
static CUresult fk_StreamQuery(CUstream s)
{
    (void)s;
    FAKE_CALL("cuStreamQuery");
    if (F.busy)
        return CUDA_ERROR_NOT_READY;
    fake_run_host_fn();
    return fake_unsafe_in_capture();
}
static CUresult fk_BeginCapture(CUstream s, CUstreamCaptureMode mode)
{
    (void)mode;
    FAKE_CALL("cuStreamBeginCapture");
    if (F.capture_stream)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (!(F.capture = fake_obj(sizeof(fake_graph))))
        return CUDA_ERROR_OUT_OF_MEMORY;
    F.capture_stream = s;
    F.capture_last = -1;
    F.capture_broken = CUDA_SUCCESS;
    F.captures++;
    return CUDA_SUCCESS;
}
static CUresult fk_EndCapture(CUstream s, CUgraph *out)
{
    *out = NULL;
    if (!F.capture_stream || s != F.capture_stream)
        return CUDA_ERROR_ILLEGAL_STATE;
    /* Ended, whatever the outcome: as the driver, the fake keeps nothing of
     * a failed capture. */
    fake_graph *g = F.capture;
    CUresult broken = F.capture_broken;
    F.capture = NULL;
    F.capture_stream = NULL;
    if (fake_tick("cuStreamEndCapture")) {
        fake_graph_free(g);
        return CUDA_ERROR_UNKNOWN;
    }
    if (broken) {
        fake_graph_free(g);
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = (CUgraph)g;
    return CUDA_SUCCESS;
}
static CUresult fk_EventCreate(CUevent *e, unsigned f)
{
    (void)f;
    FAKE_CALL("cuEventCreate");
    *e = fake_obj(8);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fk_EventRecord(CUevent e, CUstream s)
{
    (void)e;
    (void)s;
    FAKE_CALL("cuEventRecord");
    return CUDA_SUCCESS;
}
static CUresult fk_EventSynchronize(CUevent e)
{
    (void)e;
    FAKE_CALL("cuEventSynchronize");
    FAKE_NOT_WHILE_BUSY();
    fake_run_host_fn();
    return CUDA_SUCCESS;
}
static CUresult fk_EventQuery(CUevent e)
{
    (void)e;
    FAKE_CALL("cuEventQuery");
    if (F.busy)
        return CUDA_ERROR_NOT_READY;
    fake_run_host_fn();
    return CUDA_SUCCESS;
}
static CUresult fk_EventElapsedTime(float *ms, CUevent a, CUevent b)
{
    (void)a;
    (void)b;
    FAKE_CALL("cuEventElapsedTime");
    *ms = 0.01f;
    return CUDA_SUCCESS;
}
static CUresult fk_EventDestroy(CUevent e)
{
    /* As cuGraphDestroy: a release that fails has released. */
    int fail = fake_tick("cuEventDestroy");
    int found = fake_drop(e);
    return fail ? CUDA_ERROR_UNKNOWN
                : found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult fk_MemGetInfo(size_t *f, size_t *t)
{
    FAKE_CALL("cuMemGetInfo");
    *f = F.mem_free;
    *t = F.mem_total;
    return CUDA_SUCCESS;
}
static CUresult fk_MemAlloc(CUdeviceptr *p, size_t n)
{
    FAKE_CALL("cuMemAlloc");
    if (fake_unsafe_in_capture() != CUDA_SUCCESS)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    void *m = fake_obj(n);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    F.allocs++;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}
static CUresult fk_MemFree(CUdeviceptr p)
{
    FAKE_CALL("cuMemFree");
    FAKE_NOT_WHILE_BUSY();
    return fake_drop((void *)(uintptr_t)p) ? CUDA_SUCCESS
                                            : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fk_HtoD(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    (void)s;
    FAKE_CALL("cuMemcpyHtoDAsync");
    memcpy((void *)(uintptr_t)d, h, n);
    return CUDA_SUCCESS;
}
static CUresult fk_DtoH(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    (void)s;
    FAKE_CALL("cuMemcpyDtoHAsync");
    memcpy(h, (void *)(uintptr_t)d, n);
    return CUDA_SUCCESS;
}
/* Records a memset on s when s is being captured; false when it is not. */
static int fake_record_memset(CUstream s, CUdeviceptr d, unsigned size,
                              size_t n, unsigned v)
{
    fake_node *rec = fake_record(s, CU_GRAPH_NODE_TYPE_MEMSET);
    if (!rec)
        return 0;
    rec->set.dst = d;
    rec->set.elementSize = size;
    rec->set.width = n;
    rec->set.height = 1;
    rec->set.value = v;
    return 1;
}
static CUresult fk_MemsetD8(CUdeviceptr d, unsigned char v, size_t n,
                            CUstream s)
{
    FAKE_CALL("cuMemsetD8Async");
    FAKE_IN_CAPTURE(s);
    if (fake_record_memset(s, d, 1, n, v))
        return CUDA_SUCCESS;
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
static CUresult fk_MemsetD16(CUdeviceptr d, unsigned short v, size_t n,
                             CUstream s)
{
    FAKE_CALL("cuMemsetD16Async");
    FAKE_IN_CAPTURE(s);
    if (fake_record_memset(s, d, 2, n, v))
        return CUDA_SUCCESS;
    for (size_t i = 0; i < n; i++)
        memcpy((char *)(uintptr_t)d + 2 * i, &v, 2);
    return CUDA_SUCCESS;
}
static CUresult fk_MemsetD32(CUdeviceptr d, unsigned int v, size_t n,
                             CUstream s)
{
    FAKE_CALL("cuMemsetD32Async");
    FAKE_IN_CAPTURE(s);
    if (fake_record_memset(s, d, 4, n, v))
        return CUDA_SUCCESS;
    for (size_t i = 0; i < n; i++)
        memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
    return CUDA_SUCCESS;
}
static CUresult fk_MemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n,
                              CUstream st)
{
    FAKE_CALL("cuMemcpyDtoDAsync");
    FAKE_IN_CAPTURE(st);
    fake_node *rec = fake_record(st, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (rec) {
        rec->cpy.srcDevice = s;
        rec->cpy.dstDevice = d;
        rec->cpy.WidthInBytes = n;
        return CUDA_SUCCESS;
    }
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
static CUresult fk_LibraryLoad(CUlibrary *l, const char *path, CUjit_option *a,
                               void **b, unsigned c, CUlibraryOption *d,
                               void **e, unsigned f)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    FAKE_CALL("cuLibraryLoadFromFile");
    if (strstr(path, "missing"))
        return CUDA_ERROR_FILE_NOT_FOUND;
    if (strstr(path, "fake_driver.h"))     /* exists, but is no module */
        return CUDA_ERROR_INVALID_IMAGE;
    *l = fake_obj(8);
    return *l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
/* Code in memory (a compiled source module): must be a cubin, whose first
 * bytes the fake keeps for the test to look at. */
static CUresult fk_LibraryLoadData(CUlibrary *l, const void *code,
                                   CUjit_option *a, void **b, unsigned c,
                                   CUlibraryOption *d, void **e, unsigned f)
{
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    FAKE_CALL("cuLibraryLoadData");
    memcpy(F.loaded_data, code, sizeof F.loaded_data);
    F.loaded_data_count++;
    *l = fake_obj(8);
    return *l ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fk_LibraryUnload(CUlibrary l)
{
    FAKE_CALL("cuLibraryUnload");
    FAKE_NOT_WHILE_BUSY();
    return fake_drop(l) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult fk_LibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
    (void)l;
    FAKE_CALL("cuLibraryGetKernel");
    for (size_t i = 0; i < FAKE_NKERNELS; i++)
        if (strcmp(fake_kernels[i].name, name) == 0) {
            *k = (CUkernel)(uintptr_t)&fake_kernels[i];
            return CUDA_SUCCESS;
        }
    for (size_t i = 0; i < fake_nextra; i++)
        if (strcmp(fake_extra[i].name, name) == 0) {
            *k = (CUkernel)(uintptr_t)&fake_extra[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
static CUresult fk_KernelGetFunction(CUfunction *f, CUkernel k)
{
    FAKE_CALL("cuKernelGetFunction");
    *f = (CUfunction)(uintptr_t)k;
    return CUDA_SUCCESS;
}
static const fake_kernel *fk_of(CUfunction f)
{
    return (const fake_kernel *)(uintptr_t)f;
}
static CUresult fk_FuncGetAttribute(int *v, CUfunction_attribute a,
                                    CUfunction f)
{
    FAKE_CALL("cuFuncGetAttribute");
    const fake_kernel *k = fk_of(f);
    switch (a) {
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = k->static_smem; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *v = 48 * 1024 - k->static_smem;
        break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = k->binary; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *v = k->ptx; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
static CUresult fk_FuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f;
    FAKE_CALL("cuFuncSetAttribute");
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        F.smem_attr_value = v;
    else if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED && v == 1)
        F.nonportable_sets++;
    else
        return CUDA_ERROR_INVALID_VALUE;
    return F.set_attr_result;
}
static CUresult fk_FuncGetParamInfo(CUfunction f, size_t i, size_t *off,
                                    size_t *size)
{
    FAKE_CALL("cuFuncGetParamInfo");
    const fake_kernel *k = fk_of(f);
    if (i >= k->nparams) {
        F.probes_past_end++;    /* what compute-sanitizer reports */
        return CUDA_ERROR_INVALID_VALUE;
    }
    *off = 8 * i;
    *size = k->sizes[i];
    return CUDA_SUCCESS;
}
static void fake_kernel_copy(fake_node *n, const CUDA_KERNEL_NODE_PARAMS *p);
/* Records the launch on a stream being captured; otherwise runs the kernel
 * at once, as the stream would in order. */
static CUresult fk_LaunchKernelEx(const CUlaunchConfig *c, CUfunction f,
                                  void **p, void **e)
{
    (void)e;
    FAKE_CALL("cuLaunchKernelEx");
    FAKE_IN_CAPTURE(c->hStream);
    fake_node *rec = fake_record(c->hStream, CU_GRAPH_NODE_TYPE_KERNEL);
    if (rec) {
        CUDA_KERNEL_NODE_PARAMS kp;
        memset(&kp, 0, sizeof kp);
        kp.func = f;
        kp.gridDimX = c->gridDimX, kp.gridDimY = c->gridDimY;
        kp.gridDimZ = c->gridDimZ;
        kp.blockDimX = c->blockDimX, kp.blockDimY = c->blockDimY;
        kp.blockDimZ = c->blockDimZ;
        kp.sharedMemBytes = c->sharedMemBytes;
        kp.kernelParams = p;
        fake_kernel_copy(rec, &kp);
        return CUDA_SUCCESS;
    }
    const fake_kernel *k = fk_of(f);
    int pdl = 0, prio = INT_MIN;
    unsigned cl = 0;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        pdl |= c->attrs[i].id ==
                   CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
               c->attrs[i].value.programmaticStreamSerializationAllowed;
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            cl = c->attrs[i].value.clusterDim.x;
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PRIORITY)
            prio = c->attrs[i].value.priority;
    }
    if (F.nlaunched < FAKE_MAXN) {
        F.launched[F.nlaunched] = k->name;
        F.launched_cluster[F.nlaunched] = cl;
        F.launched_priority[F.nlaunched] = prio;
        F.launched_pdl[F.nlaunched++] = pdl;
    }
    const unsigned grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const unsigned block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    if (k->run)
        k->run(p, grid, block);
    return CUDA_SUCCESS;
}
static CUresult fk_GraphCreate(CUgraph *g, unsigned f)
{
    (void)f;
    FAKE_CALL("cuGraphCreate");
    *g = fake_obj(sizeof(fake_graph));
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
/* A graph, its nodes, the body graphs of its conditional nodes and the
 * handles made for it, as the driver frees them with the graph. */
static int fake_graph_free(fake_graph *g)
{
    if (!g)
        return 0;
    for (int i = 0; i < g->nnodes; i++) {
        fake_node *n = g->nodes[i];
        fake_graph_free(n->child);
        if (n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
            for (unsigned b = 0; b < n->cnd.size && b < FAKE_MAXB; b++)
                fake_graph_free((fake_graph *)n->body[b]);
        fake_drop(n);
    }
    for (int c = 0; c < FAKE_MAXC; c++)
        if (F.conds[c].graph == g)
            memset(&F.conds[c], 0, sizeof F.conds[c]);
    if (F.last_graph == g)
        F.last_graph = NULL;
    return fake_drop(g);
}
static CUresult fk_GraphDestroy(CUgraph hg)
{
    /* As the real driver's fault table (tests/gen_real_faults.py): a
     * release that fails has released. */
    int fail = fake_tick("cuGraphDestroy");
    int found = fake_graph_free((fake_graph *)hg);
    return fail ? CUDA_ERROR_UNKNOWN
                : found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult fake_add_node(CUgraphNode *out, CUgraph hg, size_t ndeps,
                         fake_node **n)
{
    fake_graph *g = (fake_graph *)hg;
    if (ndeps || g->nnodes == FAKE_MAXN)
        return CUDA_ERROR_INVALID_VALUE;
    *n = fake_obj(sizeof **n);
    if (!*n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    (*n)->index = g->nnodes;
    (*n)->in = g;
    g->nodes[g->nnodes++] = *n;
    *out = (CUgraphNode)*n;
    return CUDA_SUCCESS;
}
static void fake_kernel_copy(fake_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    n->type = CU_GRAPH_NODE_TYPE_KERNEL;
    n->k = fk_of(p->func);
    n->grid[0] = p->gridDimX, n->grid[1] = p->gridDimY, n->grid[2] = p->gridDimZ;
    n->block[0] = p->blockDimX, n->block[1] = p->blockDimY,
    n->block[2] = p->blockDimZ;
    n->smem = p->sharedMemBytes;
    /* The driver copies parameter values when it gets them; so does the
     * fake, so that a dangling kernelParams would show. */
    memset(n->vals, 0, sizeof n->vals);
    for (unsigned i = 0; i < n->k->nparams; i++)
        memcpy(&n->vals[i], p->kernelParams[i], n->k->sizes[i]);
}
static CUresult fk_AddKernelNode(CUgraphNode *out, CUgraph g,
                                 const CUgraphNode *deps, size_t nd,
                                 const CUDA_KERNEL_NODE_PARAMS *p)
{
    (void)deps;
    FAKE_CALL("cuGraphAddKernelNode");
    /* The driver's limit: 48 KiB with the static part, more once raised. */
    const fake_kernel *k = fk_of(p->func);
    if (k && p->sharedMemBytes + (unsigned)k->static_smem > 48 * 1024 &&
        (int)p->sharedMemBytes > F.smem_attr_value)
        return CUDA_ERROR_INVALID_VALUE;
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r == CUDA_SUCCESS)
        fake_kernel_copy(n, p);
    return r;
}
/* Records the attributes the library sets; any other is refused, as the
 * library sets no other. */
static CUresult fk_KernelNodeSetAttribute(CUgraphNode hn, CUkernelNodeAttrID a,
                                          const CUkernelNodeAttrValue *v)
{
    FAKE_CALL("cuGraphKernelNodeSetAttribute");
    fake_node *n = (fake_node *)hn;
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    if (a == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
        n->cluster[0] = v->clusterDim.x;
        n->cluster[1] = v->clusterDim.y;
        n->cluster[2] = v->clusterDim.z;
    } else if (a == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
        n->priority = v->priority;
        n->has_priority = 1;
    } else {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
static CUresult fk_AddMemsetNode(CUgraphNode *out, CUgraph g,
                                 const CUgraphNode *deps, size_t nd,
                                 const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c)
{
    (void)deps, (void)c;
    FAKE_CALL("cuGraphAddMemsetNode");
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r == CUDA_SUCCESS) {
        n->type = CU_GRAPH_NODE_TYPE_MEMSET;
        n->set = *p;
    }
    return r;
}
static CUresult fk_AddMemcpyNode(CUgraphNode *out, CUgraph g,
                                 const CUgraphNode *deps, size_t nd,
                                 const CUDA_MEMCPY3D *p, CUcontext c)
{
    (void)deps, (void)c;
    FAKE_CALL("cuGraphAddMemcpyNode");
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r == CUDA_SUCCESS) {
        n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
        n->cpy = *p;
    }
    return r;
}
static CUresult fk_AddNode(CUgraphNode *out, CUgraph g,
                           const CUgraphNode *deps, const CUgraphEdgeData *ed,
                           size_t nd, CUgraphNodeParams *p)
{
    (void)deps, (void)ed;
    FAKE_CALL("cuGraphAddNode");
    /* The fake knows conditional nodes only, and as the driver checks:
     * a handle of this graph, a size the type allows. */
    if (p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (F.no_conditional)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUDA_CONDITIONAL_NODE_PARAMS *c = &p->conditional;
    uint64_t h = c->handle;
    if (h < FAKE_COND_BASE || h >= FAKE_COND_BASE + FAKE_MAXC ||
        F.conds[h - FAKE_COND_BASE].graph != (fake_graph *)g ||
        c->size == 0 || c->size > FAKE_MAXB ||
        (c->type == CU_GRAPH_COND_TYPE_WHILE && c->size != 1) ||
        (c->type == CU_GRAPH_COND_TYPE_IF && c->size > 2))
        return CUDA_ERROR_INVALID_VALUE;
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r != CUDA_SUCCESS)
        return r;
    n->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    n->cnd = *c;
    for (unsigned b = 0; b < c->size; b++)
        if (!(n->body[b] = fake_obj(sizeof(fake_graph))))
            return CUDA_ERROR_OUT_OF_MEMORY;
    n->cnd.phGraph_out = n->body;
    c->phGraph_out = n->body;
    return CUDA_SUCCESS;
}
static CUresult fk_CondHandleCreate(CUgraphConditionalHandle *h, CUgraph g,
                                    CUcontext ctx, unsigned dflt,
                                    unsigned flags)
{
    (void)ctx;
    FAKE_CALL("cuGraphConditionalHandleCreate");
    if (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < FAKE_MAXC; i++)
        if (!F.conds[i].graph) {
            F.conds[i].graph = (fake_graph *)g;
            F.conds[i].dflt = dflt;
            F.conds[i].flags = flags;
            /* Undefined until set: the fake makes it a loud value. */
            F.conds[i].value = 0xdeadu;
            *h = FAKE_COND_BASE + (uint64_t)i;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fk_AddChildGraphNode(CUgraphNode *out, CUgraph g,
                                     const CUgraphNode *deps, size_t nd,
                                     CUgraph child)
{
    (void)deps;
    FAKE_CALL("cuGraphAddChildGraphNode");
    fake_graph *copy = fake_clone((const fake_graph *)child);
    if (!copy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r != CUDA_SUCCESS) {
        fake_graph_free(copy);
        return r;
    }
    n->type = CU_GRAPH_NODE_TYPE_GRAPH;
    n->child = copy;
    return CUDA_SUCCESS;
}
static CUresult fk_ChildGraphGet(CUgraphNode h, CUgraph *out)
{
    FAKE_CALL("cuGraphChildGraphNodeGetGraph");
    const fake_node *n = (const fake_node *)h;
    if (!n || n->type != CU_GRAPH_NODE_TYPE_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (CUgraph)n->child;
    return CUDA_SUCCESS;
}
/* An event-record or event-wait node; running one counts, in the fake
 * event's first two words, its records and waits. */
static CUresult fake_add_event_node(CUgraphNode *out, CUgraph g, size_t nd,
                                    CUevent e, CUgraphNodeType type)
{
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r == CUDA_SUCCESS) {
        n->type = type;
        n->event = e;
    }
    return r;
}
static CUresult fk_AddEventRecordNode(CUgraphNode *out, CUgraph g,
                                      const CUgraphNode *deps, size_t nd,
                                      CUevent e)
{
    (void)deps;
    FAKE_CALL("cuGraphAddEventRecordNode");
    return fake_add_event_node(out, g, nd, e, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}
static CUresult fk_AddEventWaitNode(CUgraphNode *out, CUgraph g,
                                    const CUgraphNode *deps, size_t nd,
                                    CUevent e)
{
    (void)deps;
    FAKE_CALL("cuGraphAddEventWaitNode");
    return fake_add_event_node(out, g, nd, e, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}
static CUresult fk_AddHostNode(CUgraphNode *out, CUgraph g,
                               const CUgraphNode *deps, size_t nd,
                               const CUDA_HOST_NODE_PARAMS *p)
{
    (void)deps;
    FAKE_CALL("cuGraphAddHostNode");
    fake_node *n;
    CUresult r = fake_add_node(out, g, nd, &n);
    if (r == CUDA_SUCCESS) {
        n->type = CU_GRAPH_NODE_TYPE_HOST;
        n->host = p->fn;
        n->host_arg = p->userData;
    }
    return r;
}
static CUresult fk_AddDependencies(CUgraph hg, const CUgraphNode *from,
                                   const CUgraphNode *to,
                                   const CUgraphEdgeData *ed, size_t n)
{
    FAKE_CALL("cuGraphAddDependencies");
    fake_graph *g = (fake_graph *)hg;
    for (size_t i = 0; i < n; i++) {
        const fake_node *a = (const fake_node *)from[i];
        const fake_node *b = (const fake_node *)to[i];
        if (g->nedges == FAKE_MAXE || !a || !b)
            return CUDA_ERROR_INVALID_VALUE;
        /* As the driver: ports other than 0 exist on kernel nodes only. */
        if (ed && ed[i].from_port && (a->type != CU_GRAPH_NODE_TYPE_KERNEL ||
                                      b->type != CU_GRAPH_NODE_TYPE_KERNEL))
            return CUDA_ERROR_INVALID_VALUE;
        for (int e = 0; e < g->nedges; e++)
            if (g->edges[e].from == a->index && g->edges[e].to == b->index)
                return CUDA_ERROR_INVALID_VALUE;
        fake_edge *e = &g->edges[g->nedges++];
        e->from = a->index;
        e->to = b->index;
        if (ed)
            e->ed = ed[i];
        else
            memset(&e->ed, 0, sizeof e->ed);
    }
    return CUDA_SUCCESS;
}
static CUresult fk_GraphGetEdges(CUgraph hg, CUgraphNode *from, CUgraphNode *to,
                                 CUgraphEdgeData *ed, size_t *n)
{
    FAKE_CALL("cuGraphGetEdges");
    fake_graph *g = (fake_graph *)hg;
    if (from)
        for (int i = 0; i < g->nedges && (size_t)i < *n; i++) {
            from[i] = (CUgraphNode)g->nodes[g->edges[i].from];
            to[i] = (CUgraphNode)g->nodes[g->edges[i].to];
            if (ed)
                ed[i] = g->edges[i].ed;
        }
    *n = (size_t)g->nedges;
    return CUDA_SUCCESS;
}
static CUresult fk_Instantiate(CUgraphExec *out, CUgraph hg,
                               CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    FAKE_CALL("cuGraphInstantiateWithParams");
    F.instantiate_flags = p->flags;
    fake_graph *g = (fake_graph *)hg;
    if (F.instantiate_fail_node >= 0 && F.instantiate_fail_node < g->nnodes) {
        p->hErrNode_out = (CUgraphNode)g->nodes[F.instantiate_fail_node];
        p->result_out = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
        return CUDA_ERROR_INVALID_VALUE;
    }
    fake_exec *x = fake_obj(sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < g->nnodes; i++) {
        x->nodes[i] = *g->nodes[i];
        x->nodes[i].child = NULL;
        x->nnodes = i + 1;
        /* The exec owns copies of child graphs, as the driver's does. */
        if (g->nodes[i]->child &&
            !(x->nodes[i].child = fake_clone(g->nodes[i]->child))) {
            for (int j = 0; j < i; j++)
                fake_graph_free(x->nodes[j].child);
            fake_drop(x);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    memcpy(x->edges, g->edges, sizeof x->edges);
    x->nedges = g->nedges;
    x->from = g;
    F.last_graph = g;
    F.last_exec = x;
    p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    *out = (CUgraphExec)x;
    return CUDA_SUCCESS;
}
static CUresult fk_GraphUpload(CUgraphExec x, CUstream s)
{
    (void)x, (void)s;
    FAKE_CALL("cuGraphUpload");
    return CUDA_SUCCESS;
}
static CUresult fake_run_graph(fake_node *const *nodes, int nnodes,
                               const fake_edge *edges, int nedges);

static CUresult fake_run_body(const fake_node *n, unsigned b)
{
    const fake_graph *g = (const fake_graph *)n->body[b];
    F.body_runs++;
    return fake_run_graph(g->nodes, g->nnodes, g->edges, g->nedges);
}

static CUresult fake_run_conditional(const fake_node *n)
{
    const fake_cond *c = &F.conds[n->cnd.handle - FAKE_COND_BASE];
    CUresult r = CUDA_SUCCESS;
    switch (n->cnd.type) {
    case CU_GRAPH_COND_TYPE_IF:
        if (c->value)
            r = fake_run_body(n, 0);
        else if (n->cnd.size == 2)
            r = fake_run_body(n, 1);
        break;
    case CU_GRAPH_COND_TYPE_WHILE:
        for (long i = 0; c->value && r == CUDA_SUCCESS; i++) {
            if (i == FAKE_MAXITER) {
                if (!F.runaway)
                    return CUDA_ERROR_LAUNCH_TIMEOUT;
                F.busy = 1;
                return CUDA_SUCCESS;
            }
            r = fake_run_body(n, 0);
        }
        break;
    case CU_GRAPH_COND_TYPE_SWITCH:
        if (c->value < n->cnd.size)
            r = fake_run_body(n, c->value);
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return r;
}

static CUresult fake_run_node(const fake_node *n)
{
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        void *p[FAKE_MAXP];
        for (unsigned i = 0; i < n->k->nparams; i++)
            p[i] = (void *)&n->vals[i];
        if (n->k->run)
            n->k->run(p, n->grid, n->block);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        char *d = (char *)(uintptr_t)n->set.dst;
        for (size_t i = 0; i < n->set.width; i++)
            memcpy(d + i * n->set.elementSize, &n->set.value,
                   n->set.elementSize);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        memmove((void *)(uintptr_t)n->cpy.dstDevice,
                (const void *)(uintptr_t)n->cpy.srcDevice, n->cpy.WidthInBytes);
        break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return fake_run_conditional(n);
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return fake_run_graph(n->child->nodes, n->child->nnodes,
                              n->child->edges, n->child->nedges);
    case CU_GRAPH_NODE_TYPE_HOST:
        n->host(n->blob_arg ? (void *)(uintptr_t)n->blob : n->host_arg);
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        ((long *)(void *)n->event)[0]++;
        break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        ((long *)(void *)n->event)[1]++;
        break;
    default:
        break;
    }
    return CUDA_SUCCESS;
}

/* Kahn's algorithm: a node runs once everything before it has run. */
static CUresult fake_run_graph(fake_node *const *nodes, int nnodes,
                               const fake_edge *edges, int nedges)
{
    int indeg[FAKE_MAXN] = {0}, done[FAKE_MAXN] = {0};
    for (int e = 0; e < nedges; e++)
        indeg[edges[e].to]++;
    for (int ran = 0; ran < nnodes;) {
        int progress = 0;
        for (int i = 0; i < nnodes; i++) {
            if (done[i] || indeg[i])
                continue;
            CUresult r = fake_run_node(nodes[i]);
            if (r != CUDA_SUCCESS || F.busy)
                return r;       /* busy: the rest waits behind a runaway */
            done[i] = 1;
            ran++;
            progress = 1;
            for (int e = 0; e < nedges; e++)
                if (edges[e].from == i)
                    indeg[edges[e].to]--;
        }
        if (!progress)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult fk_GraphLaunch(CUgraphExec hx, CUstream s)
{
    (void)s;
    FAKE_CALL("cuGraphLaunch");
    fake_exec *x = (fake_exec *)hx;
    if (F.busy)
        return CUDA_SUCCESS;    /* queued behind the graph that runs away */
    /* Each launch starts with the defaults of the handles that have one. */
    for (int c = 0; c < FAKE_MAXC; c++)
        if (F.conds[c].graph &&
            (F.conds[c].flags & CU_GRAPH_COND_ASSIGN_DEFAULT))
            F.conds[c].value = F.conds[c].dflt;
    fake_node *nodes[FAKE_MAXN];
    for (int i = 0; i < x->nnodes; i++)
        nodes[i] = &x->nodes[i];
    CUresult r = fake_run_graph(nodes, x->nnodes, x->edges, x->nedges);
    if (r == CUDA_SUCCESS)
        x->launches++;
    return r;
}
static CUresult fk_ExecDestroy(CUgraphExec x)
{
    FAKE_CALL("cuGraphExecDestroy");
    FAKE_NOT_WHILE_BUSY();
    if (F.last_exec == (fake_exec *)x)
        F.last_exec = NULL;
    for (int i = 0; i < F.nobjs; i++)
        if (F.objs[i] == (void *)x) {
            fake_exec *e = (fake_exec *)x;
            for (int j = 0; j < e->nnodes; j++)
                fake_graph_free(e->nodes[j].child);
            fake_drop(e);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}
static fake_node *fake_exec_node(CUgraphExec hx, CUgraphNode h)
{
    fake_exec *x = (fake_exec *)hx;
    fake_node *n = (fake_node *)h;
    /* A body's nodes run from the body graph itself. */
    if (n->in != x->from)
        return n;
    int i = n->index;
    return i < x->nnodes ? &x->nodes[i] : NULL;
}
static CUresult fk_ExecKernelSet(CUgraphExec x, CUgraphNode h,
                                 const CUDA_KERNEL_NODE_PARAMS *p)
{
    FAKE_CALL("cuGraphExecKernelNodeSetParams");
    fake_node *n = fake_exec_node(x, h);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    fake_kernel_copy(n, p);
    F.set_params++;
    return CUDA_SUCCESS;
}
static CUresult fk_ExecMemsetSet(CUgraphExec x, CUgraphNode h,
                                 const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c)
{
    (void)c;
    FAKE_CALL("cuGraphExecMemsetNodeSetParams");
    fake_node *n = fake_exec_node(x, h);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_MEMSET)
        return CUDA_ERROR_INVALID_VALUE;
    n->set = *p;
    F.set_params++;
    return CUDA_SUCCESS;
}
static CUresult fk_ExecMemcpySet(CUgraphExec x, CUgraphNode h,
                                 const CUDA_MEMCPY3D *p, CUcontext c)
{
    (void)c;
    FAKE_CALL("cuGraphExecMemcpyNodeSetParams");
    fake_node *n = fake_exec_node(x, h);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_MEMCPY)
        return CUDA_ERROR_INVALID_VALUE;
    n->cpy = *p;
    F.set_params++;
    return CUDA_SUCCESS;
}
static CUresult fk_ExecChildSet(CUgraphExec x, CUgraphNode h, CUgraph child)
{
    FAKE_CALL("cuGraphExecChildGraphNodeSetParams");
    fake_node *n = fake_exec_node(x, h);
    const fake_graph *c = (const fake_graph *)child;
    if (!n || n->type != CU_GRAPH_NODE_TYPE_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    /* As the driver: new parameters, not a new topology. */
    if (c->nnodes != n->child->nnodes || c->nedges != n->child->nedges)
        return CUDA_ERROR_INVALID_VALUE;
    fake_graph *copy = fake_clone(c);
    if (!copy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_graph_free(n->child);
    n->child = copy;
    F.set_params++;
    return CUDA_SUCCESS;
}
/* Handle `h` of the new graph as the exec knows it: the handle of the
 * conditional node paired with the one that reads h, in map[]. */
typedef struct fake_handle_map {
    uint64_t from[FAKE_MAXC], to[FAKE_MAXC];
    int n;
} fake_handle_map;

/* Pairs the conditional nodes of new graph g with the exec's, body by
 * body, and records the handle each maps to; the exec's handles take the new
 * defaults and flags (cuGraphExecUpdate's rule).  Fails on a different
 * shape, as the driver does. */
static int fake_pair_conds(fake_node *const *old, int nold,
                           const fake_graph *g, fake_handle_map *m,
                           CUgraphExecUpdateResultInfo *info)
{
    if (g->nnodes != nold) {
        info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        return 0;
    }
    for (int i = 0; i < nold; i++) {
        const fake_node *nn = g->nodes[i];
        if (nn->type != old[i]->type) {
            info->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
            info->errorNode = (CUgraphNode)(uintptr_t)nn;
            return 0;
        }
        if (nn->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
            continue;
        if (nn->cnd.size != old[i]->cnd.size || m->n == FAKE_MAXC) {
            info->result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            info->errorNode = (CUgraphNode)(uintptr_t)nn;
            return 0;
        }
        m->from[m->n] = nn->cnd.handle;
        m->to[m->n++] = old[i]->cnd.handle;
        fake_cond *oc = &F.conds[old[i]->cnd.handle - FAKE_COND_BASE];
        const fake_cond *ncd = &F.conds[nn->cnd.handle - FAKE_COND_BASE];
        oc->dflt = ncd->dflt;
        oc->flags = ncd->flags;
        for (unsigned b = 0; b < nn->cnd.size; b++) {
            const fake_graph *ob = (const fake_graph *)old[i]->body[b];
            if (!fake_pair_conds(ob->nodes, ob->nnodes,
                                 (const fake_graph *)nn->body[b], m, info))
                return 0;
        }
    }
    return 1;
}

/* Copies the parameters of g's nodes into the exec's (old[]), kernels'
 * handles translated, recursing into bodies. */
static void fake_copy_params(fake_node *const *old, const fake_graph *g,
                             const fake_handle_map *m)
{
    for (int i = 0; i < g->nnodes; i++) {
        fake_node *o = old[i];
        const fake_node *nn = g->nodes[i];
        if (nn->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
            for (unsigned b = 0; b < nn->cnd.size; b++)
                fake_copy_params(((fake_graph *)o->body[b])->nodes,
                                 (const fake_graph *)nn->body[b], m);
            continue;
        }
        int idx = o->index;
        fake_graph *in = o->in;
        fake_graph *child = o->child;
        *o = *nn;
        o->index = idx;
        o->in = in;
        /* A child graph is the exec's own copy: the new one's replaces it
         * (the fake's pool is large enough for the suites). */
        o->child = child;
        if (nn->child) {
            o->child = fake_clone(nn->child);
            fake_graph_free(child);
        }
        int cs = o->type == CU_GRAPH_NODE_TYPE_KERNEL ? o->k->cond_slot : 0;
        for (int j = 0; cs && j < m->n; j++)
            if (o->vals[cs - 1] == m->from[j]) {
                o->vals[cs - 1] = m->to[j];
                break;
            }
    }
}

static CUresult fk_ExecUpdate(CUgraphExec hx, CUgraph hg,
                              CUgraphExecUpdateResultInfo *info)
{
    FAKE_CALL("cuGraphExecUpdate");
    fake_exec *x = (fake_exec *)hx;
    fake_graph *g = (fake_graph *)hg;
    memset(info, 0, sizeof *info);
    if (g->nnodes != x->nnodes || g->nedges != x->nedges) {
        info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        if (g->nnodes == x->nnodes && g->nnodes)
            info->errorNode = (CUgraphNode)g->nodes[g->nnodes - 1];
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    fake_node *old[FAKE_MAXN];
    for (int i = 0; i < x->nnodes; i++)
        old[i] = &x->nodes[i];
    fake_handle_map m;
    m.n = 0;
    if (!fake_pair_conds(old, x->nnodes, g, &m, info))
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    fake_copy_params(old, g, &m);
    info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}

static const cudag__drv fake_table = {
    .cuGetErrorName = fk_GetErrorName,
    .cuGetErrorString = fk_GetErrorString,
    .cuInit = fk_Init,
    .cuDriverGetVersion = fk_DriverGetVersion,
    .cuDeviceGetCount = fk_DeviceGetCount,
    .cuDeviceGet = fk_DeviceGet,
    .cuDeviceGetName = fk_DeviceGetName,
    .cuDeviceGetAttribute = fk_DeviceGetAttribute,
    .cuDevicePrimaryCtxRetain = fk_PrimaryCtxRetain,
    .cuDevicePrimaryCtxRelease = fk_PrimaryCtxRelease,
    .cuCtxPushCurrent = fk_CtxPush,
    .cuCtxPopCurrent = fk_CtxPop,
    .cuCtxGetDevice = fk_CtxGetDevice,
    .cuCtxSynchronize = fk_CtxSynchronize,
    .cuStreamCreate = fk_StreamCreate,
    .cuStreamDestroy = fk_StreamDestroy,
    .cuStreamSynchronize = fk_StreamSynchronize,
    .cuStreamQuery = fk_StreamQuery,
    .cuStreamBeginCapture = fk_BeginCapture,
    .cuStreamEndCapture = fk_EndCapture,
    .cuLaunchHostFunc = fk_LaunchHostFunc,
    .cuEventCreate = fk_EventCreate,
    .cuEventRecord = fk_EventRecord,
    .cuEventSynchronize = fk_EventSynchronize,
    .cuEventQuery = fk_EventQuery,
    .cuEventElapsedTime = fk_EventElapsedTime,
    .cuEventDestroy = fk_EventDestroy,
    .cuMemGetInfo = fk_MemGetInfo,
    .cuMemAlloc = fk_MemAlloc,
    .cuMemFree = fk_MemFree,
    .cuMemcpyHtoDAsync = fk_HtoD,
    .cuMemcpyDtoHAsync = fk_DtoH,
    .cuMemsetD8Async = fk_MemsetD8,
    .cuMemsetD16Async = fk_MemsetD16,
    .cuMemsetD32Async = fk_MemsetD32,
    .cuMemcpyDtoDAsync = fk_MemcpyDtoD,
    .cuLibraryLoadFromFile = fk_LibraryLoad,
    .cuLibraryLoadData = fk_LibraryLoadData,
    .cuLibraryUnload = fk_LibraryUnload,
    .cuLibraryGetKernel = fk_LibraryGetKernel,
    .cuKernelGetFunction = fk_KernelGetFunction,
    .cuFuncGetAttribute = fk_FuncGetAttribute,
    .cuFuncSetAttribute = fk_FuncSetAttribute,
    .cuFuncGetParamInfo = fk_FuncGetParamInfo,
    .cuLaunchKernelEx = fk_LaunchKernelEx,
    .cuGraphCreate = fk_GraphCreate,
    .cuGraphDestroy = fk_GraphDestroy,
    .cuGraphAddKernelNode = fk_AddKernelNode,
    .cuGraphKernelNodeSetAttribute = fk_KernelNodeSetAttribute,
    .cuGraphAddMemsetNode = fk_AddMemsetNode,
    .cuGraphAddMemcpyNode = fk_AddMemcpyNode,
    .cuGraphAddChildGraphNode = fk_AddChildGraphNode,
    .cuGraphChildGraphNodeGetGraph = fk_ChildGraphGet,
    .cuGraphAddEventRecordNode = fk_AddEventRecordNode,
    .cuGraphAddEventWaitNode = fk_AddEventWaitNode,
    .cuGraphAddHostNode = fk_AddHostNode,
    .cuGraphAddDependencies = fk_AddDependencies,
    .cuGraphAddNode = fk_AddNode,
    .cuGraphConditionalHandleCreate = fk_CondHandleCreate,
    .cuGraphGetEdges = fk_GraphGetEdges,
    .cuGraphInstantiateWithParams = fk_Instantiate,
    .cuGraphUpload = fk_GraphUpload,
    .cuGraphLaunch = fk_GraphLaunch,
    .cuGraphExecDestroy = fk_ExecDestroy,
    .cuGraphExecKernelNodeSetParams = fk_ExecKernelSet,
    .cuGraphExecMemsetNodeSetParams = fk_ExecMemsetSet,
    .cuGraphExecMemcpyNodeSetParams = fk_ExecMemcpySet,
    .cuGraphExecChildGraphNodeSetParams = fk_ExecChildSet,
    .cuGraphExecUpdate = fk_ExecUpdate,
};

/* Frees whatever is left, resets the state to a healthy Hopper-like device
 * and installs the fake table. */
static void fake_reset(void)
{
    while (F.nobjs)
        free(F.objs[--F.nobjs]);
    memset(&F, 0, sizeof F);
    F.countdown = -1;
    F.init_result = CUDA_SUCCESS;
    F.version = 13000;
    F.device_count = 1;
    F.cc_major = 9;
    F.smem_optin = 227 * 1024;
    F.mem_free = (size_t)1 << 30;
    F.mem_total = (size_t)2 << 30;
    F.instantiate_fail_node = -1;
    cudag__driver_override(&fake_table);
}

/* At a suite's end: frees what the fake holds and gives the library back
 * its real driver table (so that a leak checker sees nothing left). */
CUDAG__UNUSED static void fake_finish(void)
{
    fake_reset();
    cudag__driver_override(NULL);
    while (F.nobjs)
        free(F.objs[--F.nobjs]);
}

#ifdef cmocka_unit_test
/* After call n of a fault sweep failed inside the scenario: the library
 * holds nothing (but the context a failed pop leaves pushed: the driver's
 * state, which it cannot undo), and nothing is left capturing.  For the
 * CMocka suites (common.h included first). */
CUDAG__UNUSED static void fake_expect_clean(long n)
{
    const char *call = F.failed ? F.failed : "?";
    int live = fake_live();
    if (strcmp(call, "cuCtxPopCurrent") == 0)
        live -= F.pushed;
    if (live != 0)
        print_error("call %ld (%s) leaked %d objects\n", n, call, live);
    assert_int_equal(live, 0);
    assert_null(F.capture_stream);
}
#endif

/* Makes the n-th counted call from now fail (1 = the next one). */
CUDAG__UNUSED static void fake_fail_at(long n)
{
    F.countdown = n;
    F.calls = 0;
    F.failed = NULL;
}

#endif /* CUDAG_FAKE_DRIVER_H */
