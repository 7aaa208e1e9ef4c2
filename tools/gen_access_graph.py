#!/usr/bin/env python3
"""Writes a large generated graph for timing the race check (src/check/access.c):
not a test, a measurement (docs/language.md, "Access sets and races").

    python3 tools/gen_access_graph.py [--program] SHAPE NODES > big.yaml
    time build/tools/cudag check big.yaml

--program writes the same graph with `order: program` and no `after:`: the
check then infers the edges first (src/check/order.c), timed the same way.

SHAPE:
  chain   NODES axpy kernels, each after the one before, all updating one
          buffer in place (a decode chain): every access meets one earlier
          write that covers it and is ordered before it.
  layers  NODES/9 layers of 8 parallel kernels, each writing its own slice
          (`y + j*K: K`) of one buffer, then a join reading all of it: a
          fork-join repeated.
  slices  NODES independent kernels, each writing its own slice of one
          buffer: no order at all, no race; as wide as it is long, so the
          reachability table gives way to (short) searches.
"""
import re
import sys

HEAD = """cudag: 1
include: cudag_kernels.yaml
vars: {{ K: 64, N: {n} }}
buffers:
  x: {{ type: f32, count: {cx}, init: random }}
  y: {{ type: f32, count: {cy} }}
  z: {{ type: f32, count: {cy} }}
nodes:
"""


def main():
    args = sys.argv[1:]
    program = args[:1] == ["--program"]
    if program:
        args = args[1:]
    if len(args) != 2 or args[0] not in ("chain", "layers", "slices"):
        sys.exit(__doc__)
    shape, n = args[0], int(args[1])
    out = Program(sys.stdout) if program else sys.stdout
    if shape == "chain":
        out.write(HEAD.format(n=n, cx=64, cy=64))
        out.write('  s[i in N]: { kernel: axpy_f32, grid: 1, block: 64, '
                  'args: [x, y, 1.0, K], after: ["s[i-1]"] }\n'
                  '  use: { memset: z, value: 0 }\n')
    elif shape == "layers":
        layers = max(n // 9, 1)
        out.write(HEAD.format(n=layers, cx=64 * 8, cy=64 * 8))
        out.write('  l[i in N]:\n'
                  '    w[j in 8]: { kernel: scale_f32, grid: 1, block: 64, '
                  'args: [{x + j*K: K}, {y + j*K: K}, 2.0, K], '
                  'after: ["l[i-1].join"] }\n'
                  '    join: { kernel: axpy_f32, grid: 1, block: 64, '
                  'args: [y, x, 1.0, "8*K"], after: [%s] }\n'
                  % ", ".join('"w[%d]"' % j for j in range(8)) +
                  '  use: { memset: z, value: 0 }\n')
    else:
        out.write(HEAD.format(n=n, cx=64, cy=64 * n))
        out.write('  s[i in N]: { kernel: scale_f32, grid: 1, block: 64, '
                  'args: [x, {y + i*K: K}, 2.0, K] }\n'
                  '  use: { memset: z, value: 0 }\n')


class Program:
    """Writes through to `out` with `order: program` after the header's
    first line and every `after: [...]` left out."""

    def __init__(self, out):
        self.out = out

    def write(self, text):
        text = text.replace("cudag: 1\n", "cudag: 1\norder: program\n")
        self.out.write(re.sub(r', after: \[(?:"[^"]*"|[^\]"])*\]', "", text))


main()
