"""Graphs: loading YAML, the builder, checking, DOT, the plan, what a graph
declares, and instantiation.  Each method is one call of cudag.h; this
module translates arguments, results, errors and lifetimes."""

from __future__ import annotations

import math
import os
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p, sizeof
from dataclasses import dataclass
from typing import Iterable, Mapping, NamedTuple

from . import _arrays as A
from . import _capi as C
from ._errors import Collector, check, new_error, usage
from ._exec import Closable, Exec, to_arg

lib = C.lib


class Node(NamedTuple):
    name: str
    kind: str           # "kernel", "memset", "memcpy", "gemm", …


class Edge(NamedTuple):
    src: str
    dst: str
    kind: str           # "full", "programmatic", "launch_order"


class Buffer(NamedTuple):
    name: str
    type: str           # "f32", "bf16", …
    count: int          # elements
    nbytes: int

    @property
    def dtype(self):
        """The NumPy dtype of the elements (see ElementType.numpy)."""
        return A.TYPES_BY_NAME[self.type].numpy()


@dataclass(frozen=True)
class Plan:
    """The shape of a checked graph, as `cudag plan` prints it; `text` is
    that printout (summary and level-by-level schedule)."""

    nodes: int
    kernel_nodes: int
    memset_nodes: int
    memcpy_nodes: int
    gemm_nodes: int
    edges: dict
    depth: int
    width: int
    buffer_bytes: int
    text: str
    conditional_nodes: int = 0
    bodies: int = 0


def _define(name, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"cudag: define {name}: {value!r} is not a number")
    return f"{name}={value!r}" if isinstance(value, float) else \
        f"{name}={value}"


class _Options:
    """A cudag_options and everything its pointers point into."""

    def __init__(self, collector: Collector, defines: Mapping | None = None,
                 include_dirs: Iterable = (), flags: int = 0,
                 max_errors: int = 0):
        dirs = [os.fspath(d) for d in include_dirs]
        shipped = C.kernels_dir()
        if shipped is not None:
            dirs.append(os.fspath(shipped))
        self.defines = C.cstr_array([_define(k, v) for k, v in
                                     (defines or {}).items()])
        self.dirs = C.cstr_array(dirs)
        self.collector = collector
        self.c = C.cudag_options(
            size=sizeof(C.cudag_options), defines=self.defines,
            include_dirs=self.dirs, diag=collector.fn, max_errors=max_errors,
            flags=flags)


def _flags(strict=False, werror=False, no_pdl=False, nvtx=False,
           device_launch=False) -> int:
    return ((C.STRICT if strict else 0) | (C.WERROR if werror else 0) |
            (C.NO_PDL if no_pdl else 0) | (C.NVTX if nvtx else 0) |
            (C.DEVICE_LAUNCH if device_launch else 0))


def _timeout_ms(timeout) -> int:
    """Seconds (None: no timeout) as the whole milliseconds of
    cudag_exec_options.timeout_ms, rounded up."""
    if timeout is None:
        return 0
    ms = math.ceil(float(timeout) * 1000)
    if not 0 < ms <= 0xFFFFFFFF:
        raise ValueError(f"timeout must be a positive number of seconds up "
                         f"to {0xFFFFFFFF // 1000}, not {timeout!r}")
    return ms


def load(path, defines: Mapping | None = None, include_dirs: Iterable = (),
         strict: bool = False, werror: bool = False,
         max_errors: int = 0) -> "Graph":
    """Loads and checks a YAML graph file.  `defines` override the file's
    variables ({"N": 4096}, as -D does); `include_dirs` are searched for
    includes after the file's own directory (the shipped kernels come
    last).  Raises cudag.Error with every error; warnings are issued as
    cudag.GraphWarning."""
    col = Collector()
    o = _Options(col, defines, include_dirs, _flags(strict, werror),
                 max_errors)
    h, err = c_void_p(), new_error()
    rc = lib.cudag_load_file(C.cstr(path), byref(o.c), byref(h), byref(err))
    if rc != C.OK:
        raise col.error(err)
    col.warn()
    return Graph._adopt(h.value, None)


def loads(text: str, name: str = "<string>", defines: Mapping | None = None,
          include_dirs: Iterable = (), strict: bool = False,
          werror: bool = False, max_errors: int = 0) -> "Graph":
    """Loads and checks YAML text; `name` is the file name in diagnostics
    and the directory relative includes and modules are found from ("<string>":
    the current directory).  Otherwise as load()."""
    col = Collector(source=text)
    o = _Options(col, defines, include_dirs, _flags(strict, werror),
                 max_errors)
    data = text.encode()
    h, err = c_void_p(), new_error()
    rc = lib.cudag_load_string(data, len(data), C.cstr(name), byref(o.c),
                               byref(h), byref(err))
    if rc != C.OK:
        raise col.error(err)
    col.warn()
    return Graph._adopt(h.value, text)


def _dim3(v) -> C.cudag_dim3:
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3:
        raise ValueError(f"cudag: a grid or block has 1 to 3 numbers: {v!r}")
    t = t + (1,) * (3 - len(t))
    return C.cudag_dim3(*t)


class Graph(Closable):
    """A graph of kernels: loaded with cudag.load()/loads(), or built with
    Graph(name) and the builder methods.  Close it (or use `with`) to free
    it at once; an Exec made from it keeps it alive until the Exec closes.
    """

    def __init__(self, name: str | None = None):
        h, err = c_void_p(), new_error()
        check(lib.cudag_graph_create(None if name is None else C.cstr(name),
                                     byref(h), byref(err)), err)
        self._init(h.value, None)

    @classmethod
    def _adopt(cls, handle: int, source: str | None) -> "Graph":
        g = cls.__new__(cls)
        g._init(handle, source)
        return g

    def _init(self, handle, source):
        self._h = handle
        self._source = source
        self._bound = {}          # buffer name → ArrayView, while bound
        self._execs = 0           # live Execs made from this graph
        self._closing = False

    # ---- lifetime ---------------------------------------------------------

    def _handle(self) -> int:
        if self._h is None or self._closing:
            raise usage("the graph is closed", C.ESTATE)
        return self._h

    def close(self) -> None:
        """Frees the graph, or, while Execs made from it are open, as soon
        as the last of them closes.  Further use raises cudag.Error."""
        self._closing = True
        if self._execs == 0 and self._h is not None:
            lib.cudag_graph_destroy(self._h)
            self._h = None
            self._bound = {}

    def _exec_closed(self) -> None:
        self._execs -= 1
        if self._closing:
            self.close()

    @property
    def closed(self) -> bool:
        return self._h is None or self._closing

    def __repr__(self):
        if self.closed:
            return "<cudag.Graph (closed)>"
        return (f"<cudag.Graph {self.name!r}: {len(self.nodes)} nodes, "
                f"{lib.cudag_graph_edge_count(self._h)} edges>")

    # ---- what it declares ---------------------------------------------------

    @property
    def name(self) -> str:
        return C.text(lib.cudag_graph_name(self._handle()))

    @property
    def nodes(self) -> list:
        """Every node, in declaration order, as Node(name, kind)."""
        h = self._handle()
        out = []
        k = c_int()
        for i in range(lib.cudag_graph_node_count(h)):
            lib.cudag_graph_node_kind(h, i, byref(k))
            out.append(Node(C.text(lib.cudag_graph_node_name(h, i)),
                            C.text(lib.cudag_node_kind_name(k.value))))
        return out

    @property
    def edges(self) -> list:
        """Every edge as Edge(src, dst, kind), with node names."""
        h = self._handle()
        out = []
        f, t, k = c_size_t(), c_size_t(), c_int()
        for i in range(lib.cudag_graph_edge_count(h)):
            lib.cudag_graph_edge(h, i, byref(f), byref(t), byref(k))
            out.append(Edge(C.text(lib.cudag_graph_node_name(h, f.value)),
                            C.text(lib.cudag_graph_node_name(h, t.value)),
                            C.text(lib.cudag_edge_kind_name(k.value))))
        return out

    def _buffer(self, i: int) -> Buffer:
        h = self._handle()
        t, n = c_int(), c_uint64()
        lib.cudag_graph_buffer(h, i, byref(t), byref(n))
        et = A.TYPES[t.value]
        return Buffer(C.text(lib.cudag_graph_buffer_name(h, i)), et.name,
                      n.value, n.value * et.size)

    @property
    def buffers(self) -> dict:
        """Every buffer by name, as Buffer(name, type, count, nbytes), sizes
        after the defines."""
        h = self._handle()
        return {b.name: b for b in
                (self._buffer(i) for i in
                 range(lib.cudag_graph_buffer_count(h)))}

    def buffer_info(self, name: str) -> Buffer:
        """One buffer's declaration; cudag.Error for an unknown name."""
        i = lib.cudag_graph_find_buffer(self._handle(), C.cstr(name))
        if i < 0:
            raise usage(f"unknown buffer '{name}'", C.EUNKNOWN)
        return self._buffer(i)

    @property
    def vars(self) -> dict:
        """Every variable by name with its value (after the defines)."""
        h = self._handle()
        v = C.cudag_value()
        out = {}
        for i in range(lib.cudag_graph_var_count(h)):
            lib.cudag_graph_var(h, i, byref(v))
            out[C.text(lib.cudag_graph_var_name(h, i))] = \
                v.f if v.type == C.TYPE_F64 else v.i
        return out

    # ---- the builder ----------------------------------------------------------

    def _call(self, fn, *args) -> None:
        err = new_error()
        check(fn(self._handle(), *args, byref(err)), err, self._source)

    def var(self, name: str, value: int) -> None:
        self._call(lib.cudag_add_var, C.cstr(name), value)

    def module(self, name: str, path) -> None:
        """A kernel binary (fatbin, cubin or PTX); cudag.kernels_dir() holds
        the shipped cudag_kernels.fatbin."""
        self._call(lib.cudag_add_module, C.cstr(name), C.cstr(path))

    def signature(self, name: str, module: str, params: Iterable,
                  symbol: str | None = None, pdl: bool = False) -> None:
        """A kernel's signature: `params` is a list of (name, type) pairs or
        types ("ptr", "f32", …); a pointer the kernel only reads or only
        writes is "ptr.read" or "ptr.write" ("ptr.rw": both), as in YAML,
        for the race check (cudag_set_param_access).  `pdl` says its code
        waits with griddepcontrol.wait before reading upstream data."""
        items = [p if isinstance(p, tuple) else (None, p) for p in params]
        arr = (C.cudag_param * max(len(items), 1))()
        for i, (pname, ptype) in enumerate(items):
            t = (C.TYPE_PTR if ptype in C.ACCESS
                 else A.element_type(ptype).value)
            arr[i] = C.cudag_param(None if pname is None else C.cstr(pname), t)
        self._call(lib.cudag_add_signature, C.cstr(name), C.cstr(module),
                   None if symbol is None else C.cstr(symbol), arr,
                   len(items), int(bool(pdl)))
        for i, (_, ptype) in enumerate(items):
            if C.ACCESS.get(ptype):
                self._call(lib.cudag_set_param_access, C.cstr(name), i,
                           C.ACCESS[ptype])

    def buffer(self, name: str, type, count: int, init=None, *,
               seed: int = 0, range: tuple = None) -> None:
        """A buffer of `count` elements of `type` ("f32" or a NumPy dtype).
        `init`: None (undefined), "zero", "iota", "random" (uniform in
        `range`, default [-1, 1), seeded) or a number (every element).
        An empty `range` (lo not below hi, (0, 0) too) raises ValueError."""
        et = A.element_type(type)
        if range is None:
            range = (0.0, 0.0)      # the C API's default: [-1, 1)
        elif not float(range[0]) < float(range[1]):
            raise ValueError(f"cudag: buffer {name!r}: range "
                             f"{tuple(range)!r} is empty: lo must be below hi")
        if init is None or isinstance(init, str):
            if init not in C.INIT_KINDS or init == "const":
                raise ValueError(f"cudag: init {init!r} is not one of zero, "
                                 "iota, random or a number")
            ini = C.cudag_init(kind=C.INIT_KINDS[init], lo=range[0],
                               hi=range[1], seed=seed)
        else:
            ini = C.cudag_init(kind=C.INIT_KINDS["const"], value=float(init))
        self._call(lib.cudag_add_buffer, C.cstr(name), et.value, count,
                   byref(ini))

    def kernel(self, name: str, signature: str, grid, block,
               args: Iterable = (), shared: int = 0, cluster=None,
               priority: int | None = None) -> None:
        """A kernel node.  `grid` and `block` are an int or up to three;
        `args`: each a buffer name, (buffer, element offset), (buffer,
        offset, element count: what the kernel touches, for the race check;
        cudag_set_kernel_arg_count), an int, a float or None (a null
        pointer).  `cluster` (an int or up to three)
        and `priority` are cudag_set_kernel_cluster and
        cudag_set_kernel_priority."""
        args = list(args)
        cargs = [to_arg(a[:2] if isinstance(a, tuple) and len(a) == 3 else a)
                 for a in args]
        arr = (C.cudag_arg * max(len(cargs), 1))(*cargs)
        self._call(lib.cudag_add_kernel, C.cstr(name), C.cstr(signature),
                   _dim3(grid), _dim3(block), shared, arr, len(cargs))
        for i, a in enumerate(args):
            if isinstance(a, tuple) and len(a) == 3:
                self._call(lib.cudag_set_kernel_arg_count, C.cstr(name), i,
                           int(a[2]))
        if cluster is not None:
            self._call(lib.cudag_set_kernel_cluster, C.cstr(name),
                       _dim3(cluster))
        if priority is not None:
            self._call(lib.cudag_set_kernel_priority, C.cstr(name),
                       int(priority))

    def memset(self, name: str, buffer: str, value: float = 0.0,
               offset: int = 0, count: int | None = None) -> None:
        """Sets `count` elements (default: to the end) from `offset`."""
        if count is None:
            count = self.buffer_info(buffer).count - offset
        self._call(lib.cudag_add_memset, C.cstr(name), C.cstr(buffer), offset,
                   count, float(value))

    def memcpy(self, name: str, dst: str, src: str, count: int | None = None,
               dst_offset: int = 0, src_offset: int = 0) -> None:
        """Copies `count` elements (default: the whole destination)."""
        if count is None:
            count = self.buffer_info(dst).count - dst_offset
        self._call(lib.cudag_add_memcpy, C.cstr(name), C.cstr(dst),
                   dst_offset, C.cstr(src), src_offset, count)

    def edge(self, src: str, dst: str, kind: str = "full") -> None:
        """`dst` runs after `src`; kind "full", "programmatic" or
        "launch_order"."""
        if kind not in C.EDGE_KINDS:
            raise ValueError(f"cudag: edge kind {kind!r} is not one of "
                             f"{', '.join(C.EDGE_KINDS)}")
        self._call(lib.cudag_add_edge, C.cstr(src), C.cstr(dst),
                   C.EDGE_KINDS[kind])

    # ---- checking and output ------------------------------------------------

    def check(self, strict: bool = False, werror: bool = False,
              max_errors: int = 0) -> list:
        """Runs every check on the whole graph.  Raises cudag.Error with
        every error; returns the warnings (also issued as GraphWarning)."""
        col = Collector(source=self._source)
        o = _Options(col, flags=_flags(strict, werror), max_errors=max_errors)
        err = new_error()
        if lib.cudag_check(self._handle(), byref(o.c), byref(err)) != C.OK:
            raise col.error(err)
        col.warn()
        return col.warnings

    def _text(self, fn, *args) -> str:
        p, err = c_void_p(), new_error()
        check(fn(self._handle(), *args, byref(p), byref(err)), err,
              self._source)
        try:
            return C.text(C.ctypes.string_at(p.value))
        finally:
            lib.cudag_free(p.value)

    def dot(self, critical: bool = True, clusters: bool = True) -> str:
        """The checked graph in Graphviz DOT (as `cudag dot` writes it)."""
        flags = (0 if critical else C.DOT_NO_CRITICAL) | \
            (0 if clusters else C.DOT_NO_CLUSTERS)
        return self._text(lib.cudag_dot, flags)

    def plan(self) -> Plan:
        """The checked graph's shape and schedule, as `cudag plan`."""
        info = C.cudag_plan_info()
        text = self._text(lib.cudag_plan, byref(info))
        return Plan(nodes=info.nodes, kernel_nodes=info.kernel_nodes,
                    memset_nodes=info.memset_nodes,
                    memcpy_nodes=info.memcpy_nodes,
                    gemm_nodes=info.gemm_nodes,
                    edges={k: info.edges[v] for k, v in C.EDGE_KINDS.items()},
                    depth=info.depth, width=info.width,
                    buffer_bytes=info.buffer_bytes, text=text,
                    conditional_nodes=info.conditional_nodes,
                    bodies=info.bodies)

    # ---- instantiation --------------------------------------------------------

    def _bind(self, name: str, array, device: int, stream: int | None):
        b = self.buffer_info(name)
        v = A.view(array, stream)
        A.check_binding(v, name, A.TYPES_BY_NAME[b.type], b.count, device)
        return v

    def instantiate(self, device: int = 0, stream=None,
                    bind: Mapping | None = None, no_pdl: bool = False,
                    strict: bool = False, werror: bool = False,
                    nvtx: bool = False, device_launch: bool = False,
                    timeout: float | None = None) -> Exec:
        """Builds the CUDA graph on CUDA device `device` and instantiates it.

        `stream`: where launches go (a torch.cuda.Stream, a cupy Stream,
        anything with __cuda_stream__, or a CUstream int); None: a stream
        of the Exec's own.  `bind`: {buffer: array} of the program's GPU
        arrays to use instead of allocating (each checked against the
        buffer's declaration and kept alive).  Bindings stay on the graph
        for later instantiations, as with cudag_bind_buffer.
        `device_launch`: instantiate for device launch (CUDAG_DEVICE_LAUNCH),
        so that a launch costs the host a few µs whatever the graph's shape
        (kernel, memset, memcpy and child-graph nodes only).  Raises
        `timeout`: seconds every wait for the replays (sync, read,
        write, the timings) waits at most (timeout_ms); None waits forever.
        A wait that runs out raises cudag.Error with status
        "CUDAG_ETIMEOUT", naming the graph's while nodes: the replay
        cannot be stopped, the Exec is lost (every later call raises
        CUDAG_ESTATE) and the device stays busy until the process exits.
        Raises cudag.Error; warnings are issued as GraphWarning."""
        h = self._handle()
        s = A.stream_handle(stream)
        views = {n: self._bind(n, a, device, s) for n, a in
                 (bind or {}).items()}
        for name, v in self._bound.items():
            if name not in views:
                A.check_binding(v, name, v.etype, v.count, device)
        err = new_error()
        for name, v in views.items():
            check(lib.cudag_bind_buffer(h, C.cstr(name), v.ptr, byref(err)),
                  err)
            self._bound[name] = v
        col = Collector(source=self._source)
        o = C.cudag_exec_options(size=sizeof(C.cudag_exec_options),
                                 device=device, stream=s,
                                 flags=_flags(strict, werror, no_pdl, nvtx,
                                              device_launch),
                                 diag=col.fn,
                                 timeout_ms=_timeout_ms(timeout))
        x = c_void_p()
        if lib.cudag_instantiate(h, byref(o), byref(x), byref(err)) != C.OK:
            raise col.error(err)
        col.warn()
        self._execs += 1
        return Exec(self, x.value, device, dict(self._bound), stream)

