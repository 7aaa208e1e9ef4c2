"""The ctypes declarations of python/cudag/_capi.py against cudag.h itself:
every struct's size and every field's offset as the C compiler lays them out
(abi_layout.c), and the constants the package names by value.  A field added
to the header without the package following fails here."""

from __future__ import annotations

import ctypes
import os
import subprocess

import pytest

from cudag import _capi as C

STRUCTS = {
    "cudag_error": C.cudag_error, "cudag_options": C.cudag_options,
    "cudag_exec_options": C.cudag_exec_options,
    "cudag_param": C.cudag_param, "cudag_init": C.cudag_init,
    "cudag_arg": C.cudag_arg, "cudag_dim3": C.cudag_dim3,
    "cudag_plan_info": C.cudag_plan_info, "cudag_value": C.cudag_value,
    "cudag_exec_stats": C.cudag_exec_stats,
    "cudag_module_stats": C.cudag_module_stats,
}
CONSTANTS = {
    "CUDAG_TYPE_F64": C.TYPE_F64, "CUDAG_TYPE_PTR": C.TYPE_PTR,
    "CUDAG_EINVAL": C.EINVAL, "CUDAG_EUNKNOWN": C.EUNKNOWN,
    "CUDAG_ETYPE": C.ETYPE, "CUDAG_ERANGE": C.ERANGE, "CUDAG_ESTATE": C.ESTATE,
    "CUDAG_ETIMEOUT": C.ETIMEOUT,
    "CUDAG_NO_PDL": C.NO_PDL, "CUDAG_STRICT": C.STRICT,
    "CUDAG_WERROR": C.WERROR, "CUDAG_NVTX": C.NVTX,
    "CUDAG_MODULE_UNUSED": C.MODULE_ORIGINS.index("unused"),
    "CUDAG_MODULE_FILE": C.MODULE_ORIGINS.index("file"),
    "CUDAG_MODULE_COMPILED": C.MODULE_ORIGINS.index("compiled"),
    "CUDAG_MODULE_CACHED": C.MODULE_ORIGINS.index("cache"),
}


@pytest.fixture(scope="module")
def layout():
    exe = os.environ.get("CUDAG_ABI_LAYOUT")
    if not exe:
        pytest.skip("CUDAG_ABI_LAYOUT is not set (run through meson test)")
    out = subprocess.run([exe], check=True, capture_output=True, text=True)
    return dict((k, int(v)) for k, v in
                (line.split() for line in out.stdout.splitlines()))


def test_structs_match_the_header(layout):
    checked = 0
    for key, value in layout.items():
        name, _, field = key.partition(".")
        if name not in STRUCTS:
            continue
        s = STRUCTS[name]
        if field:
            assert getattr(s, field).offset == value, key
        else:
            assert ctypes.sizeof(s) == value, key
            # Every field of the header is declared, in order.
            fields = [k.partition(".")[2] for k in layout
                      if k.startswith(name + ".")]
            assert fields == [f for f, *_ in s._fields_][1 if name in (
                "cudag_options", "cudag_exec_options") else 0:], name
        checked += 1
    assert checked > 50


def test_constants_match_the_header(layout):
    for name, value in CONSTANTS.items():
        assert layout[name] == value, name
