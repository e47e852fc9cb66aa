"""``onnx-upsample compare``: why frameworks disagree about nearest upsampling, in one picture.

A thin command over :mod:`onnx_upsample.compare`: it reads the image, checks the options,
and prints and saves what :func:`onnx_upsample.compare.compare` and ``render`` give. Pillow
and the comparison load inside the handler.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .._spec.spelling import command_line
from ._common import EXIT_OK, add_output_options, note, print_json

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand to the ``onnx-upsample`` parser."""
    compare = subparsers.add_parser(
        "compare",
        help="picture of ONNX nearest/linear results and the nearest index maps of "
        "ONNX, PyTorch and OpenCV",
        description="Render IN (an image or a 2-D/3-D .npy), its ONNX Upsample nearest and "
        "linear results, and the nearest index maps of ONNX Upsample (onnxruntime 1.32), "
        "PyTorch interpolate(scale_factor=s) and OpenCV resize(INTER_NEAREST) side by side, "
        "all three with the float32 scale an ONNX file holds; print the maps and how many "
        "pixels each peer reads differently.",
    )
    compare.add_argument("input", help="input image (.png .jpg .tif) or .npy")
    compare.add_argument("-o", "--output", required=True, help="output picture (.png)")
    compare.add_argument("--scales", "--scale", dest="scale", type=float, nargs="+",
                         required=True, metavar="S",
                         help="one scale for height and width, or two (height width); "
                         "--scale is its old name")
    compare.add_argument("--zoom", type=int, default=None,
                         help="screen pixels per output pixel (default: fit about 240)")
    add_output_options(compare, json_help="print one JSON object: the scales, the shapes, "
                       "and per framework its row and column maps and how many pixels it "
                       "reads differently from ONNX")
    compare.set_defaults(handler=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import check_comparison, check_zoom, compare, render
    from ..io import formats

    if len(args.scale) not in (1, 2):
        raise UpsampleError(
            f"--scales has {len(args.scale)} values; give one (height and width) or two "
            "(height width)"
        )
    if args.zoom is not None:
        check_zoom(args.zoom, "--zoom")
    if formats.kind_of(args.output, "output") != "image" or not args.output.lower().endswith(
        ".png"
    ):
        raise UpsampleError(f"output {args.output!r} must be a .png file")
    image = _load(args.input)
    scales = [float(s) for s in args.scale] * (2 // len(args.scale))
    # compare's checks worded for the command line (value 1 of --scales) before it runs them
    check_comparison(image, scales, command_line(args.input))
    comparison = compare(image, scales)
    picture = render(image, comparison, zoom=args.zoom)
    formats.save_image(args.output, picture)
    if args.json:
        print_json({"command": "compare", "input": args.input, "output": args.output,
                    **comparison.to_dict(), "warnings": []})
    else:
        note(args, comparison.text())
        note(args, f"wrote {args.output}")
    return EXIT_OK


def _load(path: str) -> np.ndarray:
    from ..io import formats

    source = formats.read(path)
    if source.kind == "zarr":
        raise UpsampleError(f"input {path!r} is a zarr store; compare takes an image or a "
                            "2-D (height, width) or 3-D (height, width, channels) .npy")
    data = np.asarray(source.data)
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("="))
