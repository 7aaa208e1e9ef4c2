/* runner.h — what the fuzz harnesses share: failing loudly on a broken
 * contract, and, built as plain programs, the regression runner (every file
 * named on the command line, directories walked in sorted order, through the
 * harness once, under a watchdog). */
#ifndef CUDAG_FUZZ_RUNNER_H
#define CUDAG_FUZZ_RUNNER_H

#include <stddef.h>
#include <stdint.h>

/* Names the harness in messages and sets what to clean up (may be NULL)
 * before aborting; call first. */
void fuzz_setup(const char *name, void (*cleanup)(void));

/* "<name>: contract broken: <message>", the cleanup, abort(). */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define REQUIRE(cond, ...)          \
    do {                            \
        if (!(cond))                \
            fuzz_fail(__VA_ARGS__); \
    } while (0)

/* Runs fn on an exact-size copy of each input (so ASan sees reads past its
 * end).  A watchdog (60 s, or $CUDAG_FUZZ_WATCHDOG_S) aborts on a hang
 * after naming the input and calling the cleanup.  Returns the
 * exit status: 0 when every input ran, 2 for a usage error; exits 1 when an
 * input cannot be read. */
int fuzz_regress_main(int argc, char **argv,
                      void (*fn)(const uint8_t *data, size_t size));

#endif
