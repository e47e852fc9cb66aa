"""Which side of 1 a computed scale lies on for every input size (``_bounds``, ``_dims``,
``_shape_bounds``): what ``upgrade`` reads to convert a Resize-10 whose scales PyTorch's
``size=`` export computes.

Every proof is checked against onnxruntime evaluating the same scales at every input size
from 1 to 24 (a side proven must hold at each), and the expected proofs are worked out by
hand in each case's comment; what the graph does not show stays unknown.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from onnx_models import make_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample.onnx._bounds import Bound, Lin, rounding_of  # noqa: E402
from onnx_upsample.onnx._infer import ort_shapes, site_type_maps  # noqa: E402
from onnx_upsample.onnx._shape_bounds import ShapeBounds, scale_sides  # noqa: E402

SIZES = range(1, 25)


def _int(name: str, value: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, np.int64), name)


def _weight(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.full(shape, 0.1, np.float32), name)


# Layers between the input x (N, 3, H, W) and X, the tensor resized: (nodes, initializers).
LAYERS = {
    "conv_pad1": ([helper.make_node("Conv", ["x", "w3"], ["c"], pads=[1, 1, 1, 1]),
                   helper.make_node("Relu", ["c"], ["X"])], [_weight("w3", (4, 3, 3, 3))]),
    "conv_stride2": ([helper.make_node("Conv", ["x", "w3"], ["X"], pads=[1, 1, 1, 1],
                                       strides=[2, 2])], [_weight("w3", (4, 3, 3, 3))]),
    "maxpool2": ([helper.make_node("MaxPool", ["x"], ["X"], kernel_shape=[2, 2],
                                   strides=[2, 2])], []),
    "deconv2": ([helper.make_node("ConvTranspose", ["x", "wt"], ["X"], strides=[2, 2])],
                [_weight("wt", (3, 4, 2, 2))]),
    "upsample2": ([helper.make_node("Resize", ["x", "two"], ["X"], mode="nearest")],
                  [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "two")]),
}


def _sizes(kind: str) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """Nodes computing the int64 output sizes ``out`` (2,) from x's height and width, as
    PyTorch's exporter writes ``size=(f(x.shape[2]), f(x.shape[3]))``."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"])]
    inits = [_int("two_i", 2), _int("three_i", 3), _int("one_i", 1), _int("axis_h", 2),
             _int("axis_w", 3)]
    per_axis = []
    for axis in ("h", "w"):
        source = "axis_w" if kind == "other_axis" and axis == "h" else f"axis_{axis}"
        nodes.append(helper.make_node("Gather", ["shape", source], [f"n_{axis}"], axis=0))
        if kind in ("same", "other_axis"):
            value = f"n_{axis}"
        elif kind == "three_halves":  # n * 3 // 2
            nodes += [helper.make_node("Mul", [f"n_{axis}", "three_i"], [f"m_{axis}"]),
                      helper.make_node("Div", [f"m_{axis}", "two_i"], [f"v_{axis}"])]
            value = f"v_{axis}"
        elif kind == "two_thirds":  # n * 2 // 3
            nodes += [helper.make_node("Mul", [f"n_{axis}", "two_i"], [f"m_{axis}"]),
                      helper.make_node("Div", [f"m_{axis}", "three_i"], [f"v_{axis}"])]
            value = f"v_{axis}"
        elif kind in ("plus_one", "minus_one", "times_two", "times_three"):
            op, operand = {"plus_one": ("Add", "one_i"), "minus_one": ("Sub", "one_i"),
                           "times_two": ("Mul", "two_i"),
                           "times_three": ("Mul", "three_i")}[kind]
            nodes.append(helper.make_node(op, [f"n_{axis}", operand], [f"v_{axis}"]))
            value = f"v_{axis}"
        else:
            raise ValueError(kind)
        nodes.append(helper.make_node("Unsqueeze", [value], [f"u_{axis}"], axes=[0]))
        per_axis.append(f"u_{axis}")
    nodes.append(helper.make_node("Concat", per_axis, ["out"], axis=0))
    return nodes, inits


def _scales_model(layer: str, kind: str) -> onnx.ModelProto:
    """``scales = [1, 1] ++ float(out) / float(Shape(X)[2:])``, PyTorch's ``size=`` export,
    with X = ``layer``(x); the scales are the model's output."""
    layer_nodes, layer_inits = LAYERS[layer]
    size_nodes, size_inits = _sizes(kind)
    nodes = [*layer_nodes, *size_nodes,
             helper.make_node("Cast", ["out"], ["out_f"], to=TensorProto.FLOAT),
             helper.make_node("Shape", ["X"], ["x_shape"]),
             helper.make_node("Slice", ["x_shape", "start", "end"], ["hw"]),
             helper.make_node("Cast", ["hw"], ["hw_f"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["out_f", "hw_f"], ["ratio"]),
             helper.make_node("Concat", ["ones", "ratio"], ["scales"], axis=0)]
    inits = [*layer_inits, *size_inits,
             numpy_helper.from_array(np.array([2], np.int64), "start"),
             numpy_helper.from_array(np.array([2 ** 62], np.int64), "end"),
             numpy_helper.from_array(np.ones(2, np.float32), "ones")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    out = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
    return make_model(nodes, [x], [out], inits, opset=10, ir_version=5)


def _proven(model: onnx.ModelProto) -> list[str | None] | None:
    ((site, types),) = site_type_maps(ort_shapes(model))
    return scale_sides(ShapeBounds(site, types), "scales")


def _evaluated(model: onnx.ModelProto) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    found = []
    for h in SIZES:
        for w in SIZES:
            try:
                (scales,) = session.run(None, {"x": np.zeros((1, 3, h, w), np.float32)})
            except Exception:  # a layer that makes X empty: nothing to round
                continue
            found.append(scales)
    return found


# (layer, output sizes, the sides proven for axes 2 and 3, worked out by hand)
CASES = [
    # Shape(X) = (H, W): floor(3n/2) >= n
    ("conv_pad1", "three_halves", ["up", "up"]),
    # floor(2n/3) <= n
    ("conv_pad1", "two_thirds", ["down", "down"]),
    ("conv_pad1", "plus_one", ["up", "up"]),
    ("conv_pad1", "minus_one", ["down", "down"]),
    # the same size: the scale is exactly 1
    ("conv_pad1", "same", ["one", "one"]),
    # H's size over W's and W's over itself: the first is not known
    ("conv_pad1", "other_axis", [None, "one"]),
    # X = ceil(n / 2) <= (n + 1) / 2 <= n
    ("conv_stride2", "same", ["up", "up"]),
    # X = trunc((n - 2) / 2) + 1, between (n - 1) / 2 and (n + 1) / 2: that X is >= 1 at
    # n = 1 (onnxruntime's C division makes it 1) does not follow, so nothing is proven
    ("maxpool2", "same", [None, None]),
    # X = 2n (ConvTranspose stride 2, kernel 2; Resize x2): n over 2n <= 1, 3n over 2n >= 1
    ("deconv2", "same", ["down", "down"]),
    ("deconv2", "times_three", ["up", "up"]),
    ("upsample2", "times_two", ["one", "one"]),
    ("upsample2", "three_halves", ["down", "down"]),
]


@pytest.mark.parametrize(("layer", "kind", "expected"), CASES,
                         ids=[f"{layer}-{kind}" for layer, kind, _ in CASES])
def test_sides_proven_hold_at_every_size(layer: str, kind: str,
                                         expected: list[str | None]) -> None:
    model = _scales_model(layer, kind)
    assert _proven(model) == ["one", "one", *expected]
    evaluated = _evaluated(model)
    assert len(evaluated) > 400
    for scales in evaluated:
        for axis, side in zip((2, 3), expected, strict=True):
            value = float(scales[axis])
            assert side is None or {"up": value >= 1, "down": value <= 1,
                                    "one": value == 1}[side], (layer, kind, scales)


def test_what_is_left_unknown_may_cross_1() -> None:
    """H's size over W's, left unknown above, does cross 1 (the proof is sufficient, not
    complete: MaxPool's case never does, but the bounds cannot show it)."""
    values = {float(s[2]) for s in _evaluated(_scales_model("conv_pad1", "other_axis"))}
    assert min(values) < 1 < max(values)


def test_scales_fed_or_sized_by_a_constant_are_not_known() -> None:
    # resize to 224: above the input's size for small inputs, below for large ones
    model = _scales_model("conv_pad1", "same")
    for node in model.graph.node:
        if node.op_type == "Div" and node.output[0] == "ratio":
            node.input[0] = "target"
    model.graph.initializer.append(
        numpy_helper.from_array(np.array([224, 224], np.float32), "target"))
    assert _proven(model) == ["one", "one", None, None]
    scales = helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])
    node = helper.make_node("Identity", ["s"], ["scales"])
    fed = make_model([node], [scales], [helper.make_tensor_value_info(
        "scales", TensorProto.FLOAT, [4])], opset=10)
    assert _proven(fed) is None


def test_rounding_of_the_sides() -> None:
    assert rounding_of(["one", "one", "up", "up"]) == "floor"
    assert rounding_of(["one", "one", "down", "one"]) == "ceil"
    assert rounding_of(["one", "one", "one", "one"]) == "floor"  # any: indices are integers
    assert rounding_of(["one", "one", "up", "down"]) is None
    assert rounding_of(["one", None]) is None
    assert rounding_of(None) is None


@pytest.mark.parametrize("divisor", [1, 2, 3, 7])
def test_floor_and_ceil_bounds_hold_for_every_value(divisor: int) -> None:
    """The bounds of floor(a / c) and ceil(a / c), for a = 3h - 5 over h = 1..60 (negative
    values included), hold at every h: checked by evaluating the linear forms."""
    h = Lin.symbol("h")
    a = Bound.exact(h.times(Fraction(3)) - Lin.of(5))

    def at(form: Lin | None, value: int) -> Fraction:
        assert form is not None
        return form.const + sum((c * value for _, c in form.terms), Fraction(0))

    floor, ceil = a.floor_div(divisor), a.ceil_div(divisor)
    for value in range(1, 61):
        exact = 3 * value - 5
        assert at(floor.lo, value) <= exact // divisor <= at(floor.hi, value)
        assert at(ceil.lo, value) <= -(-exact // divisor) <= at(ceil.hi, value)


def test_a_linear_form_is_nonnegative_only_where_it_is_for_every_value() -> None:
    h, w = Lin.symbol("h"), Lin.symbol("w")
    assert (h - Lin.of(1)).nonnegative()          # h >= 1
    assert not (h - Lin.of(1)).positive()         # 0 at h = 1
    assert not (h - Lin.of(2)).nonnegative()      # h = 1 gives -1
    assert not (h - w).nonnegative()              # h = 1, w = 2
    assert (h.times(Fraction(1, 2)) + w - Lin.of(Fraction(3, 2))).nonnegative()
    # integers: a lower bound of 1/2 makes ceil(h / 2) >= 1
    half = Bound(h.times(Fraction(1, 2)), None)
    assert half.at_least(Bound.exact(1)) and not half.at_least(Bound.exact(2))


# One node on x (1, 3, H, 8): the operators whose sizes _dims bounds, against onnxruntime.
WINDOWS = {
    "conv k3 p1": helper.make_node("Conv", ["x", "w3"], ["y"], pads=[1, 1, 1, 1]),
    "conv k3 s2": helper.make_node("Conv", ["x", "w3"], ["y"], strides=[2, 2]),
    "conv k3 s3 d2 p2": helper.make_node("Conv", ["x", "w3"], ["y"], strides=[3, 3],
                                         dilations=[2, 2], pads=[2, 2, 2, 2]),
    "conv same_upper s2": helper.make_node("Conv", ["x", "w3"], ["y"], strides=[2, 2],
                                           auto_pad="SAME_UPPER"),
    "conv valid s2": helper.make_node("Conv", ["x", "w3"], ["y"], strides=[2, 2],
                                      auto_pad="VALID"),
    "maxpool k2 s2": helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                      strides=[2, 2]),
    "maxpool k3 s2 ceil": helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                           strides=[2, 2], ceil_mode=1),
    "averagepool k3 p1": helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                          pads=[1, 1, 1, 1]),
    "deconv k3 s2 p1 op1": helper.make_node("ConvTranspose", ["x", "wt"], ["y"],
                                            strides=[2, 2], pads=[1, 1, 1, 1],
                                            output_padding=[1, 1]),
}


@pytest.mark.parametrize("name", list(WINDOWS))
def test_window_sizes_hold_onnxruntimes(name: str) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = make_model([WINDOWS[name]], [x], [y],
                       [_weight("w3", (4, 3, 3, 3)), _weight("wt", (3, 4, 3, 3))], opset=13)
    ((site, types),) = site_type_maps(model)
    height = ShapeBounds(site, types).dims("y")[2]
    assert height is not None and height.lo is not None and height.hi is not None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    ran = 0
    for h in SIZES:
        try:
            (out,) = session.run(None, {"x": np.zeros((1, 3, h, 8), np.float32)})
        except Exception:  # a window longer than the padded input
            continue
        ran += 1
        low, high = (bound.const + sum((c * h for _, c in bound.terms), Fraction(0))
                     for bound in (height.lo, height.hi))
        assert low <= out.shape[2] <= high, (name, h, out.shape, low, high)
    assert ran >= len(SIZES) - 2
