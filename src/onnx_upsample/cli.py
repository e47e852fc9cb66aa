"""The ``onnx-upsample`` command line (also ``python -m onnx_upsample``).

Conventions (docs/semantics.md §4): numbers are space separated (``--scales 1 1 2 2``);
errors are one line on stderr, with no traceback; exit 0 on success, 1 for findings or a
failed check, 2 for bad arguments or input. This module owns the exit codes and the error
path; _cli_files.py and _cli_onnx.py add their command groups, and every file a command
writes goes through one atomic writer (``_files.atomic_path``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ._errors import UpsampleError

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def fail(message: str) -> int:
    """The one error path of the command line: one line on stderr, exit code 2."""
    print(f"onnx-upsample: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _cmd_apply(args: argparse.Namespace) -> int:
    import warnings

    from . import _files
    from ._errors import UpsampleWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        try:
            result = _files.apply(
                args.input, args.output, args.scales, args.mode, chunks=args.chunks,
                zarr_format=args.zarr_format, progress=None if args.quiet else sys.stderr,
            )
        except (OSError, MemoryError) as error:
            return fail(f"cannot upsample {args.input!r} into {args.output!r}: "
                         f"{_files.reason(error)}")
    for warning in caught:
        print(f"onnx-upsample: warning: {warning.message}", file=sys.stderr)
    if not args.quiet:
        print(_files.summary(args.input, args.output, result, args.mode))
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._demo import run_demo

    return EXIT_OK if run_demo(print) else EXIT_FINDINGS


# Modules that add subcommands: each has ``register(subparsers) -> None`` and imports its
# heavy dependencies (onnx, dask, Pillow) only inside its handlers.
COMMAND_MODULES: tuple[str, ...] = ("_cli_files", "_cli_onnx", "_cli_conformance")


# Optional dependencies and the extra that brings each (one line when one is missing).
EXTRAS = {
    "onnx": "onnx", "onnxruntime": "test", "ml_dtypes": "onnx", "google": "onnx",
    "dask": "dask", "distributed": "dask", "zarr": "dask", "numcodecs": "dask",
    "PIL": "images",
}
PACKAGE_NAMES = {"PIL": "Pillow", "google": "protobuf"}


def _missing_extra(error: ModuleNotFoundError) -> str:
    top = (error.name or "").split(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        raise error
    package = PACKAGE_NAMES.get(top, top)
    if top == "onnxruntime":
        return ("this command needs onnxruntime, which is not installed: "
                "pip install 'onnxruntime==1.32.*'")
    return (f"this command needs {package}, which is not installed: "
            f"pip install 'onnx-upsample[{extra}]'")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnx-upsample")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(prog="onnx-upsample", description="The ONNX Upsample operator, exact.")
    parser.add_argument("--version", action="version",
                        version=f"onnx-upsample {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    demo = sub.add_parser("demo", help="run the operator documentation's examples and check them")
    demo.set_defaults(handler=_cmd_demo)

    apply = sub.add_parser(
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

    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (UpsampleError, TypeError) as error:
        return fail(str(error))
    except ModuleNotFoundError as error:  # an optional dependency (extra) is missing
        return fail(_missing_extra(error))
    except KeyboardInterrupt:
        print("onnx-upsample: interrupted", file=sys.stderr)
        return 130
