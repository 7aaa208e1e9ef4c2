/* binary.h — kernel code read on the CPU, without the driver: what kind of
 * file a module is (fatbin, cubin, PTX, CUDA source), and, where the format
 * shows it, each entry point's parameter sizes and whether its code executes
 * griddepcontrol.wait. */
#ifndef CUDAG_MODFILE_H
#define CUDAG_MODFILE_H

#include "cudag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cudag__arena cudag__arena;

typedef enum cudag__code_kind {
    CUDAG__CODE_OTHER = 0,      /* none of the below */
    CUDAG__CODE_FATBIN,         /* nvcc -fatbin */
    CUDAG__CODE_CUBIN,          /* a CUDA ELF image: nvcc -cubin, NVRTC */
    CUDAG__CODE_PTX,            /* PTX text */
    CUDAG__CODE_SOURCE,         /* CUDA C++ text */
    CUDAG__CODE_HOSTOBJ         /* a host ELF object (nvcc -c): not loadable */
} cudag__code_kind;

/* "fatbin", "cubin", "PTX", "CUDA source", …; never NULL. */
const char *cudag__code_kind_name(cudag__code_kind k);

/*
 * What the bytes are.  Binary formats go by their magic numbers; text is PTX
 * when it has .version and .target directives, CUDA source when path ends
 * in .cu, .cuh, .cuda, .h, .hpp, .cpp or .cc (or path is NULL: a source held
 * in memory), otherwise OTHER.  Text holding a NUL byte or invalid UTF-8 is
 * not text.
 */
cudag__code_kind cudag__code_sniff(const void *data, size_t len,
                                   const char *path);

#define CUDAG__CODE_UNKNOWN UINT32_MAX

typedef struct cudag__code_entry {
    const char *name;           /* the symbol */
    uint32_t nparams;           /* CUDAG__CODE_UNKNOWN when not shown */
    uint32_t *sizes;            /* per parameter, in bytes */
    int waits;                  /* 1: executes griddepcontrol.wait (itself
                                   or through a function it calls), 0: does
                                   not, -1: unknown (machine code only) */
} cudag__code_entry;

typedef struct cudag__code_info {
    cudag__code_kind kind;
    cudag__code_entry *e;
    uint32_t n;
    /* Every entry point is listed.  False when a fatbin's images are all
     * compressed, so a name not listed may still be there. */
    bool complete;
} cudag__code_info;

/*
 * Lists the entry points of a fatbin, cubin or PTX image (other kinds give
 * an empty, incomplete list).  Parameter sizes come from the PTX .entry
 * list or the cubin's EIATTR_KPARAM_INFO records; waits only from PTX.
 * Malformed input is never an error: what cannot be read is left out.
 * Returns CUDAG_OK, or CUDAG_ENOMEM through err; everything is allocated in
 * a, which the caller owns.
 */
int cudag__code_read(cudag__arena *a, const void *data, size_t len,
                     cudag__code_info *out, cudag_error *err);

/* The entry called name, or NULL. */
const cudag__code_entry *cudag__code_find(const cudag__code_info *c,
                                          const char *name);

#endif /* CUDAG_MODFILE_H */
