"""Legacy files as old exporters saved them (issue 9): IR version 3, where every initializer
is also a graph input, upgraded to every target opset and verified bit-identical in ORT.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from runners import cli_process

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample.onnx import upgrade  # noqa: E402

SHAPE = [1, 2, 5, 7]


def _ir3_model(opset: int, mode: str, scales: list[float]) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, SHAPE)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    if opset < 9:  # the version-7 form: a scales attribute
        node = helper.make_node("Upsample", ["X"], ["Y"], name="up", mode=mode, scales=scales)
        graph = helper.make_graph([node], "legacy", [x], [y])
    else:  # version 9: scales an initializer, which IR 3 also lists as a graph input
        node = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up", mode=mode)
        tensor = numpy_helper.from_array(np.array(scales, np.float32), "scales")
        scales_input = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
        graph = helper.make_graph([node], "legacy", [x, scales_input], [y], [tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="caffe2-style")
    model.ir_version = 3
    return model


@pytest.mark.parametrize("opset", [7, 8, 9])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("target", [10, 11, 13, 18])
def test_ir3_models_upgrade_and_verify(tmp_path: Path, opset: int, mode: str,
                                       target: int) -> None:
    model = _ir3_model(opset, mode, [1.0, 1.0, 1.5, 2.0])
    onnx.save(model, tmp_path / "legacy.onnx")
    result = cli_process("upgrade", "legacy.onnx", "-o", "new.onnx", "--opset", target,
                         "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified: outputs are bit-identical" in result.stdout
    new = onnx.load(tmp_path / "new.onnx")
    onnx.checker.check_model(new, full_check=True)
    minimum = helper.find_min_ir_version_for([helper.make_opsetid("", target)])
    assert new.ir_version == max(3, minimum)
    # IR 3 listed the scales initializer as an input because it had to; at IR >= 4 that
    # would make it an overridable input, which onnxruntime does not treat as a constant
    assert [value.name for value in new.graph.input] == ["X"]


def test_ir3_upgrade_keeps_an_input_whose_declaration_says_it_is_fed() -> None:
    model = _ir3_model(9, "nearest", [1.0, 1.0, 2.0, 2.0])
    new = upgrade(model, opset=13)
    assert [value.name for value in new.graph.input] == ["X"]
    assert [node.op_type for node in new.graph.node] == ["Resize"]
    # a declared shape the initializer does not have: a default for an input that is fed
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "n"
    new = upgrade(model, opset=13)
    assert [value.name for value in new.graph.input] == ["X", "scales"]


@pytest.mark.parametrize("target", [10, 11, 13, 18])
def test_rank0_upsample_upgrades_to_identity(tmp_path: Path, target: int) -> None:
    """A rank-0 v7 Upsample (empty scales) runs in ORT; as a Resize with empty scales ORT
    refused it at run time, and opsets >= 13 failed full shape inference: an Identity is
    the same operation at every opset. infer_shapes gives its output the empty shape."""
    from onnx import AttributeProto

    from onnx_upsample.onnx import infer_shapes

    node = helper.make_node("Upsample", ["X"], ["Y"], name="up0", mode="nearest")
    node.attribute.append(helper.make_attribute("scales", [], attr_type=AttributeProto.FLOATS))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = 8
    inferred = infer_shapes(model).graph.output[0].type.tensor_type
    assert inferred.HasField("shape") and len(inferred.shape.dim) == 0
    onnx.save(model, tmp_path / "r0.onnx")
    result = cli_process("upgrade", "r0.onnx", "-o", "new.onnx", "--opset", target,
                         "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    new = onnx.load(tmp_path / "new.onnx")
    onnx.checker.check_model(new, full_check=True)
    assert [n.op_type for n in new.graph.node] == ["Identity"]


def test_check_warns_about_a_2d_scales_tensor() -> None:
    """ORT accepts a [1, 4] scales tensor; the specification says 1-D: a warning, with the fix."""
    from onnx_upsample.onnx import check

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    scales = numpy_helper.from_array(np.array([[1, 1, 2, 2]], np.float32), "scales")
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [scales]),
                              opset_imports=[helper.make_opsetid("", 9)])
    findings = check(model)
    assert [(f.severity, f.node, f.code) for f in findings] == [("warning", "up", "scales-shape")]
    assert "shape [1, 4]" in findings[0].message and "shape [4]" in findings[0].fix


def _case_model(opset: int, mode: str) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 3, 5])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    if opset >= 9:
        node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode, name="up")
        inits = [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 1.5])]
    elif opset >= 7:
        node = helper.make_node("Upsample", ["X"], ["Y"], mode=mode, name="up",
                                scales=[1.0, 1.0, 2.0, 1.5])
        inits = []
    else:
        node = helper.make_node("Upsample", ["X"], ["Y"], mode=mode, name="up",
                                height_scale=2.0, width_scale=1.5)
        inits = []
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3 if opset < 9 else 4
    return model


CASE_VARIANTS = [(9, "NEAREST", "nearest"), (9, "Linear", "linear"), (7, "BILINEAR", "linear"),
                 (7, "Nearest", "nearest"), (1, "BILINEAR", "bilinear"), (1, "NEAREST", "nearest")]


@pytest.mark.slow
@pytest.mark.parametrize(("opset", "mode", "runs_as"), CASE_VARIANTS)
def test_upper_case_modes(tmp_path: Path, opset: int, mode: str, runs_as: str) -> None:
    """Old converters wrote NEAREST/BILINEAR: check reports it with the fix, the evaluator
    refuses it unless legacy_modes, and upgrade writes it in lower case and says so; the
    upgrade is verified against the original run in onnxruntime with its modes in lower
    case (which ORT needs and which changes nothing else)."""
    import warnings

    from onnx.reference import ReferenceEvaluator

    from onnx_upsample import UpsampleError, UpsampleWarning
    from onnx_upsample import upsample as kernel
    from onnx_upsample.onnx import Upsample, check

    model = _case_model(opset, mode)
    mode_findings = [f for f in check(model) if f.code == "mode"]
    assert mode_findings and mode_findings[0].severity == "error"
    # the name the node's form takes: 'BILINEAR' is 'linear' in version 7, not 'bilinear'
    assert mode_findings[0].fix.startswith(f"write mode={runs_as!r} (")
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 5)).astype(np.float32)
    with pytest.raises(UpsampleError, match=f"mode is '{mode}'"):
        ReferenceEvaluator(model, new_ops=[Upsample]).run(None, {"X": x})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        (y,) = ReferenceEvaluator(model, new_ops=[Upsample.with_legacy_modes()]).run(
            None, {"X": x})
        expected = kernel(x, [1, 1, 2, 1.5], "linear" if "linear" in runs_as else "nearest")
    assert y.tobytes() == expected.tobytes()
    with pytest.warns(UpsampleWarning, match=f"mode '{mode}'.*is written '{runs_as}'$"):
        new = upgrade(model, opset=13)
    assert [n.op_type for n in new.graph.node] == ["Resize"]
    onnx.save(model, tmp_path / "old.onnx")
    result = cli_process("upgrade", "old.onnx", "-o", "new.onnx", "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "it runs with them in lower case, which changes nothing else" in result.stdout
    assert "onnxruntime / onnxruntime" in result.stdout  # both sides of the node
    assert "verified: outputs are bit-identical" in result.stdout
    run = cli_process("run", "old.onnx", "--random", "--legacy-modes", cwd=tmp_path)
    assert run.returncode == 0, run.stderr


def _local_function_model(body: list, *, function_opset: int = 9,
                          x_shape: tuple[int, ...] = (1, 1, 2, 2), extra_nodes: tuple = (),
                          output: tuple[str, list[int] | None] = ("Y", [1, 1, 4, 4]),
                          ) -> onnx.ModelProto:
    """An opset-9 model calling local::Up(X) -> Y, whose body is ``body`` (inputs x, output
    y), importing ``function_opset``; ``extra_nodes`` follow the call."""
    function = helper.make_function("local", "Up", ["x"], ["y"], body,
                                    [helper.make_opsetid("", function_opset)])
    graph = helper.make_graph(
        [helper.make_node("Up", ["X"], ["Y"], domain="local"), *extra_nodes], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, output[1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9),
                                                    helper.make_opsetid("local", 1)],
                              functions=[function])
    model.ir_version = 8
    return model


def _constant(name: str, values: list[float]) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        f"{name}_v", TensorProto.FLOAT, [len(values)], values))


def _function_model(function_opset: int, form: int) -> onnx.ModelProto:
    if form == 7:
        body = [helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0],
                                 name="fup")]
    else:
        body = [_constant("s", [1, 1, 2, 2]),
                helper.make_node("Upsample", ["x", "s"], ["y"], name="fup")]
    return _local_function_model(body, function_opset=function_opset)


@pytest.mark.parametrize(("function_opset", "form"), [(7, 7), (10, 9)])
def test_check_reports_functions_importing_another_opset(function_opset: int,
                                                         form: int) -> None:
    """onnx's checker rejects a function importing another default-domain opset than its
    model; check said nothing (opset 7) or blamed the model for the function's opset 10."""
    from onnx_upsample.onnx import check

    model = _function_model(function_opset, form)
    with pytest.raises(onnx.checker.ValidationError, match="not compatible"):
        onnx.checker.check_model(model)
    findings = check(model)
    opset_findings = [f for f in findings if f.code == "function-opset"]
    assert [(f.severity, f.node) for f in opset_findings] == [("error", "function local::Up")]
    assert f"imports opset {function_opset} and the model opset 9" in opset_findings[0].message
    assert all("the model imports opset 10" not in f.message for f in findings)
    assert check(_function_model(9, 9)) == []


def test_infer_shapes_enters_local_functions() -> None:
    """onnx infers an Upsample inside a model-local function with its own rule (5 x 1.4 ->
    6); the types the tools read (ort_shapes) have ORT's sizes there too, and downstream of
    the call; what infer_shapes writes leaves those sizes unknown (onnx's full check)."""
    import onnxruntime as ort

    from onnx_upsample import UpsampleWarning
    from onnx_upsample.onnx import infer_shapes
    from onnx_upsample.onnx._infer import ort_shapes

    body = [_constant("s", [1, 1, 1.4, 1.3]),
            helper.make_node("Upsample", ["x", "s"], ["y"], name="fup")]
    model = _local_function_model(body, x_shape=(1, 1, 5, 10), output=("Z", None),
                                  extra_nodes=(helper.make_node("Relu", ["Y"], ["Z"]),))
    inferred = ort_shapes(model)
    dims = {value.name: [d.dim_value for d in value.type.tensor_type.shape.dim]
            for value in [*inferred.graph.value_info, *inferred.graph.output]}
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (z,) = session.run(None, {"X": np.zeros((1, 1, 5, 10), np.float32)})
    assert dims == {"Y": list(z.shape), "Z": list(z.shape)} == {"Y": [1, 1, 7, 13],
                                                                 "Z": [1, 1, 7, 13]}
    assert len(inferred.functions) == 1  # the model keeps its function
    with pytest.warns(UpsampleWarning, match=r"'Y' axis 2 \(onnxruntime 7, onnx 6\)"):
        written = infer_shapes(model)
    assert [[d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in [*written.graph.value_info, *written.graph.output]] == [[1, 1, 0, 0]] * 2
    onnx.checker.check_model(written, full_check=True)


def test_fold_scales_enters_local_functions() -> None:
    """Scales computed from constants inside a model-local function become a Constant there;
    scales that depend on the function's input (its calls decide) stay, with a warning."""
    import warnings

    import onnxruntime as ort

    from onnx_upsample import UpsampleWarning
    from onnx_upsample.onnx import fold_scales

    def model_with(body: list) -> onnx.ModelProto:
        return _local_function_model(body, output=("Y", [1, 1, 4, 3]))

    static = model_with([_constant("a", [1, 1, 1, 1]), _constant("b", [1, 1, 2, 1.5]),
                         helper.make_node("Mul", ["a", "b"], ["s"]),
                         helper.make_node("Upsample", ["x", "s"], ["y"], name="fup")])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpsampleWarning)
        folded = fold_scales(static)
    assert [n.op_type for n in folded.functions[0].node] == ["Constant", "Upsample"]
    onnx.checker.check_model(folded)
    x = {"X": np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)}
    runs = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            .run(None, x)[0] for m in (static, folded)]
    assert runs[0].tobytes() == runs[1].tobytes()
    dynamic = model_with([helper.make_node("Shape", ["x"], ["shape"]),
                          helper.make_node("Cast", ["shape"], ["s"], to=TensorProto.FLOAT),
                          helper.make_node("Upsample", ["x", "s"], ["y"], name="fup")])
    with pytest.warns(UpsampleWarning, match=r"function local::Up/fup"):
        kept = fold_scales(dynamic)
    assert [n.op_type for n in kept.functions[0].node] == ["Shape", "Cast", "Upsample"]
