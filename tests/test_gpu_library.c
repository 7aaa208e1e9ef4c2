/* test_gpu_library.c — the nodes that call a library or the program, on the
 * GPU: gemm nodes through the real cuBLASLt against a double-precision
 * reference on fresh random data with poisoned outputs, in every operand
 * form (offsets, leading dimensions, transposes, strided batches, c, bias,
 * ReLU and GELU; f32, f16 and bf16), then rebound and updated; captured work
 * launching the program's own kernel between two of cudag's; an event
 * record the host sees before the graph ends; an event wait that orders the
 * program's stream before the graph; a host function on every replay.
 * Skips (77) without a device; the gemm tests skip without cuBLASLt. */
#include "gemm_ref.h"
#include "gpu_common.h"

#include <time.h>

/* ---- gemm nodes ------------------------------------------------------------- */

/* Buffer `name` of x as floats (malloc'd). */
static float *read_buf(cudag_exec *x, const char *name)
{
    uint32_t b = cudag__find_buffer(x->g, name);
    assert_int_not_equal(b, CUDAG__NONE);
    cudag_type t = x->g->buffers[b].type;
    size_t n = x->g->buffers[b].count, es = cudag_type_size(t);
    void *raw = malloc(n * es);
    float *f = malloc(n * sizeof *f);
    assert_true(raw && f);
    cudag_error e;
    gpu_ok(cudag_exec_read(x, name, raw, n * es, &e), &e, name);
    for (size_t i = 0; i < n; i++)
        f[i] = gr_load(t, raw, (int64_t)i);
    free(raw);
    return f;
}

/* Writes fresh random values in [-1, 1) into buffer `name`, or NaN (the
 * poison) when poison is set. */
static void fill(cudag_exec *x, const char *name, uint64_t *seed, bool poison)
{
    uint32_t b = cudag__find_buffer(x->g, name);
    assert_int_not_equal(b, CUDAG__NONE);
    cudag_type t = x->g->buffers[b].type;
    size_t n = x->g->buffers[b].count, es = cudag_type_size(t);
    void *raw = malloc(n * es);
    assert_non_null(raw);
    for (size_t i = 0; i < n; i++)
        gr_store(t, raw, (int64_t)i, poison ? NAN : trand(seed, -1, 1));
    cudag_error e;
    gpu_ok(cudag_exec_write(x, name, raw, n * es, &e), &e, name);
    free(raw);
}

typedef struct gemm_case {
    const char *what;
    const char *yaml;           /* one gemm node "mm" over a, b, [c,] d, [bias] */
    gr_gemm r;
    double tol;                 /* largest error over the largest value */
} gemm_case;

#define HEAD "cudag: 1\nbuffers:\n"

static const gemm_case cases[] = {
    {"f32: batches, padded lda, offsets, shared transposed b, c, bias, relu",
     HEAD "  a: {type: f32, count: 3 + 2*37*40}\n"
          "  b: {type: f32, count: 29*33}\n"
          "  c: {type: f32, count: 2*37*29}\n"
          "  bias: {type: f32, count: 30}\n"
          "  d: {type: f32, count: 4 + 2*37*29}\n"
          "nodes:\n"
          "  mm: {gemm: {m: 37, n: 29, k: 33, batch: 2, a: a + 3, lda: 40,\n"
          "              stride_a: 37*40, b: b, trans_b: true, stride_b: 0,\n"
          "              c: c, beta: 1.5, alpha: 0.5, d: d + 4, bias: bias + 1,\n"
          "              epilogue: relu}}\n",
     {37, 29, 33, 2, 0, 1, {3, 0, 0, 4, 1}, {40, 33, 29, 29},
      {37 * 40, 0, 37 * 29, 37 * 29}, 0.5, 1.5, CUDAG_EPILOGUE_RELU, 1},
     1e-5},
    {"bf16 -> f32: transposed a, f32 bias, gelu",
     HEAD "  a: {type: bf16, count: 96*24}\n"
          "  b: {type: bf16, count: 96*40}\n"
          "  bias: {type: f32, count: 40}\n"
          "  d: {type: f32, count: 24*40}\n"
          "nodes:\n"
          "  mm: {gemm: {m: 24, n: 40, k: 96, a: a, trans_a: true, b: b,\n"
          "              d: d, bias: bias, epilogue: gelu}}\n",
     {24, 40, 96, 1, 1, 0, {0}, {24, 40, 40, 40}, {0}, 1.0, 0.0,
      CUDAG_EPILOGUE_GELU, 1},
     /* The epilogue's tanh may be a fast approximation. */
     1e-4},
    {"f16 -> f16: three packed batches, bias",
     HEAD "  a: {type: f16, count: 3*16*64}\n"
          "  b: {type: f16, count: 3*64*48}\n"
          "  bias: {type: f16, count: 48}\n"
          "  d: {type: f16, count: 3*16*48}\n"
          "nodes:\n"
          "  mm: {gemm: {m: 16, n: 48, k: 64, batch: 3, a: a, b: b, d: d,\n"
          "              bias: bias}}\n",
     {16, 48, 64, 3, 0, 0, {0}, {64, 48, 48, 48}, {16 * 64, 64 * 48, 0, 16 * 48},
      1.0, 0.0, CUDAG_EPILOGUE_NONE, 1},
     2e-3},
    {"bf16 -> bf16 at a decode shape: one row, a Linear weight",
     HEAD "  a: {type: bf16, count: 2048}\n"
          "  b: {type: bf16, count: 4096*2048}\n"
          "  d: {type: bf16, count: 4096}\n"
          "nodes:\n"
          "  mm: {gemm: {m: 1, n: 4096, k: 2048, a: a, b: b, trans_b: true,\n"
          "              d: d}}\n",
     {1, 4096, 2048, 1, 0, 1, {0}, {2048, 2048, 4096, 4096}, {0}, 1.0, 0.0,
      CUDAG_EPILOGUE_NONE, 0},
     1e-2},
};

/* Runs x once on fresh inputs with d poisoned, and compares d with the
 * reference. */
static void check_case(cudag_exec *x, const gemm_case *c, uint64_t *seed)
{
    bool has_c = cudag__find_buffer(x->g, "c") != CUDAG__NONE;
    fill(x, "a", seed, false);
    fill(x, "b", seed, false);
    if (has_c)
        fill(x, "c", seed, false);
    if (c->r.has_bias)
        fill(x, "bias", seed, false);
    fill(x, "d", seed, true);
    cudag_error e;
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    float *a = read_buf(x, "a"), *b = read_buf(x, "b");
    float *cc = has_c ? read_buf(x, "c") : NULL;
    float *bias = c->r.has_bias ? read_buf(x, "bias") : NULL;
    float *d = read_buf(x, "d");
    const gr_gemm *r = &c->r;
    double *want = malloc((size_t)(r->batch * r->m * r->n) * sizeof *want);
    assert_non_null(want);
    gr_reference(r, a, b, cc, bias, want);
    int bad;
    double err = gr_error(r, d, want, &bad);
    printf("# %s: error %.2g of the largest value (limit %.0e)\n", c->what,
           err, c->tol);
    if (bad || !(err <= c->tol))
        fail_msg("%s: error %.3g (limit %.3g), %d non-finite", c->what, err,
                 c->tol, bad);
    free(a), free(b), free(cc), free(bias), free(d), free(want);
}

static void gemm_matches_reference_in_every_form(void **state)
{
    (void)state;
    uint64_t seed = tseed();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cudag_graph *g = gpu_load(cases[i].yaml);
        cudag_exec *x = gpu_instantiate_gemm(g);
        if (!x) {
            cudag_graph_destroy(g);
            skip();
        }
        for (int run = 0; run < 3; run++)
            check_case(x, &cases[i], &seed);
        cudag_exec_destroy(x);
        cudag_graph_destroy(g);
    }
}

static void gemm_follows_rebinds_and_set_var(void **state)
{
    (void)state;
    static const char yaml[] =
        HEAD "  a: {type: f32, count: 64*128}\n"
             "  b: {type: f32, count: 128*96}\n"
             "  d: {type: f32, count: 64*96, init: 0}\n"
             "vars: {BETA: 0}\n"
             "nodes:\n"
             "  mm: {gemm: {m: 64, n: 96, k: 128, a: a, b: b, d: d, beta: BETA}}\n";
    const gemm_case c = {"f32, rebound a", yaml,
                         {64, 96, 128, 1, 0, 0, {0}, {128, 96, 96, 96}, {0},
                          1.0, 0.0, CUDAG_EPILOGUE_NONE, 0},
                         1e-5};
    cudag_graph *g = gpu_load(yaml);
    cudag_exec *x = gpu_instantiate_gemm(g);
    if (!x) {
        cudag_graph_destroy(g);
        skip();
    }
    uint64_t seed = tseed();
    check_case(x, &c, &seed);
    /* The program's own memory for a: the node is recorded again. */
    const cudag__drv *d = gpu_drv();
    cudag_error e;
    gpu_ok(cudag__exec_enter(x, &e), &e, "enter");
    CUdeviceptr mine = 0;
    assert_int_equal(d->cuMemAlloc(&mine, 64 * 128 * sizeof(float)),
                     CUDA_SUCCESS);
    cudag__exec_leave(x);
    gpu_ok(cudag_exec_rebind_buffer(x, "a", mine, &e), &e, "rebind");
    check_case(x, &c, &seed);       /* fresh data written through the rebind */
    /* d += a·b from now on: twice more gives three times one product. */
    float *once = read_buf(x, "d");
    gpu_ok(cudag_exec_set_var(x, "BETA", 1, &e), &e, "set_var");
    gpu_ok(cudag_exec_launch(x, 2, &e), &e, "launch");
    float *thrice = read_buf(x, "d");
    for (int i = 0; i < 64 * 96; i++)
        if (!(fabsf(thrice[i] - 3 * once[i]) <= 1e-4f * (1 + fabsf(once[i]))))
            fail_msg("d[%d] = %g after two accumulating replays, want %g", i,
                     thrice[i], 3 * once[i]);
    free(once);
    free(thrice);
    cudag_exec_destroy(x);
    gpu_ok(cudag__driver(&d, &e), &e, "driver");
    CUcontext ctx;
    CUdevice dev;
    assert_int_equal(d->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPushCurrent(ctx), CUDA_SUCCESS);
    assert_int_equal(d->cuMemFree(mine), CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPopCurrent(&ctx), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
    cudag_graph_destroy(g);
}

/* ---- the program's work, events, host functions ---------------------------- */

#define N 4096

/* What the program owns: the device's primary context, its memory, its own
 * loaded kernels and stream. */
typedef struct program {
    const cudag__drv *d;
    CUdevice dev;
    CUcontext ctx;
    CUlibrary lib;
    CUfunction copy, spin;
    CUstream s;
    CUdeviceptr x, y, z, w;
    int host_calls;
} program;

static void program_open(program *p)
{
    memset(p, 0, sizeof *p);
    p->d = gpu_drv();
    const cudag__drv *d = p->d;
    assert_int_equal(d->cuDeviceGet(&p->dev, 0), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRetain(&p->ctx, p->dev),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuCtxPushCurrent(p->ctx), CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryLoadFromFile(&p->lib,
                                              gpu_kernels("cudag_kernels.fatbin"),
                                              NULL, NULL, 0, NULL, NULL, 0),
                     CUDA_SUCCESS);
    CUkernel k;
    assert_int_equal(d->cuLibraryGetKernel(&k, p->lib, "copy_f32"),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuKernelGetFunction(&p->copy, k), CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryGetKernel(&k, p->lib, "util_spin"),
                     CUDA_SUCCESS);
    assert_int_equal(d->cuKernelGetFunction(&p->spin, k), CUDA_SUCCESS);
    assert_int_equal(d->cuStreamCreate(&p->s, CU_STREAM_NON_BLOCKING),
                     CUDA_SUCCESS);
    CUdeviceptr *mem[] = {&p->x, &p->y, &p->z, &p->w};
    for (int i = 0; i < 4; i++)
        assert_int_equal(d->cuMemAlloc(mem[i], N * sizeof(float)),
                         CUDA_SUCCESS);
}

static void program_close(program *p)
{
    const cudag__drv *d = p->d;
    CUdeviceptr mem[] = {p->x, p->y, p->z, p->w};
    for (int i = 0; i < 4; i++)
        assert_int_equal(d->cuMemFree(mem[i]), CUDA_SUCCESS);
    assert_int_equal(d->cuStreamDestroy(p->s), CUDA_SUCCESS);
    assert_int_equal(d->cuLibraryUnload(p->lib), CUDA_SUCCESS);
    CUcontext c;
    assert_int_equal(d->cuCtxPopCurrent(&c), CUDA_SUCCESS);
    assert_int_equal(d->cuDevicePrimaryCtxRelease(p->dev), CUDA_SUCCESS);
}

/* Launches one of the program's kernels on stream s. */
static CUresult launch(const program *p, CUfunction f, unsigned grid,
                       unsigned block, void **args, CUstream s)
{
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid, cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = block, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = s;
    return p->d->cuLaunchKernelEx(&cfg, f, args, NULL);
}

/* The capture's work: the program's copy z = y. */
static int copy_y_to_z(void *user, void *stream)
{
    program *p = user;
    int64_t n = N;
    void *args[] = {&p->y, &p->z, &n};
    return launch(p, p->copy, 4, 256, args, (CUstream)stream) != CUDA_SUCCESS;
}

static void host_count(void *user) { ((program *)user)->host_calls++; }

static const cudag_param P_SCALE[] = {
    {"x", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR}, {"a", CUDAG_TYPE_F32},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_ADD[] = {
    {"a", CUDAG_TYPE_PTR}, {"b", CUDAG_TYPE_PTR}, {"y", CUDAG_TYPE_PTR},
    {"n", CUDAG_TYPE_I64}};
static const cudag_param P_SPIN[] = {{"prologue_ns", CUDAG_TYPE_I64},
                                     {"body_ns", CUDAG_TYPE_I64}};

/* A builder graph over the program's memory x, y, z, w with the shipped
 * kernels scale_f32, add_f32 and util_spin. */
static cudag_graph *program_graph(const program *p)
{
    cudag_graph *g;
    cudag_error e;
    gpu_ok(cudag_graph_create("prog", &g, &e), &e, "create");
    gpu_ok(cudag_add_module(g, "k", gpu_kernels("cudag_kernels.fatbin"), &e),
           &e, "module");
    gpu_ok(cudag_add_signature(g, "scale_f32", "k", NULL, P_SCALE, 4, 1, &e),
           &e, "scale");
    gpu_ok(cudag_add_signature(g, "add_f32", "k", NULL, P_ADD, 4, 1, &e), &e,
           "add");
    gpu_ok(cudag_add_signature(g, "util_spin", "k", NULL, P_SPIN, 2, 1, &e),
           &e, "spin");
    const char *names[] = {"x", "y", "z", "w"};
    const CUdeviceptr mem[] = {p->x, p->y, p->z, p->w};
    for (int i = 0; i < 4; i++) {
        gpu_ok(cudag_add_buffer(g, names[i], CUDAG_TYPE_F32, N, NULL, &e), &e,
               names[i]);
        gpu_ok(cudag_bind_buffer(g, names[i], mem[i], &e), &e, names[i]);
    }
    return g;
}

static void kernel(cudag_graph *g, const char *name, const char *sig,
                   cudag_arg *args, size_t nargs)
{
    cudag_error e;
    gpu_ok(cudag_add_kernel(g, name, sig, (cudag_dim3){4, 1, 1},
                            (cudag_dim3){256, 1, 1}, 0, args, nargs, &e),
           &e, name);
}

static void edge(cudag_graph *g, const char *a, const char *b)
{
    cudag_error e;
    gpu_ok(cudag_add_edge(g, a, b, CUDAG_EDGE_FULL, &e), &e, "edge");
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void captured_work_runs_between_cudag_nodes(void **state)
{
    (void)state;
    program p;
    program_open(&p);
    cudag_graph *g = program_graph(&p);
    cudag_arg sa[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                      cudag_arg_float(2.0), cudag_arg_int(N)};
    cudag_arg aa[] = {cudag_arg_buffer("z", 0), cudag_arg_buffer("x", 0),
                      cudag_arg_buffer("w", 0), cudag_arg_int(N)};
    kernel(g, "scale", "scale_f32", sa, 4);
    cudag_error e;
    gpu_ok(cudag_add_capture(g, "copy", copy_y_to_z, &p, &e), &e, "capture");
    kernel(g, "add", "add_f32", aa, 4);
    gpu_ok(cudag_add_host(g, "count", host_count, &p, &e), &e, "host");
    edge(g, "scale", "copy");
    edge(g, "copy", "add");
    edge(g, "add", "count");
    tdiag td;
    cudag_options o = topts(&td, NULL);
    gpu_ok(cudag_check(g, &o, &e), &e, "check");
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    uint64_t seed = tseed();
    float in[N], want[N];
    for (int run = 0; run < 5; run++) {
        gpu_random(&seed, in, N);
        gpu_write(x, "x", in, N);
        gpu_poison(x, "y", N);
        gpu_poison(x, "z", N);
        gpu_poison(x, "w", N);
        gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
        gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
        for (int i = 0; i < N; i++)
            want[i] = 2.0f * in[i] + in[i];
        float *got = gpu_read(x, "w", N);
        gpu_expect("w = copy(2x) + x", got, want, N);
        free(got);
    }
    assert_int_equal(p.host_calls, 5);
    gpu_ok(cudag_exec_launch(x, 10, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    assert_int_equal(p.host_calls, 15);
    printf("# captured copy between two kernel nodes: 5 verified runs; host "
           "function called once per replay\n");
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    program_close(&p);
}

/* A callback that synchronizes breaks the capture: one error naming the
 * node, and nothing left behind (the stream is idle, the next graph
 * instantiates). */
static int sync_inside(void *user, void *stream)
{
    program *p = user;
    (void)p->d->cuStreamSynchronize((CUstream)stream);
    return 0;
}

static void captured_work_that_synchronizes_is_refused(void **state)
{
    (void)state;
    program p;
    program_open(&p);
    cudag_graph *g = program_graph(&p);
    cudag_error e;
    gpu_ok(cudag_add_capture(g, "bad", sync_inside, &p, &e), &e, "capture");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    cudag_exec *x = (cudag_exec *)1;
    int rc = cudag_instantiate(g, NULL, &x, &e);
    printf("# %s\n", e.message);
    assert_int_equal(rc, CUDAG_ECUDA);
    assert_null(x);
    assert_non_null(strstr(e.message, "the work of node 'bad' could not be "
                                      "captured: something in it synchronized"));
    cudag_graph_destroy(g);
    program_close(&p);
}

static void event_record_is_seen_before_the_graph_ends(void **state)
{
    (void)state;
    program p;
    program_open(&p);
    const cudag__drv *d = p.d;
    CUevent ev;
    assert_int_equal(d->cuEventCreate(&ev, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    cudag_graph *g = program_graph(&p);
    cudag_arg sa[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                      cudag_arg_float(2.0), cudag_arg_int(N)};
    cudag_arg spin[] = {cudag_arg_int(0), cudag_arg_int(300 * 1000 * 1000)};
    kernel(g, "scale", "scale_f32", sa, 4);
    cudag_error e;
    gpu_ok(cudag_add_event_record(g, "done", ev, &e), &e, "record");
    gpu_ok(cudag_add_kernel(g, "spin", "util_spin", (cudag_dim3){1, 1, 1},
                            (cudag_dim3){32, 1, 1}, 0, spin, 2, &e),
           &e, "spin");
    edge(g, "scale", "done");
    edge(g, "done", "spin");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    double t0 = now_ms();
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    assert_int_equal(d->cuEventSynchronize(ev), CUDA_SUCCESS);
    double t1 = now_ms();
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    double t2 = now_ms();
    printf("# event recorded after %.1f ms, graph done after %.1f ms\n",
           t1 - t0, t2 - t0);
    assert_true(t2 - t0 > 250);
    assert_true(t1 - t0 < 150);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(d->cuEventDestroy(ev), CUDA_SUCCESS);
    program_close(&p);
}

static void event_wait_orders_the_programs_stream_first(void **state)
{
    (void)state;
    program p;
    program_open(&p);
    const cudag__drv *d = p.d;
    CUevent ev;
    assert_int_equal(d->cuEventCreate(&ev, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    cudag_graph *g = program_graph(&p);
    cudag_error e;
    gpu_ok(cudag_add_event_wait(g, "inputs", ev, &e), &e, "wait");
    cudag_arg sa[] = {cudag_arg_buffer("x", 0), cudag_arg_buffer("y", 0),
                      cudag_arg_float(2.0), cudag_arg_int(N)};
    kernel(g, "scale", "scale_f32", sa, 4);
    edge(g, "inputs", "scale");
    gpu_ok(cudag_check(g, NULL, &e), &e, "check");
    cudag_exec *x = gpu_instantiate(g, 0, NULL);
    float ones[N], want[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f, want[i] = 6.0f;
    gpu_write(x, "x", ones, N);
    /* The program's stream: 200 ms of spinning, then x = 3, then the
     * event.  Only a graph that waits for the event sees the 3s. */
    int64_t zero = 0, body = 200 * 1000 * 1000;
    void *sargs[] = {&zero, &body};
    assert_int_equal(launch(&p, p.spin, 1, 32, sargs, p.s), CUDA_SUCCESS);
    float three = 3.0f;
    unsigned bits;
    memcpy(&bits, &three, 4);
    assert_int_equal(d->cuMemsetD32Async(p.x, bits, N, p.s), CUDA_SUCCESS);
    assert_int_equal(d->cuEventRecord(ev, p.s), CUDA_SUCCESS);
    gpu_ok(cudag_exec_launch(x, 1, &e), &e, "launch");
    gpu_ok(cudag_exec_sync(x, &e), &e, "sync");
    float *got = gpu_read(x, "y", N);
    gpu_expect("y = 2 · (x set on the program's stream)", got, want, N);
    free(got);
    printf("# the graph waited for the program's stream\n");
    assert_int_equal(d->cuStreamSynchronize(p.s), CUDA_SUCCESS);
    cudag_exec_destroy(x);
    cudag_graph_destroy(g);
    assert_int_equal(d->cuEventDestroy(ev), CUDA_SUCCESS);
    program_close(&p);
}

int main(void)
{
    gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_matches_reference_in_every_form),
        cmocka_unit_test(gemm_follows_rebinds_and_set_var),
        cmocka_unit_test(captured_work_runs_between_cudag_nodes),
        cmocka_unit_test(captured_work_that_synchronizes_is_refused),
        cmocka_unit_test(event_record_is_seen_before_the_graph_ends),
        cmocka_unit_test(event_wait_orders_the_programs_stream_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
