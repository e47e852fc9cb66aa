"""Process-level robustness (issue 10): what differential tests never see.

Each test here failed before its fix: a crash, a hang, a silently dropped mask, a huge
allocation while building a dask graph, a file that filled the disk, a raw error from a
dependency. Fork safety and Ctrl-C are in test_native.py.
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from ort_oracle import ort_upsample

import onnx_upsample
from onnx_upsample import UpsampleError, reference, upsample

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("shape", [(2, 2), (200, 300)])
def test_matrix_out_gets_the_result(shape: tuple[int, int]) -> None:
    """numpy.matrix as out= is filled as the plain array it is (it used to stay zeros and
    then crash the interpreter)."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = ort_upsample(x, [2, 1.5], "linear")
    out = np.asmatrix(np.zeros(expected.shape, np.float32))
    result = upsample(x, [2, 1.5], "linear", out=out)
    assert result is out
    assert np.asarray(out).tobytes() == expected.tobytes()


def test_masked_arrays_are_refused() -> None:
    with pytest.raises(TypeError, match="out is a masked array"):
        upsample(X, [2, 1.5], out=np.ma.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="x is a masked array"):
        upsample(np.ma.array(X, mask=[[0, 1, 0], [0, 0, 0]]), [2, 1.5])


def test_results_stay_correct_after_a_mask_was_refused() -> None:
    """The refusal happens before anything is cached or written."""
    out = np.full((4, 4), -1, np.float32)
    with pytest.raises(TypeError):
        upsample(np.ma.array(X), [2, 1.5], out=out)
    assert (out == -1).all()
    assert upsample(X, [2, 1.5]).tobytes() == onnx_upsample.reference.upsample(
        X, [2, 1.5]).tobytes()


def test_memo_never_lets_bools_pass_for_numbers() -> None:
    """1 and True are equal dictionary keys: the memo of checked calls must not make a
    call with bool scales succeed after one with integer scales."""
    upsample(X, [1, 2])
    with pytest.raises(TypeError, match="scales"):
        upsample(X, [True, 2])


dask = pytest.importorskip("dask")


def test_dask_graph_for_a_huge_output_is_built_in_small_memory() -> None:
    """Scales of 1e9 used to allocate a 22 GiB index table while building the graph; now
    the graph costs O(chunks) and the impossible chunk is refused, naming its size."""
    import dask.array as da

    import onnx_upsample.dask as oud

    tracemalloc.start()
    try:
        with pytest.raises(UpsampleError, match=r"largest output chunk .* EiB"):
            oud.upsample(da.zeros((3, 4), chunks=2), [1e9, 1e9])
        with pytest.raises(UpsampleError, match=r"chunks is 1000: .* 1\.2e\+13 chunks"):
            oud.upsample(da.zeros((3, 4), chunks=2), [1e9, 1e9], chunks=1000)
        # a huge output in chunks that fit: the graph costs its 80 tasks, not the output
        x = np.arange(12, dtype=np.float64).reshape(3, 4)
        lazy = oud.upsample(da.from_array(x, chunks=2), [1e4, 1e4], chunks=4000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lazy.shape == (30_000, 40_000)
    assert lazy.numblocks == (8, 10)
    assert peak < 64 * 2**20, f"graph building took {peak / 2**20:.0f} MiB"
    block = lazy.blocks[7, 9].compute()
    # the last block, element by element from the reference's rule (the whole 9.6 GB output
    # is never made)
    scale = np.float32(1e4)
    rows = [reference.nearest_index(o, 3, scale) for o in range(28_000, 30_000)]
    cols = [reference.nearest_index(o, 4, scale) for o in range(36_000, 40_000)]
    assert block.tobytes() == x[np.ix_(rows, cols)].tobytes()


@pytest.mark.parametrize("chunks", [0, (0, 3), {0: 0}, -5])
def test_dask_bad_chunks_name_chunks(chunks: object) -> None:
    import dask.array as da

    import onnx_upsample.dask as oud

    with pytest.raises(UpsampleError, match=r"^chunks is "):
        oud.upsample(da.zeros((3, 4)), [2, 2], chunks=chunks)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnx_upsample", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(("output", "scales", "size"), [
    ("o.npy", ["1e9", "1e9"], "EiB"),
    ("o.npy", ["1", "1e10"], "GiB"),
    ("o.zarr", ["1e6", "1e6"], "TiB"),
])
def test_apply_refuses_outputs_larger_than_the_disk(
    tmp_path: Path, output: str, scales: list[str], size: str
) -> None:
    """One line, exit 2, nothing written: the output's size against the disk's free space
    (a .npy was written as a sparse memmap until the disk filled; zarr hung)."""
    np.save(tmp_path / "a.npy", np.ones((3, 4), np.float32))
    result = _cli("apply", "a.npy", output, "--scales", *scales, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert f"{size}, more than the" in lines[0] and "free on its disk" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]


def test_apply_on_a_scalar_gives_advice_the_cli_can_follow(tmp_path: Path) -> None:
    np.save(tmp_path / "s.npy", np.float32(3))
    result = _cli("apply", "s.npy", "o.npy", "--scales", "2", cwd=tmp_path)
    assert result.returncode == 2
    assert "0-d array" in result.stderr and "shape (1,)" in result.stderr
    assert "empty list" not in result.stderr


def test_pooled_results_cannot_resize_in_place_as_documented() -> None:
    """Results of 1 MiB and more live in a reused buffer (README, 'Threads, memory'): they
    do not own their memory, so ndarray.resize refuses them; np.resize works on any."""
    small = upsample(X, [2, 2])
    big = upsample(np.zeros((512, 512), np.float32), [2, 2])
    small.resize((small.size + 1,), refcheck=False)
    with pytest.raises(ValueError, match="does not own its data"):
        big.resize((big.size + 1,), refcheck=False)
    assert np.resize(big, (10,)).shape == (10,)


def test_upgrade_verify_refuses_tensors_beyond_memory(tmp_path: Path) -> None:
    """upgrade --verify computes the shapes ORT will allocate before running it: a
    traceback from ORT's arena before, one line and exit 2 now."""
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx_models import upsample_model

    model = upsample_model("v9-raw", [1, 1, 1e5, 1e5], shape=[1, 1, 4, 4])
    onnx.save(model, tmp_path / "big.onnx")
    result = _cli("upgrade", "big.onnx", "-o", "up.onnx", "--verify", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "tensor 'Y' of shape (1, 1, 400000, 400000)" in result.stderr
    assert "GiB, more than" in result.stderr


def test_linear_over_too_many_axes_is_an_upsample_error() -> None:
    """23 interpolated axes (2**23 corners per output) reached the kernel's table check as a
    plain ValueError; it is refused with the count and the fix, in memory and with dask."""
    x = np.zeros((1,) * 21 + (3, 4), np.float32)
    scales = [1.5] * 21 + [2, 2]
    with pytest.raises(UpsampleError, match="would interpolate 23 axes"):
        upsample(x, scales, "linear")
    assert upsample(x, scales, "nearest").shape == (1,) * 21 + (6, 8)


def _unaligned(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A writable C-contiguous array at an odd byte offset of its buffer."""
    values = (np.random.default_rng(1).standard_normal(shape) * 50).astype(dtype)
    buffer = bytearray(values.nbytes + 1)
    view = np.frombuffer(buffer, dtype=dtype, count=values.size, offset=1).reshape(shape)
    view[...] = values
    return view


@pytest.mark.parametrize(("dtype", "mode"), [
    ("float32", "linear"), ("float64", "nearest"), ("int16", "linear"), ("complex64", "nearest"),
])
def test_unaligned_x_gives_the_same_bits(dtype: str, mode: str) -> None:
    """A view at an odd byte offset is C-contiguous but unaligned: the typed C loops read a
    contiguous aligned copy of it."""
    x = _unaligned(dtype, (5, 6))
    assert not x.flags.aligned and x.flags.c_contiguous
    expected = onnx_upsample.reference.upsample(np.array(x), [2, 1.5], mode)
    assert upsample(x, [2, 1.5], mode).tobytes() == expected.tobytes()
    assert upsample(x, [2, 1.5], mode).tobytes() == expected.tobytes()  # the memo path too


def test_unaligned_out_is_refused() -> None:
    out = _unaligned("float32", (4, 4))
    assert not out.flags.aligned and out.flags.writeable
    before = out.copy()
    with pytest.raises(UpsampleError, match="out is not aligned"):
        upsample(np.ones((2, 2), np.float32), [2, 2], out=out)
    assert out.tobytes() == before.tobytes()
