"""The float32 vector sums (_native/linear_vec.h: AVX2 and the baseline's SSE2) against each
other, bit for bit.

The differential suites compare linear results with ORT and the reference allowing NaN
payloads to differ where two NaNs meet in one sum; the variants must not differ even there.
Each case here is run in four processes (baseline and AVX2, streaming stores always and
never) and every result's bytes must agree. The cases reach what the intrinsics path splits
on: 0-3 outer interpolated axes and 1 or 2 row taps, row weights that repeat every 8 outputs
and ones that do not, rows of 1-7 outputs past the last vector, output rows starting at every
offset inside a cache line (a view `out=` shifted by 0-15 elements), work split into items
across rows and row segments, rank-3 channel-last images (the identity block), and many NaN
payloads, infinities and signed zeros.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import outputs_of

from onnx_upsample._kernels import _compiled, _native

ROOT = Path(__file__).resolve().parent.parent

CASES = """
import hashlib
import numpy as np
import onnx_upsample as u
from onnx_upsample import _kernels
from onnx_upsample._kernels import _layout

rng = np.random.default_rng(7)

def values(shape):
    v = (rng.standard_normal(shape) * 100).astype(np.float32)
    flat = v.reshape(-1)
    n = max(1, flat.size // 8)
    where = rng.choice(flat.size, n, replace=False)
    coin = lambda: rng.integers(0, 2, n, dtype=np.uint32)  # noqa: E731
    bits = rng.integers(1, 1 << 22, n, dtype=np.uint32) | (coin() << 22)  # payload, quiet bit
    bits |= np.uint32(0x7F800000) | (coin() << 31)
    flat[where] = bits.view(np.float32)  # quiet and signalling NaNs of many payloads
    flat[rng.choice(flat.size, max(1, n // 4), replace=False)] = np.inf
    flat[rng.choice(flat.size, max(1, n // 4), replace=False)] = -np.inf
    flat[rng.choice(flat.size, max(1, n // 4), replace=False)] = -0.0
    return v

SHAPES = [
    ((100,), [2.0]),                      # no outer axis, two row taps
    ((37,), [1.5]),
    ((13, 9), [2.0, 2.0]),                # rank 2: one outer axis
    ((5, 11, 7), [2.0, 1.5, 2.0]),        # rank 3: two
    ((1, 3, 17, 23), [1, 1, 2, 2]),
    ((1, 2, 9, 61), [1, 1, 2, 4]),
    ((1, 2, 9, 20), [1, 1, 1.5, 1.7]),    # row weights that do not repeat
    ((1, 2, 6, 7, 29), [1, 1, 2, 2, 2]),  # trilinear
    ((2, 3, 4, 5, 2, 33), [1, 2, 2, 2, 1, 2]),  # rank 6: three outer axes, two taps
    ((2, 3, 4, 5, 2, 40), [1, 2, 2, 2, 1, 1]),  # three outer axes, one tap
    ((1, 2, 3, 4, 5, 40), [1, 1, 1, 1, 2, 1]),  # one outer axis, one tap
    ((3, 4, 50), [1, 1, 2]),              # rank 3: the first two interpolate at scale 1
    ((9, 13, 3), [2, 2, 1]),              # (H, W, C): the channels an identity block
    ((9, 13, 4), [1.5, 1.7, 1]),
]
for split in (False, True):
    if split:  # many small work items: rows and row segments split across two threads
        _layout.MIN_SHARE_WORK = 1
        _layout.LINEAR_SCRATCH_BYTES = 1 << 12
        _kernels.launcher.cache_clear()
        u._api._PREPARED.clear()
        u.set_num_threads(2)
    for shape, scales in SHAPES:
        x = values(shape)
        shape_out = u.output_shape(shape, scales)
        size = int(np.prod(shape_out))
        for shift in (0, 1, 3, 7, 9, 15):
            out = np.empty(size + 16, np.float32)[shift:shift + size].reshape(shape_out)
            u.upsample(x, scales, "linear", out=out)
            print(split, shape, shift, hashlib.sha256(out.tobytes()).hexdigest())
"""


def _run(isa: str, stream: str) -> subprocess.Popen[str]:
    env = dict(os.environ, **{_compiled.ISA_VAR: isa, _compiled.STREAM_VAR: stream})
    return subprocess.Popen([sys.executable, "-c", CASES], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
@pytest.mark.skipif(not _native.cpu_has_avx2(),
                    reason="no AVX2 loops run here (the CPU lacks AVX2, or a Clang build)")
def test_avx2_float_blend_equals_the_baseline_bit_for_bit() -> None:
    runs = {(isa, stream): _run(isa, stream)
            for isa in ("baseline", "avx2") for stream in ("never", "always")}
    outputs = outputs_of(runs, timeout=300)
    expected = outputs["baseline", "never"]
    assert len(expected) == 2 * 14 * 6
    for key, lines in outputs.items():
        differ = [a for a, b in zip(lines, expected, strict=True) if a != b]
        assert not differ, f"{key} differs from the baseline: {differ[:3]}"
