"""Build ``examples/yolo_head_opset9.onnx``: a small YOLOv3-style detection head at opset 9.

The route that joins two scales in YOLOv3, as Darknet-to-ONNX converters of 2019 exported it:

    feature [1, 32, 13, 13] -> Conv 1x1 (32 -> 16) -> LeakyRelu(0.1)
        -> Upsample-9 (nearest, scales = Constant [1, 1, 2, 2]) -> [1, 16, 26, 26]
        -> Concat with the skip input route [1, 16, 26, 26] -> [1, 32, 26, 26]
        -> Conv 3x3 (32 -> 18, pad 1) -> detections [1, 18, 26, 26]   (3 anchors x (5 + 1 class))

``--mode linear`` writes its twin with a bilinear Upsample (``mode="linear"``), as
converters of PyTorch's ``upsample_bilinear2d`` wrote it at opset 9:
``examples/yolo_head_linear_opset9.onnx``, on which ``onnx-upsample diff`` finds runtimes
that disagree (nearest copies elements, so runtimes rarely do).

Weights are deterministic (numpy's default_rng(2019)), so the files are reproducible byte for
byte. Run from the repository root::

    python scripts/make_legacy_model.py                    # writes the model
    python scripts/make_legacy_model.py --mode linear      # writes its bilinear twin
    python scripts/make_legacy_model.py --inputs build/demo # also writes feature.npy, route.npy
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODEL_PATH = os.path.join("examples", "yolo_head_opset9.onnx")
LINEAR_PATH = os.path.join("examples", "yolo_head_linear_opset9.onnx")
INPUT_SHAPES = {"feature": (1, 32, 13, 13), "route": (1, 16, 26, 26)}


def build(mode: str = "nearest") -> onnx.ModelProto:
    """The opset-9 detection head (see the module docstring), its Upsample in ``mode``."""
    rng = np.random.default_rng(2019)
    w1 = (rng.standard_normal((16, 32, 1, 1)) * 0.2).astype(np.float32)
    b1 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((18, 32, 3, 3)) * 0.06).astype(np.float32)
    b2 = (rng.standard_normal(18) * 0.1).astype(np.float32)
    scales = helper.make_tensor("upsample_scales_value", TensorProto.FLOAT, [4],
                                [1.0, 1.0, 2.0, 2.0])
    nodes = [
        helper.make_node("Conv", ["feature", "conv1.weight", "conv1.bias"], ["conv1"],
                         name="conv_85", kernel_shape=[1, 1], pads=[0, 0, 0, 0],
                         strides=[1, 1]),
        helper.make_node("LeakyRelu", ["conv1"], ["leaky1"], name="leaky_85", alpha=0.1),
        helper.make_node("Constant", [], ["upsample_scales"], name="upsample_scales",
                         value=scales),
        helper.make_node("Upsample", ["leaky1", "upsample_scales"], ["upsampled"],
                         name="upsample_86", mode=mode),
        helper.make_node("Concat", ["upsampled", "route"], ["concat"], name="route_87",
                         axis=1),
        helper.make_node("Conv", ["concat", "conv2.weight", "conv2.bias"], ["detections"],
                         name="conv_88", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "yolo_head",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
         for name, shape in INPUT_SHAPES.items()],
        [helper.make_tensor_value_info("detections", TensorProto.FLOAT, [1, 18, 26, 26])],
        [numpy_helper.from_array(w1, "conv1.weight"), numpy_helper.from_array(b1, "conv1.bias"),
         numpy_helper.from_array(w2, "conv2.weight"), numpy_helper.from_array(b2, "conv2.bias")],
        doc_string=f"YOLOv3-style route: 1x1 conv, LeakyRelu, 2x {mode} Upsample, concat "
        "with the skip input, 3x3 detection conv (3 anchors x (5 + 1 class)).",
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)],
                              producer_name="onnx-upsample scripts/make_legacy_model.py",
                              producer_version="1", doc_string="A legacy (opset 9) "
                              "detection head with an Upsample-9 node, for the demo.")
    model.ir_version = 4  # what exporters of the opset-9 era wrote
    helper.set_model_props(model, {"source": "synthetic, deterministic weights (seed 2019)"})
    onnx.checker.check_model(model)
    return model


def write_inputs(directory: str) -> None:
    """Deterministic example inputs, ``DIR/feature.npy`` and ``DIR/route.npy``."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(7)
    for name, shape in INPUT_SHAPES.items():
        np.save(os.path.join(directory, f"{name}.npy"),
                rng.standard_normal(shape).astype(np.float32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=None,
                        help=f"default {MODEL_PATH} ({LINEAR_PATH} with --mode linear)")
    parser.add_argument("--mode", choices=("nearest", "linear"), default="nearest",
                        help="the Upsample's mode (default nearest)")
    parser.add_argument("--inputs", metavar="DIR", default=None,
                        help="also write example inputs feature.npy and route.npy to DIR")
    args = parser.parse_args()
    model = build(args.mode)
    args.output = args.output or (LINEAR_PATH if args.mode == "linear" else MODEL_PATH)
    directory = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(directory, exist_ok=True)
    onnx.save(model, args.output)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")
    if args.inputs:
        write_inputs(args.inputs)
        print(f"wrote {args.inputs}/feature.npy and {args.inputs}/route.npy")


if __name__ == "__main__":
    main()
