"""``onnx-upsample demo`` and the command list, in-process and as a process: the operator
documentation's examples, checked, with ``--json`` and ``-q``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from runners import run_main

from onnx_upsample.cli import arrays, main

# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------


def test_demo_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(["demo"]) == 0
    captured = capsys.readouterr()
    assert "MISMATCH" not in captured.out
    assert "all examples match" in captured.out
    # the documented outputs are printed: the 4x6 nearest example's rows, the bilinear rows
    assert "[1. 1. 1. 2. 2. 2.]" in captured.out
    assert "1.5" in captured.out
    assert "Traceback" not in captured.err


def test_demo_json_and_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(["demo", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert next(iter(document)) == "command" and document["command"] == "demo"
    assert document["all_match"] is True and document["warnings"] == []
    first = document["examples"][0]
    assert first["scales"] == [1, 1, 2, 3] and first["mode"] == "nearest"
    assert first["input_shape"] == [1, 1, 2, 2] and first["output_shape"] == [1, 1, 4, 6]
    assert [e["matches"] for e in document["examples"]] == [True] * 4
    assert run_main(["demo", "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_demo_json_reports_a_mismatch(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A documented output that differs is exit 1 and "matches": false; -q names it."""
    good = arrays.examples()
    wrong = arrays.Example(good[0].title, good[0].x, good[0].scales, good[0].mode,
                           good[0].expected + 1)
    monkeypatch.setattr(arrays, "examples", lambda: [wrong, *good[1:]])
    assert run_main(["demo", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["all_match"] is False
    assert [e["matches"] for e in document["examples"]] == [False, True, True, True]
    assert run_main(["demo", "-q"]) == 1  # no chatter, but the reason for exit status 1
    assert capsys.readouterr() == ("", f"1 of 4 examples did not match: {good[0].title}\n")


def test_no_arguments_prints_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """Not only "the following arguments are required": the usage and every command."""
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: onnx-upsample ")
    for command in ("demo", "apply", "compare", "inspect", "upgrade", "run", "conformance",
                    "explain"):
        assert re.search(rf"^\s+{command}\s+\S", captured.err, re.MULTILINE), command
    assert "COMMAND --help" in captured.err


def test_no_arguments_as_a_process() -> None:
    result = subprocess.run([sys.executable, "-m", "onnx_upsample"], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "usage: onnx-upsample" in result.stderr and "apply" in result.stderr


def test_demo_as_a_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onnx_upsample", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "all examples match" in result.stdout
    assert "[1. 1. 1. 2. 2. 2.]" in result.stdout
    assert "Traceback" not in result.stderr


