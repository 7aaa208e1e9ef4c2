/* cluster_norm.cu — the kernels of cluster_norm.yaml: a row-wise RMSNorm
 * whose long row is split over the CTAs of one thread-block cluster.  Each
 * CTA stages its slice of the row in dynamic shared memory (more than the
 * 48 KiB a launch gets without opting in), sums its squares with
 * cub::BlockReduce, and reads its peers' partial sums straight out of their
 * shared memory (distributed shared memory, cluster.map_shared_rank), so the
 * row is read from global memory once and the norm needs no second kernel
 * and no global scratch.  The CCCL headers (cooperative_groups, CUB,
 * cuda::std) are the toolkit's: cudag's NVRTC sees them as nvcc does.
 *
 * Traffic: x read once and y written once (4 bytes per element each), gamma
 * read once per row. */
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/std/type_traits>
#include <cudag/pdl.cuh>

namespace cg = cooperative_groups;

/* The block size the reduction is compiled for: the graph launches 256. */
#define NORM_THREADS 256

/* The producer: x = a·u + b, one element per thread. */
extern "C" __global__ void affine_f32(const float *u, float *x, float a,
                                      float b, int n)
{
    cudag_pdl_launch_dependents();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = fmaf(a, u[i], b);
}

/*
 * y = x / sqrt(mean(x²) + eps) · gamma, one row per cluster: grid
 * [CLUSTER, ROWS] with cluster [CLUSTER, 1, 1], a row of CLUSTER·slice
 * elements, slice·4 bytes of dynamic shared memory per CTA.  Reached by a
 * programmatic edge: the cluster's identity and the shared-memory pointers
 * come before the wait, every read of x after it.
 */
extern "C" __global__ void cluster_rmsnorm_f32(const float *x,
                                               const float *gamma, float *y,
                                               int slice, float eps)
{
    static_assert(cuda::std::is_same<float, cuda::std::remove_cv_t<const float>>::value,
                  "cuda::std is the toolkit's libcu++");
    extern __shared__ float xs[];           /* this CTA's slice of the row */
    __shared__ float partial;               /* read by the peers (DSMEM) */
    __shared__ float scale;
    using reduce = cub::BlockReduce<float, NORM_THREADS>;
    __shared__ typename reduce::TempStorage tmp;

    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    unsigned ranks = cluster.num_blocks();
    size_t row = blockIdx.y;
    size_t base = (row * ranks + rank) * (size_t)slice;

    cudag_pdl_wait();
    float s = 0.0f;
    for (int i = threadIdx.x; i < slice; i += blockDim.x) {
        float v = x[base + i];
        xs[i] = v;
        s = fmaf(v, v, s);
    }
    float mine = reduce(tmp).Sum(s);
    if (threadIdx.x == 0)
        partial = mine;
    /* Every CTA's partial is written before any peer reads it. */
    cluster.sync();
    if (threadIdx.x == 0) {
        /* In rank order, so every CTA computes the same bits. */
        float total = 0.0f;
        for (unsigned r = 0; r < ranks; r++)
            total += *cluster.map_shared_rank(&partial, r);
        scale = rsqrtf(total / (float)(ranks * (unsigned)slice) + eps);
    }
    /* No CTA leaves (its shared memory gone) while a peer still reads it;
     * the barrier also publishes scale to the block. */
    cluster.sync();
    float k = scale;
    const float *g = gamma + (size_t)rank * slice;
    for (int i = threadIdx.x; i < slice; i += blockDim.x)
        y[base + i] = xs[i] * k * g[i];
}
