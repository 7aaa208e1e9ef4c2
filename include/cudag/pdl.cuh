/* cudag/pdl.cuh — Programmatic Dependent Launch for your own kernels, in two
 * inline helpers.
 *
 * A kernel reached by a programmatic edge (`after: {a: programmatic}`) may
 * start while its upstream kernel is still running.  It must call
 * cudag_pdl_wait() before its first global read *or write* of memory an
 * upstream kernel touches; work that does not (loading weights or constants,
 * computing indices, setting up shared memory) may come before it and
 * overlaps the upstream kernel's tail.  cudag_pdl_launch_dependents() lets
 * the next kernel start early; call it once the rest of this kernel's work
 * no longer gates the next launch (or never: the trigger is implied at
 * exit).  Every thread of a block calls both, uniformly.
 *
 * Both compile to nothing below sm_90, where the instructions do not exist.
 * cudag reads the generated code: a kernel whose code executes the wait is
 * PDL-capable without `pdl: true`.  Do not read data produced upstream
 * through __restrict__ pointers or __ldg after the wait: non-coherent loads
 * may be hoisted above it.
 *
 * CUDA source modules compiled by cudag find this header as
 * #include <cudag/pdl.cuh> with no option; with nvcc, add -I to the
 * directory that holds cudag/ (pkg-config --cflags cudag). */
#ifndef CUDAG_PDL_CUH
#define CUDAG_PDL_CUH

/* Blocks until every upstream grid has completed and its memory is visible;
 * returns at once when the launch has no programmatic dependency.  The
 * "memory" clobber keeps the compiler from moving loads above it. */
static __device__ __forceinline__ void cudag_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Lets the dependent grid be scheduled once every block of this grid has
 * called it (or exited).  It promises nothing about this grid's memory: the
 * dependent still waits for this grid to complete in cudag_pdl_wait(). */
static __device__ __forceinline__ void cudag_pdl_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#endif /* CUDAG_PDL_CUH */
