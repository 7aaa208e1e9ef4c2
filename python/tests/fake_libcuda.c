/* fake_libcuda.c — the CPU suites' fake CUDA driver (tests/fake_driver.h)
 * as a shared library named libcuda.so.1, so that the Python package's CPU
 * tests run the real libcudag.so through instantiation, replays, updates and
 * copies without a GPU: put this library's directory first in
 * LD_LIBRARY_PATH.  Device memory is host memory, so a NumPy array exposed
 * through __cuda_array_interface__ is "device memory" here, and the fake's
 * host kernels (scale_f32, add_f32, copy_f32) compute real results.
 *
 * Exports cuGetProcAddress_v2 (how libcudag resolves every entry point) and
 * fake_live(), the number of objects, context pushes and primary-context
 * references libcudag still holds. */
#include "fake_driver.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT int fake_objects_live(void);
FAKE_EXPORT int fake_launches(void);
FAKE_EXPORT unsigned long long fake_instantiate_flags(void);

/* fake_reset() installs its table through libcudag's test seam; the shared
 * libcudag has no seam: it finds the table through cuGetProcAddress_v2. */
void cudag__driver_override(const cudag__drv *t) { (void)t; }

__attribute__((constructor)) static void fake_start(void) { fake_reset(); }

FAKE_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    (void)version, (void)flags;
#define FAKE_RESOLVE(name, ver)                                                \
    if (strcmp(symbol, #name) == 0) {                                          \
        memcpy(pfn, &fake_table.name, sizeof *pfn);                           \
        if (status)                                                            \
            *status = CU_GET_PROC_ADDRESS_SUCCESS;                             \
        return CUDA_SUCCESS;                                                   \
    }
    CUDAG__DRIVER_FUNCS(FAKE_RESOLVE)
#undef FAKE_RESOLVE
    *pfn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

int fake_objects_live(void)
{
    return fake_live();
}

/* The flags of the last graph instantiation. */
unsigned long long fake_instantiate_flags(void)
{
    return F.instantiate_flags;
}

/* The number of graph launches the last instantiated exec has run. */
int fake_launches(void)
{
    return F.last_exec ? F.last_exec->launches : -1;
}
