/* driver.c — opens libcuda.so.1 at run time and resolves every entry point
 * the library uses through cuGetProcAddress at an explicit CUDA version, so
 * that cudag links no libcuda and `cudag check` runs on machines without a
 * GPU; also turns CUresult failures into cudag_error values. */
#include "lib/driver.h"
#include "cudag.h"
#include "base/diag.h"

#include <stdarg.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Loaded once per process.  The status and message are kept so that every
 * later call reports the same failure without retrying dlopen. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cudag__drv real;
static int load_code = CUDAG_OK;
static char load_msg[600];

#ifdef CUDAG_TESTING
static const cudag__drv *override;

void cudag__driver_override(const cudag__drv *t) { override = t; }
#endif

/* cuGetProcAddress_v2 is exported by name by every driver since 12.0; older
 * drivers lack the edge-data functions cudag needs anyway. */
typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

#ifdef CUDAG_NO_TOOLKIT
/* Without cuda.h the driver's types are cudag's own declarations (nocuda.h),
 * which only need to compile: calling a real driver through them could go
 * wrong in ways no test here would see, so the driver is never opened. */
static void load(void)
{
    load_code = CUDAG_ENODRIVER;
    snprintf(load_msg, sizeof load_msg,
             "this cudag was built without the CUDA toolkit (no cuda.h), so "
             "it checks, draws and plans graphs but runs none: rebuild it "
             "where the toolkit is (meson setup -Dtoolkit=DIR)");
}
#else
static void load(void)
{
    /* RTLD_LOCAL: the driver's symbols stay out of the global namespace, so
     * a host program that links libcuda itself is not disturbed. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        load_code = CUDAG_ENODRIVER;
        snprintf(load_msg, sizeof load_msg,
                 "no CUDA driver found (libcuda.so.1): %s",
                 why ? why : "unknown dlopen error");
        return;
    }
    get_proc_fn gpa;
    /* POSIX's blessed way to turn a dlsym result into a function pointer. */
    *(void **)&gpa = dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) {
        load_code = CUDAG_ENODRIVER;
        snprintf(load_msg, sizeof load_msg,
                 "CUDA driver too old: libcuda.so.1 has no cuGetProcAddress_v2 "
                 "(cudag needs a driver for CUDA %d.%d or newer)",
                 CUDAG__DRIVER_MIN_VERSION / 1000,
                 CUDAG__DRIVER_MIN_VERSION % 1000 / 10);
        return;
    }
    cudag__drv t;
    memset(&t, 0, sizeof t);
#define CUDAG__RESOLVE(name, ver)                                              \
    {                                                                          \
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;        \
        void *p = NULL;                                                        \
        CUresult r = gpa(#name, &p, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); \
        if (r != CUDA_SUCCESS || !p || q != CU_GET_PROC_ADDRESS_SUCCESS) {     \
            load_code = CUDAG_ENODRIVER;                                       \
            snprintf(load_msg, sizeof load_msg,                                \
                     "CUDA driver too old: libcuda.so.1 has no %s for CUDA "   \
                     "%d.%d (cudag needs a driver for CUDA %d.%d or newer)",   \
                     #name, (ver) / 1000, (ver) % 1000 / 10,                   \
                     CUDAG__DRIVER_MIN_VERSION / 1000,                         \
                     CUDAG__DRIVER_MIN_VERSION % 1000 / 10);                   \
            return;                                                            \
        }                                                                      \
        *(void **)&t.name = p;                                                 \
    }
    CUDAG__DRIVER_FUNCS(CUDAG__RESOLVE)
#undef CUDAG__RESOLVE
    /* The handle is never closed: the table points into the library for the
     * rest of the process. */
    real = t;
}
#endif

/* The driver's name for r ("CUDA_ERROR_INVALID_VALUE"), never NULL. */
static const char *cu_name(const cudag__drv *d, CUresult r)
{
    const char *s = NULL;
    if (d && d->cuGetErrorName && d->cuGetErrorName(r, &s) == CUDA_SUCCESS &&
        s)
        return s;
    return "CUDA_ERROR_UNKNOWN";
}

int cudag__cu_fail(cudag_error *err, const cudag__drv *d, CUresult r,
                   cudag__pos pos, const char *fmt, ...)
{
    const char *desc = NULL;
    if (!d || !d->cuGetErrorString ||
        d->cuGetErrorString(r, &desc) != CUDA_SUCCESS || !desc)
        desc = "unknown error";
    va_list ap;
    va_start(ap, fmt);
    int rc = cudag__vfail_call(err, pos, (int)r, cu_name(d, r), desc,
                               fmt, ap);
    va_end(ap);
    return rc;
}

int cudag__driver(const cudag__drv **out, cudag_error *err)
{
    *out = NULL;
    const cudag__drv *d = NULL;
#ifdef CUDAG_TESTING
    d = override;
#endif
    if (!d) {
        pthread_once(&load_once, load);
        if (load_code != CUDAG_OK)
            return cudag__fail_at(err, load_code, CUDAG__NOPOS, "%s", load_msg);
        d = &real;
    }
    /* cuInit is cheap once done and reports a missing device each time, so
     * it runs on every call rather than once. */
    CUresult r = d->cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        cudag__cu_fail(err, d, r, CUDAG__NOPOS, "no CUDA device found: cuInit");
        if (err)
            err->code = CUDAG_ENODRIVER;
        return CUDAG_ENODRIVER;
    }
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuInit");
    int v = 0;
    r = d->cuDriverGetVersion(&v);
    if (r != CUDA_SUCCESS)
        return cudag__cu_fail(err, d, r, CUDAG__NOPOS, "cuDriverGetVersion");
    if (v < CUDAG__DRIVER_MIN_VERSION)
        return cudag__fail_at(err, CUDAG_ENODRIVER, CUDAG__NOPOS,
                              "CUDA driver %d.%d is too old (cudag needs %d.%d "
                              "or newer)",
                              v / 1000, v % 1000 / 10,
                              CUDAG__DRIVER_MIN_VERSION / 1000,
                              CUDAG__DRIVER_MIN_VERSION % 1000 / 10);
    *out = d;
    return CUDAG_OK;
}
