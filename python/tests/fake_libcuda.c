/* fake_libcuda.c — the CPU suites' fake CUDA driver (tests/fake_driver.h)
 * as a shared library named libcuda.so.1, so that the Python package's CPU
 * tests run the real libcudag.so through instantiation, replays, updates and
 * copies without a GPU: put this library's directory first in
 * LD_LIBRARY_PATH.  Device memory is host memory, so a NumPy array exposed
 * through __cuda_array_interface__ is "device memory" here, and the fake's
 * host kernels (scale_f32, add_f32, copy_f32) compute real results.
 *
 * Exports cuGetProcAddress_v2 (how libcudag resolves every entry point) and
 * fake_live(), the number of objects, context pushes and primary-context
 * references libcudag still holds. */
#include "fake_driver.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT int fake_objects_live(void);
FAKE_EXPORT int fake_launches(void);
FAKE_EXPORT unsigned long long fake_instantiate_flags(void);

/* fake_reset() installs its table through libcudag's test seam; the shared
 * libcudag has no seam: it finds the table through cuGetProcAddress_v2. */
void cudag__driver_override(const cudag__drv *t) { (void)t; }

/* CUDAG_FAKE_RUNAWAY: a while loop that does not end keeps the stream busy
 * for good (fake_state.runaway), as a device would, instead of failing its
 * launch: what `cudag run --timeout` is for. */
__attribute__((constructor)) static void fake_start(void)
{
    fake_reset();
    F.runaway = getenv("CUDAG_FAKE_RUNAWAY") != NULL;
}

/* With CUDAG_FAKE_PATH_TIME set, events measure a model of the device's time
 * instead of a constant: a graph launch takes its longest path, 1 µs per
 * node and 1 µs more per full edge (a programmatic edge overlaps), so that a
 * test of `cudag bench` can tell which graph each mode replayed (the full
 * edges, the declared graph, the serialized chain). */
static float path_clock_us;
static struct {
    CUevent e;
    float at;
} path_marks[64];

static CUresult path_graph_launch(CUgraphExec hx, CUstream s)
{
    CUresult r = fake_table.cuGraphLaunch(hx, s);
    if (r != CUDA_SUCCESS)
        return r;
    const fake_exec *x = (const fake_exec *)hx;
    float end[FAKE_MAXN], longest = 0;
    for (int i = 0; i < x->nnodes; i++)
        end[i] = 1;
    /* Relaxed once per node: enough for any path of a DAG. */
    for (int pass = 0; pass < x->nnodes; pass++)
        for (int i = 0; i < x->nedges; i++) {
            const fake_edge *d = &x->edges[i];
            float gap = d->ed.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC ? 0 : 1;
            if (end[d->from] + gap + 1 > end[d->to])
                end[d->to] = end[d->from] + gap + 1;
        }
    for (int i = 0; i < x->nnodes; i++)
        longest = end[i] > longest ? end[i] : longest;
    path_clock_us += longest;
    return r;
}

static CUresult path_event_record(CUevent e, CUstream s)
{
    CUresult r = fake_table.cuEventRecord(e, s);
    int free_slot = -1;
    for (int i = 0; i < 64; i++) {
        if (path_marks[i].e == e) {
            path_marks[i].at = path_clock_us;
            return r;
        }
        if (!path_marks[i].e && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0)
        path_marks[free_slot].e = e, path_marks[free_slot].at = path_clock_us;
    return r;
}

static CUresult path_elapsed(float *ms, CUevent a, CUevent b)
{
    float ta = -1, tb = -1;
    for (int i = 0; i < 64; i++) {
        if (path_marks[i].e == a)
            ta = path_marks[i].at;
        if (path_marks[i].e == b)
            tb = path_marks[i].at;
    }
    if (ta < 0 || tb < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    *ms = (tb - ta) / 1000.0f;
    return CUDA_SUCCESS;
}

/* Sets *pfn to the wrapper for `symbol` where CUDAG_FAKE_PATH_TIME is set;
 * returns whether it did. */
static int path_symbol(const char *symbol, void **pfn)
{
    CUresult (*launch)(CUgraphExec, CUstream) = path_graph_launch;
    CUresult (*record)(CUevent, CUstream) = path_event_record;
    CUresult (*elapsed)(float *, CUevent, CUevent) = path_elapsed;
    if (!getenv("CUDAG_FAKE_PATH_TIME"))
        return 0;
    if (strcmp(symbol, "cuGraphLaunch") == 0)
        memcpy(pfn, &launch, sizeof *pfn);
    else if (strcmp(symbol, "cuEventRecord") == 0)
        memcpy(pfn, &record, sizeof *pfn);
    else if (strcmp(symbol, "cuEventElapsedTime") == 0)
        memcpy(pfn, &elapsed, sizeof *pfn);
    else
        return 0;
    return 1;
}

FAKE_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    (void)version, (void)flags;
    if (path_symbol(symbol, pfn)) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
#define FAKE_RESOLVE(name, ver)                                                \
    if (strcmp(symbol, #name) == 0) {                                          \
        memcpy(pfn, &fake_table.name, sizeof *pfn);                           \
        if (status)                                                            \
            *status = CU_GET_PROC_ADDRESS_SUCCESS;                             \
        return CUDA_SUCCESS;                                                   \
    }
    CUDAG__DRIVER_FUNCS(FAKE_RESOLVE)
#undef FAKE_RESOLVE
    *pfn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

int fake_objects_live(void)
{
    return fake_live();
}

/* The flags of the last graph instantiation. */
unsigned long long fake_instantiate_flags(void)
{
    return F.instantiate_flags;
}

/* The number of graph launches the last instantiated exec has run. */
int fake_launches(void)
{
    return F.last_exec ? F.last_exec->launches : -1;
}

