"""``onnx_upsample.onnx.check``: findings for bad models, never an exception."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import make_model, upsample_model

onnx = pytest.importorskip("onnx")

from onnx import AttributeProto, TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample.onnx import Finding, check  # noqa: E402


def _codes(model: object) -> set[tuple[str, str]]:
    return {(f.severity, f.code) for f in check(model)}  # type: ignore[arg-type]


def _model(node: object, opset: int = 9, x_type: int = TensorProto.FLOAT,
           x_shape: list[int | str] | None = None, y_shape: list[int | str] | None = None,
           initializers: tuple[object, ...] = ()) -> object:
    x_shape = [1, 1, 2, 2] if x_shape is None else x_shape
    y_shape = ["a", "b", "c", "d"][: len(x_shape)] if y_shape is None else y_shape
    return make_model([node], [helper.make_tensor_value_info("X", x_type, x_shape)],
                      [helper.make_tensor_value_info("Y", x_type, y_shape)],
                      list(initializers), opset=opset)


def _scales(values: list[float], dtype: type = np.float32, name: str = "s") -> object:
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


@pytest.mark.parametrize("source", ["v1", "v7", "v8", "v9-raw", "v9-float_data",
                                    "v9-constant"])
def test_clean_models_have_no_errors(source: str) -> None:
    model = upsample_model(source, [1, 1, 2, 3], shape=[1, 2, 3, 4])
    findings = check(model)
    assert [f for f in findings if f.severity == "error"] == []
    assert ({f.code for f in findings} == {"experimental"}) == (source == "v1")
    assert all(isinstance(f, Finding) for f in findings)


def test_finding_fields_and_text() -> None:
    node = helper.make_node("Upsample", ["X"], ["Y"], name="up", scales=[1.0, 1, 2, 2])
    (finding,) = check(_model(node, opset=9))
    assert finding.severity == "error" and finding.node == "up"
    assert finding.code == "form-opset"
    assert "opset 9" in finding.message and "input size 1 not in range" in finding.message
    assert "downgrade(model, opset=9)" in finding.fix
    assert str(finding).startswith("error: up: ") and "Fix: " in str(finding)


@pytest.mark.parametrize(("node", "opset", "expected"), [
    # no inputs at all, and an empty X
    (helper.make_node("Upsample", [], ["Y"]), 9, ("error", "missing-scales")),
    (helper.make_node("Upsample", [], ["Y"], scales=[2.0]), 7, ("error", "no-inputs")),
    (helper.make_node("Upsample", ["", "s"], ["Y"]), 9, ("error", "no-inputs")),
    (helper.make_node("Upsample", ["X", "s", "t"], ["Y"]), 9, ("error", "arity")),
    (helper.make_node("Upsample", ["X", "s"], []), 9, ("error", "arity")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"], scales=[1.0, 1, 2, 2]), 7,
     ("error", "arity")),
    # missing or malformed attributes
    (helper.make_node("Upsample", ["X"], ["Y"]), 7, ("error", "missing-attribute")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0), 6,
     ("error", "missing-attribute")),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1, 1, 2, 2]), 7,
     ("error", "attribute-type")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2, width_scale=2.0), 6,
     ("error", "attribute-type")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"], mode=1), 9, ("error", "attribute-type")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"], align_corners=1), 9,
     ("error", "unknown-attribute")),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2], height_scale=2.0), 7,
     ("error", "ambiguous-form")),
    # modes
    (helper.make_node("Upsample", ["X", "s"], ["Y"], mode="bilinear"), 9, ("error", "mode")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"], mode="cubic"), 9, ("error", "mode")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"], mode="NEAREST"), 9, ("error", "mode")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0,
                      mode="linear"), 6, ("warning", "mode")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0,
                      mode="trilinear"), 6, ("error", "mode")),
    # form and opset
    (helper.make_node("Upsample", ["X", "s"], ["Y"]), 10, ("error", "deprecated")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"]), 13, ("error", "deprecated")),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2]), 9,
     ("error", "form-opset")),
    (helper.make_node("Upsample", ["X", "s"], ["Y"]), 8, ("error", "form-opset")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0), 7,
     ("error", "form-opset")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0), 6,
     ("warning", "experimental")),
    # constant scales
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 0.5, 2]), 7,
     ("error", "scales-value")),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, float("nan"), 2]), 7,
     ("error", "scales-value")),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 2, 2]), 7,
     ("error", "scales-count")),
    (helper.make_node("Upsample", ["X"], ["Y"], height_scale=0.5, width_scale=2.0), 6,
     ("error", "scales-value")),
])
def test_bad_nodes_are_findings(node: object, opset: int, expected: tuple[str, str]) -> None:
    model = _model(node, opset=opset, initializers=(_scales([1, 1, 2, 2]),))
    assert expected in _codes(model)


def test_scales_tensor_type_and_v1_rank() -> None:
    node = helper.make_node("Upsample", ["X", "s"], ["Y"])
    model = _model(node, initializers=(_scales([1, 1, 2, 2], np.float64),))
    assert ("error", "scales-type") in _codes(model)
    node = helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0)
    assert ("error", "rank") in _codes(_model(node, opset=6, x_shape=[2, 2]))


@pytest.mark.parametrize(("elem", "opset", "expected"), [
    (TensorProto.BFLOAT16, 9, ("error", "element-type")),
    (TensorProto.UINT8, 6, ("error", "element-type")),
    (TensorProto.DOUBLE, 9, ("warning", "ort-element-type")),
    (TensorProto.BOOL, 7, ("warning", "ort-element-type")),
])
def test_element_types(elem: int, opset: int, expected: tuple[str, str]) -> None:
    if opset == 6:
        node = helper.make_node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=2.0)
    elif opset == 7:
        node = helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2])
    else:
        node = helper.make_node("Upsample", ["X", "s"], ["Y"])
    model = _model(node, opset=opset, x_type=elem, initializers=(_scales([1, 1, 2, 2]),))
    assert expected in _codes(model)


def test_linear_bool_and_ort_linear_limits() -> None:
    node = helper.make_node("Upsample", ["X"], ["Y"], scales=[2.0, 2.0], mode="linear")
    model = _model(node, opset=7, x_type=TensorProto.BOOL, x_shape=[2, 2])
    assert ("error", "linear-type") in _codes(model)
    node = helper.make_node("Upsample", ["X"], ["Y"], scales=[2.0], mode="linear")
    assert ("warning", "ort-linear") in _codes(_model(node, opset=7, x_shape=[3]))
    node = helper.make_node("Upsample", ["X"], ["Y"], scales=[2.0, 1, 2, 2], mode="linear")
    assert ("warning", "ort-linear") in _codes(_model(node, opset=7))
    node = helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2], mode="linear")
    assert _codes(_model(node, opset=7)) == set()


def test_declared_shapes_and_onnx_float64_rule() -> None:
    node = helper.make_node("Upsample", ["X"], ["Y"], name="up", scales=[1.0, 1, 1.4, 1.3])
    # the model declares onnx's float64 result; onnxruntime gives [1, 1, 7, 13]
    model = _model(node, opset=7, x_shape=[1, 1, 5, 10], y_shape=[1, 1, 6, 12])
    findings = check(model)
    declared = [f for f in findings if f.code == "declared-shape"]
    assert len(declared) == 1 and "[1, 1, 7, 13]" in declared[0].message
    onnx_rule = [f for f in findings if f.code == "onnx-shape-inference"]
    assert {f.severity for f in onnx_rule} == {"warning"} and len(onnx_rule) == 2
    assert "infers 6 for axis 2" in onnx_rule[0].message
    assert "infer_shapes" in onnx_rule[0].fix
    # declaring the real shape is right (onnx's warning stays)
    model = _model(node, opset=7, x_shape=[1, 1, 5, 10], y_shape=[1, 1, 7, 13])
    assert _codes(model) == {("warning", "onnx-shape-inference")}
    model = _model(node, opset=7, x_shape=[1, 1, 5, 10], y_shape=[1, 7, 13])
    assert ("error", "declared-shape") in _codes(model)


def test_dynamic_scales() -> None:
    model = upsample_model("v9-input", [1, 1, 2, 2])
    (finding,) = check(model)
    assert finding.code == "dynamic-scales" and "graph input 'scales'" in finding.message
    nodes = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Cast", ["shape"], ["s"], to=TensorProto.FLOAT),
             helper.make_node("Upsample", ["X", "s"], ["Y"], name="up")]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                             [1, 1, 2, 2])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 2, 4])])
    (finding,) = check(model)
    assert finding.code == "dynamic-scales" and "fold_scales" in finding.fix


def test_subgraphs_and_functions_are_checked_with_their_place() -> None:
    body = helper.make_graph(
        [helper.make_node("Upsample", ["X"], ["t"], name="inner", scales=[2.0, 2.0])],
        "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4, 4])])
    function = helper.make_function(
        "local", "Up", ["a"], ["b"],
        [helper.make_node("Upsample", ["a", "s"], ["b"], name="in_function")],
        [helper.make_opsetid("", 10)])
    nodes = [helper.make_node("If", ["C"], ["Y"], then_branch=body, else_branch=body,
                              name="branch"),
             helper.make_node("Up", ["X"], ["Z"], domain="local")]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2]),
                               helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 4]),
                        helper.make_tensor_value_info("Z", TensorProto.FLOAT, [4, 4])],
                       opset=9, functions=[function],
                       extra_opsets=[helper.make_opsetid("local", 1)])
    found = {(f.node, f.code) for f in check(model)}
    assert ("branch.then_branch/inner", "form-opset") in found
    assert ("branch.else_branch/inner", "form-opset") in found
    assert ("function local::Up/in_function", "deprecated") in found


def test_check_never_raises_on_malformed_nodes() -> None:
    rng = np.random.default_rng(0)
    attributes = [
        helper.make_attribute("scales", [1.0, 2.0]), helper.make_attribute("scales", [1, 2]),
        helper.make_attribute("scales", "x"), helper.make_attribute("mode", "linear"),
        helper.make_attribute("mode", 3), helper.make_attribute("mode", b"\xff"),
        helper.make_attribute("height_scale", 2.0), helper.make_attribute("width_scale", 1),
        helper.make_attribute("extra", 1.0),
    ]
    reference = AttributeProto()
    reference.name, reference.ref_attr_name, reference.type = "scales", "s", AttributeProto.FLOATS
    attributes.append(reference)
    inputs = [[], [""], ["X"], ["X", ""], ["X", "s"], ["X", "missing"], ["X", "s", "s"]]
    for trial in range(120):
        chosen = rng.choice(len(attributes), size=rng.integers(0, 4), replace=False)
        node = helper.make_node("Upsample", inputs[trial % len(inputs)],
                                ["Y"] if trial % 5 else [])
        by_name = {}
        for index in chosen:
            by_name[attributes[index].name] = attributes[index]
        node.attribute.extend(by_name.values())
        for opset in (6, 7, 9, 11):
            model = _model(node, opset=opset, initializers=(_scales([1, 2]),),
                           x_shape=[2, 2])
            findings = check(model)
            assert all(isinstance(f, Finding) and f.fix for f in findings)


def test_check_rejects_non_models() -> None:
    with pytest.raises(TypeError, match="ModelProto"):
        check(b"not a model")  # type: ignore[arg-type]


def test_check_does_not_modify_the_model() -> None:
    model = upsample_model("v7", [1, 1, 1.4, 1.3], shape=[1, 1, 5, 10])
    model.opset_import[0].version = 9
    before = model.SerializeToString()
    check(model)
    assert model.SerializeToString() == before


def _sqrt_scales(x_shape: list[int | str], opset: int, op: str) -> object:
    """``op`` (Upsample-9 or Resize-10) whose nearest scales are [1, 1, sqrt(H), sqrt(W)]:
    computed from the input's shape by a node no rule of check's proofs follows."""
    nodes = [helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("Gather", ["shape", "hw_axes"], ["hw"], axis=0),
             helper.make_node("Cast", ["hw"], ["hw_f"], to=TensorProto.FLOAT),
             helper.make_node("Sqrt", ["hw_f"], ["root"]),
             helper.make_node("Concat", ["ones", "root"], ["scales"], axis=0),
             helper.make_node(op, ["X", "scales"], ["Y"], mode="nearest", name="r")]
    inits = [numpy_helper.from_array(np.array([2, 3], np.int64), "hw_axes"),
             numpy_helper.from_array(np.ones(2, np.float32), "ones")]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits,
                      opset=opset)


def test_the_fix_of_computed_scales_names_fold_only_where_it_folds() -> None:
    """Before: scales computed from symbolic dimensions were told to fold, which left them
    as they were."""
    static = [f for f in check(_sqrt_scales([1, 1, 4, 9], 9, "Upsample"))
              if f.code == "dynamic-scales"]
    assert [action.function for f in static for action in f.remedy.actions] == ["fold_scales"]
    symbolic = [f for f in check(_sqrt_scales(["N", 1, "H", "W"], 9, "Upsample"))
                if f.code == "dynamic-scales"]
    assert [f.remedy.actions for f in symbolic] == [()]
    assert "--input-shape" in symbolic[0].fix


def test_a_resize10_check_cannot_prove_is_reported_with_a_fix_that_works() -> None:
    """sqrt(4) and sqrt(9) enlarge, but only evaluating them shows it: fold does, and the
    folded model upgrades; with symbolic dimensions nothing can, and the words say so."""
    from onnx_upsample.onnx import fold_scales, upgrade

    static = _sqrt_scales([1, 1, 4, 9], 10, "Resize")
    (finding,) = check(static)
    assert (finding.severity, finding.code) == ("warning", "resize10-rounding")
    assert "axis 2: not known" in finding.message
    assert [action.function for action in finding.remedy.actions] == ["fold_scales"]
    folded = fold_scales(static)
    assert check(folded) == []
    assert upgrade(folded, opset=13).graph.node[-1].op_type == "Resize"
    (symbolic,) = check(_sqrt_scales(["N", 1, "H", "W"], 10, "Resize"))
    assert symbolic.remedy.actions == () and "keep the model at opset 10" in symbolic.fix
