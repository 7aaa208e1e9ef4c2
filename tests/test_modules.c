/* test_modules.c — a graph's kernel code on the CPU (src/code/module.c) and
 * its load at instantiation (src/build/build.c) through the fake driver: the
 * user-kernel example checks with signatures read from its source; the C
 * API's source modules and program handles; a source module compiled with
 * the real NVRTC and loaded with cuLibraryLoadData, its template lowered,
 * PDL seen in the generated code, parameters counted from the code (never
 * probed past the last), every driver call and allocation failing in turn.
 * The instantiation cases skip, saying why, without libnvrtc. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "lib/driver.h"
#include "lib/nvrtc.h"
#include "ir/graph.h"
#include "code/binary.h"
#include "gpu/exec.h"

#include <stdbool.h>
#include <stdint.h>
#include "fake_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cache[256];

static int setup(void **state)
{
    (void)state;
    /* The compile cache of these tests is theirs alone. */
    if (tmkdir_in(cache, sizeof cache, "modules") != 0)
        return -1;
    return setenv("CUDAG_CACHE_DIR", cache, 1);
}

static int teardown(void **state)
{
    (void)state;
    return trm_tree(cache);
}

static bool have_nvrtc(void)
{
    const cudag__rtc *r;
    cudag_error e;
    if (cudag__nvrtc(&r, &e) == CUDAG_OK)
        return true;
    print_message("skipped: %s\n", e.message);
    return false;
}

static cudag_graph *load_example(tdiag *td)
{
    cudag_options o = topts(td, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    int rc = cudag_load_file(tsrc("graphs/user_kernels.yaml"), &o, &g, &e);
    if (rc != CUDAG_OK)
        fail_msg("%s", td->text);
    return g;
}

static void modules_example_checks_from_source(void **state)
{
    (void)state;
    tdiag td;
    cudag_graph *g = load_example(&td);
    assert_int_equal(td.nerr + td.nwarn, 0);
    assert_int_equal(g->nmodules, 1);
    assert_int_equal(g->modules[0].kind, CUDAG__CODE_SOURCE);
    /* Each kernel a node names became a signature, read from the source. */
    assert_int_equal(g->nsigs, 4);
    uint32_t s = cudag__find_sig(g, "axpby");
    assert_int_not_equal(s, CUDAG__NONE);
    const cudag__sig *sig = &g->sigs[s];
    assert_int_equal(sig->nparams, 6);
    assert_string_equal(sig->pnames[3], "alpha");
    assert_int_equal(sig->types[5], CUDAG_TYPE_I32);
    assert_non_null(sig->pointee);
    assert_int_equal(sig->pointee[0], CUDAG_TYPE_F32);
    assert_string_equal(sig->symbol, "axpby");
    assert_null(sig->expr);
    assert_int_equal(sig->waits, -1);
    const cudag__sig *off = &g->sigs[cudag__find_sig(g, "offset_pdl")];
    assert_int_equal(off->waits, 1);
    assert_true(off->pdl);
    cudag_graph_destroy(g);
}

/* A source module from memory and a program's handle, through the C API. */
static void modules_c_api(void **state)
{
    (void)state;
    static const char src[] =
        "#include <cudag/pdl.cuh>\n"
        "extern \"C\" __global__ void fill(int *y, int v, long long n) {\n"
        "    cudag_pdl_wait(); if (n) y[0] = v; }\n"
        "template <typename T> __global__ void axpy(T *y, const T *x, T a,"
        " int n) {}\n";
    static const char *const opts[] = {"-DUNUSED=1", NULL};
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(cudag_graph_create("api", &g, &e), CUDAG_OK);
    assert_int_equal(cudag_add_module_source(g, "mem", src, opts, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_module_source(g, "mem", src, NULL, &e),
                     CUDAG_EDUP);
    assert_int_equal(cudag_add_module_source(g, "bin", "a\0b", NULL, &e),
                     CUDAG_OK);      /* the text ends at its NUL */
    assert_int_equal(cudag_add_buffer(g, "y", CUDAG_TYPE_I32, 8, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_buffer(g, "f", CUDAG_TYPE_F32, 8, NULL, &e),
                     CUDAG_OK);
    cudag_dim3 one = {1, 1, 1};
    cudag_arg ok_args[] = {cudag_arg_buffer("y", 0), cudag_arg_int(7),
                           cudag_arg_int(8)};
    /* No signature declared: the source says what fill takes. */
    assert_int_equal(cudag_add_kernel(g, "a", "fill", one, one, 0, ok_args, 3,
                                      &e),
                     CUDAG_OK);
    assert_int_equal(cudag_add_kernel(g, "b", "fil", one, one, 0, ok_args, 3,
                                      &e),
                     CUDAG_EUNKNOWN);
    assert_string_equal(e.message,
                        "node 'b': unknown kernel 'fil' (did you mean "
                        "'fill'?)");
    assert_int_equal(cudag_add_kernel(g, "t", "axpy", one, one, 0, ok_args, 3,
                                      &e),
                     CUDAG_EARGS);
    assert_non_null(strstr(e.message, "is a template"));
    assert_string_equal(e.file, "mem.cu");
    /* A program's own code: checked like any signature. */
    static const cudag_param p[] = {{"y", CUDAG_TYPE_PTR},
                                    {"n", CUDAG_TYPE_I32}};
    assert_int_equal(cudag_add_signature_handle(g, "mine", NULL,
                                                CUDAG_HANDLE_FUNCTION, p, 2, 0,
                                                &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_add_signature_handle(g, "mine", (void *)&e,
                                                (cudag_handle_kind)9, p, 2, 0,
                                                &e),
                     CUDAG_EINVAL);
    assert_int_equal(cudag_add_signature_handle(g, "mine", (void *)&e,
                                                CUDAG_HANDLE_KERNEL, p, 2, 0,
                                                &e),
                     CUDAG_OK);
    cudag_arg h_args[] = {cudag_arg_buffer("y", 0), cudag_arg_int(8)};
    assert_int_equal(cudag_add_kernel(g, "h", "mine", one, one, 0, h_args, 2,
                                      &e),
                     CUDAG_OK);
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_OK);
    /* A buffer of floats for fill's int*: the typed pointer says no. */
    cudag_arg bad[] = {cudag_arg_buffer("f", 0), cudag_arg_int(7),
                       cudag_arg_int(8)};
    assert_int_equal(cudag_add_kernel(g, "c", "fill", one, one, 0, bad, 3, &e),
                     CUDAG_OK);
    assert_int_equal(cudag_check(g, NULL, &e), CUDAG_ETYPE);
    assert_string_equal(e.message,
                        "node 'c': argument 'y' (i32*) must be a buffer of "
                        "i32, got buffer 'f' (f32)");
    cudag_graph_destroy(g);
}

/* A source module that is too big, or not text: errors at the module. */
static void modules_source_files_refused(void **state)
{
    (void)state;
    char huge[300], bin[300], yaml[900];
    snprintf(huge, sizeof huge, "%s/huge.cu", cache);
    snprintf(bin, sizeof bin, "%s/binary.cu", cache);
    FILE *f = fopen(huge, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(truncate(huge, 100 << 20), 0);     /* 100 MB, sparse */
    f = fopen(bin, "wb");
    assert_non_null(f);
    fwrite("int x;\0\1\2", 1, 9, f);
    fclose(f);
    static const char *const what[] = {
        "is 104857600 bytes (at most 16777216 for CUDA source)",
        "is not text (a NUL byte or invalid UTF-8), so not CUDA source"};
    for (int i = 0; i < 2; i++) {
        const char *path = i ? bin : huge;
        snprintf(yaml, sizeof yaml, "cudag: 1\nmodules: {m: %s}\n", path);
        tdiag td;
        cudag_graph *g = (cudag_graph *)1;
        long base = cudag__alloc_live();
        assert_int_not_equal(tload(yaml, &td, &g), CUDAG_OK);
        assert_null(g);
        assert_int_equal(cudag__alloc_live(), base);
        char want[900];
        snprintf(want, sizeof want, "t.yaml:2:14: error: module 'm': '%s' %s\n",
                 path, what[i]);
        assert_string_equal(td.text, want);
    }
}

/* ---- instantiation on the fake driver, compiled by the real NVRTC ------ */

static cudag_exec *instantiate(cudag_graph *g, unsigned flags, tdiag *td,
                               int *rc, cudag_error *e)
{
    cudag_exec_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.flags = flags;
    o.diag = tdiag_fn;
    o.diag_user = td;
    cudag_exec *x = NULL;
    *rc = cudag_instantiate(g, &o, &x, e);
    return x;
}

static void modules_source_loaded_from_memory(void **state)
{
    (void)state;
    if (!have_nvrtc())
        skip();
    fake_reset();
    tdiag td;
    cudag_graph *g = load_example(&td);
    cudag_error e;
    int rc;
    memset(&td, 0, sizeof td);
    cudag_exec *x = instantiate(g, CUDAG_NO_CACHE, &td, &rc, &e);
    if (rc != CUDAG_OK)
        fail_msg("%s\n%s", e.message, td.text);
    /* One cubin for the device, handed over in memory. */
    assert_int_equal(F.loaded_data_count, 1);
    assert_int_equal(cudag__code_sniff(F.loaded_data, sizeof F.loaded_data,
                                       NULL),
                     CUDAG__CODE_CUBIN);
    assert_int_equal(x->code.compiled, 1);
    /* The public view of it (what `cudag run` shows): compiled, timed. */
    cudag_module_stats ms;
    assert_int_equal(cudag_exec_module_count(x), 1);
    assert_int_equal(cudag_exec_module_stats(x, 0, &ms), CUDAG_OK);
    assert_string_equal(ms.name, "mine");
    assert_int_equal(ms.origin, CUDAG_MODULE_COMPILED);
    assert_true(ms.load_ns > 0);
    assert_int_equal(cudag_exec_module_stats(x, 1, &ms), CUDAG_ERANGE);
    assert_int_equal(cudag_exec_module_stats(NULL, 0, &ms), CUDAG_EINVAL);
    /* Parameter counts came from the code: no question past the last. */
    assert_int_equal(F.probes_past_end, 0);
    /* offset_pdl's wait is in its PTX: its programmatic edge stays. */
    cudag_exec_stats st;
    assert_int_equal(cudag_exec_get_stats(x, &st), CUDAG_OK);
    assert_int_equal(st.downgraded_edges, 0);
    assert_int_equal(td.nwarn, 0);
    cudag_exec_destroy(x);
    /* Through the cache, twice: compiled once, then read back. */
    x = instantiate(g, 0, &td, &rc, &e);
    assert_int_equal(rc, CUDAG_OK);
    cudag_exec_destroy(x);
    x = instantiate(g, 0, &td, &rc, &e);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_equal(x->code.cached, 1);
    assert_int_equal(x->code.compiled, 0);
    assert_int_equal(cudag_exec_module_stats(x, 0, &ms), CUDAG_OK);
    assert_int_equal(ms.origin, CUDAG_MODULE_CACHED);
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

static cudag_graph *template_graph(const char *body)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "cudag: 1\n"
             "modules: {m: %s}\n"
             "kernels:\n"
             "  axpy_f32: {symbol: \"axpy<float>\"}\n"
             "buffers: {x: {type: f32, count: 64}, y: {type: f32, count: 64}}\n"
             "nodes:\n"
             "  a: {kernel: axpy_f32, grid: 1, block: 64, args: [y, x, 2.0, 64]}\n"
             "%s",
             tsrc("tests/data/code/user.cu"), body);
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g = NULL;
    cudag_error e;
    if (tload_opts(yaml, "t.yaml", &o, &g, &e) != CUDAG_OK)
        fail_msg("%s", td.text);
    return g;
}

/* Declared parameters in a source module: the source still says how the
 * symbol is found and whether the kernel waits. */
static void modules_declared_params_in_source(void **state)
{
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "cudag: 1\nmodules: {m: %s}\nkernels:\n"
             "  a: {symbol: \"axpy<float>\", params: [ptr, ptr, f32, i32]}\n"
             "  s: {symbol: scale, params: [ptr, f32, i32]}\n",
             tsrc("tests/data/code/user.cu"));
    tdiag td;
    cudag_options o = topts(&td, NULL);
    cudag_graph *g;
    cudag_error e;
    assert_int_equal(tload_opts(yaml, "t.yaml", &o, &g, &e), CUDAG_OK);
    const cudag__sig *a = &g->sigs[cudag__find_sig(g, "a")];
    const cudag__sig *sc = &g->sigs[cudag__find_sig(g, "s")];
    assert_string_equal(a->expr, "axpy<float>");
    assert_int_equal(a->waits, -1);
    assert_null(sc->expr);          /* extern "C": its name is the symbol */
    assert_int_equal(sc->waits, 1);
    assert_true(sc->pdl);
    cudag_graph_destroy(g);
}

static void modules_template_lowered_and_edges_judged(void **state)
{
    (void)state;
    if (!have_nvrtc())
        skip();
    fake_reset();
    /* tiny never waits: the edge into it is downgraded, as the check said. */
    cudag_graph *g = template_graph(
        "  b: {kernel: axpy_f32, grid: 1, block: 64, args: [y, x, 1.0, 64],"
        " after: {a: programmatic}}\n");
    const cudag__sig *s = &g->sigs[cudag__find_sig(g, "axpy_f32")];
    assert_string_equal(s->expr, "axpy<float>");
    assert_int_equal(s->waits, -1);
    tdiag td;
    memset(&td, 0, sizeof td);
    cudag_error e;
    int rc;
    cudag_exec *x = instantiate(g, 0, &td, &rc, &e);
    if (rc != CUDAG_OK)
        fail_msg("%s\n%s", e.message, td.text);
    /* The fake found the kernel by the name NVRTC lowered it to. */
    assert_string_equal(x->code.symbols[0], "_Z4axpyIfEvPT_PKS0_S0_i");
    assert_int_equal(F.probes_past_end, 0);
    cudag_exec_stats st;
    cudag_exec_get_stats(x, &st);
    assert_int_equal(st.downgraded_edges, 1);
    assert_diag_contains(&td, "the loaded code of kernel 'axpy_f32' never "
                              "executes griddepcontrol.wait");
    cudag_exec_destroy(x);
    assert_int_equal(fake_live(), 0);
    cudag_graph_destroy(g);
}

/* Every driver call of an instantiation fails in turn, then every
 * allocation: an error each time, nothing left in the fake or the heap. */
static void modules_survive_every_failure(void **state)
{
    (void)state;
    if (!have_nvrtc())
        skip();
    tdiag td;
    cudag_graph *g = load_example(&td);
    cudag_error e;
    int rc, failures = 0;
    for (long n = 1;; n++) {
        fake_reset();
        fake_fail_at(n);
        memset(&td, 0, sizeof td);
        cudag_exec *x = instantiate(g, 0, &td, &rc, &e);
        bool hit = F.failed != NULL;
        cudag_exec_destroy(x);
        if (!hit) {
            assert_int_equal(rc, CUDAG_OK);
            break;
        }
        if (rc != CUDAG_OK) {
            failures++;
            assert_null(x);
            assert_non_null(strstr(e.message, F.failed));
        }
        int live = fake_live();
        if (strcmp(F.failed, "cuCtxPopCurrent") == 0)
            live -= F.pushed;
        assert_int_equal(live, 0);
    }
    assert_true(failures > 10);
    fake_reset();
    long base = cudag__alloc_live();
    for (long n = 1;; n++) {
        fake_reset();
        cudag__alloc_fail_after(n);
        cudag_exec *x = instantiate(g, 0, &td, &rc, &e);
        long made = cudag__alloc_fail_after(-1);
        cudag_exec_destroy(x);
        assert_int_equal(fake_live(), 0);
        assert_int_equal(cudag__alloc_live(), base);
        if (rc == CUDAG_OK) {
            assert_true(made < n);
            break;
        }
        assert_int_equal(rc, CUDAG_ENOMEM);
    }
    fake_reset();
    cudag_graph_destroy(g);
}

static int use_fake(void **state)
{
    (void)state;
    cudag__driver_override(&fake_table);
    return 0;
}

static int drop_fake(void **state)
{
    (void)state;
    cudag__driver_override(NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(modules_example_checks_from_source),
        cmocka_unit_test(modules_c_api),
        cmocka_unit_test(modules_source_files_refused),
        cmocka_unit_test(modules_declared_params_in_source),
        cmocka_unit_test_setup_teardown(modules_source_loaded_from_memory,
                                        use_fake, drop_fake),
        cmocka_unit_test_setup_teardown(
            modules_template_lowered_and_edges_judged, use_fake, drop_fake),
        cmocka_unit_test_setup_teardown(modules_survive_every_failure,
                                        use_fake, drop_fake),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
