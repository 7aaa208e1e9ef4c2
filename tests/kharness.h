/* kharness.h — a small test-only harness over the CUDA driver API for the
 * kernels' GPU test and benchmark: libcuda.so.1 opened with dlopen, every
 * entry point resolved with cuGetProcAddress at the CUDA version of the
 * cuda.h we compile against (as the library itself does), one context, one
 * stream, and the kernels fatbin loaded.
 *
 * Header-only (static functions) so that tests/test_gpu_kernels.c and
 * tools/bench/bench_kernels.c can each include it without a build-file
 * change.  It deliberately does not use the library's own driver table: the
 * kernels must be testable before, and independently of, the graph
 * machinery. */
#ifndef CUDAG_TESTS_KHARNESS_H
#define CUDAG_TESTS_KHARNESS_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every driver entry point the harness users call.  Each becomes a member
 * of kh_api named like the function; cuda.h's versioning macros (cuMemAlloc
 * -> cuMemAlloc_v2) apply to the member names and the calls alike, and
 * cuGetProcAddress is asked for the unversioned name at CUDA_VERSION, which
 * returns the matching version. */
#define KH_FUNCS(X)                                                            \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet)         \
    X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)     \
    X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)        \
    X(cuModuleLoad) X(cuModuleUnload) X(cuModuleGetFunction)                   \
    X(cuFuncGetAttribute) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)          \
    X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD16)          \
    X(cuMemsetD32) X(cuMemGetInfo) X(cuLaunchKernel) X(cuLaunchKernelEx)       \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventElapsedTime) \
    X(cuEventSynchronize) X(cuGetErrorName) X(cuGetErrorString)                \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuStreamBeginCapture)     \
    X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)      \
    X(cuGraphDestroy) X(cuGraphExecDestroy)

typedef struct kh_api {
#define KH_MEMBER(f) __typeof__(&f) f;
    KH_FUNCS(KH_MEMBER)
#undef KH_MEMBER
} kh_api;

typedef struct kh {
    void *lib;
    kh_api api;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUmodule mod;
    int sms, cc_major, cc_minor, l2_bytes, driver_version;
    char name[256];
} kh;

/* The text of a driver status, for messages. */
static inline const char *kh_errname(const kh *k, CUresult r)
{
    const char *s = NULL;
    if (k->api.cuGetErrorName && k->api.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_?";
}

/* Formats "what: CUDA_ERROR_X" into why (size n); returns -1. */
static inline int kh_fail(const kh *k, char *why, size_t n, CUresult r,
                          const char *what)
{
    snprintf(why, n, "%s: %s", what, kh_errname(k, r));
    return -1;
}

/* Opens the driver, device 0, its primary context and a stream.  The stream
 * is a blocking one: it orders after the synchronous cuMemcpy and cuMemset
 * calls of the users, which run on the legacy stream and may return before
 * a pageable host-to-device copy has landed.  Returns 0,
 * or -1 with the reason in why: the caller (a test) skips on it.  On failure
 * nothing needs closing. */
static inline int kh_open(kh *k, char *why, size_t n)
{
    memset(k, 0, sizeof *k);
    k->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!k->lib) {
        snprintf(why, n, "libcuda.so.1 not found (%s)", dlerror());
        return -1;
    }
    __typeof__(&cuGetProcAddress) gpa;
    *(void **)&gpa = dlsym(k->lib, "cuGetProcAddress_v2");
    if (!gpa) {
        snprintf(why, n, "libcuda.so.1 has no cuGetProcAddress_v2 (driver too old)");
        dlclose(k->lib);
        k->lib = NULL;
        return -1;
    }
#define KH_RESOLVE(f)                                                          \
    {                                                                          \
        CUdriverProcAddressQueryResult st;                                     \
        CUresult r = gpa(#f, (void **)&k->api.f, CUDA_VERSION,                 \
                         CU_GET_PROC_ADDRESS_DEFAULT, &st);                    \
        if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS ||         \
            !k->api.f) {                                                       \
            snprintf(why, n, "cuGetProcAddress(%s, %d) failed", #f,            \
                     CUDA_VERSION);                                            \
            dlclose(k->lib);                                                   \
            k->lib = NULL;                                                     \
            return -1;                                                         \
        }                                                                      \
    }
    KH_FUNCS(KH_RESOLVE)
#undef KH_RESOLVE
    const kh_api *a = &k->api;
    CUresult r = a->cuInit(0);
    if (r != CUDA_SUCCESS)
        goto fail_lib;
    int count = 0;
    if ((r = a->cuDeviceGetCount(&count)) != CUDA_SUCCESS)
        goto fail_lib;
    if (count == 0) {
        snprintf(why, n, "no CUDA device");
        goto fail_nolog;
    }
    if ((r = a->cuDeviceGet(&k->dev, 0)) != CUDA_SUCCESS ||
        (r = a->cuDeviceGetName(k->name, (int)sizeof k->name, k->dev)) != CUDA_SUCCESS ||
        (r = a->cuDeviceGetAttribute(&k->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                     k->dev)) != CUDA_SUCCESS ||
        (r = a->cuDeviceGetAttribute(&k->cc_major,
                                     CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                     k->dev)) != CUDA_SUCCESS ||
        (r = a->cuDeviceGetAttribute(&k->cc_minor,
                                     CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                     k->dev)) != CUDA_SUCCESS ||
        (r = a->cuDeviceGetAttribute(&k->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                                     k->dev)) != CUDA_SUCCESS ||
        (r = a->cuDriverGetVersion(&k->driver_version)) != CUDA_SUCCESS)
        goto fail_lib;
    if ((r = a->cuDevicePrimaryCtxRetain(&k->ctx, k->dev)) != CUDA_SUCCESS)
        goto fail_lib;
    if ((r = a->cuCtxSetCurrent(k->ctx)) != CUDA_SUCCESS ||
        (r = a->cuStreamCreate(&k->stream, CU_STREAM_DEFAULT)) != CUDA_SUCCESS) {
        a->cuDevicePrimaryCtxRelease(k->dev);
        goto fail_lib;
    }
    return 0;
fail_lib:
    kh_fail(k, why, n, r, "CUDA driver initialisation");
fail_nolog:
    dlclose(k->lib);
    k->lib = NULL;
    return -1;
}

/* Loads a module (fatbin, cubin or PTX) from `dir`/`file`.  Returns 0 or -1
 * with the reason in why. */
static inline int kh_load(kh *k, CUmodule *mod, const char *dir, const char *file,
                          char *why, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, n, "%.400s not found (kernels not built?)", path);
        return -1;
    }
    fclose(f);
    CUresult r = k->api.cuModuleLoad(mod, path);
    if (r != CUDA_SUCCESS) {
        snprintf(why, n, "cuModuleLoad(%.400s): %s", path, kh_errname(k, r));
        return -1;
    }
    return 0;
}

static inline void kh_close(kh *k)
{
    if (!k->lib)
        return;
    if (k->mod)
        k->api.cuModuleUnload(k->mod);
    if (k->stream)
        k->api.cuStreamDestroy(k->stream);
    k->api.cuDevicePrimaryCtxRelease(k->dev);
    dlclose(k->lib);
    k->lib = NULL;
}

/* Launches f on the harness stream; `pdl` sets the programmatic stream
 * serialization attribute (the launch may overlap the previous kernel in the
 * stream up to its griddepcontrol.wait). */
static inline CUresult kh_launch(const kh *k, CUfunction f, unsigned grid,
                                 unsigned block, int pdl, void **args)
{
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = block;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 0;
    cfg.hStream = k->stream;
    cfg.attrs = pdl ? &attr : NULL;
    cfg.numAttrs = pdl ? 1 : 0;
    return k->api.cuLaunchKernelEx(&cfg, f, args, NULL);
}

/* --- Host-side bf16 ------------------------------------------------------ */

static inline float kh_bf16_to_f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest even, NaN kept quiet. */
static inline uint16_t kh_f_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#endif
