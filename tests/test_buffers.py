"""Reuse of large output buffers: never while any view of an earlier result is alive."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np

from onnx_upsample import upsample
from onnx_upsample._buffers import MIN_POOLED_BYTES

X = np.arange(256 * 256, dtype=np.float32).reshape(1, 1, 256, 256)  # output 1 MiB
SCALES = [1, 1, 2, 2]
assert 4 * X.nbytes >= MIN_POOLED_BYTES


def test_results_are_ordinary_arrays() -> None:
    y = upsample(X, SCALES)
    assert y.flags.c_contiguous and y.flags.writeable and y.flags.aligned
    assert not np.shares_memory(y, X)
    y[...] = 7  # writable everywhere
    assert (y == 7).all()


def test_memory_is_reused_only_after_every_view_is_gone() -> None:
    first = upsample(X, SCALES)
    address = first.ctypes.data
    expected = first.copy()
    view = first[0, 0, 5:9]
    del first
    gc.collect()
    second = upsample(X * 2, SCALES)
    assert second.ctypes.data != address  # `view` still uses the first result's memory
    assert np.array_equal(view, expected[0, 0, 5:9])  # and its values are intact
    released = {address, second.ctypes.data}
    del view, second
    gc.collect()
    third = upsample(X, SCALES)
    assert third.ctypes.data in released  # a released buffer came back
    assert np.array_equal(third, expected)


def test_reuse_can_be_turned_off() -> None:
    code = (
        "import numpy as np, onnx_upsample as u\n"
        "x = np.ones((1, 1, 256, 256), np.float32)\n"
        "y = u.upsample(x, [1, 1, 2, 2]); print(y.flags.owndata)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "ONNX_UPSAMPLE_REUSE_OUTPUTS": "0"}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
