#!/usr/bin/env bash
# The portable C path, as an ARM build runs it, tested on x86: the extension is built again
# (setup.py, the package's own flags) with -U__SSE2__, which leaves out the SSE2 row loops of
# nearest mode and the streaming stores (a streamed copy is a plain memcpy there), into
# build/portable/ beside a copy of the Python package; the tests given as arguments (the
# differential suites, from `make test-portable`) run against it on the baseline instruction
# set (ONNX_UPSAMPLE_ISA=baseline: no AVX2 variant, which ARM lacks too). scripts/check_c.sh
# compiles the same sources for aarch64 with the strict warnings. Used by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
[ "$#" -gt 0 ] || { echo "usage: $0 TEST_FILE..."; exit 2; }
case "$(uname -m)" in
    x86_64|i?86) ;;
    *) echo "test_portable: $(uname -m) has no SSE2 path to leave out; make test runs" \
            "the portable path here"; exit 0 ;;
esac
root=$PWD/build/portable
rm -rf "$root"
mkdir -p "$root/package"
cp -r src/onnx_upsample "$root/package/"
rm -f "$root"/package/onnx_upsample/_kernels/_native.*.so
start=$SECONDS
CFLAGS="${CFLAGS:-} -U__SSE2__" "$PYTHON" setup.py -q build_ext --build-lib "$root/lib" \
    --build-temp "$root/temp" >"$root/build.log" 2>&1 || { cat "$root/build.log"; exit 1; }
cp "$root"/lib/onnx_upsample/_kernels/_native.*.so "$root/package/onnx_upsample/_kernels/"
so=$(ls "$root"/package/onnx_upsample/_kernels/_native.*.so)
# premise: the flag took effect (the SSE2 streaming store, movntdq, is nowhere in the build)
if objdump -d "$so" | grep -E '\smovntdq\s' >/dev/null; then
    echo "test_portable: $so still has SSE2 streaming stores: -U__SSE2__ did not apply"; exit 1
fi
echo "test_portable: built without SSE2 paths in $((SECONDS - start)) s"
export PYTHONPATH="$root/package" ONNX_UPSAMPLE_ISA=baseline HYPOTHESIS_PROFILE=ci
"$PYTHON" -c '
import sys, onnx_upsample._kernels._native as native
assert native.__file__.startswith(sys.argv[1]), native.__file__' "$root/package"
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"
