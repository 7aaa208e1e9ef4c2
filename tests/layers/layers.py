#!/usr/bin/env python3
"""Calls go down: no loop in "who calls whom" over the library's objects.

Reads `nm` of the library (a static archive, one member per source file),
finds which object defines each global cudag_/cudag__ symbol and which
objects use it, and fails if the "calls" graph between source files has a
cycle (two files calling each other, or a longer loop), naming the files and
the symbols that close it.  A reference through data counts as a call: a
table that names a function ties its file to the function's.

    layers.py [--nm NM] LIBRARY.a         check (exit 0 clean, 1 loops)
    layers.py --print [--nm NM] LIBRARY.a print the layers, lowest first
    layers.py --self-test                 check the checker on made-up input

docs/architecture.md shows the layers this prints.
"""
import argparse
import subprocess
import sys


def parse_nm(text):
    """{object: (defined set, used set)} from `nm` output of an archive."""
    objs = {}
    cur = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.endswith(":") and " " not in line:
            cur = line[:-1]
            if cur.endswith(".o"):
                cur = cur[:-2]
            if cur.endswith(".c"):
                cur = cur[:-2]
            objs.setdefault(cur, (set(), set()))
            continue
        parts = line.split()
        if cur is None or not parts[-1].startswith("cudag"):
            continue
        if len(parts) == 2 and parts[0] == "U":
            objs[cur][1].add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVWG":
            objs[cur][0].add(parts[2])
    return objs


def call_graph(objs):
    """{caller: {callee: [symbols]}} between distinct objects."""
    owner = {}
    for o, (defs, _) in objs.items():
        for s in defs:
            owner[s] = o
    calls = {o: {} for o in objs}
    for o, (_, uses) in objs.items():
        for s in sorted(uses):
            t = owner.get(s)
            if t is not None and t != o:
                calls[o].setdefault(t, []).append(s)
    return calls


def cycles(calls):
    """The strongly connected components of more than one file (Tarjan,
    iterative), each sorted, in sorted order."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(calls):
        if root in index:
            continue
        work = [(root, iter(sorted(calls[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(calls[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def layers(calls):
    """Files by layer: 0 calls nothing here, n calls only layers below n."""
    level = {}

    def depth(o, seen=()):
        if o in level:
            return level[o]
        d = 0
        for t in calls[o]:
            if t not in seen:
                d = max(d, depth(t, seen + (o,)) + 1)
        level[o] = d
        return d

    for o in calls:
        depth(o)
    by = {}
    for o, d in level.items():
        by.setdefault(d, []).append(o)
    return [sorted(by[d]) for d in sorted(by)]


def report(calls):
    found = cycles(calls)
    for comp in found:
        print("layers: loop between %s:" % ", ".join(f + ".c" for f in comp))
        for a in comp:
            for b in comp:
                if b in calls[a]:
                    print("  %s.c calls %s.c: %s"
                          % (a, b, ", ".join(calls[a][b])))
    return found


SELF_TEST = """
a.c.o:
0000 T cudag__a
                 U cudag__b
b.c.o:
0000 T cudag__b
                 U cudag__c
                 U cudag_free
c.c.o:
0000 T cudag__c
0000 D cudag__table
                 U cudag__a
d.c.o:
0000 T cudag_free
e.c.o:
                 U cudag__table
"""


def self_test():
    calls = call_graph(parse_nm(SELF_TEST))
    assert calls["a"] == {"b": ["cudag__b"]}, calls
    assert calls["e"] == {"c": ["cudag__table"]}, calls
    assert cycles(calls) == [["a", "b", "c"]], cycles(calls)
    # Cutting the loop (c no longer calls a) leaves a clean order.
    ok = call_graph(parse_nm(SELF_TEST.replace("U cudag__a", "U cudag__x")))
    assert cycles(ok) == [], cycles(ok)
    assert layers(ok) == [["c", "d"], ["b", "e"], ["a"]], layers(ok)
    # Two files calling each other are a loop too.
    two = "x.c.o:\n0 T cudag__x\n  U cudag__y\ny.c.o:\n0 T cudag__y\n  U cudag__x\n"
    assert cycles(call_graph(parse_nm(two))) == [["x", "y"]]
    print("layers: self-test passed (a loop of three and of two found, "
          "a clean graph accepted)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("library", nargs="?")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--print", action="store_true", dest="show")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.library:
        ap.error("a library is needed")
    text = subprocess.run([a.nm, a.library], check=True, capture_output=True,
                          text=True).stdout
    calls = call_graph(parse_nm(text))
    if len(calls) < 2:
        print("layers: %s has no objects to compare" % a.library)
        return 1
    found = report(calls)
    if a.show and not found:
        for i, files in enumerate(layers(calls)):
            print("%d: %s" % (i, " ".join(f + ".c" for f in files)))
        print()
        for o in sorted(calls):
            print("%s.c -> %s" % (o, " ".join(
                t + ".c" for t in sorted(calls[o])) or "(nothing)"))
    if found:
        return 1
    print("layers: %d files, no loop" % len(calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
