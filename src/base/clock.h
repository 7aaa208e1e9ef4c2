/* clock.h — the monotonic clock the stage timings read: the library's one
 * question to the system about time. */
#ifndef CUDAG_CLOCK_H
#define CUDAG_CLOCK_H

#include <stdint.h>

/* Monotonic clock in nanoseconds, for stage timings. */
uint64_t cudag__now_ns(void);

#endif /* CUDAG_CLOCK_H */
