/* common.h — what every CMocka suite shares: a diagnostic collector, loading
 * YAML from a string, and paths into the source and build trees. */
#ifndef CUDAG_TEST_COMMON_H
#define CUDAG_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cudag.h"
#include "ir/graph.h"
#include "front/load.h"

/* Every diagnostic, formatted as "file:line:col: error: message\n". */
typedef struct tdiag {
    char text[1 << 16];
    size_t len;
    int nerr, nwarn;
} tdiag;

void tdiag_fn(void *user, const cudag_error *e);

/* Options that send diagnostics to d (may be NULL), with optional defines and
 * the build tree's kernels directory as include directory. */
cudag_options topts(tdiag *d, const char *const *defines);

/* Loads YAML text under the name "t.yaml" (in the current directory);
 * diagnostics go to d.  Returns the status; *g is set on success. */
int tload(const char *yaml, tdiag *d, cudag_graph **g);
int tload_opts(const char *yaml, const char *name, const cudag_options *o,
               cudag_graph **g, cudag_error *err);

/* An absolute path below the source tree (CUDAG_SOURCE_ROOT) or build tree
 * (CUDAG_BUILD_ROOT).  Returns a pointer into one of 8 rotating static
 * buffers. */
const char *tsrc(const char *rel);
const char *tbuild(const char *rel);

/* A fresh directory $TMPDIR/cudag-test-WHAT-XXXXXX (a static buffer, valid
 * until the next call; tmkdir_in writes it into buf and returns -1 where it
 * cannot), removed with everything in it by trm_tree() (0, or -1 with
 * errno); twrite writes text to DIR/NAME, failing the test if it cannot. */
const char *tmkdir(const char *what);
int tmkdir_in(char *buf, size_t size, const char *what);
int trm_tree(const char *dir);
void twrite(const char *dir, const char *name, const char *text);

/* Asserts that the collected text contains `needle`, printing it if not. */
#define assert_diag_contains(d, needle) \
    tassert_contains((d)->text, (needle), __FILE__, __LINE__)
void tassert_contains(const char *hay, const char *needle, const char *file,
                      int line);

/* A random double in [lo, hi) from a xorshift state, and a fresh seed from the
 * clock (printed so a failure can be replayed). */
double trand(uint64_t *state, double lo, double hi);
uint64_t tseed(void);
/* True when the test runs under valgrind (its preload is mapped): a test
 * whose work is a sweep may take a smaller one there. */
bool tunder_valgrind(void);

/* Building graphs through the public API, asserting every call succeeds
 * (the helpers the check, dot and plan suites shared as copies):
 * tnop adds a kernel node running the signature "nop" (which the caller's
 * graph registers) on one block of 256 threads; tedge adds an edge;
 * tcheck_ok runs cudag_check and prints its message if it fails; tok
 * asserts a status is CUDAG_OK, printing the error's name, position and
 * message if not. */
extern const cudag_dim3 TG1, TB256;
void tnop(cudag_graph *g, const char *name);
void tedge(cudag_graph *g, const char *from, const char *to,
           cudag_edge_kind kind);
void tcheck_ok(cudag_graph *g);
void tok(int rc, const cudag_error *e);

/* Runs fn(arg, out, cap) in a child process, for what a process does only
 * once (opening a library), and copies the text it wrote into out into the
 * parent's out.  Fails the test when the child does not exit cleanly. */
void tchild(void (*fn)(void *arg, char *out, size_t cap), void *arg,
            char *out, size_t cap);

#endif
