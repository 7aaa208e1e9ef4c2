/* test_compile.c — source modules compiled with NVRTC on the CPU, no GPU
 * needed (src/code/compile.c, src/lib/nvrtc.c): a cubin for the exact device, names
 * lowered, NVRTC's errors at their place in the source, the compile cache
 * (hits, misses on any changed input, damaged entries rebuilt, an
 * unwritable directory, two processes at once), every NVRTC call failing in
 * turn and every allocation failing in turn with nothing leaked.  Skips,
 * saying why, where libnvrtc.so.13 cannot be opened. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "lib/nvrtc.h"
#include "code/binary.h"
#include "code/compile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[256];
static bool have_nvrtc;
static char no_nvrtc[1100];

static int setup(void **state)
{
    (void)state;
    if (tmkdir_in(tmp, sizeof tmp, "compile") != 0)
        return -1;
    const cudag__rtc *rtc;
    cudag_error e;
    have_nvrtc = cudag__nvrtc(&rtc, &e) == CUDAG_OK;
    if (!have_nvrtc)
        snprintf(no_nvrtc, sizeof no_nvrtc, "%s", e.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return trm_tree(tmp);
}

#define NEED_NVRTC()                                                           \
    do {                                                                       \
        if (!have_nvrtc) {                                                     \
            print_message("skipped: %s\n", no_nvrtc);                          \
            skip();                                                            \
        }                                                                      \
    } while (0)

static void put_file(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A request for text named path, in the temporary directory, for sm_90a,
 * caching into tmp/<cache>. */
static cudag__compile_req req(const char *path, const char *text,
                              const char *cache)
{
    static char cdir[400];
    snprintf(cdir, sizeof cdir, "%s/%s", tmp, cache);
    cudag__compile_req q;
    memset(&q, 0, sizeof q);
    q.module = "mine";
    q.pos = (cudag__pos){"g.yaml", 3, 9};
    q.path = path;
    q.text = text;
    q.len = strlen(text);
    q.dir = tmp;
    q.cc_major = 9;
    q.cc_minor = 0;
    q.cache_dir = cdir;
    return q;
}

/* Compiles with diagnostics added to *td; returns the status. */
static int compile(const cudag__compile_req *q, cudag__compiled *c, tdiag *td)
{
    cudag_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.diag = tdiag_fn;
    o.diag_user = td;
    cudag_error e;
    cudag__diag d;
    cudag__diag_init(&d, &o, &e);
    int rc = cudag__compile(q, c, &d);
    int fin = cudag__diag_finish(&d);
    if (rc == CUDAG_OK)
        assert_int_equal(fin, CUDAG_OK);
    return rc;
}

static char *fixture(void)
{
    FILE *f = fopen(tsrc("tests/data/code/user.cu"), "rb");
    assert_non_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void compile_arch_names(void **state)
{
    (void)state;
    static const struct {
        int major, minor;
        const char *arch;
    } rows[] = {{9, 0, "sm_90a"}, {10, 0, "sm_100a"}, {12, 0, "sm_120a"},
                {8, 6, "sm_86"}, {8, 0, "sm_80"}};
    char buf[32];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cudag__compile_arch(rows[i].major, rows[i].minor, buf, sizeof buf);
        assert_string_equal(buf, rows[i].arch);
    }
}

static void compile_to_cubin_without_gpu(void **state)
{
    (void)state;
    NEED_NVRTC();
    static const char *const exprs[] = {"axpy<float>"};
    cudag__compile_req q = req("user.cu", fixture(), "c1");
    q.exprs = exprs;
    q.nexprs = 1;
    q.no_cache = true;
    cudag__compiled c;
    tdiag td = {0};
    assert_int_equal(compile(&q, &c, &td), CUDAG_OK);
    assert_false(c.cached);
    assert_int_equal(td.nerr + td.nwarn, 0);
    assert_int_equal(cudag__code_sniff(c.cubin, c.cubin_len, NULL),
                     CUDAG__CODE_CUBIN);
    assert_string_equal(c.lowered[0], "_Z4axpyIfEvPT_PKS0_S0_i");
    /* The machine code is for sm_90a: the ELF's flags carry the SM. */
    const uint8_t *b = c.cubin;
    uint32_t flags;
    memcpy(&flags, b + 48, 4);
    assert_int_equal(flags >> 8 & 0xff, 90);
    cudag__arena a = {0};
    cudag__code_info ci, pi;
    assert_int_equal(cudag__code_read(&a, c.cubin, c.cubin_len, &ci, NULL),
                     CUDAG_OK);
    assert_int_equal(cudag__code_read(&a, c.ptx, c.ptx_len, &pi, NULL),
                     CUDAG_OK);
    assert_int_equal(pi.kind, CUDAG__CODE_PTX);
    const cudag__code_entry *e = cudag__code_find(&ci, "scale");
    assert_non_null(e);
    assert_int_equal(e->nparams, 3);
    /* The wait comes from the built-in <cudag/pdl.cuh>. */
    assert_int_equal(cudag__code_find(&pi, "scale")->waits, 1);
    assert_int_equal(cudag__code_find(&pi, "tiny")->waits, 0);
    assert_non_null(cudag__code_find(&ci, c.lowered[0]));
    cudag__arena_free(&a);
    cudag__compiled_free(&c);
}

static void compile_errors_are_positioned(void **state)
{
    (void)state;
    NEED_NVRTC();
    mkdir(strcat(strcpy((char[300]){0}, tmp), "/inc"), 0755);
    put_file("inc/h.cuh", "#pragma once\n"
                          "__device__ int hh() { return undefined_x; }\n");
    static const char src[] = "#include \"inc/h.cuh\"\n"
                              "extern \"C\" __global__ void k(float* x) {\n"
                              "    x[0] = foo + 1;\n"
                              "}\n";
    cudag__compile_req q = req("bad.cu", src, "c2");
    cudag__compiled c;
    tdiag td = {0};
    assert_int_equal(compile(&q, &c, &td), CUDAG_ESYNTAX);
    assert_null(c.cubin);
    char want[1200];
    snprintf(want, sizeof want,
             "%s/inc/h.cuh:2:30: error: identifier \"undefined_x\" is "
             "undefined\n"
             "bad.cu:3:12: error: identifier \"foo\" is undefined\n"
             "g.yaml:3:9: note: in module 'mine' (bad.cu), compiled by NVRTC "
             "%%d.%%d for sm_90a\n",
             tmp);
    const cudag__rtc *rtc;
    assert_int_equal(cudag__nvrtc(&rtc, NULL), CUDAG_OK);
    char exact[1300];
    snprintf(exact, sizeof exact, "%s/inc/h.cuh:2:30: error: identifier \"undefined_x\" is undefined\nbad.cu:3:12: error: identifier \"foo\" is undefined\ng.yaml:3:9: note: in module 'mine' (bad.cu), compiled by NVRTC %d.%d for sm_90a\n", tmp, rtc->major, rtc->minor);
    (void)want;
    assert_string_equal(td.text, exact);
    assert_int_equal(td.nerr, 2);
    /* A missing header is NVRTC's error, at the #include. */
    static const char miss[] = "// first\n#include \"nothere.cuh\"\n";
    q = req("miss.cu", miss, "c2");
    tdiag t2 = {0};
    assert_int_equal(compile(&q, &c, &t2), CUDAG_ESYNTAX);
    assert_diag_contains(&t2, "miss.cu:2:");
    assert_diag_contains(&t2, ": error: cannot open source file \"nothere.cuh\"");
    /* A name NVRTC cannot lower. */
    static const char *const exprs[] = {"nothere<float>"};
    q = req("user.cu", fixture(), "c2");
    q.exprs = exprs;
    q.nexprs = 1;
    tdiag t3 = {0};
    assert_int_equal(compile(&q, &c, &t3), CUDAG_ESYNTAX);
    assert_diag_contains(&t3, "g.yaml:3:9: error: a kernel's symbol is not a "
                              "name NVRTC can resolve: ");
}

/* A module that includes CUDA's own headers compiles as under nvcc: CUDA 13
 * keeps libcu++ and CUB (CCCL) in include/cccl, which <cooperative_groups.h>
 * itself includes (<cuda/std/type_traits>).  The kernel uses a thread-block
 * cluster with distributed shared memory (cg::this_cluster(),
 * map_shared_rank), cub::BlockReduce and cuda::std, and its code shows the
 * cluster's instructions. */
static void compile_sees_cccl_headers(void **state)
{
    (void)state;
    NEED_NVRTC();
    const cudag__rtc *rtc;
    assert_int_equal(cudag__nvrtc(&rtc, NULL), CUDAG_OK);
    if (!rtc->cccl_dir[0]) {
        print_message("skipped: NVRTC has no toolkit include/cccl beside it "
                      "(include dir '%s')\n",
                      rtc->include_dir);
        skip();
    }
    static const char src[] =
        "#include <cooperative_groups.h>\n"
        "#include <cub/block/block_reduce.cuh>\n"
        "#include <cuda/std/type_traits>\n"
        "#include <cuda/std/limits>\n"
        "#include <cudag/pdl.cuh>\n"
        "namespace cg = cooperative_groups;\n"
        "extern \"C\" __global__ void dsmem_sum(const float *x, float *y)\n"
        "{\n"
        "    static_assert(cuda::std::is_same<float,\n"
        "                  cuda::std::remove_cv_t<const float>>::value, \"\");\n"
        "    using reduce = cub::BlockReduce<float, 128>;\n"
        "    __shared__ typename reduce::TempStorage tmp;\n"
        "    __shared__ float part;\n"
        "    cg::cluster_group cluster = cg::this_cluster();\n"
        "    cudag_pdl_wait();\n"
        "    float s = reduce(tmp).Sum(x[blockIdx.x * 128 + threadIdx.x]);\n"
        "    if (threadIdx.x == 0) part = s;\n"
        "    cluster.sync();\n"
        "    if (threadIdx.x == 0) {\n"
        "        float t = cuda::std::numeric_limits<float>::lowest() * 0;\n"
        "        for (unsigned r = 0; r < cluster.num_blocks(); r++)\n"
        "            t += *cluster.map_shared_rank(&part, r);\n"
        "        y[blockIdx.x] = t;\n"
        "    }\n"
        "    cluster.sync();\n"
        "}\n";
    cudag__compile_req q = req("cccl.cu", src, "c9");
    q.no_cache = true;
    cudag__compiled c;
    tdiag td = {0};
    int rc = compile(&q, &c, &td);
    if (rc != CUDAG_OK)
        print_error("%s", td.text);
    assert_int_equal(rc, CUDAG_OK);
    assert_int_equal(td.nerr + td.nwarn, 0);
    cudag__arena a = {0};
    cudag__code_info pi;
    assert_int_equal(cudag__code_read(&a, c.ptx, c.ptx_len, &pi, NULL),
                     CUDAG_OK);
    const cudag__code_entry *e = cudag__code_find(&pi, "dsmem_sum");
    assert_non_null(e);
    assert_int_equal(e->nparams, 2);
    assert_int_equal(e->waits, 1);
    /* A peer's shared memory is mapped (mapa) and the cluster synchronised
     * (barrier.cluster): the cluster API compiled for real. */
    assert_non_null(strstr(c.ptx, "mapa"));
    assert_non_null(strstr(c.ptx, "barrier.cluster"));
    cudag__arena_free(&a);
    cudag__compiled_free(&c);
}

/* Number of entries in a cache directory. */
static unsigned entries(const char *cache)
{
    char cmd[500];
    snprintf(cmd, sizeof cmd, "ls '%s/%s' 2>/dev/null | grep -c cudagc",
             tmp, cache);
    FILE *p = popen(cmd, "r");
    unsigned n = 0;
    if (p) {
        if (fscanf(p, "%u", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

static void compile_cache_hits_and_misses(void **state)
{
    (void)state;
    NEED_NVRTC();
    put_file("dep.cuh", "#define SCALE 2.0f\n");
    static const char src[] = "#include \"dep.cuh\"\n"
                              "extern \"C\" __global__ void k(float* x) "
                              "{ x[0] *= SCALE; }\n";
    cudag__compile_req q = req("k.cu", src, "c3");
    cudag__compiled c1, c2;
    tdiag td = {0};
    assert_int_equal(compile(&q, &c1, &td), CUDAG_OK);
    assert_false(c1.cached);
    assert_int_equal(entries("c3"), 1);
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_true(c2.cached);
    assert_int_equal(c1.cubin_len, c2.cubin_len);
    assert_memory_equal(c1.cubin, c2.cubin, c1.cubin_len);
    assert_string_equal(c1.ptx, c2.ptx);
    cudag__compiled_free(&c2);
    /* Each input changes the key: a header, an option, std, the arch. */
    put_file("dep.cuh", "#define SCALE 3.0f\n");
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    assert_int_equal(entries("c3"), 2);
    cudag__compiled_free(&c2);
    static const char *const opts[] = {"-DUNUSED=1", NULL};
    q.options = opts;
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    cudag__compiled_free(&c2);
    q.std = "c++20";
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    cudag__compiled_free(&c2);
    q.cc_major = 8;
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    cudag__compiled_free(&c2);
    assert_int_equal(entries("c3"), 5);
    /* Every entry truncated: misses, compiled and written again. */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/c3/*.cudagc; do head -c 100 \"$f\" > \"$f.t\" && "
             "mv \"$f.t\" \"$f\"; done", tmp);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    cudag__compiled_free(&c2);
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_true(c2.cached);
    cudag__compiled_free(&c2);
    /* --no-cache neither reads nor writes. */
    q.no_cache = true;
    q.cc_major = 7;
    q.cc_minor = 5;
    assert_int_equal(compile(&q, &c2, &td), CUDAG_OK);
    assert_false(c2.cached);
    assert_int_equal(entries("c3"), 5);
    cudag__compiled_free(&c2);
    cudag__compiled_free(&c1);
    assert_int_equal(td.nerr + td.nwarn, 0);
}

static void compile_unwritable_cache_warns_once(void **state)
{
    (void)state;
    NEED_NVRTC();
    put_file("afile", "");
    static const char src[] = "extern \"C\" __global__ void k(int n) {}\n";
    cudag__compile_req q = req("k.cu", src, "afile/cache");
    bool warned = false;
    q.cache_warned = &warned;
    tdiag td = {0};
    cudag__compiled c;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(compile(&q, &c, &td), CUDAG_OK);
        assert_false(c.cached);
        cudag__compiled_free(&c);
    }
    assert_int_equal(td.nwarn, 1);
    char want[700];
    snprintf(want, sizeof want,
             "g.yaml:3:9: warning: cannot write the compile cache in "
             "'%s/afile/cache': Not a directory; compiling every time "
             "(--no-cache silences this)\n", tmp);
    assert_string_equal(td.text, want);
}

static void compile_two_processes_at_once(void **state)
{
    (void)state;
    NEED_NVRTC();
    static const char src[] = "extern \"C\" __global__ void k(float *x, int n)"
                              " { if (n) x[0] = 1; }\n";
    pid_t p[2];
    for (int i = 0; i < 2; i++) {
        p[i] = fork();
        assert_true(p[i] >= 0);
        if (p[i] == 0) {
            cudag__compile_req q = req("k.cu", src, "c4");
            cudag__compiled c;
            tdiag td = {0};
            int rc = compile(&q, &c, &td);
            bool ok = rc == CUDAG_OK && c.cubin_len > 0 && td.nwarn == 0;
            cudag__compiled_free(&c);
            _exit(ok ? 0 : 1);
        }
    }
    for (int i = 0; i < 2; i++) {
        int st;
        assert_int_equal(waitpid(p[i], &st, 0), p[i]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_int_equal(entries("c4"), 1);
    cudag__compile_req q = req("k.cu", src, "c4");
    cudag__compiled c;
    tdiag td = {0};
    assert_int_equal(compile(&q, &c, &td), CUDAG_OK);
    assert_true(c.cached);
    cudag__compiled_free(&c);
}

/* Without NVRTC, one sentence that names the fixes.  Run in a fresh
 * process (this program again, with --no-nvrtc): a process opens NVRTC
 * once, and this one has. */
static int no_nvrtc_child(void)
{
    setenv("CUDAG_NVRTC", "/nonexistent/libnvrtc.so.13", 1);
    if (tmkdir_in(tmp, sizeof tmp, "compile-child") != 0)
        return 1;
    cudag__compile_req q = req("k.cu", "extern \"C\" __global__ void k() {}",
                               "c7");
    q.no_cache = true;
    cudag__compiled c;
    tdiag td = {0};
    int rc = compile(&q, &c, &td);
    trm_tree(tmp);
    bool ok = rc == CUDAG_ENOTSUP &&
              strstr(td.text, "g.yaml:3:9: error: module 'mine': NVRTC not "
                              "found (libnvrtc.so.13): ") &&
              strstr(td.text, "CUDA source modules need it: install the CUDA "
                              "toolkit or NVIDIA's nvidia-cuda-nvrtc wheel, or "
                              "set CUDA_HOME; or compile the module with nvcc "
                              "(nvcc -fatbin -arch=sm_90 FILE.cu -o "
                              "FILE.fatbin) and list the fatbin instead");
    if (!ok)
        fprintf(stderr, "got %d: %s", rc, td.text);
    return ok ? 0 : 1;
}

static char self[4096];

static void compile_without_nvrtc_names_the_fix(void **state)
{
    (void)state;
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        execl(self, self, "--no-nvrtc", (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- NVRTC failing --------------------------------------------------------- */

static const cudag__rtc *real;
static int calls, fail_at, live_programs;

/* Counts the call; true when this one must fail. */
static bool trip(void) { return ++calls == fail_at; }

#define FAULT 7         /* NVRTC_ERROR_BUILTIN_OPERATION_FAILURE */

static cudag__nvrtc_result f_create(cudag__nvrtc_program *p, const char *s,
                                    const char *n, int k,
                                    const char *const *h, const char *const *hn)
{
    if (trip())
        return FAULT;
    cudag__nvrtc_result r = real->nvrtcCreateProgram(p, s, n, k, h, hn);
    live_programs += r == 0;
    return r;
}
static cudag__nvrtc_result f_destroy(cudag__nvrtc_program *p)
{
    /* The program is freed even when the call is made to fail, so that
     * only the library's own leaks show. */
    bool t = trip();
    cudag__nvrtc_result r = real->nvrtcDestroyProgram(p);
    live_programs -= r == 0;
    return t ? FAULT : r;
}
#define WRAP(name, ...)                                                        \
    if (trip())                                                                \
        return FAULT;                                                          \
    return real->name(__VA_ARGS__)
static cudag__nvrtc_result f_addname(cudag__nvrtc_program p, const char *e)
{ WRAP(nvrtcAddNameExpression, p, e); }
static cudag__nvrtc_result f_compile(cudag__nvrtc_program p, int n,
                                     const char *const *o)
{ WRAP(nvrtcCompileProgram, p, n, o); }
static cudag__nvrtc_result f_logsize(cudag__nvrtc_program p, size_t *n)
{ WRAP(nvrtcGetProgramLogSize, p, n); }
static cudag__nvrtc_result f_log(cudag__nvrtc_program p, char *l)
{ WRAP(nvrtcGetProgramLog, p, l); }
static cudag__nvrtc_result f_cubinsize(cudag__nvrtc_program p, size_t *n)
{ WRAP(nvrtcGetCUBINSize, p, n); }
static cudag__nvrtc_result f_cubin(cudag__nvrtc_program p, char *b)
{ WRAP(nvrtcGetCUBIN, p, b); }
static cudag__nvrtc_result f_ptxsize(cudag__nvrtc_program p, size_t *n)
{ WRAP(nvrtcGetPTXSize, p, n); }
static cudag__nvrtc_result f_ptx(cudag__nvrtc_program p, char *b)
{ WRAP(nvrtcGetPTX, p, b); }
static cudag__nvrtc_result f_lowered(cudag__nvrtc_program p, const char *e,
                                     const char **l)
{ WRAP(nvrtcGetLoweredName, p, e, l); }

static cudag__rtc faulty(void)
{
    cudag__rtc t = *real;
    t.nvrtcCreateProgram = f_create;
    t.nvrtcDestroyProgram = f_destroy;
    t.nvrtcAddNameExpression = f_addname;
    t.nvrtcCompileProgram = f_compile;
    t.nvrtcGetProgramLogSize = f_logsize;
    t.nvrtcGetProgramLog = f_log;
    t.nvrtcGetCUBINSize = f_cubinsize;
    t.nvrtcGetCUBIN = f_cubin;
    t.nvrtcGetPTXSize = f_ptxsize;
    t.nvrtcGetPTX = f_ptx;
    t.nvrtcGetLoweredName = f_lowered;
    return t;
}

/* Makes each NVRTC call of one compile fail in turn, for a source that
 * compiles (with a name to lower) and one that does not (the log path). */
static void compile_every_nvrtc_call_fails(void **state)
{
    (void)state;
    NEED_NVRTC();
    assert_int_equal(cudag__nvrtc(&real, NULL), CUDAG_OK);
    cudag__rtc t = faulty();
    static const char *const exprs[] = {"axpy<float>"};
    static const char broken[] = "extern \"C\" __global__ void k() { x; }\n";
    for (int variant = 0; variant < 2; variant++) {
        cudag__compile_req q = req("k.cu", variant ? broken : fixture(), "c5");
        q.no_cache = true;
        if (!variant) {
            q.exprs = exprs;
            q.nexprs = 1;
        }
        cudag__nvrtc_override(&t);
        int total = 0;
        for (fail_at = 0;; fail_at++) {
            calls = 0;
            long base = cudag__alloc_live();
            cudag__compiled c;
            tdiag td = {0};
            int rc = compile(&q, &c, &td);
            bool had_code = c.cubin != NULL;
            cudag__compiled_free(&c);
            assert_int_equal(cudag__alloc_live(), base);
            assert_int_equal(live_programs, 0);
            if (fail_at == 0) {
                total = calls;
                assert_int_equal(rc, variant ? CUDAG_ESYNTAX : CUDAG_OK);
                continue;
            }
            if (fail_at > total)
                break;
            assert_int_not_equal(rc, CUDAG_OK);
            assert_false(had_code);
            if (rc != CUDAG_ESYNTAX && rc != CUDAG_EUNKNOWN)
                assert_diag_contains(&td, "g.yaml:3:9: error: module 'mine': ");
        }
        cudag__nvrtc_override(NULL);
        assert_true(total >= (variant ? 5 : 9));
    }
}

/* Every allocation of a compile fails in turn, with the result in the cache
 * and without: ENOMEM, nothing left. */
static void compile_oom_sweep(void **state)
{
    (void)state;
    NEED_NVRTC();
    static const char *const exprs[] = {"axpy<float>"};
    for (int cached = 0; cached < 2; cached++) {
        cudag__compile_req q = req("user.cu", fixture(), "c6");
        q.exprs = exprs;
        q.nexprs = 1;
        q.no_cache = !cached;
        cudag__compiled c;
        tdiag td = {0};
        if (cached) {
            assert_int_equal(compile(&q, &c, &td), CUDAG_OK);
            cudag__compiled_free(&c);
        }
        long base = cudag__alloc_live();
        for (long n = 1;; n++) {
            cudag__alloc_fail_after(n);
            int rc = compile(&q, &c, &td);
            long made = cudag__alloc_fail_after(-1);
            if (rc == CUDAG_OK) {
                assert_true(made < n);
                assert_int_equal(c.cached, cached);
                cudag__compiled_free(&c);
                break;
            }
            assert_int_equal(rc, CUDAG_ENOMEM);
            assert_null(c.block);
            assert_int_equal(cudag__alloc_live(), base);
        }
        assert_int_equal(cudag__alloc_live(), base);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--no-nvrtc") == 0)
        return no_nvrtc_child();
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compile_arch_names),
        cmocka_unit_test(compile_to_cubin_without_gpu),
        cmocka_unit_test(compile_errors_are_positioned),
        cmocka_unit_test(compile_sees_cccl_headers),
        cmocka_unit_test(compile_cache_hits_and_misses),
        cmocka_unit_test(compile_unwritable_cache_warns_once),
        cmocka_unit_test(compile_two_processes_at_once),
        cmocka_unit_test(compile_without_nvrtc_names_the_fix),
        cmocka_unit_test(compile_every_nvrtc_call_fails),
        cmocka_unit_test(compile_oom_sweep),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
