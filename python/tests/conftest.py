"""Shared by the Python suites: paths into the trees, the fake driver, and
small array objects that expose exactly what a GPU library would
(__cuda_array_interface__, __dlpack__, __dlpack_device__) over NumPy memory,
which the fake driver treats as device memory."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np
import pytest

SRC = Path(os.environ.get("CUDAG_SOURCE_ROOT",
                          Path(__file__).resolve().parents[2]))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (suite gpu)")


def pytest_sessionfinish(session, exitstatus):
    # meson counts exit status 77 as "skipped": the GPU suite says so when
    # every test skipped (no GPU), as the C GPU suites do.
    # A module skipped whole leaves nothing collected: pytest's exit 5.
    if os.environ.get("CUDAG_GPU_SUITE") and exitstatus in (0, 5) and \
            not _ran_any(session):
        print("\nskipped: no test of the GPU suite could run here "
              "(reasons above)")
        session.exitstatus = 77


def _ran_any(session):
    return getattr(session, "_cudag_ran", False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and not rep.skipped:
        item.session._cudag_ran = True


@pytest.fixture
def fake():
    """The fake libcuda.so.1 (python/tests/fake_libcuda.c) when it is the
    driver this process loads; skips otherwise."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        live = lib.fake_objects_live
    except (OSError, AttributeError):
        pytest.skip("the fake driver is not first in LD_LIBRARY_PATH "
                    "(run through `meson test`)")
    live.restype = ctypes.c_int
    lib.fake_launches.restype = ctypes.c_int
    lib.fake_instantiate_flags.restype = ctypes.c_ulonglong
    return lib


# ---- arrays a GPU library would hand over ---------------------------------

class CaiArray:
    """A NumPy array seen through __cuda_array_interface__ (v3) only, as a
    Numba device array is; `device` adds __dlpack_device__ (CUDA, id)."""

    def __init__(self, a: np.ndarray, device: int | None = 0,
                 typestr: str | None = None):
        self.a = a
        self.typestr = typestr or a.dtype.str
        if device is not None:
            self.__dlpack_device__ = lambda: (2, device)

    @property
    def __cuda_array_interface__(self):
        c = self.a.flags.c_contiguous
        return {"shape": self.a.shape, "typestr": self.typestr,
                "data": (self.a.ctypes.data, False), "version": 3,
                "strides": None if c else self.a.strides, "stream": None}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DlpackArray:
    """A NumPy array seen through DLPack only, claiming to live on CUDA
    device `device` (or device type `device_type`), with DLPack type
    (code, bits): what JAX, or PyTorch's bfloat16, hands over.  Records the
    stream its consumer asked for."""

    def __init__(self, a: np.ndarray, code: int, bits: int, device: int = 0,
                 device_type: int = 2, byte_offset: int = 0):
        self.a = a
        self.streams = []
        self._shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        c = a.flags.c_contiguous
        self._strides = None if c else (ctypes.c_int64 * a.ndim)(
            *(s // a.itemsize for s in a.strides))
        self._t = _DLManagedTensor(
            data=a.ctypes.data - byte_offset,
            device=_DLDevice(device_type, device), ndim=a.ndim,
            dtype=_DLDataType(code, bits, 1),
            shape=self._shape, strides=self._strides, byte_offset=byte_offset)
        self._dev = (device_type, device)

    def __dlpack_device__(self):
        return self._dev

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        # No destructor: the tensor struct lives in this object.
        return _capsule_new(ctypes.addressof(self._t), b"dltensor", None)


@pytest.fixture
def scale_yaml():
    """A graph of the shipped kernels that the fake driver can run:
    y = a·x, then z = y + x."""
    return (
        "cudag: 1\n"
        "include: cudag_kernels.yaml\n"
        "vars: { N: 64 }\n"
        "buffers:\n"
        "  x: { type: f32, count: N, init: iota }\n"
        "  y: { type: f32, count: N }\n"
        "  z: { type: f32, count: N }\n"
        "nodes:\n"
        "  times: { kernel: scale_f32, grid: 1, block: 64,\n"
        "           args: [x, y, 2.0, N] }\n"
        "  plus:  { kernel: add_f32, grid: 1, block: 64, args: [y, x, z, N],\n"
        "           after: [times] }\n")
