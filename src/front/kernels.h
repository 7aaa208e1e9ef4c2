/* kernels.h — the `modules` and `kernels` sections (kernels.c). */
#ifndef CUDAG_FRONT_KERNELS_H
#define CUDAG_FRONT_KERNELS_H


#include <stdint.h>

typedef struct cudag__lower cudag__lower;
typedef struct cudag__file cudag__file;

/* Lowers f's `modules` into lw->g and reads each module's file; a wrong
 * one is reported and marked bad. */
void cudag__lower_modules(cudag__lower *lw, const cudag__file *f);

/* Lowers f's `kernels` into lw->g; f declared the modules
 * [file_first_module, + file_nmodules), the default module of its kernels
 * when it is one.  A wrong kernel is reported and marked bad. */
void cudag__lower_kernels(cudag__lower *lw, const cudag__file *f,
                          uint32_t file_first_module, uint32_t file_nmodules);

#endif /* CUDAG_FRONT_KERNELS_H */
