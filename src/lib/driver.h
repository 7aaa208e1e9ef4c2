/* driver.h — the CUDA driver API as one table of entry points, resolved at
 * run time from libcuda.so.1 (the library never links libcuda), and the one
 * way driver failures become cudag_error values. */
#ifndef CUDAG_DRIVER_H
#define CUDAG_DRIVER_H

#include "cudag.h"
#include "base/attrs.h"
#include "base/diag.h"

#ifdef CUDAG_NO_TOOLKIT
#include "lib/nocuda.h"     /* built without the toolkit: check, dot, plan only */
#else
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

/*
 * Every entry point the library uses, with the CUDA version whose ABI it is
 * asked for.  cuGetProcAddress returns the variant of a function as it was in
 * that version, so the table's types (PFN_<name>_v<version> from
 * cudaTypedefs.h) are exactly what the driver hands back, whatever newer
 * variants a later driver adds.  The edge-data graph functions need 12.3 and
 * cuFuncGetParamInfo 12.4: that is the oldest driver cudag accepts.  A new
 * entry also needs its PFN_ type in nocuda.h, for builds without cuda.h.
 */
#define CUDAG__DRIVER_FUNCS(X)                                                 \
    X(cuGetErrorName, 6000)                                                    \
    X(cuGetErrorString, 6000)                                                  \
    X(cuInit, 2000)                                                            \
    X(cuDriverGetVersion, 2020)                                                \
    X(cuDeviceGetCount, 2000)                                                  \
    X(cuDeviceGet, 2000)                                                       \
    X(cuDeviceGetName, 2000)                                                   \
    X(cuDeviceGetAttribute, 2000)                                              \
    X(cuDevicePrimaryCtxRetain, 7000)                                          \
    X(cuDevicePrimaryCtxRelease, 11000)                                        \
    X(cuCtxPushCurrent, 4000)                                                  \
    X(cuCtxPopCurrent, 4000)                                                   \
    X(cuCtxGetDevice, 2000)                                                    \
    X(cuCtxSynchronize, 2000)                                                  \
    X(cuStreamCreate, 2000)                                                    \
    X(cuStreamDestroy, 4000)                                                   \
    X(cuStreamSynchronize, 2000)                                               \
    X(cuStreamQuery, 2000)                                                     \
    X(cuStreamBeginCapture, 10010)                                             \
    X(cuStreamEndCapture, 10000)                                               \
    X(cuLaunchHostFunc, 10000)                                                 \
    X(cuEventCreate, 2000)                                                     \
    X(cuEventRecord, 2000)                                                     \
    X(cuEventSynchronize, 2000)                                                \
    X(cuEventQuery, 2000)                                                      \
    X(cuEventElapsedTime, 2000)                                                \
    X(cuEventDestroy, 4000)                                                    \
    X(cuMemGetInfo, 3020)                                                      \
    X(cuMemAlloc, 3020)                                                        \
    X(cuMemFree, 3020)                                                         \
    X(cuMemcpyHtoDAsync, 3020)                                                 \
    X(cuMemcpyDtoHAsync, 3020)                                                 \
    X(cuMemsetD8Async, 3020)                                                   \
    X(cuMemsetD16Async, 3020)                                                  \
    X(cuMemsetD32Async, 3020)                                                  \
    X(cuMemcpyDtoDAsync, 3020)                                                 \
    X(cuLibraryLoadFromFile, 12000)                                            \
    X(cuLibraryLoadData, 12000)                                                \
    X(cuLibraryUnload, 12000)                                                  \
    X(cuLibraryGetKernel, 12000)                                               \
    X(cuKernelGetFunction, 12000)                                              \
    X(cuFuncGetAttribute, 2020)                                                \
    X(cuFuncSetAttribute, 9000)                                                \
    X(cuFuncGetParamInfo, 12040)                                               \
    X(cuLaunchKernelEx, 11060)                                                 \
    X(cuGraphCreate, 10000)                                                    \
    X(cuGraphDestroy, 10000)                                                   \
    X(cuGraphAddKernelNode, 12000)                                             \
    X(cuGraphKernelNodeSetAttribute, 11000)                                    \
    X(cuGraphAddMemsetNode, 10000)                                             \
    X(cuGraphAddMemcpyNode, 10000)                                             \
    X(cuGraphAddChildGraphNode, 10000)                                         \
    X(cuGraphChildGraphNodeGetGraph, 10000)                                    \
    X(cuGraphAddEventRecordNode, 11010)                                        \
    X(cuGraphAddEventWaitNode, 11010)                                          \
    X(cuGraphAddHostNode, 10000)                                               \
    X(cuGraphAddDependencies, 12030)                                           \
    X(cuGraphAddNode, 12030)                                                   \
    X(cuGraphConditionalHandleCreate, 12030)                                   \
    X(cuGraphGetEdges, 12030)                                                  \
    X(cuGraphInstantiateWithParams, 12000)                                     \
    X(cuGraphUpload, 11010)                                                    \
    X(cuGraphLaunch, 10000)                                                    \
    X(cuGraphExecDestroy, 10000)                                               \
    X(cuGraphExecKernelNodeSetParams, 12000)                                   \
    X(cuGraphExecMemsetNodeSetParams, 10020)                                   \
    X(cuGraphExecMemcpyNodeSetParams, 10020)                                   \
    X(cuGraphExecChildGraphNodeSetParams, 11010)                               \
    X(cuGraphExecUpdate, 12000)

/* The oldest driver (cuDriverGetVersion) every entry above exists in. */
#define CUDAG__DRIVER_MIN_VERSION 12040

/*
 * The table.  Fields carry the functions' CUDA names; cuda.h maps some of
 * them to versioned names (cuMemAlloc → cuMemAlloc_v2) by macro, which is
 * harmless because the declaration and every use are expanded alike.
 */
typedef struct cudag__drv {
#define CUDAG__DRV_FIELD(name, ver) PFN_##name##_v##ver name;
    CUDAG__DRIVER_FUNCS(CUDAG__DRV_FIELD)
#undef CUDAG__DRV_FIELD
} cudag__drv;

/*
 * Returns the driver table in *out after cuInit(0) succeeded, loading
 * libcuda.so.1 on the first call (once per process, thread-safe).  Errors:
 * CUDAG_ENODRIVER "no CUDA driver found (libcuda.so.1): <dlerror>", a driver
 * older than CUDAG__DRIVER_MIN_VERSION or missing an entry point, cuInit
 * finding no device, or a library built without the CUDA toolkit (which
 * never opens the driver); CUDAG_ECUDA for another cuInit failure.  On error *out
 * is NULL.  The table lives as long as the process.
 */
int cudag__driver(const cudag__drv **out, cudag_error *err);

/*
 * Fills err for a failed driver call and returns CUDAG_ECUDA: the message is
 * the formatted text (which names the call and what it was for), then the
 * driver's error name and description; err->cuda_result = r; the position is
 * that of the IR object involved (CUDAG__NOPOS if none).
 */
int cudag__cu_fail(cudag_error *err, const cudag__drv *d, CUresult r,
                   cudag__pos pos, const char *fmt, ...) CUDAG__PRINTF(5, 6);

#ifdef CUDAG_TESTING
/*
 * Test seam: while t is not NULL, cudag__driver() hands out t (after calling
 * t->cuInit) instead of the real driver.  The table must outlive its use.
 * Not thread-safe: tests call it while no other thread uses the library.
 */
void cudag__driver_override(const cudag__drv *t);
#endif

#endif /* CUDAG_DRIVER_H */
