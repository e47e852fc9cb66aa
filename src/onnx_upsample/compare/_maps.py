"""The comparison: ONNX Upsample's results and the three nearest index maps (numpy only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._api import upsample
from .._errors import UpsampleError
from .._spec.call import Call, check_described
from .._spec.peers import opencv_nearest_indices, pytorch_nearest_indices
from .._spec.spelling import PYTHON, Spelling

__all__ = ["MAX_SIDE", "Comparison", "IndexMap", "check_comparison", "compare"]

# compare draws a cell per output pixel, three maps side by side: past this many pixels a side
# the picture is beyond a screen (and the index tables beyond reading)
MAX_SIDE = 1024


@dataclass(frozen=True)
class IndexMap:
    """Source row and column of every output pixel under one framework's nearest rule."""

    name: str
    rows: np.ndarray  # (H_out, W_out)
    cols: np.ndarray
    row_table: np.ndarray  # per axis, for the text summary
    col_table: np.ndarray


@dataclass(frozen=True)
class Comparison:
    """The results and index maps ``compare`` draws."""

    scales: list[float]
    nearest: np.ndarray
    linear: np.ndarray
    maps: list[IndexMap]

    def differing(self, index: int) -> tuple[int, int]:
        """(pixels that read another input pixel than ONNX, ONNX's pixel count)."""
        ref, other = self.maps[0], self.maps[index]
        total = ref.rows.size
        if other.rows.shape != ref.rows.shape:
            h = min(ref.rows.shape[0], other.rows.shape[0])
            w = min(ref.rows.shape[1], other.rows.shape[1])
            same = ((ref.rows[:h, :w] == other.rows[:h, :w])
                    & (ref.cols[:h, :w] == other.cols[:h, :w]))
            return total - int(same.sum()), total
        same = (ref.rows == other.rows) & (ref.cols == other.cols)
        return total - int(same.sum()), total

    def to_dict(self) -> dict[str, object]:
        """The scales, the results' shape and each map, for ``--json``."""
        maps = []
        for position, index_map in enumerate(self.maps):
            entry: dict[str, object] = {
                "name": index_map.name, "shape": list(index_map.rows.shape),
                "rows": index_map.row_table.tolist(), "cols": index_map.col_table.tolist(),
            }
            if position:
                entry["differing"], entry["of"] = self.differing(position)
            maps.append(entry)
        return {"scales": self.scales, "output_shape": list(self.nearest.shape),
                "maps": maps}

    def text(self) -> str:
        """The per-axis index maps and how often each peer differs from ONNX."""
        lines = [f"nearest index maps, scales {self.scales[0]:g} x {self.scales[1]:g}:"]
        for position, index_map in enumerate(self.maps):
            rows = " ".join(str(int(i)) for i in index_map.row_table[:32])
            cols = " ".join(str(int(i)) for i in index_map.col_table[:32])
            more_r = " ..." if index_map.row_table.size > 32 else ""
            more_c = " ..." if index_map.col_table.size > 32 else ""
            size = f"{index_map.rows.shape[0]}x{index_map.rows.shape[1]}"
            verdict = ""
            if position:
                diff, total = self.differing(position)
                verdict = f"; reads another pixel than ONNX at {diff} of {total}"
            lines.append(f"  {index_map.name} ({size}{verdict})")
            lines.append(f"    rows: {rows}{more_r}")
            lines.append(f"    cols: {cols}{more_c}")
        return "\n".join(lines)


def check_image(image: np.ndarray, name: str = "x") -> None:
    """What :func:`compare` draws: a non-empty 2-D (height, width) or 3-D (height, width,
    channels) array of numbers with 1 to 4 channels."""
    if image.ndim not in (2, 3):
        raise UpsampleError(f"{name} has shape {image.shape}; compare takes an image: 2-D "
                            "(height, width) or 3-D (height, width, channels)")
    if image.dtype.kind not in "biuf":
        raise UpsampleError(f"{name} has element type {image.dtype.name}; compare takes "
                            "numbers")
    if image.ndim == 3 and image.shape[2] not in (1, 2, 3, 4):
        raise UpsampleError(f"{name} has {image.shape[2]} channels; compare takes 1 to 4")
    if image.size == 0:
        raise UpsampleError(f"{name} is empty (shape {image.shape})")


def check_comparison(image: np.ndarray, scales: object, spelling: Spelling = PYTHON) -> Call:
    """Every check of :func:`compare`'s arguments (worded as ``spelling`` names them): the
    image, the Upsample call on its height and width, and the size of the picture."""
    check_image(image, spelling.x)
    h, w = image.shape[:2]
    call, _ = check_described((h, w), image.dtype, scales, "nearest", spelling)
    if max(call.out_shape) > MAX_SIDE:
        given = [float(s) for s in call.scales]
        raise UpsampleError(
            f"{spelling.scales} {spelling.shown(given)} would make {spelling.x} of {h} x {w} "
            f"pixels {call.out_shape[0]} x {call.out_shape[1]}; compare draws every output "
            f"pixel, at most {MAX_SIDE} per side: use smaller {spelling.scales} or a crop of "
            "the image"
        )
    return call


def compare(image: np.ndarray, scales: Sequence[float]) -> Comparison:
    """ONNX ``Upsample`` (versions 7, 9, 10) nearest and linear results of ``image``, and the
    nearest index maps of ONNX Upsample, PyTorch and OpenCV.

    Parameters
    ----------
    image : numpy.ndarray
        2-D (height, width) or 3-D (height, width, channels; 1 to 4) array of numbers.
    scales : sequence of float
        The height and width scales (each >= 1), every rule given the float32 value an ONNX
        file holds; the output is at most :data:`MAX_SIDE` pixels a side.

    Returns
    -------
    Comparison
        The results, the three index maps, and how many pixels each peer reads
        differently (``differing``), as text (``text()``) or JSON (``to_dict()``).

    Raises
    ------
    UpsampleError
        ``image`` is not a non-empty 2-D or 3-D array of numbers with 1 to 4 channels, a
        scale is not finite and >= 1, or the output has more than :data:`MAX_SIDE` pixels a
        side.
    TypeError
        ``scales`` are not numbers.
    """
    image = np.asarray(image)
    scales = [float(s) for s in check_comparison(image, scales).scales]
    h, w = image.shape[:2]
    full = [*scales, 1.0] if image.ndim == 3 else list(scales)
    values = image.astype(np.float32) if image.dtype.kind == "b" else image
    nearest = upsample(values, full, "nearest")
    linear = upsample(values, full, "linear")
    numbers = np.arange(h * w, dtype=np.int64).reshape(h, w)
    ort = upsample(numbers, scales, "nearest")
    ort_rows, ort_cols = ort // w, ort % w
    maps = [IndexMap("ONNX Upsample / onnxruntime", ort_rows, ort_cols,
                     ort_rows[:, 0], ort_cols[0, :])]
    t_rows = pytorch_nearest_indices(h, scales[0])
    t_cols = pytorch_nearest_indices(w, scales[1])
    rows, cols = np.meshgrid(t_rows, t_cols, indexing="ij")
    maps.append(IndexMap("PyTorch interpolate(scale_factor)", rows, cols, t_rows, t_cols))
    c_rows = opencv_nearest_indices(h, ort.shape[0])
    c_cols = opencv_nearest_indices(w, ort.shape[1])
    rows, cols = np.meshgrid(c_rows, c_cols, indexing="ij")
    maps.append(IndexMap("OpenCV resize(INTER_NEAREST)", rows, cols, c_rows, c_cols))
    return Comparison(list(scales), nearest, linear, maps)


