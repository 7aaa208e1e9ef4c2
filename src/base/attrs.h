/* attrs.h — the compiler attributes the headers use (printf-format checks,
 * an unused static), in one place so that no other header tests for GCC. */
#ifndef CUDAG_ATTRS_H
#define CUDAG_ATTRS_H

#if defined(__GNUC__)
#define CUDAG__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CUDAG__UNUSED __attribute__((unused))
#else
#define CUDAG__PRINTF(f, a)
#define CUDAG__UNUSED
#endif

#endif /* CUDAG_ATTRS_H */
