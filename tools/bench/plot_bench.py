#!/usr/bin/env python3
"""Plots from the JSON lines that tools/bench/gpu_all.sh's bench step writes.

    plot_bench.py RESULTS.jsonl OUTDIR

Writes OUTDIR/bench_replay.png (replay time per node against N, for every
mode of `cudag bench` and the hand-built graph, chain and random DAG of tiny
kernels) and OUTDIR/bench_host.png (host time per node of each stage against
N).  Needs matplotlib.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = [("stream", "1 stream launches"), ("stream_pdl", "2 stream + PDL attribute"),
         ("graph_full", "3 graph, full edges"), ("graph", "4 graph as declared"),
         ("graph_serial", "5 graph, branches serialized")]


def load(path):
    rows = {}
    for line in open(path):
        r = json.loads(line)
        if "cudag" in r:
            rows[r["case"]] = r
    return rows


def series(rows, prefix):
    pts = []
    for name, r in rows.items():
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            pts.append((r["cudag"]["nodes"], r))
    return sorted(pts, key=lambda p: p[0])


def main():
    rows = load(sys.argv[1])
    out = sys.argv[2]
    meta = next(iter(rows.values()))["cudag"]
    title = "%s, %s" % (meta["device"], meta["date"])

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, prefix, label in ((axes[0], "chain_tiny_", "chain"),
                              (axes[1], "random_tiny_", "random DAG (fan-in <= 3)")):
        pts = series(rows, prefix)
        ns = [n for n, _ in pts]
        for key, name in MODES:
            ax.plot(ns, [r["cudag"]["modes"][key]["median_us"] / n for n, r in pts],
                    marker="o", label=name)
        hb = [(n, r["handbuilt"]["replay_us"]["median"] / n) for n, r in pts if "handbuilt" in r]
        ax.plot([n for n, _ in hb], [v for _, v in hb], "k--", marker="x",
                label="hand-built driver-API graph")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes")
        ax.set_title("%s of tiny kernels" % label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("replay time per node (µs, median)")
    axes[1].legend(fontsize=8)
    fig.suptitle("cudag bench: replay time per node — " + title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bench_replay.png"), dpi=110)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    pts = series(rows, "chain_tiny_")
    ns = [n for n, _ in pts]
    for key, name in (("parse_check", "cudag parse + check"), ("build", "cudag build"),
                      ("instantiate", "cudag instantiate")):
        ax.plot(ns, [r["cudag"]["host_ms"][key] * 1e3 / n for n, r in pts], marker="o",
                label=name)
    ax.plot(ns, [r["handbuilt"]["build_ms"] * 1e3 / n for n, r in pts], "k--", marker="x",
            label="hand-built build")
    ax.plot(ns, [r["handbuilt"]["instantiate_ms"] * 1e3 / n for n, r in pts], "k:",
            marker="x", label="hand-built instantiate")
    ax.set_xscale("log")
    ax.set_xlabel("nodes (chain of tiny kernels, every node written out)")
    ax.set_ylabel("host time per node (µs)")
    ax.set_title("host stages per node — " + title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bench_host.png"), dpi=110)


if __name__ == "__main__":
    main()
