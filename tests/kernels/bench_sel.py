#!/usr/bin/env python3
"""bench_sel.py — a side-by-side table of two bench_kernels JSON files.

usage: bench_sel.py NEW.json [OLD.json]

NEW.json and OLD.json come from build/tools/bench_kernels (usually run with
--only, in the same call, OLD with --kernels pointing at an earlier build's
fatbin).  Prints per kernel, size and row width: GB/s and % of the copy
bandwidth measured in that run, and the old figures with the change in %.
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    rows = {}
    for k in d.get("kernels", []):
        rows[(k["kernel"], k["mib"], k["cols"], k["grid_policy"])] = k
    return d, rows


def main():
    if len(sys.argv) < 2:
        print("usage: bench_sel.py NEW.json [OLD.json]", file=sys.stderr)
        return 2
    new, nrows = load(sys.argv[1])
    orows = load(sys.argv[2])[1] if len(sys.argv) > 2 and sys.argv[2] else {}
    print("# %s, %s; copy GB/s: %s" % (
        new.get("device"), new.get("date"),
        ", ".join("%g MiB %.0f" % (c["mib"], c["gbps"]) for c in new.get("copy", []))))
    print("%-38s %6s %6s %7s %6s %9s %6s %7s" % (
        "kernel", "MiB", "cols", "GB/s", "%copy", "old GB/s", "%copy", "change"))
    for key in sorted(nrows, key=lambda k: (k[0], k[2], k[1])):
        k = nrows[key]
        line = "%-38s %6g %6d %7.0f %5.1f%%" % (
            k["kernel"], k["mib"], k["cols"], k["gbps"], 100 * k["gbps"] / k["copy_gbps"])
        o = orows.get(key)
        if o:
            line += " %9.0f %5.1f%% %+6.1f%%" % (
                o["gbps"], 100 * o["gbps"] / o["copy_gbps"], 100 * (k["gbps"] / o["gbps"] - 1))
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
