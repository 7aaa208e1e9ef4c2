"""Loading YAML from Python: defines, includes of the shipped kernels, what a
graph declares as plain data, plan and DOT equal to the CLI's, and every
error of tests/data/bad at its exact position."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import cudag
from conftest import SRC

CLI = Path(os.environ.get("CUDAG_BUILD_ROOT", SRC / "build")) / "tools" / "cudag"
PDL_CHAIN = SRC / "graphs" / "pdl_chain.yaml"


def cli(*args) -> str:
    if not CLI.exists():
        pytest.skip(f"no cudag command at {CLI}")
    return subprocess.run([str(CLI), *map(str, args)], check=True,
                          capture_output=True, text=True).stdout


def test_load_file_with_defines():
    g = cudag.load(PDL_CHAIN, defines={"N": 4096})
    assert g.name == "pdl_chain"
    assert g.vars == {"N": 4096, "GRID": 4}
    assert g.buffers["x"] == cudag.Buffer("x", "f32", 4096, 16384)
    assert [b.count for b in g.buffers.values()] == [4096] * 4
    assert g.nodes == [cudag.Node("double", "kernel"),
                       cudag.Node("sum", "kernel"),
                       cudag.Node("axpy", "kernel"),
                       cudag.Node("out", "kernel")]
    assert g.edges == [("double", "sum", "programmatic"),
                       ("sum", "axpy", "programmatic"),
                       ("axpy", "out", "programmatic")]
    assert g.buffer_info("y").nbytes == 16384
    assert g.buffers["x"].dtype.str == "<f4"


def test_loads_text_finds_shipped_kernels(scale_yaml):
    g = cudag.loads(scale_yaml, name="mine.yaml", defines={"N": 8})
    assert g.name == "mine"
    assert g.buffers["z"].count == 8
    assert [n.name for n in g.nodes] == ["times", "plus"]
    assert cudag.kernels_dir() is not None
    assert (cudag.kernels_dir() / "cudag_kernels.yaml").exists()


def test_kernels_dir_without_its_manifest_is_refused(tmp_path, monkeypatch,
                                                     scale_yaml):
    # a directory with a fatbin alone: the include would have found the
    # build's manifest, and so the build's fatbin, without a word
    (tmp_path / "cudag_kernels.fatbin").write_bytes(b"\0" * 16)
    monkeypatch.setenv("CUDAG_KERNELS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError,
                       match=f"CUDAG_KERNELS_DIR={tmp_path} holds no "
                             "cudag_kernels.yaml"):
        cudag.kernels_dir()
    with pytest.raises(FileNotFoundError, match="holds no cudag_kernels.yaml"):
        cudag.loads(scale_yaml, name="mine.yaml", defines={"N": 8})
    monkeypatch.setenv("CUDAG_KERNELS_DIR", str(SRC / "kernels"))
    assert cudag.kernels_dir() == SRC / "kernels"


def test_plan_matches_the_cli():
    g = cudag.load(PDL_CHAIN, defines={"N": 100000})
    p = g.plan()
    want = json.loads(cli("plan", "--json", "-D", "N=100000", PDL_CHAIN))
    for key in ("nodes", "kernel_nodes", "memset_nodes", "memcpy_nodes",
                "conditional_nodes", "bodies", "gemm_nodes",
                "depth", "width",
                "buffer_bytes", "edges"):
        assert getattr(p, key) == want[key], key
    assert p.text == cli("plan", "-D", "N=100000", PDL_CHAIN)
    assert isinstance(p.edges, dict) and p.edges["programmatic"] == 3


@pytest.mark.parametrize("graph", sorted((SRC / "graphs").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_dot_matches_the_cli(graph):
    g = cudag.load(graph)
    assert g.dot() == cli("dot", graph)
    assert g.dot(critical=False, clusters=False) == \
        cli("dot", "--no-critical", "--no-clusters", graph)


def test_define_values():
    g = cudag.load(PDL_CHAIN, defines={"N": "2*512"})
    assert g.vars["N"] == 1024
    with pytest.raises(TypeError):
        cudag.load(PDL_CHAIN, defines={"N": True})
    with pytest.raises(cudag.Error) as e:
        cudag.load(PDL_CHAIN, defines={"NOPE": 3})
    assert e.value.status == "CUDAG_EUNKNOWN"
    assert "NOPE" in e.value.message


def test_error_prints_like_the_cli():
    text = ("cudag: 1\n"
            "buffers:\n"
            "  a: { type: f32, count: 4 }\n"
            "  b: { type: float, count: 4 }\n")
    with pytest.raises(cudag.Error) as e:
        cudag.loads(text, name="t.yaml")
    err = e.value
    assert (err.file, err.line, err.column) == ("t.yaml", 4, 14)
    assert err.code < 0 and err.status.startswith("CUDAG_E")
    lines = str(err).split("\n")
    assert lines[0] == f"t.yaml:4:14: error: {err.message}"
    assert lines[1] == "     4 |   b: { type: float, count: 4 }"
    assert lines[2] == "       |              ^"


def test_error_from_a_file_shows_its_line(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text("cudag: 1\nvars: { N: 4 }\nbuffers:\n"
                 "  x: { type: f32, count: N*M }\n")
    with pytest.raises(cudag.Error) as e:
        cudag.load(p)
    first, src, caret = str(e.value).split("\n")[:3]
    assert first.startswith(f"{p}:4:")
    assert src == "     4 |   x: { type: f32, count: N*M }"
    col = e.value.column
    assert caret == "       | " + " " * (col - 1) + "^"
    assert "M" in e.value.message


def test_every_error_is_reported():
    text = ("cudag: 1\n"
            "buffers:\n"
            "  a: { type: f32, count: 4, bogus: 1 }\n"
            "  b: { type: f32, count: 4, other: 2 }\n")
    with pytest.raises(cudag.Error) as e:
        cudag.loads(text)
    errs = [d for d in e.value.diagnostics if d.severity == "error"]
    assert e.value.count == len(errs) == 2
    assert [d.line for d in errs] == [3, 4]
    assert str(e.value).count("error:") == 2


def test_warnings_are_issued_and_werror_refuses():
    text = ("cudag: 1\n"
            "buffers:\n"
            "  a: { type: f32, count: 4 }\n"
            "  lonely: { type: f32, count: 4 }\n"
            "nodes:\n"
            "  z: { memset: a, value: 0 }\n")
    with pytest.warns(cudag.GraphWarning, match=r"<string>:4:3: warning: "
                      r"buffer 'lonely' is never used"):
        g = cudag.loads(text)
    with pytest.warns(cudag.GraphWarning):
        assert [w.line for w in g.check()] == [4]
    with pytest.raises(cudag.Error) as e:
        cudag.loads(text, werror=True)
    assert e.value.line == 4 and "never used" in e.value.message


def test_strict_raises_for_an_unsafe_edge_before_the_gpu():
    """strict=True refuses at load and at check what instantiate refuses:
    a programmatic edge into a kernel that does not wait."""
    path = SRC / "tests" / "data" / "bad" / "pdl_strict_not_waiting.yaml"
    with pytest.warns(cudag.GraphWarning, match="'up' -> 'down' will be "
                      "built as a full edge"):
        g = cudag.load(path)
    with pytest.raises(cudag.Error) as e:
        g.check(strict=True)
    assert (e.value.line, e.value.column) == (12, 66)
    assert "'up' -> 'down' is not safe" in e.value.message
    with pytest.raises(cudag.Error) as e:
        cudag.load(path, strict=True)
    assert "is not safe" in e.value.message


def _header(path: Path):
    expect, defines, flags = None, {}, {}
    for line in path.read_text(errors="replace").split("\n"):
        if not line.startswith("#"):
            break
        if line.startswith("# expect: "):
            expect = line[len("# expect: "):]
        elif line.startswith("# define: "):
            k, v = line[len("# define: "):].split("=", 1)
            defines[k] = v
        elif line == "# flags: werror":
            flags["werror"] = True
        elif line == "# flags: strict":
            flags["strict"] = True
    return expect, defines, flags


BAD = sorted((SRC / "tests" / "data" / "bad").glob("*.yaml"))


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_file_reports_its_exact_error(path):
    expect, defines, flags = _header(path)
    assert expect, f"{path.name} names no expected error"
    with pytest.raises(cudag.Error) as e:
        cudag.load(path, defines=defines, **flags)
    err = e.value
    got = str(cudag.Diagnostic("error", err.message, err.file, err.line,
                               err.column))
    got = got.replace(f"{path.parent}/", "")
    if got.startswith(path.name + ":"):
        got = got[len(path.name) + 1:]
    # A "…" in the expectation stands for any text (as in tests/test_bad.c):
    # the directories searched for an include depend on the machine.
    pattern = ".*".join(re.escape(part) for part in expect.split("…"))
    assert re.fullmatch(pattern, got, re.S), f"{got!r} != {expect!r}"
    m = re.match(r"(\d+):(\d+): ", expect)
    if m and err.file == str(path):
        assert (err.line, err.column) == (int(m[1]), int(m[2]))
