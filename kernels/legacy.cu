/* legacy.cu — one kernel built only as compute_80 PTX (legacy_sm80.ptx), for
 * the PDL-safety test of the library.
 *
 * The source calls pdl_wait() like every kernel here, but for compute_80 the
 * __CUDA_ARCH__ >= 900 guard compiles the wait out; JIT-compiled on Hopper,
 * the code therefore cannot wait.  kernels/legacy.yaml still declares it
 * pdl: true, so the library has to notice from the loaded function
 * (CU_FUNC_ATTRIBUTE_PTX_VERSION / BINARY_VERSION below 90) and refuse or
 * downgrade a programmatic edge into it.  Traffic: a plain copy. */
#include "pdl.cuh"

extern "C" __global__ void __launch_bounds__(1024)
legacy_copy_f32(const float *x, float *y, long long n)
{
    pdl_wait();
    pdl_launch_dependents();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        y[i] = x[i];
}
