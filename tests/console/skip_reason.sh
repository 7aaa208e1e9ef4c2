#!/bin/sh
# skip_reason.sh MESON BUILD_ROOT
# What `meson test` shows on the console (README: "the gpu suite skips, with
# a message"): meson prints a test's output only when it fails, so the
# reason the GPU suites skip reaches the console through gpu_probe alone.
# Runs it as a user's `meson test` would and checks its line is on the
# console: the reason it skips, or the device it found.
set -eu
meson=$1 build=$2
out=$("$meson" test -C "$build" --no-rebuild --logbase skip-reason-check gpu_probe 2>&1) || true
if printf '%s\n' "$out" | grep -Eq '^(SKIP: .+|the gpu suite runs on device 0 of .+)$'; then
    printf '%s\n' "$out" | grep -E '^(SKIP: |the gpu suite runs on)'
    echo "skip reason: ok: meson test shows it on the console"
    exit 0
fi
printf '%s\n' "$out"
echo "skip reason: meson test does not show why the gpu suite skips" >&2
exit 1
