/* fuzz_srcsig.c — the fuzz harness over what cudag reads from CUDA source
 * and kernel code on the CPU: bytes → the declaration reader
 * (cudag__src_read, then every kernel's signature, templates with invented
 * arguments) and the code reader (cudag__code_sniff, cudag__code_read, as a
 * fatbin, cubin or PTX would be), then the same with one allocation made to
 * fail.  "// define: NAME=VALUE" lines at the top become -D options.
 *
 * Built like fuzz_load.c: a libFuzzer target with -Dfuzz=true and clang,
 * and always a plain program that replays seeds and regressions (test
 * 'fuzz_srcsig_corpus').  Contract checks abort with "contract broken: …":
 * positions point inside the text, a resolved signature has the kernel's
 * parameter count and known types, a failure fills the error, and nothing is
 * left allocated. */
#include "cudag.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "code/binary.h"
#include "code/ctype.h"
#include "code/decls.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static uint32_t count_lines(const uint8_t *p, size_t n)
{
    uint32_t l = 1;
    for (size_t i = 0; i < n; i++)
        l += p[i] == '\n';
    return l;
}

static void check_pos(cudag__pos pos, uint32_t lines, const char *what)
{
    if (pos.line == 0)
        return;
    REQUIRE(pos.file && strcmp(pos.file, "f.cu") == 0,
            "%s: position in file '%s'", what, pos.file ? pos.file : "(null)");
    REQUIRE(pos.line <= lines && pos.col >= 1, "%s: position %u:%u outside "
            "the text's %u lines", what, pos.line, pos.col, lines);
}

/* Up to 8 "// define: NAME=VALUE" lines at the top. */
static void read_defines(const uint8_t *p, size_t n, char buf[8][64],
                         const char *defs[9])
{
    size_t i = 0, k = 0;
    static const char tag[] = "// define: ";
    while (k < 8 && i + sizeof tag - 1 < n &&
           memcmp(p + i, tag, sizeof tag - 1) == 0) {
        size_t s = i + sizeof tag - 1, e = s;
        while (e < n && p[e] != '\n' && e - s < 63)
            e++;
        memcpy(buf[k], p + s, e - s);
        buf[k][e - s] = '\0';
        defs[k] = buf[k];
        k++;
        while (e < n && p[e] != '\n')
            e++;
        i = e + 1;
    }
    defs[k] = NULL;
}

static void run(const uint8_t *data, size_t size, bool failing)
{
    long base = cudag__alloc_live();
    uint32_t lines = count_lines(data, size);
    char dbuf[8][64];
    const char *defs[9];
    read_defines(data, size, dbuf, defs);
    cudag__arena a = {0};
    cudag__src_text t = {"f.cu", (const char *)data, size};
    cudag__src_decls d;
    cudag_error e;
    memset(&e, 0, sizeof e);
    int rc = cudag__src_read(&a, &t, 1, defs, &d, &e);
    REQUIRE(rc == CUDAG_OK || (failing && rc == CUDAG_ENOMEM),
            "src_read returned %d", rc);
    REQUIRE(rc == CUDAG_OK || e.code == rc, "src_read: error value not filled");
    for (uint32_t i = 0; rc == CUDAG_OK && i < d.nk; i++) {
        const cudag__src_kernel *k = &d.k[i];
        REQUIRE(k->name && *k->name, "kernel %u without a name", i);
        REQUIRE(cudag__src_find(&d, k->name) == k, "kernel '%s' not found by "
                "its name", k->name);
        check_pos(k->pos, lines, k->name);
        check_pos(k->refusal_pos, lines, k->name);
        check_pos(k->other_pos, lines, k->name);
        for (uint32_t p = 0; p < k->nparams; p++)
            check_pos(k->params[p].pos, lines, k->name);
        /* A template gets made-up arguments: float, then int. */
        char expr[600];
        if (k->ntparams)
            snprintf(expr, sizeof expr, "%s<float%s>", k->name,
                     k->ntparams > 1 ? ", int" : "");
        cudag__src_sig s;
        int sr = cudag__src_signature(&a, &d, k, k->ntparams ? expr : NULL, &s,
                                      &e);
        if (sr == CUDAG_OK) {
            REQUIRE(s.nparams == k->nparams, "'%s': %u of %u parameters",
                    k->name, s.nparams, k->nparams);
            for (uint32_t p = 0; p < s.nparams; p++) {
                REQUIRE(s.types[p] > CUDAG_TYPE_NONE &&
                        s.types[p] < CUDAG_TYPE_COUNT_, "'%s': bad type",
                        k->name);
                REQUIRE(s.pnames[p] && *s.pnames[p], "'%s': no name", k->name);
            }
        } else {
            REQUIRE(sr == CUDAG_EARGS || (failing && sr == CUDAG_ENOMEM),
                    "'%s': signature returned %d", k->name, sr);
            REQUIRE(e.code == sr && e.message[0], "'%s': error not filled",
                    k->name);
            REQUIRE(sr == CUDAG_ENOMEM || e.line > 0, "'%s': error without "
                    "a position: %s", k->name, e.message);
        }
    }
    cudag__code_info c;
    (void)cudag__code_sniff(data, size, "f.cu");
    rc = cudag__code_read(&a, data, size, &c, &e);
    REQUIRE(rc == CUDAG_OK || (failing && rc == CUDAG_ENOMEM),
            "code_read returned %d", rc);
    for (uint32_t i = 0; rc == CUDAG_OK && i < c.n; i++) {
        REQUIRE(c.e[i].name, "entry %u without a name", i);
        REQUIRE(c.e[i].nparams == CUDAG__CODE_UNKNOWN || c.e[i].nparams <= 256,
                "entry '%s': %u parameters", c.e[i].name, c.e[i].nparams);
        REQUIRE(c.e[i].waits >= -1 && c.e[i].waits <= 1, "entry '%s': waits "
                "%d", c.e[i].name, c.e[i].waits);
    }
    cudag__arena_free(&a);
    REQUIRE(cudag__alloc_live() == base, "%ld allocations leaked",
            cudag__alloc_live() - base);
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void one_input(const uint8_t *data, size_t size)
{
    cudag__alloc_fail_after(-1);
    run(data, size, false);
    long made = cudag__alloc_fail_after(-1);
    if (made > 0) {
        cudag__alloc_fail_after(1 + (long)(fnv(data, size) % (uint64_t)made));
        run(data, size, true);
        cudag__alloc_fail_after(-1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_setup("fuzz_srcsig", NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_input(data, size);
    return 0;
}

#ifndef CUDAG_FUZZ_LIBFUZZER
int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    return fuzz_regress_main(argc, argv, one_input);
}
#endif
