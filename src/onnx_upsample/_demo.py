"""``onnx-upsample demo``: the operator documentation's own examples, run and checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._api import upsample


@dataclass(frozen=True)
class Example:
    """One documented case: where it comes from, its input, scales, mode and expected output."""

    title: str
    x: np.ndarray
    scales: list[float]
    mode: str
    expected: np.ndarray


def examples() -> list[Example]:
    """The documented examples (ONNX operator page; ORT 1.32's own Upsample tests)."""
    x = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    bilinear_x = np.array([[[[1, 3], [3, 5]]], [[[3, 5], [7, 9]]]], dtype=np.float32)
    bilinear_rows = [
        [1, 1.5, 2, 2.5, 3, 3, 3, 3], [2, 2.5, 3, 3.5, 4, 4, 4, 4],
        [3, 3.5, 4, 4.5, 5, 5, 5, 5], [3, 3.5, 4, 4.5, 5, 5, 5, 5],
        [3, 3.5, 4, 4.5, 5, 5, 5, 5], [5, 5.5, 6, 6.5, 7, 7, 7, 7],
        [7, 7.5, 8, 8.5, 9, 9, 9, 9], [7, 7.5, 8, 8.5, 9, 9, 9, 9],
    ]
    bilinear_y = np.array(bilinear_rows, dtype=np.float32).reshape(2, 1, 4, 8)
    return [
        Example(
            "Upsample-9 'nearest' (ONNX test_upsample_nearest): 2x2 -> 4x6, scales [1,1,2,3]",
            x, [1, 1, 2, 3], "nearest",
            np.array([[[[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2],
                        [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]]], dtype=np.float32),
        ),
        Example(
            "Upsample-1 'nearest', height_scale=2, width_scale=2: 2x2 -> 4x4",
            x, [1, 1, 2, 2], "nearest",
            np.array([[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]],
                     dtype=np.float32),
        ),
        Example(
            "Upsample-9 'linear' (ORT UpsampleOp4DBilinearTest): 2x1x2x2 -> 2x1x4x8, "
            "scales [1,1,2,4]",
            bilinear_x, [1, 1, 2, 4], "linear", bilinear_y,
        ),
        Example(
            "the same on int32: results truncate toward zero (1.5 -> 1)",
            bilinear_x.astype(np.int32), [1, 1, 2, 4], "linear",
            np.trunc(bilinear_y).astype(np.int32),
        ),
    ]


def run_demo(emit: Callable[[str], None]) -> bool:
    """Run every example, print input and output, and report whether all match."""
    all_ok = True
    for example in examples():
        y = upsample(example.x, example.scales, example.mode)
        ok = y.shape == example.expected.shape and bool(np.array_equal(y, example.expected))
        all_ok &= ok
        emit(f"== {example.title}")
        emit(f"input {example.x.dtype} {example.x.shape}:\n{example.x.squeeze()}")
        emit(f"output {y.dtype} {y.shape}:\n{y.squeeze()}")
        emit("check: " + ("matches the documented output" if ok else "MISMATCH"))
        if not ok:
            emit(f"expected:\n{example.expected.squeeze()}")
        emit("")
    emit("all examples match" if all_ok else "some examples did not match")
    return all_ok
