"""cudag for Python: load or build DAGs of CUDA kernels, check, draw and plan
them, instantiate them as CUDA graphs with the program's own GPU arrays
(PyTorch, CuPy, Numba, JAX) and replay them on the program's stream.

A thin layer over libcudag's C API (include/cudag.h) through ctypes: every
behaviour is the library's; this package translates types, errors and
lifetimes.  See docs/python.md.

    import cudag
    g = cudag.load("graph.yaml", defines={"N": 4096})
    with g.instantiate(stream=torch.cuda.current_stream(),
                       bind={"x": x}) as exe:
        exe.launch(times=10)
"""

from __future__ import annotations

from pathlib import Path

from . import _capi
from ._arrays import ElementType, element_type
from ._errors import Diagnostic, Error, GraphWarning
from ._exec import DeviceBuffer, Exec
from ._graph import Buffer, Edge, Graph, Node, Plan, load, loads

__version__ = "0.1.0"

#: The libcudag this package opened (a path, or the system's soname).
LIBRARY = _capi.LIBRARY


def library_version() -> str:
    """The version of the libcudag in use ("MAJOR.MINOR.PATCH")."""
    return _capi.text(_capi.lib.cudag_version_string())


def kernels_dir() -> Path | None:
    """The shipped kernels' directory (cudag_kernels.yaml and
    cudag_kernels.fatbin): inside the package, or $CUDAG_KERNELS_DIR; None
    with a system libcudag, which finds its own."""
    return _capi.kernels_dir()


__all__ = ["Buffer", "DeviceBuffer", "Diagnostic", "Edge", "ElementType",
           "Error", "Exec", "Graph", "GraphWarning", "LIBRARY", "Node", "Plan",
           "element_type", "kernels_dir", "library_version", "load", "loads"]
