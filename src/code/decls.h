/* decls.h — kernel declarations read from CUDA C++ source on the CPU, with
 * no compiler and no preprocessor: every `__global__` function's name,
 * linkage, template parameters and parameter types as written, the macros
 * and type aliases needed to read them, and whether the code reaches a PDL
 * wait.  ctype.h turns a parameter list into cudag types, headers.h finds a
 * module's headers. */
#ifndef CUDAG_DECLS_H
#define CUDAG_DECLS_H

#include "cudag.h"
#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__arena cudag__arena;

/* The largest CUDA source file (or header) read. */
#define CUDAG__MAX_SOURCE_BYTES (16u << 20)

/* One text read: the module's source, or a header it includes. */
typedef struct cudag__src_text {
    const char *path;           /* as shown in positions */
    const char *text;           /* need not be NUL-terminated */
    size_t len;
} cudag__src_text;

typedef struct cudag__src_param {
    const char *name;           /* NULL when unnamed */
    const char *ctype;          /* the type's tokens joined by spaces */
    cudag__pos pos;             /* the parameter's first token */
} cudag__src_param;

typedef struct cudag__src_kernel {
    const char *name;           /* the C++ name, unqualified */
    bool extern_c;              /* extern "C": the symbol is the name */
    bool waits;                 /* reaches griddepcontrol.wait in the text */
    uint32_t ntparams;          /* > 0: a template */
    const char **tparams;       /* the template parameters' names */
    const char **tdefaults;     /* and their defaults, NULL where none */
    uint32_t nparams;
    cudag__src_param *params;
    /* Why the parameter list cannot be read (a default argument, a
     * reference, a function-like macro, …), at refusal_pos; NULL if it can.
     * Reported only when a graph uses the kernel. */
    const char *refusal;
    cudag__pos refusal_pos;
    cudag__pos pos;             /* the kernel's name in its definition */
    /* A second declaration with other parameters (an overload, or two
     * branches of an #if): other_pos is where; line 0 if none. */
    cudag__pos other_pos;
} cudag__src_kernel;

typedef struct cudag__src_macro {
    const char *name;
    const char *body;           /* the replacement text, "" for none */
    bool function;              /* NAME(args) */
} cudag__src_macro;

typedef struct cudag__src_alias {
    const char *name;
    const char *ctype;          /* typedef / using: the aliased type */
} cudag__src_alias;

/* What a module's texts declare.  Everything lives in the arena given to
 * cudag__src_read. */
typedef struct cudag__src_decls {
    cudag__src_kernel *k;
    uint32_t nk;
    cudag__src_macro *macros;   /* #define, then -D options (later wins) */
    uint32_t nmacros;
    cudag__src_alias *aliases;
    uint32_t naliases;
    /* A function-like macro defines kernels (#define DEF(T) __global__ …):
     * those are invisible here, which a "no kernel" error should say. */
    bool macro_kernels;
} cudag__src_decls;

/*
 * Reads the kernels declared in texts[0] and the headers texts[1..n) (each
 * counts: a header may define kernels too), with the -D options in defines
 * ("NAME" or "NAME=VALUE", NULL-terminated, may be NULL) as macros.  Never
 * fails on what it cannot read: unknown constructs are skipped, and a kernel
 * whose parameters cannot be read carries a refusal.  Returns CUDAG_OK, or
 * CUDAG_ENOMEM (position-less) through err; everything it allocated is in a,
 * which the caller owns.
 */
int cudag__src_read(cudag__arena *a, const cudag__src_text *texts, uint32_t n,
                    const char *const *defines, cudag__src_decls *out,
                    cudag_error *err);

/* The kernel called name, or NULL. */
const cudag__src_kernel *cudag__src_find(const cudag__src_decls *d,
                                         const char *name);

#endif /* CUDAG_DECLS_H */
