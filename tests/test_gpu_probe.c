/* test_gpu_probe.c — says on the console, once, whether the gpu suite runs
 * here, and why not.  meson shows a test's output only when it fails, so the
 * reason the GPU suites skip (gpu_require's) would otherwise sit in
 * testlog.txt alone; this test runs first and is verbose (tests/meson.build).
 * Exit status: 0 with the device it found, 77 (SKIP) with the reason. */
#include "gpu_common.h"

int main(void)
{
    gpu_require();
    const cudag__drv *d = gpu_drv();
    int n = 0;
    char name[256] = "?";
    CUdevice dev;
    if (d->cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1 ||
        d->cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        d->cuDeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS) {
        printf("FAIL: the driver loaded but device 0 cannot be queried\n");
        return 1;
    }
    printf("the gpu suite runs on device 0 of %d: %s (kernels in %s)\n", n,
           name, gpu_kernels(""));
    return 0;
}
