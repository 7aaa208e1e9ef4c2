/* test_driver.c — loading the driver: the real libcuda.so.1 missing (the CI
 * machine), and through the fake table a machine without a device, a driver
 * too old, cuInit failing; how driver failures read; the exec API's
 * argument checks that need no device. */
#include "common.h"
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fake_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* True when this machine has a loadable driver (then the missing-driver
 * tests have nothing to test). */
static bool have_driver(void)
{
    const cudag__drv *d;
    cudag_error e;
    cudag__driver_override(NULL);
    int rc = cudag__driver(&d, &e);
    return rc == CUDAG_OK || strstr(e.message, "no CUDA driver found") == NULL;
}

static cudag_graph *tiny_graph(void)
{
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(cudag_graph_create("tiny", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "x", CUDAG_TYPE_F32, 4, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_OK);
    return g;
}

static void driver_missing_is_one_clear_sentence(void **state)
{
    (void)state;
    if (have_driver())
        skip();
    const cudag__drv *d = (const cudag__drv *)1;
    cudag_error e;
    /* Twice: the failure is remembered, not retried differently. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cudag__driver(&d, &e), CUDAG_ENODRIVER);
        assert_null(d);
        assert_int_equal(e.code, CUDAG_ENODRIVER);
        assert_int_equal(strncmp(e.message,
                                 "no CUDA driver found (libcuda.so.1): ", 37),
                         0);
        assert_non_null(strstr(e.message + 37, "libcuda.so.1"));
        assert_int_equal(e.line, 0);
    }
    cudag_graph *g = tiny_graph();
    cudag_exec *x = (cudag_exec *)1;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENODRIVER);
    assert_null(x);
    assert_non_null(strstr(e.message, "no CUDA driver found (libcuda.so.1)"));
    cudag_graph_destroy(g);
}

static void driver_missing_run_exits_3(void **state)
{
    (void)state;
    const char *exe = getenv("CUDAG_EXE");
    if (!exe || have_driver())
        skip();
    char path[] = "/tmp/cudag_driver_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char yaml[] = "cudag: 1\n"
                               "buffers: {x: {type: f32, count: 4}}\n"
                               "nodes: {z: {memset: x, value: 0}}\n";
    assert_int_equal(write(fd, yaml, sizeof yaml - 1), (ssize_t)sizeof yaml - 1);
    close(fd);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' run '%s' 2>&1", exe, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    unlink(path);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    tassert_contains(out, "error: no CUDA driver found (libcuda.so.1): ",
                     __FILE__, __LINE__);
    /* One sentence: a single line of output. */
    assert_int_equal(strchr(out, '\n'), out + n - 1);
}

static void driver_reports_missing_device(void **state)
{
    (void)state;
    fake_reset();
    F.init_result = CUDA_ERROR_NO_DEVICE;
    const cudag__drv *d;
    cudag_error e;
    assert_int_equal(cudag__driver(&d, &e), CUDAG_ENODRIVER);
    assert_null(d);
    assert_string_equal(e.message, "no CUDA device found: cuInit: "
                                   "CUDA_ERROR_NO_DEVICE (fake driver error)");
    assert_int_equal(e.cuda_result, CUDA_ERROR_NO_DEVICE);
    cudag_graph *g = tiny_graph();
    cudag_exec *x;
    assert_int_equal(cudag_instantiate(g, NULL, &x, &e), CUDAG_ENODRIVER);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static void driver_refuses_old_driver(void **state)
{
    (void)state;
    fake_reset();
    F.version = 12020;
    const cudag__drv *d;
    cudag_error e;
    assert_int_equal(cudag__driver(&d, &e), CUDAG_ENODRIVER);
    assert_string_equal(e.message,
                        "CUDA driver 12.2 is too old (cudag needs 12.4 or newer)");
    F.version = 12040;
    assert_int_equal(cudag__driver(&d, &e), CUDAG_OK);
    assert_ptr_equal(d, &fake_table);
}

static void driver_init_failure_is_a_cuda_error(void **state)
{
    (void)state;
    fake_reset();
    F.init_result = CUDA_ERROR_UNKNOWN;
    const cudag__drv *d;
    cudag_error e;
    assert_int_equal(cudag__driver(&d, &e), CUDAG_ECUDA);
    assert_string_equal(e.message, "cuInit: CUDA_ERROR_UNKNOWN (unknown error "
                                   "(injected by the fake))");
    assert_int_equal(e.cuda_result, CUDA_ERROR_UNKNOWN);
}

static void driver_failure_names_call_code_and_position(void **state)
{
    (void)state;
    cudag_error e;
    cudag__pos pos = {"g.yaml", 12, 5};
    assert_int_equal(cudag__cu_fail(&e, &fake_table, CUDA_ERROR_INVALID_VALUE,
                                    pos, "cuGraphAddKernelNode for node '%s'",
                                    "norm"),
                     CUDAG_ECUDA);
    assert_int_equal(e.code, CUDAG_ECUDA);
    assert_int_equal(e.cuda_result, CUDA_ERROR_INVALID_VALUE);
    char buf[2048];
    cudag_error_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "g.yaml:12:5: error: cuGraphAddKernelNode for "
                             "node 'norm': CUDA_ERROR_INVALID_VALUE (fake "
                             "driver error)");
    /* A code the driver cannot name still reads sensibly. */
    cudag__cu_fail(&e, &fake_table, (CUresult)12345, CUDAG__NOPOS, "cuX");
    assert_string_equal(e.message,
                        "cuX: CUDA_ERROR_UNKNOWN (fake driver error)");
    assert_int_equal(cudag__cu_fail(NULL, NULL, CUDA_ERROR_UNKNOWN, pos, "x"),
                     CUDAG_ECUDA);
}

static void exec_api_rejects_null_handles(void **state)
{
    (void)state;
    cudag_error e;
    char buf[8];
    cudag_arg a = cudag_arg_int(1);
    uint64_t p;
    assert_int_equal(cudag_exec_launch(NULL, 1, &e), CUDAG_EINVAL);
    assert_non_null(strstr(e.message, "cudag_exec_launch: exec is NULL"));
    assert_int_equal(cudag_exec_sync(NULL, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_read(NULL, "x", buf, 8, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_write(NULL, "x", buf, 8, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_set_arg(NULL, "n", 0, &a, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_rebind_buffer(NULL, "x", 1, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_set_var(NULL, "N", 1, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_buffer(NULL, "x", &p, &p, &e), CUDAG_EINVAL);
    assert_int_equal(cudag_exec_get_stats(NULL, NULL), CUDAG_EINVAL);
    assert_null(cudag_exec_stream(NULL));
    cudag_exec_destroy(NULL);
}

static int teardown(void **state)
{
    (void)state;
    fake_reset();
    cudag__driver_override(NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(driver_missing_is_one_clear_sentence),
        cmocka_unit_test(driver_missing_run_exits_3),
        cmocka_unit_test_teardown(driver_reports_missing_device, teardown),
        cmocka_unit_test_teardown(driver_refuses_old_driver, teardown),
        cmocka_unit_test_teardown(driver_init_failure_is_a_cuda_error, teardown),
        cmocka_unit_test(driver_failure_names_call_code_and_position),
        cmocka_unit_test(exec_api_rejects_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
