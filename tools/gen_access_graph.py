#!/usr/bin/env python3
"""Writes a large generated graph for timing the race check (src/access.c):
not a test, a measurement (docs/language.md, "Access sets and races").

    python3 tools/gen_access_graph.py SHAPE NODES > big.yaml
    time build/tools/cudag check big.yaml

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
    if len(sys.argv) != 3 or sys.argv[1] not in ("chain", "layers", "slices"):
        sys.exit(__doc__)
    shape, n = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
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


main()
