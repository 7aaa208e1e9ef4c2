"""Lifetimes across the binding, on the fake driver (which counts every
object libcudag holds): an Exec keeps its graph and its bound arrays alive,
closing in any order frees everything once, and a closed handle raises."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import cudag
from conftest import CaiArray

N = 64


def test_exec_outlives_its_graph_object(fake, scale_yaml):
    exe = cudag.loads(scale_yaml).instantiate()
    gref = weakref.ref(exe._graph)
    gc.collect()
    assert gref() is not None               # held by the exec
    exe.launch()
    np.testing.assert_array_equal(exe.read("z"), 3 * np.arange(N, dtype="f4"))
    exe.close()
    gc.collect()
    assert gref() is None
    assert fake.fake_objects_live() == 0


def test_graph_closed_before_its_exec(fake, scale_yaml):
    g = cudag.loads(scale_yaml)
    exe = g.instantiate()
    g.close()
    assert g.closed and g._h is not None    # freed with the last exec
    with pytest.raises(cudag.Error, match="the graph is closed") as e:
        g.nodes
    assert e.value.status == "CUDAG_ESTATE"
    with pytest.raises(cudag.Error, match="the graph is closed"):
        g.instantiate()
    exe.launch()
    np.testing.assert_array_equal(exe.read("y"), 2 * np.arange(N, dtype="f4"))
    exe.close()
    assert g._h is None
    assert fake.fake_objects_live() == 0
    g.close()                               # twice is harmless


def test_bound_array_deleted_by_the_program(fake, scale_yaml):
    g = cudag.loads(scale_yaml)
    x = CaiArray(np.linspace(0, 1, N, dtype=np.float32))
    want = 3 * x.a
    xref = weakref.ref(x)
    exe = g.instantiate(bind={"x": x})
    del x
    gc.collect()
    assert xref() is not None               # kept while bound
    exe.launch()
    np.testing.assert_array_equal(exe.read("z"), want)
    exe.close()
    gc.collect()
    assert xref() is not None               # the graph still binds it
    g.close()
    gc.collect()
    assert xref() is None
    assert fake.fake_objects_live() == 0


def test_rebind_releases_the_array_before(fake, scale_yaml):
    g = cudag.loads(scale_yaml)
    with g.instantiate() as exe:
        a = CaiArray(np.zeros(N, np.float32))
        aref = weakref.ref(a)
        exe.rebind("x", a)
        del a
        gc.collect()
        assert aref() is not None
        exe.rebind("x", CaiArray(np.ones(N, np.float32)))
        gc.collect()
        assert aref() is None
        exe.launch()
        np.testing.assert_array_equal(exe.read("z"), np.full(N, 3, "f4"))
    g.close()


def test_forgotten_exec_and_graph_are_freed(fake, scale_yaml):
    def work():
        g = cudag.loads(scale_yaml)
        x = g.instantiate()
        x.launch()
    work()
    gc.collect()
    assert fake.fake_objects_live() == 0


def test_with_blocks_and_closed_execs(fake, scale_yaml):
    with cudag.loads(scale_yaml) as g:
        with g.instantiate() as exe:
            exe.launch()
        assert exe.closed and not g.closed
        for call in (exe.launch, exe.sync, lambda: exe.read("x"),
                     lambda: exe.set_arg("times", 2, 1.0),
                     lambda: exe.stream):
            with pytest.raises(cudag.Error, match="the exec is closed"):
                call()
        exe.close()                         # twice is harmless
    assert g.closed and g._h is None
    assert "closed" in repr(g) and "closed" in repr(exe)
    assert fake.fake_objects_live() == 0
