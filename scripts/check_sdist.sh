#!/usr/bin/env bash
# The sdist is complete: build it from this checkout, install it in a new, empty venv (which
# compiles the kernels from the sdist's sources alone) and run a few calls against the slow
# reference from outside the source tree; without a C compiler, the install must stop with
# one clear line. Used by CI after `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m build --sdist --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/onnx_upsample-*.tar.gz)
"$PYTHON" -m venv "$work/venv"
# without a C compiler the install stops with one line that names what to install
if CC=/nonexistent/cc "$work/venv/bin/python" -m pip install --no-deps "$sdist" \
        >"$work/no-compiler.log" 2>&1; then
    echo "installing without a C compiler succeeded?"; exit 1
fi
grep -q "needs a C compiler and the Python headers" "$work/no-compiler.log" \
    || { echo "no clear message without a C compiler:"; tail -20 "$work/no-compiler.log"; exit 1; }
"$work/venv/bin/python" -m pip install --quiet "$sdist" 2>&1 | grep -v "is ignored" || true
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
