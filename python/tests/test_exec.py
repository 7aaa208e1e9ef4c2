"""An instantiated graph from Python, on the fake driver: launches, argument
and variable changes without re-instantiation, copies to and from NumPy,
streams from other libraries, buffers handed out as GPU arrays, and the
library's errors with their positions."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import cudag
from conftest import SRC, CaiArray

N = 64

YAML = """\
cudag: 1
include: cudag_kernels.yaml
vars: { N: 64, A: 2 }
buffers:
  x: { type: f32, count: N, init: iota }
  y: { type: f32, count: N }
  z: { type: f32, count: N }
nodes:
  times: { kernel: scale_f32, grid: 1, block: 64, args: [x, y, A, N] }
  plus:  { kernel: add_f32, grid: 1, block: 64, args: [y, x, z, N],
           after: [times] }
"""


@pytest.fixture
def exe(fake):
    g = cudag.loads(YAML, name="e.yaml")
    x = g.instantiate()
    yield x
    x.close()
    g.close()
    assert fake.fake_objects_live() == 0


IOTA = np.arange(N, dtype=np.float32)


def test_launch_times_and_read(exe, fake):
    exe.launch(times=3)
    assert fake.fake_launches() == 3
    exe.launch(0)
    assert fake.fake_launches() == 3
    exe.sync()
    np.testing.assert_array_equal(exe.read("z"), 3 * IOTA)
    with pytest.raises(ValueError):
        exe.launch(-1)


def test_write_then_launch(exe):
    x = np.random.default_rng().uniform(-4, 4, N).astype(np.float32)
    exe.write("x", x)
    exe.launch()
    np.testing.assert_array_equal(exe.read("z"), 2 * x + x)
    with pytest.raises(cudag.Error) as e:
        exe.write("x", x.astype(np.float64))
    assert e.value.status == "CUDAG_ETYPE"
    with pytest.raises(cudag.Error) as e:
        exe.write("x", x[:5])
    assert e.value.status == "CUDAG_ERANGE"
    with pytest.raises(cudag.Error, match="unknown buffer 'w'"):
        exe.read("w")


def test_set_arg(exe):
    exe.set_arg("times", 2, 0.5)
    exe.launch()
    np.testing.assert_array_equal(exe.read("z"), 0.5 * IOTA + IOTA)
    exe.set_arg("times", 2, 4)                  # an int for an f32 parameter
    exe.set_arg("plus", 2, "y")                 # z's node now writes y
    exe.write("z", np.zeros(N, np.float32))
    exe.launch()
    np.testing.assert_array_equal(exe.read("y"), 4 * IOTA + IOTA)
    np.testing.assert_array_equal(exe.read("z"), np.zeros(N, np.float32))
    with pytest.raises(cudag.Error) as e:
        exe.set_arg("times", 0, 1.0)            # a float for a ptr
    assert e.value.status == "CUDAG_ETYPE"
    assert "expected a buffer for a ptr parameter" in e.value.message
    with pytest.raises(cudag.Error) as e:
        exe.set_arg("nobody", 0, None)
    assert "nobody" in e.value.message


def test_set_var_updates_in_place(exe, fake):
    exe.set_var("A", 5)
    exe.launch()
    np.testing.assert_array_equal(exe.read("z"), 5 * IOTA + IOTA)
    # A new size is refused, at the buffer's count in the file.
    with pytest.raises(cudag.Error) as e:
        exe.set_var("N", 128)
    err = e.value
    assert err.status == "CUDAG_ENOTSUP"
    assert (err.file, err.line) == ("e.yaml", 5)
    assert str(err).split("\n")[1] == \
        "     5 |   x: { type: f32, count: N, init: iota }"
    exe.launch()                                # unchanged by the failure
    np.testing.assert_array_equal(exe.read("z"), 5 * IOTA + IOTA)
    # An integer variable refuses a float (cudag_exec_set_var_float).
    with pytest.raises(cudag.Error) as e:
        exe.set_var("A", 2.5)
    assert e.value.status == "CUDAG_ETYPE"
    with pytest.raises(TypeError):
        exe.set_var("A", "2")


def test_set_var_of_a_floating_point_variable(fake):
    g = cudag.loads(YAML.replace("A: 2 }", "A: 2, eps: 0.25 }")
                        .replace("args: [x, y, A, N]", "args: [x, y, eps * 2, N]"),
                    name="f.yaml")
    assert g.vars["eps"] == 0.25
    exe = g.instantiate()
    exe.set_var("eps", 1.5)         # one call: every argument made from eps
    exe.launch()
    np.testing.assert_array_equal(exe.read("y"), 3 * IOTA)
    exe.set_var("eps", 2)           # an int, taken as a double
    exe.launch()
    np.testing.assert_array_equal(exe.read("y"), 4 * IOTA)
    exe.close()
    g.close()
    assert fake.fake_objects_live() == 0


def test_streams_of_other_libraries(fake):
    g = cudag.loads(YAML)

    class TorchLike:
        cuda_stream = 0x1230

    class CupyLike:
        ptr = 0x4560

    class NumbaLike:
        handle = ctypes.c_void_p(0x7890)

    class CudaCore:
        def __cuda_stream__(self):
            return (0, 0xabc0)

    for s, want in [(TorchLike(), 0x1230), (CupyLike(), 0x4560),
                    (NumbaLike(), 0x7890), (CudaCore(), 0xabc0),
                    (0x5550, 0x5550), (0, 1)]:
        with g.instantiate(stream=s) as exe:
            assert exe.stream == want
            exe.launch()
    with g.instantiate() as exe:        # a stream of the exec's own
        assert exe.stream not in (0, 1)
    with pytest.raises(TypeError, match="as a stream"):
        g.instantiate(stream="default")
    g.close()
    # Borrowed streams were not destroyed, the exec's own was.
    assert fake.fake_objects_live() == 0


def test_buffer_as_a_gpu_array(exe):
    exe.launch()
    b = exe.buffer("z")
    cai = b.__cuda_array_interface__
    assert cai["shape"] == (N,) and cai["typestr"] == "<f4"
    assert cai["stream"] == exe.stream and cai["version"] == 3
    # Fake device memory is host memory: read it where it lies.
    seen = np.ctypeslib.as_array(
        (ctypes.c_float * N).from_address(cai["data"][0]))
    np.testing.assert_array_equal(seen, 3 * IOTA)
    assert "z" in repr(b)


def test_bound_buffer_address_is_the_arrays(fake):
    g = cudag.loads(YAML)
    x = np.ones(N, np.float32)
    with g.instantiate(bind={"x": CaiArray(x)}) as exe:
        assert exe.buffer("x").ptr == x.ctypes.data
    g.close()


def test_stats_and_instantiate_errors(fake):
    g = cudag.loads(YAML)
    with g.instantiate() as exe:
        st = exe.stats
        assert set(st) == {"driver_ns", "load_ns", "alloc_ns", "build_ns",
                           "instantiate_ns", "downgraded_edges"}
        assert st["downgraded_edges"] == 0
        # The kernels' fatbin was loaded from its file; nothing compiled.
        mods = exe.modules
        assert "file" in [m["origin"] for m in mods]
        assert {m["origin"] for m in mods} <= {"file", "unused"}
        assert all(m["load_ns"] > 0 for m in mods if m["origin"] == "file")
    with pytest.raises(cudag.Error) as e:
        g.instantiate(device=3)
    assert e.value.message == "there is no CUDA device 3 (this machine has 1)"
    assert g._execs == 0 and fake.fake_objects_live() == 0
    g.close()


def test_device_launch_reaches_the_driver(fake):
    g = cudag.loads(YAML)
    for want, kw in ((0, {}), (4, {"device_launch": True})):
        with g.instantiate(**kw) as exe:
            assert fake.fake_instantiate_flags() == want
            exe.launch()
            exe.sync()
            np.testing.assert_array_equal(exe.read("z"), 3 * IOTA)
    g.close()


def test_instantiate_failure_carries_the_position(fake, tmp_path):
    text = YAML.replace("include: cudag_kernels.yaml",
                        "modules: { m: missing/k.fatbin }\n"
                        "kernels:\n"
                        "  scale_f32: { module: m, params: [ptr, ptr, f32, "
                        "i64] }\n"
                        "  add_f32: { module: m, params: [ptr, ptr, ptr, "
                        "i64] }")
    # cudag reads module files when it loads a graph, so the file exists
    # then (a stand-in fatbin, tests/data/modules/) and is gone by the time
    # the driver looks for it.
    (tmp_path / "missing").mkdir()
    stand_in = (SRC / "tests" / "data" / "modules" / "k.fatbin").read_bytes()
    (tmp_path / "missing" / "k.fatbin").write_bytes(stand_in)
    g = cudag.loads(text, name=str(tmp_path / "d.yaml"))
    (tmp_path / "missing" / "k.fatbin").unlink()
    with pytest.raises(cudag.Error) as e:
        g.instantiate()
    err = e.value
    assert err.status == "CUDAG_EIO" and err.cuda_result != 0
    assert err.message.startswith("cannot open module 'm' (")
    assert err.file.endswith("d.yaml") and err.line > 0
    assert fake.fake_objects_live() == 0
    g.close()
