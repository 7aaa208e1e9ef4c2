// The source of the kernel-code fixtures beside it (see README.md).
#include <cudag/pdl.cuh>

extern "C" __global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cudag_pdl_wait();
    if (i < n)
        x[i] *= a;
}

template <typename T>
__global__ void axpy(T *y, const T *x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}
template __global__ void axpy<float>(float *, const float *, float, int);

extern "C" __global__ void tiny(unsigned short q, double d, long long n) {}
