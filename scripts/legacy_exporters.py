"""The exporters' corpus: nine models with Upsample as public converters really wrote them.

Rebuilt from what the converters' code and test data write (darknet-to-onnx scripts,
the TensorRT ``yolov3_to_onnx`` sample, OpenVINO's and onnxruntime's Upsample tests, onnx's
backend data, tf2onnx at opset 9), each one a pattern that ``upgrade --verify`` got wrong
once or that had no way out:

- :func:`conv_mixed_case_modes`: IR 3, opset 7, Conv -> LeakyRelu -> Upsample('NEAREST')
  -> Concat -> Conv -> LeakyRelu -> Upsample('Nearest'), weights listed as graph inputs;
- :func:`conv_bilinear_listed`: IR 3, opset 9, Conv -> Upsample('BILINEAR'), the scales an
  initializer listed as an input;
- :func:`batch_scaled_linear`: opset 7, a linear Upsample that also scales the batch axis
  (onnxruntime refuses it, onnx-upsample runs it) between two Conv nodes;
- :func:`computed_scales_symbolic`: scales computed as Shape -> Gather -> Cast -> Div ->
  Concat from inputs ``feat[N, 16, H, W]`` and ``route[N, 16, H2, W2]``;
- :func:`resize10_runtime_scales`: a Resize-10 whose scales arrive at run time (onnx's
  ``test_resize_downsample_*`` data);
- :func:`rank0_output_declaration`: the rank-4 output declared with ``shape { }``;
- :func:`v7_form_in_opset9`: the version-7 form (scales attribute) in an opset-9 model;
- :func:`darknet_listed_inputs`: IR 4, opset 9, every initializer listed as an input;
- :func:`tf2onnx_downscale`: ``tf.image.resize`` shrinking at opset 9, an Upsample with
  scales below 1 between two Transposes.

``make_legacy_corpus.py`` lists them with their expected outcomes.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = [
    "batch_scaled_linear", "computed_scales_symbolic", "conv_bilinear_listed",
    "conv_mixed_case_modes", "darknet_listed_inputs", "rank0_output_declaration",
    "resize10_runtime_scales", "tf2onnx_downscale", "v7_form_in_opset9",
]

FLOAT = TensorProto.FLOAT


def _conv(name: str, x: str, out: str, channels: tuple[int, int], rng: np.random.Generator,
          kernel: int = 3) -> tuple[onnx.NodeProto, list[onnx.TensorProto]]:
    """A Conv node with its weight and bias (padded to keep the size)."""
    c_in, c_out = channels
    weight = (rng.standard_normal((c_out, c_in, kernel, kernel)) * 0.3).astype(np.float32)
    bias = (rng.standard_normal(c_out) * 0.1).astype(np.float32)
    pad = kernel // 2
    node = helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [out], name=name,
                            kernel_shape=[kernel, kernel], pads=[pad] * 4)
    return node, [numpy_helper.from_array(weight, f"{name}_w"),
                  numpy_helper.from_array(bias, f"{name}_b")]


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], initializers: list[onnx.TensorProto],
           opset: int, ir: int, listed: bool, producer: str) -> onnx.ModelProto:
    """A model as the exporter saved it; ``listed``: every initializer is a graph input too."""
    if listed:
        inputs = inputs + [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                           for t in initializers]
    graph = helper.make_graph(nodes, "exported", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name=producer)
    model.ir_version = ir
    return model


def _scales(values: list[float], name: str) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.float32), name)


def conv_mixed_case_modes() -> onnx.ModelProto:
    """Two nearest Upsample-7 nodes, modes 'NEAREST' and 'Nearest', each after a Conv."""
    rng = np.random.default_rng(2018)
    conv1, w1 = _conv("c1", "X", "c1_out", (3, 8), rng)
    conv2, w2 = _conv("c2", "cat", "c2_out", (16, 8), rng)
    nodes = [conv1, helper.make_node("LeakyRelu", ["c1_out"], ["c1_r"], alpha=0.1, name="l1"),
             helper.make_node("Upsample", ["c1_r"], ["up1"], name="up_1", mode="NEAREST",
                              scales=[1.0, 1.0, 2.0, 2.0]),
             helper.make_node("Concat", ["up1", "route"], ["cat"], axis=1, name="cat"),
             conv2, helper.make_node("LeakyRelu", ["c2_out"], ["c2_r"], alpha=0.1, name="l2"),
             helper.make_node("Upsample", ["c2_r"], ["Y"], name="up_2", mode="Nearest",
                              scales=[1.0, 1.0, 2.0, 2.0])]
    inputs = [helper.make_tensor_value_info("X", FLOAT, [1, 3, 13, 13]),
              helper.make_tensor_value_info("route", FLOAT, [1, 8, 26, 26])]
    return _model(nodes, inputs, [helper.make_tensor_value_info("Y", FLOAT, [1, 8, 52, 52])],
                  w1 + w2, 7, 3, True, "darknet2caffe2onnx")


def conv_bilinear_listed() -> onnx.ModelProto:
    """Conv -> LeakyRelu -> Upsample-9('BILINEAR'), scales an initializer listed as input."""
    rng = np.random.default_rng(2019)
    conv, weights = _conv("c1", "X", "c1_out", (16, 8), rng)
    nodes = [conv, helper.make_node("LeakyRelu", ["c1_out"], ["c1_r"], alpha=0.1, name="l1"),
             helper.make_node("Upsample", ["c1_r", "up_scales"], ["Y"], name="up",
                              mode="BILINEAR")]
    return _model(nodes, [helper.make_tensor_value_info("X", FLOAT, [1, 16, 13, 13])],
                  [helper.make_tensor_value_info("Y", FLOAT, [1, 8, 26, 26])],
                  [*weights, _scales([1, 1, 2, 2], "up_scales")], 9, 3, True, "pytorch")


def batch_scaled_linear() -> onnx.ModelProto:
    """Conv -> Upsample-7(linear, scales [2, 1, 2, 2]) -> Conv: the batch axis is scaled."""
    rng = np.random.default_rng(2017)
    conv1, w1 = _conv("c1", "X", "c1_out", (3, 4), rng)
    conv2, w2 = _conv("c2", "up", "Y", (4, 4), rng, kernel=1)
    nodes = [conv1, helper.make_node("Upsample", ["c1_out"], ["up"], name="up",
                                     mode="linear", scales=[2.0, 1.0, 2.0, 2.0]), conv2]
    return _model(nodes, [helper.make_tensor_value_info("X", FLOAT, [2, 3, 6, 6])],
                  [helper.make_tensor_value_info("Y", FLOAT, [4, 4, 12, 12])],
                  w1 + w2, 7, 3, True, "caffe2")


def computed_scales_symbolic() -> onnx.ModelProto:
    """scales = [1, 1] ++ f32(Shape(route)[2:4]) / f32(Shape(feat)[2:4]), symbolic inputs."""
    nodes = [helper.make_node("Shape", ["route"], ["route_shape"], name="shape_route"),
             helper.make_node("Gather", ["route_shape", "hw"], ["route_hw"], axis=0,
                              name="gather_route"),
             helper.make_node("Cast", ["route_hw"], ["route_hw_f"], to=FLOAT, name="cast_route"),
             helper.make_node("Shape", ["feat"], ["feat_shape"], name="shape_feat"),
             helper.make_node("Gather", ["feat_shape", "hw"], ["feat_hw"], axis=0,
                              name="gather_feat"),
             helper.make_node("Cast", ["feat_hw"], ["feat_hw_f"], to=FLOAT, name="cast_feat"),
             helper.make_node("Div", ["route_hw_f", "feat_hw_f"], ["ratio"], name="div"),
             helper.make_node("Concat", ["ones", "ratio"], ["scales"], axis=0, name="concat_s"),
             helper.make_node("Upsample", ["feat", "scales"], ["up"], name="up",
                              mode="nearest"),
             helper.make_node("Concat", ["up", "route"], ["Y"], axis=1, name="route_cat")]
    inputs = [helper.make_tensor_value_info("feat", FLOAT, ["N", 16, "H", "W"]),
              helper.make_tensor_value_info("route", FLOAT, ["N", 16, "H2", "W2"])]
    initializers = [numpy_helper.from_array(np.array([2, 3], np.int64), "hw"),
                    _scales([1, 1], "ones")]
    return _model(nodes, inputs,
                  [helper.make_tensor_value_info("Y", FLOAT, ["N", 32, "H2", "W2"])],
                  initializers, 9, 4, False, "pytorch")


def resize10_runtime_scales() -> onnx.ModelProto:
    """Resize-10 (linear) with its scales a graph input, as onnx's backend data has it."""
    node = helper.make_node("Resize", ["X", "scales"], ["Y"], name="resize", mode="linear")
    inputs = [helper.make_tensor_value_info("X", FLOAT, [1, 1, 2, 4]),
              helper.make_tensor_value_info("scales", FLOAT, [4])]
    output = helper.make_tensor_value_info("Y", FLOAT, [1, 1, "H_out", "W_out"])
    return _model([node], inputs, [output], [], 10, 5, False, "backend-test")


def rank0_output_declaration() -> onnx.ModelProto:
    """An Upsample-9 whose rank-4 output Y is declared ``shape { }`` (rank 0)."""
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up", mode="nearest")
    return _model([node], [helper.make_tensor_value_info("X", FLOAT, [1, 1, 2, 2])],
                  [helper.make_tensor_value_info("Y", FLOAT, [])],
                  [_scales([1, 1, 2, 3], "scales")], 9, 4, False, "openvino-test")


def v7_form_in_opset9() -> onnx.ModelProto:
    """The TensorRT sample's route: Conv -> LeakyRelu -> Upsample with a scales attribute,
    in a model importing opset 9, every initializer listed as an input (IR 4)."""
    rng = np.random.default_rng(2020)
    conv, weights = _conv("conv_85", "X", "c85", (3, 8), rng, kernel=1)
    nodes = [conv, helper.make_node("LeakyRelu", ["c85"], ["l85"], alpha=0.1, name="leaky_85"),
             helper.make_node("Upsample", ["l85"], ["up86"], name="upsample_86",
                              mode="nearest", scales=[1.0, 1.0, 2.0, 2.0]),
             helper.make_node("Concat", ["up86", "route"], ["Y"], axis=1, name="route_87")]
    inputs = [helper.make_tensor_value_info("X", FLOAT, [1, 3, 13, 13]),
              helper.make_tensor_value_info("route", FLOAT, [1, 4, 26, 26])]
    return _model(nodes, inputs, [helper.make_tensor_value_info("Y", FLOAT, [1, 12, 26, 26])],
                  weights, 9, 4, True, "NVIDIA TensorRT sample")


def darknet_listed_inputs() -> onnx.ModelProto:
    """Conv -> BatchNormalization -> LeakyRelu -> Upsample-9 -> Concat at IR 4, every
    initializer (weights, batch-norm statistics, scales) listed as a graph input."""
    rng = np.random.default_rng(2021)
    conv, weights = _conv("conv_1", "X", "c1", (3, 8), rng)
    stats = [numpy_helper.from_array(value.astype(np.float32), name) for name, value in (
        ("bn_scale", 1 + 0.1 * rng.standard_normal(8)), ("bn_bias", 0.1 * rng.standard_normal(8)),
        ("bn_mean", 0.1 * rng.standard_normal(8)), ("bn_var", 1 + rng.random(8)))]
    nodes = [conv,
             helper.make_node("BatchNormalization", ["c1", *(t.name for t in stats)], ["bn"],
                              name="bn_1", epsilon=1e-5),
             helper.make_node("LeakyRelu", ["bn"], ["l1"], alpha=0.1, name="leaky_1"),
             helper.make_node("Upsample", ["l1", "up_scales"], ["up"], name="upsample_2",
                              mode="nearest"),
             helper.make_node("Concat", ["up", "route"], ["Y"], axis=1, name="route_3")]
    inputs = [helper.make_tensor_value_info("X", FLOAT, [1, 3, 13, 13]),
              helper.make_tensor_value_info("route", FLOAT, [1, 8, 26, 26])]
    return _model(nodes, inputs, [helper.make_tensor_value_info("Y", FLOAT, [1, 16, 26, 26])],
                  [*weights, *stats, _scales([1, 1, 2, 2], "up_scales")], 9, 4, True,
                  "darknet2onnx")


def tf2onnx_downscale() -> onnx.ModelProto:
    """tf.image.resize shrinking NHWC at opset 9: Transpose -> Upsample(scales [1, 1, 0.5,
    0.5]) -> Transpose, which onnxruntime refuses (onnxruntime issue 13457)."""
    nodes = [helper.make_node("Transpose", ["X"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Upsample", ["nchw", "Resize__5_scales"], ["small"],
                              name="Resize__5", mode="nearest"),
             helper.make_node("Transpose", ["small"], ["Y"], perm=[0, 2, 3, 1], name="to_nhwc")]
    return _model(nodes, [helper.make_tensor_value_info("X", FLOAT, [1, 8, 8, 3])],
                  [helper.make_tensor_value_info("Y", FLOAT, [1, 4, 4, 3])],
                  [_scales([1, 1, 0.5, 0.5], "Resize__5_scales")], 9, 4, False, "tf2onnx")
