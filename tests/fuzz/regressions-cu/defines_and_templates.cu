// define: ELEM=double
// define: F(x)=x
extern "C" __global__ void k(ELEM* e, F(int) n, int m = 2) {}
template <typename T, typename U = T> __global__ void t(T* a, U b) {}
#define K extern "C" __global__ void
K viamacro(float *x) { asm("griddepcontrol.wait;"); }
