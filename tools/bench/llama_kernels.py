#!/usr/bin/env python3
"""Where a Llama decode step's time goes: every kernel of graphs/llama_decode.yaml,
timed by the GPU's own kernel trace (CUPTI, through torch.profiler), with
programmatic edges and with full edges, at one KV length.

Nsight Systems is what the issue names for this; on the machines we measure on
it cannot make a report (/work/.library/device/KINDS.md), and a globaltimer
probe in the kernels (docs/benchmarks.md, the twentieth session) costs the
step 66-105 us.  The CUPTI trace needs no change to the kernels: each kernel's
start and end as the GPU stamps them.  How much the tracing itself costs is
printed (the step timed by CUDA events with and without it).

The graph runs on its own seeded weights (bench_llama.py binds its own), batch
1, CTX = KV + 8 unless -D CTX says otherwise.  For every replay the kernels are
sorted by start and named by their place in
the step (embed, then per layer qkv, attn, o, gu, down, then head, argmax; the
library's kernel names must match those places or the run stops).  Per kind,
medians over layers and replays:

  dur      end - start: with full edges, the kernel alone on the GPU (its
           weights cold: each layer's are its own); with programmatic edges
           it includes the time its blocks sat before griddepcontrol.wait
  gap      start - the previous kernel's end (negative: it started before)
  chain    end - the previous kernel's end: what the kernel adds to the step
           (the chains of a step sum to its span)
  GB/s     the kernel's weight bytes over dur (full edges: the bandwidth it
           reaches alone) or over chain (programmatic edges)

    PYTHONPATH=python CUDAG_LIBRARY=b/src/libcudag.so CUDAG_KERNELS_DIR=b/kernels \\
        python3 tools/bench/llama_kernels.py [--shape 1b|8b] [--kv 128] \\
        [--replays 20] [--warm 20] [-D NAME=VALUE ...] [--json F] [--markdown F]
    python3 tools/bench/llama_kernels.py --self-test      # CPU, no GPU
"""
import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

LAYER = ("qkv", "attn", "o", "gu", "down")
# The library's kernel names that may stand at each place of the step (a
# prefix: the head-size and batch variants share it).
NAMES = {
    "embed": ("llama_embed",),
    "qkv": ("llama_qkv",),
    "attn": ("llama_attn",),
    "o": ("llama_res",),
    "gu": ("llama_gateup",),
    "down": ("llama_res",),
    "head": ("llama_head",),
    "argmax": ("llama_argmax",),
}
KINDS = ("embed",) + LAYER + ("head", "argmax")


class TraceError(Exception):
    pass


def places(n_kernels, L):
    """The step's kernels in launch order for n_kernels of them: L layers of
    LAYER, then head and argmax, with an embedding gather first where the
    step has one (the 1B step gathers in its first QKV: no embed node)."""
    body = [k for _ in range(L) for k in LAYER] + ["head", "argmax"]
    if n_kernels == len(body):
        return body
    if n_kernels == len(body) + 1:
        return ["embed"] + body
    raise TraceError(f"a step of {L} layers has {len(body)} or {len(body) + 1} "
                     f"kernels; the trace has {n_kernels} in a replay")


def split_replays(kernels, per_replay):
    """kernels: (name, start_ns, end_ns) of every kernel the trace holds,
    any order.  Sorted by start and cut into replays of per_replay each."""
    ks = sorted(kernels, key=lambda k: k[1])
    if not ks or per_replay < 1 or len(ks) % per_replay:
        raise TraceError(f"{len(ks)} kernels traced, not a whole number of "
                         f"replays of {per_replay}")
    return [ks[i:i + per_replay] for i in range(0, len(ks), per_replay)]


def label(replay, L):
    """Each kernel of one replay with its place; a kernel whose name does not
    belong at its place stops the run (the trace is not the step)."""
    out = []
    for (name, s, e), p in zip(replay, places(len(replay), L)):
        if not name.startswith(NAMES[p]):
            raise TraceError(f"kernel {len(out)} of a replay is {name}, "
                             f"where the step has its {p} ({NAMES[p][0]}...)")
        out.append((p, name, s, e))
    return out


def analyse(replays, L):
    """Per kind: medians of dur, gap and chain (ns) over every kernel of that
    kind in every replay, how many a step, and each replay's span (first start
    to last end) and sum of chains."""
    rows = {k: {"dur": [], "gap": [], "chain": [], "names": set()} for k in KINDS}
    spans = []
    for rep in replays:
        lab = label(rep, L)
        spans.append(lab[-1][3] - lab[0][2])
        prev_end = None
        for p, name, s, e in lab:
            r = rows[p]
            r["names"].add(name)
            r["dur"].append(e - s)
            if prev_end is not None:
                r["gap"].append(s - prev_end)
                r["chain"].append(e - prev_end)
            else:
                r["chain"].append(e - s)
            prev_end = e
    n = len(replays)
    res = {}
    for k, r in rows.items():
        if not r["dur"]:
            continue
        per = len(r["dur"]) // n
        res[k] = {
            "per_step": per,
            "names": sorted(r["names"]),
            "dur_ns": statistics.median(r["dur"]),
            "gap_ns": statistics.median(r["gap"]) if r["gap"] else None,
            "chain_ns": statistics.median(r["chain"]),
            "chain_sum_ns": sum(r["chain"]) / n,
            "dur_sum_ns": sum(r["dur"]) / n,
        }
    return res, spans


def weight_bytes(d, kv):
    """What each kind reads that no kernel before it wrote, per launch, batch
    1: weights (bf16) and, for the attention, the cache up to kv positions."""
    qkv = (d["NH"] + 2 * d["NKV"]) * d["HD"]
    return {
        "embed": d["H"] * 2,
        "qkv": qkv * d["H"] * 2,
        "attn": 2 * kv * d["NKV"] * d["HD"] * 2,
        "o": d["H"] * d["NH"] * d["HD"] * 2,
        "gu": 2 * d["F"] * d["H"] * 2,
        "down": d["H"] * d["F"] * 2,
        "head": d["V"] * d["H"] * 2,
        "argmax": d["V"] * 2,
    }


def table(title, res, nbytes, copy_bw, span_us, use):
    """A markdown table of one mode; `use` the time the GB/s is over."""
    lines = [f"**{title}** (step span {span_us:.1f} µs, median of the replays)", "",
             "| kernel | a step | dur µs | gap µs | chain µs | chain × n µs | GB/s | of the copy |",
             "| --- | --: | --: | --: | --: | --: | --: | --: |"]
    for k in KINDS:
        r = res.get(k)
        if not r:
            continue
        t = r[use + "_ns"]
        bw = nbytes[k] / t if t > 0 else float("nan")   # bytes / ns = GB/s
        gap = "" if r["gap_ns"] is None else f"{r['gap_ns'] / 1e3:.2f}"
        lines.append(f"| {k} (`{', '.join(r['names'])}`) | {r['per_step']} | "
                     f"{r['dur_ns'] / 1e3:.2f} | {gap} | {r['chain_ns'] / 1e3:.2f} | "
                     f"{r['chain_sum_ns'] / 1e3:.1f} | {bw:.0f} | "
                     f"{100 * bw / copy_bw:.0f} % |")
    return "\n".join(lines)


# ---- the GPU run --------------------------------------------------------------

def trace_kernels(prof_json):
    """(name, start_ns, end_ns) of each kernel in a chrome trace torch.profiler
    exported (ts and dur in µs, fractional)."""
    with open(prof_json) as f:
        ev = json.load(f)
    ev = ev.get("traceEvents", ev)
    out = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            s = round(float(e["ts"]) * 1e3)
            out.append((e["name"], s, s + round(float(e["dur"]) * 1e3)))
    return out


def run(a):
    import tempfile
    import torch
    from torch.profiler import ProfilerActivity, profile
    sys.path.insert(0, HERE)
    import bench_llama as bl

    cudag = bl.import_cudag(a.build)
    d = dict(bl.SHAPES[a.shape])
    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    stream = torch.cuda.current_stream()
    defines = dict(L=d["L"], H=d["H"], F=d["F"], NH=d["NH"], NKV=d["NKV"],
                   HD=d["HD"], V=d["V"], CTX=a.kv + 8, B=1, ROPE_FACTOR=d["RF"],
                   SMS=props.multi_processor_count)
    for kv in a.define:
        k, _, v = kv.partition("=")
        defines[k] = int(v)
    pos = torch.zeros(1, dtype=torch.int32, device="cuda")
    tok = torch.ones(1, dtype=torch.int32, device="cuda")
    g = cudag.load(a.graph, defines=defines)
    out = {"device": torch.cuda.get_device_name(0),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "shape": a.shape, "kv": a.kv, "replays": a.replays, "defines": defines,
           "torch": torch.__version__}
    bw = bl.copy_bandwidth() / 1e9
    out["copy_GBps"] = bw
    nbytes = weight_bytes(d, a.kv)

    def at():
        # The step at KV length kv: pos = kv - 1, so it attends over kv
        # positions (the cache below it is whatever the warm-up left).
        pos.fill_(a.kv - 1)

    try:
        for mode, no_pdl in (("programmatic", False), ("full", True)):
            x = g.instantiate(stream=stream.cuda_stream, bind=dict(pos=pos, tok=tok),
                              no_pdl=no_pdl)
            try:
                plain = bl.timed(x.launch, a.replays * 5, a.warm, at)["median"]
                with tempfile.TemporaryDirectory() as td:
                    path = os.path.join(td, "trace.json")
                    # Warmed by the replays above: every traced replay is timed.
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        traced = bl.timed(x.launch, a.replays, 0, at)["median"]
                    prof.export_chrome_trace(path)
                    ks = [k for k in trace_kernels(path) if k[0].startswith("llama_")]
            finally:
                x.close()
            reps = split_replays(ks, len(ks) // a.replays)
            res, spans = analyse(reps, d["L"])
            span = statistics.median(spans) / 1e3
            out[mode] = {"events_us": plain, "events_traced_us": traced,
                         "span_us": span, "kinds": res}
            log(f"{mode}: {plain:.1f} µs a step by events, {traced:.1f} traced, "
                f"span {span:.1f}")
    finally:
        g.close()
    out["bytes"] = nbytes
    extra = "".join(f", -D {kv}" for kv in a.define)
    md = [f"Device: {out['device']}, {out['date']}; {a.shape}, batch 1, KV {a.kv}{extra}; "
          f"copy {bw:.0f} GB/s (1 GiB, read + written); torch {out['torch']}.", ""]
    for mode, use in (("full", "dur"), ("programmatic", "chain")):
        m = out[mode]
        md.append(table(f"{mode} edges: {m['events_us']:.1f} µs a step by CUDA "
                        f"events, {m['events_traced_us']:.1f} while traced",
                        m["kinds"], nbytes, bw, m["span_us"], use))
        md.append("")
    text = "\n".join(md)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=list)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 0


def log(*m):
    print(*m, file=sys.stderr, flush=True)


# ---- CPU self-test ------------------------------------------------------------

def self_test():
    """The trace's analysis on made-up replays: places, labels, medians, and
    the errors for a trace that is not the step."""
    L = 2
    def step(t0, names=None, embed=False):
        ks, t = [], t0
        seq = (["embed"] if embed else []) + [k for _ in range(L) for k in LAYER] + ["head", "argmax"]
        for i, p in enumerate(seq):
            name = (names or {}).get(i, NAMES[p][0] + "_bf16")
            # each kernel starts 1 µs before the previous ends, lasts 3 (head 10)
            dur = 10_000 if p == "head" else 3_000
            s = t - 1_000 if i else t
            ks.append((name, s, s + dur))
            t = s + dur
        return ks, t
    ks, t = step(0)
    ks2, _ = step(t + 50_000)
    reps = split_replays(list(reversed(ks + ks2)), len(ks))
    assert len(reps) == 2 and reps[0][0][1] == 0, reps[0][0]
    res, spans = analyse(reps, L)
    assert res["qkv"]["per_step"] == L and res["head"]["per_step"] == 1
    assert res["o"]["names"] == ["llama_res_bf16"] and "embed" not in res
    assert res["attn"]["gap_ns"] == -1_000 and res["attn"]["chain_ns"] == 2_000
    assert res["head"]["chain_ns"] == 9_000 and res["head"]["dur_ns"] == 10_000
    # the first kernel's chain is its duration; chains sum to the span
    assert res["qkv"]["chain_sum_ns"] == 3_000 + 2_000, res["qkv"]
    total = sum(r["chain_sum_ns"] for r in res.values())
    assert total == spans[0] == spans[1], (total, spans)
    e, _ = step(0, embed=True)
    res, _ = analyse(split_replays(e, len(e)), L)
    assert res["embed"]["per_step"] == 1 and res["embed"]["chain_ns"] == 3_000
    bad, _ = step(0, names={2: "llama_gateup_bf16"})
    try:
        analyse([sorted(bad, key=lambda k: k[1])], L)
        raise AssertionError("a gate/up where the output projection stands passed")
    except TraceError as x:
        assert "kernel 2 of a replay is llama_gateup_bf16" in str(x), x
    for n in (len(ks) - 1, len(ks) + 2):
        try:
            places(n, L)
            raise AssertionError(f"{n} kernels taken for a step")
        except TraceError as x:
            assert "has 12 or 13 kernels" in str(x), x
    try:
        split_replays(ks[:-1] + ks2, len(ks))
        raise AssertionError("a replay short of a kernel passed")
    except TraceError as x:
        assert "not a whole number" in str(x), x
    nb = weight_bytes(dict(L=16, H=2048, F=8192, NH=32, NKV=8, HD=64, V=128256), 128)
    assert nb["qkv"] == 3072 * 2048 * 2 and nb["gu"] == 2 * 8192 * 2048 * 2
    assert nb["attn"] == 2 * 128 * 8 * 64 * 2 and nb["head"] == 128256 * 2048 * 2
    md = table("t", analyse(reps, L)[0], weight_bytes(dict(L=2, H=256, F=512, NH=4,
               NKV=2, HD=64, V=1000), 16), 3000.0, 1.0, "dur")
    assert "| qkv (`llama_qkv_bf16`) | 2 | 3.00 | -1.00 | 2.50 | 5.0 |" in md, md
    print("llama_kernels self-test: OK")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--build", default=None, help="a meson build tree (libcudag, kernels)")
    p.add_argument("--graph", default=os.path.join(ROOT, "graphs", "llama_decode.yaml"))
    p.add_argument("--shape", choices=("1b", "8b"), default="1b")
    p.add_argument("--kv", type=int, default=128)
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--warm", type=int, default=20)
    p.add_argument("-D", "--define", action="append", default=[],
                   help="K=V: a graph variable (an integer), as cudag -D")
    p.add_argument("--json")
    p.add_argument("--markdown")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if a.kv < 1 or a.replays < 1:
        p.error("--kv and --replays must be at least 1")
    for kv in a.define:
        k, eq, v = kv.partition("=")
        if not k or not eq or not v.lstrip("-").isdigit():
            p.error(f"-D {kv}: expected NAME=INTEGER")
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
