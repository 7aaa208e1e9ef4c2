/* mx_cg.cu — the placement matrix's kernel written with CUDA's own headers
 * (cooperative groups, libcu++): NVRTC must see every header nvcc sees.
 * Same work as mx.cu's mx_axpy: y = a·x + y. */
#include <cooperative_groups.h>
#include <cuda/std/cstdint>
#include <cudag/pdl.cuh>

namespace cg = cooperative_groups;

extern "C" __global__ void mx_axpy_cg(const float *x, float *y, float a,
                                      int n)
{
    cg::thread_block b = cg::this_thread_block();
    cuda::std::int32_t i =
        (cuda::std::int32_t)(blockIdx.x * b.size() + b.thread_rank());
    cudag_pdl_wait();
    if (i < n)
        y[i] = a * x[i] + y[i];
}
