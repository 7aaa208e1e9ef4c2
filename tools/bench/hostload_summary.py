#!/usr/bin/env python3
"""Summarise the host-time runs of tools/bench/gpu_all.sh's hostload step.

    hostload_summary.py HOSTLOAD.jsonl [--markdown]

Each line holds one process of `cudag bench --host-repeats` and one of
`handbuilt --repeats` on the same topology; each stage is the median of
the process's loads.  Per case this prints the median over processes of
every stage, cudag's parse + check + build + instantiate over the hand-built
build + instantiate, and parse + check over instantiate.
"""
import json
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    md = "--markdown" in sys.argv[2:]
    cases = {}
    for line in open(sys.argv[1]):
        try:
            r = json.loads(line)
            c, h = r["cudag"]["host_ms"], r["handbuilt"]
            cases.setdefault(r["case"], []).append((r, c, h))
        except (ValueError, KeyError, TypeError):
            print("unreadable:", line[:200])
    if md:
        print("| case | nodes | file bytes | processes | parse + check | build (cudag / hand) "
              "| instantiate (cudag / hand) | total / hand (range) | parse + check / instantiate |")
        print("|---|---|---|---|---|---|---|---|---|")
    for name, runs in cases.items():
        med = statistics.median
        pc = med(c["parse_check"] for _, c, _ in runs)
        b = med(c["build"] for _, c, _ in runs)
        i = med(c["instantiate"] for _, c, _ in runs)
        hb = med(h["build_ms"] for _, _, h in runs)
        hi = med(h["instantiate_ms"] for _, _, h in runs)
        # The ratio per process, then its median: the two programs of one
        # pair ran back to back.
        ratios = [(c["parse_check"] + c["build"] + c["instantiate"]) /
                  (h["build_ms"] + h["instantiate_ms"]) for _, c, h in runs]
        ratio = med(ratios)
        spread = "%.2f–%.2f" % (min(ratios), max(ratios))
        share = med(c["parse_check"] / c["instantiate"] for _, c, _ in runs)
        r0 = runs[0][0]
        if md:
            print("| %s | %d | %d | %d | %.2f ms | %.2f / %.2f ms | %.2f / %.2f ms | %.2f× (%s) | %.0f %% |"
                  % (name, r0["cudag"]["nodes"], r0["bytes"], len(runs), pc, b, hb, i, hi,
                     ratio, spread, 100 * share))
        else:
            print("%-28s n=%6d %8d B x%d  parse+check %8.2f  build %7.2f/%7.2f  "
                  "inst %8.2f/%8.2f ms  total %.2fx (%s)  parse/inst %3.0f%%"
                  % (name, r0["cudag"]["nodes"], r0["bytes"], len(runs), pc, b, hb, i, hi,
                     ratio, spread, 100 * share))


if __name__ == "__main__":
    main()
