"""Arrays and streams of other GPU libraries, translated for cudag's ABI.

An array is read through `__cuda_array_interface__` (PyTorch, CuPy, Numba)
or, where that is missing or refuses (PyTorch's bfloat16), through DLPack
(`__dlpack__`, JAX and the rest).  Each is checked against the buffer's
declaration (element type, element count, device, contiguity) and kept
alive, with its DLPack capsule, while it is bound.  A stream is anything
with `__cuda_stream__`, `cuda_stream` (PyTorch), `ptr` (CuPy) or `handle`
(Numba), or a raw CUstream as an int.
"""

from __future__ import annotations

import ctypes
from ctypes import (POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8,
                    c_uint16, c_uint64, c_void_p)
from dataclasses import dataclass

from . import _capi as C
from ._errors import usage

# DLPack's device types (dlpack.h) that cudag can use, and the others it
# names in messages.
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DEVICE_NAMES = {DL_CPU: "CPU", DL_CUDA: "CUDA", DL_CUDA_HOST: "CUDA host",
                    DL_CUDA_MANAGED: "CUDA managed", 10: "ROCm", 14: "oneAPI"}
# DLPack's type codes: int, uint, float, bfloat.
_DL_CODES = {0: "i", 1: "u", 2: "f", 4: "bf"}


@dataclass(frozen=True)
class ElementType:
    """A cudag element type: its name ("bf16"), its value in cudag.h, its
    size, and its kind ("i", "u", "f" or "bf")."""

    name: str
    value: int
    size: int

    @property
    def kind(self) -> str:
        return self.name.rstrip("0123456789")

    def numpy(self):
        """The NumPy dtype; bf16 is ml_dtypes.bfloat16 where installed,
        else uint16 holding the bits."""
        import numpy as np
        if self.kind == "bf":
            try:
                import ml_dtypes
                return np.dtype(ml_dtypes.bfloat16)
            except ImportError:
                return np.dtype(np.uint16)
        return np.dtype(f"{self.kind}{self.size}")


def _types():
    out = {}
    t = 1
    while (name := C.text(C.lib.cudag_type_name(t))) is not None:
        if name != "ptr":       # kernel parameters only
            out[t] = ElementType(name, t, C.lib.cudag_type_size(t))
        t += 1
    return out


TYPES = _types()
TYPES_BY_NAME = {t.name: t for t in TYPES.values()}


def element_type(spec) -> ElementType:
    """A type given as a cudag name ("f32"), an ElementType, or a NumPy
    dtype or scalar type (np.float32)."""
    if isinstance(spec, ElementType):
        return spec
    if isinstance(spec, str):
        # Only cudag's words: NumPy would read "float" as f64.
        if spec in TYPES_BY_NAME:
            return TYPES_BY_NAME[spec]
        raise TypeError(f"cudag: {spec!r} is not an element type (one of "
                        f"{', '.join(TYPES_BY_NAME)})")
    try:
        import numpy as np
        dt = np.dtype(spec)
    except (TypeError, ImportError):
        dt = None
    if dt is not None:
        kind = "bf" if dt.name == "bfloat16" else dt.kind
        t = TYPES_BY_NAME.get(f"{kind}{dt.itemsize * 8}")
        if t is not None:
            return t
    raise TypeError(f"cudag: {spec!r} is not an element type (one of "
                    f"{', '.join(TYPES_BY_NAME)})")


def _type_from(kind: str, bits: int) -> ElementType | None:
    return TYPES_BY_NAME.get(f"{kind}{bits}")


# ---- DLPack ------------------------------------------------------------------

class _DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32),
                ("dtype", _DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, c_char_p]


@dataclass
class ArrayView:
    """What cudag needs of an array: its device address, element type
    (None when cudag has no such type), element count, the device it is on
    ((DLPack device type, id), or None where the object does not say), and
    whether it is C-contiguous.  `keep` holds what must stay alive while the
    address is in use (the array, its DLPack capsule)."""

    ptr: int
    etype: ElementType | None
    dtype_text: str
    count: int
    device: tuple | None
    contiguous: bool
    shape: tuple
    strides: tuple | None
    keep: tuple


def _contiguous(shape, strides, unit) -> bool:
    """C order, where `strides` count `unit`s; dimensions of one element may
    have any stride."""
    if strides is None:
        return True
    expect = unit
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _dlpack_device(obj):
    f = getattr(obj, "__dlpack_device__", None)
    if f is None:
        return None
    dev = f()
    return (int(dev[0]), int(dev[1]))


def _from_cai(obj, cai) -> ArrayView:
    if cai.get("mask") is not None:
        raise usage("a masked array cannot be bound")
    typestr = cai["typestr"]
    shape = tuple(int(d) for d in cai["shape"])
    order, kind, size = typestr[0], typestr[1], int(typestr[2:] or 0)
    etype = None
    if order in "<|=" and kind in "iuf":
        etype = _type_from(kind, size * 8)
    strides = cai.get("strides")
    return ArrayView(
        ptr=int(cai["data"][0] or 0), etype=etype, dtype_text=typestr,
        count=_count(shape), device=_dlpack_device(obj),
        contiguous=_contiguous(shape, strides, size), shape=shape,
        strides=None if strides is None else tuple(strides), keep=(obj,))


def _from_dlpack(obj, stream) -> ArrayView:
    device = _dlpack_device(obj)
    # DLPack's consumer passes the stream it will use, so the producer can
    # order its pending work before it; only CUDA producers take one.
    if device is not None and device[0] in (DL_CUDA, DL_CUDA_MANAGED) \
            and stream is not None:
        capsule = obj.__dlpack__(stream=stream)
    else:
        capsule = obj.__dlpack__()
    if not _capsule_valid(capsule, b"dltensor"):
        raise usage("__dlpack__ returned no DLPack tensor capsule")
    t = _DLTensor.from_address(_capsule_ptr(capsule, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i]
                                              for i in range(t.ndim))
    code = _DL_CODES.get(t.dtype.code)
    etype = None
    if code is not None and t.dtype.lanes == 1:
        etype = _type_from(code, t.dtype.bits)
    dtype_text = (f"DLPack type code {t.dtype.code}, {t.dtype.bits} bits"
                  + (f" × {t.dtype.lanes} lanes" if t.dtype.lanes != 1 else ""))
    # The capsule stays unconsumed and alive: its destructor calls the
    # producer's deleter once cudag no longer holds the array.
    return ArrayView(
        ptr=(t.data or 0) + t.byte_offset, etype=etype, dtype_text=dtype_text,
        count=_count(shape), device=(t.device.device_type, t.device.device_id),
        contiguous=_contiguous(shape, strides, 1), shape=shape,
        strides=strides, keep=(obj, capsule))


def view(obj, stream: int | None = None) -> ArrayView:
    """Reads an array through __cuda_array_interface__, else DLPack."""
    try:
        cai = obj.__cuda_array_interface__
    except (AttributeError, TypeError, RuntimeError):
        # Not a CUDA array (a CPU tensor), or a type the interface cannot
        # express (older PyTorch refuses bfloat16): DLPack may describe it.
        cai = None
    # A type the interface spells only as raw bytes ("<V2": PyTorch's
    # bfloat16) is read through DLPack, which names it.
    if cai is not None and (cai["typestr"][1:2] in ("i", "u", "f") or
                            not hasattr(obj, "__dlpack__")):
        return _from_cai(obj, cai)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, stream)
    raise usage(f"cannot bind a {type(obj).__name__}: it has neither "
                "__cuda_array_interface__ nor __dlpack__ (pass a PyTorch, "
                "CuPy, Numba or JAX array on the GPU)")


def check_binding(v: ArrayView, buffer: str, etype: ElementType, count: int,
                  device: int | None) -> None:
    """Refuses an array that does not fit buffer `buffer` (declared `count`
    elements of `etype`) on CUDA device `device` (None: not yet known)."""
    where = f"array for buffer '{buffer}'"
    if v.device is not None and v.device[0] not in (DL_CUDA, DL_CUDA_MANAGED):
        name = _DL_DEVICE_NAMES.get(v.device[0], f"type {v.device[0]}")
        raise usage(f"{where} is in {name} memory (DLPack device {name}): "
                    "bind GPU memory (a CUDA tensor or array)")
    if v.device is not None and device is not None and \
            v.device[0] == DL_CUDA and v.device[1] != device:
        raise usage(f"{where} is on CUDA device {v.device[1]}; the graph is "
                    f"instantiated on device {device}")
    if v.etype is None or v.etype.value != etype.value:
        got = v.etype.name if v.etype else "no cudag type"
        raise usage(f"{where} has element type {got} ({v.dtype_text}); the "
                    f"buffer is declared {etype.name}", code=C.ETYPE)
    if v.count != count:
        raise usage(f"{where} has {v.count} elements (shape "
                    f"{v.shape}); the buffer is declared with {count} "
                    f"elements of {etype.name}", code=C.ERANGE)
    if not v.contiguous:
        raise usage(f"{where} is not contiguous (shape {v.shape}, strides "
                    f"{v.strides}): bind a contiguous copy (.contiguous(), "
                    "ascontiguousarray)")
    if v.ptr == 0 and count:
        raise usage(f"{where} has a null data pointer")


def stream_handle(stream) -> int | None:
    """A CUstream as an int (None: let the exec make its own).  0, the
    legacy default stream in CUDA, becomes CU_STREAM_LEGACY, because cudag
    reads a NULL stream as "make one"."""
    if stream is None:
        return None
    if isinstance(stream, bool):
        raise TypeError("cudag: a stream cannot be a bool")
    if isinstance(stream, int):
        h = stream
    elif hasattr(stream, "__cuda_stream__"):
        s = stream.__cuda_stream__
        h = (s() if callable(s) else s)[1]
    else:
        for attr in ("cuda_stream", "ptr", "handle"):
            if hasattr(stream, attr):
                h = getattr(stream, attr)
                h = getattr(h, "value", h)      # a ctypes c_void_p
                h = 0 if h is None else h
                break
        else:
            raise TypeError(
                f"cudag: cannot use a {type(stream).__name__} as a stream: "
                "pass a torch.cuda.Stream, a cupy.cuda.Stream, an object with "
                "__cuda_stream__, or a CUstream as an int")
    h = int(h)
    return C.STREAM_LEGACY if h == 0 else h
