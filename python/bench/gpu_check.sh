#!/usr/bin/env bash
# gpu_check.sh — the Python package on a GPU machine, in one go: builds into
# build-py, runs the suites of the package (python: CPU, against the fake
# driver; python_gpu: PyTorch and CuPy on the GPU), then the replay-overhead
# benchmark, then (when there is time left and meson-python is importable)
# `pip install .` into a scratch directory and the docs tour, GPU part
# included, against that installed copy.  Logs and the benchmark's JSON in
# OUTDIR; the tables at the end of the output.
#
#   python/bench/gpu_check.sh OUTDIR [PIP_TIME_LEFT_S]
#
# MESONPY_PATH: where meson-python is importable from, if not installed.
# Run from the repository root (after whatever makes libyaml findable).
set -u
out=${1:?usage: gpu_check.sh OUTDIR [PIP_TIME_LEFT_S]}
pip_budget=${2:-150}
b=build-py
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    date -u
    python3 -c 'import sys, torch, cupy; print(sys.version, torch.__version__, cupy.__version__)'
    [ -f $b/build.ninja ] || meson setup $b -Dtests=true
    ninja -C $b -j16
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
head -3 "$out/build.log"
echo "== build: ${SECONDS}s"

meson test -C $b --suite python --print-errorlogs >"$out/tests.log" 2>&1
tests_rc=$?
grep -E "^ *[0-9]+/[0-9]+ |passed|failed|skipped" "$out/tests.log" | tail -12
echo "== tests (rc $tests_rc): ${SECONDS}s"

export PYTHONPATH=$PWD/python CUDAG_LIBRARY=$PWD/$b/src/libcudag.so
export CUDAG_KERNELS_DIR=$PWD/$b/kernels PYTHONUNBUFFERED=1
python3 python/bench/replay_overhead.py --launch-c $b/python/bench/launch_c \
    --out "$out/replay_overhead.json" >"$out/bench.log" 2>&1
bench_rc=$?
echo "== bench (rc $bench_rc): ${SECONDS}s"

pip_rc=skipped
if [ "$SECONDS" -lt "$pip_budget" ] &&
    PYTHONPATH=${MESONPY_PATH:-} python3 -c 'import mesonpy' 2>/dev/null; then
    rm -rf /tmp/cudag-pip
    (
        unset PYTHONPATH CUDAG_LIBRARY CUDAG_KERNELS_DIR
        export PYTHONPATH=${MESONPY_PATH:-}
        timeout 150 python3 -m pip install -q --no-build-isolation --no-deps \
            --target /tmp/cudag-pip . &&
        cd /tmp && PYTHONPATH=/tmp/cudag-pip${MESONPY_PATH:+:$MESONPY_PATH} \
            CUDAG_SOURCE_ROOT=$OLDPWD timeout 60 python3 -m pytest -q \
            -p no:cacheprovider -m gpu "$OLDPWD/python/tests/test_docs.py"
    ) >"$out/pip.log" 2>&1
    pip_rc=$?
    tail -3 "$out/pip.log"
fi
echo "== pip install . and the docs tour (rc $pip_rc): ${SECONDS}s"
tail -25 "$out/bench.log"
[ "$tests_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
