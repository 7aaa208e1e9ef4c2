"""PyTorch tensors bound to cudag graphs on a real GPU, against PyTorch's own
results on fresh random data, outputs poisoned first; replays ordered on the
caller's stream.  Suite gpu: skipped where PyTorch sees no GPU."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import cudag

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("PyTorch sees no CUDA device", allow_module_level=True)

N = 1 << 20
CHAIN = """\
cudag: 1
include: cudag_kernels.yaml
vars:
  N: 1048576
  G: cdiv(N, 1024)
buffers:
  x: { type: f32, count: N }
  y: { type: f32, count: N }
  z: { type: f32, count: N }
nodes:
  times: { kernel: scale_f32, grid: G, block: 256, args: [x, y, 2.0, N] }
  plus:  { kernel: add_f32, grid: G, block: 256, args: [y, x, z, N],
           after: {times: programmatic} }
"""


@pytest.fixture
def graph():
    g = cudag.loads(CHAIN)
    yield g
    g.close()


def fresh(n=N, dtype=torch.float32):
    seed = int(np.random.SeedSequence().entropy % (1 << 63))
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.rand(n, device="cuda", generator=gen, dtype=torch.float32)
            * 8 - 4).to(dtype)


def poisoned(n=N, dtype=torch.float32):
    return torch.full((n,), float("nan"), device="cuda", dtype=dtype)


def test_replays_follow_the_callers_stream(graph):
    s = torch.cuda.Stream()
    x, y, z = poisoned(), poisoned(), poisoned()
    with torch.cuda.stream(s):
        exe = graph.instantiate(stream=s, bind={"x": x, "y": y, "z": z})
        for _ in range(3):
            # A slow producer on the same stream: a replay that did not wait
            # for it would read the old x.
            torch.cuda._sleep(20_000_000)
            x.copy_(fresh())
            exe.launch()
            want = 2 * x + x
        torch.testing.assert_close(z, want, rtol=0, atol=0)
    s.synchronize()
    assert exe.stream == s.cuda_stream
    torch.testing.assert_close(y, 2 * x, rtol=0, atol=0)
    exe.close()


def test_default_stream_and_own_stream(graph):
    x, z = fresh(), poisoned()
    with graph.instantiate(stream=torch.cuda.current_stream(),
                           bind={"x": x, "z": z}) as exe:
        assert exe.stream == 1              # the legacy default stream
        exe.launch(times=2)
        torch.testing.assert_close(z, 3 * x, rtol=0, atol=0)
    x2, z2 = fresh(), poisoned()
    torch.cuda.synchronize()
    with graph.instantiate(bind={"x": x2, "z": z2}) as exe:
        exe.launch()
        exe.sync()
        torch.testing.assert_close(z2, 3 * x2, rtol=0, atol=0)
        np.testing.assert_array_equal(exe.read("z"), z2.cpu().numpy())
        seen = torch.as_tensor(exe.buffer("y"), device="cuda")
        torch.testing.assert_close(seen, 2 * x2, rtol=0, atol=0)


def test_set_arg_set_var_and_rebind(graph):
    x, z = fresh(), poisoned()
    with graph.instantiate(stream=torch.cuda.current_stream(),
                           bind={"x": x, "z": z}) as exe:
        exe.set_arg("times", 2, 0.25)
        exe.launch()
        torch.testing.assert_close(z, 0.25 * x + x, rtol=0, atol=0)
        x2, z2 = fresh(), poisoned()
        exe.rebind("x", x2)
        exe.rebind("z", z2)
        exe.launch()
        torch.testing.assert_close(z2, 0.25 * x2 + x2, rtol=0, atol=0)
        exe.set_var("G", 512)       # half the blocks: the kernels stride on
        z2.fill_(float("nan"))
        exe.launch()
        # set_var lowers the file again: the argument is 2.0 again.
        torch.testing.assert_close(z2, 3 * x2, rtol=0, atol=0)


def test_bf16_through_dlpack():
    g = cudag.loads(
        "cudag: 1\ninclude: cudag_kernels.yaml\nvars: { N: 65536 }\n"
        "buffers:\n  a: { type: bf16, count: N }\n"
        "  b: { type: bf16, count: N }\n  y: { type: bf16, count: N }\n"
        "nodes:\n  add: { kernel: residual_add_bf16, grid: 64, block: 256,"
        " args: [a, b, y, N] }\n")
    a, b = fresh(65536, torch.bfloat16), fresh(65536, torch.bfloat16)
    y = poisoned(65536, torch.bfloat16)
    with g.instantiate(stream=torch.cuda.current_stream(),
                       bind={"a": a, "b": b, "y": y}) as exe:
        exe.launch()
        want = (a.float() + b.float()).to(torch.bfloat16)
        torch.testing.assert_close(y, want, rtol=0, atol=0)
        bits = exe.read("y")
        assert bits.dtype.itemsize == 2
        np.testing.assert_array_equal(bits.view(np.uint16),
                                      y.view(torch.int16).cpu().numpy()
                                      .view(np.uint16))
    g.close()


def test_mismatched_tensors_are_refused(graph):
    cases = [
        (torch.zeros(N), "is in CPU memory"),
        (torch.zeros(N, device="cuda", dtype=torch.float64),
         "has element type f64"),
        (torch.zeros(N - 1, device="cuda"), "has 1048575 elements"),
        (torch.zeros(2 * N, device="cuda")[::2], "is not contiguous"),
        (torch.zeros(N, device="cuda", dtype=torch.bfloat16),
         "has element type bf16"),
    ]
    for t, msg in cases:
        with pytest.raises(cudag.Error, match=msg):
            graph.instantiate(bind={"x": t})
    assert graph._bound == {}


def test_bound_tensor_deleted_by_the_program(graph):
    x = fresh()
    want = 3 * x
    z = poisoned()
    xref = weakref.ref(x)
    exe = graph.instantiate(stream=torch.cuda.current_stream(),
                            bind={"x": x, "z": z})
    del x
    gc.collect()
    torch.cuda.empty_cache()
    assert xref() is not None
    torch.zeros(4 * N, device="cuda")       # reuse freed memory if any
    exe.launch()
    torch.testing.assert_close(z, want, rtol=0, atol=0)
    exe.close()
