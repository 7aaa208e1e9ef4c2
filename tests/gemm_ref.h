/* gemm_ref.h — what the gemm suites share (header-only): f32, f16 and bf16
 * elements as floats, and the row-major reference of a gemm node as the
 * language defines it (docs/language.md, "Gemm nodes"), in double. */
#ifndef CUDAG_GEMM_REF_H
#define CUDAG_GEMM_REF_H

#include "ir/types.h"

#include <math.h>
#include <string.h>

/* Element i of raw, of type t (f32, f16 or bf16), as a float. */
static inline float gr_load(cudag_type t, const void *raw, int64_t i)
{
    if (t == CUDAG_TYPE_F32)
        return ((const float *)raw)[i];
    uint16_t h = ((const uint16_t *)raw)[i];
    if (t == CUDAG_TYPE_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Stores v into element i of raw, rounded to nearest even. */
static inline void gr_store(cudag_type t, void *raw, int64_t i, double v)
{
    uint64_t bits = cudag__value_bits(t, v);
    size_t es = cudag_type_size(t);
    memcpy((char *)raw + (size_t)i * es, &bits, es);
}

/* One gemm, every default resolved: ld and stride of a, b, c, d; offsets
 * of a, b, c, d, bias. */
typedef struct gr_gemm {
    int64_t m, n, k, batch;
    int ta, tb;
    int64_t off[5], ld[4], stride[4];
    double alpha, beta;
    int epilogue;               /* cudag_epilogue */
    int has_bias;
} gr_gemm;

static inline double gr_epilogue(int e, double v)
{
    if (e == CUDAG_EPILOGUE_RELU)
        return v > 0 ? v : 0;
    if (e == CUDAG_EPILOGUE_GELU)
        return 0.5 * v *
               (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return v;
}

/* D[batch][m][n] as the language defines it, from the operands as floats
 * (c and bias may be NULL where unused). */
static inline void gr_reference(const gr_gemm *r, const float *a,
                                const float *b, const float *c,
                                const float *bias, double *d)
{
    for (int64_t bt = 0; bt < r->batch; bt++)
        for (int64_t i = 0; i < r->m; i++)
            for (int64_t j = 0; j < r->n; j++) {
                double acc = 0;
                for (int64_t l = 0; l < r->k; l++) {
                    int64_t ia = r->off[0] + bt * r->stride[0] +
                                 (r->ta ? l * r->ld[0] + i : i * r->ld[0] + l);
                    int64_t ib = r->off[1] + bt * r->stride[1] +
                                 (r->tb ? j * r->ld[1] + l : l * r->ld[1] + j);
                    acc += (double)a[ia] * b[ib];
                }
                double v = r->alpha * acc;
                if (r->beta != 0)
                    v += r->beta * c[r->off[2] + bt * r->stride[2] +
                                     i * r->ld[2] + j];
                if (r->has_bias)
                    v += bias[r->off[4] + j];
                d[(bt * r->m + i) * r->n + j] = gr_epilogue(r->epilogue, v);
            }
}

/* The largest |got − want| over the largest |want|, for element
 * (bt, i, j) of d at off[3] + bt·stride[3] + i·ld[3] + j; *bad counts
 * non-finite results. */
static inline double gr_error(const gr_gemm *r, const float *d,
                              const double *want, int *bad)
{
    double worst = 0, scale = 0;
    *bad = 0;
    for (int64_t bt = 0; bt < r->batch; bt++)
        for (int64_t i = 0; i < r->m; i++)
            for (int64_t j = 0; j < r->n; j++) {
                double w = want[(bt * r->m + i) * r->n + j];
                double g = d[r->off[3] + bt * r->stride[3] + i * r->ld[3] + j];
                if (!isfinite(g))
                    (*bad)++;
                worst = fmax(worst, fabs(g - w));
                scale = fmax(scale, fabs(w));
            }
    return worst / (scale > 0 ? scale : 1);
}

#endif /* CUDAG_GEMM_REF_H */
