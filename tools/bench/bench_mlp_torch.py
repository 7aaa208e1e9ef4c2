#!/usr/bin/env python3
"""The MLP block of graphs/mlp_decode.yaml: cudag against PyTorch and the floor.

For each shape (T tokens, width H, F = 4·H; bf16; one layer), times:
  cudag          `cudag run --json -D LAYERS=1 graphs/mlp_decode.yaml`
                 (RMSNorm, gate+up GEMM, SwiGLU, down GEMM, residual add)
  eager          the same block in PyTorch, op by op
  cuda_graph     the eager block captured in a torch.cuda.CUDAGraph
  compile        torch.compile (default mode)
  compile_cg     torch.compile(mode="reduce-overhead"), with CUDA graphs
(both compiled variants compile a module holding gamma and the weights as
parameters, as a model would, and return x + y as a new tensor: given the
weights as inputs, mode="reduce-overhead" copies them into its graph's
buffers on every call, and given x to add into, it skips its CUDA graphs)
and the weight-streaming floor: the weights' bytes (3·F·H bf16) over the
device's copy bandwidth (bytes read plus written per second by a large
device-to-device copy).  Every variant is warmed up (compilation included),
then timed the way `cudag run` times replays: CUDA events between calls
issued back to back, median per call.  Before timing, cudag's block is
checked against PyTorch on cudag's own buffers (`--dump`).

Prints one JSON object; --markdown FILE writes the table for
docs/benchmarks.md.

    bench_mlp_torch.py --cudag build/tools/cudag [--graph graphs/mlp_decode.yaml]
                       [--tokens 1,16,64] [--widths 2048,4096] [--iters 200]
                       [--markdown FILE] [--json FILE]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

import torch
import torch.nn.functional as F


def timed(fn, iters, warm=20):
    """Median µs per call of fn, calls issued back to back between events."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    ev[0].record()
    for i in range(iters):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    return statistics.median(ev[i].elapsed_time(ev[i + 1]) * 1e3
                             for i in range(iters))


def copy_bandwidth(dev):
    """Bytes read plus written per second by a 1 GiB device copy."""
    n = 1 << 29                           # bf16 elements: 1 GiB
    a = torch.empty(n, dtype=torch.bfloat16, device=dev)
    b = torch.empty_like(a)
    us = timed(lambda: b.copy_(a), 20, warm=5)
    del a, b
    return 2 * n * 2 / (us * 1e-6)


def ffn(h, w_gu, w_down):
    """The block after its norm: gate and up as one GEMM, SwiGLU, down."""
    gate, up = F.linear(h, w_gu).chunk(2, dim=-1)
    return F.linear(F.silu(gate) * up, w_down)


def block_y(x, gamma, w_gu, w_down):
    """What one block adds to x, as graphs/mlp_decode.yaml computes it."""
    return ffn(F.rms_norm(x, (x.shape[-1],), gamma, 1e-6), w_gu, w_down)


def mlp(x, gamma, w_gu, w_down):
    """One block, x in place."""
    x += block_y(x, gamma, w_gu, w_down)
    return x


class Block(torch.nn.Module):
    """The same block as a module, returning x + y, for torch.compile."""

    def __init__(self, gamma, w_gu, w_down):
        super().__init__()
        self.gamma = torch.nn.Parameter(gamma, requires_grad=False)
        self.w_gu = torch.nn.Parameter(w_gu, requires_grad=False)
        self.w_down = torch.nn.Parameter(w_down, requires_grad=False)

    def forward(self, x):
        return x + block_y(x, self.gamma, self.w_gu, self.w_down)


def run_cudag(a, T, H, extra, env):
    cmd = [a.cudag, "run", "--json", "--iters", str(a.iters), "--warmup", "20",
           "-D", f"T={T}", "-D", f"H={H}", "-D", "LAYERS=1"] + extra + [a.graph]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=env)
    return json.loads(out.stdout)


def check_cudag(a, T, H, env, dev):
    """cudag's y from its own h and weights, against PyTorch's: relative
    error of the block's output (bf16 GEMMs summed in another order)."""
    F_ = 4 * H
    with tempfile.TemporaryDirectory() as d:
        names = ["h", "w_gu", "w_down", "y"]
        dumps = []
        for nm in names:
            dumps += ["--dump", f"{nm}={os.path.join(d, nm)}"]
        a2 = argparse.Namespace(**vars(a))
        a2.iters = 1
        run_cudag(a2, T, H, dumps, env)

        def load(nm, shape):
            raw = open(os.path.join(d, nm), "rb").read()
            t = torch.frombuffer(bytearray(raw), dtype=torch.bfloat16)
            return t.reshape(shape).to(dev)
        h = load("h", (T, H))
        w_gu = load("w_gu", (2 * F_, H))
        w_down = load("w_down", (H, F_))
        y = load("y", (T, H)).float()
    ref = ffn(h, w_gu, w_down).float()
    return float((y - ref).norm() / ref.norm())


def write(res, a):
    """The JSON object on stdout (or --json FILE), the table in --markdown."""
    text = json.dumps(res, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    if a.markdown and res["shapes"]:
        with open(a.markdown, "w") as f:
            f.write(f"Measured on {res['device']}, {res['date']} (PyTorch "
                    f"{res['torch']}; copy bandwidth "
                    f"{res['copy_bandwidth_GBps']:.0f} GB/s, read + write).\n\n")
            f.write("| T | H | eager | CUDA graph | compile | compile + CUDA "
                    "graphs | cudag | floor | cudag / best torch | cudag / "
                    "floor |\n")
            f.write("| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
            for r in res["shapes"]:
                u = r["us"]
                f.write(f"| {r['T']} | {r['H']} | {u['eager']:.1f} | "
                        f"{u['cuda_graph']:.1f} | {u['compile']:.1f} | "
                        f"{u['compile_cg']:.1f} | **{u['cudag']:.1f}** | "
                        f"{r['floor_us']:.1f} | {r['cudag_vs_best_torch']:.2f} | "
                        f"{r['cudag_vs_floor']:.2f} |\n")
            f.write("\nTimes in µs per block (median); cudag's output was "
                    "checked against PyTorch at every shape (relative error "
                    f"at most {max(r['cudag_rel_err'] for r in res['shapes']):.1e}).\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cudag", required=True, help="the cudag program")
    ap.add_argument("--graph", default="graphs/mlp_decode.yaml")
    ap.add_argument("--tokens", default="1,16,64")
    ap.add_argument("--widths", default="2048,4096")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--markdown", help="also write the table here")
    ap.add_argument("--json", help="write the JSON object here, after every "
                    "shape, instead of on stdout at the end")
    a = ap.parse_args()
    dev = torch.device("cuda")
    env = dict(os.environ)
    torch.manual_seed(1)
    bw = copy_bandwidth(dev)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": datetime.date.today().isoformat(), "iters": a.iters,
           "copy_bandwidth_GBps": bw / 1e9, "shapes": []}
    for H in (int(v) for v in a.widths.split(",")):
        for T in (int(v) for v in a.tokens.split(",")):
            Fd = 4 * H
            x0 = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
            gamma = torch.rand(H, device=dev, dtype=torch.bfloat16) + 0.5
            w_gu = (torch.rand(2 * Fd, H, device=dev, dtype=torch.bfloat16)
                    - 0.5) * 0.06
            w_down = (torch.rand(H, Fd, device=dev, dtype=torch.bfloat16)
                      - 0.5) * 0.06
            x = x0.clone()
            row = {"T": T, "H": H, "F": Fd, "us": {}}
            row["us"]["eager"] = timed(lambda: mlp(x, gamma, w_gu, w_down),
                                       a.iters)
            xs = x0.clone()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    mlp(xs, gamma, w_gu, w_down)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                mlp(xs, gamma, w_gu, w_down)
            row["us"]["cuda_graph"] = timed(g.replay, a.iters)
            block = Block(gamma, w_gu, w_down)
            for mode, key in ((None, "compile"), ("reduce-overhead",
                                                  "compile_cg")):
                torch._dynamo.reset()
                f = (torch.compile(block, mode=mode) if mode
                     else torch.compile(block))
                row["us"][key] = timed(lambda: f(x), a.iters, warm=30)
            row["cudag_rel_err"] = check_cudag(a, T, H, env, dev)
            c = run_cudag(a, T, H, [], env)
            row["us"]["cudag"] = c["replay_us"]["median"]
            weight_bytes = 3 * Fd * H * 2
            row["floor_us"] = weight_bytes / bw * 1e6
            torch_best = min(row["us"][k] for k in
                             ("eager", "cuda_graph", "compile", "compile_cg"))
            row["cudag_vs_best_torch"] = row["us"]["cudag"] / torch_best
            row["cudag_vs_floor"] = row["us"]["cudag"] / row["floor_us"]
            res["shapes"].append(row)
            # Each shape is written when measured: a call cut short by a
            # time limit keeps the shapes it finished.
            if a.json:
                write(res, a)
            del x0, x, xs, gamma, w_gu, w_down, g, block, f
            torch.cuda.empty_cache()
    write(res, a)


if __name__ == "__main__":
    main()
