#!/usr/bin/env bash
# The portable C path, what a target with no SIMD backend runs (simd.h: no vector loops, no
# streaming stores, no AVX2 variant), tested here: the extension is built again (setup.py,
# the package's own flags) with ONNX_UPSAMPLE_NO_SIMD defined, into build/portable/ beside a
# copy of the Python package; the tests given as arguments (the differential suites and the
# fast paths' counts, from `make test-portable`) run against it. scripts/check_c.sh compiles
# the same sources this way with the strict warnings. Used by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
[ "$#" -gt 0 ] || { echo "usage: $0 TEST_FILE..."; exit 2; }
root=$PWD/build/portable
rm -rf "$root"
mkdir -p "$root/package"
cp -r src/onnx_upsample "$root/package/"
rm -f "$root"/package/onnx_upsample/_kernels/_native.*.so
start=$SECONDS
CFLAGS="${CFLAGS:-} -DONNX_UPSAMPLE_NO_SIMD" "$PYTHON" setup.py -q build_ext --build-lib "$root/lib" \
    --build-temp "$root/temp" >"$root/build.log" 2>&1 || { cat "$root/build.log"; exit 1; }
cp "$root"/lib/onnx_upsample/_kernels/_native.*.so "$root/package/onnx_upsample/_kernels/"
so=$(ls "$root"/package/onnx_upsample/_kernels/_native.*.so)
echo "test_portable: built without SIMD loops in $((SECONDS - start)) s"
export PYTHONPATH="$root/package" HYPOTHESIS_PROFILE=ci
# premise: the flag took effect (the extension says which backend its baseline loops use)
"$PYTHON" -c '
import sys, onnx_upsample._kernels._native as native
assert native.__file__.startswith(sys.argv[1]), native.__file__
assert (native.SIMD_BASELINE, native.SIMD_LANES) == ("scalar", 0), native.SIMD_BASELINE
assert not native.cpu_has_avx2(), "an AVX2 variant in the portable build"' "$root/package"
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"
