/* test_gpu_faults.c — the driver-fault sweep of test_build.c, for real: the
 * library runs on the real driver through a table (real_faults.h, generated
 * from src/lib/driver.h) that makes the n-th call fail, for every n along
 * instantiate, launch, argument and variable updates, sync, read and
 * destroy.  Each failure must come back as an error naming the driver's
 * result (or, in destroy, be survived), and afterwards the device must have
 * exactly the free memory it had before: nothing leaks on the GPU either.
 * Twice: a plain graph, and one with a while node (condition handles, body
 * graphs, cudag_exec_set_condition). */
#include "gpu_common.h"

#include "real_faults.h"

static const char yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 4096}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  y: {type: f32, count: N}\n"
    "  z: {type: f32, count: N, init: 0}\n"
    "nodes:\n"
    "  clear: {memset: z, value: 0}\n"
    "  a: {kernel: scale_f32, grid: 4, block: 256, args: [x, y, 2.0, N]}\n"
    "  b: {kernel: add_f32, grid: 4, block: 256, args: [x, y, z, N],\n"
    "      after: [{a: programmatic}, clear]}\n"
    "  keep: {memcpy: y, from: z, after: b}\n";

static const char cond_yaml[] =
    "cudag: 1\n"
    "include: cudag_kernels.yaml\n"
    "vars: {N: 4096}\n"
    "buffers:\n"
    "  x: {type: f32, count: N, init: random}\n"
    "  y: {type: f32, count: N}\n"
    "  z: {type: f32, count: N, init: 0}\n"
    "  it: {type: i32, count: 1}\n"
    "conditions: {more: {default: 1}}\n"
    "nodes:\n"
    "  reset: {memset: it, value: 0}\n"
    "  a: {kernel: scale_f32, grid: 4, block: 256, args: [x, y, 2.0, N]}\n"
    "  loop:\n"
    "    while: more\n"
    "    after: [reset, a]\n"
    "    body:\n"
    "      s: {kernel: scale_f32, grid: 4, block: 256, args: [y, y, 0.5, N]}\n"
    "      n: {kernel: cond_count_i32, grid: 1, block: 32, args: [it, 3, more],\n"
    "          after: {s: programmatic}}\n"
    "  keep: {memcpy: z, from: y, after: loop}\n";

/* Everything a host program does with an exec, stopping at the first error
 * (after which the exec is still destroyed, as a program would). */
static int lifecycle(const cudag_graph *g, cudag_error *err)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    cudag_exec *x = NULL;
    int rc = cudag_instantiate(g, &o, &x, err);
    if (rc == CUDAG_OK)
        rc = cudag_exec_launch(x, 2, err);
    cudag_arg three = cudag_arg_float(3.0);
    if (rc == CUDAG_OK)
        rc = cudag_exec_set_arg(x, "a", 2, &three, err);
    if (rc == CUDAG_OK)
        rc = cudag_exec_set_var(x, "N", 4096, err);
    if (rc == CUDAG_OK && g->nconds)
        rc = cudag_exec_set_condition(x, "more", 2, err);
    if (rc == CUDAG_OK)
        rc = cudag_exec_launch(x, 1, err);
    if (rc == CUDAG_OK)
        rc = cudag_exec_sync(x, err);
    float z[16];
    uint64_t dptr, bytes;
    if (rc == CUDAG_OK)
        rc = cudag_exec_buffer(x, "z", &dptr, &bytes, err);
    if (rc == CUDAG_OK) {
        float *all = malloc(bytes);
        assert_non_null(all);
        rc = cudag_exec_read(x, "z", all, bytes, err);
        memcpy(z, all, sizeof z);
        free(all);
    }
    cudag_exec_destroy(x);
    return rc;
}

static size_t free_memory(CUcontext ctx)
{
    size_t fr = 0, total = 0;
    assert_int_equal(rf_real.cuCtxPushCurrent(ctx), CUDA_SUCCESS);
    assert_int_equal(rf_real.cuMemGetInfo(&fr, &total), CUDA_SUCCESS);
    CUcontext popped;
    assert_int_equal(rf_real.cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    return fr;
}

static void sweep(const char *text)
{
    const cudag__drv *real;
    cudag_error e;
    gpu_ok(cudag__driver(&real, &e), &e, "cudag__driver");
    rf_real = *real;
    /* The test holds the primary context for its whole run, so that its
     * memory is not created and destroyed with each exec: the free memory
     * then compares exactly. */
    CUdevice dev;
    CUcontext ctx;
    assert_int_equal(rf_real.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(rf_real.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    cudag_graph *g = gpu_load(text);

    cudag__driver_override(&rf_table);
    rf_countdown = -1;
    rf_calls = 0;
    gpu_ok(lifecycle(g, &e), &e, "the whole life cycle without faults");
    long total = rf_calls;
    size_t base = free_memory(ctx);
    assert_true(total > 40);
    long errors = 0, survived = 0;
    for (long n = 1; n <= total; n++) {
        rf_countdown = n;
        rf_calls = 0;
        rf_failed = NULL;
        cudag__error_clear(&e);
        int rc = lifecycle(g, &e);
        rf_countdown = -1;
        if (!rf_failed)
            fail_msg("call %ld of %ld did not happen: the sequence is not "
                     "deterministic", n, total);
        if (rc != CUDAG_OK) {
            errors++;
            if (rc != CUDAG_ECUDA && rc != CUDAG_ENODRIVER)
                fail_msg("call %ld (%s) failed: status %s, expected a driver "
                         "error (%s)", n, rf_failed, cudag_status_name(rc),
                         e.message);
            if (!strstr(e.message, "CUDA_ERROR_UNKNOWN") &&
                !strstr(e.message, "cuInit"))
                fail_msg("call %ld (%s): the error does not give the driver's "
                         "result: %s", n, rf_failed, e.message);
        } else {
            /* Only releasing calls may fail unnoticed: destroy cannot report,
             * and what they released is gone. */
            survived++;
            printf("# call %ld (%s) failed inside destroy: survived\n", n,
                   rf_failed);
        }
        size_t now = free_memory(ctx);
        if (now != base)
            fail_msg("call %ld (%s) failing leaked %lld bytes of device memory "
                     "(%s)", n, rf_failed, (long long)base - (long long)now,
                     e.message);
    }
    cudag__driver_override(NULL);
    printf("# %ld driver calls failed in turn: %ld reported, %ld survived in "
           "destroy, device memory back to %zu bytes free every time\n",
           total, errors, survived, base);
    cudag_graph_destroy(g);
    assert_int_equal(rf_real.cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
}

static void every_driver_call_fails_in_turn(void **state)
{
    (void)state;
    sweep(yaml);
}

static void every_driver_call_of_a_loop_fails_in_turn(void **state)
{
    (void)state;
    sweep(cond_yaml);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_driver_call_fails_in_turn),
        cmocka_unit_test(every_driver_call_of_a_loop_fails_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
