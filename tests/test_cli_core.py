"""The core command line: ``demo`` and ``apply``, in-process and as a process, and the one
error path of ``main``.

Conventions checked: numbers are space separated; errors are one line on stderr with no
traceback; exit 0 on success, 2 for bad arguments or input, 130 when interrupted; a failed
``apply`` creates no output file (and does not replace an existing one); a bug is a
traceback, not a "bad input" line.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import cli
from onnx_upsample.cli import arrays, main

X = np.array([[[[1, 3], [3, 5]]], [[[3, 5], [7, 9]]]], dtype=np.float32)


def run_main(argv: list[str]) -> int:
    """main() returns the exit code; argparse usage errors raise SystemExit(code)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else 2


def assert_one_line_error(err: str) -> None:
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "error" in lines[0].lower()


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


# ---------------------------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def input_file(tmp_path: Path) -> Path:
    path = tmp_path / "in.npy"
    np.save(path, X)
    return path


@pytest.mark.parametrize(
    ("extra", "mode"),
    [([], "nearest"), (["--mode", "nearest"], "nearest"), (["--mode", "linear"], "linear")],
)
def test_apply_writes_the_upsampled_array(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra, mode
) -> None:
    output = tmp_path / "out.npy"
    code = run_main(["apply", str(input_file), str(output), "--scales", "1", "1", "2", "2",
                     *extra])
    assert code == 0, capsys.readouterr().err
    y = np.load(output)
    expected = onnx_upsample.upsample(X, [1, 1, 2, 2], mode)
    assert y.shape == (2, 1, 4, 4)
    assert y.dtype == np.float32
    assert np.array_equal(y.view(np.uint8), expected.view(np.uint8))
    # no temporary files left beside the output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy", "out.npy"]


def test_apply_linear_by_hand(input_file: Path, tmp_path: Path) -> None:
    """scales 1 1 2 4 linear: ORT's UpsampleOp4DBilinearTest, first row 1 1.5 2 2.5 3 3 3 3."""
    output = tmp_path / "out.npy"
    argv = ["apply", str(input_file), str(output), "--scales", "1", "1", "2", "4",
            "--mode", "linear", "--quiet"]
    assert run_main(argv) == 0
    y = np.load(output)
    assert y[0, 0, 0].tolist() == [1, 1.5, 2, 2.5, 3, 3, 3, 3]
    assert y[1, 0, 1].tolist() == [5, 5.5, 6, 6.5, 7, 7, 7, 7]


def test_apply_keeps_integer_types(tmp_path: Path) -> None:
    source, output = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(source, np.array([0, 255, 10, 11], dtype=np.uint8))
    assert run_main(["apply", str(source), str(output), "--scales", "4", "--mode", "linear",
                     "--quiet"]) == 0
    y = np.load(output)
    assert y.dtype == np.uint8
    assert y.tolist() == [0, 63, 127, 191, 255, 193, 132, 71, 10, 10, 10, 10, 11, 11, 11, 11]


BAD_APPLY = [
    pytest.param(["--scales", "1", "1", "0.5", "2"], r"scales\[2\]", id="scale-below-1"),
    pytest.param(["--scales", "1", "1", "nan", "2"], r"scales\[2\]", id="scale-nan"),
    pytest.param(["--scales", "1", "1", "inf", "2"], r"scales\[2\]", id="scale-inf"),
    pytest.param(["--scales", "1", "1", "a", "2"], r"scales", id="scale-not-a-number"),
    pytest.param(["--scales", "1", "1", "2"], r"scales", id="too-few-scales"),
    pytest.param(["--scales", "1", "1", "2", "2", "2"], r"scales", id="too-many-scales"),
    pytest.param(["--scales", "1", "1", "1e10", "1"], r"20000000000", id="too-large"),
    pytest.param(["--scales", "1", "1", "2", "2", "--mode", "cubic"], r"cubic", id="mode-cubic"),
    pytest.param(["--scales", "1", "1", "2", "2", "--mode", "NEAREST"], r"NEAREST",
                 id="mode-upper"),
    pytest.param([], r"scales", id="no-scales"),
]


@pytest.mark.parametrize(("extra", "pattern"), BAD_APPLY)
def test_apply_bad_arguments(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra, pattern
) -> None:
    output = tmp_path / "out.npy"
    code = run_main(["apply", str(input_file), str(output), *extra])
    captured = capsys.readouterr()
    assert code == 2
    assert_one_line_error(captured.err)
    assert re.search(pattern, captured.err), captured.err
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy"]


def test_apply_failure_keeps_an_existing_output(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.npy"
    output.write_bytes(b"previous")
    code = run_main(["apply", str(input_file), str(output), "--scales", "1", "1", "0.5", "2"])
    assert code == 2
    assert_one_line_error(capsys.readouterr().err)
    assert output.read_bytes() == b"previous"


def test_apply_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.npy"
    missing = tmp_path / "nope.npy"
    code = run_main(["apply", str(missing), str(output), "--scales", "2"])
    err = capsys.readouterr().err
    assert code == 2
    assert_one_line_error(err)
    assert "nope.npy" in err
    assert not output.exists()


@pytest.mark.parametrize(
    "content",
    [b"this is not an npy file", b""],
    ids=["garbage", "empty"],
)
def test_apply_unreadable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    source, output = tmp_path / "in.npy", tmp_path / "out.npy"
    source.write_bytes(content)
    code = run_main(["apply", str(source), str(output), "--scales", "2"])
    err = capsys.readouterr().err
    assert code == 2
    assert_one_line_error(err)
    assert "in.npy" in err
    assert not output.exists()


def test_apply_object_array_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, output = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(source, np.array([1, "a"], dtype=object), allow_pickle=True)
    code = run_main(["apply", str(source), str(output), "--scales", "2"])
    assert code == 2
    assert_one_line_error(capsys.readouterr().err)
    assert not output.exists()


def test_apply_input_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.npy"
    code = run_main(["apply", str(tmp_path), str(output), "--scales", "2"])
    assert code == 2
    assert_one_line_error(capsys.readouterr().err)
    assert not output.exists()


def test_apply_output_in_a_missing_directory(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A path the output cannot be written to is bad input: exit 2, one line, no traceback."""
    output = tmp_path / "no" / "such" / "dir" / "out.npy"
    code = run_main(["apply", str(input_file), str(output), "--scales", "1", "1", "2", "2"])
    assert code == 2
    assert_one_line_error(capsys.readouterr().err)
    assert not output.exists()


def test_apply_output_is_a_directory(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    code = run_main(["apply", str(input_file), str(target), "--scales", "1", "1", "2", "2"])
    assert code == 2
    assert_one_line_error(capsys.readouterr().err)
    assert target.is_dir()
    assert list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy", "target"]


def test_unknown_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(["bogus"]) == 2
    assert_one_line_error(capsys.readouterr().err)


def test_bad_arguments_as_a_process(tmp_path: Path) -> None:
    """As a real process: exit status 2, one stderr line, no traceback, no output file."""
    source, output = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(source, X)
    result = subprocess.run(
        [sys.executable, "-m", "onnx_upsample", "apply", str(source), str(output),
         "--scales", "1", "1", "0.5", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert_one_line_error(result.stderr)
    assert "scales[2]" in result.stderr
    assert result.stdout == ""
    assert not output.exists()


# ---------------------------------------------------------------------------------------------
# the one error path
# ---------------------------------------------------------------------------------------------


def _handler_raising(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make ``demo``'s handler raise ``error`` (handlers are looked up when the parser is built)."""
    def handler(args: argparse.Namespace) -> int:
        raise error

    monkeypatch.setattr(arrays, "_cmd_demo", handler)


def test_a_bug_is_not_dressed_as_bad_input(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A TypeError from the code itself is a traceback, not "error: ...", exit 2."""
    _handler_raising(monkeypatch, TypeError("f() takes no keyword arguments"))
    with pytest.raises(TypeError, match="no keyword arguments"):
        main(["demo"])
    assert capsys.readouterr().err == ""


def test_user_errors_are_one_line(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    _handler_raising(monkeypatch, onnx_upsample.UpsampleError("scales[0] is 0.5; fix it"))
    assert main(["demo"]) == cli.EXIT_BAD_INPUT == 2
    assert capsys.readouterr().err == "onnx-upsample: error: scales[0] is 0.5; fix it\n"


def test_ctrl_c_is_exit_130(monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    _handler_raising(monkeypatch, KeyboardInterrupt())
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == "onnx-upsample: interrupted\n"


@pytest.mark.parametrize(("module", "install"), [
    ("zarr.core", "this command needs zarr, which is not installed: "
                  "pip install 'onnx-upsample[dask]'"),
    ("PIL", "this command needs Pillow, which is not installed: "
            "pip install 'onnx-upsample[images]'"),
    ("google.protobuf", "this command needs protobuf, which is not installed: "
                        "pip install 'onnx-upsample[onnx]'"),
    ("onnxruntime", "this command needs onnxruntime, which is not installed: "
                    "pip install 'onnxruntime==1.32.*'"),
])
def test_a_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], module: str,
                                     install: str) -> None:
    _handler_raising(monkeypatch, ModuleNotFoundError(f"No module named {module!r}",
                                                      name=module))
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == f"onnx-upsample: error: {install}\n"


def test_a_missing_module_no_extra_brings_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    _handler_raising(monkeypatch, ModuleNotFoundError("No module named 'nope'", name="nope"))
    with pytest.raises(ModuleNotFoundError, match="nope"):
        main(["demo"])


def test_the_exit_codes() -> None:
    assert (cli.EXIT_OK, cli.EXIT_FINDINGS, cli.EXIT_BAD_INPUT) == (0, 1, 2)
    assert cli.fail is cli._common.fail


def test_the_console_script_is_main() -> None:
    (script,) = entry_points(group="console_scripts", name="onnx-upsample")
    assert script.value == "onnx_upsample.cli:main"
    assert script.load() is main
