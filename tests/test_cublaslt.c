/* test_cublaslt.c — opening cuBLASLt at run time: the real library where the
 * machine has one (it needs no GPU to open), a missing or wrong library as
 * one sentence naming it, the process-wide table forced to a path, and how
 * cuBLASLt failures read. */
#include "common.h"
#include "cudag.h"
#include "base/diag.h"
#include "lib/cublaslt.h"

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cublaslt_opens_the_real_library(void **state)
{
    (void)state;
    cudag__lt t;
    cudag_error e;
    if (cudag__cublaslt_open(CUDAG__LT_SONAME, &t, &e) != CUDAG_OK) {
        /* Only a machine without cuBLAS gets here; say so. */
        print_message("skipped: %s\n", e.message);
        skip();
    }
    assert_int_equal(t.cublasLtGetVersion() / 10000, CUDAG__LT_MAJOR);
    /* The declared constants agree with the library's own names. */
    assert_string_equal(t.cublasLtGetStatusName(CUDAG__LT_SUCCESS),
                        "CUBLAS_STATUS_SUCCESS");
    assert_string_equal(t.cublasLtGetStatusName(CUDAG__LT_NOT_SUPPORTED),
                        "CUBLAS_STATUS_NOT_SUPPORTED");
    /* A descriptor and a layout need no device: the prototypes declared by
     * the project call into the real code with the right arguments. */
    cudag__lt_desc d = NULL;
    assert_int_equal(t.cublasLtMatmulDescCreate(&d, CUDAG__LT_COMPUTE_32F,
                                                CUDAG__LT_R_32F),
                     CUDAG__LT_SUCCESS);
    int op = CUDAG__LT_OP_T;
    assert_int_equal(t.cublasLtMatmulDescSetAttribute(
                         d, CUDAG__LT_DESC_TRANSA, &op, sizeof op),
                     CUDAG__LT_SUCCESS);
    /* A wrong size for an attribute is refused: the ids are real. */
    assert_int_not_equal(t.cublasLtMatmulDescSetAttribute(
                             d, CUDAG__LT_DESC_TRANSA, &op, 1),
                         CUDAG__LT_SUCCESS);
    assert_int_equal(t.cublasLtMatmulDescDestroy(d), CUDAG__LT_SUCCESS);
    cudag__lt_layout l = NULL;
    assert_int_equal(
        t.cublasLtMatrixLayoutCreate(&l, CUDAG__LT_R_16BF, 64, 32, 64),
        CUDAG__LT_SUCCESS);
    int32_t batch = 4;
    assert_int_equal(t.cublasLtMatrixLayoutSetAttribute(
                         l, CUDAG__LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
                     CUDAG__LT_SUCCESS);
    assert_int_equal(t.cublasLtMatrixLayoutDestroy(l), CUDAG__LT_SUCCESS);
    cudag__lt_pref p = NULL;
    assert_int_equal(t.cublasLtMatmulPreferenceCreate(&p), CUDAG__LT_SUCCESS);
    uint64_t ws = 1 << 20;
    assert_int_equal(t.cublasLtMatmulPreferenceSetAttribute(
                         p, CUDAG__LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                     CUDAG__LT_SUCCESS);
    assert_int_equal(t.cublasLtMatmulPreferenceDestroy(p), CUDAG__LT_SUCCESS);
}

static void cublaslt_missing_is_one_sentence_naming_it(void **state)
{
    (void)state;
    cudag__lt t;
    cudag_error e;
    assert_int_equal(
        cudag__cublaslt_open("/nonexistent/libcublasLt.so.13", &t, &e),
        CUDAG_ENODRIVER);
    assert_string_equal(e.message,
                        "cuBLASLt not found (libcublasLt.so.13): "
                        "/nonexistent/libcublasLt.so.13: cannot open shared "
                        "object file: No such file or directory");
    assert_null(t.cublasLtMatmul);
}

static void cublaslt_refuses_another_library(void **state)
{
    (void)state;
    cudag__lt t;
    cudag_error e;
    assert_int_equal(cudag__cublaslt_open("libm.so.6", &t, &e),
                     CUDAG_ENODRIVER);
    assert_string_equal(e.message, "cuBLASLt at libm.so.6 has no "
                                   "cublasLtGetVersion (cudag needs cuBLASLt "
                                   "13)");
}

/* In a child process: the process-wide table forced to a missing path,
 * asked for twice; writes both statuses, whether the table is NULL and the
 * message. */
static void forced_missing(void *arg, char *out, size_t cap)
{
    (void)arg;
    setenv("CUDAG_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    const cudag__lt *lt = (const cudag__lt *)1;
    cudag_error e;
    int rc = cudag__cublaslt(&lt, &e);
    /* Twice: the failure is remembered. */
    int rc2 = cudag__cublaslt(&lt, &e);
    snprintf(out, cap, "%d %d %d %s", rc, rc2, lt == NULL, e.message);
}

/* The process-wide table opens once, so a forced path is tried in a child
 * process of its own. */
static void cublaslt_forced_path_names_the_variable(void **state)
{
    (void)state;
    char got[1200];
    tchild(forced_missing, NULL, got, sizeof got);
    char want[1200];
    snprintf(want, sizeof want,
             "%d %d 1 CUDAG_CUBLASLT=/nonexistent/libcublasLt.so.13: cuBLASLt "
             "not found (libcublasLt.so.13): /nonexistent/libcublasLt.so.13: "
             "cannot open shared object file: No such file or directory",
             CUDAG_ENODRIVER, CUDAG_ENODRIVER);
    assert_string_equal(got, want);
}

static const char *fake_name(cudag__lt_status s)
{
    return s == CUDAG__LT_NOT_SUPPORTED ? "CUBLAS_STATUS_NOT_SUPPORTED" : NULL;
}
static const char *fake_string(cudag__lt_status s)
{
    (void)s;
    return "the operation is not supported";
}

static void cublaslt_failure_names_call_status_and_position(void **state)
{
    (void)state;
    cudag__lt t;
    memset(&t, 0, sizeof t);
    t.cublasLtGetStatusName = fake_name;
    t.cublasLtGetStatusString = fake_string;
    cudag_error e;
    cudag__pos pos = {"g.yaml", 7, 3};
    assert_int_equal(cudag__lt_fail(&e, &t, CUDAG__LT_NOT_SUPPORTED, pos,
                                    "cublasLtMatmul for node '%s'", "up"),
                     CUDAG_ECUDA);
    char buf[2048];
    cudag_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "g.yaml:7:3: error: cublasLtMatmul for node "
                             "'up': CUBLAS_STATUS_NOT_SUPPORTED (the "
                             "operation is not supported)");
    assert_int_equal(e.cuda_result, CUDAG__LT_NOT_SUPPORTED);
    /* A status the library cannot name still reads sensibly. */
    cudag__lt_fail(&e, &t, 99, CUDAG__NOPOS, "cublasLtCreate");
    assert_string_equal(e.message, "cublasLtCreate: CUBLAS_STATUS_UNKNOWN (the "
                                   "operation is not supported)");
    assert_int_equal(cudag__lt_fail(NULL, &t, 1, pos, "x"), CUDAG_ECUDA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cublaslt_opens_the_real_library),
        cmocka_unit_test(cublaslt_missing_is_one_sentence_naming_it),
        cmocka_unit_test(cublaslt_refuses_another_library),
        cmocka_unit_test(cublaslt_forced_path_names_the_variable),
        cmocka_unit_test(cublaslt_failure_names_call_status_and_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
