/* ctype.h — a kernel's parameter list, read by decls.c, in cudag types: the
 * C type table and the list resolved for one instance of the kernel. */
#ifndef CUDAG_CTYPE_H
#define CUDAG_CTYPE_H

#include "cudag.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct cudag__arena cudag__arena;
typedef struct cudag__src_decls cudag__src_decls;
typedef struct cudag__src_kernel cudag__src_kernel;

/* A resolved parameter list. */
typedef struct cudag__src_sig {
    uint32_t nparams;
    cudag_type *types;          /* CUDAG_TYPE_PTR for every pointer */
    cudag_type *pointee;        /* per pointer: its element type, or NONE
                                   (void*, a struct, a pointer to pointer) */
    const char **pnames;        /* "p3" for an unnamed parameter */
    bool *pnamed;               /* false for an unnamed parameter */
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

#endif /* CUDAG_CTYPE_H */
