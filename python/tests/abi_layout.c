/* abi_layout.c — prints the size of every struct of cudag.h the Python
 * package declares for ctypes, and the offset of each field, one
 * "struct[.field] number" per line, so test_abi.py can hold the ctypes
 * declarations (python/cudag/_capi.py) to the header they mirror. */
#include <cudag.h>

#include <stddef.h>
#include <stdio.h>

#define SIZE(T) printf(#T " %zu\n", sizeof(T))
#define AT(T, f) printf(#T "." #f " %zu\n", offsetof(T, f))

int main(void)
{
    SIZE(cudag_error);
    AT(cudag_error, code), AT(cudag_error, severity), AT(cudag_error, line);
    AT(cudag_error, column), AT(cudag_error, count);
    AT(cudag_error, cuda_result), AT(cudag_error, file);
    AT(cudag_error, message);
    SIZE(cudag_options);
    AT(cudag_options, defines), AT(cudag_options, include_dirs);
    AT(cudag_options, diag), AT(cudag_options, diag_user);
    AT(cudag_options, max_errors), AT(cudag_options, flags);
    SIZE(cudag_exec_options);
    AT(cudag_exec_options, device), AT(cudag_exec_options, context);
    AT(cudag_exec_options, stream), AT(cudag_exec_options, flags);
    AT(cudag_exec_options, diag), AT(cudag_exec_options, diag_user);
    AT(cudag_exec_options, include_dirs), AT(cudag_exec_options, timeout_ms);
    SIZE(cudag_param);
    AT(cudag_param, name), AT(cudag_param, type);
    SIZE(cudag_init);
    AT(cudag_init, kind), AT(cudag_init, value), AT(cudag_init, lo);
    AT(cudag_init, hi), AT(cudag_init, seed);
    SIZE(cudag_arg);
    AT(cudag_arg, kind), AT(cudag_arg, buffer), AT(cudag_arg, offset);
    AT(cudag_arg, i), AT(cudag_arg, f);
    SIZE(cudag_dim3);
    AT(cudag_dim3, x), AT(cudag_dim3, y), AT(cudag_dim3, z);
    SIZE(cudag_plan_info);
    AT(cudag_plan_info, nodes), AT(cudag_plan_info, kernel_nodes);
    AT(cudag_plan_info, memset_nodes), AT(cudag_plan_info, memcpy_nodes);
    AT(cudag_plan_info, edges), AT(cudag_plan_info, depth);
    AT(cudag_plan_info, width), AT(cudag_plan_info, buffer_bytes);
    AT(cudag_plan_info, conditional_nodes), AT(cudag_plan_info, bodies);
    AT(cudag_plan_info, gemm_nodes), AT(cudag_plan_info, capture_nodes);
    AT(cudag_plan_info, event_record_nodes);
    AT(cudag_plan_info, event_wait_nodes), AT(cudag_plan_info, host_nodes);
    AT(cudag_plan_info, child_nodes);
    SIZE(cudag_value);
    AT(cudag_value, type), AT(cudag_value, i), AT(cudag_value, f);
    SIZE(cudag_exec_stats);
    AT(cudag_exec_stats, driver_ns), AT(cudag_exec_stats, load_ns);
    AT(cudag_exec_stats, alloc_ns), AT(cudag_exec_stats, build_ns);
    AT(cudag_exec_stats, instantiate_ns);
    AT(cudag_exec_stats, downgraded_edges);
    SIZE(cudag_module_stats);
    AT(cudag_module_stats, name), AT(cudag_module_stats, origin);
    AT(cudag_module_stats, load_ns);
    /* The enumerations the package names by value. */
    printf("CUDAG_TYPE_F64 %d\nCUDAG_TYPE_PTR %d\n", CUDAG_TYPE_F64,
           CUDAG_TYPE_PTR);
    printf("CUDAG_EINVAL %d\nCUDAG_EUNKNOWN %d\nCUDAG_ETYPE %d\n"
           "CUDAG_ERANGE %d\nCUDAG_ESTATE %d\nCUDAG_ETIMEOUT %d\n",
           CUDAG_EINVAL, CUDAG_EUNKNOWN, CUDAG_ETYPE, CUDAG_ERANGE,
           CUDAG_ESTATE, CUDAG_ETIMEOUT);
    printf("CUDAG_NO_PDL %u\nCUDAG_STRICT %u\nCUDAG_WERROR %u\n"
           "CUDAG_NVTX %u\n",
           (unsigned)CUDAG_NO_PDL, (unsigned)CUDAG_STRICT,
           (unsigned)CUDAG_WERROR, (unsigned)CUDAG_NVTX);
    printf("CUDAG_MODULE_UNUSED %d\nCUDAG_MODULE_FILE %d\n"
           "CUDAG_MODULE_COMPILED %d\nCUDAG_MODULE_CACHED %d\n",
           CUDAG_MODULE_UNUSED, CUDAG_MODULE_FILE, CUDAG_MODULE_COMPILED,
           CUDAG_MODULE_CACHED);
    return 0;
}
