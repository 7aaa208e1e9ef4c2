/* headers.h — a CUDA source module's headers: its #include lines, and the
 * texts of the headers found, for the declaration reader and NVRTC. */
#ifndef CUDAG_HEADERS_H
#define CUDAG_HEADERS_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__arena cudag__arena;
typedef struct cudag__src_text cudag__src_text;

/* How many headers one module may pull in. */
#define CUDAG__MAX_HEADERS 256u

/*
 * Calls fn(user, name, len, angled, line) for each #include directive of
 * text, in order (quoted: angled false).  Stops early and returns fn's
 * non-zero result; 0 when every include was seen.
 */
int cudag__src_includes(const char *text, size_t len,
                        int (*fn)(void *user, const char *name, size_t len,
                                  bool angled, uint32_t line),
                        void *user);

/*
 * Collects a module's texts: (*out)[0] is main (copied), then every header
 * it includes, directly or not, that is found: a quoted #include next to the
 * file that includes it (dir for main; NULL: nowhere), then in the -I
 * directories of options ("-Idir", "-I dir", "--include-path=dir") and in
 * include_dirs (NULL-terminated, may be NULL); an angled one only in those
 * directories.  builtins[0..nbuiltins) are headers held in memory, found by
 * their path as written in the #include ("cudag/pdl.cuh") before any
 * directory.  Each header is read once.  Headers not found are left out
 * (the toolkit's, which NVRTC finds itself; a missing one is NVRTC's error
 * to report), and so are those first found in an -I directory that is a
 * toolkit's include/ or include/cccl (it holds cuda_fp16.h or
 * cuda/std/version): NVRTC is given those anyway, and CCCL's thousands of
 * headers would pass the limit.  Errors: CUDAG_ELIMIT (more than CUDAG__MAX_HEADERS headers,
 * or one over CUDAG__MAX_SOURCE_BYTES) and CUDAG_EIO (a header that exists
 * but cannot be read), at the #include line; CUDAG_ENOMEM.  Texts and paths
 * live in a.
 */
int cudag__src_gather(cudag__arena *a, const cudag__src_text *main,
                      const char *dir, const char *const *options,
                      const char *const *include_dirs,
                      const cudag__src_text *builtins, uint32_t nbuiltins,
                      cudag__src_text **out, uint32_t *n, cudag_error *err);

#endif /* CUDAG_HEADERS_H */
