"""``onnx-upsample apply`` (files in, files out) and ``demo`` (the documented examples).

The file formats, chunking and atomic writes are :mod:`onnx_upsample.io`'s; this module
parses, calls and prints.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._api import upsample
from .._spec.modes import ModeName
from ..io.formats import DEFAULT_JPEG_QUALITY
from ._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_output_options,
    fail,
    note,
    print_json,
    warn,
)

__all__ = ["DemoResult", "Example", "demo_results", "demo_verdict", "examples", "register",
           "run_demo", "show_demo", "show_example"]


def register(subparsers: Any) -> None:
    """Add the ``demo`` and ``apply`` subcommands to the ``onnx-upsample`` parser."""
    demo = subparsers.add_parser(
        "demo", help="run the operator documentation's examples and check them",
        description="Run the documented examples of ONNX Upsample (the operator page, "
        "onnxruntime's own tests) and check each output; exit 1 if one differs.")
    add_output_options(demo, json_help="print one JSON object: each example's title, "
                       "scales, mode, shapes, element type and whether it matched")
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
    apply.add_argument("--jpeg-quality", type=int, metavar="Q",
                       help="quality of a .jpg/.jpeg output, 1 (smallest) to 100 (default "
                       f"{DEFAULT_JPEG_QUALITY})")
    apply.add_argument("--overwrite", action="store_true",
                       help="allow OUT to be IN itself (refused otherwise, under any path); "
                       "another existing OUT is always replaced, once the new one is complete")
    add_output_options(apply, json_help="print one JSON object: input, output, shapes, "
                       "element type, mode, scales, seconds")
    apply.set_defaults(handler=_cmd_apply)


def _cmd_apply(args: argparse.Namespace) -> int:
    import warnings

    from .._errors import UpsampleWarning
    from ..io import apply as job
    from ..io.atomic import reason

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        try:
            # progress and slow steps go to stderr, so they neither mix with --json's one
            # object on stdout nor show under -q
            result = job.apply(
                args.input, args.output, args.scales, args.mode, chunks=args.chunks,
                zarr_format=args.zarr_format, progress=None if args.quiet else sys.stderr,
                overwrite=args.overwrite, jpeg_quality=args.jpeg_quality,
            )
        except (OSError, MemoryError) as error:  # a full disk, a failed read: bad input
            return fail(f"cannot upsample {args.input!r} into {args.output!r}: "
                        f"{reason(error)}")
    for warning in caught:
        warn(warning.message)
    if args.json:
        print_json({
            "command": "apply", "input": args.input, "output": args.output,
            "scales": list(result.scales), "mode": result.mode,
            "input_shape": list(result.in_shape), "output_shape": list(result.out_shape),
            "dtype": result.in_dtype.name, "chunked": result.chunked,
            "replaced": result.replaced, "seconds": round(result.seconds, 3),
            "warnings": [str(w.message) for w in caught],
        })
    else:
        note(args, job.summary(args.input, args.output, result))
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    results = demo_results()
    if args.json:
        print_json({
            "command": "demo",
            "examples": [
                {"title": r.example.title, "scales": r.example.scales, "mode": r.example.mode,
                 "dtype": r.example.x.dtype.name, "input_shape": list(r.example.x.shape),
                 "output_shape": list(r.y.shape), "matches": r.ok}
                for r in results
            ],
            "all_match": all(r.ok for r in results),
            "warnings": [],
        })
        return EXIT_OK if all(r.ok for r in results) else EXIT_FINDINGS
    for result in results:
        show_example(result, lambda line: note(args, line))
    ok = all(r.ok for r in results)
    # a mismatch is why the exit status is 1: said under -q too
    note(args, demo_verdict(results), failing=not ok)
    return EXIT_OK if ok else EXIT_FINDINGS


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


@dataclass(frozen=True)
class DemoResult:
    """One example run: its output and whether it is the documented one."""

    example: Example
    y: np.ndarray
    ok: bool


def demo_results() -> list[DemoResult]:
    """Run every example and compare each output with the documented one."""
    results = []
    for example in examples():
        y = upsample(example.x, example.scales, cast("ModeName", example.mode))
        ok = y.shape == example.expected.shape and bool(np.array_equal(y, example.expected))
        results.append(DemoResult(example, y, ok))
    return results


def run_demo(emit: Callable[[str], None]) -> bool:
    """Run every example, print input and output, and report whether all match."""
    return show_demo(demo_results(), emit)


def show_demo(results: list[DemoResult], emit: Callable[[str], None]) -> bool:
    """Print each example's input and output and the verdict; whether all match."""
    for result in results:
        show_example(result, emit)
    emit(demo_verdict(results))
    return all(result.ok for result in results)


def show_example(result: DemoResult, emit: Callable[[str], None]) -> None:
    """Print one example's input and output, and whether it matches."""
    example, y, ok = result.example, result.y, result.ok
    emit(f"== {example.title}")
    emit(f"input {example.x.dtype} {example.x.shape}:\n{example.x.squeeze()}")
    emit(f"output {y.dtype} {y.shape}:\n{y.squeeze()}")
    emit("check: " + ("matches the documented output" if ok else "MISMATCH"))
    if not ok:
        emit(f"expected:\n{example.expected.squeeze()}")
    emit("")


def demo_verdict(results: list[DemoResult]) -> str:
    """"all examples match", or which did not."""
    failed = [result.example.title for result in results if not result.ok]
    if not failed:
        return "all examples match"
    return f"{len(failed)} of {len(results)} examples did not match: " + "; ".join(failed)
