#!/bin/sh
# install_test.sh MESON BUILD_ROOT EMBED_EXAMPLE_C CC FIND_KERNELS_C
# Installs the build tree into a temporary DESTDIR and checks that the
# package is complete and usable the way docs/api.md says, moved away from
# its prefix as a DESTDIR is: the library finds its kernels beside itself.
set -eu
meson=$1 build=$2 example=$3 cc=$4 find_kernels=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

"$meson" install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "meson install failed"; }

# What an installed cudag consists of.
header=$(find "$tmp/root" -path '*/include/cudag.h' | head -n 1)
pc=$(find "$tmp/root" -name cudag.pc | head -n 1)
lib=$(find "$tmp/root" -name 'libcudag.so*' | head -n 1)
manifest=$(find "$tmp/root" -path '*/share/cudag/cudag_kernels.yaml' | head -n 1)
exe=$(find "$tmp/root" -path '*/bin/cudag' | head -n 1)
[ -n "$header" ] || fail "cudag.h was not installed"
[ -n "$pc" ] || fail "cudag.pc was not installed"
[ -n "$lib" ] || fail "libcudag.so was not installed"
[ -n "$manifest" ] || fail "share/cudag/cudag_kernels.yaml was not installed"
[ -n "$exe" ] || fail "bin/cudag was not installed"
datadir=$(dirname "$manifest")
# The man page points at the installed docs, which are there.
man=$(find "$tmp/root" -path '*/man1/cudag.1' | head -n 1)
[ -n "$man" ] || fail "the man page was not installed"
for doc in language.md api.md; do
    # roff writes '-' as '\-'; a path ends at a font change ('\fR').
    named=$(sed 's/\\-/-/g' "$man" | grep -o '/[^ \\]*/'"$doc" | head -n 1)
    [ -n "$named" ] || fail "the man page does not name the installed $doc"
    [ -f "$tmp/root$named" ] || fail "the man page names $named, which was not installed"
done
if [ -f "$build/kernels/cudag_kernels.fatbin" ]; then
    [ -f "$datadir/cudag_kernels.fatbin" ] ||
        fail "cudag_kernels.fatbin was built but not installed"
fi

# pkg-config finds the package; the sysroot maps its paths into DESTDIR.
# The caller's path stays after ours: cudag.pc names libyaml privately, and
# pkg-config must find yaml-0.1.pc wherever this machine keeps it.
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
flags=$(pkg-config --cflags --libs cudag) || fail "pkg-config cannot use cudag.pc"
cp "$example" "$tmp/app.c"
# shellcheck disable=SC2086 # the flags are words
"$cc" "$tmp/app.c" $flags -o "$tmp/app" ||
    fail "the embedding example does not build with: cc app.c $flags"

# It runs against the installed library (77: no GPU here, which is fine).
status=0
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/app" "$datadir" || status=$?
case $status in
0 | 77) ;;
*) fail "the embedding example failed with status $status" ;;
esac

# A program linked to the installed library finds the installed manifest
# with no include directory, as the tool does.
"$cc" "$find_kernels" $flags -o "$tmp/find_kernels" ||
    fail "find_kernels.c does not build with: cc find_kernels.c $flags"
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/find_kernels" ||
    fail "a program linked to the installed library cannot find the shipped manifest"

# The installed tool finds the installed manifest on its own.
cat >"$tmp/g.yaml" <<'YAML'
cudag: 1
include: cudag_kernels.yaml
buffers: {x: {type: f32, count: 1024, init: random}, y: {type: f32, count: 1024}}
nodes:
  s: {kernel: scale_f32, grid: 1, block: 256, args: [x, y, 2.0, 1024]}
YAML
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" check -q "$tmp/g.yaml" ||
    fail "the installed cudag cannot check a graph that includes the shipped manifest"
echo "install test: ok (embedding example status $status)"
