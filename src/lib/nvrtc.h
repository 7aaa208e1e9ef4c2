/* nvrtc.h — NVRTC, CUDA's run-time compiler, as one table of entry points
 * opened at run time from libnvrtc.so.13 like libcuda: the library neither
 * links it nor needs its header to build, and graphs load, check and run
 * without it unless they hold CUDA source modules. */
#ifndef CUDAG_NVRTC_H
#define CUDAG_NVRTC_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>

/* The few NVRTC types the project uses, declared here so that a machine
 * without nvrtc.h builds.  nvrtcResult is an int-sized enum in nvrtc.h; 0 is
 * NVRTC_SUCCESS there and here. */
typedef struct _nvrtcProgram *cudag__nvrtc_program;
typedef int cudag__nvrtc_result;
#define CUDAG__NVRTC_SUCCESS 0
#define CUDAG__NVRTC_COMPILATION 6      /* NVRTC_ERROR_COMPILATION */

/* The file opened, by its soname: NVRTC keeps its ABI within a major
 * version, so 13.x libraries all answer to it. */
#define CUDAG__NVRTC_SONAME "libnvrtc.so.13"

/* Every entry point used: name, return type, parameter list. */
#define CUDAG__NVRTC_FUNCS(X)                                                  \
    X(nvrtcGetErrorString, const char *, (cudag__nvrtc_result))                \
    X(nvrtcVersion, cudag__nvrtc_result, (int *, int *))                       \
    X(nvrtcCreateProgram, cudag__nvrtc_result,                                 \
      (cudag__nvrtc_program *, const char *, const char *, int,                \
       const char *const *, const char *const *))                              \
    X(nvrtcDestroyProgram, cudag__nvrtc_result, (cudag__nvrtc_program *))      \
    X(nvrtcAddNameExpression, cudag__nvrtc_result,                             \
      (cudag__nvrtc_program, const char *))                                    \
    X(nvrtcCompileProgram, cudag__nvrtc_result,                                \
      (cudag__nvrtc_program, int, const char *const *))                        \
    X(nvrtcGetProgramLogSize, cudag__nvrtc_result,                             \
      (cudag__nvrtc_program, size_t *))                                        \
    X(nvrtcGetProgramLog, cudag__nvrtc_result, (cudag__nvrtc_program, char *)) \
    X(nvrtcGetCUBINSize, cudag__nvrtc_result, (cudag__nvrtc_program, size_t *)) \
    X(nvrtcGetCUBIN, cudag__nvrtc_result, (cudag__nvrtc_program, char *))      \
    X(nvrtcGetPTXSize, cudag__nvrtc_result, (cudag__nvrtc_program, size_t *))  \
    X(nvrtcGetPTX, cudag__nvrtc_result, (cudag__nvrtc_program, char *))        \
    X(nvrtcGetLoweredName, cudag__nvrtc_result,                                \
      (cudag__nvrtc_program, const char *, const char **))

typedef struct cudag__rtc {
#define CUDAG__NVRTC_FIELD(name, ret, args) ret(*name) args;
    CUDAG__NVRTC_FUNCS(CUDAG__NVRTC_FIELD)
#undef CUDAG__NVRTC_FIELD
    int major, minor;           /* nvrtcVersion, read once */
    /* The toolkit's include directory next to the library (cuda_fp16.h and
     * friends, which NVRTC does not carry), or "" when none was found. */
    char include_dir[512];
    /* Its cccl directory (libcu++, CUB, Thrust: <cuda/std/…>, <cub/…>,
     * which CUDA 13 keeps under include/cccl and nvcc searches by default;
     * <cooperative_groups.h> includes them), or "" when there is none. */
    char cccl_dir[512];
} cudag__rtc;

/*
 * Where libnvrtc.so.13 is, found without opening it (so that a cached
 * compile needs no dlopen): $CUDAG_NVRTC (a library path, taken as it is),
 * $CUDA_HOME/lib64 and /lib, $CUDA_PATH likewise,
 * /usr/local/cuda/lib64, NVIDIA's pip wheels (nvidia/cu13/lib,
 * nvidia/cuda_nvrtc/lib) under $VIRTUAL_ENV, $CONDA_PREFIX and the usual
 * site-packages, then $LD_LIBRARY_PATH and the system library directories.
 * Writes the path into buf and returns true; false (buf = "") when no
 * candidate exists, in which case loading still tries the dynamic linker's
 * own search.
 */
bool cudag__nvrtc_locate(char *buf, size_t size);

/*
 * Returns the NVRTC table in *out, opening the library on the first call
 * (once per process, thread-safe).  Errors: CUDAG_ENOTSUP "NVRTC not found
 * (libnvrtc.so.13): <dlerror>; …" naming the fixes (install the toolkit or
 * the nvidia-cuda-nvrtc wheel, set CUDA_HOME, or precompile with nvcc and
 * list the fatbin), or a library missing an entry point.  On error *out is
 * NULL.  The table lives as long as the process.
 */
int cudag__nvrtc(const cudag__rtc **out, cudag_error *err);

#ifdef CUDAG_TESTING
/* Test seam: while t is not NULL, cudag__nvrtc() hands out t instead of the
 * real library.  The table must outlive its use.  Not thread-safe. */
void cudag__nvrtc_override(const cudag__rtc *t);
#endif

#endif /* CUDAG_NVRTC_H */
