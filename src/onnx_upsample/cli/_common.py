"""What every command module shares: the exit codes, the one error line, the parser class.

Command modules import this module, never :mod:`onnx_upsample.cli` itself (whose
``__init__`` imports them), so that the command line has no import cycle.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping

__all__ = ["EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_INTERRUPTED", "EXIT_OK", "PROG",
           "_Parser", "add_output_options", "fail", "note", "print_json", "shell_command",
           "warn"]

PROG = "onnx-upsample"

# The exit codes: 0 success; 1 findings or a failed check (the command ran and has
# something to report); 2 bad arguments or input; 130 interrupted (Ctrl-C, as a shell
# reports SIGINT).
EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def fail(message: str) -> int:
    """The one error path of the command line: one line on stderr, exit code 2.

    Parameters
    ----------
    message : str
        What is wrong and, where there is one, the fix.

    Returns
    -------
    int
        :data:`EXIT_BAD_INPUT`, for the handler to return.
    """
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def warn(message: object) -> None:
    """A warning as one line on stderr (the command goes on)."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


# Output conventions shared by every command: ``-q/--quiet`` leaves only errors and warnings
# (both on stderr) and the exit status; ``--json`` prints one JSON object on stdout and moves
# every other line to stderr, so that ``onnx-upsample CMD --json | jq`` always parses.


def add_output_options(parser: argparse.ArgumentParser, *, json_help: str | None = None) -> None:
    """Add ``-q/--quiet`` and, when ``json_help`` is given, ``--json`` to a command."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print nothing but errors and warnings; the exit status tells "
                             "the rest")
    if json_help is not None:
        parser.add_argument("--json", action="store_true", help=json_help)


def note(args: argparse.Namespace, message: object) -> None:
    """An informational line: on stdout, on stderr under ``--json``, nowhere under ``-q``."""
    if getattr(args, "quiet", False):
        return
    stream = sys.stderr if getattr(args, "json", False) is True else sys.stdout
    print(message, file=stream, flush=True)


def print_json(document: Mapping[str, object]) -> None:
    """The one JSON object a ``--json`` command prints on stdout (keys: ``command`` first,
    then the command's inputs, its results, ``warnings``)."""
    json.dump(document, sys.stdout, indent=2, default=str)
    print()


def shell_command(*words: object) -> str:
    """A command line to paste into a shell: ``onnx-upsample`` and the words, quoted where a
    shell would need it (hints on the command line name commands, not Python calls)."""
    return " ".join([PROG, *(shlex.quote(str(word)) for word in words)])
