/* fake_cublaslt.h — a cuBLASLt table that runs on the CPU, beside the fake
 * driver (fake_driver.h), for the CPU suites.  Descriptors are checked as
 * the library checks them (attribute ids and sizes, shapes that agree), the
 * heuristic answers with one algorithm and a workspace size the test sets,
 * and a matmul issued on a stream being captured is recorded as a host node
 * that computes, in cuBLASLt's column-major terms, exactly what the
 * descriptors say: so a CPU test can compare a gemm node's output with a
 * row-major reference and catch a wrong mapping.  Every call counts towards
 * the fake driver's fault injection and returns
 * CUBLAS_STATUS_INTERNAL_ERROR when it is the one made to fail. */
#ifndef CUDAG_FAKE_CUBLASLT_H
#define CUDAG_FAKE_CUBLASLT_H

#include "lib/cublaslt.h"
#include "fake_driver.h"
#include "gemm_ref.h"

#include <math.h>

typedef struct fake_lt_state {
    size_t workspace;           /* what the heuristic says the algo needs */
    int no_algo;                /* the heuristic finds nothing */
    long matmuls;               /* cublasLtMatmul calls */
    uint32_t align[4];          /* alignments the last heuristic was given */
} fake_lt_state;

static fake_lt_state FL;

#define FL_INTERNAL 14          /* CUBLAS_STATUS_INTERNAL_ERROR */
#define FL_INVALID 7            /* CUBLAS_STATUS_INVALID_VALUE */
#define FL_ALGO 0xa160u

#define FAKE_LT_CALL(name)                                                     \
    do {                                                                       \
        if (fake_tick(name))                                                   \
            return FL_INTERNAL;                                                \
    } while (0)

typedef struct fl_desc {
    int compute, scale;
    int32_t op[2];              /* TRANSA, TRANSB */
    uint32_t epi;
    const void *bias;
} fl_desc;

typedef struct fl_layout {
    int type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;
    int64_t stride;
} fl_layout;

typedef struct fl_pref {
    uint64_t ws;
    uint32_t align[4];
} fl_pref;

/* What a recorded matmul computes; lives in the host node's blob. */
typedef struct fl_mm {
    fl_desc d;
    fl_layout l[4];             /* A, B, C, D */
    const void *p[4];
    float alpha, beta;
} fl_mm;

/* ---- element conversions ------------------------------------------------- */

static cudag_type fl_type(int lt)
{
    return lt == CUDAG__LT_R_32F   ? CUDAG_TYPE_F32
           : lt == CUDAG__LT_R_16F ? CUDAG_TYPE_F16
                                   : CUDAG_TYPE_BF16;
}

static float fl_load(int lt, const void *base, int64_t i)
{
    return gr_load(fl_type(lt), base, i);
}

/* ---- the computation ----------------------------------------------------- */

/* Column-major, as cuBLASLt: D = epilogue(alpha·op(A)·op(B) + beta·C +
 * bias), per batch. */
static void fl_run(void *arg)
{
    const fl_mm *mm = arg;
    const fl_layout *la = &mm->l[0], *lb = &mm->l[1], *lc = &mm->l[2],
                    *ld = &mm->l[3];
    int64_t m = (int64_t)ld->rows, n = (int64_t)ld->cols;
    int64_t k = mm->d.op[0] ? (int64_t)la->rows : (int64_t)la->cols;
    for (int32_t b = 0; b < ld->batch; b++) {
        int64_t oa = b * la->stride, ob = b * lb->stride, oc = b * lc->stride,
                od = b * ld->stride;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t l = 0; l < k; l++) {
                    int64_t ia = mm->d.op[0] ? l + i * la->ld : i + l * la->ld;
                    int64_t ib = mm->d.op[1] ? j + l * lb->ld : l + j * lb->ld;
                    acc += (double)fl_load(la->type, mm->p[0], oa + ia) *
                           fl_load(lb->type, mm->p[1], ob + ib);
                }
                double v = mm->alpha * acc;
                if (mm->beta != 0.0f)
                    v += mm->beta *
                         fl_load(lc->type, mm->p[2], oc + i + j * lc->ld);
                if (mm->d.epi & CUDAG__LT_EPI_BIAS)
                    v += fl_load(ld->type, mm->d.bias, i);
                v = gr_epilogue(mm->d.epi & CUDAG__LT_EPI_RELU   ? CUDAG_EPILOGUE_RELU
                                : mm->d.epi & CUDAG__LT_EPI_GELU ? CUDAG_EPILOGUE_GELU
                                                                 : CUDAG_EPILOGUE_NONE,
                                v);
                gr_store(fl_type(ld->type), (void *)(uintptr_t)mm->p[3],
                         od + i + j * ld->ld, (float)v);
            }
    }
}

/* ---- the entry points ---------------------------------------------------- */

static size_t fl_GetVersion(void) { return 130100; }
static const char *fl_StatusName(cudag__lt_status s)
{
    switch (s) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case FL_INVALID: return "CUBLAS_STATUS_INVALID_VALUE";
    case FL_INTERNAL: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUDAG__LT_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return NULL;
    }
}
static const char *fl_StatusString(cudag__lt_status s)
{
    return s == FL_INTERNAL ? "injected by the fake" : "fake cuBLASLt error";
}
static cudag__lt_status fl_Create(cudag__lt_handle *h)
{
    FAKE_LT_CALL("cublasLtCreate");
    *h = fake_obj(8);
    return *h ? 0 : 3;
}
static cudag__lt_status fl_Destroy(cudag__lt_handle h)
{
    /* A failed destroy still releases, as the library's would. */
    int ok = fake_drop(h);
    FAKE_LT_CALL("cublasLtDestroy");
    return ok ? 0 : FL_INVALID;
}
static cudag__lt_status fl_DescCreate(cudag__lt_desc *d, int compute,
                                      int scale)
{
    FAKE_LT_CALL("cublasLtMatmulDescCreate");
    if (compute != CUDAG__LT_COMPUTE_32F || scale != CUDAG__LT_R_32F)
        return FL_INVALID;
    fl_desc *x = fake_obj(sizeof *x);
    if (!x)
        return 3;
    x->compute = compute;
    x->scale = scale;
    x->epi = CUDAG__LT_EPI_DEFAULT;
    *d = (cudag__lt_desc)x;
    return 0;
}
static cudag__lt_status fl_DescDestroy(cudag__lt_desc d)
{
    /* A failed destroy still releases, as the library's would. */
    int ok = fake_drop(d);
    FAKE_LT_CALL("cublasLtMatmulDescDestroy");
    return ok ? 0 : FL_INVALID;
}
static cudag__lt_status fl_DescSet(cudag__lt_desc d, int attr,
                                   const void *buf, size_t size)
{
    FAKE_LT_CALL("cublasLtMatmulDescSetAttribute");
    fl_desc *x = (fl_desc *)d;
    switch (attr) {
    case CUDAG__LT_DESC_TRANSA:
    case CUDAG__LT_DESC_TRANSB:
        if (size != sizeof(int32_t))
            return FL_INVALID;
        memcpy(&x->op[attr - CUDAG__LT_DESC_TRANSA], buf, size);
        return 0;
    case CUDAG__LT_DESC_EPILOGUE:
        if (size != sizeof(uint32_t))
            return FL_INVALID;
        memcpy(&x->epi, buf, size);
        return 0;
    case CUDAG__LT_DESC_BIAS_POINTER:
        if (size != sizeof(void *))
            return FL_INVALID;
        memcpy(&x->bias, buf, size);
        return 0;
    default:
        return FL_INVALID;
    }
}
static cudag__lt_status fl_LayoutCreate(cudag__lt_layout *l, int type,
                                        uint64_t rows, uint64_t cols,
                                        int64_t ld)
{
    FAKE_LT_CALL("cublasLtMatrixLayoutCreate");
    /* Column-major: a column is `rows` long. */
    if (ld < (int64_t)rows)
        return FL_INVALID;
    fl_layout *x = fake_obj(sizeof *x);
    if (!x)
        return 3;
    *x = (fl_layout){type, rows, cols, ld, 1, 0};
    *l = (cudag__lt_layout)x;
    return 0;
}
static cudag__lt_status fl_LayoutDestroy(cudag__lt_layout l)
{
    /* A failed destroy still releases, as the library's would. */
    int ok = fake_drop(l);
    FAKE_LT_CALL("cublasLtMatrixLayoutDestroy");
    return ok ? 0 : FL_INVALID;
}
static cudag__lt_status fl_LayoutSet(cudag__lt_layout l, int attr,
                                     const void *buf, size_t size)
{
    FAKE_LT_CALL("cublasLtMatrixLayoutSetAttribute");
    fl_layout *x = (fl_layout *)l;
    if (attr == CUDAG__LT_LAYOUT_BATCH_COUNT && size == sizeof(int32_t))
        memcpy(&x->batch, buf, size);
    else if (attr == CUDAG__LT_LAYOUT_STRIDED_BATCH_OFFSET &&
             size == sizeof(int64_t))
        memcpy(&x->stride, buf, size);
    else
        return FL_INVALID;
    return 0;
}
static cudag__lt_status fl_PrefCreate(cudag__lt_pref *p)
{
    FAKE_LT_CALL("cublasLtMatmulPreferenceCreate");
    *p = fake_obj(sizeof(fl_pref));
    return *p ? 0 : 3;
}
static cudag__lt_status fl_PrefDestroy(cudag__lt_pref p)
{
    /* A failed destroy still releases, as the library's would. */
    int ok = fake_drop(p);
    FAKE_LT_CALL("cublasLtMatmulPreferenceDestroy");
    return ok ? 0 : FL_INVALID;
}
static cudag__lt_status fl_PrefSet(cudag__lt_pref p, int attr, const void *buf,
                                   size_t size)
{
    FAKE_LT_CALL("cublasLtMatmulPreferenceSetAttribute");
    fl_pref *x = (fl_pref *)p;
    if (attr == CUDAG__LT_PREF_MAX_WORKSPACE_BYTES && size == sizeof(uint64_t))
        memcpy(&x->ws, buf, size);
    else if (attr >= CUDAG__LT_PREF_MIN_ALIGNMENT_A_BYTES &&
             attr <= CUDAG__LT_PREF_MIN_ALIGNMENT_D_BYTES &&
             size == sizeof(uint32_t))
        memcpy(&x->align[attr - CUDAG__LT_PREF_MIN_ALIGNMENT_A_BYTES], buf,
               size);
    else
        return FL_INVALID;
    return 0;
}

/* The shapes agree as cuBLASLt requires: op(A) is m×k, op(B) k×n, C and D
 * m×n, A and B of one type, C of D's, batches alike. */
static int fl_shapes_agree(const fl_desc *d, const fl_layout *const l[4])
{
    uint64_t am = d->op[0] ? l[0]->cols : l[0]->rows;
    uint64_t ak = d->op[0] ? l[0]->rows : l[0]->cols;
    uint64_t bk = d->op[1] ? l[1]->cols : l[1]->rows;
    uint64_t bn = d->op[1] ? l[1]->rows : l[1]->cols;
    return am == l[3]->rows && bn == l[3]->cols && ak == bk &&
           l[2]->rows == l[3]->rows && l[2]->cols == l[3]->cols &&
           l[0]->type == l[1]->type && l[2]->type == l[3]->type &&
           l[0]->batch == l[3]->batch && l[1]->batch == l[3]->batch &&
           l[2]->batch == l[3]->batch;
}

static cudag__lt_status fl_Heuristic(cudag__lt_handle h, cudag__lt_desc d,
                                     cudag__lt_layout a, cudag__lt_layout b,
                                     cudag__lt_layout c, cudag__lt_layout dl,
                                     cudag__lt_pref p, int requested,
                                     cudag__lt_heur *res, int *returned)
{
    (void)h;
    FAKE_LT_CALL("cublasLtMatmulAlgoGetHeuristic");
    const fl_layout *l[4] = {(const fl_layout *)a, (const fl_layout *)b,
                             (const fl_layout *)c, (const fl_layout *)dl};
    *returned = 0;
    if (requested < 1 || !fl_shapes_agree((const fl_desc *)d, l))
        return FL_INVALID;
    const fl_pref *pr = (const fl_pref *)p;
    memcpy(FL.align, pr->align, sizeof FL.align);
    if (FL.no_algo)
        return 0;
    memset(res, 0, sizeof *res);
    res->algo.data[0] = FL_ALGO;
    res->workspace = FL.workspace <= pr->ws ? FL.workspace : 0;
    *returned = 1;
    return 0;
}

static cudag__lt_status fl_Matmul(cudag__lt_handle h, cudag__lt_desc d,
                                  const void *alpha, const void *a,
                                  cudag__lt_layout al, const void *b,
                                  cudag__lt_layout bl, const void *beta,
                                  const void *c, cudag__lt_layout cl, void *dp,
                                  cudag__lt_layout dl,
                                  const cudag__lt_algo *algo, void *ws,
                                  size_t wsbytes, void *stream)
{
    (void)h;
    FAKE_LT_CALL("cublasLtMatmul");
    FL.matmuls++;
    if (!algo || algo->data[0] != FL_ALGO || wsbytes < FL.workspace ||
        (FL.workspace && !ws))
        return FL_INVALID;
    fl_mm mm;
    memset(&mm, 0, sizeof mm);
    mm.d = *(const fl_desc *)d;
    const cudag__lt_layout ls[4] = {al, bl, cl, dl};
    for (int i = 0; i < 4; i++)
        mm.l[i] = *(const fl_layout *)ls[i];
    const fl_layout *l[4] = {&mm.l[0], &mm.l[1], &mm.l[2], &mm.l[3]};
    if (!fl_shapes_agree(&mm.d, l))
        return FL_INVALID;
    mm.p[0] = a, mm.p[1] = b, mm.p[2] = c, mm.p[3] = dp;
    memcpy(&mm.alpha, alpha, sizeof(float));
    memcpy(&mm.beta, beta, sizeof(float));
    if (F.capture_stream && (CUstream)stream == F.capture_stream &&
        F.capture_broken)
        return 13; /* CUBLAS_STATUS_EXECUTION_FAILED: a launch failed */
    fake_node *rec = fake_record((CUstream)stream, CU_GRAPH_NODE_TYPE_HOST);
    if (!rec) {
        fl_run(&mm);
        return 0;
    }
    rec->host = fl_run;
    rec->blob_arg = 1;
    memcpy(rec->blob, &mm, sizeof mm);
    return 0;
}

static const cudag__lt fake_lt_table = {
    .cublasLtGetVersion = fl_GetVersion,
    .cublasLtGetStatusName = fl_StatusName,
    .cublasLtGetStatusString = fl_StatusString,
    .cublasLtCreate = fl_Create,
    .cublasLtDestroy = fl_Destroy,
    .cublasLtMatmulDescCreate = fl_DescCreate,
    .cublasLtMatmulDescDestroy = fl_DescDestroy,
    .cublasLtMatmulDescSetAttribute = fl_DescSet,
    .cublasLtMatrixLayoutCreate = fl_LayoutCreate,
    .cublasLtMatrixLayoutDestroy = fl_LayoutDestroy,
    .cublasLtMatrixLayoutSetAttribute = fl_LayoutSet,
    .cublasLtMatmulPreferenceCreate = fl_PrefCreate,
    .cublasLtMatmulPreferenceDestroy = fl_PrefDestroy,
    .cublasLtMatmulPreferenceSetAttribute = fl_PrefSet,
    .cublasLtMatmulAlgoGetHeuristic = fl_Heuristic,
    .cublasLtMatmul = fl_Matmul,
};

/* Resets the fake driver (fake_reset) and this fake, and installs both. */
CUDAG__UNUSED static void fake_lt_reset(void)
{
    fake_reset();
    memset(&FL, 0, sizeof FL);
    FL.workspace = 4096;
    cudag__cublaslt_override(&fake_lt_table);
}

#endif /* CUDAG_FAKE_CUBLASLT_H */
