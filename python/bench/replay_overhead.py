#!/usr/bin/env python3
"""What replaying a CUDA graph from Python costs, and what a PyTorch program
gains by replaying a cudag graph instead of its captured one.

Part 1, host time per call, on the same graph (a chain of K scale_f32
kernels over N floats, full edges), each on a stream of its own:
  - exe.launch()                    cudag from Python (one ctypes call)
  - lib.cudag_exec_launch(…)        the bare ctypes call, for reference
  - cudag_exec_launch(x, 1, &err)   the C API (launch_c, a C program)
  - torch.cuda.CUDAGraph.replay()   PyTorch's graph of the same kernels,
                                    captured from CuPy launches of the
                                    shipped fatbin on PyTorch's stream
Batches of CALLS calls timed with the host clock, the stream synchronised
between batches (the GPU never holds the launches back); the median of
the batches.

Part 2, a PyTorch program's step: x ← next input (a copy), the decode
chain of graphs/decode_chain.yaml (8 × RMSNorm → bias + GELU → residual
add, 64 × 4096 bf16), then a reduction of x into an accumulator.  The
chain four ways: PyTorch's ops captured in a torch.cuda.CUDAGraph; the
shipped kernels captured in a torch.cuda.CUDAGraph (CuPy launches); the
cudag graph with programmatic edges; the same with full edges.  Per step:
the wall time of STEPS steps ended by a synchronisation, median of ROUNDS
rounds (variants interleaved), and the host time of the loop alone.  The
shipped kernels give bit-identical results captured or in the cudag
graph; PyTorch's ops are compared by relative error.

    PYTHONPATH=python CUDAG_LIBRARY=build/src/libcudag.so \\
    CUDAG_KERNELS_DIR=build/kernels \\
        python3 python/bench/replay_overhead.py [--launch-c build/python/bench/launch_c]
            [--out FILE.json] [--quick]

Prints a Markdown table last.  Needs PyTorch and CuPy on a CUDA GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import cudag

K, N = 8, 4096
CHAIN = f"""\
cudag: 1
include: cudag_kernels.yaml
vars: {{ N: {N}, K: {K} }}
buffers:
  a: {{ type: f32, count: N, init: random }}
  b: {{ type: f32, count: N }}
nodes:
  k[i in 0..K]:
    kernel: scale_f32
    grid: cdiv(N, 256)
    block: 256
    args: [a, b, 1.0, N]
    after:
      - k[i-1]
"""


def spread(xs):
    xs = sorted(xs)
    return {"median": statistics.median(xs), "p10": xs[len(xs) // 10],
            "p90": xs[len(xs) * 9 // 10]}


def batches(run_calls, sync, calls, n):
    """Host ns per call: run_calls(calls) timed, sync() between batches."""
    per = []
    for b in range(-(n // 10) - 1, n):
        t0 = time.perf_counter_ns()
        run_calls(calls)
        t1 = time.perf_counter_ns()
        sync()
        if b >= 0:
            per.append((t1 - t0) / calls)
    return spread(per)


def part1(torch, cp, launch_c, calls, nb):
    out = {}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(CHAIN)
        path = f.name
    g = cudag.load(path)
    exe = g.instantiate()

    def py_launch(n):
        for _ in range(n):
            exe.launch()
    out["cudag_python"] = batches(py_launch, exe.sync, calls, nb)

    raw, h, addr = exe._launch, exe._h, exe._err_addr

    def ctypes_launch(n):
        for _ in range(n):
            raw(h, 1, addr)
    out["ctypes_call"] = batches(ctypes_launch, exe.sync, calls, nb)
    b = exe.read("b")
    np.testing.assert_array_equal(b, exe.read("a"))
    exe.close()
    g.close()

    if launch_c and Path(launch_c).exists():
        r = subprocess.run([launch_c, path, str(calls), str(nb)],
                           capture_output=True, text=True, check=True)
        c = json.loads(r.stdout)
        out["cudag_c"] = {"median": c["c_launch_ns"], "p10": c["p10_ns"],
                          "p90": c["p90_ns"]}
    os.unlink(path)

    # PyTorch's graph of the same kernels: CuPy launches of the same fatbin,
    # captured on PyTorch's capture stream.
    mod = cp.RawModule(path=str(cudag.kernels_dir() / "cudag_kernels.fatbin"))
    scale = mod.get_function("scale_f32")
    a = torch.rand(N, device="cuda")
    bb = torch.full((N,), float("nan"), device="cuda")
    args = (np.uintp(a.data_ptr()), np.uintp(bb.data_ptr()), np.float32(1.0),
            np.int64(N))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        scale(((N + 255) // 256,), (256,), args,
              stream=cp.cuda.ExternalStream(s.cuda_stream))
    s.synchronize()
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg, stream=s):
        cs = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        for _ in range(K):
            scale(((N + 255) // 256,), (256,), args, stream=cs)
    bb.fill_(float("nan"))
    torch.cuda.synchronize()

    def torch_replay(n):
        for _ in range(n):
            tg.replay()
    with torch.cuda.stream(s):
        out["torch_replay"] = batches(torch_replay, s.synchronize, calls, nb)
    assert torch.equal(a, bb), "PyTorch's captured chain computed wrongly"
    return out


# ---- part 2 ----------------------------------------------------------------

T, H, L = 64, 4096, 8


def part2(torch, cp, steps, rounds):
    import torch.nn.functional as F
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(
        int(np.random.SeedSequence().entropy % (1 << 62)))
    inputs = [torch.randn(T, H, device=dev, dtype=torch.bfloat16,
                          generator=gen) for _ in range(4)]
    gamma = torch.randn(L, H, device=dev, dtype=torch.bfloat16, generator=gen)
    bias = (torch.rand(L, H, device=dev, dtype=torch.bfloat16,
                       generator=gen) - 0.5)
    acc = torch.zeros((), device=dev)

    def torch_chain(x):
        for i in range(L):
            h = F.rms_norm(x, (H,), gamma[i], 1e-6)
            x = x + F.gelu(h + bias[i], approximate="tanh")
        return x

    variants = {}

    # A: PyTorch's ops, captured.
    xa = torch.empty(T, H, device=dev, dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            torch_chain(xa.copy_(inputs[0]))
    torch.cuda.current_stream().wait_stream(s)
    ga = torch.cuda.CUDAGraph()
    with torch.cuda.graph(ga):
        ya = torch_chain(xa)
    variants["torch_ops_captured"] = (xa, ga.replay, lambda: ya)

    # B: the shipped kernels, captured (CuPy launches on the capture stream).
    mod = cp.RawModule(path=str(cudag.kernels_dir() / "cudag_kernels.fatbin"))
    fn = {k: mod.get_function(k) for k in
          ("rmsnorm_bf16", "bias_gelu_bf16", "residual_add_bf16")}
    xb = torch.empty(T, H, device=dev, dtype=torch.bfloat16)
    hb, gb = torch.empty_like(xb), torch.empty_like(xb)
    P = np.uintp

    def kernels_chain(stream):
        for i in range(L):
            fn["rmsnorm_bf16"]((T,), (256,), (
                P(xb.data_ptr()), P(gamma[i].data_ptr()), P(hb.data_ptr()),
                np.int32(T), np.int32(H), np.float32(1e-6)), stream=stream)
            fn["bias_gelu_bf16"](((T * H + 4095) // 4096,), (256,), (
                P(hb.data_ptr()), P(bias[i].data_ptr()), P(gb.data_ptr()),
                np.int64(T * H), np.int32(H)), stream=stream)
            fn["residual_add_bf16"](((T * H + 2047) // 2048,), (256,), (
                P(gb.data_ptr()), P(xb.data_ptr()), P(xb.data_ptr()),
                np.int64(T * H)), stream=stream)
    with torch.cuda.stream(s):
        kernels_chain(cp.cuda.ExternalStream(s.cuda_stream))
    s.synchronize()
    gk = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gk, stream=s):
        kernels_chain(cp.cuda.ExternalStream(
            torch.cuda.current_stream().cuda_stream))
    variants["kernels_captured"] = (xb, gk.replay, lambda: xb)

    # C, D: the cudag graph, programmatic edges and full edges.
    g = cudag.load(Path(__file__).resolve().parents[2] / "graphs" /
                   "decode_chain.yaml")
    execs = []
    for name, no_pdl in (("cudag_pdl", False), ("cudag_full", True)):
        xc = torch.empty(T, H, device=dev, dtype=torch.bfloat16)
        exe = g.instantiate(stream=torch.cuda.current_stream(), no_pdl=no_pdl,
                            bind={"x": xc, "gamma": gamma, "bias": bias})
        execs.append(exe)
        variants[name] = (xc, exe.launch, (lambda xc=xc: xc))

    # One step from the same input: the same kernels give the same bits.
    outs = {}
    for name, (x, replay, result) in variants.items():
        x.copy_(inputs[1])
        replay()
        outs[name] = result().float().clone()
    torch.cuda.synchronize()
    check = {
        "kernels_captured_vs_cudag_pdl_identical":
            bool(torch.equal(outs["kernels_captured"], outs["cudag_pdl"])),
        "cudag_full_vs_cudag_pdl_identical":
            bool(torch.equal(outs["cudag_full"], outs["cudag_pdl"])),
        "torch_ops_vs_cudag_rel_err":
            float((outs["torch_ops_captured"] - outs["cudag_pdl"]).norm()
                  / outs["cudag_pdl"].norm()),
    }
    assert check["kernels_captured_vs_cudag_pdl_identical"]
    assert check["cudag_full_vs_cudag_pdl_identical"]
    assert check["torch_ops_vs_cudag_rel_err"] < 5e-2

    wall = {k: [] for k in variants}
    host = {k: [] for k in variants}
    for r in range(rounds + 1):
        for name, (x, replay, result) in variants.items():
            y = result()
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            for i in range(steps):
                x.copy_(inputs[i & 3])
                replay()
                acc.add_(y[0, :64].float().sum())
            t1 = time.perf_counter_ns()
            torch.cuda.synchronize()
            t2 = time.perf_counter_ns()
            if r:                          # round 0 warms up
                wall[name].append((t2 - t0) / steps / 1e3)
                host[name].append((t1 - t0) / steps / 1e3)
    for exe in execs:
        exe.close()
    g.close()
    return {"check": check,
            "step_us": {k: spread(v) for k, v in wall.items()},
            "host_us": {k: spread(v) for k, v in host.items()}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launch-c", default=os.environ.get(
        "CUDAG_LAUNCH_C", "build/python/bench/launch_c"))
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    import cupy as cp
    import torch
    if not torch.cuda.is_available():
        print("replay_overhead: no CUDA device: nothing to measure")
        return 77
    calls, nb = (50, 40) if a.quick else (50, 400)
    steps, rounds = (100, 3) if a.quick else (500, 9)
    res = {
        "device": torch.cuda.get_device_name(),
        "date": datetime.date.today().isoformat(),
        "python": sys.version.split()[0], "torch": torch.__version__,
        "cupy": cp.__version__, "cudag": cudag.library_version(),
        "part1": {"graph": f"chain of {K} scale_f32 over {N} f32, full edges",
                  "calls_per_batch": calls, "batches": nb,
                  "host_ns_per_call": part1(torch, cp, a.launch_c, calls, nb)},
        "part2": {"graph": f"decode chain, {L} layers, {T}x{H} bf16",
                  "steps": steps, "rounds": rounds,
                  **part2(torch, cp, steps, rounds)},
    }
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    p1 = res["part1"]["host_ns_per_call"]
    print(f"\n{res['device']}, {res['date']}, PyTorch {res['torch']}, "
          f"Python {res['python']}\n")
    print("| host time per call | median µs | p10 – p90 |")
    print("| --- | --- | --- |")
    for k, label in (("cudag_c", "C: cudag_exec_launch"),
                     ("ctypes_call", "Python: the bare ctypes call"),
                     ("cudag_python", "Python: exe.launch()"),
                     ("torch_replay", "PyTorch: CUDAGraph.replay()")):
        if k in p1:
            v = p1[k]
            print(f"| {label} | {v['median'] / 1e3:.2f} | "
                  f"{v['p10'] / 1e3:.2f} – {v['p90'] / 1e3:.2f} |")
    if "cudag_c" in p1:
        over = (p1["cudag_python"]["median"] - p1["cudag_c"]["median"]) / 1e3
        print(f"\nexe.launch() is {over:.2f} µs above the C API (goal ≤ 2) "
              f"and {p1['torch_replay']['median'] / p1['cudag_python']['median']:.2f}× "
              "faster than PyTorch's replay() (goal > 1)")
    p2 = res["part2"]
    print("\n| PyTorch program, per step | wall µs (median) | host µs |")
    print("| --- | --- | --- |")
    for k, label in (("torch_ops_captured", "PyTorch ops, captured graph"),
                     ("kernels_captured", "shipped kernels, captured graph"),
                     ("cudag_full", "cudag graph, full edges"),
                     ("cudag_pdl", "cudag graph, programmatic edges")):
        print(f"| {label} | {p2['step_us'][k]['median']:.1f} | "
              f"{p2['host_us'][k]['median']:.1f} |")
    print(f"\n{json.dumps(p2['check'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
