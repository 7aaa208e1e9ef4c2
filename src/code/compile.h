/* compile.h — CUDA source to machine code for one device with NVRTC, through
 * the compile cache: the request (text, options, architecture, the names to
 * lower), the result (cubin, PTX, lowered names), and NVRTC's log turned
 * into positioned diagnostics. */
#ifndef CUDAG_COMPILE_H
#define CUDAG_COMPILE_H

#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__src_text cudag__src_text;

typedef struct cudag__compile_req {
    const char *module;         /* its name in the graph, for messages */
    cudag__pos pos;             /* where the graph names it */
    const char *path;           /* the file name NVRTC and positions show */
    const char *text;
    size_t len;
    const char *dir;            /* its directory (quoted includes); may be NULL */
    const char *const *options; /* NULL-terminated, may be NULL: -D, -I, … */
    const char *std;            /* "c++17", or NULL for NVRTC's default */
    const char *const *exprs;   /* names to lower: "axpy<float>", "scale" */
    uint32_t nexprs;
    int cc_major, cc_minor;     /* the device: sm_<major><minor>[a] */
    bool no_cache;
    const char *cache_dir;      /* NULL: cudag__cache_dir() */
    /* Set once an unwritable cache was reported, so that a graph of many
     * modules warns once; may be NULL. */
    bool *cache_warned;
} cudag__compile_req;

typedef struct cudag__compiled {
    void *cubin;                /* machine code for the exact device */
    size_t cubin_len;
    char *ptx;                  /* NUL-terminated, for reading entries */
    size_t ptx_len;
    const char **lowered;       /* per expression: its symbol in the cubin */
    bool cached;                /* read from the cache, NVRTC not opened */
    /* One allocation holds everything above. */
    void *block;
} cudag__compiled;

/* The architecture NVRTC targets for compute capability major.minor:
 * "sm_90a" from 9.0 on (architecture-specific features, exact device),
 * "sm_86" before.  Writes into buf. */
void cudag__compile_arch(int major, int minor, char *buf, size_t size);

/* The headers built into the library, found by #include <cudag/…> in every
 * source module without an option: cudag/pdl.cuh. */
const cudag__src_text *cudag__builtin_headers(uint32_t *n);

/*
 * Compiles q->text for the device, or reads the result from the cache (key:
 * the text and every header it includes, the options, std, the names to
 * lower, the architecture and the NVRTC library's identity).  On a miss the
 * result is written to the cache; a cache that cannot be written is one
 * warning to d and no error.  NVRTC's errors are reported to d at their
 * place in the source ("user.cu:4:12: identifier "foo" is undefined"), then
 * a note at q->pos names the module and architecture; the return is then
 * CUDAG_ESYNTAX.  Other errors: CUDAG_ENOTSUP without NVRTC (the message
 * says how to precompile instead), CUDAG_EUNKNOWN for a name expression
 * NVRTC cannot lower, CUDAG_ENOMEM.  On error *out is zeroed.
 */
int cudag__compile(const cudag__compile_req *q, cudag__compiled *out,
                   cudag__diag *d);

/* Frees what *c holds and zeroes it; accepts a zeroed c. */
void cudag__compiled_free(cudag__compiled *c);

#endif /* CUDAG_COMPILE_H */
