"""The C ABI of libcudag, declared for ctypes: finding and opening the library,
the structs of cudag.h, and the prototype of every function the package calls.

Nothing here has behaviour of its own; the other modules call these
functions and translate their results.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double,
                    c_int, c_int64, c_long, c_size_t, c_uint, c_uint32,
                    c_uint64, c_void_p)
from pathlib import Path

_HERE = Path(__file__).resolve().parent

# Where `pip install .` puts the library and the shipped kernels (python/
# meson.build): inside the package, so the wheel needs nothing installed.
BUNDLED_LIBRARY = _HERE / "_lib" / "libcudag.so"
BUNDLED_KERNELS = _HERE / "kernels"
# The soname of an installed libcudag, found by the dynamic loader.
SYSTEM_LIBRARY = "libcudag.so.1"


def library_path() -> str:
    """The library to open: $CUDAG_LIBRARY (a path, or a name such as
    libcudag.so.1 for the system's), else the copy inside the package, else
    the system's."""
    env = os.environ.get("CUDAG_LIBRARY")
    if env:
        return env
    if BUNDLED_LIBRARY.exists():
        return str(BUNDLED_LIBRARY)
    return SYSTEM_LIBRARY


def kernels_dir() -> Path | None:
    """The directory of the shipped kernels (cudag_kernels.yaml and its
    fatbin): $CUDAG_KERNELS_DIR, else the copy inside the package; None when
    neither exists (an installed libcudag then finds its own).  A
    $CUDAG_KERNELS_DIR without the manifest is refused: a graph's `include:
    cudag_kernels.yaml` would go on to the library's own directory and load
    the fatbin beside that manifest, not the one in $CUDAG_KERNELS_DIR."""
    env = os.environ.get("CUDAG_KERNELS_DIR")
    if env:
        if not (Path(env) / "cudag_kernels.yaml").is_file():
            raise FileNotFoundError(
                f"CUDAG_KERNELS_DIR={env} holds no cudag_kernels.yaml (the "
                "manifest names the fatbin beside it: copy it there with the "
                "fatbin, or unset CUDAG_KERNELS_DIR)")
        return Path(env)
    if (BUNDLED_KERNELS / "cudag_kernels.yaml").exists():
        return BUNDLED_KERNELS
    return None


# ---- structs (cudag.h) -----------------------------------------------------

class cudag_error(Structure):
    _fields_ = [
        ("code", c_int), ("severity", c_int), ("line", c_int),
        ("column", c_int), ("count", c_int), ("cuda_result", c_int),
        ("file", c_char * 4096), ("message", c_char * 1024),
    ]


DIAG_FN = CFUNCTYPE(None, c_void_p, POINTER(cudag_error))


class cudag_options(Structure):
    _fields_ = [
        ("size", c_size_t), ("defines", POINTER(c_char_p)),
        ("include_dirs", POINTER(c_char_p)), ("diag", DIAG_FN),
        ("diag_user", c_void_p), ("max_errors", c_uint), ("flags", c_uint),
    ]


class cudag_exec_options(Structure):
    _fields_ = [
        ("size", c_size_t), ("device", c_int), ("context", c_void_p),
        ("stream", c_void_p), ("flags", c_uint), ("diag", DIAG_FN),
        ("diag_user", c_void_p), ("include_dirs", POINTER(c_char_p)),
        ("timeout_ms", c_uint),
    ]


class cudag_param(Structure):
    _fields_ = [("name", c_char_p), ("type", c_int)]


class cudag_init(Structure):
    _fields_ = [
        ("kind", c_int), ("value", c_double), ("lo", c_double),
        ("hi", c_double), ("seed", c_uint64),
    ]


class cudag_arg(Structure):
    _fields_ = [
        ("kind", c_int), ("buffer", c_char_p), ("offset", c_uint64),
        ("i", c_int64), ("f", c_double),
    ]


class cudag_dim3(Structure):
    _fields_ = [("x", c_uint32), ("y", c_uint32), ("z", c_uint32)]


class cudag_plan_info(Structure):
    _fields_ = [
        ("nodes", c_size_t), ("kernel_nodes", c_size_t),
        ("memset_nodes", c_size_t), ("memcpy_nodes", c_size_t),
        ("edges", c_size_t * 3), ("depth", c_size_t), ("width", c_size_t),
        ("buffer_bytes", c_uint64), ("conditional_nodes", c_size_t),
        ("bodies", c_size_t),
        ("gemm_nodes", c_size_t), ("capture_nodes", c_size_t),
        ("event_record_nodes", c_size_t), ("event_wait_nodes", c_size_t),
        ("host_nodes", c_size_t), ("child_nodes", c_size_t),
    ]


class cudag_value(Structure):
    _fields_ = [("type", c_int), ("i", c_int64), ("f", c_double)]


class cudag_exec_stats(Structure):
    _fields_ = [
        ("driver_ns", c_uint64), ("load_ns", c_uint64), ("alloc_ns", c_uint64),
        ("build_ns", c_uint64), ("instantiate_ns", c_uint64),
        ("downgraded_edges", c_uint),
    ]


class cudag_module_stats(Structure):
    _fields_ = [("name", c_char_p), ("origin", c_int), ("load_ns", c_uint64)]


# cudag_module_origin, by value.
MODULE_ORIGINS = ("unused", "file", "compiled", "cache")


# ---- constants (cudag.h) ---------------------------------------------------

OK = 0
EINVAL = -1
EUNKNOWN = -6
ETYPE = -8
ERANGE = -13
ESTATE = -21
ETIMEOUT = -23

NO_PDL, STRICT, WERROR, NVTX, DEVICE_LAUNCH = 1, 2, 4, 8, 64
SEV_ERROR, SEV_WARNING, SEV_NOTE = 0, 1, 2
DOT_NO_CRITICAL, DOT_NO_CLUSTERS = 1, 2
ARG_BUFFER, ARG_INT, ARG_FLOAT, ARG_NULL = 0, 1, 2, 3
INIT_KINDS = {None: 0, "zero": 1, "const": 2, "iota": 3, "random": 4}
EDGE_KINDS = {"full": 0, "programmatic": 1, "launch_order": 2}
TYPE_F64 = 12
TYPE_PTR = 13
# cudag_access: how a kernel uses a ptr parameter's buffer ("ptr.read").
ACCESS = {"ptr": 0, "ptr.read": 1, "ptr.write": 2, "ptr.rw": 3}

# A CUstream value meaning the legacy default stream (cuda.h's
# CU_STREAM_LEGACY): cudag reads a NULL stream as "make your own".
STREAM_LEGACY = 1

_err_p = POINTER(cudag_error)
_graph_p = c_void_p
_exec_p = c_void_p

# name: (restype, argtypes).  Every function the package calls.
_PROTOTYPES = {
    "cudag_strerror": (c_char_p, [c_int]),
    "cudag_status_name": (c_char_p, [c_int]),
    "cudag_version_string": (c_char_p, []),
    "cudag_error_format": (c_int, [_err_p, c_char_p, c_size_t]),
    "cudag_type_name": (c_char_p, [c_int]),
    "cudag_type_size": (c_size_t, [c_int]),
    "cudag_edge_kind_name": (c_char_p, [c_int]),
    "cudag_node_kind_name": (c_char_p, [c_int]),
    "cudag_load_file": (c_int, [c_char_p, POINTER(cudag_options),
                                POINTER(_graph_p), _err_p]),
    "cudag_load_string": (c_int, [c_char_p, c_size_t, c_char_p,
                                  POINTER(cudag_options), POINTER(_graph_p),
                                  _err_p]),
    "cudag_graph_create": (c_int, [c_char_p, POINTER(_graph_p), _err_p]),
    "cudag_graph_destroy": (None, [_graph_p]),
    "cudag_add_var": (c_int, [_graph_p, c_char_p, c_int64, _err_p]),
    "cudag_add_module": (c_int, [_graph_p, c_char_p, c_char_p, _err_p]),
    "cudag_add_signature": (c_int, [_graph_p, c_char_p, c_char_p, c_char_p,
                                    POINTER(cudag_param), c_size_t, c_int,
                                    _err_p]),
    "cudag_add_buffer": (c_int, [_graph_p, c_char_p, c_int, c_uint64,
                                 POINTER(cudag_init), _err_p]),
    "cudag_add_kernel": (c_int, [_graph_p, c_char_p, c_char_p, cudag_dim3,
                                 cudag_dim3, c_uint32, POINTER(cudag_arg),
                                 c_size_t, _err_p]),
    "cudag_set_kernel_cluster": (c_int, [_graph_p, c_char_p, cudag_dim3,
                                         _err_p]),
    "cudag_set_kernel_priority": (c_int, [_graph_p, c_char_p, c_int, _err_p]),
    "cudag_set_param_access": (c_int, [_graph_p, c_char_p, c_uint32, c_int,
                                       _err_p]),
    "cudag_set_kernel_arg_count": (c_int, [_graph_p, c_char_p, c_uint32,
                                           c_uint64, _err_p]),
    "cudag_add_memset": (c_int, [_graph_p, c_char_p, c_char_p, c_uint64,
                                 c_uint64, c_double, _err_p]),
    "cudag_add_memcpy": (c_int, [_graph_p, c_char_p, c_char_p, c_uint64,
                                 c_char_p, c_uint64, c_uint64, _err_p]),
    "cudag_add_edge": (c_int, [_graph_p, c_char_p, c_char_p, c_int, _err_p]),
    "cudag_check": (c_int, [_graph_p, POINTER(cudag_options), _err_p]),
    "cudag_graph_name": (c_char_p, [_graph_p]),
    "cudag_graph_node_count": (c_size_t, [_graph_p]),
    "cudag_graph_edge_count": (c_size_t, [_graph_p]),
    "cudag_graph_buffer_count": (c_size_t, [_graph_p]),
    "cudag_graph_var_count": (c_size_t, [_graph_p]),
    "cudag_graph_node_name": (c_char_p, [_graph_p, c_size_t]),
    "cudag_graph_node_kind": (c_int, [_graph_p, c_size_t, POINTER(c_int)]),
    "cudag_graph_find_node": (c_long, [_graph_p, c_char_p]),
    "cudag_graph_edge": (c_int, [_graph_p, c_size_t, POINTER(c_size_t),
                                 POINTER(c_size_t), POINTER(c_int)]),
    "cudag_graph_buffer_name": (c_char_p, [_graph_p, c_size_t]),
    "cudag_graph_find_buffer": (c_long, [_graph_p, c_char_p]),
    "cudag_graph_buffer": (c_int, [_graph_p, c_size_t, POINTER(c_int),
                                   POINTER(c_uint64)]),
    "cudag_graph_var_name": (c_char_p, [_graph_p, c_size_t]),
    "cudag_graph_find_var": (c_long, [_graph_p, c_char_p]),
    "cudag_graph_var": (c_int, [_graph_p, c_size_t, POINTER(cudag_value)]),
    "cudag_dot": (c_int, [_graph_p, c_uint, POINTER(c_void_p), _err_p]),
    "cudag_plan": (c_int, [_graph_p, POINTER(cudag_plan_info),
                           POINTER(c_void_p), _err_p]),
    "cudag_free": (None, [c_void_p]),
    "cudag_bind_buffer": (c_int, [_graph_p, c_char_p, c_uint64, _err_p]),
    "cudag_instantiate": (c_int, [_graph_p, POINTER(cudag_exec_options),
                                  POINTER(_exec_p), _err_p]),
    "cudag_exec_destroy": (None, [_exec_p]),
    # Replays pass the error's address as an integer: the fastest argument
    # ctypes converts.
    "cudag_exec_launch": (c_int, [_exec_p, c_uint, c_void_p]),
    "cudag_exec_sync": (c_int, [_exec_p, _err_p]),
    "cudag_exec_stream": (c_void_p, [_exec_p]),
    "cudag_exec_buffer": (c_int, [_exec_p, c_char_p, POINTER(c_uint64),
                                  POINTER(c_uint64), _err_p]),
    "cudag_exec_read": (c_int, [_exec_p, c_char_p, c_void_p, c_size_t,
                                _err_p]),
    "cudag_exec_write": (c_int, [_exec_p, c_char_p, c_void_p, c_size_t,
                                 _err_p]),
    "cudag_exec_set_arg": (c_int, [_exec_p, c_char_p, c_uint,
                                   POINTER(cudag_arg), _err_p]),
    "cudag_exec_rebind_buffer": (c_int, [_exec_p, c_char_p, c_uint64,
                                         _err_p]),
    "cudag_exec_set_var": (c_int, [_exec_p, c_char_p, c_int64, _err_p]),
    "cudag_exec_set_var_float": (c_int, [_exec_p, c_char_p, c_double, _err_p]),
    "cudag_exec_get_stats": (c_int, [_exec_p, POINTER(cudag_exec_stats)]),
    "cudag_exec_module_count": (c_size_t, [_exec_p]),
    "cudag_exec_module_stats": (c_int, [_exec_p, c_size_t,
                                        POINTER(cudag_module_stats)]),
}


def _open():
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"cudag: cannot open libcudag ({path}): {e}; install the package "
            "with `pip install .` from a cudag checkout, or install libcudag "
            "and set CUDAG_LIBRARY to its path") from None
    for name, (res, args) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                f"cudag: the libcudag at {path} has no {name}: it is older "
                "than this package; install a matching libcudag or the "
                "bundled one (`pip install .`)") from None
        fn.restype = res
        fn.argtypes = args
    return lib, path


lib, LIBRARY = _open()


def text(b: bytes | None) -> str | None:
    """A C string from the library as str (UTF-8; invalid bytes escaped)."""
    return None if b is None else b.decode("utf-8", "backslashreplace")


def cstr(s) -> bytes:
    """A str or path as a NUL-terminated argument."""
    b = os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode()
    if b"\0" in b:
        raise ValueError(f"cudag: a name or path contains a NUL byte: {s!r}")
    return b


def cstr_array(items) -> ctypes.Array:
    """A NULL-terminated array of C strings (kept alive by the caller)."""
    arr = (c_char_p * (len(items) + 1))()
    for i, s in enumerate(items):
        arr[i] = cstr(s)
    arr[len(items)] = None
    return arr
