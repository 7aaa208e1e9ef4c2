/* types.c — numbers and element types: what a value of each type may be,
 * how the checker prints one, and the bits a value or kernel argument
 * becomes on the device.  Shared by the checker, the build and the node
 * kinds; calls only base/ and the driver's types (lib/driver.h). */
#include "ir/types.h"
#include "cudag.h"
#include "base/diag.h"
#include "lib/driver.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what a value may be --------------------------------------------- */

/* Writes v in the shortest form that reads back exactly, keeping a ".0" on
 * integral values so that "2.0" is not mistaken for the integer 2. */
const char *cudag__fmt_num(char buf[40], double v)
{
    if (isnan(v))
        return "nan";
    if (isinf(v))
        return v < 0 ? "-inf" : "inf";
    /* %g would print 300 as 3e+02, the shortest form that reads back. */
    if (v == trunc(v) && fabs(v) < 1e16) {
        snprintf(buf, 40, "%.1f", v);
        return buf;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 40, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return buf;
}

/* "s" unless n is 1: "1 element", "2 elements". */
const char *cudag__plural(uint64_t n) { return n == 1 ? "" : "s"; }

bool cudag__is_int_type(cudag_type t)
{
    return t >= CUDAG_TYPE_I8 && t <= CUDAG_TYPE_U64;
}

bool cudag__is_float_type(cudag_type t)
{
    return t >= CUDAG_TYPE_F16 && t <= CUDAG_TYPE_F64;
}

void cudag__int_range(cudag_type t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case CUDAG_TYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case CUDAG_TYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
    case CUDAG_TYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case CUDAG_TYPE_U16: *lo = 0; *hi = UINT16_MAX; break;
    case CUDAG_TYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case CUDAG_TYPE_U32: *lo = 0; *hi = UINT32_MAX; break;
    /* The language's integers are signed 64-bit, so a negative value for a
     * u64 is a mistake far more often than a way to write 2^63 or more. */
    case CUDAG_TYPE_U64: *lo = 0; *hi = INT64_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* The largest finite value of a floating type. */
double cudag__float_max(cudag_type t)
{
    switch (t) {
    case CUDAG_TYPE_F16: return 65504.0;
    case CUDAG_TYPE_BF16: return 3.38953138925153547590470800371487866880e38;
    case CUDAG_TYPE_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}


/* Whether a value (a memset or constant-init value, always a double) can be
 * stored in an element of type t.  Integers must be integral and in range;
 * floats finite (when need_finite) and not beyond the type's largest value. */
cudag__fit cudag__value_fits(cudag_type t, double v, bool need_finite)
{
    if (cudag__is_int_type(t)) {
        if (!isfinite(v) || v != trunc(v))
            return CUDAG__FIT_NOT_INTEGER;
        /* Compare in double: the bounds ±2^63, 2^64 are exact there. */
        if (t == CUDAG_TYPE_U64)
            return v >= 0 && v < 18446744073709551616.0 ? CUDAG__FIT_OK
                                                        : CUDAG__FIT_RANGE;
        if (t == CUDAG_TYPE_I64)
            return v >= -9223372036854775808.0 && v < 9223372036854775808.0
                       ? CUDAG__FIT_OK
                       : CUDAG__FIT_RANGE;
        int64_t lo, hi;
        cudag__int_range(t, &lo, &hi);
        return v >= (double)lo && v <= (double)hi ? CUDAG__FIT_OK
                                                  : CUDAG__FIT_RANGE;
    }
    if (!isfinite(v))
        return need_finite ? CUDAG__FIT_NOT_FINITE : CUDAG__FIT_OK;
    return fabs(v) <= cudag__float_max(t) ? CUDAG__FIT_OK : CUDAG__FIT_RANGE;
}


bool cudag__range_ok(uint64_t off, uint64_t count, uint64_t size)
{
    return off <= size && count <= size - off;
}

/* ---- device bits ------------------------------------------------------ */

/* v rounded to nearest even into a binary format with `eb` exponent and `mb`
 * mantissa bits (binary16: 5/10, bfloat16: 8/7).  ldexp and nearbyint are
 * exact here, so rounding happens once, straight from the double. */
static uint16_t small_float(double v, int eb, int mb)
{
    uint32_t sign = signbit(v) ? 1u << (eb + mb) : 0u;
    uint32_t inf = ((1u << eb) - 1u) << mb;
    if (isnan(v))
        return (uint16_t)(inf | 1u << (mb - 1));    /* quiet NaN */
    double a = fabs(v);
    if (a == 0.0)
        return (uint16_t)sign;
    int bias = (1 << (eb - 1)) - 1, emin = 1 - bias;
    int e;
    frexp(a, &e);
    e -= 1;                     /* a = 1.f × 2^e */
    if (isinf(a) || e > bias)
        return (uint16_t)(sign | inf);
    if (e < emin) {
        /* Subnormal: units of 2^(emin-mb).  Rounding up to 2^mb lands on the
         * smallest normal number, whose bits are exactly that value. */
        double q = nearbyint(ldexp(a, mb - emin));
        return (uint16_t)(sign | (uint32_t)q);
    }
    double q = nearbyint(ldexp(a, mb - e));   /* in [2^mb, 2^(mb+1)] */
    if (q >= ldexp(1.0, mb + 1)) {
        q = ldexp(1.0, mb);
        e++;
        if (e > bias)
            return (uint16_t)(sign | inf);
    }
    uint32_t frac = (uint32_t)q - (1u << mb);
    return (uint16_t)(sign | (uint32_t)(e + bias) << mb | frac);
}

/* The same rounding on the double's bits, for results that are normal
 * numbers of the small format (every value a random init makes, almost):
 * adding half an ulp less one, plus the kept lowest bit, rounds to nearest
 * even, and a carry out of the mantissa lands in the exponent as it should.
 * Anything else (zero, subnormal, overflow, NaN) takes small_float.  Filling
 * gigabytes of weights spends its time here: this path needs no libm call. */
static uint16_t small_float_fast(double v, int eb, int mb)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int bias = (1 << (eb - 1)) - 1, shift = 52 - mb;
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    if (e < 1 - bias || e > bias)
        return small_float(v, eb, mb);
    uint64_t a = u & ~(UINT64_C(1) << 63);
    uint64_t lsb = (a >> shift) & 1;
    uint64_t r = (a + ((UINT64_C(1) << (shift - 1)) - 1) + lsb) >> shift;
    int re = (int)(r >> mb) - 1023 + bias;
    if (re >= (1 << eb) - 1)
        return small_float(v, eb, mb);
    uint32_t sign = (uint32_t)(u >> 63) << (eb + mb);
    return (uint16_t)(sign | (uint32_t)re << mb |
                      (uint32_t)(r & ((UINT64_C(1) << mb) - 1)));
}

uint16_t cudag__f16_bits(double v) { return small_float_fast(v, 5, 10); }
uint16_t cudag__bf16_bits(double v) { return small_float_fast(v, 8, 7); }

/* A double truncated toward zero and wrapped to 64 bits; NaN is 0. */
static uint64_t int_bits(double v)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (v >= 18446744073709551616.0 || v < -9223372036854775808.0)
        return v < 0 ? UINT64_C(1) << 63 : UINT64_MAX;
    if (v >= 9223372036854775808.0)
        return (uint64_t)v;
    return (uint64_t)(int64_t)v;
}

uint64_t cudag__value_bits(cudag_type t, double v)
{
    switch (t) {
    case CUDAG_TYPE_F16:
        return cudag__f16_bits(v);
    case CUDAG_TYPE_BF16:
        return cudag__bf16_bits(v);
    case CUDAG_TYPE_F32: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    case CUDAG_TYPE_F64: {
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    default: {
        size_t size = cudag_type_size(t);
        uint64_t u = int_bits(v);
        return size >= 8 ? u : u & ((UINT64_C(1) << (size * 8)) - 1);
    }
    }
}

static bool is_signed(cudag_type t)
{
    return t == CUDAG_TYPE_I8 || t == CUDAG_TYPE_I16 || t == CUDAG_TYPE_I32 ||
           t == CUDAG_TYPE_I64;
}

static const char *arg_kind_name(cudag_arg_kind k)
{
    switch (k) {
    case CUDAG_ARG_BUFFER:
        return "a buffer";
    case CUDAG_ARG_INT:
        return "an integer";
    case CUDAG_ARG_FLOAT:
        return "a number";
    case CUDAG_ARG_NULL:
        return "null";
    case CUDAG_ARG_COND:
        return "a condition";
    }
    return "an invalid argument";
}

int cudag__pack_arg(const cudag_graph *g, cudag_type t, const cudag__arg *a,
                    const CUdeviceptr *bufs, uint64_t *slot, cudag_error *err)
{
    *slot = 0;
    /* A condition's handle exists once the graph holding its conditional
     * node does: the kernel node puts it in when it is added (kinds/kernel.c),
     * and 0 stands for it until then. */
    if (t == CUDAG_TYPE_COND || a->kind == CUDAG_ARG_COND) {
        if (t == CUDAG_TYPE_COND && a->kind == CUDAG_ARG_COND &&
            a->buffer < g->nconds)
            return CUDAG_OK;
        if (t == CUDAG_TYPE_COND && a->kind == CUDAG_ARG_COND)
            return cudag__fail_at(err, CUDAG_EUNKNOWN, a->pos,
                                  "condition index %u out of range",
                                  a->buffer);
        return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                              "expected %s for a %s parameter, got %s",
                              t == CUDAG_TYPE_COND ? "a condition"
                              : t == CUDAG_TYPE_PTR ? "a buffer"
                                                    : "a value",
                              cudag_type_name(t), arg_kind_name(a->kind));
    }
    if (t == CUDAG_TYPE_PTR) {
        if (a->kind == CUDAG_ARG_NULL)
            return CUDAG_OK;
        if (a->kind != CUDAG_ARG_BUFFER)
            return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                                  "expected a buffer for a ptr parameter, "
                                  "got %s", arg_kind_name(a->kind));
        if (a->buffer >= g->nbuffers)
            return cudag__fail_at(err, CUDAG_EUNKNOWN, a->pos,
                                  "buffer index %u out of range", a->buffer);
        const cudag__buffer *b = &g->buffers[a->buffer];
        if (a->offset >= b->count)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "offset %llu is outside buffer '%s' "
                                  "(%llu elements)",
                                  (unsigned long long)a->offset, b->name,
                                  (unsigned long long)b->count);
        *slot = bufs[a->buffer] + a->offset * cudag_type_size(b->type);
        return CUDAG_OK;
    }
    if (cudag__is_float_type(t)) {
        double v;
        if (a->kind == CUDAG_ARG_FLOAT)
            v = a->f;
        else if (a->kind == CUDAG_ARG_INT)
            v = (double)a->i;
        else
            return cudag__fail_at(
                err, CUDAG_ETYPE, a->pos,
                "expected a number for a %s parameter, got %s",
                cudag_type_name(t), arg_kind_name(a->kind));
        /* As the checker: a finite value beyond the type's largest finite
         * number is an error; an explicit infinity or NaN passes. */
        double max = t == CUDAG_TYPE_F16    ? 65504.0
                     : t == CUDAG_TYPE_BF16 ? 0x1.fep127
                     : t == CUDAG_TYPE_F32  ? FLT_MAX
                                            : DBL_MAX;
        if (isfinite(v) && fabs(v) > max)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "%g is out of range for %s", v,
                                  cudag_type_name(t));
        uint64_t bits = cudag__value_bits(t, v);
        *slot = bits;
        return CUDAG_OK;
    }
    if (a->kind != CUDAG_ARG_INT)
        return cudag__fail_at(err, CUDAG_ETYPE, a->pos,
                              "expected an integer for a %s parameter, got %s",
                              cudag_type_name(t), arg_kind_name(a->kind));
    size_t size = cudag_type_size(t);
    int64_t v = a->i;
    if (size < 8) {
        int64_t lo, hi;
        if (is_signed(t)) {
            hi = (INT64_C(1) << (size * 8 - 1)) - 1;
            lo = -hi - 1;
        } else {
            lo = 0;
            hi = (INT64_C(1) << (size * 8)) - 1;
        }
        if (v < lo || v > hi)
            return cudag__fail_at(err, CUDAG_ERANGE, a->pos,
                                  "%lld does not fit a %s parameter "
                                  "(%lld to %lld)",
                                  (long long)v, cudag_type_name(t),
                                  (long long)lo, (long long)hi);
        *slot = (uint64_t)v & ((UINT64_C(1) << (size * 8)) - 1);
    } else {
        /* i64 takes any value; u64 takes the bits, as the API documents. */
        *slot = (uint64_t)v;
    }
    return CUDAG_OK;
}
