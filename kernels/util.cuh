/* util.cuh — kernels for testing and benchmarking the graph machinery, not
 * for data: they move (almost) no memory.
 *
 *  util_noop()                      the PDL wait and trigger, nothing else.
 *  util_spin(prologue_ns, body_ns)  spins prologue_ns BEFORE the wait, then
 *                                   body_ns after it.
 *  util_stamp(out, slot, body_ns)   records %globaltimer at start, after the
 *                                   wait, at the end, and at the trigger.
 *  util_nowait_copy_f32(x, y, n)    a copy with no griddepcontrol at all.
 *
 * Where the trigger goes (util_spin, util_stamp): right after the wait,
 * before the body.  From there on nothing this grid does can change when the
 * dependent may *start* its own prologue (the dependent still waits for our
 * completion before its body), so triggering then overlaps the dependent's
 * whole prologue with our body, which is what a PDL edge should buy.
 * Triggering before our own wait would let a chain cascade: the grandchild
 * could launch while our parent still runs, and a long chain would fill the
 * SMs with blocks that all wait; after the wait, at most one dependent grid is
 * resident per running grid.
 *
 * Times are %globaltimer nanoseconds; its resolution is about 1 us on some
 * GPUs unless a profiler is attached, so tests should use spans of tens of
 * microseconds. */
#ifndef CUDAG_KERNELS_UTIL_CUH
#define CUDAG_KERNELS_UTIL_CUH

#include <stdint.h>

#include "pdl.cuh"

__device__ __forceinline__ uint64_t globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void spin_from(uint64_t t0, long long ns)
{
    if (ns <= 0)
        return;
    while (globaltimer() - t0 < (uint64_t)ns) {
    }
}

#endif
