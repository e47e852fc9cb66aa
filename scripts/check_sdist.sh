#!/usr/bin/env bash
# The sdist is complete: build it from this checkout, install it in a new, empty venv (which
# compiles the kernels from the sdist's sources alone), run a few calls against the slow
# reference from outside the source tree, then part of the test suite from the unpacked sdist
# (its tests, example model and scripts travel in it) against that install. Without a C
# compiler, the install must stop with one clear line, the last of the build's output. Used
# by CI after `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m build --sdist --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/onnx_upsample-*.tar.gz)
"$PYTHON" -m venv "$work/venv"
# without a C compiler the install stops with one line that names what to install, the last
# line of the build's output (pip adds only its own few lines of summary after it)
if CC=/nonexistent/cc "$work/venv/bin/python" -m pip install --no-deps "$sdist" \
        >"$work/no-compiler.log" 2>&1; then
    echo "installing without a C compiler succeeded?"; exit 1
fi
grep -v "is ignored" "$work/no-compiler.log" >"$work/no-compiler.out" || true
awk '/\[end of output\]/ { print last } { last = $0 }' "$work/no-compiler.out" \
    | grep "needs a C compiler and the Python headers" >/dev/null \
    || { echo "no clear last line without a C compiler:"; tail -20 "$work/no-compiler.out"; exit 1; }
echo "check_sdist: without a C compiler, pip's output is $(wc -l <"$work/no-compiler.out") lines;" \
     "the message is line $(grep -n "needs a C compiler" "$work/no-compiler.out" | cut -d: -f1)"
"$work/venv/bin/python" -m pip install --quiet "$sdist[test]" 2>&1 | grep -v "is ignored" || true
cd "$work"
"$work/venv/bin/python" - <<'PY'
import numpy as np
import onnx_upsample
from onnx_upsample import reference, upsample

assert "/venv/" in onnx_upsample.__file__, onnx_upsample.__file__
rng = np.random.default_rng(0)
cases = [((1, 2, 5, 7), [1, 1, 2, 1.5], "nearest", "float32"),
         ((1, 2, 5, 7), [1, 1, 2, 1.5], "linear", "float32"),
         ((6, 5, 3), [2, 1.5, 1], "linear", "uint8"),
         ((2, 3, 4), [1.5, 2, 2], "linear", "float16")]
for shape, scales, mode, dtype in cases:
    x = (rng.standard_normal(shape) * 40).astype(dtype)
    assert upsample(x, scales, mode).tobytes() == reference.upsample(x, scales, mode).tobytes()
print(f"sdist {onnx_upsample.__version__}: installed in a clean venv, {len(cases)} calls exact")
PY
# the unpacked sdist's own tests, against the install (its src/ is not importable from there:
# pytest puts tests/ on the path, not the root)
mkdir unpacked
tar -xzf "$sdist" -C unpacked
cd unpacked/onnx_upsample-*
"$work/venv/bin/python" -c '
import sys, onnx_upsample
assert onnx_upsample.__file__.startswith(sys.prefix), onnx_upsample.__file__'
HYPOTHESIS_PROFILE=ci "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_kernels.py tests/test_ort.py tests/test_onnx_cli.py tests/test_package_readme.py
