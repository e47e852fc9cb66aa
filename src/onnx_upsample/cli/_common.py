"""What every command module shares: the exit codes, the one error line, the parser class.

Command modules import this module, never :mod:`onnx_upsample.cli` itself (whose
``__init__`` imports them), so that the command line has no import cycle.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_INTERRUPTED", "EXIT_OK", "PROG",
           "_Parser", "fail", "warn"]

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
