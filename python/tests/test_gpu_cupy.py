"""CuPy arrays bound to cudag graphs on a real GPU, against CuPy's own
results on fresh random data, outputs poisoned first, replays on a CuPy
stream.  Suite gpu: skipped where CuPy sees no GPU."""

from __future__ import annotations

import numpy as np
import pytest

import cudag

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no device")
except Exception as e:          # CuPy raises its own error types here
    pytest.skip(f"CuPy sees no CUDA device ({e})", allow_module_level=True)

N = 1 << 18
GRAPH = f"""\
cudag: 1
include: cudag_kernels.yaml
vars: {{ N: {N} }}
buffers:
  x: {{ type: f32, count: N }}
  w: {{ type: f32, count: N }}
  t: {{ type: f32, count: N }}
  y: {{ type: f32, count: N }}
nodes:
  mul:  {{ kernel: mul_f32, grid: 256, block: 256, args: [x, w, t, N] }}
  axpy: {{ kernel: axpy_f32, grid: 256, block: 256, args: [x, t, 0.5, N],
          after: {{mul: programmatic}} }}
  out:  {{ kernel: copy_f32, grid: 256, block: 256, args: [t, y, N],
          after: [axpy] }}
"""


def fresh():
    rng = cp.random.default_rng(np.random.SeedSequence().entropy)
    return (rng.random(N, dtype=cp.float32) * 4 - 2).astype(cp.float32)


def test_cupy_arrays_on_a_cupy_stream():
    g = cudag.loads(GRAPH)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x, w = fresh(), fresh()
        y = cp.full(N, cp.nan, dtype=cp.float32)
        with g.instantiate(stream=s, bind={"x": x, "w": w, "y": y}) as exe:
            assert exe.stream == s.ptr
            for _ in range(3):
                x[:] = fresh()
                exe.launch()
                want = x * w + 0.5 * x      # axpy: t = t + a·x
            cp.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(exe.read("y"), cp.asnumpy(want),
                                       rtol=1e-6, atol=1e-6)
            t = cp.asarray(exe.buffer("t"))
            cp.testing.assert_allclose(t, want, rtol=1e-6, atol=1e-6)
    g.close()


def test_cupy_refusals_and_rebind():
    g = cudag.loads(GRAPH)
    with pytest.raises(cudag.Error, match="has element type f64"):
        g.instantiate(bind={"x": cp.zeros(N, dtype=cp.float64)})
    with pytest.raises(cudag.Error, match="is not contiguous"):
        g.instantiate(bind={"x": cp.zeros((512, 1024), cp.float32)[:, ::2]})
    with pytest.raises(cudag.Error, match="has 10 elements"):
        g.instantiate(bind={"x": cp.zeros(10, cp.float32)})
    x, w, y = fresh(), fresh(), cp.full(N, cp.nan, dtype=cp.float32)
    with g.instantiate(stream=cp.cuda.get_current_stream(),
                       bind={"x": x, "w": w, "y": y}) as exe:
        w2 = fresh()
        exe.rebind("w", w2)
        exe.launch()
        cp.testing.assert_allclose(y, x * w2 + 0.5 * x, rtol=1e-6, atol=1e-6)
    g.close()
