/* user_kernels.cu — the kernels of user_kernels.yaml, as a user writes
 * them: extern "C" entry points (their symbols are their names), plain C
 * parameter types that cudag reads into the graph's signatures, and one
 * kernel made PDL-aware with <cudag/pdl.cuh>, which cudag finds with no
 * option.  cudag compiles this file with NVRTC for the GPU it runs on.
 *
 * Traffic: each kernel reads its inputs and writes its output once, 4 or 8
 * bytes per element per array. */
#include <cudag/pdl.cuh>

extern "C" __global__ void scale(const float *__restrict__ x,
                                 float *__restrict__ y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}

extern "C" __global__ void square(const float *__restrict__ x,
                                  float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * x[i];
}

/* The join.  It lets the kernel after it be scheduled at once: that kernel
 * still waits for this one to finish before it reads y, so the trigger only
 * saves its launch latency. */
extern "C" __global__ void axpby(const float *__restrict__ a,
                                 const float *__restrict__ b, float *y,
                                 float alpha, float beta, int n)
{
    cudag_pdl_launch_dependents();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaf(alpha, a[i], beta * b[i]);   /* one rounding, as written */
}

/* PDL-aware: it may start while axpby is still running.  The index and the
 * constant need nothing from upstream and come before the wait; y, written
 * upstream, is read only after it, and not through __restrict__ (a
 * non-coherent load could be hoisted above the wait). */
extern "C" __global__ void offset_pdl(const float *y, float *z, float c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float k = c;
    cudag_pdl_wait();
    if (i < n)
        z[i] = y[i] + k;
}
