/* module.h — a graph's kernel code as the CPU sees it, before any GPU:
 * module files read and judged (missing, unreadable, not kernel code), CUDA
 * sources read for their kernels, signatures made from source, declared
 * signatures checked against the code's entry points. */
#ifndef CUDAG_MODULES_H
#define CUDAG_MODULES_H

#include "cudag.h"
#include "base/diag.h"

#include <stdint.h>

typedef struct cudag__module cudag__module;
typedef struct cudag__sig cudag__sig;

/* The largest fatbin, cubin or PTX file read (mapped, not copied). */
#define CUDAG__MAX_CODE_BYTES (1ull << 32)

/*
 * Reads module m's file (m->path) and records what it holds: m->kind, and
 * for CUDA source its text, directory and kernels (read with m->options
 * and the headers found through them), for a fatbin, cubin or PTX file its
 * entry points.  Errors, at pos: CUDAG_EIO "module 'm': cannot read 'p':
 * <reason>"; CUDAG_ETYPE for a file that is no kernel code ("'p' is not a
 * fatbin, cubin, PTX or CUDA source (.cu)", a host object file), or for
 * options or std given to a module that is not source; CUDAG_ELIMIT;
 * CUDAG_ENOMEM.  What it allocates lives in g's arena.
 */
int cudag__module_read(cudag_graph *g, cudag__module *m, cudag__pos pos,
                       cudag_error *err);

/*
 * Fills signature s (its name, module and position set) from its module's
 * source: the parameters, typed pointers, and whether the kernel waits.
 * expr is the kernel as the graph names it (a `symbol:`: "axpy<float>",
 * "scale"), NULL for s->name.  Sets s->symbol, or s->expr when NVRTC must
 * lower the name (templates, kernels that are not extern "C").  Errors:
 * CUDAG_EUNKNOWN at use, "module 'm' (user.cu) has no kernel 'axyp' (did
 * you mean 'axpy'?)"; the kernel's refusal (CUDAG_EARGS) at its place in
 * the source; CUDAG_ENOMEM.
 */
int cudag__sig_from_source(cudag_graph *g, cudag__sig *s, const char *expr,
                           cudag__pos use, cudag_error *err);

/*
 * The signature called name: declared, or made once from the graph's CUDA
 * source modules, which declare a kernel of that name (extern "C" or not; a
 * template needs a `kernels:` entry naming an instance).  Returns its index,
 * or CUDAG__NONE with err: CUDAG_EUNKNOWN at use ("unknown kernel 'axyp'
 * (did you mean 'axpy'?)", the suggestion among declared and source
 * kernels), CUDAG_EDUP (defined in two modules), the kernel's refusal,
 * CUDAG_ENOMEM.
 */
uint32_t cudag__sig_lookup(cudag_graph *g, const char *name, cudag__pos use,
                           cudag_error *err);

/*
 * Checks declared signature s against its module's entry points, where the
 * module's file was read: the symbol exists (when the list is complete,
 * with a hint for a C++ name), and the parameter count and sizes match.
 * Then sets s->waits from the code (PTX shows it) and s->pdl when the code
 * waits.  Errors at pos: CUDAG_EUNKNOWN, CUDAG_EARGS.
 */
int cudag__sig_against_code(cudag_graph *g, cudag__sig *s, cudag__pos pos,
                            cudag_error *err);

/* For signature s of a source module whose parameters were declared (a
 * struct's layout, say): what the source still says of it, how NVRTC finds
 * its symbol (s->expr for a C++ name or a template instance) and whether it
 * waits.  Leaves s as it is when the source does not declare it. */
void cudag__sig_declared_in_source(cudag_graph *g, cudag__sig *s);

#endif /* CUDAG_MODULES_H */
