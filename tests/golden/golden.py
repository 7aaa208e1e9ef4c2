#!/usr/bin/env python3
"""The CLI's output on every graph in the tree, compared byte for byte.

For each input (graphs/*.yaml and every .yaml under tests/data/), runs
`cudag check`, `cudag dot`, `cudag plan` and `cudag plan --json` from the
source root with the input's relative path, and compares stdout, stderr and
the exit status with tests/data/golden/<input path, '/' as '__'>.txt.  A refactoring must
leave them all as they are; a change that alters a message on purpose
regenerates them, in a commit of its own, with

    python3 tests/golden/golden.py --exe build/tools/cudag --update

(run from the source root after building) and the diff of tests/data/golden/
shows every output the change touched.

Usage: golden.py --exe CUDAG [--root SOURCE_ROOT] [--update]
Exit status: 0 all equal, 1 differences (each named, with a diff), 2 usage.
"""
import argparse
import difflib
import os
import subprocess
import sys

COMMANDS = (["check"], ["dot"], ["plan"], ["plan", "--json"])
INPUT_DIRS = ("graphs", "tests/data")
GOLDEN_DIR = "tests/data/golden"


def inputs(root):
    """Every .yaml under INPUT_DIRS, as sorted relative paths."""
    found = []
    for top in INPUT_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            if rel.startswith(GOLDEN_DIR):
                continue
            found += [os.path.join(rel, f) for f in sorted(filenames)
                      if f.endswith(".yaml")]
    return sorted(found)


def record(exe, root, path):
    """The transcript of the commands on one input.  The build directory,
    which a message may name (an include searched in the shipped kernels'
    directory), is written <build>, so the transcript is the same in any
    build tree."""
    build = os.path.dirname(os.path.dirname(os.path.realpath(exe))) + "/"
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    env["LC_ALL"] = "C"
    out = []
    for cmd in COMMANDS:
        p = subprocess.run([exe] + cmd + [path], cwd=root, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=120)
        out.append("$ cudag %s %s\n" % (" ".join(cmd), path))
        for name, data in (("stdout", p.stdout), ("stderr", p.stderr)):
            text = data.decode("utf-8", "backslashreplace").replace(
                build, "<build>/")
            if text and not text.endswith("\n"):
                text += "\\ no newline at end\n"
            out.append("--- %s\n%s" % (name, text))
        out.append("--- exit %d\n" % p.returncode)
    return "".join(out)


def golden_path(root, path):
    return os.path.join(root, GOLDEN_DIR, path.replace("/", "__") + ".txt")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", required=True, help="the built cudag program")
    ap.add_argument("--root", default=".", help="the source root")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the expected files instead of comparing")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    exe = os.path.abspath(a.exe)
    files = inputs(root)
    if not files:
        print("golden: no inputs under %s" % root, file=sys.stderr)
        return 2
    bad = 0
    wanted = set()
    for path in files:
        got = record(exe, root, path)
        gp = golden_path(root, path)
        wanted.add(os.path.basename(gp))
        if a.update:
            os.makedirs(os.path.dirname(gp), exist_ok=True)
            with open(gp, "w", encoding="utf-8", newline="") as f:
                f.write(got)
            continue
        try:
            with open(gp, encoding="utf-8", newline="") as f:
                want = f.read()
        except FileNotFoundError:
            print("golden: %s: no expected file %s (run with --update)"
                  % (path, os.path.relpath(gp, root)))
            bad += 1
            continue
        if got != want:
            bad += 1
            print("golden: %s: output differs:" % path)
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True),
                os.path.relpath(gp, root), "now"))
    gdir = os.path.join(root, GOLDEN_DIR)
    for stale in sorted(set(os.listdir(gdir)) - wanted):
        if a.update:
            os.remove(os.path.join(gdir, stale))
        else:
            print("golden: %s/%s has no input any more" % (GOLDEN_DIR, stale))
            bad += 1
    if a.update:
        print("golden: wrote %d expected files in %s" % (len(files), GOLDEN_DIR))
        return 0
    print("golden: %d inputs, %d differ" % (len(files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
