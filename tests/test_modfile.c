/* test_modfile.c — kernel code read on the CPU (src/code/binary.c): each
 * format sniffed, entry points and parameter sizes from a cubin, a fatbin
 * and PTX (tests/data/code/, built from user.cu), griddepcontrol.wait found
 * in PTX through calls, and damaged images read without a crash or a leak. */
#include "common.h"
#include "cudag.h"
#include "base/alloc.h"
#include "code/binary.h"

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *rel, size_t *len)
{
    FILE *f = fopen(tsrc(rel), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

static void modfile_sniffs_each_kind(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        cudag__code_kind kind;
    } rows[] = {
        {"tests/data/code/user_sm90.cubin", CUDAG__CODE_CUBIN},
        {"tests/data/code/user.fatbin", CUDAG__CODE_FATBIN},
        {"tests/data/code/user.ptx", CUDAG__CODE_PTX},
        {"tests/data/code/user.cu", CUDAG__CODE_SOURCE},
        {"tests/data/code/README.md", CUDAG__CODE_OTHER},
        {"docs/img/repeat.png", CUDAG__CODE_OTHER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n;
        uint8_t *b = slurp(rows[i].file, &n);
        cudag__code_kind k = cudag__code_sniff(b, n, rows[i].file);
        if (k != rows[i].kind)
            fail_msg("%s sniffed as %s", rows[i].file, cudag__code_kind_name(k));
        free(b);
    }
    /* Source held in memory has no name to go by. */
    assert_int_equal(cudag__code_sniff("__global__ void k() {}", 22, NULL),
                     CUDAG__CODE_SOURCE);
    /* Not text: a NUL byte, invalid UTF-8, nothing at all. */
    assert_int_equal(cudag__code_sniff("int x;\0", 7, "k.cu"), CUDAG__CODE_OTHER);
    assert_int_equal(cudag__code_sniff("int \xff x;", 9, "k.cu"), CUDAG__CODE_OTHER);
    assert_int_equal(cudag__code_sniff("", 0, "k.cu"), CUDAG__CODE_OTHER);
    assert_int_equal(cudag__code_sniff("caf\xc3\xa9", 5, "k.cu"),
                     CUDAG__CODE_SOURCE);
    /* A host object (nvcc -c): ELF for another machine. */
    uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    elf[18] = 62;       /* EM_X86_64 */
    assert_int_equal(cudag__code_sniff(elf, 64, "k.o"), CUDAG__CODE_HOSTOBJ);
    assert_string_equal(cudag__code_kind_name(CUDAG__CODE_HOSTOBJ),
                        "host object file");
}

/* The entries every image of user.cu must list. */
static void expect_user_entries(const cudag__code_info *c, int waits_known)
{
    static const struct {
        const char *name;
        uint32_t n;
        uint32_t sizes[4];
        int waits;
    } want[] = {
        {"scale", 3, {8, 4, 4}, 1},
        {"_Z4axpyIfEvPT_PKS0_S0_i", 4, {8, 8, 4, 4}, 0},
        {"tiny", 3, {2, 8, 8}, 0},
    };
    assert_int_equal(c->n, 3);
    assert_true(c->complete);
    for (size_t i = 0; i < 3; i++) {
        const cudag__code_entry *e = cudag__code_find(c, want[i].name);
        assert_non_null(e);
        assert_int_equal(e->nparams, want[i].n);
        for (uint32_t p = 0; p < want[i].n; p++)
            assert_int_equal(e->sizes[p], want[i].sizes[p]);
        assert_int_equal(e->waits, waits_known ? want[i].waits : -1);
    }
    assert_null(cudag__code_find(c, "axpy"));
}

static void modfile_lists_entries(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int waits_known;
    } rows[] = {
        {"tests/data/code/user_sm90.cubin", 0},
        {"tests/data/code/user.fatbin", 0},    /* its PTX is compressed */
        {"tests/data/code/user_plain.fatbin", 1},
        {"tests/data/code/user.ptx", 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n;
        uint8_t *b = slurp(rows[i].file, &n);
        cudag__arena a = {0};
        cudag__code_info c;
        cudag_error e;
        assert_int_equal(cudag__code_read(&a, b, n, &c, &e), CUDAG_OK);
        expect_user_entries(&c, rows[i].waits_known);
        cudag__arena_free(&a);
        free(b);
    }
}

static void modfile_ptx_waits_through_calls(void **state)
{
    (void)state;
    static const char ptx[] =
        "// comment .entry fake(\n"
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".func inner() { griddepcontrol.wait; ret; }\n"
        ".func (.param .b32 r) outer(.param .b32 a) {\n"
        "  call.uni inner, ();\n ret; }\n"
        ".visible .entry viacall(.param .u64 .ptr .global .align 4 p,\n"
        "    .param .align 2 .b8 h[2], .param .f16x2 v) {\n"
        "  call.uni (%r1), outer, (%r2);\n  ret;\n}\n"
        ".visible .entry named_only() {\n"
        "  // names outer without calling it: mov.u64 %rd1, outer;\n"
        "  ret;\n}\n"
        ".entry bare { griddepcontrol.launch_dependents; ret; }\n";
    cudag__arena a = {0};
    cudag__code_info c;
    assert_int_equal(cudag__code_read(&a, ptx, strlen(ptx), &c, NULL), CUDAG_OK);
    assert_int_equal(c.kind, CUDAG__CODE_PTX);
    assert_int_equal(c.n, 3);
    const cudag__code_entry *e = cudag__code_find(&c, "viacall");
    assert_int_equal(e->waits, 1);
    assert_int_equal(e->nparams, 3);
    assert_int_equal(e->sizes[0], 8);
    assert_int_equal(e->sizes[1], 2);
    assert_int_equal(e->sizes[2], 4);
    e = cudag__code_find(&c, "named_only");
    assert_int_equal(e->waits, 0);
    assert_int_equal(e->nparams, 0);
    e = cudag__code_find(&c, "bare");
    assert_int_equal(e->waits, 0);
    assert_int_equal(e->nparams, 0);
    cudag__arena_free(&a);
}

/* Every prefix of each image, and images with bytes flipped: read without a
 * crash (the sanitizers and valgrind watch), nothing left allocated. */
static void modfile_damaged_images(void **state)
{
    (void)state;
    static const char *const files[] = {
        "tests/data/code/user_sm90.cubin", "tests/data/code/user_plain.fatbin",
        "tests/data/code/user.ptx"};
    long base = cudag__alloc_live();
    uint64_t seed = tseed();
    for (size_t f = 0; f < 3; f++) {
        size_t n;
        uint8_t *b = slurp(files[f], &n);
        for (size_t len = 0; len <= n; len += 1 + len / 64) {
            cudag__arena a = {0};
            cudag__code_info c;
            assert_int_equal(cudag__code_read(&a, b, len, &c, NULL), CUDAG_OK);
            for (uint32_t i = 0; i < c.n; i++)
                assert_true(c.e[i].nparams == CUDAG__CODE_UNKNOWN ||
                            c.e[i].nparams <= 256);
            cudag__arena_free(&a);
        }
        uint8_t *m = malloc(n);
        assert_non_null(m);
        for (int round = 0; round < 300; round++) {
            memcpy(m, b, n);
            for (int k = 0; k < 8; k++)
                m[(size_t)trand(&seed, 0, (double)n)] =
                    (uint8_t)trand(&seed, 0, 256);
            cudag__arena a = {0};
            cudag__code_info c;
            assert_int_equal(cudag__code_read(&a, m, n, &c, NULL), CUDAG_OK);
            cudag__arena_free(&a);
        }
        free(m);
        free(b);
    }
    assert_int_equal(cudag__alloc_live(), base);
}

static void modfile_oom_sweep(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = slurp("tests/data/code/user_plain.fatbin", &n);
    long base = cudag__alloc_live();
    for (long k = 1;; k++) {
        cudag__arena a = {0};
        cudag__code_info c;
        cudag_error e;
        cudag__alloc_fail_after(k);
        int rc = cudag__code_read(&a, b, n, &c, &e);
        long made = cudag__alloc_fail_after(-1);
        if (rc == CUDAG_OK) {
            assert_true(made < k);
            expect_user_entries(&c, 1);
            cudag__arena_free(&a);
            break;
        }
        assert_int_equal(rc, CUDAG_ENOMEM);
        assert_int_equal(c.n, 0);
        cudag__arena_free(&a);
        assert_int_equal(cudag__alloc_live(), base);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(modfile_sniffs_each_kind),
        cmocka_unit_test(modfile_lists_entries),
        cmocka_unit_test(modfile_ptx_waits_through_calls),
        cmocka_unit_test(modfile_damaged_images),
        cmocka_unit_test(modfile_oom_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
