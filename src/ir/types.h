/* types.h — numbers and element types (ir/types.c): range checks and text for
 * the checker, device bits for the build.  Below every stage and node kind. */
#ifndef CUDAG_VALUES_H
#define CUDAG_VALUES_H

#include "cudag.h"
#include "lib/driver.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct cudag__arg cudag__arg;

/* Writes v in the shortest form that reads back exactly ("2.0", "0.1",
 * "inf") into buf and returns buf (or a constant for inf and nan). */
const char *cudag__fmt_num(char buf[40], double v);

/* "s" unless n is 1: "1 element", "2 elements". */
const char *cudag__plural(uint64_t n);

/* Integer types (i8 … u64) and floating types (f16 … f64). */
bool cudag__is_int_type(cudag_type t);
bool cudag__is_float_type(cudag_type t);

/* The values an integer parameter of type t accepts (u64 up to INT64_MAX:
 * the language's integers are signed 64-bit). */
void cudag__int_range(cudag_type t, int64_t *lo, int64_t *hi);

/* The largest finite value of a floating type. */
double cudag__float_max(cudag_type t);

typedef enum cudag__fit {
    CUDAG__FIT_OK,
    CUDAG__FIT_NOT_INTEGER,
    CUDAG__FIT_RANGE,
    CUDAG__FIT_NOT_FINITE
} cudag__fit;

/* Whether a value (a memset or constant-init value, always a double) can be
 * stored in an element of type t.  Integers must be integral and in range;
 * floats finite (when need_finite) and not beyond the type's largest value. */
cudag__fit cudag__value_fits(cudag_type t, double v, bool need_finite);

/* True when [off, off + count) lies inside a buffer of `size` elements,
 * without overflowing. */
bool cudag__range_ok(uint64_t off, uint64_t count, uint64_t size);

/* v converted to the bits of an element of type t (little-endian in the low
 * bytes): floats with round-to-nearest-even (f16 and bf16 included, NaN
 * kept), integers truncated toward zero then wrapped to the width. */
uint64_t cudag__value_bits(cudag_type t, double v);

/* IEEE binary16 and bfloat16 bits of v, rounded to nearest even. */
uint16_t cudag__f16_bits(double v);
uint16_t cudag__bf16_bits(double v);

/*
 * Converts an argument to the bytes of a parameter of type t (into *slot,
 * zero-filled first): pointers from bufs[] plus the offset, integers
 * truncated to their width (unsigned types take the bits), floats converted
 * with round-to-nearest-even (f16, bf16 too).  Returns CUDAG_OK, or
 * CUDAG_ETYPE/CUDAG_ERANGE through err (at a->pos) when the argument does not
 * fit the parameter, as the checker would say.
 */
int cudag__pack_arg(const cudag_graph *g, cudag_type t, const cudag__arg *a,
                    const CUdeviceptr *bufs, uint64_t *slot, cudag_error *err);

#endif /* CUDAG_VALUES_H */
