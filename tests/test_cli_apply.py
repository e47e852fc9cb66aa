"""``onnx-upsample apply`` (cli/arrays.py over io/apply.py), in-process and as a process.

Conventions checked: numbers are space separated; errors are one line on stderr with no
traceback, their hints name the options to type; exit 0 on success, 2 for bad arguments or
input; a failed ``apply`` creates no output file (and does not replace an existing one).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from runners import assert_one_line_error, run_main

import onnx_upsample

X = np.array([[[[1, 3], [3, 5]]], [[[3, 5], [7, 9]]]], dtype=np.float32)


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
    pytest.param(["--scales", "1", "1", "0.5", "2"], r"value 3 of --scales is 0.5",
                 id="scale-below-1"),
    pytest.param(["--scales", "1", "1", "nan", "2"], r"value 3 of --scales", id="scale-nan"),
    pytest.param(["--scales", "1", "1", "inf", "2"], r"value 3 of --scales", id="scale-inf"),
    pytest.param(["--scales", "1", "1", "a", "2"], r"scales", id="scale-not-a-number"),
    pytest.param(["--scales", "1", "1", "2"], r"such as --scales 1 1 1 2 ", id="too-few-scales"),
    pytest.param(["--scales", "1", "1", "2", "2", "2"], r"scales", id="too-many-scales"),
    pytest.param(["--scales", "1", "1", "1e10", "1"], r"20000000000", id="too-large"),
    pytest.param(["--scales", "1", "1", "2", "2", "--mode", "cubic"], r"--mode is cubic;",
                 id="mode-cubic"),
    pytest.param(["--scales", "1", "1", "2", "2", "--mode", "NEAREST"], r"--mode is NEAREST;",
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
    assert_no_python_hint(captured.err)
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy"]


def assert_no_python_hint(text: str) -> None:
    """On the command line a hint names an option, never a Python argument or call."""
    for python in ("mode=", "scales=", "scales[", "x.astype", "x has", "upsample("):
        assert python not in text, text


@pytest.mark.parametrize(
    ("array", "argv", "pattern"),
    [
        # an HWC array with the two image scales: the full --scales to type
        (np.zeros((4, 5, 3), np.uint8), ["--scales", "2", "2"],
         r"--scales has 2 value\(s\) \(2 2\) but input '.*in\.npy' has rank 3 .* such as "
         r"--scales 2 2 1 \(the channels unscaled\)"),
        (np.zeros((1, 3, 4, 5), np.float32), ["--scales", "2", "2"],
         r"such as --scales 1 1 2 2 "),
        (np.zeros((1, 6, 5, 3), np.float32), ["--scales", "1.5", "2"],
         r"such as --scales 1 1\.5 2 1 "),
        (np.zeros((3,), bool), ["--scales", "2", "--mode", "linear"],
         r"--mode linear is not defined for element type bool; use --mode nearest$"),
        (np.zeros((3,), np.float32), ["--scales", "2", "--mode", "Linear"],
         r"--mode is Linear; expected 'nearest' or 'linear'"),
        (np.zeros((3,), "M8[s]"), ["--scales", "2"],
         r"input '.*in\.npy' has element type 'datetime64\[s\]'.*save the array as one of "
         r"these types first$"),
        (np.zeros((2,) * 21, np.uint8), ["--scales", *["2"] * 21, "--mode", "linear"],
         r"use --mode nearest$"),
    ],
    ids=["hwc", "nchw", "nhwc", "linear-bool", "mode-case", "datetime", "21-axes"],
)
def test_apply_hints_are_options(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 array: np.ndarray, argv: list[str], pattern: str) -> None:
    """Every hint apply prints is an option to type, worded by the rule's owner."""
    np.save(tmp_path / "in.npy", array)
    assert run_main(["apply", str(tmp_path / "in.npy"), str(tmp_path / "out.npy"), *argv]) == 2
    err = capsys.readouterr().err
    assert_one_line_error(err)
    assert re.search(pattern, err.strip()), err
    assert_no_python_hint(err)


def test_the_suggested_scales_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The --scales an error suggests is accepted as it is printed."""
    np.save(tmp_path / "in.npy", np.zeros((4, 5, 3), np.uint8))
    argv = ["apply", str(tmp_path / "in.npy"), str(tmp_path / "out.npy")]
    assert run_main([*argv, "--scales", "2", "2"]) == 2
    suggested = re.search(r"such as --scales ([\d. ]+) \(", capsys.readouterr().err)
    assert suggested is not None
    assert run_main([*argv, "--scales", *suggested.group(1).split(), "-q"]) == 0
    assert np.load(tmp_path / "out.npy").shape == (8, 10, 3)


def test_apply_legacy_mode_warns_with_the_option(
    input_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.npy"
    assert run_main(["apply", str(input_file), str(output), "--scales", "1", "1", "2", "2",
                     "--mode", "bilinear"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "onnx-upsample: warning: --mode bilinear is a legacy name of 'linear' (written by old "
        "exporters); it runs as 'linear'; write --mode linear\n"
    )
    assert "(linear," in captured.out
    assert np.load(output).tobytes() == onnx_upsample.upsample(X, [1, 1, 2, 2],
                                                               "linear").tobytes()


def test_apply_json_and_quiet(input_file: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.npy"
    argv = ["apply", str(input_file), str(output), "--scales", "1", "1", "2", "1.5"]
    assert run_main([*argv, "--mode", "trilinear", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # stdout is the one object, nothing else
    assert next(iter(document)) == "command" and document["command"] == "apply"
    assert document["input"] == str(input_file) and document["output"] == str(output)
    assert document["input_shape"] == [2, 1, 2, 2] and document["output_shape"] == [2, 1, 4, 3]
    assert document["dtype"] == "float32" and document["mode"] == "linear"
    assert document["scales"] == [1, 1, 2, 1.5] and document["chunked"] is False
    assert document["replaced"] is False
    assert isinstance(document["seconds"], float) and document["seconds"] >= 0
    assert document["warnings"] == [
        "--mode trilinear is a legacy name of 'linear' (written by old exporters); it runs as "
        "'linear'; write --mode linear"
    ]
    assert "warning" in captured.err  # warnings still reach stderr
    assert run_main([*argv, "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    assert run_main([*argv, "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


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
    assert "value 3 of --scales is 0.5" in result.stderr
    assert result.stdout == ""
    assert not output.exists()


