/* clock.c — the monotonic clock in nanoseconds, its own file because it is a
 * call to the system (POSIX clock_gettime), not a container. */
#include "base/clock.h"

#include <stdint.h>

#include <time.h>

uint64_t cudag__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}
