/* cudag/cond.cuh — setting a graph's condition from your own kernel.
 *
 * A kernel parameter of type cudaGraphConditionalHandle is a `cond`
 * parameter: the graph passes the handle of the condition its argument
 * names (`args: [x, more]` with `more` in `conditions:`), and the kernel
 * sets the value the conditional node (`while`, `if`, `switch`) reads next:
 *
 *     #include <cudag/cond.cuh>
 *
 *     extern "C" __global__ void keep_going(const float *r, float tol,
 *                                           cudaGraphConditionalHandle c)
 *     {
 *         if (threadIdx.x == 0 && blockIdx.x == 0)
 *             cudaGraphSetConditional(c, r[0] >= tol);
 *     }
 *
 * Set it from one thread: concurrent cudaGraphSetConditional calls are
 * undefined.  nvcc declares both names through <cuda_runtime.h>, which it
 * includes by itself; NVRTC (which compiles the source modules of a graph)
 * knows the type but not the function, whose own header,
 * <cuda_device_runtime_api.h>, pulls in an internal CUDA header that warns.
 * This header declares the function for NVRTC exactly as the device runtime
 * does (the same code results) and nothing for nvcc.
 *
 * CUDA source modules compiled by cudag find this header as
 * #include <cudag/cond.cuh> with no option; with nvcc, add -I to the
 * directory that holds cudag/ (pkg-config --cflags cudag). */
#ifndef CUDAG_COND_CUH
#define CUDAG_COND_CUH

#if defined(__CUDACC_RTC__)
/* NVRTC declares cudaGraphConditionalHandle itself.  A device-runtime
 * builtin: ptxas resolves the call, no linking needed. */
extern "C" __device__ void
cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
#endif

#endif /* CUDAG_COND_CUH */
