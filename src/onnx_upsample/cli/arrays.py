"""``onnx-upsample apply`` (files in, files out) and ``demo`` (the documented examples).

The file formats, chunking and atomic writes are :mod:`onnx_upsample.io`'s; this module
parses, calls and prints.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._api import upsample
from ._common import EXIT_FINDINGS, EXIT_OK, fail, warn

__all__ = ["Example", "examples", "register", "run_demo"]


def register(subparsers: Any) -> None:
    """Add the ``demo`` and ``apply`` subcommands to the ``onnx-upsample`` parser."""
    demo = subparsers.add_parser(
        "demo", help="run the operator documentation's examples and check them")
    demo.set_defaults(handler=_cmd_demo)

    apply = subparsers.add_parser(
        "apply", help="upsample an array file, image or zarr store",
        description="Upsample IN into OUT. Formats by suffix: .npy, .png, .jpg/.jpeg, "
        ".tif/.tiff (Pillow) and .zarr stores (read and written chunk by chunk through dask). "
        "Images take two scales (height width; channels stay) or three (height width "
        "channels). The output is written beside OUT under a hidden name and renamed only "
        "when complete.",
    )
    apply.add_argument("input", help="input .npy, image (.png .jpg .tif) or .zarr store")
    apply.add_argument("output", help="output .npy, image (.png .jpg .tif) or .zarr store")
    apply.add_argument("--scales", type=float, nargs="+", required=True, metavar="S",
                       help="one scale per axis, space separated, each >= 1")
    apply.add_argument("--mode", default="nearest",
                       help="nearest (default) or linear")
    apply.add_argument("--chunks", type=int, nargs="+", metavar="N",
                       help="output chunk size, one for every axis or one per axis (-1: whole "
                       "axis); runs chunk by chunk through dask")
    apply.add_argument("--zarr-format", type=int, choices=(2, 3), default=3,
                       help="format of a zarr output (default 3)")
    apply.add_argument("--quiet", action="store_true",
                       help="print nothing on success and show no progress bar")
    apply.set_defaults(handler=_cmd_apply)


def _cmd_apply(args: argparse.Namespace) -> int:
    import warnings

    from .._errors import UpsampleWarning
    from ..io import apply as job
    from ..io.atomic import reason

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        try:
            result = job.apply(
                args.input, args.output, args.scales, args.mode, chunks=args.chunks,
                zarr_format=args.zarr_format, progress=None if args.quiet else sys.stderr,
            )
        except (OSError, MemoryError) as error:  # a full disk, a failed read: bad input
            return fail(f"cannot upsample {args.input!r} into {args.output!r}: "
                        f"{reason(error)}")
    for warning in caught:
        warn(warning.message)
    if not args.quiet:
        print(job.summary(args.input, args.output, result, args.mode))
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    return EXIT_OK if run_demo(print) else EXIT_FINDINGS


# --- demo: the operator documentation's own examples, run and checked ----------------------


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
