#!/usr/bin/env python3
"""Write cudag graphs of N nodes in the shapes task-graph benchmarks use.

    gen_graph.py SHAPE N [options] -o OUT.yaml [--topo OUT.topo]

Shapes: chain, forkjoin (--branches B chains between a source and a sink),
tree (a binary out-tree: node i after node (i-1)//2), wavefront (an M x M'
grid, tile (i, j) after (i-1, j) and (i, j-1)), random (a seeded random DAG:
each node after up to --fanin earlier nodes within a window).

Kernels (--kernel): tiny (util_noop: the launch overhead alone), prologue
(util_spin: --prologue-ns before griddepcontrol.wait, --body-ns after it),
lib (scale_f32 over a small vector: a real library kernel).

Every node is written out (no repetition), so the file also measures the
parser; --repeat writes chains and wavefronts with repetition instead
(`n[i in N]`, `row[i in M]: col[j in N]`), the way a person writes them,
which is the same graph in a few lines.  --topo writes the same topology in a plain text form that
tools/bench/handbuilt.c reads, so the hand-written driver-API build gets exactly
the same graph:
    nodes N
    kernel NAME GRIDX BLOCKX ARG...        (ARG: i64:VALUE | f32:VALUE | buf)
    edge FROM TO KIND                      (KIND: 0 full, 1 programmatic)
"""
import argparse
import random
import sys


def shape_edges(shape, n, args):
    """(number of nodes, list of (from, to)) in a deterministic order."""
    edges = []
    if shape == "chain":
        edges = [(i - 1, i) for i in range(1, n)]
    elif shape == "forkjoin":
        b = args.branches
        length = max(1, (n - 2) // b)
        n = 2 + b * length
        sink = n - 1
        for br in range(b):
            first = 1 + br * length
            edges.append((0, first))
            for k in range(1, length):
                edges.append((first + k - 1, first + k))
            edges.append((first + length - 1, sink))
    elif shape == "tree":
        edges = [((i - 1) // 2, i) for i in range(1, n)]
    elif shape == "wavefront":
        cols = args.cols or max(1, int(round(n ** 0.5)))
        rows = max(1, n // cols)
        n = rows * cols
        for i in range(rows):
            for j in range(cols):
                v = i * cols + j
                if i:
                    edges.append((v - cols, v))
                if j:
                    edges.append((v - 1, v))
    elif shape == "random":
        rng = random.Random(args.seed)
        for v in range(1, n):
            lo = max(0, v - args.window)
            k = rng.randint(1, min(args.fanin, v - lo))
            for u in sorted(rng.sample(range(lo, v), k)):
                edges.append((u, v))
    else:
        sys.exit("gen_graph.py: unknown shape '%s'" % shape)
    return n, edges


def write_repeated(f, args, n, body, word):
    """The same nodes and edges as the explicit form, in the same order,
    in block style (flow style would need the bracketed names quoted)."""
    def node(indent, refs):
        pad = " " * indent
        f.write("".join("%s%s\n" % (pad, line) for line in body))
        f.write("%safter:\n" % pad)
        for r in refs:
            f.write("%s  - %s%s\n" % (pad, r, ": " + word if word else ""))
    if args.shape == "chain":
        f.write("  n[i in %d]:\n" % n)
        node(4, ["n[i-1]"])
    else:
        cols = args.cols or max(1, int(round(n ** 0.5)))
        f.write("  row[i in %d]:\n    col[j in %d]:\n" % (n // cols, cols))
        node(6, ["row[i-1].col[j]", "col[j-1]"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shape", choices=["chain", "forkjoin", "tree", "wavefront", "random"])
    ap.add_argument("n", type=int, help="number of nodes (rounded to fit the shape)")
    ap.add_argument("--kernel", choices=["tiny", "prologue", "lib"], default="tiny")
    ap.add_argument("--edge", choices=["full", "programmatic"], default="programmatic",
                    help="kind of every edge whose ends allow it (default programmatic)")
    ap.add_argument("--branches", type=int, default=8)
    ap.add_argument("--cols", type=int, default=0)
    ap.add_argument("--fanin", type=int, default=3)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prologue-ns", type=int, default=2000)
    ap.add_argument("--body-ns", type=int, default=2000)
    ap.add_argument("--elems", type=int, default=4096, help="vector length for --kernel lib")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--topo", help="also write the topology for tools/bench/handbuilt.c")
    ap.add_argument("--repeat", action="store_true",
                    help="write a chain or wavefront with repetition, not node by node")
    args = ap.parse_args()
    if args.n < 1:
        sys.exit("gen_graph.py: N must be at least 1")
    if args.repeat and args.shape not in ("chain", "wavefront"):
        sys.exit("gen_graph.py: --repeat writes chains and wavefronts only")

    n, edges = shape_edges(args.shape, args.n, args)
    kind = 1 if args.edge == "programmatic" else 0
    if args.kernel == "tiny":
        call, topo_kernel = "{kernel: util_noop, grid: 1, block: 32%s}", "kernel util_noop 1 32"
        body = ["kernel: util_noop", "grid: 1", "block: 32"]
    elif args.kernel == "prologue":
        call = ("{kernel: util_spin, grid: 1, block: 32, args: [%d, %d]%%s}"
                % (args.prologue_ns, args.body_ns))
        topo_kernel = "kernel util_spin 1 32 i64:%d i64:%d" % (args.prologue_ns, args.body_ns)
        body = ["kernel: util_spin", "grid: 1", "block: 32",
                "args: [%d, %d]" % (args.prologue_ns, args.body_ns)]
    else:
        grid = (args.elems + 1023) // 1024
        call = ("{kernel: scale_f32, grid: %d, block: 256, args: [v, v, 1.0, %d]%%s}"
                % (grid, args.elems))
        topo_kernel = "kernel scale_f32 %d 256 buf buf f32:1.0 i64:%d" % (grid, args.elems)
        body = ["kernel: scale_f32", "grid: %d" % grid, "block: 256",
                "args: [v, v, 1.0, %d]" % args.elems]

    preds = [[] for _ in range(n)]
    for u, v in edges:
        preds[v].append(u)
    word = "programmatic" if kind else "full"
    with open(args.output, "w") as f:
        f.write("# Generated by tools/bench/gen_graph.py %s\n" % " ".join(sys.argv[1:]))
        f.write("cudag: 1\nname: %s_%s_%d\ninclude: cudag_kernels.yaml\n"
                % (args.shape, args.kernel, n))
        if args.kernel == "lib":
            f.write("buffers:\n  v: { type: f32, count: %d, init: random }\n" % args.elems)
        f.write("nodes:\n")
        if args.repeat:
            write_repeated(f, args, n, body, word if kind else None)
        for v in range(n if not args.repeat else 0):
            after = ""
            if preds[v]:
                after = ", after: [%s]" % ", ".join(
                    ("n%d: %s" % (u, word)) if kind else "n%d" % u for u in preds[v])
            f.write("  n%d: %s\n" % (v, call % after))
    if args.topo:
        with open(args.topo, "w") as f:
            f.write("nodes %d\n%s\n" % (n, topo_kernel))
            for u, v in edges:
                f.write("edge %d %d %d\n" % (u, v, kind))


if __name__ == "__main__":
    main()
