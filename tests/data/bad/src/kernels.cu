// Kernels for the source-module cases of tests/data/bad/ (one mistake each
// in the YAML files that name this module).
#include <cudag/pdl.cuh>

struct Params { float a; int n; };

extern "C" __global__ void axpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

extern "C" __global__ void waits(const float *x, float *y, int n)
{
    cudag_pdl_wait();
    if (n)
        y[0] = x[0];
}

extern "C" __global__ void dflt(float *x, int n = 1) {}
extern "C" __global__ void byval(float *x, Params p) {}

template <typename T>
__global__ void tscale(T *x, T a, int n) {}

#define DEF(T) extern "C" __global__ void fill_##T(T *x, int n) {}
DEF(float)
