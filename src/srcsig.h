/* srcsig.h — kernel declarations read from CUDA C++ source on the CPU, with
 * no compiler and no preprocessor: every `__global__` function's name,
 * linkage, template parameters and parameter types as written, the macros
 * and type aliases needed to read them, and whether the code reaches a PDL
 * wait; then a kernel's parameter list in cudag types. */
#ifndef CUDAG_SRCSIG_H
#define CUDAG_SRCSIG_H

#include "util.h"

/* The largest CUDA source file (or header) read, and how many headers one
 * module may pull in. */
#define CUDAG__MAX_SOURCE_BYTES (16u << 20)
#define CUDAG__MAX_HEADERS 256u

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

/* A resolved parameter list. */
typedef struct cudag__src_sig {
    uint32_t nparams;
    cudag_type *types;          /* CUDAG_TYPE_PTR for every pointer */
    cudag_type *pointee;        /* per pointer: its element type, or NONE
                                   (void*, a struct, a pointer to pointer) */
    const char **pnames;        /* "p3" for an unnamed parameter */
} cudag__src_sig;

/*
 * Resolves kernel k's parameters into cudag types.  expr is the kernel as
 * the graph names it: "axpy" or, for a template, an instance such as
 * "axpy<float>" whose arguments bind the template parameters (NULL means
 * k->name).  Errors (CUDAG_EARGS unless said otherwise), positioned in the
 * source: the kernel's refusal; a template without arguments ("name an
 * instance with symbol: \"axpy<float>\""), or with the wrong number; a type
 * not in the table (a struct by value: "declare its layout"); CUDAG_ENOMEM.
 * The arrays live in a.
 */
int cudag__src_signature(cudag__arena *a, const cudag__src_decls *d,
                         const cudag__src_kernel *k, const char *expr,
                         cudag__src_sig *out, cudag_error *err);

/*
 * The C type → cudag type table, for one type written in source (already
 * free of macros and aliases): "const float *" gives PTR with pointee F32;
 * "unsigned long long" U64; "__nv_bfloat16" BF16; "cudaGraphConditionalHandle"
 * (or CUgraphConditionalHandle) COND.  Returns CUDAG_TYPE_NONE
 * for a type not in the table.
 */
cudag_type cudag__src_ctype(const char *ctype, cudag_type *pointee);

/* True for a pointer to const data, one star deep ("const float *",
 * "float const *"): the kernel only reads through it.  False for anything
 * else ("float *", "float *const", "const float **"). */
bool cudag__src_ptr_const(const char *ctype);

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

/*
 * Reads a whole file of at most max bytes into the arena (NUL-terminated).
 * Errors at pos: CUDAG_EIO with the system's reason ("No such file or
 * directory"), naming what (e.g. "module 'mine'") and the path;
 * CUDAG_ELIMIT for a bigger file, with its size; CUDAG_ENOMEM.
 */
int cudag__read_file(cudag__arena *a, const char *path, size_t max,
                     const char *what, cudag__pos pos, char **text,
                     size_t *len, cudag_error *err);

#endif /* CUDAG_SRCSIG_H */
