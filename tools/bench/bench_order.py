#!/usr/bin/env python3
"""Hand-written edges against `order: program` (issue 29 item 5).

For each example graph (graphs/*.yaml, or the files named), two versions:

  by hand   the file as written
  program   the same file with `order: program` and every written edge left
            out (each `after:`, the `edges` list; child graph files too,
            rewritten into a temporary directory): cudag infers them

CPU (always; --cpu-only stops there):
  edges     both load and check without a race; their orders are compared as
            transitive closures of the edges that order memory (full and
            programmatic) over node names: "same" (the same parallelism),
            "more parallel" (program orders a strict subset: the hand-written
            graph has edges no read or write needs) or "differs" (program
            orders pairs the hand-written graph leaves unordered: what the
            hand-written graph gets from an ordering the access sets do not
            show, e.g. a kernel setting a condition).  --same NAME,...
            (default fork_join,llama_decode) must come out with the same
            edges, kinds aside, or the run fails.

GPU (skipped, exit 0 after the CPU part, where no device answers):
  buffers   both instantiated on the same device; every buffer of the
            program version starts with the bytes the hand-written one's
            instantiation gave it (declared inits are seeded; the rest is
            copied), both replayed once, and every buffer compared bit for
            bit; where some differ, a second hand-written instance from the
            same start tells a graph that is not deterministic by itself
            (differ_by_hand_twice) from a wrong order
  timing    --iters replays of each (CUDA events around each, after --warmup
            replays; cudag_exec_time), alternated in --rounds rounds so that
            clocks and neighbours weigh on both alike; medians and the ratio
            program / by hand, in the same run

Prints a markdown table (device, date) and writes JSON with --json.

    PYTHONPATH=python CUDAG_LIBRARY=build/src/libcudag.so \\
        CUDAG_KERNELS_DIR=build/kernels python3 tools/bench/bench_order.py \\
        [--cpu-only] [--iters 200] [--warmup 20] [--rounds 5] \\
        [--same fork_join,llama_decode] [--json F] [GRAPH.yaml ...]

Needs python3-yaml (the rewrite) and numpy (the comparison); exits 77 with
the reason when one is missing.
"""
import argparse
import ctypes
import datetime
import json
import os
import re
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GRAPHS = os.path.join(ROOT, "graphs")
# The keys that make a mapping a node (anything else is a group).
NODE_KEYS = ("kernel", "memset", "memcpy", "gemm", "graph", "if", "while",
             "switch", "host", "event", "capture")
REPLAY_GRAPH = 3                        # cudag_replay's CUDAG_REPLAY_GRAPH


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


try:
    import yaml
except ImportError:
    yaml = None


# ---- the rewrite ----------------------------------------------------------


def strip_nodes(nodes, graph_dir, tmp, done):
    """Removes every `after` from a node map (groups and bodies included),
    in place; child graph files are rewritten into tmp."""
    if not isinstance(nodes, dict):
        return
    for name, node in nodes.items():
        if not isinstance(node, dict):
            continue
        if not any(k in node for k in NODE_KEYS):
            strip_nodes(node, graph_dir, tmp, done)     # a group
            continue
        node.pop("after", None)
        for body in ("then", "else", "body"):
            strip_nodes(node.get(body), graph_dir, tmp, done)
        cases = node.get("cases")
        for body in (cases if isinstance(cases, list) else
                     cases.values() if isinstance(cases, dict) else ()):
            strip_nodes(body, graph_dir, tmp, done)
        if isinstance(node.get("graph"), str):
            node["graph"] = strip_child(
                os.path.join(graph_dir, node["graph"]), tmp, done)


def strip_child(path, tmp, done):
    """A child graph file without its edges, written once into tmp."""
    path = os.path.abspath(path)
    if path not in done:
        with open(path) as f:
            doc = yaml.safe_load(f)
        doc.pop("edges", None)
        strip_nodes(doc.get("nodes"), os.path.dirname(path), tmp, done)
        out = os.path.join(tmp, f"child{len(done)}_{os.path.basename(path)}")
        done[path] = out
        with open(out, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
    return done[path]


def program_text(path, tmp):
    """The text of `path` with `order: program` and no written edge."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc.pop("edges", None)
    doc.pop("order", None)
    out = {}
    for k, v in doc.items():            # `order` right after `cudag`
        out[k] = v
        if k == "cudag":
            out["order"] = "program"
    strip_nodes(out.get("nodes"), os.path.dirname(os.path.abspath(path)),
                tmp, {})
    return yaml.safe_dump(out, sort_keys=False)


# ---- comparing orders -----------------------------------------------------


class Edge:
    def __init__(self, src, dst, kind):
        self.src, self.dst, self.kind = src, dst, kind


def tree_edges(g):
    """Every edge of g's tree (bodies and child graphs too, which
    Graph.edges leaves out), from its DOT text: nodes by full name."""
    names, out = {}, []
    for line in g.dot().splitlines():
        m = re.match(r'\s*(n\d+) \[label="([^"\\]*)', line)
        if m:
            names[m.group(1)] = m.group(2)
            continue
        m = re.match(r'\s*(n\d+) -> (n\d+)(.*)', line)
        if m and "lhead=" not in m.group(3):
            attrs = m.group(3)
            kind = ("programmatic" if 'label="PDL"' in attrs else
                    "launch_order" if 'label="order"' in attrs else "full")
            out.append((m.group(1), m.group(2), kind))
    return [Edge(names[a], names[b], k) for a, b, k in out]


def closure(edges):
    """{node: set of nodes before it} over full and programmatic edges."""
    preds = {}
    for e in edges:
        if e.kind != "launch_order":
            preds.setdefault(e.dst, set()).add(e.src)
    memo = {}

    def before(v):
        if v not in memo:
            memo[v] = set()
            acc = set()
            for p in preds.get(v, ()):
                acc.add(p)
                acc |= before(p)
            memo[v] = acc
        return memo[v]

    sys.setrecursionlimit(100000)
    return {v: before(v) for v in preds}


def pairs(c):
    return {(u, v) for v, us in c.items() for u in us}


def compare(hand, prog):
    """'same', 'more parallel' or 'differs', and the pair counts."""
    a, b = pairs(closure(hand)), pairs(closure(prog))
    verdict = ("same" if a == b else "more parallel" if b < a else "differs")
    return verdict, len(a), len(b), sorted(b - a)[:3], sorted(a - b)[:3]


def edge_set(edges):
    return sorted((e.src, e.dst) for e in edges)


# ---- the GPU part ---------------------------------------------------------


def exec_time(cudag, x, warmup, iters):
    """Per-replay milliseconds of `iters` replays (cudag_exec_time)."""
    lib = cudag._capi.lib
    fn = lib.cudag_exec_time
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint,
                   ctypes.c_uint, ctypes.POINTER(ctypes.c_float),
                   ctypes.c_void_p]
    ms = (ctypes.c_float * iters)()
    err = cudag._capi.cudag_error()
    if fn(x._h, REPLAY_GRAPH, warmup, iters, ms, ctypes.byref(err)):
        raise RuntimeError("cudag_exec_time: " + err.message.decode())
    return list(ms)


def gpu_compare(cudag, hand, prog, args):
    """Bit-for-bit buffers after one replay from equal starts, and timings."""
    import numpy as np
    xh = hand.instantiate()
    xp = prog.instantiate()
    try:
        names = list(hand.buffers)
        xp_start = {}
        for n in names:                 # equal starts, whatever the init
            xp_start[n] = xh.read(n)
            xp.write(n, xp_start[n])
        xh.launch(1)
        xp.launch(1)
        xh.sync()
        xp.sync()
        differ = [n for n in names
                  if xh.read(n).view(np.uint8).tobytes() !=
                  xp.read(n).view(np.uint8).tobytes()]
        control = None
        if differ:                      # is the graph itself deterministic?
            xc = hand.instantiate()
            try:
                for n in names:
                    xc.write(n, xp_start[n])
                xc.launch(1)
                xc.sync()
                control = [n for n in differ
                           if xh.read(n).view(np.uint8).tobytes() !=
                           xc.read(n).view(np.uint8).tobytes()]
            finally:
                xc.close()
        th, tp = [], []
        for _ in range(args.rounds):
            th += exec_time(cudag, xh, args.warmup, args.iters)
            tp += exec_time(cudag, xp, args.warmup, args.iters)
        mh, mp = statistics.median(th), statistics.median(tp)
        return {"buffers": len(names), "differ": differ,
                "differ_by_hand_twice": control,
                "hand_us": mh * 1e3, "program_us": mp * 1e3,
                "ratio": mp / mh if mh else None,
                "device": device_name(cudag, xh)}
    finally:
        xh.close()
        xp.close()


def device_name(cudag, x):
    lib = cudag._capi.lib
    lib.cudag_exec_device_name.restype = ctypes.c_char_p
    lib.cudag_exec_device_name.argtypes = [ctypes.c_void_p]
    return lib.cudag_exec_device_name(x._h).decode()


# ---- main -----------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="*")
    ap.add_argument("--cpu-only", action="store_true")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--same", default="fork_join,llama_decode")
    ap.add_argument("--json")
    args = ap.parse_args()
    if yaml is None:
        skip("python3-yaml is not installed (the rewrite needs it)")
    try:
        import cudag
        import numpy  # noqa: F401
    except ImportError as e:
        skip(f"{e} (set PYTHONPATH=python and CUDAG_LIBRARY)")
    files = args.graphs or sorted(
        os.path.join(GRAPHS, f) for f in os.listdir(GRAPHS)
        if f.endswith(".yaml"))
    same = set(filter(None, args.same.split(",")))
    rows, failed, gpu = [], False, not args.cpu_only
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            name = os.path.splitext(os.path.basename(path))[0]
            row = {"graph": name}
            rows.append(row)
            try:
                hand = cudag.load(path, strict=True)
                prog = cudag.loads(program_text(path, tmp), name=path,
                                   strict=True)
            except cudag.Error as e:
                row["error"] = str(e).splitlines()[0]
                print(f"{name}: does not load: {row['error']}")
                failed = True
                continue
            eh, ep = tree_edges(hand), tree_edges(prog)
            verdict, nh, np_, extra, missing = compare(eh, ep)
            kinds = sum(a.kind != b.kind for a, b in zip(
                sorted(eh, key=lambda e: (e.src, e.dst)),
                sorted(ep, key=lambda e: (e.src, e.dst))))
            row.update(verdict=verdict, edges_hand=len(eh),
                       edges_program=len(ep), ordered_hand=nh,
                       ordered_program=np_)
            if name in same and edge_set(eh) != edge_set(ep):
                row["verdict"] = verdict = "NOT the same edges"
                failed = True
            print(f"{name}: {verdict} (edges {len(eh)} by hand, "
                  f"{len(ep)} inferred; ordered pairs {nh} / {np_}"
                  + (f"; {kinds} of another kind" if edge_set(eh) ==
                     edge_set(ep) and kinds else "") + ")"
                  + (f"; program orders {extra} besides" if extra else "")
                  + (f"; leaves {missing} unordered" if missing else ""))
            if gpu:
                try:
                    row.update(gpu_compare(cudag, hand, prog, args))
                except (cudag.Error, RuntimeError) as e:
                    msg = str(e).splitlines()[0]
                    if "CUDA_ERROR_NO_DEVICE" in msg or "cuInit" in msg or \
                            "no CUDA" in msg or "libcuda" in msg:
                        print(f"no GPU ({msg}): the GPU part is skipped")
                        gpu = False
                    else:
                        row["gpu_error"] = msg
                        failed = True
                        print(f"{name}: GPU: {msg}")
                if row.get("differ"):
                    failed = True
            hand.close()
            prog.close()
    date = datetime.date.today().isoformat()
    devices = sorted({r["device"] for r in rows if r.get("device")})
    print(f"\ndevice: {', '.join(devices) or 'none (CPU part only)'}; "
          f"medians of {args.rounds} x {args.iters} replays each")
    print(f"\n| graph | order | edges by hand | inferred | buffers equal "
          f"| by hand µs | program µs | ratio |  ({date})")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        eq = ("" if "buffers" not in r else
              "all %d" % r["buffers"] if not r["differ"] else
              "NO: " + ", ".join(r["differ"]) +
              " (by hand twice: %s)" % (", ".join(
                  r["differ_by_hand_twice"]) or "equal"))
        t = (lambda k: f"{r[k]:.1f}" if k in r else "")
        print(f"| {r['graph']} | {r.get('verdict', r.get('error', ''))} | "
              f"{r.get('edges_hand', '')} | {r.get('edges_program', '')} | "
              f"{eq} | {t('hand_us')} | {t('program_us')} | "
              f"{('%.3f' % r['ratio']) if r.get('ratio') else ''} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date, "devices": devices, "rows": rows}, f,
                      indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
