#!/bin/sh
# sanitize_kernels.sh — runs the kernels' GPU test (tests/test_gpu_kernels)
# under compute-sanitizer's memcheck, racecheck and synccheck, with the sizes
# capped (CUDAG_KERNELS_QUICK=1) so that the slow tools finish in minutes.
# Every kernel and variant still runs, at odd sizes and offsets, with bulk
# copies, head/tail paths, resident and streamed rows (up to 16384 columns).
#
# usage: tests/kernels/sanitize_kernels.sh [BUILD_DIR] [TOOL...]
#   BUILD_DIR defaults to build; TOOLs default to memcheck racecheck synccheck.
#   COMPUTE_SANITIZER names the binary (default: compute-sanitizer on PATH, then
#   /usr/local/cuda/bin/compute-sanitizer); CUDAG_TEST_FILTER narrows the tests.
# Exit status: 0 when every tool reports no error, 77 when the test skips
# (no GPU), otherwise the first failing tool's status.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
tools=${*:-memcheck racecheck synccheck}
cs=${COMPUTE_SANITIZER:-}
if [ -z "$cs" ]; then
    cs=$(command -v compute-sanitizer || true)
    [ -z "$cs" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] &&
        cs=/usr/local/cuda/bin/compute-sanitizer
fi
if [ -z "$cs" ]; then
    echo "sanitize_kernels: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
    exit 77
fi
test_bin=$build/tests/test_gpu_kernels
if [ ! -x "$test_bin" ]; then
    echo "sanitize_kernels: $test_bin not built" >&2
    exit 1
fi
CUDAG_KERNELS_DIR=${CUDAG_KERNELS_DIR:-$build/kernels}
CUDAG_KERNELS_QUICK=1
export CUDAG_KERNELS_DIR CUDAG_KERNELS_QUICK
status=0
for tool in $tools; do
    case $tool in
    memcheck) extra="--leak-check full" ;;
    racecheck) extra="--racecheck-report all" ;;
    *) extra="" ;;
    esac
    echo "== compute-sanitizer --tool $tool"
    # shellcheck disable=SC2086 # $extra is a list of options
    "$cs" --tool "$tool" $extra --error-exitcode 99 "$test_bin"
    rc=$?
    echo "== $tool: exit $rc"
    if [ $rc -eq 77 ]; then
        exit 77
    fi
    if [ $rc -ne 0 ] && [ $status -eq 0 ]; then
        status=$rc
    fi
done
exit $status
