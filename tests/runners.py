"""Test helper: running the command line, in this process or in a fresh one (no tests here).

``run_main`` and ``run_cli`` call ``onnx_upsample.cli.main`` in-process (argparse's usage
errors, a ``SystemExit``, become their exit code); ``cli_process`` and ``python_process`` start
a fresh interpreter, for what only a new process shows (start-up, imports, signals, a hang
under a time limit, which fails the test instead of stopping the run).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from onnx_upsample.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run_main(argv: list[object]) -> int:
    """``main(argv)``'s exit code (every word as a string)."""
    try:
        return main([str(word) for word in argv])
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else 2


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``main(argv)``'s exit code, stdout and stderr."""
    code = run_main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _process(args: list[str], timeout: float, cwd: Path,
             env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python args...`` in a fresh interpreter, with ``env`` added to this process's
    environment; a hang beyond ``timeout`` seconds fails the test."""
    try:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, **env}, cwd=cwd, check=False)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"subprocess hung for {timeout} s; output so far: {error.stdout!r} "
                    f"{error.stderr!r}")


def python_process(code: str, *args: str, timeout: float = 300, cwd: Path = ROOT,
                   **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` in a fresh interpreter."""
    return _process(["-c", code, *args], timeout, cwd, env)


def cli_process(*argv: object, cwd: Path = ROOT, timeout: float = 300,
                **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m onnx_upsample argv...`` in a fresh interpreter."""
    return _process(["-m", "onnx_upsample", *map(str, argv)], timeout, cwd, env)


def assert_one_line_error(err: str) -> None:
    """The command line's error convention: one line on stderr, no traceback."""
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "error" in lines[0].lower()
