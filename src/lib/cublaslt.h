/* cublaslt.h — cuBLASLt as one table of entry points, opened at run time
 * from libcublasLt.so.13 (the library never links it), with the few types,
 * constants and prototypes cudag uses declared here, so that building cudag
 * needs no cublasLt.h. */
#ifndef CUDAG_CUBLASLT_H
#define CUDAG_CUBLASLT_H

#include "cudag.h"
#include "base/attrs.h"
#include "base/diag.h"

#include <stddef.h>
#include <stdint.h>

/* The library's major version and file: the soname pins the ABI of every
 * declaration below (cuBLASLt keeps it within a major version). */
#define CUDAG__LT_MAJOR 13
#define CUDAG__LT_SONAME "libcublasLt.so.13"

/*
 * The types, as cublasLt.h declares them.  Enumerations are C enums (int);
 * handles are pointers to opaque structs; the algorithm and the heuristic's
 * result are plain structs whose layout is part of the ABI.
 */
typedef int cudag__lt_status;                   /* cublasStatus_t */
typedef struct cudag__lt_ctx *cudag__lt_handle; /* cublasLtHandle_t */
typedef struct cudag__lt_desc *cudag__lt_desc;  /* cublasLtMatmulDesc_t */
typedef struct cudag__lt_layout *cudag__lt_layout; /* …MatrixLayout_t */
typedef struct cudag__lt_pref *cudag__lt_pref;  /* …MatmulPreference_t */
typedef struct cudag__lt_algo {                 /* cublasLtMatmulAlgo_t */
    uint64_t data[8];
} cudag__lt_algo;
typedef struct cudag__lt_heur { /* cublasLtMatmulHeuristicResult_t */
    cudag__lt_algo algo;
    size_t workspace;           /* workspaceSize */
    cudag__lt_status state;
    float waves;                /* wavesCount */
    int reserved[4];
} cudag__lt_heur;

/* The values cudag passes (cublas_api.h, library_types.h, cublasLt.h). */
enum {
    CUDAG__LT_SUCCESS = 0,              /* CUBLAS_STATUS_SUCCESS */
    CUDAG__LT_NOT_SUPPORTED = 15,       /* CUBLAS_STATUS_NOT_SUPPORTED */
    CUDAG__LT_COMPUTE_32F = 68,         /* CUBLAS_COMPUTE_32F */
    CUDAG__LT_R_32F = 0,                /* CUDA_R_32F */
    CUDAG__LT_R_16F = 2,                /* CUDA_R_16F */
    CUDAG__LT_R_16BF = 14,              /* CUDA_R_16BF */
    CUDAG__LT_OP_N = 0,                 /* CUBLAS_OP_N */
    CUDAG__LT_OP_T = 1,                 /* CUBLAS_OP_T */
    /* cublasLtMatmulDescAttributes_t */
    CUDAG__LT_DESC_TRANSA = 3,
    CUDAG__LT_DESC_TRANSB = 4,
    CUDAG__LT_DESC_EPILOGUE = 7,
    CUDAG__LT_DESC_BIAS_POINTER = 8,
    CUDAG__LT_DESC_BIAS_BATCH_STRIDE = 10,
    CUDAG__LT_DESC_BIAS_DATA_TYPE = 26,
    /* cublasLtEpilogue_t */
    CUDAG__LT_EPI_DEFAULT = 1,
    CUDAG__LT_EPI_RELU = 2,
    CUDAG__LT_EPI_BIAS = 4,
    CUDAG__LT_EPI_GELU = 32,
    /* cublasLtMatrixLayoutAttribute_t */
    CUDAG__LT_LAYOUT_BATCH_COUNT = 5,
    CUDAG__LT_LAYOUT_STRIDED_BATCH_OFFSET = 6,
    /* cublasLtMatmulPreferenceAttributes_t */
    CUDAG__LT_PREF_MAX_WORKSPACE_BYTES = 1,
    CUDAG__LT_PREF_MIN_ALIGNMENT_A_BYTES = 5,
    CUDAG__LT_PREF_MIN_ALIGNMENT_B_BYTES = 6,
    CUDAG__LT_PREF_MIN_ALIGNMENT_C_BYTES = 7,
    CUDAG__LT_PREF_MIN_ALIGNMENT_D_BYTES = 8
};

/*
 * Every entry point cudag uses: return type, name, parameters.  The stream
 * is a cudaStream_t, which is a CUstream: the same pointer.
 */
#define CUDAG__CUBLASLT_FUNCS(X)                                               \
    X(size_t, cublasLtGetVersion, (void))                                      \
    X(const char *, cublasLtGetStatusName, (cudag__lt_status s))               \
    X(const char *, cublasLtGetStatusString, (cudag__lt_status s))             \
    X(cudag__lt_status, cublasLtCreate, (cudag__lt_handle * h))                \
    X(cudag__lt_status, cublasLtDestroy, (cudag__lt_handle h))                 \
    X(cudag__lt_status, cublasLtMatmulDescCreate,                              \
      (cudag__lt_desc * d, int compute, int scale))                            \
    X(cudag__lt_status, cublasLtMatmulDescDestroy, (cudag__lt_desc d))         \
    X(cudag__lt_status, cublasLtMatmulDescSetAttribute,                        \
      (cudag__lt_desc d, int attr, const void *buf, size_t size))              \
    X(cudag__lt_status, cublasLtMatrixLayoutCreate,                            \
      (cudag__lt_layout * l, int type, uint64_t rows, uint64_t cols,           \
       int64_t ld))                                                            \
    X(cudag__lt_status, cublasLtMatrixLayoutDestroy, (cudag__lt_layout l))     \
    X(cudag__lt_status, cublasLtMatrixLayoutSetAttribute,                      \
      (cudag__lt_layout l, int attr, const void *buf, size_t size))            \
    X(cudag__lt_status, cublasLtMatmulPreferenceCreate, (cudag__lt_pref * p))  \
    X(cudag__lt_status, cublasLtMatmulPreferenceDestroy, (cudag__lt_pref p))   \
    X(cudag__lt_status, cublasLtMatmulPreferenceSetAttribute,                  \
      (cudag__lt_pref p, int attr, const void *buf, size_t size))              \
    X(cudag__lt_status, cublasLtMatmulAlgoGetHeuristic,                        \
      (cudag__lt_handle h, cudag__lt_desc d, cudag__lt_layout a,               \
       cudag__lt_layout b, cudag__lt_layout c, cudag__lt_layout dl,            \
       cudag__lt_pref p, int requested, cudag__lt_heur *results,               \
       int *returned))                                                         \
    X(cudag__lt_status, cublasLtMatmul,                                        \
      (cudag__lt_handle h, cudag__lt_desc d, const void *alpha,                \
       const void *a, cudag__lt_layout al, const void *b,                      \
       cudag__lt_layout bl, const void *beta, const void *c,                   \
       cudag__lt_layout cl, void *dp, cudag__lt_layout dl,                     \
       const cudag__lt_algo *algo, void *ws, size_t wsbytes, void *stream))

/* The table.  Fields carry the functions' cuBLASLt names. */
typedef struct cudag__lt {
#define CUDAG__LT_FIELD(ret, name, params) ret(*name) params;
    CUDAG__CUBLASLT_FUNCS(CUDAG__LT_FIELD)
#undef CUDAG__LT_FIELD
} cudag__lt;

/*
 * Returns the cuBLASLt table in *out, opening the library on the first call
 * (once per process, thread-safe).  Where it looks, in order: the path in
 * the environment variable CUDAG_CUBLASLT if set (and nothing else); the
 * dynamic loader's search (LD_LIBRARY_PATH, the ld.so cache); the lib64 and
 * lib directories of $CUDA_HOME, $CUDA_PATH and the toolkit cudag was built
 * against; the pip wheels' nvidia/cu13/lib and nvidia/cublas/lib under the
 * site-packages of $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local and
 * /usr.  Errors: CUDAG_ENODRIVER with "cuBLASLt not found
 * (libcublasLt.so.13): …" naming where it looked, or naming the entry point
 * or version that is wrong.  On error *out is NULL.  The table lives as long
 * as the process.
 */
int cudag__cublaslt(const cudag__lt **out, cudag_error *err);

/*
 * Opens the cuBLASLt at exactly `path` (a file name the loader searches, or
 * a path) into *t without touching the process-wide table; the same checks
 * and messages as cudag__cublaslt().  The library stays open.  For tests and
 * for `cudag__cublaslt` itself.
 */
int cudag__cublaslt_open(const char *path, cudag__lt *t, cudag_error *err);

/*
 * Fills err for a failed cuBLASLt call and returns CUDAG_ECUDA: the
 * formatted text (the call and what it was for), then the status's name and
 * description from the library; err->cuda_result = the status.
 */
int cudag__lt_fail(cudag_error *err, const cudag__lt *lt, cudag__lt_status s,
                   cudag__pos pos, const char *fmt, ...) CUDAG__PRINTF(5, 6);

#ifdef CUDAG_TESTING
/* Test seam: while t is not NULL, cudag__cublaslt() hands out t instead of
 * the real library.  Not thread-safe; the table must outlive its use. */
void cudag__cublaslt_override(const cudag__lt *t);
#endif

#endif /* CUDAG_CUBLASLT_H */
