"""docs/python.md runs as written: its ```python blocks in order, in one
namespace, from the source tree's root (CPU suite); with its ```python gpu
blocks too on a GPU (suite gpu)."""

from __future__ import annotations

import os
import re
import warnings

import pytest

import cudag

from conftest import SRC

DOC = SRC / "docs" / "python.md"


def blocks(gpu: bool):
    text = DOC.read_text()
    for m in re.finditer(r"^```python( gpu)?\n(.*?)^```$", text, re.M | re.S):
        if gpu or not m.group(1):
            yield m.group(2)


def run_tour(gpu: bool, capsys):
    """Every block in order; a warning of cudag's is an error: the tour's
    graphs are what users copy (its fork-join once raced for want of
    access modes, which only the check's warning showed)."""
    here = os.getcwd()
    os.chdir(SRC)
    ns: dict = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", cudag.GraphWarning)
            for i, code in enumerate(blocks(gpu)):
                exec(compile(code, f"{DOC}:block{i}", "exec"), ns)
    finally:
        os.chdir(here)
    return capsys.readouterr().out


def test_tour_on_the_cpu(capsys):
    out = run_tour(False, capsys).split("\n")
    assert out[0] == "<cudag.Graph 'pdl_chain': 4 nodes, 3 edges>"
    assert out[1] == "{'N': 4096, 'GRID': 4}"
    assert "mine.yaml:3:14: error: 'float' is not an element type" in out[4]
    assert out[-2] == "2"


@pytest.mark.gpu
def test_tour_on_the_gpu(capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("cupy")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    run_tour(True, capsys)
