"""``onnx_upsample.onnx.Upsample`` in ``onnx.reference.ReferenceEvaluator``.

Every version and scales source, against the core kernel and, where onnxruntime loads the
model (versions 7 and 9), against onnxruntime bit for bit.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from onnx_models import (
    OPSET_OF,
    SOURCES,
    bits_equal,
    evaluate,
    feeds_for,
    make_model,
    ort_run,
    random_input,
    upsample_model,
)

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import onnx_upsample  # noqa: E402
from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.onnx import Upsample  # noqa: E402

SCALES = ([1, 1, 2, 3], [1, 1, 1.5, 2.7], [1, 1, 1.4, 1.3], [1, 1, 1.1, 1.2])
ORT_SOURCES = ("v7", "v8", "v9-raw", "v9-float_data", "v9-constant", "v9-input")


def test_class_is_a_reference_op() -> None:
    assert Upsample.__name__ == "Upsample"
    assert Upsample.op_domain == ""


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", SCALES, ids=str)
def test_every_source_matches_kernel_and_ort(source: str, mode: str,
                                             scales: list[float]) -> None:
    x = random_input((1, 2, 5, 7), np.float32, seed=1)
    node_mode = "bilinear" if (source == "v1" and mode == "linear") else mode
    model = upsample_model(source, scales, node_mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (y,) = evaluate(model, feeds_for(model, x, scales), ignore_warnings=False)
    assert bits_equal(y, onnx_upsample.upsample(x, scales, mode))
    deprecated = [w for w in caught if "deprecated" in str(w.message)]
    assert bool(deprecated) == (source == "v10")
    assert all(issubclass(w.category, UpsampleWarning) for w in caught)
    if source in ORT_SOURCES:
        (expected,) = ort_run(model, feeds_for(model, x, scales))
        assert bits_equal(y, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_ort_element_types(dtype: type, mode: str) -> None:
    x = random_input((1, 3, 4, 5), dtype, seed=2)
    for source in ("v7", "v9-raw"):
        model = upsample_model(source, [1, 1, 1.5, 2.5], mode, dtype=dtype)
        (y,) = evaluate(model, {"X": x})
        (expected,) = ort_run(model, {"X": x})
        assert bits_equal(y, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_, np.uint16, np.complex64])
def test_types_ort_lacks_still_run(dtype: type) -> None:
    x = random_input((2, 3), dtype, seed=3) if dtype is not np.complex64 else (
        np.arange(6).reshape(2, 3) + 1j).astype(np.complex64)
    model = upsample_model("v9-raw", [2, 1.5], "nearest", dtype=dtype)
    (y,) = evaluate(model, {"X": x})
    assert bits_equal(y, onnx_upsample.upsample(x, [2, 1.5]))


def test_strings_nearest() -> None:
    x = np.array([["a", "bb"], ["c", "d"]], dtype=object)
    model = make_model([helper.make_node("Upsample", ["X", "s"], ["Y"])],
                       [helper.make_tensor_value_info("X", TensorProto.STRING, [2, 2])],
                       [helper.make_tensor_value_info("Y", TensorProto.STRING, None)],
                       [numpy_helper.from_array(np.array([1, 2], np.float32), "s")])
    (y,) = evaluate(model, {"X": x})
    assert y.tolist() == [["a", "a", "bb", "bb"], ["c", "c", "d", "d"]]


def test_scales_as_value_floats_constant_and_2d_tensor() -> None:
    x = random_input((1, 1, 3, 3), np.float32)
    nodes = [helper.make_node("Constant", [], ["s"], value_floats=[1.0, 1.0, 2.0, 1.5]),
             helper.make_node("Upsample", ["X", "s"], ["Y"], mode="linear")]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], opset=12)
    (y,) = evaluate(model, {"X": x})  # value_floats is opset 12's: Upsample-10 there
    assert bits_equal(y, onnx_upsample.upsample(x, [1, 1, 2, 1.5], "linear"))
    # ORT accepts a [1, 4] scales tensor; so does the evaluator
    model = make_model([helper.make_node("Upsample", ["X", "s"], ["Y"])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 3, 3])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array([[1, 1, 2, 2]], np.float32), "s")])
    assert bits_equal(evaluate(model, {"X": x})[0], ort_run(model, {"X": x})[0])


def test_v1_linear_name_warns_and_bilinear_in_v9_warns() -> None:
    x = random_input((1, 1, 2, 2), np.float32)
    model = upsample_model("v1", [1, 1, 2, 2], "linear")
    with pytest.warns(UpsampleWarning, match="calls it 'bilinear'"):
        (y,) = evaluate(model, {"X": x}, ignore_warnings=False)
    assert bits_equal(y, onnx_upsample.upsample(x, [1, 1, 2, 2], "linear"))
    model = upsample_model("v9-raw", [1, 1, 2, 2], "bilinear")
    with pytest.warns(UpsampleWarning, match="legacy name"):
        evaluate(model, {"X": x}, ignore_warnings=False)


@pytest.mark.parametrize(("source", "opset", "match"), [
    ("v7", 9, "version-7 form .* opset 9"),
    ("v9-raw", 7, "version-9 form .* opset 7"),
    ("v1", 9, "version-1 form .* opset 9"),
    ("v7", 11, "deprecated"),
])
def test_form_that_does_not_match_the_opset_runs_with_a_warning(source: str, opset: int,
                                                                 match: str) -> None:
    model = upsample_model(source, [1, 1, 2, 1.5])
    model.opset_import[0].version = opset
    x = random_input((1, 2, 3, 4), np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (y,) = evaluate(model, {"X": x}, ignore_warnings=False)
    assert any(re.search(match, str(w.message)) for w in caught)
    assert all(issubclass(w.category, UpsampleWarning) for w in caught)
    assert bits_equal(y, onnx_upsample.upsample(x, [1, 1, 2, 1.5]))


@pytest.mark.parametrize(("node", "match"), [
    (helper.make_node("Upsample", [], ["Y"], scales=[2.0]), "no input X"),
    (helper.make_node("Upsample", ["X"], ["Y"]), "required attribute 'scales'"),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[2.0], mode="cubic"), "mode is 'cubic'"),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[0.5]), "only enlarges"),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[2.0, 2.0]), "rank 1"),
    (helper.make_node("Upsample", ["X"], ["Y"], scales=[2], mode=3), "type INT"),
])
def test_bad_nodes_raise_upsample_error_naming_the_node(node: object, match: str) -> None:
    node.name = "bad"  # type: ignore[attr-defined]
    model = make_model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], opset=7)
    with pytest.raises(UpsampleError, match=match) as raised:
        evaluate(model, {"X": np.arange(3, dtype=np.float32)})
    assert "'bad'" in str(raised.value)


def test_runtime_scales_errors() -> None:
    model = upsample_model("v9-input", [1, 2])
    x = np.ones((2, 2), np.float32)
    with pytest.raises(UpsampleError, match=r"scales\[1\] is nan"):
        evaluate(model, {"X": x, "scales": np.array([1, np.nan], np.float32)})
    with pytest.raises(UpsampleError, match="rank 2"):
        evaluate(model, {"X": x, "scales": np.array([1, 2, 2], np.float32)})
    with pytest.warns(UpsampleWarning, match="float64"):
        (y,) = ReferenceEvaluator(model, new_ops=[Upsample]).run(
            None, {"X": x, "scales": np.array([1, 2], np.float64)})
    assert y.shape == (2, 4)


def test_v1_needs_4d_input() -> None:
    model = upsample_model("v1", [1, 1, 2, 2], rank=4)
    with pytest.raises(UpsampleError, match="4-D"):
        evaluate(model, {"X": np.ones((2, 2, 2), np.float32)})


def _conv_net(opset: int = 9) -> object:
    rng = np.random.default_rng(5)
    weight = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    nodes = [
        helper.make_node("Conv", ["X", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Upsample", ["r", "s"], ["u"], mode="linear", name="up"),
        helper.make_node("MaxPool", ["u"], ["Y"], kernel_shape=[2, 2], name="pool"),
    ]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                            [1, 3, 6, 6])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 6, 6])],
                      [weight, scales], opset=opset)


def test_whole_conv_net_runs_like_ort() -> None:
    model = _conv_net()
    model.graph.output.append(helper.make_tensor_value_info("u", TensorProto.FLOAT, None))
    model.graph.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, None))
    x = random_input((1, 3, 6, 6), np.float32, seed=9)
    y, u, r = evaluate(model, {"X": x})
    # ORT's default optimizations run this Upsample as com.microsoft.nchwc::Upsample (after the
    # Conv), which differs from ORT's own Upsample kernel in the last bit: stop before them
    y_ort, u_ort, r_ort = ort_run(model, {"X": x}, optimization="extended")
    # onnx's reference Conv sums in another order than ORT's: compare the Upsample exactly
    # on the same input, and the whole net to float32 precision
    assert bits_equal(onnx_upsample.upsample(r_ort, [1, 1, 2, 2], "linear"), u_ort)
    assert bits_equal(onnx_upsample.upsample(r, [1, 1, 2, 2], "linear"), u)
    np.testing.assert_allclose(y, y_ort, rtol=1e-5, atol=1e-4)


def test_upsample_in_if_branches_loop_body_and_function() -> None:
    scales = numpy_helper.from_array(np.array([2, 3], np.float32), "s")
    then_graph = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["t"], name="then_up")], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_graph = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["e"], mode="linear", name="else_up")],
        "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    function = helper.make_function(
        "local", "Up", ["a"], ["b"],
        [helper.make_node("Constant", [], ["fs"], value=numpy_helper.from_array(
            np.array([1.5, 2], np.float32))),
         helper.make_node("Upsample", ["a", "fs"], ["b"], mode="linear")],
        [helper.make_opsetid("", 9)])
    nodes = [helper.make_node("If", ["C"], ["Y"], then_branch=then_graph,
                              else_branch=else_graph, name="if"),
             helper.make_node("Up", ["X"], ["Z"], domain="local", name="call")]
    model = make_model(
        nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
                helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, None)], [scales],
        functions=[function], extra_opsets=[helper.make_opsetid("local", 1)])
    x = random_input((2, 3), np.float32)
    for condition, mode in ((True, "nearest"), (False, "linear")):
        feeds = {"X": x, "C": np.array(condition)}
        y, z = evaluate(model, feeds)
        assert bits_equal(y, onnx_upsample.upsample(x, [2, 3], mode))
        assert bits_equal(z, onnx_upsample.upsample(x, [1.5, 2], "linear"))
        y_ort, z_ort = ort_run(model, feeds)
        assert bits_equal(y, y_ort) and bits_equal(z, z_ort)


def test_opsets_table_of_sources() -> None:
    assert set(OPSET_OF) == set(SOURCES)
