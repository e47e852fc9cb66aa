"""Peak memory of one call: the output, and next to nothing that grows with it.

The kernels compute every index from the axis' rule (no per-index tables), and float16 and
bfloat16 results are rounded from a bounded float32 piece, so a call's memory beyond its
input and output is a fixed scratch per thread: at most 0.15x the output on ordinary
outputs, whatever the shape. Each case runs in a child process that measures its own peak
resident memory (VmHWM, reset before the call); sizes are chosen so that the fixed scratch
(about 5 MiB) is within the bound.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import UpsampleError, _resources
from onnx_upsample._kernels import _compiled, _layout, _native

CHILD = """
import sys, numpy as np, ml_dtypes
import onnx_upsample as u
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
shape, scales, mode, name = eval(sys.argv[1]), eval(sys.argv[2]), sys.argv[3], sys.argv[4]
dtype = np.dtype(ml_dtypes.bfloat16) if name == 'bfloat16' else np.dtype(name)
x = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
u.upsample(np.ones((4, 4), dtype), [2, 2], mode)  # the kernels are loaded
open('/proc/self/clear_refs', 'w').write('5')  # the peak is now the current size
before = status('VmRSS')
y = u.upsample(x, scales, mode)
print((status('VmHWM') - before - y.nbytes) / y.nbytes)
"""

# (shape, scales, mode, dtype): long rows and rank 1 (where per-index tables cost 8-24
# bytes per output element, 20-40x a uint8 output), short rows under a long outer axis,
# images, and every conversion path (half types, complex parts, integers)
CASES = [
    ((20_000_000,), [2], "linear", "uint8"),
    ((20_000_000,), [2.5], "nearest", "uint8"),
    ((12_000_000,), [2], "linear", "float16"),
    ((12_000_000,), [2], "linear", "bfloat16"),
    ((4_000_000, 3), [2, 2], "nearest", "uint8"),
    ((4_000_000, 3), [2, 2], "linear", "uint8"),
    ((4_000_000, 2), [1.5, 2], "linear", "float32"),
    ((2_000_000,), [3], "linear", "complex64"),
    ((1, 3, 1080, 1920), [1, 1, 2, 2], "linear", "float16"),
    ((1080, 1920, 3), [2, 2, 1], "linear", "uint8"),
    ((1, 3, 540, 960), [1, 1, 2.5, 2.5], "nearest", "int16"),
]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), CASES,
                         ids=[f"{m}-{d}-{'x'.join(map(str, s))}" for s, _, m, d in CASES])
def test_working_memory_is_a_small_fraction_of_the_output(shape, scales, mode, dtype) -> None:
    result = subprocess.run([sys.executable, "-c", CHILD, repr(shape), repr(scales), mode,
                             dtype], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    extra = float(result.stdout)
    assert extra <= 0.15, f"peak memory beyond the output: {extra:.2f}x the output"


def test_working_memory_bounds_cover_the_kernels_scratch() -> None:
    per_thread = (_layout.LINEAR_SCRATCH_BYTES + _native.LINEAR_DIRECT_CACHE_BYTES
                  + 8 * _compiled.MAX_GATHER_SEGMENT)
    assert _resources.KERNEL_WORKING_BYTES_PER_THREAD >= per_thread
    assert _resources.KERNEL_WORKING_BYTES >= _compiled.HALF_SCRATCH_BYTES


def test_working_memory_is_counted_before_allocating(monkeypatch) -> None:
    """An output that fits alone, but not with the copy of a non-contiguous x next to it,
    is refused before anything is allocated, and the message says why."""
    x = np.ones((1024, 1024), np.float32)[:, ::2]  # strided: the kernels read a copy
    contiguous = np.ascontiguousarray(x)
    out_bytes = 2048 * 1024 * 4
    threads = onnx_upsample._threads.threads_for_call()
    limit = out_bytes + _resources.kernel_working_bytes(contiguous, threads) + x.nbytes // 2
    monkeypatch.setattr(_resources, "memory_limit", lambda: (limit, "a test limit"))
    with pytest.raises(UpsampleError, match=r"plus .* of working memory, more than a test"):
        onnx_upsample.upsample(x, [2, 2])
    assert onnx_upsample.upsample(contiguous, [2, 2]).shape == (2048, 1024)
