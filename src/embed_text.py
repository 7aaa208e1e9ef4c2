#!/usr/bin/env python3
"""Writes a text file as a C string constant: embed_text.py NAME IN OUT.

The library carries the headers that source modules include without an
option (include/cudag/pdl.cuh) as strings built from the installed files,
so the two cannot differ."""
import sys

name, src, out = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    text = f.read()
lines = []
for line in text.splitlines(keepends=True):
    esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    lines.append('    "%s"\n' % esc)
with open(out, "w", encoding="utf-8") as f:
    f.write("/* Generated from %s by embed_text.py. */\n" % src.split("/")[-1])
    f.write("static const char %s[] =\n%s    \"\";\n" % (name, "".join(lines)))
