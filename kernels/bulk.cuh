/* bulk.cuh — 1-D bulk copies (cp.async.bulk) completing on mbarriers, and L2
 * prefetches: the sm_90 memory pipeline of the library, as inline PTX.
 *
 * A bulk copy moves a 16-byte-aligned run of global memory (a multiple of 16
 * bytes) into shared memory without a tensor map; the copy engine signals the
 * bytes it delivered on an mbarrier ("complete_tx"), and threads wait on the
 * barrier's phase parity.  Callers keep one barrier per pipeline stage and a
 * bit of parity per barrier.  Everything here needs sm_90; callers guard their
 * use with __CUDA_ARCH__ >= 900 and keep a plain path for older code.
 * Traffic: none of its own; a bulk copy moves exactly the bytes asked for. */
#ifndef CUDAG_KERNELS_BULK_CUH
#define CUDAG_KERNELS_BULK_CUH

#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Prefetches [p, p + bytes) into L2, one 128-byte line per thread and step;
 * any alignment.  Used for weights before griddepcontrol.wait. */
__device__ __forceinline__ void prefetch_l2(const void *p, long long bytes)
{
    const char *c = (const char *)p;
    for (long long off = (long long)threadIdx.x * 128; off < bytes;
         off += (long long)blockDim.x * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(c + off));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/* Initialises a barrier expecting `count` arrivals per phase.  One thread
 * calls it; mbar_fence_init() then makes it visible to the copy engine (the
 * async proxy) before the __syncthreads() that publishes it to the block. */
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)),
                 "r"(count)
                 : "memory");
}

__device__ __forceinline__ void mbar_fence_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* The producer's single arrival for a phase, announcing `bytes` of copies
 * that will complete on the barrier. */
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
}

/* Blocks until the phase of the given parity has completed.  try_wait
 * suspends in hardware for a while before returning false, so the loop does
 * not hammer the barrier. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}

/* Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from
 * global to shared memory, completing on `bar`.  The destination is this
 * CTA's shared memory (a CTA is a cluster of one when no cluster is set). */
__device__ __forceinline__ void bulk_g2s(void *dst, const void *src,
                                         uint32_t bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                 "bytes [%0], [%1], %2, [%3];" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

/* Prefetches a 16-byte-aligned run (multiple of 16 bytes) into L2 with one
 * instruction. */
__device__ __forceinline__ void bulk_prefetch_l2(const void *src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src),
                 "r"(bytes)
                 : "memory");
}

#endif /* __CUDA_ARCH__ >= 900 */
#endif
