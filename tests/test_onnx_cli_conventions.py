"""The model commands (issue 17): fixes as commands to type (and as calls in Python), one
output convention (``-q``, ``--json``), ``check --strict``, what ``downgrade`` and ``fold``
did, ``run``'s output folder, and ``upgrade --verify``'s failures and options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx_models import upsample_model

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from runners import run_cli  # noqa: E402

from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample.cli import main  # noqa: E402
from onnx_upsample.onnx import check, downgrade, upgrade  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "yolo_head_opset9.onnx"


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def _v7_at_opset_9(tmp_path: Path) -> Path:
    """The TensorRT sample's mistake: the version-7 form in an opset-9 model (an error)."""
    model = upsample_model("v7", [1, 1, 2, 2], shape=[1, 1, 2, 3])
    model.opset_import[0].version = 9
    return _save(model, tmp_path / "trt style.onnx")  # a space: the hint must quote it


# ----------------------------------------------------------------------- fixes: both forms


def test_a_finding_is_a_call_in_python_and_a_command_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _v7_at_opset_9(tmp_path)
    [finding] = check(path)
    assert finding.fix.startswith("onnx_upsample.onnx.downgrade(model, opset=9) rewrites")
    assert finding.remedy is not None
    assert [a.function for a in finding.remedy.actions] == ["downgrade", "upgrade"]
    expected = (f"onnx-upsample downgrade '{path}' -o '{tmp_path}/trt style_opset9.onnx' "
                "--opset 9")
    for command in ("inspect", "check"):
        code, out, _ = run_cli(capsys, command, path)
        assert code == 1 and f"{expected} rewrites every Upsample" in out, out
        assert "onnx_upsample.onnx" not in out
    code, out, _ = run_cli(capsys, "check", path, "--json")
    document = json.loads(out)
    assert document["findings"][0]["commands"][0] == expected


def test_the_command_a_fix_names_does_the_fix(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = _v7_at_opset_9(tmp_path)
    _, out, _ = run_cli(capsys, "check", path, "--json")
    command = json.loads(out)["findings"][0]["commands"][0]
    import shlex

    words = shlex.split(command)
    assert words[0] == "onnx-upsample"
    assert main(words[1:]) == 0
    assert check(words[words.index("-o") + 1]) == []


def test_errors_of_the_python_api_name_the_call_and_the_cli_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UpsampleError, match=r"use onnx_upsample\.onnx\.downgrade\(model, "
                                            r"opset=9\)$") as raised:
        upgrade(EXAMPLE, opset=9)
    import pickle

    # to another process and back (a worker's error) with its parts, not only its text
    copy = pickle.loads(pickle.dumps(raised.value))
    assert str(copy) == str(raised.value) and copy.fix == raised.value.fix  # type: ignore
    code, _, err = run_cli(capsys, "upgrade", EXAMPLE, "-o", tmp_path / "x.onnx", "--opset", "8")
    assert code == 2 and err.count("\n") == 1
    assert err.rstrip().endswith(f"use onnx-upsample downgrade {EXAMPLE} -o "
                                 f"{str(EXAMPLE)[:-5]}_opset8.onnx --opset 8"), err
    with pytest.raises(UpsampleError, match=r"use onnx_upsample\.onnx\.upgrade\(model, "
                                            r"opset=13\)$"):
        downgrade(EXAMPLE, opset=13)
    # a blocking problem of a node: its fix too
    model = upsample_model("v9-constant", [1, 1, 2, 2], "BILINEAR", shape=[1, 1, 2, 2])
    path = _save(model, tmp_path / "upper.onnx")
    code, _, err = run_cli(capsys, "downgrade", path, "-o", tmp_path / "d.onnx", "--opset", "7")
    assert code == 2 and "onnx-upsample run" in err and "--legacy-modes" in err, err
    assert "ReferenceEvaluator" not in err


# ----------------------------------------------------------------------- output convention


@pytest.mark.parametrize("command", ["inspect", "check", "run", "upgrade", "downgrade",
                                     "fold"])
def test_every_model_command_has_json_and_quiet(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    source = EXAMPLE
    if command == "downgrade":
        source = _save(upgrade(EXAMPLE, opset=13), tmp_path / "up.onnx")
    extra = {"run": ["--random"], "upgrade": ["-o", tmp_path / "a.onnx"],
             "downgrade": ["-o", tmp_path / "b.onnx"], "fold": ["-o", tmp_path / "c.onnx"]}
    argv = [command, source, *extra.get(command, [])]
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    document = json.loads(out)  # stdout is the one JSON object, nothing else
    assert next(iter(document)) == "command" and document["command"] == command
    assert document["model"] == str(source) and document["warnings"] == []
    code, out, err = run_cli(capsys, *argv, "-q")
    assert (code, out, err) == (0, "", "")


@pytest.mark.parametrize("command", ["check", "inspect"])
def test_quiet_keeps_the_errors_that_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    # -q takes away the chatter, never the reason for exit status 1: each error and its
    # fix, on stderr; stdout stays empty
    path = _v7_at_opset_9(tmp_path)
    code, out, err = run_cli(capsys, command, path, "-q")
    assert code == 1 and out == "", out
    assert "error" in err and "scales" in err and "onnx-upsample downgrade" in err, err
    assert "Upsample node(s)" not in err and "error(s)" not in err  # no summary, no table


def test_quiet_check_keeps_the_warnings_that_fail_under_strict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = upsample_model("v9-raw", [1, 1, 1.4, 2], shape=[1, 1, 5, 3])
    path = _save(model, tmp_path / "warned.onnx")
    assert run_cli(capsys, "check", path, "-q") == (0, "", "")  # a warning alone: nothing
    code, out, err = run_cli(capsys, "check", path, "--strict", "-q")
    assert code == 1 and out == "" and err.startswith("warning: "), err


def test_check_json_has_the_model_and_counts_and_strict_fails_on_warnings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # scales 1.4: onnx's shape inference disagrees with onnxruntime, a warning only
    model = upsample_model("v9-raw", [1, 1, 1.4, 2], shape=[1, 1, 5, 3])
    path = _save(model, tmp_path / "warned.onnx")
    code, out, _ = run_cli(capsys, "check", path, "--json")
    document = json.loads(out)
    assert code == 0 and document["model"] == str(path) and document["strict"] is False
    assert document["counts"] == {"errors": 0, "warnings": 1}
    assert [f["code"] for f in document["findings"]] == ["onnx-shape-inference"]
    code, out, _ = run_cli(capsys, "check", path, "--strict")
    assert code == 1 and "--strict: warnings fail" in out
    assert run_cli(capsys, "check", EXAMPLE, "--strict")[0] == 0


# ----------------------------------------------------------------------- downgrade, fold


def test_downgrade_counts_each_kind_of_rewrite(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _v7_at_opset_9(tmp_path)
    code, out, _ = run_cli(capsys, "downgrade", path, "-o", tmp_path / "d.onnx")
    assert code == 0 and out.rstrip().endswith(": 1 Upsample-7 -> Upsample-9"), out
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    resize = helper.make_node("Resize", ["X", "s"], ["Y"], mode="nearest")
    model = helper.make_model(helper.make_graph([resize], "g", [x], [y], [scales]),
                              opset_imports=[helper.make_opsetid("", 10)])
    code, out, _ = run_cli(capsys, "downgrade", _save(model, tmp_path / "r10.onnx"), "-o",
                        tmp_path / "d2.onnx", "--json")
    assert code == 0 and json.loads(out)["rewrites"] == {"Resize-10 -> Upsample-9": 1}


def _computed_scales_model(tmp_path: Path) -> Path:
    """Scales computed from X's shape, which is symbolic: only --input-shape folds them."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "H", "W"])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Cast", ["shape"], ["shape_f"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["shape_f", "shape_f"], ["ones"]),
             helper.make_node("Add", ["ones", "ones"], ["twos"]),
             helper.make_node("Upsample", ["X", "twos"], ["Y"], name="up")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 9)])
    return _save(model, tmp_path / "computed.onnx")


def test_fold_words_what_it_left_and_what_input_shape_did(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _computed_scales_model(tmp_path)
    code, out, err = run_cli(capsys, "fold", path, "-o", tmp_path / "f.onnx")
    assert code == 0 and "0 of 1 computed scales folded" in out
    # one warning line of its own (naming the option), not Python's warning with its source
    assert err.splitlines() == [
        "onnx-upsample: warning: not folded: up: its scales depend on values known only at "
        "run time (symbolic input dimensions or data); give concrete shapes with "
        "--input-shape NAME=D0,D1,... if they come from input shapes"]
    code, out, err = run_cli(capsys, "fold", path, "-o", tmp_path / "g.onnx", "--input-shape",
                          "X=1,1,3,4")
    assert code == 0 and err == "" and "1 of 1 computed scales folded" in out
    assert ("input 'X' is declared with the static shape [1, 1, 3, 4]" in out
            and "(was X float32[1, 1, 'H', 'W'])" in out), out


# ----------------------------------------------------------------------- run


def test_run_legacy_bilinear_v7_advises_the_name_v7_takes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = upsample_model("v7", [1, 1, 2, 2], "BILINEAR", shape=[1, 1, 2, 2])
    path = _save(model, tmp_path / "upper.onnx")
    code, _, err = run_cli(capsys, "run", path, "--random", "--legacy-modes")
    assert code == 0, err
    assert "mode='linear'" in err and "mode='bilinear'" not in err, err
    assert f"onnx-upsample upgrade {path}" in err


def test_run_creates_the_output_dir_and_writes_strings_without_pickle(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "new" / "out"
    code, out, _ = run_cli(capsys, "run", EXAMPLE, "--random", "--output-dir", folder)
    assert code == 0 and f"created directory {folder}" in out
    assert np.load(folder / "detections.npy", allow_pickle=False).shape == (1, 18, 26, 26)
    # a string output: onnx's evaluator returns an object array, written as text
    x = helper.make_tensor_value_info("X", TensorProto.STRING, [2])
    y = helper.make_tensor_value_info("Y", TensorProto.STRING, [2])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 13)])
    text = tmp_path / "text.npy"
    np.save(text, np.array(["ab", "c"]))
    code, _, err = run_cli(capsys, "run", _save(model, tmp_path / "s.onnx"), "--input",
                        f"X={text}", "--output-dir", folder)
    assert code == 0, err
    assert np.load(folder / "Y.npy", allow_pickle=False).tolist() == ["ab", "c"]
    (tmp_path / "file").write_text("")
    code, _, err = run_cli(capsys, "run", EXAMPLE, "--random", "--output-dir", tmp_path / "file")
    assert code == 2 and "is a file; give a directory" in err


def test_objects_that_are_not_text_are_refused_in_one_line() -> None:
    from onnx_upsample.cli._models_io import npy_ready

    assert npy_ready("Y", np.array([b"a", b"bc"], dtype=object)).dtype == np.dtype("S2")
    with pytest.raises(UpsampleError, match=r"^output 'Y' holds Python objects that are not "
                                            r"all text.*without --output-dir"):
        npy_ready("Y", np.array([1, "a"], dtype=object))


# ----------------------------------------------------------------------- upgrade --verify


def test_verify_with_an_input_of_the_wrong_shape_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "small.npy"
    np.save(small, np.zeros((1, 32, 12, 13), np.float32))
    code, _, err = run_cli(capsys, "upgrade", EXAMPLE, "-o", tmp_path / "u.onnx", "--verify",
                          "--input", f"feature={small}")
    assert code == 2 and err.count("\n") == 1, err
    assert ("input 'feature' is float32[1, 32, 12, 13]; the model declares feature "
            "float32[1, 32, 13, 13]") in err
    assert not (tmp_path / "u.onnx").exists()


def test_keep_unverified_writes_a_failed_upgrade(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from onnx import version_converter

    # what onnx's own version converter writes (half_pixel Resize): different outputs
    monkeypatch.setattr("onnx_upsample.onnx.upgrade", lambda model, opset=None, **_:
                        version_converter.convert_version(model, opset))
    model = upsample_model("v9-raw", [1, 1, 1.5, 2.7], "linear", shape=[1, 2, 3, 4])
    path = _save(model, tmp_path / "m.onnx")
    output = tmp_path / "kept.onnx"
    code, out, err = run_cli(capsys, "upgrade", path, "-o", output, "--opset", "13", "--verify",
                          "--keep-unverified", "--json")
    assert code == 1 and output.exists()
    assert "was written although the verification failed" in err
    document = json.loads(out)
    [row] = document["verification"]["outputs"]
    assert document["written"] is True and row["identical"] is False
    assert 0 < row["differing_elements"] <= row["elements"] == 80
    code, _, err = run_cli(capsys, "upgrade", path, "-o", output, "--keep-unverified")
    assert code == 2 and "with --verify only" in err


@pytest.mark.parametrize("command", ["upgrade", "downgrade", "fold"])
def test_an_output_that_is_the_input_model_needs_overwrite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    model = tmp_path / "legacy.onnx"
    model.write_bytes(EXAMPLE.read_bytes())
    before = model.read_bytes()
    alias = tmp_path / "sub" / ".." / "legacy.onnx"
    (tmp_path / "sub").mkdir()
    code, _, err = run_cli(capsys, command, model, "-o", alias)
    assert code == 2 and "is the input model" in err and "--overwrite" in err, err
    assert model.read_bytes() == before  # the only original is untouched
    code, _, err = run_cli(capsys, command, model, "-o", model, "--overwrite")
    assert code == 0, err


def test_an_opset_out_of_range_names_the_option_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "upgrade", EXAMPLE, "-o", tmp_path / "u.onnx", "--opset", 99)
    assert code == 2 and err.startswith("onnx-upsample: error: --opset is 99;"), err
    newest = onnx.defs.onnx_opset_version()  # the fix: an opset upgrade writes, not 9
    with pytest.raises(UpsampleError, match=rf"^opset is 99;.*upgrade\(model, opset={newest}\)"):
        upgrade(EXAMPLE, opset=99)


def _suggested(err: str, marker: str) -> list[str]:
    """The words of the command an error line suggests after ``marker``, up to the end of
    the command (the sentence goes on with "converts ...", whose words a shell would not
    split)."""
    import shlex

    command = err.strip().split(marker, 1)[1].split(" converts ", 1)[0]
    return shlex.split(command)


def test_a_fix_for_the_command_given_keeps_its_output_and_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The fix was ``upgrade EXAMPLE -o examples/yolo_head_opset9_opset28.onnx --opset 28``:
    another output, beside the example, and without the user's other options."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import legacy_exporters
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    output = tmp_path / "s.onnx"
    code, _, err = run_cli(capsys, "upgrade", EXAMPLE, "-o", output, "--opset", 99, "--json")
    newest = onnx.defs.onnx_opset_version()
    words = _suggested(err, "; use ")
    assert code == 2 and words[:3] == ["onnx-upsample", "upgrade", str(EXAMPLE)], err
    assert sorted(words[3:]) == sorted(["-o", str(output), "--opset", str(newest), "--json"])
    assert words[words.index("-o") + 1] == str(output)
    assert words[words.index("--opset") + 1] == str(newest)
    model = _save(legacy_exporters.tf2onnx_downscale(), tmp_path / "tf.onnx")
    code, _, err = run_cli(capsys, "upgrade", model, "-o", tmp_path / "o1.onnx", "--verify")
    words = _suggested(err, "fix: ")
    assert code == 2 and words[:3] == ["onnx-upsample", "upgrade", str(model)], err
    assert sorted(words[3:]) == sorted(["-o", str(tmp_path / "o1.onnx"), "--verify",
                                        "--allow-downscale"])
    code, _, err = run_cli(capsys, *words[1:])  # the fix, typed: it does what it says
    assert code == 0, err
