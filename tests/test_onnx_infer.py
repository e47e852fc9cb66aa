"""``onnx_upsample.onnx.infer_shapes``: ORT's size rule for Upsample, onnx's for the rest,
and unknown where onnx's own rule gives another size (a file declaring ORT's size there fails
onnx's full check and makes ORT warn at every load); ``ort_shapes``, ORT's sizes everywhere,
for the tools that read them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx_models import (
    dims,
    make_model,
    ort_run,
    random_input,
    upsample_model,
    value_type,
)

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.onnx import infer_shapes  # noqa: E402
from onnx_upsample.onnx._infer import ort_shapes  # noqa: E402

# (input dim, scale, onnxruntime's output dim) from docs/peers.md §1: onnx's float64 rule differs
CASES = [(5, 1.4, 7), (10, 1.3, 13), (3, 5 / 3, 5), (6, 7 / 6, 7), (7, 9 / 7, 9), (20, 1.05, 21),
         (4, 1.25, 5), (3, 4 / 3, 4)]


@pytest.mark.parametrize("source", ["v1", "v7", "v9-raw", "v9-float_data", "v9-constant",
                                    "v10"])
def test_output_shapes_follow_ort(source: str) -> None:
    for n, scale, expected in CASES:
        model = upsample_model(source, [1, 1, scale, 2], shape=[1, 2, n, 3])
        assert dims(value_type(ort_shapes(model), "Y")) == [1, 2, expected, 6]
        # where onnx's own rule says another size, what infer_shapes writes leaves that axis
        # unknown (and says so), so that onnx's full check takes the model
        plain = value_type(onnx.shape_inference.infer_shapes(model), "Y")
        theirs = dims(plain)[2] if plain.tensor_type.HasField("shape") else None
        # Upsample-1: onnx infers no size (the declared symbol stays)
        differs = isinstance(theirs, int) and theirs != expected
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            inferred = infer_shapes(model)
        assert dims(value_type(inferred, "Y")) == [1, 2, None if differs else expected, 6]
        assert [str(w.message).split(": ")[1].split(";")[0] for w in said] == (
            [f"'Y' axis 2 (onnxruntime {expected}, onnx {theirs})"] if differs else [])
        if source != "v10":  # the deprecated Upsample-10: onnx's checker refuses the node
            onnx.checker.check_model(inferred, full_check=True)
        if source.startswith("v9"):
            (y,) = ort_run(model, {"X": random_input((1, 2, n, 3), np.float32)})
            assert list(y.shape) == [1, 2, expected, 6]


def test_downstream_shapes_use_ort_sizes() -> None:
    scales = numpy_helper.from_array(np.array([1, 1, 1.4, 1.3], np.float32), "s")
    skip = helper.make_tensor_value_info("skip", TensorProto.FLOAT, [1, 2, 7, 13])
    nodes = [helper.make_node("Upsample", ["X", "s"], ["u"], name="up1"),
             helper.make_node("Concat", ["u", "skip"], ["c"], axis=1),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Upsample", ["r", "s"], ["Y"], name="up2")]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                             [1, 2, 5, 10]), skip],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [scales])
    inferred = ort_shapes(model)
    assert dims(value_type(inferred, "u")) == [1, 2, 7, 13]
    assert dims(value_type(inferred, "c")) == [1, 4, 7, 13]
    assert dims(value_type(inferred, "r")) == [1, 4, 7, 13]
    assert dims(value_type(inferred, "Y")) == [1, 4, 9, 16]
    plain = onnx.shape_inference.infer_shapes(model)
    assert dims(value_type(plain, "u")) == [1, 2, 6, 12]
    # onnxruntime's graph-level inference uses onnx's rule too: it refuses to load this model
    # ("Inferred=7 Declared=6"), although its kernel makes the 7 x 13 the Concat needs
    with pytest.raises(Exception, match="Inferred=7 Declared=6"):
        ort_run(model, {"X": random_input((1, 2, 5, 10), np.float32),
                        "skip": random_input((1, 2, 7, 13), np.float32)})
    chain = make_model([nodes[0], helper.make_node("Relu", ["u"], ["r"]), nodes[3]],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 5, 10])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [scales])
    assert dims(value_type(ort_shapes(chain), "Y")) == [1, 2, 9, 16]
    (y,) = ort_run(chain, {"X": random_input((1, 2, 5, 10), np.float32)})
    assert y.shape == (1, 2, 9, 16)
    # written, the chain declares the sizes onnx's rule gives too (none here), and no other
    with pytest.warns(UpsampleWarning, match="'u' axis 2"):
        written = infer_shapes(chain)
    assert [dims(value_type(written, name)) for name in ("u", "r", "Y")] == [
        [1, 2, None, None]] * 3
    onnx.checker.check_model(written, full_check=True)


def test_symbolic_dims_dynamic_scales_and_zero() -> None:
    model = upsample_model("v9-raw", [1, 2, 1, 3], shape=["N", "C", 0, 4])
    assert dims(value_type(infer_shapes(model), "Y")) == ["N", None, 0, 12]
    model = upsample_model("v9-input", [1, 2, 1, 3], shape=[1, 2, 0, 4])
    y = value_type(infer_shapes(model), "Y")
    assert dims(y) == [None, None, 0, None]
    assert y.tensor_type.elem_type == TensorProto.FLOAT


def test_declared_wrong_shape_is_replaced_and_input_is_kept() -> None:
    model = upsample_model("v7", [1, 1, 1.4, 1.3], shape=[1, 1, 5, 10])
    model.graph.output[0].CopyFrom(
        helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 6, 12]))
    before = model.SerializeToString()
    assert dims(value_type(ort_shapes(model), "Y")) == [1, 1, 7, 13]
    with pytest.warns(UpsampleWarning, match=r"\(onnxruntime 7, onnx 6\)"):
        inferred = infer_shapes(model)
    # onnx's rule says 6 x 12, onnxruntime makes 7 x 13: neither declared
    assert dims(value_type(inferred, "Y")) == [1, 1, None, None]
    assert model.SerializeToString() == before
    assert [n.domain for n in inferred.graph.node] == [""]
    assert [(o.domain, o.version) for o in inferred.opset_import] == [("", 7)]


def test_bad_scales_leave_the_shape_unknown() -> None:
    # onnx infers -9223372036854775808 for a NaN scale and -4 for -2 (docs/peers.md §5)
    for scales in ([1, 1, float("nan"), 2], [1, 1, -2, 2], [1, 1, 2]):
        model = upsample_model("v7", scales, rank=4, shape=[1, 1, 2, 2])
        y = value_type(infer_shapes(model), "Y")
        assert y.tensor_type.elem_type == TensorProto.FLOAT
        assert not y.tensor_type.HasField("shape") or all(
            d is None or d >= 0 for d in dims(y))


def test_v1_needs_rank_4_and_subgraphs_are_inferred() -> None:
    model = upsample_model("v1", [1, 1, 2, 2], shape=[2, 2, 2])
    assert not value_type(infer_shapes(model), "Y").tensor_type.HasField("shape")
    body = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["t"], name="inner")], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("If", ["C"], ["Y"], then_branch=body, else_branch=body)]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 10]),
                               helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array([1.4, 1.3], np.float32), "s")])
    inferred = infer_shapes(model)
    branch = inferred.graph.node[0].attribute[0].g
    assert dims(branch.output[0].type) == [7, 13]
    assert dims(value_type(inferred, "Y")) == [7, 13]


def test_errors() -> None:
    with pytest.raises(TypeError, match="ModelProto"):
        infer_shapes(b"model")  # type: ignore[arg-type]
    with pytest.raises(UpsampleError, match=r"'model\.onnx' does not exist"):
        infer_shapes("model.onnx")
