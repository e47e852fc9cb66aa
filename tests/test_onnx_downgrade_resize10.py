"""``downgrade(model, opset=10)``: Resize-11 and later back to the Resize-10 they mean, as
onnxruntime runs it (asymmetric; nearest rounds down where a scale is >= 1, up below 1),
never to the deprecated Upsample-10; bit for bit in onnxruntime (issue 38, item 3)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import (
    bits_equal,
    feeds_for,
    make_model,
    ort_run,
    random_input,
    upsample_model,
)

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onnx_upsample  # noqa: E402
from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample.onnx import downgrade  # noqa: E402

NEWEST = onnx.defs.onnx_opset_version()
SHAPE = (1, 2, 3, 4)


@pytest.fixture
def x() -> np.ndarray:
    return random_input(SHAPE, np.float32, seed=11)


def _resize_at(shape: tuple[int, ...], mode: str, scales: list[float] | None = None,
               sizes: list[int] | None = None, opset: int = 13, **attributes: object) -> object:
    """X -> Resize (opset 11 or later) -> Relu, scales or sizes constant."""
    initializers = [numpy_helper.from_array(np.zeros(0, np.float32), "roi")]
    inputs = ["X", "roi", "s"]
    if scales is not None:
        initializers.append(numpy_helper.from_array(np.array(scales, np.float32), "s"))
    else:
        assert sizes is not None
        inputs = ["X", "roi", "", "sizes"]
        initializers.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
    nodes = [helper.make_node("Resize", inputs, ["u"], mode=mode, name="resize", **attributes),
             helper.make_node("Relu", ["u"], ["Y"], name="relu")]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                      initializers, opset=opset)


def _is_resize10(model: object) -> None:
    """``model`` is at opset 10 and its Resize is Resize-10 (X, scales; mode only), and
    passes onnx's full check."""
    assert model.opset_import[0].version == 10  # type: ignore[attr-defined]
    (resize,) = [n for n in model.graph.node if n.op_type == "Resize"]  # type: ignore[attr-defined]
    assert len(resize.input) == 2 and [a.name for a in resize.attribute] == ["mode"]
    assert "Upsample" not in {n.op_type for n in model.graph.node}  # type: ignore[attr-defined]
    onnx.checker.check_model(model, full_check=True)


ASYMMETRIC = {"coordinate_transformation_mode": "asymmetric"}
BIG = (1, 2, 9, 13)


# (mode, scales, nearest_mode): the roundings onnxruntime's Resize-10 has for those scales
# (down where >= 1, up where < 1; a scale of 1 either way)
@pytest.mark.parametrize(("mode", "scales", "nearest_mode"), [
    ("nearest", [1, 1, 2, 3], "floor"), ("nearest", [1, 1, 1.5, 2.7], "floor"),
    ("nearest", [1, 1, 0.5, 0.7], "ceil"), ("nearest", [1, 1, 0.34, 1], "ceil"),
    ("nearest", [1, 1, 1, 1], "ceil"), ("linear", [1, 1, 1.4, 0.6], None),
    ("linear", [1, 1, 2, 3], None)], ids=str)
@pytest.mark.parametrize("source", [11, 13, 18, NEWEST])
def test_downgrade_to_opset_10_writes_resize_10(source: int, mode: str, scales: list[float],
                                                nearest_mode: str | None) -> None:
    rounding = {} if nearest_mode is None else {"nearest_mode": nearest_mode}
    model = _resize_at(BIG, mode, scales, opset=source, **ASYMMETRIC, **rounding)
    x = random_input(BIG, np.float32, seed=3)
    lowered = downgrade(model, opset=10)
    _is_resize10(lowered)
    assert {t.name for t in lowered.graph.initializer} == {"s"}  # roi dropped
    assert bits_equal(ort_run(lowered, {"X": x})[0], ort_run(model, {"X": x})[0])


@pytest.mark.parametrize(("attributes", "scales", "match"), [
    ({"coordinate_transformation_mode": "half_pixel", "nearest_mode": "floor"},
     [1, 1, 2, 2], "coordinate_transformation_mode is 'half_pixel'"),
    ({**ASYMMETRIC}, [1, 1, 2, 2], "nearest_mode is 'round_prefer_floor'"),
    ({**ASYMMETRIC, "nearest_mode": "round_prefer_ceil"}, [1, 1, 2, 2], "'round_prefer_ceil'"),
    # the rounding onnxruntime's Resize-10 does not do for those scales
    ({**ASYMMETRIC, "nearest_mode": "ceil"}, [1, 1, 2, 2], r"'ceil'.* not shown to be <= 1"),
    ({**ASYMMETRIC, "nearest_mode": "floor"}, [1, 1, 0.5, 2], r"'floor'.* not shown to be >= 1"),
    ({**ASYMMETRIC, "nearest_mode": "floor", "antialias": 1}, [1, 1, 2, 2], "antialias is 1"),
    ({**ASYMMETRIC, "nearest_mode": "floor", "axes": [2, 3]}, [2, 2], "axes"),
])
def test_a_resize_that_is_not_resize_10_is_refused(attributes: dict[str, object],
                                                   scales: list[float], match: str) -> None:
    model = _resize_at(BIG, "nearest", scales, opset=19, **attributes)
    with pytest.raises(UpsampleError, match=rf"'resize' is not a Resize-10 \(cannot downgrade "
                                            rf"it to opset 10\): .*{match}.*; fix: \w"):
        downgrade(model, opset=10)
    model = _resize_at(BIG, "cubic", [1, 1, 2, 2], **ASYMMETRIC)
    with pytest.raises(UpsampleError, match="mode is 'cubic'"):
        downgrade(model, opset=10)


def test_downgrade_to_9_names_opset_10_only_where_that_works() -> None:
    shrinking = _resize_at(BIG, "nearest", [1, 1, 0.5, 0.7], **ASYMMETRIC, nearest_mode="ceil")
    with pytest.raises(UpsampleError, match=r"not an Upsample: .*; or onnx_upsample\.onnx\."
                                            r"downgrade\(model, opset=10\), where it is a "
                                            r"Resize-10"):
        downgrade(shrinking, opset=9)
    _is_resize10(downgrade(shrinking, opset=10))
    half_pixel = _resize_at(BIG, "nearest", [1, 1, 2, 2], nearest_mode="floor")
    with pytest.raises(UpsampleError, match="half_pixel") as caught:
        downgrade(half_pixel, opset=9)
    assert "opset=10" not in str(caught.value)


def test_sizes_become_scales_for_opset_10_only_where_exact() -> None:
    x = random_input(BIG, np.float32, seed=5)
    for mode, sizes, rounding in (("nearest", [1, 2, 18, 26], "floor"),
                                  ("nearest", [1, 2, 3, 4], "ceil"),
                                  ("linear", [1, 2, 27, 7], None)):
        model = _resize_at(BIG, mode, sizes=sizes, **ASYMMETRIC,
                           **({} if rounding is None else {"nearest_mode": rounding}))
        lowered = downgrade(model, opset=10)
        _is_resize10(lowered)
        assert "sizes" not in {t.name for t in lowered.graph.initializer}
        (y,) = ort_run(lowered, {"X": x})
        assert y.shape == tuple(sizes)
        assert bits_equal(y, ort_run(model, {"X": x})[0]), (mode, sizes)
    # 31 columns from 7: the float32 scale 31 / 7 times 7 is just below 31, and
    # onnxruntime's Resize-10 makes 30 columns with it
    scale = np.float32(31) / np.float32(7)
    resize10 = make_model(
        [helper.make_node("Resize", ["X", "s"], ["Y"], mode="nearest")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 3, 7])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 1, 1, scale], np.float32), "s")], opset=10)
    assert ort_run(resize10, {"X": np.zeros((1, 2, 3, 7), np.float32)})[0].shape[3] == 30
    model = _resize_at((1, 2, 3, 7), "nearest", sizes=[1, 2, 3, 31], **ASYMMETRIC,
                       nearest_mode="floor")
    assert ort_run(model, {"X": np.zeros((1, 2, 3, 7), np.float32)})[0].shape[3] == 31
    with pytest.raises(UpsampleError, match=r"sizes \[1, 2, 3, 31\] are not exactly scales "
                                            r".*would give \[1, 2, 3, 30\]"):
        downgrade(model, opset=10)
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "w"
    with pytest.raises(UpsampleError, match="shape is not static"):
        downgrade(model, opset=10)


def test_upsample_becomes_resize_10_never_upsample_10(x: np.ndarray) -> None:
    for source in ("v9-raw", "v7"):
        model = upsample_model(source, [1, 1, 1.5, 2.7], "nearest", shape=SHAPE)
        lowered = downgrade(model, opset=10)
        _is_resize10(lowered)
        expected = onnx_upsample.upsample(x, [1, 1, 1.5, 2.7])
        assert bits_equal(ort_run(lowered, feeds_for(model, x, [1, 1, 1.5, 2.7]))[0], expected)

