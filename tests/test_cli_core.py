"""The command line's one error path (``cli/__init__.py``): one line on stderr with no
traceback for bad input, exit 2; 130 when interrupted; a missing extra is one line naming
the install; a bug is a traceback, not a "bad input" line; the exit-code table; the console
script; the README's own links."""

from __future__ import annotations

import argparse
import re
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import cli
from onnx_upsample.cli import arrays, main

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


def test_readme_contents_and_section_links_resolve() -> None:
    """Every in-page link of the README (its contents line first) names a heading, by
    GitHub's rule: lower case, punctuation dropped, spaces as hyphens."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    headings = re.findall(r"^#{2,4} (.+)$", readme, re.MULTILINE)
    anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
    links = re.findall(r"\]\(#([^)]+)\)", readme)
    assert len(links) >= 10  # the contents line
    assert [link for link in links if link not in anchors] == []
    # the contents come before the first section, with who the project is for
    assert readme.index("**Contents**") < readme.index("## Quick start")
    assert readme.index("**Who it is for**") < readme.index("## Quick start")


def test_explain_words_a_bad_call_with_its_options(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "x.npy", np.ones((1, 1, 4, 5), np.float32))
    np.save(tmp_path / "theirs.npy", np.ones((1, 1, 6, 8), np.float32))
    code = main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "theirs.npy"),
                 "--scales", "1.5", "1.7"])
    err = capsys.readouterr().err
    assert code == 2 and "such as --scales 1 1 1.5 1.7" in err and "scales=[" not in err, err
