"""The kernels' fast paths run where they should, and nowhere else.

Every fast path gives the same bits as the plain loops (the differential suites prove
that), so the bits cannot tell whether a path still runs: a change that stopped choosing
the row pairs, the collapsed rows or the corner cache found by row number would pass every
other test and only cost speed. The extension counts each path as it runs
(``_native.path_counts()``, which also resets the counts); these tests read the counts of
one call at a time, on one thread, and hold each path to the calls that must take it and
to calls that must not. Where the build has no vector loops (``SIMD_LANES`` 0: the portable
build), the vector paths must not run at all and every linear row is summed by the scalar
loops.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import upsample
from onnx_upsample._kernels import _compiled, _native

VECTOR = _native.SIMD_LANES > 0


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """One thread, so that the counts do not depend on how rows are split, and streaming
    stores only for outputs of the size that takes them (whatever
    ONNX_UPSAMPLE_STREAMING_STORES says: make test runs this file with it too)."""
    monkeypatch.setattr(_compiled, "_stream_choice", "auto")
    onnx_upsample.set_num_threads(1)
    yield
    onnx_upsample._threads._requested = None


def paths(x: np.ndarray, scales: Sequence[float], mode: str = "linear") -> dict[str, int]:
    """The fast paths one call takes (the counts of every call before it are dropped)."""
    _native.path_counts()
    upsample(x, list(scales), mode)
    return _native.path_counts()


def rows_of(shape: Sequence[int], scales: Sequence[float], block: int = 1) -> int:
    """Output rows of an output whose last axis (of `block` elements per position: an
    (H, W, C) image's channels) is the row."""
    out = onnx_upsample.output_shape(shape, list(scales))
    return int(np.prod(out)) // (out[-1] if block == 1 else out[-1] * out[-2])


def on_input_rows(n_in: int, scale: float) -> int:
    """Outputs of an interpolated axis that fall on an input row (weights 1 and 0), by the
    operator's coordinate (float32 o / scale, clamped to the last input; there both taps
    are that input, at 0.5 each)."""
    n_out = int(np.floor(n_in * np.float32(scale)))
    c = np.minimum(np.arange(n_out, dtype=np.float32) / np.float32(scale), np.float32(n_in - 1))
    return int(np.count_nonzero((c == np.floor(c)) & (c < n_in - 1)))


def image(shape: Sequence[int], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 200, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def test_counts_are_taken_once() -> None:
    """Reading the counts resets them, and a call counts its rows once."""
    x = image((1, 3, 20, 30), "float32")
    first = paths(x, [1, 1, 2, 2])
    assert _native.path_counts()["LINEAR_ROWS"] == 0
    assert first["LINEAR_ROWS"] == rows_of(x.shape, [1, 1, 2, 2]) == 120
    assert set(first) == {"LINEAR_ROWS", "SCALAR_SUMS", "VECTOR_SUMS", "IDENTITY_FAST",
                          "IDENTITY_EXACT", "IDENTITY_DOUBLED", "ROW_PAIRS", "SWEEP_PAIRS",
                          "NESTED_PAIRS", "COLLAPSED_ROWS", "DIRECT_CACHE", "SEARCHED_CACHE",
                          "STREAMED_ROWS", "STREAMED_SHARED_LINES", "NEAREST_PLANES",
                          "NEAREST_ROW_PAIRS", "NEAREST_CHUNKS"}


def summed_rows(counts: dict[str, int]) -> int:
    return counts["SCALAR_SUMS"] + counts["VECTOR_SUMS"]


def identity_rows(counts: dict[str, int]) -> int:
    return counts["IDENTITY_FAST"] + counts["IDENTITY_EXACT"] + counts["IDENTITY_DOUBLED"]


@pytest.mark.parametrize(("shape", "scales", "dtype"), [
    ((1, 3, 20, 30), [1, 1, 2, 2], "float32"),
    ((1, 1, 6, 8, 16), [1, 1, 2, 2, 2], "uint8"),
    ((1, 1, 6, 8, 10), [1, 1, 2, 2, 2], "uint8"),  # the row's short axis a blended block
    ((9, 11, 3), [2, 2, 1], "float32"),
    ((2, 7, 13), [1, 1.5, 2.5], "int16"),
])
def test_every_row_is_summed_once(shape, scales, dtype) -> None:
    counts = paths(image(shape, dtype), scales)
    assert summed_rows(counts) == counts["LINEAR_ROWS"] > 0
    # an identity block's rows are a class of those (the channels of a rank-3 image)
    assert identity_rows(counts) == (counts["LINEAR_ROWS"] if len(shape) == 3 and scales[-1] == 1
                                     else 0)


def test_row_pairs_at_x2_and_not_without_vector_loops() -> None:
    """Rows 2k and 2k + 1 at x2 read the same input rows: the vector sums blend them as a
    pair. float64 sums are scalar: never a pair."""
    shape, scales = (1, 3, 20, 30), [1, 1, 2, 2]
    counts = paths(image(shape, "float32"), scales)
    if VECTOR:
        assert counts["ROW_PAIRS"] == rows_of(shape, scales) // 2
        assert counts["VECTOR_SUMS"] == counts["LINEAR_ROWS"]
    else:
        assert counts["ROW_PAIRS"] == 0
        assert counts["SCALAR_SUMS"] == counts["LINEAR_ROWS"]
    wide = paths(image(shape, "float64"), scales)
    assert wide["ROW_PAIRS"] == wide["VECTOR_SUMS"] == 0
    assert wide["SCALAR_SUMS"] == wide["LINEAR_ROWS"] > 0


def test_sweep_pairs_in_volumes_only() -> None:
    """A volume at x2: two sweeps of the innermost outer axis read the same input rows; an
    image has no second interpolated outer axis."""
    volume = paths(image((1, 1, 6, 8, 16), "float32"), [1, 1, 2, 2, 2])
    flat = paths(image((1, 3, 20, 30), "float32"), [1, 1, 2, 2])
    assert flat["SWEEP_PAIRS"] == 0
    if VECTOR:
        # every row pairs with its row in the next sweep (the last two depths read the
        # last plane alike); the vector sums take most as pairs (rows that collapse other
        # axes are summed alone)
        assert volume["SWEEP_PAIRS"] == volume["LINEAR_ROWS"] // 2
        assert volume["SWEEP_PAIRS"] * 0.8 < volume["ROW_PAIRS"] <= volume["SWEEP_PAIRS"]
    else:
        assert volume["SWEEP_PAIRS"] == 0


def test_integer_rows_collapse() -> None:
    """Integer rows on an input row (every other row at x2, but the last input's) leave out
    their weight-0 corners; the first row of each such pair collapses one axis more than
    the second."""
    counts = paths(image((1, 3, 20, 30), "uint8"), [1, 1, 2, 2])
    if VECTOR:
        assert counts["COLLAPSED_ROWS"] == 3 * on_input_rows(20, 2) == 57
        assert counts["NESTED_PAIRS"] == counts["COLLAPSED_ROWS"]
        assert counts["ROW_PAIRS"] == counts["LINEAR_ROWS"] // 2
    else:
        assert counts["COLLAPSED_ROWS"] == counts["NESTED_PAIRS"] == 0


def test_float_rows_collapse_only_where_the_check_pays() -> None:
    """Float rows must be checked plain before they collapse: the check pays in volumes
    (two or more interpolated outer axes, rows found by number), not in an image."""
    flat = paths(image((1, 3, 20, 30), "float32"), [1, 1, 2, 2])
    assert flat["COLLAPSED_ROWS"] == flat["NESTED_PAIRS"] == 0
    volume = paths(image((1, 1, 6, 8, 16), "float32"), [1, 1, 2, 2, 2])
    if VECTOR:
        # a row collapses where its depth or its height falls on an input row
        depth, height = on_input_rows(6, 2), on_input_rows(8, 2)
        assert volume["COLLAPSED_ROWS"] == 12 * 16 - (12 - depth) * (16 - height)
    else:
        assert volume["COLLAPSED_ROWS"] == 0


def test_float_rows_that_are_not_plain_do_not_collapse() -> None:
    x = image((1, 1, 6, 8, 16), "float32")
    x[..., 0] = np.nan  # every input row holds a NaN
    assert paths(x, [1, 1, 2, 2, 2])["COLLAPSED_ROWS"] == 0


def test_rows_collapse_only_at_scales_that_fall_on_input_rows_often() -> None:
    """At x2.5 one output row in five falls on an input row: integer rows still collapse
    there, float ones (whose rows would be checked for it) do not."""
    scales = [1, 1, 2.5, 2.5, 2.5]
    floats = paths(image((1, 1, 6, 8, 16), "float32"), scales)
    assert floats["COLLAPSED_ROWS"] == 0
    integers = paths(image((1, 1, 6, 8, 16), "int16"), scales)
    assert (integers["COLLAPSED_ROWS"] > 0) == VECTOR


def test_corner_cache_finds_rows_by_number_where_they_fit() -> None:
    """Two steps of the outermost interpolated axis in LINEAR_DIRECT_CACHE_BYTES: each
    input row has its slot. Planes of rows too long for it: the slots are searched."""
    small = paths(image((1, 1, 6, 16, 16), "float32"), [1, 1, 2, 2, 2])
    assert small["DIRECT_CACHE"] > 0 and small["SEARCHED_CACHE"] == 0
    # two planes of 256 rows of 2 x 512 float32 taps: 1 MiB, beyond the 512 KiB bound
    assert 2 * 256 * (2 * 512 * 4 + 64) > _native.LINEAR_DIRECT_CACHE_BYTES
    large = paths(image((1, 1, 3, 256, 256), "float32"), [1, 1, 2, 2, 2])
    assert large["SEARCHED_CACHE"] > 0 and large["DIRECT_CACHE"] == 0


def test_identity_block_of_rank_3_images_only() -> None:
    """ORT's rank-3 kernel interpolates an (H, W, C) image's channels at scale 1: the
    channels are an identity block, summed fast where the rows are plain, with every term
    where they are not, and doubled where every sum is exact (uint8 at x2)."""
    shape, scales = (9, 11, 3), [2, 2, 1]
    rows = rows_of(shape, scales, block=3)
    fast = paths(image(shape, "float32"), scales)
    special = image(shape, "float32")
    special[:, 0, 0] = np.inf  # every input row holds an infinity
    exact = paths(special, scales)
    doubled = paths(image(shape, "uint8"), scales)
    thirds = paths(image(shape, "uint8"), [3, 3, 1])  # weights of 1/3: sums not exact
    if VECTOR:
        assert fast["IDENTITY_FAST"] == rows
        assert doubled["IDENTITY_DOUBLED"] == rows
        assert thirds["IDENTITY_FAST"] == thirds["LINEAR_ROWS"] > 0
        assert thirds["IDENTITY_DOUBLED"] == 0
    else:
        assert fast["IDENTITY_EXACT"] == doubled["IDENTITY_EXACT"] == rows
    assert exact["IDENTITY_EXACT"] == rows
    assert exact["IDENTITY_FAST"] == exact["IDENTITY_DOUBLED"] == 0
    for shape, scales in [((1, 9, 11, 3), [1, 2, 2, 1]), ((3, 9, 11), [1, 2, 2])]:
        other = paths(image(shape, "float32"), scales)
        assert other["IDENTITY_FAST"] == other["IDENTITY_EXACT"] == 0, (shape, scales)
        assert other["IDENTITY_DOUBLED"] == 0, (shape, scales)


@pytest.fixture
def streaming(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Streaming stores for every output (ONNX_UPSAMPLE_STREAMING_STORES=always)."""
    monkeypatch.setattr(_compiled, "_stream_choice", "always")
    yield


def test_streamed_rows_stream_their_shared_lines(streaming: None) -> None:
    """Streamed float32 rows with a whole cache line of their own stream the parts of lines
    they share from a buffer; rows shorter than a line are stored the ordinary way."""
    long_rows = paths(image((1, 3, 7, 29), "float32"), [1, 1, 2, 2])  # rows of 58 floats
    assert long_rows["STREAMED_ROWS"] == long_rows["LINEAR_ROWS"] > 0
    assert (long_rows["STREAMED_SHARED_LINES"] > 0) == VECTOR
    short_rows = paths(image((1, 1, 4, 5), "float32"), [1, 1, 2, 2])  # rows of 10 floats
    assert short_rows["STREAMED_ROWS"] == short_rows["LINEAR_ROWS"] > 0
    assert short_rows["STREAMED_SHARED_LINES"] == 0


def test_ordinary_stores_below_the_streaming_size() -> None:
    counts = paths(image((1, 3, 7, 29), "float32"), [1, 1, 2, 2])
    assert counts["STREAMED_ROWS"] == counts["STREAMED_SHARED_LINES"] == 0


def test_nearest_planes_at_x2_on_two_axes() -> None:
    """x2 on the row and the axis above it: a plane at a time where the build has 16-byte
    moves (every SIMD backend), pairs of rows otherwise; x3: neither."""
    shape = (1, 4, 13, 13)
    twice = paths(image(shape, "float32"), [1, 1, 2, 2], "nearest")
    if VECTOR:
        assert twice["NEAREST_PLANES"] == rows_of(shape, [1, 1, 2, 2])
    else:
        assert twice["NEAREST_PLANES"] == 0
        assert twice["NEAREST_ROW_PAIRS"] == rows_of(shape, [1, 1, 2, 2]) // 2
    thrice = paths(image(shape, "float32"), [1, 1, 3, 3], "nearest")
    assert thrice["NEAREST_PLANES"] == thrice["NEAREST_ROW_PAIRS"] == 0


def test_nearest_chunks_with_the_avx2_loops_only() -> None:
    """Gathered rows of 4-byte positions by 32-byte permutes: the AVX2 loops alone have
    them."""
    counts = paths(image((1, 2, 16, 64), "float32"), [1, 1, 1, 1.5], "nearest")
    assert (counts["NEAREST_CHUNKS"] > 0) == (_compiled.isa() == _native.ISA_AVX2)
    repeated = paths(image((1, 2, 16, 64), "float32"), [1, 1, 1, 2], "nearest")
    assert repeated["NEAREST_CHUNKS"] == 0
