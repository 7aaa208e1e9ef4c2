"""Instantiated graphs: replay, synchronise, change arguments, variables and
bindings, copy buffers to and from NumPy, and hand buffers to other GPU
libraries.  Each method is one call of cudag.h."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_uint64

from . import _arrays as A
from . import _capi as C
from ._errors import fail, usage

lib = C.lib


def to_arg(a) -> C.cudag_arg:
    """A kernel argument: a buffer name, (buffer name, element offset), an
    int, a float, or None (a null pointer)."""
    if a is None:
        return C.cudag_arg(kind=C.ARG_NULL)
    if isinstance(a, bool):
        raise TypeError("cudag: a kernel argument cannot be a bool")
    if isinstance(a, int):
        return C.cudag_arg(kind=C.ARG_INT, i=a)
    if isinstance(a, float):
        return C.cudag_arg(kind=C.ARG_FLOAT, f=a)
    if isinstance(a, str):
        return C.cudag_arg(kind=C.ARG_BUFFER, buffer=C.cstr(a))
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str):
        return C.cudag_arg(kind=C.ARG_BUFFER, buffer=C.cstr(a[0]),
                           offset=int(a[1]))
    raise TypeError(f"cudag: {a!r} is not a kernel argument (a buffer name, "
                    "(buffer, offset), an int, a float or None)")


class Closable:
    """`with` blocks and collection close the object (Graph, Exec)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # An Exec holds its graph: a graph collected has no open Exec.
        if getattr(self, "_h", None) is not None and C is not None:
            self.close()


class DeviceBuffer:
    """One of an Exec's buffers as a GPU array that other libraries read
    through __cuda_array_interface__ (torch.as_tensor(b, device="cuda"),
    cupy.asarray(b)) without a copy.  It keeps the Exec open while alive;
    readers are ordered after the replays through the interface's stream."""

    def __init__(self, exe: "Exec", name: str, ptr: int, etype, count: int):
        self.exe, self.name, self.ptr = exe, name, ptr
        self.etype, self.count = etype, count

    @property
    def __cuda_array_interface__(self) -> dict:
        if self.etype.kind == "bf":
            raise TypeError("cudag: bf16 has no __cuda_array_interface__ "
                            "type string; read it with Exec.read()")
        return {"shape": (self.count,), "typestr": self.etype.numpy().str,
                "data": (self.ptr, False), "version": 3, "strides": None,
                "stream": self.exe.stream}

    def __repr__(self):
        return (f"<cudag.DeviceBuffer {self.name!r}: {self.count} × "
                f"{self.etype.name} at 0x{self.ptr:x}>")


class Exec(Closable):
    """An instantiated graph (cudag_exec).  Made by Graph.instantiate();
    holds its graph, its stream object and every bound array until
    close() (or the end of a `with` block)."""

    def __init__(self, graph, handle: int, device: int, bound: dict, stream):
        self._graph = graph
        self._h = handle
        self.device = device
        self._bound = bound
        self._stream_obj = stream
        # What read/write/rebind check against, taken now: the graph may be
        # closed before the Exec.
        self._buffers = graph.buffers
        self._err = C.cudag_error()
        self._err_addr = ctypes.addressof(self._err)
        self._launch = lib.cudag_exec_launch

    # ---- replay (the hot path: one ctypes call) ---------------------------

    def launch(self, times: int = 1) -> None:
        """Launches the graph `times` times on its stream (asynchronous)."""
        if times < 0:
            raise ValueError("cudag: times must be 0 or more")
        if self._launch(self._h, times, self._err_addr):
            raise self._fail()

    def sync(self) -> None:
        """Waits for every launch so far; reports asynchronous faults."""
        if lib.cudag_exec_sync(self._h, byref(self._err)):
            raise self._fail()

    def _fail(self):
        if self._h is None:
            return usage("the exec is closed", C.ESTATE)
        return fail(self._err, self._graph._source if self._graph else None)

    def _call(self, fn, *args) -> None:
        if fn(self._h, *args, byref(self._err)):
            raise self._fail()

    @property
    def stream(self) -> int:
        """The CUstream launches go to, as an int (1: the legacy default
        stream)."""
        if self._h is None:
            raise self._fail()
        return lib.cudag_exec_stream(self._h) or 0

    @property
    def stats(self) -> dict:
        """Host time of each stage of instantiation (ns) and the number of
        programmatic edges built as full edges."""
        st = C.cudag_exec_stats()
        if self._h is None or lib.cudag_exec_get_stats(self._h, byref(st)):
            raise self._fail()
        return {k: getattr(st, k) for k, _ in C.cudag_exec_stats._fields_}

    @property
    def modules(self) -> list:
        """Per module of the graph: its name, where its code came from
        ("file", "compiled" by NVRTC, read from the compile "cache", or
        "unused") and the host time that took (ns)."""
        if self._h is None:
            raise self._fail()
        out = []
        for i in range(lib.cudag_exec_module_count(self._h)):
            st = C.cudag_module_stats()
            if lib.cudag_exec_module_stats(self._h, i, byref(st)):
                raise self._fail()
            out.append({"name": st.name.decode(),
                        "origin": C.MODULE_ORIGINS[st.origin],
                        "load_ns": st.load_ns})
        return out

    # ---- changes without re-instantiation -------------------------------------

    def set_arg(self, node: str, index: int, value) -> None:
        """Changes argument `index` of kernel node `node` for later
        launches: an int, a float, a buffer name, (buffer, offset) or None."""
        a = to_arg(value)
        self._call(lib.cudag_exec_set_arg, C.cstr(node), index, byref(a))

    def set_var(self, name: str, value) -> None:
        """Gives variable `name` a new value (graphs loaded from YAML) and
        updates the instantiated graph in place: an int, or a float for a
        floating-point variable (`eps: 1e-5`)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"cudag: variable {name}: {value!r} is not a "
                            "number")
        if isinstance(value, float):
            self._call(lib.cudag_exec_set_var_float, C.cstr(name), value)
        else:
            self._call(lib.cudag_exec_set_var, C.cstr(name), value)

    def _declared(self, name: str):
        b = self._buffers.get(name)
        if b is None:
            raise usage(f"unknown buffer '{name}'", C.EUNKNOWN)
        return b, A.TYPES_BY_NAME[b.type]

    def rebind(self, name: str, array) -> None:
        """Points every node that uses buffer `name` at `array` (checked
        like a binding, and kept alive in place of the array before)."""
        b, et = self._declared(name)
        v = A.view(array, self.stream)
        A.check_binding(v, name, et, b.count, self.device)
        self._call(lib.cudag_exec_rebind_buffer, C.cstr(name), v.ptr)
        self._bound[name] = v

    def buffer(self, name: str) -> DeviceBuffer:
        """Buffer `name` (allocated by the exec, or bound) as a GPU array."""
        b, et = self._declared(name)
        ptr, nbytes = c_uint64(), c_uint64()
        self._call(lib.cudag_exec_buffer, C.cstr(name), byref(ptr),
                   byref(nbytes))
        return DeviceBuffer(self, name, ptr.value, et, b.count)

    # ---- copies ------------------------------------------------------------------

    def read(self, name: str):
        """Copies buffer `name` into a new NumPy array, after every launch
        so far (bf16: ml_dtypes.bfloat16 where installed, else uint16
        bits)."""
        import numpy as np
        b, et = self._declared(name)
        out = np.empty(b.count, dtype=et.numpy())
        self._call(lib.cudag_exec_read, C.cstr(name),
                   out.ctypes.data_as(ctypes.c_void_p), out.nbytes)
        return out

    def write(self, name: str, array) -> None:
        """Copies a NumPy array (the buffer's element type and count) into
        buffer `name`, after every launch so far."""
        import numpy as np
        b, et = self._declared(name)
        a = np.ascontiguousarray(array)
        if a.dtype != et.numpy():
            raise usage(f"array for buffer '{name}' has dtype {a.dtype}; the "
                        f"buffer is declared {et.name} ({et.numpy()})",
                        C.ETYPE)
        if a.size != b.count:
            raise usage(f"array for buffer '{name}' has {a.size} elements; "
                        f"the buffer is declared with {b.count}", C.ERANGE)
        self._call(lib.cudag_exec_write, C.cstr(name),
                   a.ctypes.data_as(ctypes.c_void_p), a.nbytes)

    # ---- lifetime ----------------------------------------------------------------

    def close(self) -> None:
        """Synchronises the stream and releases everything the exec owns;
        then lets go of the bound arrays and of the graph."""
        if self._h is None:
            return
        lib.cudag_exec_destroy(self._h)
        self._h = None
        self._bound = {}
        self._stream_obj = None
        g, self._graph = self._graph, None
        g._exec_closed()

    @property
    def closed(self) -> bool:
        return self._h is None

    def __repr__(self):
        state = "closed" if self._h is None else f"device {self.device}"
        return f"<cudag.Exec ({state})>"

