/* stencil.cuh — one Jacobi sweep of the 2-D Poisson problem -Δu = f on an
 * nx × ny grid (row-major, y the slow index) with fixed boundary values:
 *
 *   v[i,j] = (u[i-1,j] + u[i+1,j] + u[i,j-1] + u[i,j+1] + f[i,j]) / 4
 *
 * on the interior (f already scaled by h²), v = u on the boundary, and the
 * largest |v - u| of the sweep folded into r[0] with an atomic maximum (r[0]
 * must start at 0 or at an earlier sweep's value: cond_converge_f32 resets
 * it).  Grid-strides over the interior, so any grid and block is correct;
 * cdiv(nx*ny, 256) blocks of 256 is one point per thread.  Waits before it
 * reads anything (u and r come from the sweep before it).  Block: 1-D.  Traffic: 3 reads
 * (u, its neighbours mostly from L1/L2, f) and 1 write per point. */
#ifndef CUDAG_KERNELS_STENCIL_CUH
#define CUDAG_KERNELS_STENCIL_CUH

#include "pdl.cuh"

/* A non-negative float's bits order as the float does: an integer atomic
 * maximum on them is a float maximum. */
__device__ __forceinline__ void atomic_max_nonneg(float *addr, float v)
{
    atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
}

__device__ __forceinline__ void jacobi_sweep(const float *u, float *v,
                                             const float *f, float *r, int nx,
                                             int ny)
{
    pdl_wait();
    const long long n = (long long)nx * ny;
    const long long stride = (long long)gridDim.x * blockDim.x;
    float worst = 0.0f;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
         p < n; p += stride) {
        const int i = (int)(p % nx), j = (int)(p / nx);
        const float c = u[p];
        float out = c;
        if (i > 0 && j > 0 && i < nx - 1 && j < ny - 1)
            out = 0.25f * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx] + f[p]);
        v[p] = out;
        worst = fmaxf(worst, fabsf(out - c));
    }
    pdl_launch_dependents();
    /* One global atomic per block, after a shared one per thread (a block
     * need not be a whole number of warps). */
    __shared__ float block_worst;
    if (threadIdx.x == 0)
        block_worst = 0.0f;
    __syncthreads();
    if (worst > 0.0f)
        atomic_max_nonneg(&block_worst, worst);
    __syncthreads();
    if (threadIdx.x == 0 && block_worst > 0.0f)
        atomic_max_nonneg(r, block_worst);
}

#endif
