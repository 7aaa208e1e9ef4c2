/* cond.cuh — kernels that set a condition, the value a conditional node of
 * the graph reads (a `cond` parameter: a cudaGraphConditionalHandle, passed
 * by cudag like a buffer), from data on the device:
 *
 *  cond_count_i32(counter, k, c)        counter[0] += 1; c = counter[0] < k
 *                                       (a loop of k iterations when counter
 *                                       starts at 0)
 *  cond_lt_f32(x, t, c)                 c = x[0] < t
 *  cond_ge_f32(x, t, c)                 c = x[0] >= t (loop until below t)
 *  cond_converge_f32(r, tol, counter, max, c)
 *                                       r[1] = r[0]; r[0] = 0; counter[0] += 1;
 *                                       c = r[1] >= tol && counter[0] < max
 *                                       (iterate until a residual that the
 *                                       body accumulates in r[0] is below
 *                                       tol, at most max times)
 *  cond_index_i32(x, c)                 c = x[0] (a switch's case; a negative
 *                                       value runs no case)
 *  util_count_i32(counter, k, flag)     cond_count_i32's work with the
 *                                       result written to flag[0] (1 or 0),
 *                                       for a loop driven from the host.
 *
 * One thread (block 0, thread 0) reads and decides: the device runtime
 * leaves concurrent cudaGraphSetConditional calls undefined.  Any grid and
 * block is correct; grid 1, block 32 is all they need.  They wait
 * (griddepcontrol.wait) before reading anything, so they may end a
 * programmatic edge, and trigger after deciding.  Traffic: a few bytes. */
#ifndef CUDAG_KERNELS_COND_CUH
#define CUDAG_KERNELS_COND_CUH

#include <cuda_runtime.h>

#include "pdl.cuh"

__device__ __forceinline__ bool cond_leader(void)
{
    return blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 &&
           threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

/* counter[0] + 1, stored, compared with k. */
__device__ __forceinline__ unsigned count_below(int *counter, long long k)
{
    const int v = counter[0] + 1;
    counter[0] = v;
    return (long long)v < k ? 1u : 0u;
}

#endif
