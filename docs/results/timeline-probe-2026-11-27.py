#!/usr/bin/env python3
"""Session 23 probe: the step's timeline from tl.patch's records.
usage: tl.py FILE L [bytes per kind as k=v ...]"""
import struct, sys, statistics as st
f, L = sys.argv[1], int(sys.argv[2])
nbytes = {int(k): float(v) for k, v in (a.split('=') for a in sys.argv[3:])}
raw = open(f, 'rb').read()
recs = []
for i in range(0, len(raw) - 31, 32):
    a, t0, t1, t2 = struct.unpack_from('<QQQQ', raw, i)
    if a == 0 and t0 == 0:
        continue
    recs.append((a >> 32, a & 0xffffffff, t0, t1, t2))
names = {1: 'qkv', 2: 'attn', 3: 'o', 4: 'gu', 5: 'down', 6: 'head', 7: 'argmax'}
inst = {}
for k in names:
    r = sorted((x for x in recs if x[0] == k), key=lambda x: x[4])
    n = L if k <= 5 else 1
    if not r:
        print('no records of', names[k]); sys.exit(1)
    gaps = sorted(range(1, len(r)), key=lambda i: r[i][4] - r[i - 1][4], reverse=True)[:n - 1]
    cuts = [0] + sorted(gaps) + [len(r)]
    inst[k] = [r[cuts[i]:cuts[i + 1]] for i in range(n)]
seq = []
for i in range(L):
    for k in (1, 2, 3, 4, 5):
        seq.append((k, i, inst[k][i]))
seq.append((6, 0, inst[6][0])); seq.append((7, 0, inst[7][0]))
t00 = min(x[2] for x in inst[1][0])
rows = {k: [] for k in names}
prev_end = None
for k, i, r in seq:
    t0 = [x[2] for x in r]; t2 = [x[4] for x in r]
    t1 = [x[3] for x in r if x[3]]
    e = max(t2)
    d = dict(n=len(r), start=min(t0), end=e,
             c=(e - prev_end) / 1e3 if prev_end else (e - t00) / 1e3,
             early=(min(t0) - prev_end) / 1e3 if prev_end else 0.0,
             rel=(min(t1) - prev_end) / 1e3 if (prev_end and t1) else float('nan'),
             relmax=(max(t1) - prev_end) / 1e3 if (prev_end and t1) else float('nan'),
             post=(e - min(t1)) / 1e3 if t1 else float('nan'),
             endspread=(e - min(t2)) / 1e3,
             startspread=(max(t0) - min(t0)) / 1e3)
    rows[k].append(d)
    prev_end = e
total = (prev_end - t00) / 1e3
print('records %d; step (first qkv block start -> last argmax block end) %.1f us' % (len(recs), total))
print('| kernel | blocks | on the chain (end - previous end) | first block start - previous end | first wait released - previous end | last wait released | last end - first release | last end - first end | bytes | GB/s on the chain |')
print('| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |')
tot = 0.0
for k in names:
    R = rows[k]
    med = lambda key: st.median(x[key] for x in R)
    c = med('c'); tot += c * len(R)
    b = nbytes.get(k, 0.0)
    print('| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s |' % (
        names[k], R[0]['n'], c, med('early'), med('rel'), med('relmax'), med('post'), med('endspread'),
        '%.1f MB' % (b / 1e6) if b else '', '%.0f' % (b / c / 1e3) if b else ''))
print('sum of medians x count: %.1f us' % tot)
print('per layer (layers 1..L-1 medians): ' + ', '.join('%s %.2f' % (names[k], st.median(x['c'] for x in rows[k][1:])) for k in (1, 2, 3, 4, 5)))
# tl2.patch's phase records (kind 10 + k, thread 0 of each GEMV block): the
# staging after the wait, the first tile's multiply to its sums, its epilogue
ph = {}
for k, b, a, m, e in recs:
    if k > 10:
        ph.setdefault(k - 10, []).append((a / 1e3, m / 1e3, e / 1e3))
if ph:
    print('| kernel | blocks x launches | staging after the wait (median / p90) | multiply to sums | epilogue |')
    print('| --- | --: | --: | --: | --: |')
    for k in sorted(ph):
        v = ph[k]
        def q(i, f):
            xs = sorted(x[i] for x in v); return xs[min(len(xs) - 1, int(f * len(xs)))]
        print('| %s | %d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |' % (
            names.get(k, k), len(v), q(0, .5), q(0, .9), q(1, .5), q(1, .9), q(2, .5), q(2, .9)))
