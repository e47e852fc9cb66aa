"""``onnx-upsample inspect | upgrade | run``, and the legacy example model."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_models import bits_equal, ort_run, upsample_model

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, version_converter  # noqa: E402
from runners import run_cli  # noqa: E402

import onnx_upsample  # noqa: E402
from onnx_upsample.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "yolo_head_opset9.onnx"


def _save(model: object, path: Path) -> str:
    onnx.save(model, str(path))  # type: ignore[arg-type]
    return str(path)


@pytest.fixture(scope="module")
def example_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(3)
    paths = {}
    for name, shape in (("feature", (1, 32, 13, 13)), ("route", (1, 16, 26, 26))):
        paths[name] = str(directory / f"{name}.npy")
        np.save(paths[name], rng.standard_normal(shape).astype(np.float32))
    return paths


def test_inspect_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "inspect", str(EXAMPLE))
    assert code == 0 and err == ""
    assert "opset 9" in out
    row = next(line for line in out.splitlines() if line.startswith("upsample_86"))
    for cell in ("v9 (opset 9)", "nearest", "[1,1,2,2]", "float[1,16,13,13]",
                 "float[1,16,26,26]"):
        assert cell in row
    assert "1 Upsample node(s), 0 error(s), 0 warning(s)" in out


def test_inspect_finds_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = upsample_model("v7", [1, 1, 1.4, 2], shape=[1, 1, 5, 3])
    model.opset_import[0].version = 9  # the version-7 form at opset 9
    second = upsample_model("v9-input", [1, 2])
    second.graph.node[0].name = "dynamic"
    path = _save(model, tmp_path / "bad.onnx")
    code, out, _ = run_cli(capsys, "inspect", path)
    assert code == 1
    assert "error    up: the node has the version-7 form" in out
    # the fix is the command to type, for this model
    stem = path.removesuffix(".onnx")
    assert f"fix: onnx-upsample downgrade {path} -o {stem}_opset9.onnx --opset 9 " in out
    assert "(model" not in out  # no Python call
    assert "warning  up: onnx's shape inference" in out
    code, out, _ = run_cli(capsys, "inspect", _save(second, tmp_path / "dynamic.onnx"))
    assert code == 0 and "dynamic" in out and "dynamic-scales" not in out
    assert "scales are computed at run time" in out


def test_inspect_bad_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "inspect", str(tmp_path / "missing.onnx"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "does not exist" in err
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00\xffnot a model" * 10)
    code, _, err = run_cli(capsys, "inspect", str(garbage))
    assert code == 2 and "is not an ONNX model" in err
    assert err.count("\n") == 1


def test_upgrade_example_and_verify(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    output = tmp_path / "upgraded.onnx"
    code, out, err = run_cli(capsys, "upgrade", str(EXAMPLE), "-o", str(output), "--opset", "13",
                          "--verify")
    assert code == 0, err
    assert "(opset 9, IR 4) ->" in out and "(opset 13, IR 7): 1 Upsample-9 -> Resize-13" in out
    assert "detections" in out and "verified: outputs are bit-identical" in out
    upgraded = onnx.load(str(output))
    onnx.checker.check_model(upgraded)
    assert [n.op_type for n in upgraded.graph.node].count("Resize") == 1
    code, out, _ = run_cli(capsys, "upgrade", str(EXAMPLE), "-o", str(output))
    assert code == 0 and "(opset 18, IR" in out  # the documented default, not the newest


@pytest.mark.parametrize(("source", "note"), [("v1", "opset-7"), ("v10", "opset-9"),
                                              ("v9-input", None), ("v7", None)])
def test_upgrade_verify_rewrites_what_ort_cannot_load(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str,
        note: str | None) -> None:
    model = upsample_model(source, [1, 1, 1.5, 2.7], "linear", shape=[1, 2, 3, 4])
    path = _save(model, tmp_path / "legacy.onnx")
    code, out, err = run_cli(capsys, "upgrade", path, "-o", str(tmp_path / "new.onnx"),
                          "--opset", "18", "--verify")
    assert code == 0, err
    assert "bit-identical" in out
    assert (note is not None and note in out) or (note is None and "cannot load" not in out)


def test_upgrade_verify_catches_a_changed_model(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # what onnx's version converter does (docs/peers.md §6): the CLI must notice
    def converter(model: object, opset: int | None = None, **_: object) -> object:
        return version_converter.convert_version(model, opset or 13)  # type: ignore[arg-type]

    monkeypatch.setattr("onnx_upsample.onnx.upgrade", converter)
    model = upsample_model("v9-raw", [1, 1, 1.5, 2.7], "linear", shape=[1, 2, 3, 4])
    code, out, err = run_cli(capsys, "upgrade", _save(model, tmp_path / "m.onnx"), "-o",
                          str(tmp_path / "new.onnx"), "--opset", "13", "--verify")
    assert code == 1
    # which output differs, in how many elements, by how much
    assert "NO" in out and "verification FAILED: output 'Y': " in err
    assert " of 80 element(s) differ, largest difference 0.663" in err


def test_upgrade_verify_with_given_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          example_inputs: dict[str, str]) -> None:
    code, out, _ = run_cli(capsys, "upgrade", str(EXAMPLE), "-o", str(tmp_path / "n.onnx"),
                        "--verify", "--input", f"feature={example_inputs['feature']}")
    assert code == 0 and "bit-identical" in out
    code, _, err = run_cli(capsys, "upgrade", str(EXAMPLE), "-o", str(tmp_path / "n.onnx"),
                        "--verify", "--input", f"nothing={example_inputs['feature']}")
    assert code == 2 and "not inputs of the model" in err


NEWEST = onnx.defs.onnx_opset_version()


@pytest.mark.parametrize(("argv", "message"), [
    (["--opset", "9"], f"at opsets 10 to {NEWEST} (the newest the installed onnx knows); for "
                       "opsets 7-9 (Upsample) use onnx-upsample downgrade"),
    # above the newest opset: the fix is an opset upgrade can write, not a downgrade
    (["--opset", str(NEWEST + 2)], f"at opsets 10 to {NEWEST} (the newest the installed onnx "
                                   "knows); use onnx-upsample upgrade"),
    (["--input", "a=b.npy"], "--verify only"),
])
def test_upgrade_bad_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                               argv: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, "upgrade", str(EXAMPLE), "-o", str(tmp_path / "x.onnx"), *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1
    if argv[1] == str(NEWEST + 2):
        assert err.rstrip().endswith(f"--opset {NEWEST}") and "downgrade" not in err, err
    assert not (tmp_path / "x.onnx").exists()
    with pytest.raises(SystemExit) as raised:
        main(["upgrade", str(EXAMPLE), "-o", str(tmp_path / "x.onnx"), "--opset", "ten"])
    assert raised.value.code == 2
    assert "invalid int value" in capsys.readouterr().err


def test_run_example(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                     example_inputs: dict[str, str]) -> None:
    code, out, err = run_cli(capsys, "run", str(EXAMPLE), "--input",
                          f"feature={example_inputs['feature']}", "--input",
                          f"route={example_inputs['route']}", "--output-dir", str(tmp_path))
    assert code == 0, err
    assert out.splitlines()[2].startswith("detections: float32 [1, 18, 26, 26]")
    result = np.load(tmp_path / "detections.npy")
    feeds = {name: np.load(path) for name, path in example_inputs.items()}
    # onnxruntime's bits, at its default level (onnx's reference evaluator sums its Conv in
    # another order; --backend onnx-reference+onnx-upsample still runs there)
    (expected,) = ort_run(onnx.load(str(EXAMPLE)), feeds)
    assert bits_equal(result, expected)
    code, _, err = run_cli(capsys, "run", str(EXAMPLE), "--input",
                           f"feature={example_inputs['feature']}", "--input",
                           f"route={example_inputs['route']}", "--output-dir", str(tmp_path),
                           "--backend", "onnx-reference+onnx-upsample")
    assert code == 0, err
    np.testing.assert_allclose(np.load(tmp_path / "detections.npy"), expected, rtol=1e-5,
                               atol=1e-5)


def test_run_every_version_exactly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    np.save(tmp_path / "x.npy", x)
    for source in ("v1", "v7", "v10"):
        path = _save(upsample_model(source, [1, 1, 2, 1.5], "nearest"), tmp_path / "m.onnx")
        code, _, err = run_cli(capsys, "run", path, "--input", f"X={tmp_path / 'x.npy'}",
                              "--output-dir", str(tmp_path))
        assert code == 0
        assert bits_equal(np.load(tmp_path / "Y.npy"),
                          onnx_upsample.upsample(x, [1, 1, 2, 1.5]))
        assert ("deprecated" in err) == (source == "v10")


def test_run_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                    example_inputs: dict[str, str]) -> None:
    code, _, err = run_cli(capsys, "run", str(EXAMPLE), "--input",
                        f"feature={example_inputs['feature']}")
    assert code == 2 and "needs input(s) ['route']" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "run", str(EXAMPLE), "--input", "feature")
    assert code == 2 and "NAME=FILE.npy" in err
    code, _, err = run_cli(capsys, "run", str(EXAMPLE), "--input",
                        f"feature={tmp_path / 'none.npy'}")
    assert code == 2 and "does not exist" in err
    bad = upsample_model("v7", [0.5, 1])
    path = _save(bad, tmp_path / "bad.onnx")
    np.save(tmp_path / "x.npy", np.ones((2, 2), np.float32))
    code, _, err = run_cli(capsys, "run", path, "--input", f"X={tmp_path / 'x.npy'}")
    assert code == 2 and "only enlarges" in err and err.count("\n") == 1


def test_command_line_does_not_import_onnx_until_needed() -> None:
    script = ("import sys, onnx_upsample, onnx_upsample.cli\n"
              "onnx_upsample.cli.build_parser()\n"
              "assert 'onnx' not in sys.modules, 'onnx imported'\n"
              "assert 'onnxruntime' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT)


def _legacy_script() -> object:
    spec = importlib.util.spec_from_file_location("make_legacy_model",
                                                  ROOT / "scripts" / "make_legacy_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_legacy_model_is_what_the_script_makes(tmp_path: Path) -> None:
    script = _legacy_script()
    model = script.build()  # type: ignore[attr-defined]
    assert model.SerializeToString() == EXAMPLE.read_bytes()
    assert os.path.getsize(EXAMPLE) < 200_000
    assert model.opset_import[0].version == 9
    assert [n.op_type for n in model.graph.node] == [
        "Conv", "LeakyRelu", "Constant", "Upsample", "Concat", "Conv"]
    from onnx_upsample.onnx import check

    assert check(model) == []
    script.write_inputs(str(tmp_path))  # type: ignore[attr-defined]
    assert np.load(tmp_path / "route.npy").shape == (1, 16, 26, 26)
    _ = (TensorProto, helper)


def test_fold_refuses_a_dimension_beyond_int64_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "fold", str(EXAMPLE), "-o", str(tmp_path / "f.onnx"),
                        "--input-shape", "feature=99999999999999999999,1,1,1")
    assert code == 2 and "--input-shape feature=99999999999999999999,1,1,1; expected sizes " \
        "from 0 to 2**63 - 1" in err and err.count("\n") == 1, err
    assert not (tmp_path / "f.onnx").exists()


def test_fold_a_model_with_a_local_function(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    """A model-local function has no initializers: fold's report must not assume them."""
    scales = helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 2, 2])
    function = helper.make_function(
        "local", "Up", ["x"], ["y"],
        [helper.make_node("Constant", [], ["s"], value=scales),
         helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")],
        opset_imports=[helper.make_opsetid("", 9)])
    graph = helper.make_graph(
        [helper.make_node("Up", ["x"], ["y"], domain="local")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])])
    model = helper.make_model(graph, functions=[function], opset_imports=[
        helper.make_opsetid("", 9), helper.make_opsetid("local", 1)])
    model.ir_version = 8
    source = _save(model, tmp_path / "local.onnx")
    code, out, err = run_cli(capsys, "fold", source, "-o", str(tmp_path / "f.onnx"))
    assert code == 0 and "folded" in out, (out, err)
