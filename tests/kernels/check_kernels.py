#!/usr/bin/env python3
"""check_kernels.py -- checks what kernels/meson.build built, on the CPU.

For the manifest (cudag_kernels.yaml) against the sm_90 PTX:
  * every declared kernel exists as an .entry with the declared number of
    parameters, each of the declared size and kind (float or not), and every
    .entry is declared (the manifest stays honest both ways);
  * every kernel declared pdl: true contains griddepcontrol.wait and
    griddepcontrol.launch_dependents; a kernel declared without it contains
    no wait; no kernel uses non-coherent loads (ld.global.nc, i.e. __ldg or
    const __restrict__), which could be hoisted above the wait;
  * (SASS) the Llama GEMVs' first global load is a weight's, before the
    wait;
  * every bulk-copy kernel (module cudag, not util_*, cond_*, jacobi_*,
    llama_*, not *_vec) contains cp.async.bulk, and no *_vec kernel does.
For legacy.yaml against legacy_sm80.ptx: the kernel exists with its
parameters, the PTX targets sm_80, and it contains no griddepcontrol at all
(the point of that module).
Where cuobjdump is found ($CUDAG_CUOBJDUMP, PATH, or the pip packages
nvidia-cuda-cuobjdump + nvidia-cuda-nvdisasm), the same instruction checks run
on the fatbin's sm_90 SASS (ACQBULK = griddepcontrol.wait, PREEXIT =
launch_dependents, UBLKCP = cp.async.bulk), and the fatbin must hold sm_80
code for every kernel and compute_90 PTX.

Usage: check_kernels.py KERNELS_BUILD_DIR
Exit status: 0 pass, 1 fail, 77 skip (nothing built: no nvcc).
"""
import os
import re
import shutil
import subprocess
import sys

SIZES = {'ptr': 8, 'cond': 8, 'i64': 8, 'u64': 8, 'f64': 8, 'i32': 4, 'u32': 4, 'f32': 4,
         'i16': 2, 'u16': 2, 'f16': 2, 'bf16': 2, 'i8': 1, 'u8': 1}
FLOATS = {'f16', 'bf16', 'f32', 'f64'}
PTX_SIZES = {'8': 1, '16': 2, '32': 4, '64': 8}

failures = []


def fail(msg):
    failures.append(msg)


def parse_manifest(path):
    """Returns (modules, kernels) of a manifest written one kernel per line,
    `name: { params: {a: t, ...}[, pdl: true][, module: m] }`.  Any other
    line in the kernels section fails the check, so the format stays
    parseable without a YAML library."""
    modules, kernels = {}, {}
    section = None
    line_re = re.compile(
        r'^  (\w+):\s*\{\s*params:\s*\{([^}]*)\}\s*((?:,\s*\w+:\s*[\w.]+\s*)*)\}\s*$')
    for no, raw in enumerate(open(path, encoding='utf-8'), 1):
        line = raw.rstrip('\n')
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        if not line.startswith(' '):
            section = line.split(':', 1)[0]
            continue
        if section == 'modules':
            m = re.match(r'^  (\w+):\s*(\S+)\s*$', line)
            if not m:
                fail(f'{path}:{no}: cannot read module line: {line!r}')
                continue
            modules[m.group(1)] = m.group(2)
        elif section == 'kernels':
            m = line_re.match(line)
            if not m:
                fail(f'{path}:{no}: cannot read kernel line: {line!r}')
                continue
            name, params, rest = m.groups()
            plist = []
            for item in filter(None, (p.strip() for p in params.split(','))):
                pname, _, ptype = item.partition(':')
                ptype = ptype.strip()
                # An access mode (ptr.read, ptr.write, ptr.rw) is the
                # pointer's: the PTX sees 8 bytes either way.
                if ptype in ('ptr.read', 'ptr.write', 'ptr.rw'):
                    ptype = 'ptr'
                if ptype not in SIZES:
                    fail(f'{path}:{no}: {name}: unknown type {ptype!r}')
                plist.append((pname.strip(), ptype))
            extra = dict((k.strip(), v.strip()) for k, v in
                         re.findall(r'(\w+):\s*([\w.]+)', rest))
            if name in kernels:
                fail(f'{path}:{no}: {name} declared twice')
            kernels[name] = {'params': plist, 'pdl': extra.get('pdl') == 'true',
                             'module': extra.get('module'), 'line': no}
    return modules, kernels


def parse_ptx(path):
    """Returns {entry: (params [(size, is_float)], body text)}."""
    text = open(path, encoding='utf-8').read()
    entries = {}
    for m in re.finditer(r'\.entry\s+(\w+)\s*\(([^)]*)\)', text):
        name, plist = m.group(1), m.group(2)
        params = []
        for p in filter(None, (s.strip() for s in plist.split(','))):
            t = re.match(r'\.param\s+\.([busf])(\d+)', p)
            if not t:
                fail(f'{path}: {name}: cannot read parameter {p!r}')
                continue
            params.append((PTX_SIZES.get(t.group(2), 0), t.group(1) == 'f'))
        start = text.index('{', m.end())
        depth, i = 0, start
        while True:
            c = text[i]
            if c == '{':
                depth += 1
            elif c == '}':
                depth -= 1
                if depth == 0:
                    break
            i += 1
        entries[name] = (params, text[start:i + 1])
    return text, entries


def is_bulk_kernel(name):
    """The streaming kernels: not the utilities, the condition setters, the
    stencil, the plain _vec variants, or the Llama decode kernels (GEMVs whose
    weight rows are read by many warps at once, each a few 16-byte chunks
    ahead: registers, not a bulk copy into shared memory, keep HBM busy)."""
    return (not name.startswith(('util_', 'cond_', 'jacobi_', 'llama_'))
            and not name.endswith('_vec'))


def check_signatures(mpath, kernels, entries, module_names):
    for name, k in kernels.items():
        if k['module'] not in (None, *module_names):
            continue
        if name not in entries:
            fail(f'{mpath}:{k["line"]}: {name} is declared but not in the PTX')
            continue
        params, _ = entries[name]
        if len(params) != len(k['params']):
            fail(f'{mpath}:{k["line"]}: {name}: {len(k["params"])} parameters '
                 f'declared, the PTX has {len(params)}')
            continue
        for (pname, ptype), (size, isf) in zip(k['params'], params):
            if SIZES[ptype] != size or (ptype in FLOATS) != isf:
                fail(f'{mpath}:{k["line"]}: {name}: parameter {pname} is '
                     f'{ptype}, the PTX has {"f" if isf else "b"}{size * 8}')
    for name in entries:
        if name not in kernels:
            fail(f'{mpath}: the PTX has {name}, which is not declared')


def check_ptx_instructions(kernels, entries):
    for name, k in kernels.items():
        if name not in entries:
            continue
        body = entries[name][1]
        has_wait = 'griddepcontrol.wait' in body
        has_trigger = 'griddepcontrol.launch_dependents' in body
        if k['pdl'] and not (has_wait and has_trigger):
            fail(f'{name}: declared pdl: true, but its sm_90 PTX lacks '
                 + ('griddepcontrol.wait' if not has_wait
                    else 'griddepcontrol.launch_dependents'))
        if not k['pdl'] and has_wait:
            fail(f'{name}: waits (griddepcontrol.wait) but is not declared pdl: true')
        # The Llama GEMVs stream their weights (w, norm, embed: ptr.read, and
        # written by no kernel of a graph) through ld.global.nc on purpose,
        # before the wait (kernels/llama.cuh, ll_ldw); nothing they read after
        # the wait goes through it.
        if 'ld.global.nc' in body and not name.startswith('llama_'):
            fail(f'{name}: uses ld.global.nc (__ldg / const __restrict__), '
                 'which may be hoisted above griddepcontrol.wait')
        has_bulk = 'cp.async.bulk' in body
        if is_bulk_kernel(name) and not has_bulk:
            fail(f'{name}: a bulk-copy kernel without cp.async.bulk in its sm_90 PTX')
        if name.endswith('_vec') and has_bulk:
            fail(f'{name}: the plain variant uses cp.async.bulk')


def find_cuobjdump():
    cand = os.environ.get('CUDAG_CUOBJDUMP') or shutil.which('cuobjdump')
    if not cand and os.access('/usr/local/cuda/bin/cuobjdump', os.X_OK):
        cand = '/usr/local/cuda/bin/cuobjdump'
    if not cand:
        try:
            import nvidia  # the pip packages nvidia-cuda-cuobjdump/-nvdisasm
            for base in nvidia.__path__:
                for sub in ('cu13', 'cu12', 'cuda_cuobjdump'):
                    p = os.path.join(base, sub, 'bin', 'cuobjdump')
                    if os.access(p, os.X_OK):
                        cand = p
                        break
        except ImportError:
            pass
    return cand


def sass_functions(cuobjdump, fatbin, arch):
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(cuobjdump))
    if os.access(os.path.join(here, 'nvdisasm'), os.X_OK):
        env.setdefault('NVDISASM_PATH', here)
        env['PATH'] = here + os.pathsep + env.get('PATH', '')
    out = subprocess.run([cuobjdump, '--dump-sass', '--gpu-architecture', arch,
                          fatbin], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        fail(f'{cuobjdump} --dump-sass failed: {out.stderr.strip()}')
        return {}
    funcs = {}
    for part in re.split(r'\n\s*Function : ', out.stdout)[1:]:
        name, _, body = part.partition('\n')
        funcs[name.strip()] = body
    return funcs


# The Llama GEMVs (kernels/llama.cuh): their first global load in the SASS
# is a weight's (ld.global.nc.L1::no_allocate: LDG.E.NA), and one comes
# before ACQBULK.  The weight stream is what a programmatic edge overlaps
# with the kernel before; anything loaded ahead of it (the QKV's pos and
# its rotation's math did, until 947df8e) holds the stream back by a round
# trip.
LLAMA_GEMV = re.compile(r'^llama_(qkv|gateup|res|head)(_\w+)?_bf16$')
LDG = re.compile(r'\bLDG(STS)?\b(\.[A-Z0-9_]+)*')  # a global load, or cp.async's


def check_weights_first(name, body):
    first = LDG.search(body)
    wait = body.find('ACQBULK')
    if not first or not first.group(0).startswith('LDG.E.NA'):
        fail(f'{name}: its first global load in the sm_90 SASS is '
             f'{first.group(0) if first else "none"}, not a weight load (LDG.E.NA)')
    elif wait < 0 or first.start() > wait:
        fail(f'{name}: no weight load before ACQBULK (griddepcontrol.wait) '
             'in its sm_90 SASS')


def check_sass(cuobjdump, fatbin, kernels):
    f90 = sass_functions(cuobjdump, fatbin, 'sm_90')
    f80 = sass_functions(cuobjdump, fatbin, 'sm_80')
    for name, k in kernels.items():
        if k['module'] not in (None, 'cudag'):
            continue
        if name not in f90:
            fail(f'{name}: no sm_90 SASS in the fatbin')
            continue
        if name not in f80:
            fail(f'{name}: no sm_80 SASS in the fatbin')
        body = f90[name]
        if k['pdl'] and ('ACQBULK' not in body or 'PREEXIT' not in body):
            fail(f'{name}: declared pdl: true, but its sm_90 SASS lacks '
                 + ('ACQBULK (griddepcontrol.wait)' if 'ACQBULK' not in body
                    else 'PREEXIT (griddepcontrol.launch_dependents)'))
        if LLAMA_GEMV.match(name):
            check_weights_first(name, body)
        if is_bulk_kernel(name) and 'UBLKCP' not in body:
            fail(f'{name}: a bulk-copy kernel without UBLKCP (cp.async.bulk) '
                 'in its sm_90 SASS')
    out = subprocess.run([cuobjdump, '--list-ptx', fatbin], capture_output=True,
                         text=True)
    if 'sm_90' not in out.stdout and 'compute_90' not in out.stdout:
        fail(f'{fatbin}: no compute_90 PTX embedded ({out.stdout.strip()!r})')


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    manifest = os.path.join(d, 'cudag_kernels.yaml')
    ptx = os.path.join(d, 'cudag_kernels_sm90.ptx')
    fatbin = os.path.join(d, 'cudag_kernels.fatbin')
    legacy_manifest = os.path.join(d, 'legacy.yaml')
    legacy_ptx = os.path.join(d, 'legacy_sm80.ptx')
    if not os.path.exists(ptx) or not os.path.exists(fatbin):
        print(f'SKIP: {ptx} or {fatbin} not built (no nvcc?)')
        return 77

    modules, kernels = parse_manifest(manifest)
    if modules.get('cudag') != 'cudag_kernels.fatbin':
        fail(f'{manifest}: module cudag must be cudag_kernels.fatbin, is {modules}')
    _, entries = parse_ptx(ptx)
    check_signatures(manifest, kernels, entries, ['cudag'])
    check_ptx_instructions(kernels, entries)
    npdl = sum(1 for k in kernels.values() if k['pdl'])
    nbulk = sum(1 for n in kernels if is_bulk_kernel(n))
    print(f'{manifest}: {len(kernels)} kernels ({npdl} pdl, {nbulk} bulk-copy) '
          f'against {len(entries)} PTX entries')

    lmods, lkernels = parse_manifest(legacy_manifest)
    ltext, lentries = parse_ptx(legacy_ptx)
    check_signatures(legacy_manifest, lkernels, lentries, list(lmods))
    if not re.search(r'^\.target\s+sm_80\b', ltext, re.M):
        fail(f'{legacy_ptx}: not compute_80 PTX')
    if 'griddepcontrol' in ltext:
        fail(f'{legacy_ptx}: contains griddepcontrol; it must not be able to wait')

    cuobjdump = find_cuobjdump()
    if cuobjdump:
        check_sass(cuobjdump, fatbin, kernels)
        print(f'SASS checked with {cuobjdump}')
    else:
        print('cuobjdump not found (set CUDAG_CUOBJDUMP, or pip install '
              'nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm): SASS checks skipped')

    for f in failures:
        print('FAIL: ' + f)
    print('%d failure(s)' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
