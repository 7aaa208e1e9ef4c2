/* mx.cu — the own kernels of the placement matrix (tests/test_matrix.c,
 * tests/test_gpu_matrix.c): read from source with no `kernels:` section.
 * mx_axpy waits (cudag_pdl_wait) before it touches memory an upstream kernel
 * writes, so it may end a programmatic edge; mx_count sets a condition from
 * a kernel of the user's own (a cudaGraphConditionalHandle parameter,
 * <cudag/cond.cuh>).  Traffic: 12 bytes per element for mx_axpy. */
#include <cudag/cond.cuh>
#include <cudag/pdl.cuh>

/* y = a·x + y */
extern "C" __global__ void mx_axpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cudag_pdl_wait();
    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* counter[0] += 1; c = counter[0] < k (a loop of k iterations from 0).  One
 * thread decides: concurrent cudaGraphSetConditional calls are undefined. */
extern "C" __global__ void mx_count(int *counter, int k,
                                    cudaGraphConditionalHandle c)
{
    cudag_pdl_wait();
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int v = counter[0] + 1;
        counter[0] = v;
        cudaGraphSetConditional(c, v < k ? 1u : 0u);
    }
}
