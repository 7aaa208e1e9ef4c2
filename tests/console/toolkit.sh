#!/bin/sh
# toolkit.sh MESON SRCROOT
# What `meson setup` says about the CUDA toolkit: a -Dtoolkit that is not
# one is refused with a sentence of cudag's (not meson's "Include dir …
# does not exist"), and -Dtoolkit= (none) configures a build without CUDA
# whose summary says what it leaves out; neither setup warns of a
# deprecated feature (README's "meson setup build" prints no WARNING that
# is cudag's to fix).  Configures into temporary
# directories; builds nothing.
set -eu
meson=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "toolkit: $*" >&2; exit 1; }

for wrong in /no/such/toolkit "$tmp"; do
    if "$meson" setup "$tmp/b1" "$src" -Dtests=false -Dtoolkit="$wrong" \
        >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        fail "-Dtoolkit=$wrong was accepted"
    fi
    grep -F "ERROR: Problem encountered: -Dtoolkit=$wrong is not a CUDA toolkit: there is no $wrong/include/cuda.h." "$tmp/out" >/dev/null || {
        cat "$tmp/out"
        fail "-Dtoolkit=$wrong is not refused with cudag's sentence"
    }
    rm -rf "$tmp/b1"
done
echo "toolkit: ok: a wrong -Dtoolkit is refused with a sentence"

"$meson" setup "$tmp/b2" "$src" -Dtests=false -Dtoolkit= >"$tmp/out" 2>&1 || {
    cat "$tmp/out"
    fail "-Dtoolkit= (no toolkit) does not configure"
}
cp "$tmp/out" "$tmp/all"
for want in "CUDA toolkit  : none (-Dtoolkit= empty): check, dot and plan only; run and bench say so" \
    "kernels fatbin: not built (no nvcc): graphs check, but none runs from this build"; do
    grep -F "$want" "$tmp/out" >/dev/null || {
        cat "$tmp/out"
        fail "the configure summary lacks: $want"
    }
done
echo "toolkit: ok: -Dtoolkit= configures a build without CUDA and says so"

"$meson" setup "$tmp/b3" "$src" -Dtests=false >"$tmp/out" 2>&1 || {
    cat "$tmp/out"
    fail "the default setup does not configure"
}
cat "$tmp/out" >>"$tmp/all"
if grep -i "deprecat" "$tmp/all"; then
    fail "meson setup warns of a deprecated feature"
fi
echo "toolkit: ok: meson setup warns of no deprecated feature"
