"""The builder from Python: the same graph as the YAML front end makes, and
builder errors raised with the library's message, the graph unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import cudag

FORKJOIN = """\
cudag: 1
name: forkjoin
include: cudag_kernels.yaml
vars: { N: 4096 }
buffers:
  x: { type: f32, count: N, init: random }
  a: { type: f32, count: N }
  b: { type: f32, count: N }
  y: { type: f32, count: N }
nodes:
  times2: { kernel: scale_f32, grid: 4, block: 256, args: [x, a, 2.0, N] }
  times3: { kernel: scale_f32, grid: 4, block: 256, args: [x, b, 3.0, N] }
  join:
    kernel: add_f32
    grid: 4
    block: 256
    args: [a, b, y, N]
    after: [times2, {times3: programmatic}]
  clear: { memset: a, value: 0, after: [join] }
"""


def build_forkjoin() -> cudag.Graph:
    g = cudag.Graph("forkjoin")
    g.var("N", 4096)
    g.module("cudag", cudag.kernels_dir() / "cudag_kernels.fatbin")
    # The access modes of cudag_kernels.yaml: times2 and times3 only read x.
    g.signature("scale_f32", "cudag",
                [("x", "ptr.read"), ("y", "ptr.write"), ("a", "f32"),
                 ("n", "i64")],
                pdl=True)
    g.signature("add_f32", "cudag",
                ["ptr.read", "ptr.read", "ptr.write", np.int64], pdl=True)
    g.buffer("x", "f32", 4096, init="random")
    for name in "aby":
        g.buffer(name, np.float32, 4096)
    g.kernel("times2", "scale_f32", 4, 256, ["x", "a", 2.0, 4096])
    g.kernel("times3", "scale_f32", (4,), (256, 1, 1), ["x", "b", 3.0, 4096])
    g.kernel("join", "add_f32", 4, 256, [("a", 0), "b", "y", 4096])
    g.memset("clear", "a", 0.0)
    g.edge("times2", "join")
    g.edge("times3", "join", kind="programmatic")
    g.edge("join", "clear")
    return g


def test_builder_access_modes_and_extents():
    """A ptr parameter with no access mode may read and write: two kernels
    reading one buffer through it race.  "ptr.read" says otherwise, and a
    (buffer, offset, count) argument narrows what a kernel writes."""
    def two_readers(mode, out_b):
        g = cudag.Graph("modes")
        g.module("cudag", cudag.kernels_dir() / "cudag_kernels.fatbin")
        g.signature("scale_f32", "cudag",
                    [("x", mode), ("y", "ptr.write"), ("a", "f32"),
                     ("n", "i64")])
        g.buffer("x", "f32", 64, init="random")
        g.buffer("y", "f32", 64)
        g.kernel("p", "scale_f32", 1, 32, ["x", ("y", 0, 32), 2.0, 32])
        g.kernel("q", "scale_f32", 1, 32, ["x", out_b, 2.0, 32])
        return g.check()

    races = [d for d in two_readers("ptr", ("y", 32, 32))
             if "race:" in d.message]
    assert len(races) == 2
    assert "bytes [0, 256) of buffer 'x'" in races[0].message
    assert two_readers("ptr.read", ("y", 32, 32)) == []
    # q's y from element 32 to the end is still clear of p's [0, 32).
    assert two_readers("ptr.read", ("y", 32)) == []
    # From element 16 to the end, q writes what p writes.
    races = two_readers("ptr.read", ("y", 16))
    assert len(races) == 2
    assert "bytes [64, 128) of buffer 'y'" in races[0].message


def test_builder_makes_the_yaml_graph():
    y = cudag.loads(FORKJOIN)
    b = build_forkjoin()
    assert b.check() == []
    assert b.nodes == y.nodes
    assert sorted(b.edges) == sorted(y.edges)
    assert b.buffers == y.buffers
    assert b.vars == y.vars
    by, yy = b.plan(), y.plan()
    assert (by.nodes, by.edges, by.depth, by.width, by.buffer_bytes) == \
        (yy.nodes, yy.edges, yy.depth, yy.width, yy.buffer_bytes)
    assert b.dot() == y.dot()


def test_builder_errors_leave_the_graph_unchanged():
    g = build_forkjoin()
    before = (g.nodes, g.edges, g.buffers)
    with pytest.raises(cudag.Error) as e:
        g.kernel("late", "nope_f32", 1, 1, [])
    assert e.value.status == "CUDAG_EUNKNOWN"
    assert e.value.message == "node 'late': unknown kernel 'nope_f32'"
    assert (e.value.line, e.value.column) == (0, 0)
    assert str(e.value) == "error: node 'late': unknown kernel 'nope_f32'"
    with pytest.raises(cudag.Error) as e:
        g.buffer("x", "f32", 4)
    assert e.value.status == "CUDAG_EDUP"
    with pytest.raises(cudag.Error) as e:
        g.edge("join", "ghost")
    assert "unknown node 'ghost'" in e.value.message
    with pytest.raises(cudag.Error):
        g.memset("m", "ghost", 0.0, count=4)
    assert (g.nodes, g.edges, g.buffers) == before


def test_builder_refuses_bad_python_values():
    g = cudag.Graph()
    with pytest.raises(TypeError, match="not an element type"):
        g.buffer("x", "float", 4)
    with pytest.raises(TypeError, match="not an element type"):
        g.buffer("x", np.complex64, 4)
    with pytest.raises(ValueError, match="edge kind"):
        g.edge("a", "b", kind="pdl")
    with pytest.raises(ValueError, match="init"):
        g.buffer("x", "f32", 4, init="ones")
    # An explicit empty range is refused, not read as the default [-1, 1).
    with pytest.raises(ValueError, match=r"range \(0, 0\) is empty"):
        g.buffer("x", "f32", 4, init="random", range=(0, 0))
    with pytest.raises(TypeError, match="kernel argument"):
        g.kernel("k", "s", 1, 1, [True])
    with pytest.raises(ValueError, match="1 to 3"):
        g.kernel("k", "s", (1, 1, 1, 1), 1, [])
    with pytest.raises(cudag.Error) as e:
        cudag.Graph("not a name")
    assert e.value.status == "CUDAG_EINVAL"


def test_check_finds_whole_graph_errors():
    g = build_forkjoin()
    g.edge("clear", "times2")           # a cycle
    with pytest.raises(cudag.Error) as e:
        g.check()
    assert e.value.status == "CUDAG_ECYCLE"
    with pytest.raises(cudag.Error) as e:
        g.dot()                         # the graph did not pass the check
    assert e.value.status == "CUDAG_ESTATE"


def test_inits_and_element_types():
    g = cudag.Graph()
    g.buffer("c", "i32", 3, init=7)
    g.buffer("r", "bf16", 3, init="random", seed=3, range=(0.0, 1.0))
    g.buffer("i", np.dtype("uint8"), 3, init="iota")
    g.buffer("z", "f64", 3, init="zero")
    assert {n: b.type for n, b in g.buffers.items()} == \
        {"c": "i32", "r": "bf16", "i": "u8", "z": "f64"}
    assert g.buffers["z"].nbytes == 24
    assert cudag.element_type("bf16").size == 2
    assert cudag.element_type(np.float16).name == "f16"
