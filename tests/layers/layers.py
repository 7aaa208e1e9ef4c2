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
import contextlib
import io
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile


def parse_nm(text, paths=None):
    """{object: (defined set, used set)} from `nm` output of an archive.
    An object is named by its source file ("util.c"); with `paths` (from
    source_paths) a member such as "front_load.c.o" becomes "front/load.c"."""
    objs = {}
    cur = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.endswith(":") and " " not in line:
            cur = line[:-1]
            if cur.endswith(".o"):
                cur = cur[:-2]
            if paths:
                cur = paths.get(cur, cur)
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


def source_files(src):
    """Every .c and .h below src, as paths relative to it with "/"."""
    out = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(dirpath, f), src)
                out.append(rel.replace(os.sep, "/"))
    return out


def source_paths(files):
    """{archive member stem: path}: meson names the object of front/load.c
    "front_load.c.o", so a member maps back by its path with "/" -> "_"."""
    paths = {}
    for f in files:
        if f.endswith(".c"):
            key = f.replace("/", "_")
            if key in paths:
                raise SystemExit("layers: %s and %s have the same object name"
                                 % (paths[key], f))
            paths[key] = f
    return paths


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def include_graph(src, files):
    """{file: {file: ['#include "x" (file:line)']}} from every quoted
    include below src, resolved as the compiler does with -I src: first
    beside the including file, then from src.  Includes that resolve to no
    file below src (cudag.h, system and generated headers) are left out.

    A header is a file of its own, not one with its .c: what a file takes
    from a .c's functions shows in nm, and kinds/kind.h (the contract every
    kind includes) and kinds/kind.c (the table that names every kind) are
    the bottom and the top of their folder, not one room.  So a loop
    through a header is a loop of headers; what the includes add above
    all is the arrows between folders."""
    have = set(files)
    incs = {}
    for f in files:
        a = f
        incs.setdefault(a, {})
        with open(os.path.join(src, f), encoding="utf-8",
                  errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                near = posixpath.normpath(
                    posixpath.join(posixpath.dirname(f), m.group(1)))
                top = posixpath.normpath(m.group(1))
                t = near if near in have else top if top in have else None
                if t is None:
                    continue
                b = t
                incs.setdefault(b, {})
                if b != a:
                    incs[a].setdefault(b, []).append(
                        '#include "%s" (%s:%d)' % (m.group(1), f, n))
    return incs


def merge(calls, incs):
    """Calls and includes in one graph, every room a node."""
    out = {o: {t: list(w) for t, w in calls[o].items()} for o in calls}
    for a, ts in incs.items():
        out.setdefault(a, {})
        for b, why in ts.items():
            out.setdefault(b, {})
            out[a].setdefault(b, []).extend(why)
    return out


def folder(f):
    d = posixpath.dirname(f)
    return d + "/" if d else "./"


def folder_graph(graph):
    """The same graph with every file replaced by its folder: {folder:
    {folder: ["a -> b: why", ...]}}."""
    out = {}
    for a, ts in graph.items():
        fa = folder(a)
        out.setdefault(fa, {})
        for b, why in ts.items():
            fb = folder(b)
            out.setdefault(fb, {})
            if fa != fb:
                out[fa].setdefault(fb, []).append(
                    "%s -> %s: %s" % (a, b, ", ".join(why)))
    return out


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


def report(graph, what="files"):
    """Prints every loop of graph, with the arrows that close it; returns
    the loops."""
    found = cycles(graph)
    for comp in found:
        print("layers: loop between %s %s:" % (what, ", ".join(comp)))
        for a in comp:
            for b in comp:
                if b in graph[a]:
                    if what == "files":
                        print("  %s -> %s: %s"
                              % (a, b, ", ".join(graph[a][b])))
                    else:
                        for why in graph[a][b]:
                            print("  %s" % why)
    return found


def drop_allowed(graph, allow):
    """Removes the arrows "a -> b" of allow from graph; returns those of
    them that are not in it (an allowance outlives its arrow: say so, so
    that the line goes)."""
    stale = []
    for arrow in allow:
        a, _, b = (x.strip() for x in arrow.partition("->"))
        if b in graph.get(a, {}):
            del graph[a][b]
        else:
            stale.append(arrow)
    return stale


def check(nm_text, src=None, show=False, allow=()):
    """Reads the objects (and with src the includes), reports loops between
    files and between folders, prints the layers with show; returns the
    exit status and the number of files."""
    files = source_files(src) if src else []
    objs = parse_nm(nm_text, source_paths(files) if src else None)
    graph = call_graph(objs)
    if src:
        graph = merge(graph, include_graph(src, files))
    if len(graph) < 2:
        return None, 0
    stale = drop_allowed(graph, allow)
    for arrow in stale:
        print("layers: --allow '%s': no such arrow any more; remove the "
              "allowance" % arrow)
    found = report(graph) + stale
    folders = folder_graph(graph) if src else None
    if folders is not None:
        found += report(folders, "folders")
    if show and not found:
        for i, names in enumerate(layers(graph)):
            print("%d: %s" % (i, " ".join(names)))
        print()
        for o in sorted(graph):
            print("%s -> %s" % (o, " ".join(sorted(graph[o])) or "(nothing)"))
        if folders is not None:
            print()
            print("folders, lowest first:")
            for i, names in enumerate(layers(folders)):
                print("%d: %s" % (i, " ".join(names)))
    return (1 if found else 0), len(graph)


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

# A tree for --src: its files acyclic, but x/ -> y/ -> x/ (x/a.c calls and
# includes y/, y/b.c calls x/c.c); and an include loop, p/a.h <-> p/b.h.
TREE = {
    "x/a.c": '#include "x/a.h"\n#include "y/b.h"\n#include <stdio.h>\n',
    "x/a.h": '#include "c.h"\n#include "cudag.h"\n',
    "x/c.c": '#include "c.h"\n',
    "x/c.h": "",
    "y/b.c": '#include "b.h"\n',
    "y/b.h": '#include "../x/c.h"\n',
    "p/a.c": '#include "a.h"\n',
    "p/a.h": '#include "b.h"\n',
    "p/b.c": '#include "b.h"\n',
    "p/b.h": '#include "a.h"\n',
}
TREE_NM = """
x_a.c.o:
0000 T cudag__xa
                 U cudag__yb
y_b.c.o:
0000 T cudag__yb
                 U cudag__xc
x_c.c.o:
0000 T cudag__xc
p_a.c.o:
0000 T cudag__pa
p_b.c.o:
0000 T cudag__pb
                 U cudag__pa
"""


def write_tree(tmp, tree):
    for f, text in tree.items():
        os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
        with open(os.path.join(tmp, f), "w", encoding="utf-8") as fh:
            fh.write(text)


def self_test_src():
    """--src on a tree made in a temporary directory."""
    tmp = tempfile.mkdtemp(prefix="layers-")
    try:
        write_tree(tmp, TREE)
        files = source_files(tmp)
        paths = source_paths(files)
        assert paths["x_a.c"] == "x/a.c", paths
        objs = parse_nm(TREE_NM, paths)
        assert sorted(objs) == ["p/a.c", "p/b.c", "x/a.c", "x/c.c", "y/b.c"]
        incs = include_graph(tmp, files)
        # Beside the including file first, then from the root; cudag.h and
        # <stdio.h> are not below it.
        assert sorted(incs["x/a.c"]) == ["x/a.h", "y/b.h"], incs["x/a.c"]
        assert incs["x/a.h"] == {"x/c.h": ['#include "c.h" (x/a.h:1)']}
        assert incs["y/b.h"] == {"x/c.h": [
            '#include "../x/c.h" (y/b.h:1)']}, incs["y/b.h"]
        graph = merge(call_graph(objs), incs)
        assert graph["x/a.c"]["y/b.c"] == ["cudag__yb"], graph["x/a.c"]
        # The include loop is found; the files of x/ and y/ are acyclic.
        assert cycles(graph) == [["p/a.h", "p/b.h"]], cycles(graph)
        # The folder loop is found although no file loop crosses folders.
        folders = folder_graph(graph)
        assert cycles(folders) == [["x/", "y/"]], cycles(folders)
        assert folders["y/"]["x/"] == ["y/b.c -> x/c.c: cudag__xc",
                                       'y/b.h -> x/c.h: #include "../x/c.h" '
                                       "(y/b.h:1)"], folders["y/"]
        # An include alone closes a folder loop too.
        status, _ = check(TREE_NM.replace("U cudag__xc", "U cudag__none"),
                          tmp)
        assert status == 1, status
        # Without the include loop and the arrows back up, the tree is clean.
        write_tree(tmp, {"p/b.h": "", "y/b.h": ""})
        clean = TREE_NM.replace("U cudag__xc", "U cudag__none")
        files = source_files(tmp)
        graph = merge(call_graph(parse_nm(clean, source_paths(files))),
                      include_graph(tmp, files))
        assert cycles(graph) == [], cycles(graph)
        folders = folder_graph(graph)
        assert cycles(folders) == [], cycles(folders)
        assert layers(folders) == [["p/", "y/"], ["x/"]], layers(folders)
        assert check(clean, tmp)[0] == 0
        assert check(TREE_NM, tmp)[0] == 1
        # Allowing the arrow back up accepts the tree; an allowance with no
        # such arrow fails.
        assert check(TREE_NM, tmp, allow=["y/b.c -> x/c.c"])[0] == 0
        assert check(clean, tmp, allow=["y/b.c -> x/c.c"])[0] == 1
    finally:
        shutil.rmtree(tmp)


def self_test():
    calls = call_graph(parse_nm(SELF_TEST))
    assert calls["a.c"] == {"b.c": ["cudag__b"]}, calls
    assert calls["e.c"] == {"c.c": ["cudag__table"]}, calls
    assert cycles(calls) == [["a.c", "b.c", "c.c"]], cycles(calls)
    # Cutting the loop (c no longer calls a) leaves a clean order.
    ok = call_graph(parse_nm(SELF_TEST.replace("U cudag__a", "U cudag__x")))
    assert cycles(ok) == [], cycles(ok)
    assert layers(ok) == [["c.c", "d.c"], ["b.c", "e.c"], ["a.c"]], layers(ok)
    # Two files calling each other are a loop too.
    two = "x.c.o:\n0 T cudag__x\n  U cudag__y\ny.c.o:\n0 T cudag__y\n  U cudag__x\n"
    assert cycles(call_graph(parse_nm(two))) == [["x.c", "y.c"]]
    with contextlib.redirect_stdout(io.StringIO()) as said:
        self_test_src()
    assert "loop between folders x/, y/" in said.getvalue(), said.getvalue()
    assert "no such arrow any more" in said.getvalue(), said.getvalue()
    print("layers: self-test passed (a loop of three and of two found, "
          "a clean graph accepted; with --src an include loop and a loop "
          "between folders found, the clean tree accepted)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("library", nargs="?")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--src", help="the source root: object names map back "
                    "to its paths, its includes are arrows too, and no loop "
                    "may join its folders")
    ap.add_argument("--allow", action="append", default=[],
                    metavar="'A -> B'", help="leave out the arrow from file A "
                    "to file B (a known arrow back up that work under way "
                    "removes); an allowance with no such arrow fails")
    ap.add_argument("--print", action="store_true", dest="show")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.library:
        ap.error("a library is needed")
    text = subprocess.run([a.nm, a.library], check=True, capture_output=True,
                          text=True).stdout
    status, n = check(text, a.src, a.show, a.allow)
    if status is None:
        print("layers: %s has no objects to compare" % a.library)
        return 1
    if status == 0:
        print("layers: %d files, no loop%s" % (n, " between files or folders"
                                               if a.src else ""))
    return status


if __name__ == "__main__":
    sys.exit(main())
