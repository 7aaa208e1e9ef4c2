/* pdl.cuh — Programmatic Dependent Launch in two inline helpers.
 *
 * Every kernel of the library calls pdl_wait() before its first global read or
 * write of data an upstream kernel may produce, and pdl_launch_dependents()
 * once the rest of its work no longer gates the launch of the next kernel.
 * Both compile to nothing below sm_90 (the instructions do not exist there),
 * which is why PTX built for an older virtual architecture and JIT-compiled on
 * Hopper cannot wait: the library checks CU_FUNC_ATTRIBUTE_PTX_VERSION /
 * BINARY_VERSION and never trusts such code with a programmatic edge.
 *
 * Every thread of a block executes both, uniformly: the trigger of a block
 * counts once all its threads have triggered or exited.  Traffic: none. */
#ifndef CUDAG_KERNELS_PDL_CUH
#define CUDAG_KERNELS_PDL_CUH

/* Blocks until every prerequisite grid has completed and its memory
 * operations are visible; returns at once when the launch has no programmatic
 * dependency.  The "memory" clobber keeps the compiler from moving loads of
 * upstream data above it. */
__device__ __forceinline__ void pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Lets the dependent grid be scheduled once every block of this grid has
 * executed it (or exited).  It promises nothing about this grid's memory: the
 * dependent still waits in pdl_wait() for our completion, so the only cost of
 * an early trigger is the dependent's blocks occupying SM slots while they
 * wait. */
__device__ __forceinline__ void pdl_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#endif
