/* test_srcsig.c — kernel declarations read from CUDA source on the CPU
 * (src/code/decls.c): the C type table, what real kernels declare, what is
 * refused and how it reads, templates, macros and aliases, which kernels
 * reach a PDL wait, headers gathered, files read with limits, and nothing
 * leaked when an allocation fails. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/file.h"
#include "code/ctype.h"
#include "code/decls.h"
#include "code/headers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads one text (named "k.cu") with optional defines into d; asserts OK. */
static void read1(cudag__arena *a, const char *src, const char *const *defs,
                  cudag__src_decls *d)
{
    cudag__src_text t = {"k.cu", src, strlen(src)};
    cudag_error e;
    assert_int_equal(cudag__src_read(a, &t, 1, defs, d, &e), CUDAG_OK);
}

/* Resolves kernel `name` (as expr) and returns the status; fills s, e. */
static int sig_of(cudag__arena *a, const cudag__src_decls *d, const char *name,
                  const char *expr, cudag__src_sig *s, cudag_error *e)
{
    const cudag__src_kernel *k = cudag__src_find(d, name);
    assert_non_null(k);
    return cudag__src_signature(a, d, k, expr, s, e);
}

/* "file:line:col: message" of an error, for exact comparisons. */
static const char *where(const cudag_error *e)
{
    static char buf[CUDAG_PATH_MAX + 1200];
    snprintf(buf, sizeof buf, "%s:%d:%d: %s", e->file, e->line, e->column,
             e->message);
    return buf;
}

static void srcsig_ctype_table(void **state)
{
    (void)state;
    static const struct {
        const char *c;
        cudag_type t, pointee;
    } rows[] = {
        {"float", CUDAG_TYPE_F32, 0},
        {"double", CUDAG_TYPE_F64, 0},
        {"__half", CUDAG_TYPE_F16, 0},
        {"half", CUDAG_TYPE_F16, 0},
        {"__nv_bfloat16", CUDAG_TYPE_BF16, 0},
        {"int", CUDAG_TYPE_I32, 0},
        {"signed", CUDAG_TYPE_I32, 0},
        {"const int", CUDAG_TYPE_I32, 0},
        {"unsigned", CUDAG_TYPE_U32, 0},
        {"unsigned int", CUDAG_TYPE_U32, 0},
        {"int unsigned", CUDAG_TYPE_U32, 0},
        {"long long", CUDAG_TYPE_I64, 0},
        {"long long int", CUDAG_TYPE_I64, 0},
        {"unsigned long long", CUDAG_TYPE_U64, 0},
        {"long", CUDAG_TYPE_I64, 0},
        {"int64_t", CUDAG_TYPE_I64, 0},
        {"std :: int64_t", CUDAG_TYPE_I64, 0},
        {"uint32_t", CUDAG_TYPE_U32, 0},
        {"size_t", CUDAG_TYPE_U64, 0},
        {"short", CUDAG_TYPE_I16, 0},
        {"unsigned short", CUDAG_TYPE_U16, 0},
        {"char", CUDAG_TYPE_I8, 0},
        {"unsigned char", CUDAG_TYPE_U8, 0},
        {"bool", CUDAG_TYPE_U8, 0},
        {"float *", CUDAG_TYPE_PTR, CUDAG_TYPE_F32},
        {"const float *", CUDAG_TYPE_PTR, CUDAG_TYPE_F32},
        {"float const *", CUDAG_TYPE_PTR, CUDAG_TYPE_F32},
        {"float * __restrict__", CUDAG_TYPE_PTR, CUDAG_TYPE_F32},
        {"const __nv_bfloat16 * __restrict__ const", CUDAG_TYPE_PTR,
         CUDAG_TYPE_BF16},
        {"int *", CUDAG_TYPE_PTR, CUDAG_TYPE_I32},
        {"void *", CUDAG_TYPE_PTR, CUDAG_TYPE_NONE},
        {"const void *", CUDAG_TYPE_PTR, CUDAG_TYPE_NONE},
        {"float * *", CUDAG_TYPE_PTR, CUDAG_TYPE_NONE},
        {"Params *", CUDAG_TYPE_PTR, CUDAG_TYPE_NONE},
        {"Params", CUDAG_TYPE_NONE, 0},
        {"float4", CUDAG_TYPE_NONE, 0},
        {"float &", CUDAG_TYPE_NONE, 0},
        {"void", CUDAG_TYPE_NONE, 0},
        {"unsigned signed", CUDAG_TYPE_NONE, 0},
        {"long short", CUDAG_TYPE_NONE, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cudag_type p = CUDAG_TYPE_COUNT_;
        cudag_type t = cudag__src_ctype(rows[i].c, &p);
        if (t != rows[i].t || (t == CUDAG_TYPE_PTR && p != rows[i].pointee))
            fail_msg("'%s' gave %s/%s", rows[i].c,
                     cudag_type_name(t) ? cudag_type_name(t) : "none",
                     cudag_type_name(p) ? cudag_type_name(p) : "none");
    }
}

static const char real_kernels[] =
    "// __global__ void in_comment(int);\n"
    "/* __global__ void in_block(int); */\n"
    "#include <cuda_fp16.h>\n"
    "static const char *s = \"__global__ void in_string(int)\";\n"
    "extern \"C\" __global__ void scale(float* x, float a, int n) {}\n"
    "extern \"C\" {\n"
    "__global__ void __launch_bounds__(256, 2)\n"
    "axpy(float* __restrict__ y, const float* __restrict__ x, float a,\n"
    "     int n) { if (n) { y[0] = x[0]; } }\n"
    "__global__ void mixed(__half* h, __nv_bfloat16 *b, long long n,\n"
    "    int64_t m, size_t z, unsigned u, double d, void *raw, int,\n"
    "    float arr[]) {}\n"
    "}\n"
    "namespace ns { extern \"C\" __global__ void inner(int *p) {} }\n"
    "__global__ void cxx(float *x, float a, int n) {}\n"
    "extern \"C\" __global__ void proto(float *x);\n"
    "extern \"C\" __global__ void proto(float *x) {}\n"
    "__device__ int helper(int x) { return x; }\n";

static void srcsig_reads_real_kernels(void **state)
{
    (void)state;
    cudag__arena a = {0};
    cudag__src_decls d;
    read1(&a, real_kernels, NULL, &d);
    assert_int_equal(d.nk, 6);   /* none from comments or strings */
    const cudag__src_kernel *k = cudag__src_find(&d, "scale");
    assert_non_null(k);
    assert_true(k->extern_c);
    assert_int_equal(k->pos.line, 5);
    assert_int_equal(k->pos.col, 28);
    assert_false(cudag__src_find(&d, "cxx")->extern_c);
    assert_true(cudag__src_find(&d, "inner")->extern_c);
    assert_null(cudag__src_find(&d, "helper"));
    assert_null(cudag__src_find(&d, "in_comment"));
    cudag__src_sig s;
    cudag_error e;
    assert_int_equal(sig_of(&a, &d, "axpy", NULL, &s, &e), CUDAG_OK);
    assert_int_equal(s.nparams, 4);
    assert_string_equal(s.pnames[0], "y");
    assert_int_equal(s.types[0], CUDAG_TYPE_PTR);
    assert_int_equal(s.pointee[0], CUDAG_TYPE_F32);
    assert_int_equal(s.types[2], CUDAG_TYPE_F32);
    assert_string_equal(s.pnames[3], "n");
    assert_int_equal(s.types[3], CUDAG_TYPE_I32);
    assert_int_equal(sig_of(&a, &d, "mixed", NULL, &s, &e), CUDAG_OK);
    static const cudag_type want[] = {
        CUDAG_TYPE_PTR, CUDAG_TYPE_PTR, CUDAG_TYPE_I64, CUDAG_TYPE_I64,
        CUDAG_TYPE_U64, CUDAG_TYPE_U32, CUDAG_TYPE_F64, CUDAG_TYPE_PTR,
        CUDAG_TYPE_I32, CUDAG_TYPE_PTR};
    static const cudag_type pointee[] = {
        CUDAG_TYPE_F16, CUDAG_TYPE_BF16, 0, 0, 0, 0, 0, CUDAG_TYPE_NONE, 0,
        CUDAG_TYPE_F32};
    assert_int_equal(s.nparams, 10);
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(s.types[i], want[i]);
        if (want[i] == CUDAG_TYPE_PTR)
            assert_int_equal(s.pointee[i], pointee[i]);
    }
    assert_string_equal(s.pnames[8], "p8");         /* unnamed */
    assert_string_equal(s.pnames[9], "arr");
    /* A prototype and its definition are one kernel. */
    const cudag__src_kernel *p = cudag__src_find(&d, "proto");
    assert_int_equal(p->other_pos.line, 0);
    cudag__arena_free(&a);
}

/* Each refusal, with its exact text and place. */
static void srcsig_refusals_are_precise(void **state)
{
    (void)state;
    static const char src[] =
        "struct Params { float a; int n; };\n"
        "#define IDX(i) int\n"
        "extern \"C\" {\n"
        "__global__ void dflt(float* x, int n = 0) {}\n"
        "__global__ void byval(float* x, Params p) {}\n"
        "__global__ void ref(float& x) {}\n"
        "__global__ void fmacro(float* x, IDX(1) n) {}\n"
        "__global__ void var(float* x, ...) {}\n"
        "}\n"
        "__global__ void ov(float* x) {}\n"
        "__global__ void ov(int* x) {}\n"
        "template <typename T> __global__ void tpl(T* x, T a) {}\n";
    static const struct {
        const char *name, *expr, *msg;
    } rows[] = {
        {"dflt", NULL,
         "k.cu:4:38: kernel 'dflt': parameter 1 has a default argument (= "
         "0): cudag passes every argument, so remove the default"},
        {"byval", NULL,
         "k.cu:5:33: kernel 'byval': parameter 1 ('p') has type 'Params', "
         "which cudag cannot read from source (a struct passed by value?): "
         "pass a pointer, or declare its layout in 'kernels:' with params"},
        {"ref", NULL,
         "k.cu:6:21: kernel 'ref': parameter 0 ('x') is a reference ('float "
         "&'); kernels take values and pointers"},
        {"fmacro", NULL,
         "k.cu:7:34: kernel 'fmacro': its parameter list uses the "
         "function-like macro 'IDX', which cudag does not expand: write the "
         "type, or declare the kernel in 'kernels:'"},
        {"var", NULL,
         "k.cu:8:31: kernel 'var': its parameter list is variadic (...)"},
        {"ov", NULL,
         "k.cu:11:17: kernel 'ov' is declared twice with different "
         "parameters (here and at line 10): overloaded, or one per #if "
         "branch; give it one definition, or declare it in 'kernels:'"},
        {"tpl", NULL,
         "k.cu:12:39: kernel 'tpl' is a template: name an instance in "
         "'kernels:' with symbol: \"tpl<…>\" (for example \"tpl<float>\")"},
        {"tpl", "tpl<float, int>",
         "k.cu:12:39: 'tpl<float, int>' gives 2 template arguments; "
         "template 'tpl' takes 1"},
        {"tpl", "tpl<Params>",
         "k.cu:12:49: kernel 'tpl': parameter 1 ('a') has type 'Params', "
         "which cudag cannot read from source (a struct passed by value?): "
         "pass a pointer, or declare its layout in 'kernels:' with params"},
    };
    cudag__arena a = {0};
    cudag__src_decls d;
    read1(&a, src, NULL, &d);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cudag__src_sig s;
        cudag_error e;
        assert_int_equal(sig_of(&a, &d, rows[i].name, rows[i].expr, &s, &e),
                         CUDAG_EARGS);
        assert_int_equal(s.nparams, 0);
        assert_string_equal(where(&e), rows[i].msg);
    }
    cudag__arena_free(&a);
}

static void srcsig_templates_macros_aliases(void **state)
{
    (void)state;
    static const char src[] =
        "#define REAL float\n"
        "#define KERNEL extern \"C\" __global__ void\n"
        "typedef __nv_bfloat16 bf;\n"
        "using u64 = unsigned long long;\n"
        "template <typename T, typename I = int, int N = 4>\n"
        "__global__ void axpy(T* y, const T* x, T a, I n) {}\n"
        "KERNEL viamacro(REAL* x, bf* b, u64 n, ELEM* e) {}\n"
        "#define DEF(T) extern \"C\" __global__ void gen_##T(T* x) {}\n"
        "DEF(float)\n";
    static const char *const defs[] = {"ELEM=double", NULL};
    cudag__arena a = {0};
    cudag__src_decls d;
    read1(&a, src, defs, &d);
    assert_true(d.macro_kernels);        /* DEF(T) writes kernels */
    assert_null(cudag__src_find(&d, "gen_float"));
    cudag__src_sig s;
    cudag_error e;
    assert_int_equal(sig_of(&a, &d, "axpy", "axpy<double>", &s, &e), CUDAG_OK);
    assert_int_equal(s.pointee[0], CUDAG_TYPE_F64);
    assert_int_equal(s.types[2], CUDAG_TYPE_F64);
    assert_int_equal(s.types[3], CUDAG_TYPE_I32);       /* the default */
    assert_int_equal(sig_of(&a, &d, "axpy", "axpy< __half, long long >", &s,
                            &e),
                     CUDAG_OK);
    assert_int_equal(s.pointee[1], CUDAG_TYPE_F16);
    assert_int_equal(s.types[3], CUDAG_TYPE_I64);
    const cudag__src_kernel *k = cudag__src_find(&d, "viamacro");
    assert_non_null(k);
    assert_true(k->extern_c);
    assert_int_equal(sig_of(&a, &d, "viamacro", NULL, &s, &e), CUDAG_OK);
    assert_int_equal(s.pointee[0], CUDAG_TYPE_F32);
    assert_int_equal(s.pointee[1], CUDAG_TYPE_BF16);
    assert_int_equal(s.types[2], CUDAG_TYPE_U64);
    assert_int_equal(s.pointee[3], CUDAG_TYPE_F64);     /* from -D */
    cudag__arena_free(&a);
}

static void srcsig_finds_waits(void **state)
{
    (void)state;
    static const char src[] =
        "#include <cudag/pdl.cuh>\n"
        "#define WAIT() asm volatile(\"griddepcontrol.wait;\" ::: \"memory\")\n"
        "__device__ __forceinline__ void up() {\n"
        "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\"); }\n"
        "namespace d { __device__ void twice() { up(); } }\n"
        "extern \"C\" {\n"
        "__global__ void direct(float *x) { asm volatile(\"griddepcontrol.wait;\"); }\n"
        "__global__ void viahelper(float *x) { d::twice(); }\n"
        "__global__ void viaheader(float *x) { cudag_pdl_wait(); }\n"
        "__global__ void viaruntime(float *x) { cudaGridDependencySynchronize(); }\n"
        "__global__ void viamacro(float *x) { WAIT(); }\n"
        "__global__ void trigger_only(float *x) {\n"
        "    asm volatile(\"griddepcontrol.launch_dependents;\"); }\n"
        "__global__ void nowait(float *x) { x[0] = 1; }\n"
        "}\n";
    cudag__arena a = {0};
    cudag__src_decls d;
    read1(&a, src, NULL, &d);
    static const struct {
        const char *name;
        bool waits;
    } rows[] = {{"direct", true},   {"viahelper", true},
                {"viaheader", true}, {"viaruntime", true},
                {"viamacro", true},  {"trigger_only", false},
                {"nowait", false}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const cudag__src_kernel *k = cudag__src_find(&d, rows[i].name);
        assert_non_null(k);
        if (k->waits != rows[i].waits)
            fail_msg("%s: waits %d", rows[i].name, k->waits);
    }
    cudag__arena_free(&a);
}

/* ---- headers and files ------------------------------------------------ */

static char tmpdir[256];

static void put_file(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int make_tmp(void **state)
{
    (void)state;
    if (tmkdir_in(tmpdir, sizeof tmpdir, "srcsig") != 0)
        return -1;
    char p[512];
    snprintf(p, sizeof p, "%s/sub", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/inc", tmpdir);
    mkdir(p, 0755);
    return 0;
}

static int remove_tmp(void **state)
{
    (void)state;
    return trm_tree(tmpdir);
}

static void srcsig_gathers_headers(void **state)
{
    (void)state;
    put_file("sub/near.cuh", "#include \"../inc/far.cuh\"\n"
                             "__device__ void w() { asm(\"griddepcontrol.wait;\"); }\n");
    put_file("inc/far.cuh", "#pragma once\n"
                            "extern \"C\" __global__ void in_header(int n) {}\n");
    put_file("inc/angled.cuh", "#include \"far.cuh\"\n");
    static const char main_src[] =
        "#include \"sub/near.cuh\"\n"
        "#include <angled.cuh>\n"
        "#include <cuda_fp16.h>\n"
        "#include <cudag/pdl.cuh>\n"
        "#include \"nothere.cuh\"\n"
        "extern \"C\" __global__ void k(float *x) { w(); }\n";
    char incopt[300];
    snprintf(incopt, sizeof incopt, "-I%s/inc", tmpdir);
    const char *opts[] = {incopt, NULL};
    static const cudag__src_text builtin = {"cudag/pdl.cuh", "// pdl\n", 8};
    cudag__arena a = {0};
    cudag__src_text main = {"main.cu", main_src, strlen(main_src)}, *t;
    uint32_t n;
    cudag_error e;
    assert_int_equal(cudag__src_gather(&a, &main, tmpdir, opts, NULL, &builtin,
                                       1, &t, &n, &e),
                     CUDAG_OK);
    /* main, near, angled, pdl (built in), far (once, though included
     * twice); neither the toolkit's header nor the missing one. */
    assert_int_equal(n, 5);
    assert_string_equal(t[0].path, "main.cu");
    assert_non_null(strstr(t[1].path, "sub/near.cuh"));
    assert_non_null(strstr(t[2].path, "inc/angled.cuh"));
    assert_string_equal(t[3].path, "cudag/pdl.cuh");
    assert_non_null(strstr(t[4].path, "far.cuh"));
    /* Kernels and waits count across the headers. */
    cudag__src_decls d;
    assert_int_equal(cudag__src_read(&a, t, n, NULL, &d, &e), CUDAG_OK);
    assert_non_null(cudag__src_find(&d, "in_header"));
    assert_true(cudag__src_find(&d, "k")->waits);
    cudag__arena_free(&a);
}

/* A module that names the toolkit's include/ or include/cccl with -I (a
 * toolkit laid out here: cuda_fp16.h, cuda/std/version) gathers none of
 * their headers, which NVRTC is given anyway: CCCL alone holds more than
 * the limit.  A header of the user's in another -I directory still is. */
static void srcsig_gather_leaves_the_toolkit_to_nvrtc(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        "tk", "tk/include", "tk/include/cccl", "tk/include/cccl/cuda",
        "tk/include/cccl/cuda/std", "tk/include/cccl/cub", "mine"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir, dirs[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    put_file("tk/include/cuda_fp16.h", "#include <cooperative_groups.h>\n");
    put_file("tk/include/cooperative_groups.h",
             "#include <cuda/std/type_traits>\n");
    put_file("tk/include/cccl/cuda/std/version", "// version\n");
    put_file("tk/include/cccl/cuda/std/type_traits",
             "#include <cuda/std/version>\n");
    put_file("tk/include/cccl/cub/cub.cuh",
             "template <int N> __global__ void cub_kernel(int *p) {}\n");
    put_file("mine/helper.cuh", "#include <cub/cub.cuh>\n"
                                "extern \"C\" __global__ void h(int n) {}\n");
    static const char main_src[] =
        "#include <cooperative_groups.h>\n"
        "#include <cub/cub.cuh>\n"
        "#include <cuda/std/type_traits>\n"
        "#include <helper.cuh>\n"
        "extern \"C\" __global__ void k(float *x) {}\n";
    char o1[300], o2[300], o3[300];
    snprintf(o1, sizeof o1, "-I%s/tk/include/cccl", tmpdir);
    snprintf(o2, sizeof o2, "-I%s/tk/include", tmpdir);
    snprintf(o3, sizeof o3, "-I%s/mine", tmpdir);
    const char *opts[] = {o1, o2, o3, NULL};
    cudag__arena a = {0};
    cudag__src_text main = {"main.cu", main_src, strlen(main_src)}, *t;
    uint32_t n;
    cudag_error e;
    assert_int_equal(cudag__src_gather(&a, &main, tmpdir, opts, NULL, NULL, 0,
                                       &t, &n, &e),
                     CUDAG_OK);
    assert_int_equal(n, 2);
    assert_non_null(strstr(t[1].path, "mine/helper.cuh"));
    cudag__arena_free(&a);
}

/* The one file reader: a file read into the arena (NUL-terminated) and the
 * same file mapped give the same bytes; an empty file maps to ""; without
 * a what, a message starts with "cannot read"; dir_of's three cases. */
static void srcsig_file_read_and_map(void **state)
{
    (void)state;
    cudag__arena a = {0};
    cudag__file_bytes r, m;
    cudag_error e;
    char p[512];
    cudag__pos at = {"g.yaml", 1, 1};
    put_file("twelve.cu", "hello world\n");
    snprintf(p, sizeof p, "%s/twelve.cu", tmpdir);
    assert_int_equal(cudag__file_read(p, 100, CUDAG__FILE_READ, &a, NULL, at,
                                      &r, NULL, &e),
                     CUDAG_OK);
    assert_int_equal(r.len, 12);
    assert_string_equal(r.p, "hello world\n");
    assert_null(r.map);
    assert_int_equal(cudag__file_read(p, 100, CUDAG__FILE_MAP, NULL, NULL, at,
                                      &m, NULL, &e),
                     CUDAG_OK);
    assert_non_null(m.map);
    assert_int_equal(m.len, 12);
    assert_memory_equal(m.p, "hello world\n", 12);
    cudag__file_release(&m);
    assert_null(m.map);
    cudag__file_release(&r);
    put_file("empty.cu", "");
    snprintf(p, sizeof p, "%s/empty.cu", tmpdir);
    assert_int_equal(cudag__file_read(p, 100, CUDAG__FILE_MAP, NULL, NULL, at,
                                      &m, NULL, &e),
                     CUDAG_OK);
    assert_null(m.map);
    assert_int_equal(m.len, 0);
    assert_string_equal(m.p, "");
    cudag__file_release(&m);
    snprintf(p, sizeof p, "%s/twelve.cu", tmpdir);
    uint64_t size = 0;
    assert_int_equal(cudag__file_read(p, 11, CUDAG__FILE_MAP, NULL, NULL, at,
                                      &m, &size, &e),
                     CUDAG_ELIMIT);
    assert_int_equal(size, 12);
    assert_null(m.p);
    char want[700];
    snprintf(want, sizeof want, "'%s' is 12 bytes (at most 11)", p);
    assert_string_equal(e.message, want);
    assert_string_equal(cudag__dir_of(&a, "a/b/c.cu"), "a/b");
    assert_string_equal(cudag__dir_of(&a, "c.cu"), ".");
    assert_string_equal(cudag__dir_of(&a, "/c.cu"), "/");
    cudag__arena_free(&a);
}

static void srcsig_file_limits(void **state)
{
    (void)state;
    cudag__arena a = {0};
    cudag__file_bytes fb;
    cudag_error e;
    char p[512];
    cudag__pos at = {"g.yaml", 3, 9};
    /* A 100 MB source: refused by its size, without reading it. */
    snprintf(p, sizeof p, "%s/huge.cu", tmpdir);
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 100 << 20), 0);
    close(fd);
    uint64_t size = 0;
    assert_int_equal(cudag__file_read(p, CUDAG__MAX_SOURCE_BYTES,
                                      CUDAG__FILE_READ, &a, "module 'm'", at,
                                      &fb, &size, &e),
                     CUDAG_ELIMIT);
    assert_null(fb.p);
    assert_int_equal(size, 100 << 20);
    char want[700];
    snprintf(want, sizeof want,
             "g.yaml:3:9: module 'm': '%s' is 104857600 bytes (at most "
             "16777216)", p);
    assert_string_equal(where(&e), want);
    snprintf(p, sizeof p, "%s/missing.cu", tmpdir);
    assert_int_equal(cudag__file_read(p, 100, CUDAG__FILE_READ, &a,
                                      "module 'm'", at, &fb, NULL, &e),
                     CUDAG_EIO);
    snprintf(want, sizeof want,
             "g.yaml:3:9: module 'm': cannot read '%s': No such file or "
             "directory", p);
    assert_string_equal(where(&e), want);
    assert_int_equal(cudag__file_read(tmpdir, 100, CUDAG__FILE_MAP, NULL,
                                      "module 'm'", at, &fb, NULL, &e),
                     CUDAG_EIO);
    assert_non_null(strstr(e.message, "not a regular file"));
    /* A header over the limit is an error at its #include line. */
    put_file("big.cuh", "");
    snprintf(p, sizeof p, "%s/big.cuh", tmpdir);
    assert_int_equal(truncate(p, CUDAG__MAX_SOURCE_BYTES + 1), 0);
    static const char src[] = "// one\n#include \"big.cuh\"\n";
    cudag__src_text main = {"m.cu", src, strlen(src)}, *t;
    uint32_t n;
    assert_int_equal(cudag__src_gather(&a, &main, tmpdir, NULL, NULL, NULL, 0,
                                       &t, &n, &e),
                     CUDAG_ELIMIT);
    assert_string_equal(e.file, "m.cu");
    assert_int_equal(e.line, 2);
    assert_non_null(strstr(e.message, "header 'big.cuh'"));
    cudag__arena_free(&a);
}

/* Every allocation of reading, resolving and gathering fails in turn:
 * CUDAG_ENOMEM each time, and nothing outside the arena is left. */
static void srcsig_oom_sweep(void **state)
{
    (void)state;
    put_file("h.cuh", "__device__ void w() { asm(\"griddepcontrol.wait;\"); }\n");
    static const char src[] = "#include \"h.cuh\"\n"
                              "#define R float\n"
                              "typedef int I;\n"
                              "template <typename T> __global__ void t(T* x, I n) { w(); }\n"
                              "extern \"C\" __global__ void k(R* x, int n = 1) {}\n";
    long base = cudag__alloc_live();
    for (long n = 1;; n++) {
        cudag__arena a = {0};
        cudag__src_text main = {"m.cu", src, strlen(src)}, *t;
        uint32_t nt;
        cudag__src_decls d;
        cudag__src_sig s;
        cudag_error e;
        cudag__alloc_fail_after(n);
        int rc = cudag__src_gather(&a, &main, tmpdir, NULL, NULL, NULL, 0, &t,
                                   &nt, &e);
        if (rc == CUDAG_OK)
            rc = cudag__src_read(&a, t, nt, NULL, &d, &e);
        if (rc == CUDAG_OK)
            rc = cudag__src_signature(&a, &d, cudag__src_find(&d, "t"),
                                      "t<float>", &s, &e);
        long made = cudag__alloc_fail_after(-1);
        bool waits = rc == CUDAG_OK && (d.k[0].waits || d.k[1].waits);
        cudag__arena_free(&a);
        assert_int_equal(cudag__alloc_live(), base);
        if (rc == CUDAG_OK) {
            assert_true(made < n);   /* no failure was left to inject */
            assert_int_equal(s.nparams, 2);
            assert_true(waits);
            break;
        }
        if (rc != CUDAG_ENOMEM)
            fail_msg("allocation %ld: %s", n, where(&e));
        assert_int_equal(e.code, CUDAG_ENOMEM);
    }
}

static int record_include(void *user, const char *name, size_t len,
                          bool angled, uint32_t line)
{
    char *seen = user;
    size_t o = strlen(seen);
    snprintf(seen + o, 256 - o, "%.*s/%d/%u;", (int)len, name, angled, line);
    return 0;
}

static void srcsig_lists_includes(void **state)
{
    (void)state;
    static const char src[] = "#include \"a.h\"\n"
                              "  #  include <b/c.h> // c\n"
                              "/* #include \"no.h\" */\n"
                              "const char *s = \"#include <no.h>\";\n"
                              "#define X \\\n  #include \"no.h\"\n"
                              "#include \"d.h\"\n";
    char seen[256] = "";
    assert_int_equal(cudag__src_includes(src, strlen(src), record_include,
                                         seen),
                     0);
    assert_string_equal(seen, "a.h/0/1;b/c.h/1/2;d.h/0/7;");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(srcsig_ctype_table),
        cmocka_unit_test(srcsig_reads_real_kernels),
        cmocka_unit_test(srcsig_refusals_are_precise),
        cmocka_unit_test(srcsig_templates_macros_aliases),
        cmocka_unit_test(srcsig_finds_waits),
        cmocka_unit_test(srcsig_lists_includes),
        cmocka_unit_test(srcsig_gathers_headers),
        cmocka_unit_test(srcsig_gather_leaves_the_toolkit_to_nvrtc),
        cmocka_unit_test(srcsig_file_limits),
        cmocka_unit_test(srcsig_file_read_and_map),
        cmocka_unit_test(srcsig_oom_sweep),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
