"""The ``onnx-upsample`` command line (also ``python -m onnx_upsample``).

Conventions (contract §4): numbers are space separated (``--scales 1 1 2 2``); errors are one
line on stderr, with no traceback; exit 0 on success, 1 for findings or a failed check,
2 for bad arguments or input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np

from ._errors import UpsampleError

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _fail(message: str) -> int:
    print(f"onnx-upsample: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _cmd_apply(args: argparse.Namespace) -> int:
    from ._api import upsample

    try:
        x = np.load(args.input, allow_pickle=False)
    except FileNotFoundError:
        return _fail(f"input file {args.input!r} does not exist")
    except (OSError, ValueError) as error:
        return _fail(f"cannot read {args.input!r} as a .npy array: {error}")
    y = upsample(x, args.scales, args.mode)
    _save_npy_atomically(args.output, y)
    if not args.quiet:
        print(f"{args.input} {x.shape} {x.dtype} -> {args.output} {y.shape} ({args.mode})")
    return EXIT_OK


def _save_npy_atomically(path: str, array: np.ndarray) -> None:
    """Write to a temporary file beside ``path`` and rename: never a half-written output."""
    import os
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".onnx-upsample-", suffix=".npy", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            np.save(stream, array, allow_pickle=False)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._demo import run_demo

    return EXIT_OK if run_demo(print) else EXIT_FINDINGS


# Modules that add subcommands: each has ``register(subparsers) -> None`` and imports its
# heavy dependencies (onnx, dask, Pillow) only inside its handlers.
COMMAND_MODULES: tuple[str, ...] = ()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(prog="onnx-upsample", description="The ONNX Upsample operator, exact.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    demo = sub.add_parser("demo", help="run the operator documentation's examples and check them")
    demo.set_defaults(handler=_cmd_demo)

    apply = sub.add_parser("apply", help="upsample an array file")
    apply.add_argument("input", help="input .npy file")
    apply.add_argument("output", help="output .npy file")
    apply.add_argument("--scales", type=float, nargs="+", required=True, metavar="S",
                       help="one scale per axis, space separated, each >= 1")
    apply.add_argument("--mode", default="nearest",
                       help="nearest (default) or linear")
    apply.add_argument("--quiet", action="store_true", help="print nothing on success")
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
        return _fail(str(error))
    except KeyboardInterrupt:
        print("onnx-upsample: interrupted", file=sys.stderr)
        return 130
