"""Binding the program's arrays, on the fake driver (device memory is host
memory there, so the fake's kernels compute into NumPy arrays): arrays
through __cuda_array_interface__ and DLPack are used in place, and every
mismatch with the buffer's declaration is refused before anything is bound.
"""

from __future__ import annotations

import numpy as np
import pytest

import cudag
from conftest import CaiArray, DlpackArray

N = 64


@pytest.fixture
def graph(fake, scale_yaml):
    g = cudag.loads(scale_yaml)
    yield g
    g.close()
    assert fake.fake_objects_live() == 0


def fresh(n=N, dtype=np.float32, seed=None):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n).astype(dtype)


def poison(n=N):
    return np.full(n, np.nan, dtype=np.float32)


def test_bound_arrays_are_used_in_place(graph):
    x, z = fresh(), poison()
    with graph.instantiate(bind={"x": CaiArray(x), "z": CaiArray(z)}) as exe:
        exe.launch()
        exe.sync()
        np.testing.assert_array_equal(z, 2 * x + x)
        np.testing.assert_array_equal(exe.read("z"), z)
        np.testing.assert_array_equal(exe.read("y"), 2 * x)
        x[:] = fresh()                  # the graph reads the program's memory
        exe.launch()
        np.testing.assert_array_equal(z, 2 * x + x)


def test_dlpack_arrays_are_used_in_place(graph):
    x, z = fresh(), poison()
    dx, dz = DlpackArray(x, 2, 32), DlpackArray(z, 2, 32, byte_offset=0)
    with graph.instantiate(bind={"x": dx, "z": dz}, stream=0) as exe:
        exe.launch()
        np.testing.assert_array_equal(z, 3 * x)
        # The consumer names its stream: 0 is CUDA's legacy default stream.
        assert dx.streams == [1] and exe.stream == 1


def test_raw_byte_types_are_read_through_dlpack(fake):
    # PyTorch's bfloat16 has a __cuda_array_interface__ of type "<V2";
    # DLPack names it.
    class Bf16Tensor(DlpackArray):
        @property
        def __cuda_array_interface__(self):
            return {"shape": self.a.shape, "typestr": "<V2", "version": 3,
                    "data": (self.a.ctypes.data, False), "strides": None}

    g = cudag.loads("cudag: 1\nbuffers:\n  h: { type: bf16, count: 64 }\n"
                    "nodes:\n  z: { memset: h, value: 1.0 }\n")
    bits = np.zeros(N, np.uint16)
    with g.instantiate(bind={"h": Bf16Tensor(bits, 4, 16)}) as exe:
        exe.launch()
        assert (bits == 0x3f80).all()       # 1.0 in bf16
    with pytest.raises(cudag.Error, match=r"element type no cudag type \(<V2\)"):
        g.instantiate(bind={"h": CaiArray(bits, typestr="<V2")})
    g.close()


def test_dlpack_byte_offset_is_honoured(graph):
    big = fresh(N + 4)
    x = big[4:]
    z = poison()
    dx = DlpackArray(x, 2, 32, byte_offset=16)
    with graph.instantiate(bind={"x": dx, "z": CaiArray(z)}) as exe:
        exe.launch()
        np.testing.assert_array_equal(z, 3 * big[4:])


def refused(graph, fake, array, buffer="x", **kw):
    launches = fake.fake_launches()
    with pytest.raises(cudag.Error) as e:
        graph.instantiate(bind={buffer: array}, **kw)
    assert fake.fake_objects_live() == 0 and graph._execs == 0
    assert fake.fake_launches() == launches
    return e.value


def test_wrong_dtype_is_refused(graph, fake):
    e = refused(graph, fake, CaiArray(fresh(dtype=np.float64)))
    assert e.status == "CUDAG_ETYPE"
    assert e.message == ("array for buffer 'x' has element type f64 (<f8); "
                         "the buffer is declared f32")
    e = refused(graph, fake, DlpackArray(fresh().view(np.uint16)[:N], 4, 16))
    assert "element type bf16 (DLPack type code 4, 16 bits)" in e.message
    e = refused(graph, fake, CaiArray(fresh(), typestr=">f4"))
    assert "no cudag type (>f4)" in e.message


def test_wrong_size_is_refused(graph, fake):
    e = refused(graph, fake, CaiArray(fresh(N - 1)))
    assert e.status == "CUDAG_ERANGE"
    assert e.message == ("array for buffer 'x' has 63 elements (shape (63,)); "
                         "the buffer is declared with 64 elements of f32")
    # The count is what matters, not the shape.
    with graph.instantiate(bind={"x": CaiArray(fresh().reshape(8, 8))}):
        pass


def test_cpu_arrays_are_refused(graph, fake):
    e = refused(graph, fake, fresh())           # NumPy: DLPack on the CPU
    assert e.message == ("array for buffer 'x' is in CPU memory (DLPack "
                         "device CPU): bind GPU memory (a CUDA tensor or "
                         "array)")

    class CpuTensor:                            # as a CPU torch.Tensor is
        a = fresh()

        @property
        def __cuda_array_interface__(self):
            raise AttributeError("Can't get __cuda_array_interface__ on "
                                 "non-CUDA tensor")

        def __dlpack__(self, stream=None):
            assert stream is None
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    e = refused(graph, fake, CpuTensor())
    assert "is in CPU memory" in e.message
    e = refused(graph, fake, DlpackArray(fresh(), 2, 32, device_type=3))
    assert "is in CUDA host memory" in e.message


def test_non_contiguous_arrays_are_refused(graph, fake):
    e = refused(graph, fake, CaiArray(fresh(2 * N)[::2]))
    assert e.message == ("array for buffer 'x' is not contiguous (shape (64,),"
                         " strides (8,)): bind a contiguous copy "
                         "(.contiguous(), ascontiguousarray)")
    t = fresh(N).reshape(8, 8).T
    e = refused(graph, fake, DlpackArray(t, 2, 32))
    assert "is not contiguous (shape (8, 8), strides (1, 8))" in e.message


def test_other_device_and_strangers_are_refused(graph, fake):
    e = refused(graph, fake, CaiArray(fresh(), device=1))
    assert e.message == ("array for buffer 'x' is on CUDA device 1; the graph "
                         "is instantiated on device 0")
    e = refused(graph, fake, [1.0] * N)
    assert "cannot bind a list" in e.message
    e = refused(graph, fake, CaiArray(fresh()), buffer="nope")
    assert e.message == "unknown buffer 'nope'"


def test_bad_binding_binds_nothing(graph, fake):
    x, z = fresh(), poison()
    with pytest.raises(cudag.Error):
        graph.instantiate(bind={"z": CaiArray(z),
                                "x": CaiArray(fresh(dtype=np.float64))})
    assert graph._bound == {}
    with graph.instantiate(bind={"x": CaiArray(x)}) as exe:
        exe.launch()
        assert np.isnan(z).all()        # z was never bound
        np.testing.assert_array_equal(exe.read("z"), 3 * x)


def test_bindings_stay_on_the_graph(graph):
    x = fresh()
    with graph.instantiate(bind={"x": CaiArray(x)}):
        pass
    with graph.instantiate() as exe:    # x is still the program's array
        exe.launch()
        np.testing.assert_array_equal(exe.read("z"), 3 * x)


def test_rebind_moves_every_node(graph):
    x1, x2, z = fresh(seed=1), fresh(seed=2), poison()
    with graph.instantiate(bind={"x": CaiArray(x1), "z": CaiArray(z)}) as exe:
        exe.rebind("x", CaiArray(x2))
        exe.launch()
        np.testing.assert_array_equal(z, 3 * x2)
        with pytest.raises(cudag.Error) as e:
            exe.rebind("x", CaiArray(fresh(N + 1)))
        assert e.value.status == "CUDAG_ERANGE"
        exe.launch()
        np.testing.assert_array_equal(z, 3 * x2)
