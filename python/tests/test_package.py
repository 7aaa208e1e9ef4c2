"""The package as a user meets it: it imports and checks graphs without a
GPU, says in one sentence that there is no driver, finds the library it is
told to (the bundled one, $CUDAG_LIBRARY, or the system's), and says what is
wrong when it cannot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cudag
from conftest import SRC


def run(code: str, lib_dir: str | None = None, **env):
    """Runs Python code in a child without the fake driver, with lib_dir
    first in the loader's path."""
    fake = os.environ.get("CUDAG_FAKE_CUDA_DIR")
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
            if d and d != fake]
    e = dict(os.environ, **env)
    e["LD_LIBRARY_PATH"] = ":".join(([lib_dir] if lib_dir else []) + dirs)
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=e)


def test_versions_agree():
    assert cudag.library_version() == cudag.__version__
    assert Path(cudag.LIBRARY).name.startswith("libcudag.so")


def test_without_a_driver_everything_but_instantiate_works():
    p = run(
        "import cudag\n"
        f"g = cudag.load({str(SRC / 'graphs/fork_join.yaml')!r})\n"
        "print(g.plan().width, len(g.dot()) > 0)\n"
        "try:\n"
        "    g.instantiate()\n"
        "except cudag.Error as e:\n"
        "    print(e.status)\n"
        "    print(e)\n"
        "else:\n"
        "    print('a GPU is here')\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout.split("\n")
    if out[1] == "a GPU is here":
        return
    assert out[0].split()[1] == "True"
    assert out[1] == "CUDAG_ENODRIVER"
    assert out[2].startswith("error: no CUDA driver found (libcuda.so.1): ") \
        or out[2].startswith("error: no CUDA device found")


def test_library_named_by_the_environment():
    lib = Path(os.environ["CUDAG_LIBRARY"])
    # The installed library's soname, found by the dynamic loader.
    p = run("import cudag; print(cudag.LIBRARY, cudag.library_version())",
            lib_dir=str(lib.parent), CUDAG_LIBRARY="libcudag.so.1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["libcudag.so.1", cudag.__version__]


def test_missing_library_says_what_to_do():
    p = run("import cudag", CUDAG_LIBRARY="/nowhere/libcudag.so")
    assert p.returncode != 0
    last = p.stderr.strip().split("\n")[-1]
    assert last.startswith("ImportError: cudag: cannot open libcudag "
                           "(/nowhere/libcudag.so): ")
    assert "CUDAG_LIBRARY" in last


def test_too_old_library_is_named(tmp_path):
    # Any shared library without cudag's functions stands for an old one.
    import ctypes.util
    libm = ctypes.util.find_library("m")
    p = run("import cudag", CUDAG_LIBRARY=libm)
    assert p.returncode != 0
    assert f"the libcudag at {libm} has no cudag_" in p.stderr
