"""``onnx_upsample.onnx.run`` and ``onnx-upsample run`` (issue 38): a model runs in
onnxruntime, its outputs onnxruntime's own bits; what onnxruntime refuses runs cut, each
refused Upsample in onnx-upsample's kernel; onnx's reference evaluator stays a backend.

The oracle is onnxruntime's own ``InferenceSession`` on the file (or, for a model it refuses,
on the model ``upgrade`` writes, which ``upgrade --verify`` holds bit-identical to the
original), never this package's output.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from onnx_models import bits_equal, ort_run, upsample_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from runners import assert_one_line_error, python_process, run_cli  # noqa: E402

import onnx_upsample  # noqa: E402
from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample.io import formats  # noqa: E402
from onnx_upsample.onnx import RunResult, run, upgrade  # noqa: E402
from onnx_upsample.onnx._mapped import attach, detach, map_file, stand_ins  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "pytorch"
EXPORTS = [entry["file"] for entry in json.loads((CORPUS / "index.json").read_text())["models"]
           if "refused" not in entry]
EXAMPLE = ROOT / "examples" / "yolo_head_opset9.onnx"
REFERENCE = "onnx-reference+onnx-upsample"


def _session_outputs(path: Path | str, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's own default session on the file, as a user makes it."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _all_equal(ours: RunResult, theirs: list[np.ndarray]) -> bool:
    return len(ours.outputs) == len(theirs) and all(
        a.dtype == b.dtype and bits_equal(a, b) for a, b in zip(ours.outputs.values(), theirs,
                                                               strict=True))


def test_every_pytorch_export_gives_onnxruntimes_bits() -> None:
    """Before: 20 exports (opsets 7-9) differed in their Conv's last bits, 16 (Resize-10)
    failed in onnx's reference evaluator."""
    assert len(EXPORTS) >= 36  # the corpus as committed with issue 38, and any added since
    for name in EXPORTS:
        result = run(CORPUS / name, seed=0)
        assert _all_equal(result, _session_outputs(CORPUS / name, result.inputs)), name
        assert not result.cut and result.level == "ORT_ENABLE_ALL", name
        assert result.nodes and all(node.runs_in == "onnxruntime" for node in result.nodes)
        assert {node.op.split("-")[0] for node in result.nodes} == (
            {"Resize"} if name.endswith("opset10.onnx") else {"Upsample"})


def _as_opset10_upsample(name: str) -> onnx.ModelProto:
    """A PyTorch opset-9 export importing opset 10: its Upsample becomes Upsample-10 (the
    same form), which onnxruntime refuses; Conv, Relu and Constant are the same in both."""
    model = onnx.load(str(CORPUS / name))
    model.opset_import[0].version = 10
    model.ir_version = 5
    return model


def _upgraded_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                      level: str) -> list[np.ndarray]:
    return ort_run(upgrade(model, opset=11), feeds, level)


@pytest.mark.parametrize("name", ["scale2_nearest_fixed_opset9.onnx",
                                  "scale1.5_nearest_dynamic_opset9.onnx"])
def test_upsample10_runs_cut_with_onnxruntimes_bits(name: str) -> None:
    model = _as_opset10_upsample(name)
    with pytest.warns(onnx_upsample.UpsampleWarning, match="deprecated"):
        result = run(model, seed=1)
    assert "deprecated" in result.refused
    assert [node.runs_in for node in result.nodes] == ["onnx-upsample"] * len(result.nodes)
    assert all(node.op == "Upsample-10" and "deprecated" in node.refused
               for node in result.nodes)
    # nearest copies elements: the upgrade (Resize-11) in one session, at ORT's default
    # level, and the original (Upsample-9, which ORT runs whole) give the same bits
    assert _all_equal(result, _upgraded_outputs(model, result.inputs, "all"))
    assert _all_equal(result, _session_outputs(CORPUS / name, result.inputs))


def test_linear_upsample10_matches_the_upgrade_at_the_exact_level() -> None:
    """At ORT_ENABLE_ALL onnxruntime runs a Resize after a Conv in its NCHWc kernel, which
    rounds linear interpolation otherwise; at ORT_ENABLE_EXTENDED both are its standard
    kernel, and the cut run's Upsample (onnx-upsample's) gives that kernel's bits."""
    model = _as_opset10_upsample("scale1.5_bilinear_fixed_opset9.onnx")
    with pytest.warns(onnx_upsample.UpsampleWarning):
        result = run(model, seed=2, level="ORT_ENABLE_EXTENDED")
    assert result.cut and result.level == "ORT_ENABLE_EXTENDED"
    assert _all_equal(result, _upgraded_outputs(model, result.inputs, "extended"))


def _upsample1(path: Path) -> onnx.ModelProto:
    """An opset-7 export (Upsample-7, scales attribute) as the Upsample-1 of opset 6
    (height_scale, width_scale), which onnxruntime has no kernel for."""
    model = onnx.load(str(path))
    model.opset_import[0].version = 6
    for node in model.graph.node:
        if node.op_type == "Upsample":
            scales = next(a.floats for a in node.attribute if a.name == "scales")
            assert list(scales[:2]) == [1, 1]
            mode = next(a.s for a in node.attribute if a.name == "mode").decode()
            del node.attribute[:]
            node.attribute.extend([
                helper.make_attribute("height_scale", scales[2]),
                helper.make_attribute("width_scale", scales[3]),
                helper.make_attribute("mode", "bilinear" if mode == "linear" else mode)])
    return model


def test_upsample1_runs_in_the_kernel(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    source = CORPUS / "size_nearest_fixed_opset7.onnx"
    path = tmp_path / "v1.onnx"
    onnx.save(_upsample1(source), str(path))
    code, out, err = run_cli(capsys, "run", path, "--random", "--json", "--output-dir",
                             tmp_path / "out")
    assert code == 0, err
    document = json.loads(out)
    assert document["backend"] == "onnxruntime" and document["cut"] is True
    assert document["level"] == "ORT_ENABLE_ALL" and document["refused"]
    (node,) = document["nodes"]
    assert node["op"] == "Upsample-1" and node["runs_in"] == "onnx-upsample"
    assert node["refused"]
    feeds = {"x": onnx_upsample.onnx._feeds.random_feeds(
        onnx.load(str(path)).graph.input[:1], {}, {}, 0)["x"]}
    # the opset-7 original, which ORT runs whole at its default level, gives the same bits
    (expected,) = _session_outputs(source, feeds)
    assert bits_equal(np.load(tmp_path / "out" / "y.npy"), expected)


def test_upper_case_modes_need_legacy_modes() -> None:
    model = onnx.load(str(CORPUS / "scale2_bilinear_fixed_opset9.onnx"))
    for node in model.graph.node:
        for attribute in node.attribute:
            if node.op_type == "Upsample" and attribute.name == "mode":
                attribute.s = b"LINEAR"
    with pytest.raises(UpsampleError, match="legacy"):
        run(model, seed=0)
    with pytest.warns(onnx_upsample.UpsampleWarning, match="LINEAR"):
        result = run(model, seed=0, legacy_modes=True, level="ORT_ENABLE_EXTENDED")
    assert [node.runs_in for node in result.nodes] == ["onnx-upsample"]
    lowered = onnx.load(str(CORPUS / "scale2_bilinear_fixed_opset9.onnx"))
    assert _all_equal(result, ort_run(lowered, result.inputs, "extended"))


def test_a_model_onnxruntime_refuses_even_cut_names_the_reference_backend() -> None:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Upsample", ["X"], ["U"], scales=[1.0, 1.0, 2.0, 2.0]),
             helper.make_node("Mystery", ["U"], ["Y"], domain="example.custom")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[
        helper.make_opsetid("", 10), helper.make_opsetid("example.custom", 1)])
    with pytest.raises(UpsampleError, match="onnx-reference\\+onnx-upsample"), \
            pytest.warns(onnx_upsample.UpsampleWarning):
        run(model, seed=0)


def test_the_reference_backend_is_the_evaluator_as_before(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    np.save(tmp_path / "x.npy", x)
    for source in ("v1", "v7", "v9-raw", "v10"):
        path = tmp_path / f"{source}.onnx"
        onnx.save(upsample_model(source, [1, 1, 2, 1.5], "linear"), str(path))
        for backend in ("onnxruntime", REFERENCE):
            code, out, err = run_cli(capsys, "run", path, "--input", f"X={tmp_path / 'x.npy'}",
                                     "--output-dir", tmp_path / backend, "--backend", backend,
                                     "--json")
            assert code == 0, err
            document = json.loads(out)
            assert document["backend"] == backend
            assert document["level"] == (None if backend == REFERENCE else "ORT_ENABLE_ALL")
            (node,) = document["nodes"]
            cut = backend != REFERENCE and source in ("v1", "v10")
            assert node["runs_in"] == ("onnx-upsample" if backend == REFERENCE or cut
                                       else "onnxruntime"), (source, backend)
            assert bits_equal(np.load(tmp_path / backend / "Y.npy"),
                              onnx_upsample.upsample(x, [1, 1, 2, 1.5], "linear"))
    # onnx's own Resize-10 fails in the evaluator; the message names the other backend
    code, _, err = run_cli(capsys, "run", CORPUS / "scale2_nearest_fixed_opset10.onnx",
                           "--random", "--backend", REFERENCE)
    assert code == 2 and "--backend onnxruntime" in err
    assert_one_line_error(err)


def test_text_output_names_each_node(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", CORPUS / "twice_nearest_fixed_opset10.onnx",
                             "--random")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"ran in onnxruntime {ort.__version__} (ORT_ENABLE_ALL), the whole model"
    assert lines[1:3] == ["  /Resize (Resize-10): onnxruntime",
                          "  /Resize_1 (Resize-10): onnxruntime"]
    shape = list(_session_outputs(CORPUS / "twice_nearest_fixed_opset10.onnx",
                                  {"x": np.zeros((1, 3, 10, 14), np.float32)})[0].shape)
    assert lines[3].startswith(f"y: float32 {shape}, min ")


def test_bad_backend_level_and_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    for option, value, words in (("--backend", "tract", "--backend is 'tract'"),
                                 ("--level", "fast", "--level is 'fast'")):
        code, _, err = run_cli(capsys, "run", EXAMPLE, "--random", option, value)
        assert code == 2 and words in err
        assert_one_line_error(err)
    with pytest.raises(UpsampleError, match="backend is 'ort'"):
        run(EXAMPLE, seed=0, backend="ort")
    with pytest.raises(UpsampleError, match=r"inputs=\{NAME: array\}"):
        run(EXAMPLE, {"feature": np.zeros((1, 32, 13, 13), np.float32)})


def test_progress_of_slow_steps(capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step over SLOW_STEP_SECONDS gets a line on stderr, and one when it ends; none
    under -q. (A second, in use: made 0 here.)"""
    monkeypatch.setattr(formats, "SLOW_STEP_SECONDS", 0.0)
    model = _as_opset10_upsample("scale2_nearest_fixed_opset9.onnx")
    stream = io.StringIO()
    with pytest.warns(onnx_upsample.UpsampleWarning):
        run(model, seed=0, progress=stream)
    text = stream.getvalue()
    assert "loading the model into onnxruntime ..." in text
    assert "running 3 nodes ('/head/Conv' to '/Constant') in onnxruntime ..." in text
    assert "running Upsample '/Upsample': done in" in text
    code, _, err = run_cli(capsys, "run", CORPUS / "scale2_nearest_fixed_opset9.onnx",
                           "--random")
    assert code == 0 and "running the model in onnxruntime: done in" in err
    code, _, err = run_cli(capsys, "run", CORPUS / "scale2_nearest_fixed_opset9.onnx",
                           "--random", "-q")
    assert code == 0 and err == ""


@pytest.mark.slow
def test_without_onnxruntime_the_line_names_the_install_and_the_other_backend() -> None:
    code = ("import sys\nsys.modules['onnxruntime'] = None\n"
            "from onnx_upsample.cli import main\n"
            f"sys.exit(main(['run', {str(EXAMPLE)!r}, '--random']))\n")
    result = python_process(code)
    assert result.returncode == 2
    assert_one_line_error(result.stderr)
    assert "pip install 'onnxruntime==1.32.*'" in result.stderr
    assert "--backend onnx-reference+onnx-upsample" in result.stderr
    code = code.replace("'--random'", "'--random', '--backend', 'onnx-reference+onnx-upsample'")
    assert python_process(code).returncode == 0


# --------------------------------------------------------------------------- the weights


def _weighted_model(opset: int = 9) -> onnx.ModelProto:
    """Conv (weights past the detaching size, raw_data) -> Add -> Upsample (scales a small
    initializer), with a small weight stored as float_data, a large one listed as a graph
    input (an overridable input in ORT) and a large one no node reads (which ORT drops
    before it takes values given for it)."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)  # 1152 elements, 4.5 KiB
    big = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    bias = helper.make_tensor("b", TensorProto.FLOAT, [16], rng.standard_normal(16).tolist())
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 8, 5, 5])
    listed = helper.make_tensor_value_info("big", TensorProto.FLOAT, [16, 8, 3, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Conv", ["X", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["X", "big"], ["d"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "d"], ["e"]),
             helper.make_node("Upsample", ["e", "scales"], ["Y"], mode="linear")]
    scales = numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")
    graph = helper.make_graph(nodes, "g", [x, listed], [y], [
        numpy_helper.from_array(w, "w"), bias, numpy_helper.from_array(big, "big"), scales,
        numpy_helper.from_array(np.ones((32, 32), np.float32), "spare")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_mapped_file_is_the_model(tmp_path: Path) -> None:
    model = _weighted_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    mapped = map_file(str(path))
    assert mapped is not None and sorted(mapped.tensors) == ["big", "spare", "w"]
    assert sorted(stand_ins(mapped.model)) == ["big", "spare", "w"]
    assert not mapped.tensors["w"].flags.writeable  # a view of the file
    assert mapped.model.ByteSize() < 1000
    # put back, the structure is the file's model, byte for byte; so is a loaded model split
    assert attach(mapped.model, mapped.tensors).SerializeToString() == path.read_bytes()
    split = detach(model)
    assert attach(split.model, split.tensors).SerializeToString() == path.read_bytes()
    (tmp_path / "text.onnx").write_bytes(b"not a model")
    assert map_file(str(tmp_path / "text.onnx")) is None


def test_detached_weights_give_onnxruntimes_bits(tmp_path: Path) -> None:
    model = _weighted_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(6).standard_normal((1, 8, 5, 5)).astype(np.float32)
    expected = _session_outputs(path, {"X": x})
    for source in (path, model):  # mapped, and split from a loaded model
        result = run(source, {"X": x})
        assert not result.cut and _all_equal(result, expected)
    # at opset 10 the Upsample is Upsample-10, which ORT refuses: the pieces around it take
    # the same weights without a copy (compared at the level where ORT runs the Upsample-9
    # after the Add in its standard kernel, which is onnx-upsample's bits)
    onnx.save(_weighted_model(10), str(path))
    with pytest.warns(onnx_upsample.UpsampleWarning, match="deprecated"):
        result = run(path, {"X": x}, level="ORT_ENABLE_EXTENDED")
    assert result.cut and [node.runs_in for node in result.nodes] == ["onnx-upsample"]
    assert _all_equal(result, ort_run(model, {"X": x}, "extended"))
