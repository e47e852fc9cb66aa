"""The ``onnx-upsample`` command line (also ``python -m onnx_upsample``).

Conventions (docs/semantics.md §4): numbers are space separated (``--scales 1 1 2 2``);
errors are one line on stderr, with no traceback, and their hints name options and commands
(the checks are worded through :mod:`onnx_upsample._spec.spelling`, never rewritten here);
no command prints the usage and the commands; exit 0 on success, 1 for findings or a
failed check, 2 for bad arguments or input, 130 when interrupted, 141 when the reader of
stdout closed it early (``onnx-upsample inspect MODEL --json | head``: the output stops
quietly, as a Unix tool killed by SIGPIPE does). :func:`main` is the one error path; each
group of commands is a module with ``register(subparsers)`` that imports its
heavy dependencies (onnx, dask, Pillow) only inside its handlers, and every file a command
writes goes through one atomic writer (:mod:`onnx_upsample.io.atomic`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from .._errors import SpelledError, UpsampleError

# The command modules import ._common, never this package, so importing them here makes no
# cycle (the ONNX commands, which still import this package, are imported in build_parser).
from . import arrays, compare, conformance, conversions, diff, models
from ._common import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    PROG,
    _Parser,
    fail,
    problem,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_BROKEN_PIPE", "EXIT_FINDINGS", "EXIT_INTERRUPTED",
           "EXIT_OK", "build_parser", "fail", "main"]

# Optional dependencies and the extra that brings each (one line when one is missing).
EXTRAS = {
    "onnx": "onnx", "onnxruntime": "test", "ml_dtypes": "onnx", "google": "onnx",
    "dask": "dask", "distributed": "distributed", "zarr": "dask", "numcodecs": "dask",
    "PIL": "images",
}
PACKAGE_NAMES = {"PIL": "Pillow", "google": "protobuf"}


def _missing_extra(error: ModuleNotFoundError) -> str:
    """The one line naming what to install; a module no extra brings is re-raised (a bug)."""
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
    parser = _Parser(prog=PROG, description="The ONNX Upsample operator, exact.",
                     epilog=f"'{PROG} COMMAND --help' shows a command's options; "
                     f"'{PROG} demo' runs the documented examples.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                title="commands", metavar="COMMAND")
    # the groups of commands, in the order --help lists them
    for module in (arrays, compare, models, conversions, diff, conformance):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        :data:`EXIT_OK`, :data:`EXIT_FINDINGS`, :data:`EXIT_BAD_INPUT`,
        :data:`EXIT_INTERRUPTED` or :data:`EXIT_BROKEN_PIPE`; :data:`EXIT_BAD_INPUT` with
        the usage and the list of commands on stderr when no argument is given. argparse's
        own exits (``--help``, ``--version``, usage errors) raise ``SystemExit`` as usual.
    """
    try:
        return _run(argv)
    except BrokenPipeError:
        return _output_closed()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):
        # no command at all: what there is to type, not only "arguments are required"
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    args = parser.parse_args(argv)
    # the words typed, for a fix that is the same command with an option changed
    args.argv = [str(word) for word in (sys.argv[1:] if argv is None else argv)]
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    # Bad arguments or input: one line, no traceback. A TypeError is not caught: the public
    # API raises it for arguments of the wrong kind, which the commands never pass (argparse
    # types every value, and files are read as arrays), so one reaching here is a bug and
    # keeps its traceback. Where a user's file could make a library raise TypeError, the
    # command or reader turns it into an UpsampleError that says what is wrong with the file.
    except SpelledError as error:  # worded with the options, not the Python arguments
        return fail(error.option)
    except UpsampleError as error:
        return fail(str(error))
    except ModuleNotFoundError as error:  # an optional dependency (extra) is missing
        return fail(_missing_extra(error))
    except KeyboardInterrupt:
        problem("interrupted")
        return EXIT_INTERRUPTED


def _output_closed() -> int:
    """The reader of stdout (or stderr) went away: stop quietly, as a Unix tool does.

    What is left in the buffers is thrown away: both streams are pointed at the null device,
    so that neither this function nor the interpreter's last flush at exit raises again.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError):  # no file descriptor (a test's capture), or closed
                pass
    finally:
        os.close(devnull)
    return EXIT_BROKEN_PIPE
