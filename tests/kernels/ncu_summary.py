#!/usr/bin/env python3
"""ncu_summary.py — a compact table from Nsight Compute's raw page.

usage: ncu_summary.py RAW.csv

RAW.csv is `ncu -i REPORT --page raw --csv --print-units base` output; several
such exports may be concatenated, each preceded by a line `# label: TEXT`
that tags the results after it (e.g. an older build of the same kernels).
Per profiled launch it prints what limits a memory-bound kernel: duration,
DRAM bytes and bandwidth (and % of peak), L2 hit rate, achieved against
theoretical occupancy with the block limits, registers, issue activity, and
the largest warp stall reasons (cycles per issued instruction), and the
warp instructions executed (millions): when the schedulers are busy, that
count over (SMs x 4 x clock) is the kernel's floor.  "GB/s" is DRAM bytes
over duration, and output still dirty in L2 at the end is not counted.  Metrics a
given ncu version names differently print as "-": the raw CSV beside it
holds everything.  Standard library only, so it runs wherever ncu runs.
"""
import csv
import io
import re
import sys

STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")

# name -> candidate metric names, first present wins
WANT = {
    "dur_ns": ["gpu__time_duration.sum"],
    "dram_pct": ["dram__throughput.avg.pct_of_peak_sustained_elapsed",
                 "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"],
    "mem_pct": ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
    "sm_pct": ["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    "rd": ["dram__bytes_read.sum"],
    "wr": ["dram__bytes_write.sum"],
    "l2hit": ["lts__t_sector_hit_rate.pct"],
    "l1hit": ["l1tex__t_sector_hit_rate.pct"],
    "occ": ["sm__warps_active.avg.pct_of_peak_sustained_active"],
    "occ_th": ["sm__maximum_warps_per_active_cycle_pct"],
    "regs": ["launch__registers_per_thread"],
    "lim_reg": ["launch__occupancy_limit_registers"],
    "lim_smem": ["launch__occupancy_limit_shared_mem"],
    "lim_warp": ["launch__occupancy_limit_warps"],
    "issue": ["smsp__issue_active.avg.pct_of_peak_sustained_active"],
    "elig": ["smsp__warps_eligible.avg.per_cycle_active"],
    "cpi": ["smsp__average_warp_latency_per_inst_issued.ratio",
            "smsp__average_warps_active_per_issue_active.ratio"],
    "xu": ["sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"],
    "inst": ["smsp__inst_executed.sum", "sm__inst_executed.sum"],
    "grid": ["launch__grid_size"],
}


def num(s):
    """A float from an ncu cell ("1,234.5", "n/a" -> None)."""
    if s is None:
        return None
    s = s.strip().replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def blocks(text):
    """(label, rows) for each CSV export in text; rows are dicts."""
    label, buf, out = "", [], []

    def flush():
        if buf:
            rows = list(csv.reader(io.StringIO("".join(buf))))
            if rows:
                head = rows[0]
                for r in rows[1:]:
                    if len(r) != len(head):
                        continue
                    d = dict(zip(head, r))
                    if not d.get("ID", "").strip():  # the units row
                        continue
                    out.append((label, d))
        buf.clear()

    for line in text.splitlines(keepends=True):
        if line.startswith("# label:"):
            flush()
            label = line.split(":", 1)[1].strip()
        elif line.startswith('"ID",'):
            flush()
            buf.append(line)
        elif buf and line.startswith('"'):
            buf.append(line)
        # anything else is one of ncu's own messages
    flush()
    return out


def get(d, key):
    for name in WANT[key]:
        if name in d:
            v = num(d[name])
            if v is not None:
                return v
    return None


def fmt(v, spec, scale=1.0):
    return "-" if v is None else format(v * scale, spec)


def main():
    if len(sys.argv) < 2:
        print("usage: ncu_summary.py RAW.csv", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        res = blocks(f.read())
    if not res:
        print("ncu_summary: no results in", sys.argv[1])
        return 1
    print("kernel                                  dur_us  DRAM_MB  GB/s  DRAM%  SM%  "
          "L2hit%  occ%/th%  regs lim(r/s/w)  issue%  elig  cyc/inst  xu%  Minst  "
          "top stalls (cycles per issued instruction)")
    for label, d in res:
        name = d.get("Kernel Name", "?").strip()
        if label:
            name += " [" + label + "]"
        dur = get(d, "dur_ns")
        rd, wr = get(d, "rd"), get(d, "wr")
        tot = rd + wr if rd is not None and wr is not None else None
        gbs = tot / dur if tot is not None and dur else None  # bytes/ns = GB/s
        stalls = []
        for k, v in d.items():
            m = STALL.match(k)
            if m and m.group(1) != "selected":
                x = num(v)
                if x is not None:
                    stalls.append((x, m.group(1)))
        stalls.sort(reverse=True)
        top = " ".join("%s %.2f" % (n, x) for x, n in stalls[:4]) or "-"
        lim = "/".join(fmt(get(d, k), ".0f") for k in ("lim_reg", "lim_smem", "lim_warp"))
        print("%-38s %7s %8s %5s %6s %4s %7s %5s/%-4s %4s %-11s %6s %5s %8s %4s %6s  %s" % (
            name[:38], fmt(dur, ".1f", 1e-3), fmt(tot, ".1f", 1e-6), fmt(gbs, ".0f"),
            fmt(get(d, "dram_pct"), ".1f"), fmt(get(d, "sm_pct"), ".0f"),
            fmt(get(d, "l2hit"), ".1f"), fmt(get(d, "occ"), ".0f"),
            fmt(get(d, "occ_th"), ".0f"), fmt(get(d, "regs"), ".0f"), lim,
            fmt(get(d, "issue"), ".1f"), fmt(get(d, "elig"), ".2f"),
            fmt(get(d, "cpi"), ".2f"), fmt(get(d, "xu"), ".0f"),
            fmt(get(d, "inst"), ".1f", 1e-6), top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
