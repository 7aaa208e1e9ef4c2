#!/usr/bin/env python3
"""Compare every mode of `cudag bench` with the same graph replayed alone.

    bench_pairs.py BENCH.jsonl [--limit PERCENT] [--markdown]

Reads the JSON lines of tools/bench/gpu_all.sh's bench step, where each case holds
`cudag bench --json` and, each in a process of its own, `cudag run --no-pdl`,
`cudag run`, `tools/bench/handbuilt --no-pdl` and `tools/bench/handbuilt`.  The pairs:
mode 3 (every edge full) against `run --no-pdl` and `handbuilt --no-pdl`;
mode 4 (as declared) against `run` and `handbuilt`.  Prints one row per case
(replay medians in µs), one FLAG line per pair further apart than the limit
(default 3 %), and a last line with the count.  Each FLAG line also gives
how far apart the two programs that replay the graph alone are: where they
differ by more than the limit themselves (graphs with many branches, whose
replay time changes from one process to the next), one process per program
cannot resolve the pair.  The last column is `cudag run`'s host time to
issue one replay; where it is as long as the replay, the host's launch call
bounds a loop of replays (the case is marked "host-bound").  Cases timed
behind a gate (--gate, every program) compare the device's times; a case
timed without it that is host-bound compares the host's launch calls,
which move from one second to the next, so its pairs are shown but not
flagged.  Exits 0 either way: this is a measurement, not a test.
"""
import argparse
import json

PAIRS = [("graph_full", "run_nopdl", "mode 3", "run --no-pdl"),
         ("graph_full", "handbuilt_nopdl", "mode 3", "handbuilt --no-pdl"),
         ("graph", "run", "mode 4", "run"),
         ("graph", "handbuilt", "mode 4", "handbuilt")]
# The other program that replays the same graph alone.
PEER = {"run_nopdl": "handbuilt_nopdl", "handbuilt_nopdl": "run_nopdl",
        "run": "handbuilt", "handbuilt": "run"}
NAMES = {"run_nopdl": "run --no-pdl", "handbuilt_nopdl": "handbuilt --no-pdl",
         "run": "run", "handbuilt": "handbuilt"}
COLUMNS = [("mode 3", "graph_full", None), ("run --no-pdl", None, "run_nopdl"),
           ("hand --no-pdl", None, "handbuilt_nopdl"), ("mode 4", "graph", None),
           ("run", None, "run"), ("hand", None, "handbuilt")]


def alone(r, key):
    """Replay median of a program run alone, or None."""
    v = r.get(key)
    try:
        return float(v["replay_us"]["median"])
    except (TypeError, KeyError, ValueError):
        return None


def rows(path):
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            print("unreadable:", line[:200])
            continue
        if isinstance(r.get("cudag"), dict) and "modes" in r["cudag"]:
            yield r


def launch(r):
    """`cudag run`'s host time to issue one replay (µs), or None."""
    v = r.get("run")
    return v.get("launch_host_us") if isinstance(v, dict) else None


def host_bound(r):
    lu, rm = launch(r), alone(r, "run")
    return lu is not None and rm is not None and lu >= 0.8 * rm


def gated(r):
    return bool(r["cudag"].get("gated"))


def fmt(v):
    return "—" if v is None else ("%.1f" % v if v < 10000 else "%.0f" % v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--limit", type=float, default=3.0, help="percent (default 3)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    flags, compared, unresolved = [], 0, 0
    heads = [c for c, _, _ in COLUMNS]
    if a.markdown:
        print("| case | nodes | " + " | ".join(heads)
              + " | worst pair | launch (host) |")
        print("|---" * (len(heads) + 4) + "|")
    else:
        print("%-28s %7s " % ("case", "nodes") + " ".join("%13s" % h for h in heads)
              + "  worst pair  launch (host)")
    host_timed = []
    for r in rows(a.results):
        if all(alone(r, k) is None for k in PEER):
            continue            # a case with nothing replayed alone
        modes = r["cudag"]["modes"]
        vals = [modes[m]["median_us"] if m else alone(r, k) for _, m, k in COLUMNS]
        worst = None
        loop = not gated(r) and host_bound(r)
        if loop:
            host_timed.append(r["case"])
        for mode, key, mname, kname in PAIRS:
            b, o = modes[mode]["median_us"], alone(r, key)
            if o is None or o <= 0:
                continue
            compared += 1
            d = 100.0 * (b - o) / o
            if worst is None or abs(d) > abs(worst):
                worst = d
            if loop:
                compared -= 1
            elif abs(d) > a.limit:
                line = ("FLAG %s: %s %.1f µs vs %s %.1f µs (%+.1f %%)"
                        % (r["case"], mname, b, kname, o, d))
                if host_bound(r):
                    line += "; host-bound"
                p = alone(r, PEER[key])
                if p:
                    spread = 100.0 * (max(o, p) / min(o, p) - 1)
                    line += "; alone, %s and %s are %.1f %% apart" % (
                        NAMES[key], NAMES[PEER[key]], spread)
                    unresolved += spread > a.limit
                flags.append(line)
        w = "—" if worst is None else "%+.1f %%" % worst
        lu = fmt(launch(r)) + (" host-bound" if host_bound(r) else "")
        if not gated(r):
            lu += ", not gated"
        if loop:
            w += " (host's)"
        if a.markdown:
            print("| %s | %d | %s | %s | %s |" % (
                r["case"], r["cudag"]["nodes"],
                " | ".join(fmt(v) for v in vals), w, lu))
        else:
            print("%-28s %7d " % (r["case"], r["cudag"]["nodes"])
                  + " ".join("%13s" % fmt(v) for v in vals) + "  " + w
                  + "  " + lu)
    for f in flags:
        print(f)
    if host_timed:
        print("not compared (timed without the gate, at the host's pace): "
              + ", ".join(host_timed))
    print("pairs compared: %d; more than %g %% apart: %d%s"
          % (compared, a.limit, len(flags),
             " (FLAG lines above; in %d of them the two programs alone are "
             "as far apart themselves)" % unresolved if flags else ""))


if __name__ == "__main__":
    main()
