// Seed: every form of kernel declaration the reader knows and refuses.
// comment with __global__ void fake(int x);
/* block __global__ void fake2(int) */
#include <cuda_fp16.h>
#define REAL float
#define TILE_T unsigned int
#define IDX(i, j) ((i) * 4 + (j))
#define MYWAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
typedef __nv_bfloat16 bf;
using u64 = unsigned long long;
struct Params { float a; int n; };
namespace detail {
__device__ __forceinline__ void wait_up() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ void helper() { wait_up(); }
}
static const char *s = "__global__ void notreal(int)";
extern "C" {
__global__ void __launch_bounds__(256, 2) k1(REAL* __restrict__ out, const REAL *in, TILE_T n) { detail::helper(); }
__global__ void k2(bf* x, u64 n, size_t m, int64_t q, std::int32_t r, float arr[], const volatile double * const p) { MYWAIT(); }
__global__ void k3(Params p) {}
__global__ void k4(float* x, int n = 0) {}
__global__ void k5(float* x, IDX(1,2) y) {}
__global__ void k6(float&x) {}
__global__ void k7(void) {}
__global__ void k8() { cudaGridDependencySynchronize(); }
__global__ void k9(float **pp, void *v, char c, signed char sc, unsigned char uc, short s, long l, unsigned long ul, bool b) {}
}
extern "C" __global__ void k10(int,
   float) { }
__global__ void ov(float *x) {}
__global__ void ov(int *x) {}
template <typename T, int N = 4> __global__ void tk(T* x, T a) {}
extern "C" __global__ void proto(float *x, int n);
extern "C" __global__ void proto(float *x, int n) { }
__global__ void weird(float *x, ...) {}
