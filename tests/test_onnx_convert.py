"""``upgrade`` (Upsample -> Resize) and ``downgrade`` (Resize -> Upsample), bit for bit in ORT.

Every upgraded or downgraded model passes ``onnx.checker.check_model`` (the functions call it)
and is compared with the original under onnxruntime. Versions 1 and 10, which onnxruntime does
not load, are compared with the same node in the version-9 form (and the core kernel).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from onnx_models import (
    SOURCES,
    bits_equal,
    feeds_for,
    make_model,
    ort_run,
    random_input,
    upsample_model,
)

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper, version_converter  # noqa: E402

import onnx_upsample  # noqa: E402
from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.onnx import check, downgrade, upgrade  # noqa: E402
from onnx_upsample.onnx._fixes import Action  # noqa: E402

NEWEST = onnx.defs.onnx_opset_version()
TARGETS = sorted({10, 11, 12, 13, 18, 19, 21, NEWEST})
SCALES = ([1, 1, 2, 3], [1, 1, 1.5, 2.7], [1, 1, 1.4, 1.3], [1, 1, 1.1, 1.2])
SHAPE = (1, 2, 3, 4)  # with [1, 1, 1.1, 1.2] no axis changes: ORT's global copy rule
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "yolo_head_opset9.onnx")


def _upgrade(model: object, opset: int) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        return upgrade(model, opset=opset)  # type: ignore[arg-type]


def _resize_nodes(model: object) -> list[object]:
    return [n for n in model.graph.node if n.op_type == "Resize"]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def x() -> np.ndarray:
    return random_input(SHAPE, np.float32, seed=11)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", SCALES, ids=str)
def test_upgrade_is_bit_identical_in_ort(source: str, mode: str, scales: list[float],
                                         x: np.ndarray) -> None:
    node_mode = "bilinear" if source == "v1" and mode == "linear" else mode
    model = upsample_model(source, scales, node_mode, shape=SHAPE)
    runnable = model if source not in ("v1", "v10") else upsample_model("v9-raw", scales, mode,
                                                                       shape=SHAPE)
    feeds = feeds_for(model, x, scales)
    (expected,) = ort_run(runnable, feeds)
    assert bits_equal(expected, onnx_upsample.upsample(x, scales, mode))
    for target in TARGETS:
        upgraded = _upgrade(model, target)
        assert upgraded.opset_import[0].version == target
        (resize,) = _resize_nodes(upgraded)
        attributes = {a.name: helper.get_attribute_value(a) for a in resize.attribute}
        assert attributes["mode"] == mode.encode()
        if target >= 11:
            assert attributes["coordinate_transformation_mode"] == b"asymmetric"
            assert attributes.get("nearest_mode", b"floor") == b"floor"
            assert len(resize.input) == 3 and (resize.input[1] == "") == (target >= 13)
        (y,) = ort_run(upgraded, feeds)
        assert bits_equal(y, expected), (source, mode, scales, target)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upgrade_element_types(dtype: type, mode: str) -> None:
    x = random_input((1, 3, 5, 4), dtype, seed=3)
    for scales in ([1, 1, 2, 2], [1, 1, 1.5, 2.7]):
        model = upsample_model("v9-raw", scales, mode, dtype=dtype)
        (expected,) = ort_run(model, {"X": x})
        for target in (10, 11, 13, 19):
            (y,) = ort_run(_upgrade(model, target), {"X": x})
            assert bits_equal(y, expected), (dtype, mode, scales, target)


def test_onnx_version_converter_changes_results_and_upgrade_does_not(x: np.ndarray) -> None:
    # docs/peers.md §6: the converter's 10 -> 11 step leaves Resize with half_pixel defaults
    model = upsample_model("v9-raw", [1, 1, 1.5, 2.7], "linear", shape=SHAPE)
    (expected,) = ort_run(model, {"X": x})
    (converted,) = ort_run(version_converter.convert_version(model, 13), {"X": x})
    assert not np.array_equal(converted, expected)
    (ours,) = ort_run(_upgrade(model, 13), {"X": x})
    assert bits_equal(ours, expected)


def _if_loop_function_model() -> object:
    scales = numpy_helper.from_array(np.array([1, 1, 1.5, 2], np.float32), "s")
    then_graph = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["t"], name="then_up")], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 2, 4, 6])])
    else_graph = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["e"], mode="linear", name="else_up")],
        "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 2, 4, 6])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Constant", [], ["ls"], value=numpy_helper.from_array(
             np.array([1, 1, 2, 1.5], np.float32))),
         helper.make_node("Upsample", ["X", "ls"], ["up"], mode="linear", name="loop_up"),
         helper.make_node("Add", ["acc_in", "up"], ["acc_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1, 2, 6, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1, 2, 6, 4])])
    function = helper.make_function(
        "local", "UpTwice", ["a"], ["b"],
        [helper.make_node("Constant", [], ["fs"], value=numpy_helper.from_array(
            np.array([1, 1, 2, 1.5], np.float32))),
         helper.make_node("Upsample", ["a", "fs"], ["b"], mode="nearest", name="f_up")],
        [helper.make_opsetid("", 9)])
    nodes = [
        helper.make_node("If", ["C"], ["Y"], then_branch=then_graph, else_branch=else_graph,
                         name="branch"),
        helper.make_node("Loop", ["trips", "", "zeros"], ["L"], body=body, name="loop"),
        helper.make_node("UpTwice", ["X"], ["F"], domain="local", name="call"),
    ]
    zeros = numpy_helper.from_array(np.zeros((1, 2, 6, 4), np.float32), "zeros")
    trips = numpy_helper.from_array(np.array(2, np.int64), "trips")
    model = make_model(
        nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 3, 3]),
                helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2, 4, 6]),
         helper.make_tensor_value_info("L", TensorProto.FLOAT, [1, 2, 6, 4]),
         helper.make_tensor_value_info("F", TensorProto.FLOAT, [1, 2, 6, 4])],
        [scales, zeros, trips], functions=[function],
        extra_opsets=[helper.make_opsetid("local", 1)])
    model.doc_string, model.producer_name, model.producer_version = "doc", "me", "0.1"
    model.graph.doc_string = "graph doc"
    helper.set_model_props(model, {"author": "someone"})
    return model


@pytest.mark.parametrize("target", [10, 11, 13, 19, NEWEST])
def test_upgrade_subgraphs_and_functions(target: int) -> None:
    model = _if_loop_function_model()
    before = model.SerializeToString()
    upgraded = _upgrade(model, target)
    assert model.SerializeToString() == before
    text = str(upgraded)
    assert "Upsample" not in text and text.count('op_type: "Resize"') == 4
    assert upgraded.functions[0].opset_import[0].version == target
    assert (upgraded.doc_string, upgraded.producer_name, upgraded.producer_version) == (
        "doc", "me", "0.1")
    assert upgraded.graph.doc_string == "graph doc" and upgraded.graph.name == "g"
    assert [(p.key, p.value) for p in upgraded.metadata_props] == [("author", "someone")]
    assert [n.name for n in upgraded.graph.node] == ["branch", "loop", "call"]
    x = random_input((1, 2, 3, 3), np.float32, seed=4)
    for condition in (True, False):
        feeds = {"X": x, "C": np.array(condition)}
        for a, b in zip(ort_run(model, feeds), ort_run(upgraded, feeds), strict=True):
            assert bits_equal(a, b)


def test_default_target_is_18_and_whole_net(tmp_path: object) -> None:
    model = onnx.load(EXAMPLE)
    upgraded = _upgrade(model, 18)
    assert upgrade(model).SerializeToString() == upgraded.SerializeToString()
    assert upgrade(model, opset=None).SerializeToString() == _upgrade(
        model, NEWEST).SerializeToString()
    rng = np.random.default_rng(1)
    feeds = {"feature": rng.standard_normal((1, 32, 13, 13)).astype(np.float32),
             "route": rng.standard_normal((1, 16, 26, 26)).astype(np.float32)}
    for target in (10, 11, 13, 18, NEWEST):
        for optimization in ("all", "disabled"):
            (a,) = ort_run(model, feeds, optimization)
            (b,) = ort_run(_upgrade(model, target), feeds, optimization)
            assert bits_equal(a, b)


@pytest.mark.parametrize(("scales", "nearest_mode"), [([1, 1, 0.6, 1], "ceil"),
                                                      ([1, 1, 0.45, 0.5], "ceil"),
                                                      ([1, 1, 1.5, 2.7], "floor"),
                                                      ([1, 1, 1, 1], "floor")])
def test_existing_resize10_keeps_its_results(scales: list[float], nearest_mode: str) -> None:
    x = random_input((1, 2, 9, 7), np.float32, seed=8)
    for mode in ("nearest", "linear"):
        node = helper.make_node("Resize", ["X", "s"], ["Y"], mode=mode, name="r10")
        model = make_model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                  [1, 2, 9, 7])],
                           [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                                          ["a", "b", "c", "d"])],
                           [numpy_helper.from_array(np.array(scales, np.float32), "s")],
                           opset=10)
        (expected,) = ort_run(model, {"X": x})
        for target in (11, 13, 19):
            upgraded = _upgrade(model, target)
            attributes = {a.name: helper.get_attribute_value(a)
                          for a in upgraded.graph.node[0].attribute}
            if mode == "nearest":
                assert attributes["nearest_mode"] == nearest_mode.encode()
            (y,) = ort_run(upgraded, {"X": x})
            assert bits_equal(y, expected)


def test_resize10_that_cannot_be_expressed() -> None:
    node = helper.make_node("Resize", ["X", "s"], ["Y"], mode="nearest", name="mixed")
    model = make_model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 4])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["a", "b"])],
                       [numpy_helper.from_array(np.array([0.5, 2], np.float32), "s")], opset=10)
    with pytest.raises(UpsampleError, match=r"'mixed'.*enlarge some axes and shrink others"):
        upgrade(model, opset=13)
    model.graph.initializer.pop()
    model.graph.input.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]))
    with pytest.raises(UpsampleError, match="computed at run time"):
        upgrade(model, opset=13)
    model.graph.node[0].attribute[0].s = b"linear"
    upgraded = upgrade(model, opset=13)
    x = random_input((4, 4), np.float32)
    feeds = {"X": x, "s": np.array([0.5, 2], np.float32)}
    assert bits_equal(ort_run(upgraded, feeds)[0], ort_run(model, feeds)[0])


@pytest.mark.parametrize(("model", "opset", "match"), [
    (upsample_model("v1", [1, 1, 2, 2], shape=[2, 3, 4]), 13, "4-D"),
    (upsample_model("v7", [1, 0.5]), 13, "only enlarges"),
    (upsample_model("v9-raw", [1, 1, 2, 2], "cubic"), 13, "mode is 'cubic'"),
    (upsample_model("v9-raw", [1, 2]), 9, rf"opsets 10 to {NEWEST} .*downgrade\(model, "
                                          r"opset=9\)$"),
    # above the newest opset onnx knows: the fix is the newest, not a downgrade
    (upsample_model("v9-raw", [1, 2]), NEWEST + 1, rf"opsets 10 to {NEWEST} .*; use "
                                                   rf"onnx_upsample\.onnx\.upgrade\(model, "
                                                   rf"opset={NEWEST}\)$"),
    (upsample_model("v10", [1, 2]), 10, None),
])
def test_upgrade_errors(model: object, opset: int, match: str | None) -> None:
    if match is None:  # a model at opset 10 goes to 10: fine; lowering it is not
        model.opset_import[0].version = 12  # type: ignore[attr-defined]
        match = "never lowers"
    with pytest.raises(UpsampleError, match=match):
        upgrade(model, opset=opset)  # type: ignore[arg-type]


def test_downgrade_to_an_opset_beyond_onnx_names_one_upgrade_writes() -> None:
    # the fix used to repeat the opset asked for, which upgrade refuses as well
    with pytest.raises(UpsampleError, match=rf"upgrade\(model, opset={NEWEST}\)$"):
        downgrade(upsample_model("v9-raw", [1, 2]), opset=NEWEST + 2)


def test_upgrade_argument_kinds_and_missing_inputs() -> None:
    with pytest.raises(TypeError, match="ModelProto"):
        upgrade(b"")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="integer"):
        upgrade(upsample_model("v9-raw", [1, 2]), opset="13")  # type: ignore[arg-type]
    node = helper.make_node("Upsample", [], ["Y"], name="empty")
    model = make_model([node], [], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1])])
    with pytest.raises(UpsampleError, match="'empty'"):
        upgrade(model)


def test_bilinear_in_v9_is_spelled_linear_with_a_warning(x: np.ndarray) -> None:
    model = upsample_model("v9-raw", [1, 1, 2, 2], "bilinear", shape=SHAPE)
    with pytest.warns(UpsampleWarning, match="legacy name"):
        upgraded = upgrade(model, opset=13)
    assert helper.get_attribute_value(upgraded.graph.node[0].attribute[0]) == b"linear"
    (y,) = ort_run(upgraded, {"X": x})
    assert bits_equal(y, onnx_upsample.upsample(x, [1, 1, 2, 2], "linear"))


# --------------------------------------------------------------------------- downgrade


def _resize_model(opset: int, scales: list[float], mode: str, **attributes: object) -> object:
    if opset == 10:
        node = helper.make_node("Resize", ["X", "s"], ["Y"], mode=mode, name="resize")
    else:
        roi = "" if opset >= 13 else "roi"
        node = helper.make_node("Resize", ["X", roi, "s"], ["Y"], mode=mode, name="resize",
                                **attributes)
    initializers = [numpy_helper.from_array(np.array(scales, np.float32), "s")]
    if 11 <= opset < 13:
        initializers.append(numpy_helper.from_array(np.zeros(0, np.float32), "roi"))
    nodes = [helper.make_node("Relu", ["X"], ["r"], name="relu")]
    node.input[0] = "r"
    nodes.append(node)
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                            list(SHAPE))],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                                     ["a", "b", "c", "d"])],
                      initializers, opset=opset)


def _upsample_attributes(mode: str) -> dict[str, str]:
    attributes = {"coordinate_transformation_mode": "asymmetric"}
    if mode == "nearest":
        attributes["nearest_mode"] = "floor"
    return attributes


@pytest.mark.parametrize("source", [10, 11, 13, 18, 19, NEWEST])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", SCALES, ids=str)
def test_downgrade_is_bit_identical_in_ort(source: int, mode: str, scales: list[float],
                                           x: np.ndarray) -> None:
    model = _resize_model(source, scales, mode, **_upsample_attributes(mode))
    (expected,) = ort_run(model, {"X": x})
    for target in (9, 8, 7):
        downgraded = downgrade(model, opset=target)
        assert downgraded.opset_import[0].version == target
        ops = [n.op_type for n in downgraded.graph.node]
        assert ops == ["Relu", "Upsample"]
        up = downgraded.graph.node[1]
        assert len(up.input) == (2 if target == 9 else 1)
        (y,) = ort_run(downgraded, {"X": x})
        assert bits_equal(y, expected), (source, mode, scales, target)
        assert [f for f in check(downgraded) if f.severity == "error"] == []


@pytest.mark.parametrize("source", SOURCES)
def test_round_trip_and_upsample_forms(source: str, x: np.ndarray) -> None:
    scales = [1, 1, 1.5, 2.7]
    model = upsample_model(source, scales, "nearest", shape=SHAPE)
    feeds = feeds_for(model, x, scales)
    expected = onnx_upsample.upsample(x, scales)
    for target in (9, 8, 7):
        if source == "v9-input" and target < 9:
            # scales that are a graph input's value: no folding makes them a constant
            with pytest.raises(UpsampleError, match=r"computed at run time") as caught:
                downgrade(model, opset=target)
            assert caught.value.fix.actions == (Action("downgrade", (("opset", 9),)),)
            assert "input-shape" not in str(caught.value)
            continue
        legacy = downgrade(model, opset=target)
        assert bits_equal(ort_run(legacy, feeds)[0], expected)
        assert bits_equal(ort_run(downgrade(_upgrade(model, 13), opset=target), feeds)[0],
                          expected)


@pytest.mark.parametrize(("attributes", "match"), [
    ({"coordinate_transformation_mode": "half_pixel", "nearest_mode": "floor"}, "half_pixel"),
    ({}, "half_pixel"),
    ({"coordinate_transformation_mode": "asymmetric"}, "round_prefer_floor"),
    ({"coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"}, "'ceil'"),
    ({"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor",
      "antialias": 1}, "antialias"),
    ({"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor",
      "axes": [2, 3]}, "axes"),
])
def test_resize_that_is_not_upsample(attributes: dict[str, object], match: str) -> None:
    model = _resize_model(19, [1, 1, 2, 2], "nearest", **attributes)
    with pytest.raises(UpsampleError, match=f"'resize' is not an Upsample: .*{match}"):
        downgrade(model)


def test_more_resizes_that_are_not_upsample() -> None:
    model = _resize_model(13, [1, 1, 0.5, 2], "nearest", **_upsample_attributes("nearest"))
    with pytest.raises(UpsampleError, match=r"scales\[2\] is 0.5"):
        downgrade(model)
    model = _resize_model(13, [1, 1, 2, 2], "cubic", coordinate_transformation_mode="asymmetric")
    with pytest.raises(UpsampleError, match="'cubic'"):
        downgrade(model)
    model = _resize_model(13, [1, 1, 2, 2], "nearest", **_upsample_attributes("nearest"))
    resize = model.graph.node[1]
    resize.input[2] = ""
    resize.input.append("sizes")
    model.graph.initializer.append(numpy_helper.from_array(np.array([1, 2, 6, 8], np.int64),
                                                           "sizes"))
    with pytest.raises(UpsampleError, match="sizes"):
        downgrade(model)


def test_nodes_opset_9_cannot_express() -> None:
    model = _resize_model(18, [1, 1, 2, 2], "nearest", **_upsample_attributes("nearest"))
    model.graph.node[0].op_type = "Mish"
    model.graph.node[0].name = "activation"
    with pytest.raises(UpsampleError, match="'activation' is a Mish, which opset 9 does not"):
        downgrade(model)
    model = _resize_model(13, [1, 1, 2, 2], "nearest", **_upsample_attributes("nearest"))
    model.graph.node[0].CopyFrom(helper.make_node("Pad", ["X", "pads"], ["r"], name="pad"))
    model.graph.input.append(helper.make_tensor_value_info("pads", TensorProto.INT64, [8]))
    with pytest.raises(UpsampleError, match=r"from opset 13 to 9.*'pad' \(Pad-11\)"):
        downgrade(model)
    # opset 10 is a target now (Resize-10); 11 is not, and the fix says upgrade writes it
    with pytest.raises(UpsampleError, match=r"opset is 11; .*Resize-10 \(opset 10\); for "
                                            r"opset 11 and later use .*upgrade"):
        downgrade(model, opset=11)


def test_downgrade_keeps_the_model_and_its_metadata(x: np.ndarray) -> None:
    model = _if_loop_function_model()
    upgraded = _upgrade(model, 13)
    before = upgraded.SerializeToString()
    legacy = downgrade(upgraded)
    assert upgraded.SerializeToString() == before
    assert legacy.producer_name == "me" and legacy.graph.doc_string == "graph doc"
    assert str(legacy).count('op_type: "Upsample"') == 4
    assert legacy.functions[0].opset_import[0].version == 9
    feeds = {"X": random_input((1, 2, 3, 3), np.float32, seed=4), "C": np.array(False)}
    for a, b in zip(ort_run(model, feeds), ort_run(legacy, feeds), strict=True):
        assert bits_equal(a, b)


@pytest.mark.parametrize("target", range(10, NEWEST + 1))
def test_every_target_opset(target: int, x: np.ndarray) -> None:
    for mode in ("nearest", "linear"):
        model = upsample_model("v9-raw", [1, 1, 1.5, 2.7], mode, shape=SHAPE)
        (y,) = ort_run(_upgrade(model, target), {"X": x})
        assert bits_equal(y, ort_run(model, {"X": x})[0])


def test_upgrade_and_downgrade_inside_scan() -> None:
    body = helper.make_graph(
        [helper.make_node("Upsample", ["row", "s"], ["wide"], mode="linear", name="scan_up")],
        "body", [helper.make_tensor_value_info("row", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("wide", TensorProto.FLOAT, [6, 6])])
    node = helper.make_node("Scan", ["X"], ["Y"], body=body, num_scan_inputs=1, name="scan")
    model = make_model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                              [2, 3, 4])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 6, 6])],
                       [numpy_helper.from_array(np.array([2, 1.5], np.float32), "s")])
    x = random_input((2, 3, 4), np.float32)
    (expected,) = ort_run(model, {"X": x})
    assert bits_equal(expected[1], onnx_upsample.upsample(x[1], [2, 1.5], "linear"))
    for target in (11, 16, NEWEST):
        upgraded = _upgrade(model, target)
        assert 'op_type: "Upsample"' not in str(upgraded)
        assert bits_equal(ort_run(upgraded, {"X": x})[0], expected)
        assert bits_equal(ort_run(downgrade(upgraded), {"X": x})[0], expected)


def test_downgrade_of_a_rank_0_upsample_to_the_scales_attribute_form() -> None:
    """A rank-0 input has no scales: the v7 form gets an empty FLOATS attribute (an empty
    list has no type for onnx to infer), and the result still computes the copy."""
    from onnx_upsample.onnx import downgrade

    scales = helper.make_tensor("s", TensorProto.FLOAT, [0], [])
    graph = helper.make_graph(
        [helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], initializer=[scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    lowered = downgrade(model, opset=7)
    (node,) = [n for n in lowered.graph.node if n.op_type == "Upsample"]
    (attribute,) = [a for a in node.attribute if a.name == "scales"]
    assert attribute.type == onnx.AttributeProto.FLOATS and list(attribute.floats) == []
    onnx.checker.check_model(lowered)
    # at opset 10 an Identity, as upgrade writes it: onnxruntime's Resize refuses empty scales
    ten = downgrade(model, opset=10)
    assert [n.op_type for n in ten.graph.node] == ["Identity"] and not ten.graph.initializer
    x = np.array(2.5, np.float32)
    assert bits_equal(ort_run(ten, {"x": x})[0], x)
