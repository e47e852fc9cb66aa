"""What every command module shares: the exit codes, the output lines (the one error line
among them), the parser class.

Command modules import this module, never :mod:`onnx_upsample.cli` itself (whose
``__init__`` imports them), so that the command line has no import cycle.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

__all__ = ["EXIT_BAD_INPUT", "EXIT_BROKEN_PIPE", "EXIT_FINDINGS", "EXIT_INTERRUPTED",
           "EXIT_OK", "PROG", "_Parser", "add_output_options", "fail", "note",
           "print_json", "problem", "progress", "shell_command", "warn"]

PROG = "onnx-upsample"

# The exit codes: 0 success; 1 findings or a failed check (the command ran and has
# something to report); 2 bad arguments or input; 130 interrupted (Ctrl-C, as a shell
# reports SIGINT); 141 stdout closed by its reader (``| head``), as a shell reports a tool
# that SIGPIPE stopped.
EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2.

    ``fields``: values for ``{name}`` in the description and the options' help, computed only
    when the help is shown (so that what they import costs nothing to the commands).
    """

    def __init__(self, *args: Any,
                 fields: Callable[[], Mapping[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fields = fields

    def format_help(self) -> str:
        if self._fields is not None:
            values = self._fields()
            self._fields = None

            def filled(text: str | None) -> str | None:
                for name, value in values.items():
                    text = None if text is None else text.replace(f"{{{name}}}", value)
                return text

            self.description = filled(self.description)
            for action in self._actions:
                action.help = filled(action.help)
        return super().format_help()

    def error(self, message: str) -> None:  # type: ignore[override]
        _write(sys.stderr, f"{self.prog}: error: {message}")
        raise SystemExit(EXIT_BAD_INPUT)


# ------------------------------------------------------------------------------ output
#
# Every line the command line prints goes through _write, by one of the functions below,
# each for one kind of line. Their rules are the output conventions every command shares:
#
# - ``note``: chatter (what was done, tables, summaries): stdout; stderr under ``--json``;
#   nothing under ``-q``. With ``failing=True``, a line that says why the exit status is not
#   0 (an error a check found, a failing case ID): on stderr under ``-q``, never hidden.
#   ``-q`` takes away the chatter, never the reason for a failure.
# - ``progress``: chatter about work under way (starting a worker, n of m cases): stderr;
#   nothing under ``-q``.
# - ``problem``: a failed step of a command that goes on (``onnx-upsample: ...``), ``warn``
#   a warning, ``fail`` the error that ends it: stderr, never hidden.
# - ``print_json``: the one JSON object of ``--json``, alone on stdout, so that
#   ``onnx-upsample CMD --json | jq`` always parses.
#
# A closed stdout (``onnx-upsample CMD | head``) is handled once, in cli.main.


def _write(stream: TextIO, text: str, end: str = "\n") -> None:
    stream.write(f"{text}{end}")
    stream.flush()


def _quiet(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "quiet", False))


def _json(args: argparse.Namespace) -> bool:
    return getattr(args, "json", False) is True


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
    _write(sys.stderr, f"{PROG}: error: {message}")
    return EXIT_BAD_INPUT


def warn(message: object) -> None:
    """A warning as one line on stderr (the command goes on; shown under ``-q`` too)."""
    _write(sys.stderr, f"{PROG}: warning: {message}")


def problem(message: object) -> None:
    """A failed step of a command that goes on (``onnx-upsample: MESSAGE`` on stderr,
    shown under ``-q`` too): the reason its exit status will not be 0."""
    _write(sys.stderr, f"{PROG}: {message}")


def add_output_options(parser: argparse.ArgumentParser, *, json_help: str | None = None) -> None:
    """Add ``-q/--quiet`` and, when ``json_help`` is given, ``--json`` to a command."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print no chatter: only errors, warnings and what makes the exit "
                             "status non-zero (the errors found, the failing cases), on stderr")
    if json_help is not None:
        parser.add_argument("--json", action="store_true", help=json_help)


def note(args: argparse.Namespace, message: object, *, failing: bool = False) -> None:
    """An informational line: on stdout, on stderr under ``--json``, nowhere under ``-q``.

    ``failing``: the line says why the exit status is not 0 (an error a check found, a
    failing case): then ``-q`` does not hide it but moves it to stderr.
    """
    if failing:
        _write(sys.stderr if _json(args) or _quiet(args) else sys.stdout, str(message))
    elif not _quiet(args):
        _write(sys.stderr if _json(args) else sys.stdout, str(message))


def progress(args: argparse.Namespace, message: object, end: str = "\n") -> None:
    """Work under way, on stderr (``end=""`` with a leading ``\\r`` rewrites a terminal
    line in place); nowhere under ``-q``."""
    if not _quiet(args):
        _write(sys.stderr, str(message), end)


def print_json(document: Mapping[str, object]) -> None:
    """The one JSON object a ``--json`` command prints on stdout (keys: ``command`` first,
    then the command's inputs, its results, ``warnings``)."""
    _write(sys.stdout, json.dumps(document, indent=2, default=str))


def shell_command(*words: object) -> str:
    """A command line to paste into a shell: ``onnx-upsample`` and the words, quoted where a
    shell would need it (hints on the command line name commands, not Python calls)."""
    return " ".join([PROG, *(shlex.quote(str(word)) for word in words)])
