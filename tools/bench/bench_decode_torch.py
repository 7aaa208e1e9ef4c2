#!/usr/bin/env python3
"""The decode chain of graphs/decode_chain.yaml in PyTorch, four ways.

8 x (RMSNorm -> bias add + GELU -> residual add) over 64 x 4096 bf16, as
PyTorch eager, as a captured torch.cuda.CUDAGraph, through torch.compile, and
through torch.compile with CUDA graphs (mode="reduce-overhead").  Each is
warmed up (compilation included there) and then timed call by call with CUDA
events; prints one JSON object with the medians in microseconds.

    bench_decode_torch.py [--iters N] [--layers L] [--tokens T] [--width H]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--width", type=int, default=4096)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(1)
    T, H, L = a.tokens, a.width, a.layers
    x0 = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    gamma = torch.randn(L, H, device=dev, dtype=torch.bfloat16)
    bias = (torch.rand(L, H, device=dev, dtype=torch.bfloat16) - 0.5)

    def chain(x):
        for i in range(L):
            h = F.rms_norm(x, (H,), gamma[i], 1e-6)
            g = F.gelu(h + bias[i], approximate="tanh")
            x = x + g
        return x

    def timed(fn, warm=20):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        times = []
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(a.iters):
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        return statistics.median(times)

    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "shape": [T, H], "layers": L, "iters": a.iters, "median_us": {}}
    xin = x0.clone()
    res["median_us"]["eager"] = timed(lambda: chain(xin))

    static_in = x0.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            chain(static_in)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = chain(static_in)
    res["median_us"]["cuda_graph"] = timed(graph.replay)

    compiled = torch.compile(chain)
    res["median_us"]["compile"] = timed(lambda: compiled(xin), warm=30)
    compiled_cg = torch.compile(chain, mode="reduce-overhead")
    res["median_us"]["compile_cuda_graphs"] = timed(lambda: compiled_cg(xin), warm=30)

    # All four compute the same function: check them against eager.
    ref = chain(x0.clone()).float()
    got = compiled(x0.clone()).float()
    res["compile_rel_err"] = float((got - ref).norm() / ref.norm())
    static_in.copy_(x0)
    graph.replay()
    res["cuda_graph_rel_err"] = float((static_out.float() - ref).norm() / ref.norm())
    res["fastest"] = min(res["median_us"], key=res["median_us"].get)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
