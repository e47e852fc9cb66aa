"""Write a corpus of ONNX models with Upsample as legacy exporters saved them.

Each model is a form found in the wild: IR version 3 (every initializer also a graph input)
and 4; opsets 1-10 with the version-1, -7, -9 and -10 forms; modes in upper case as old
converters wrote them; tensors stored as external data; Upsample in a model-local function
and in the branches of an If; scales from a Constant node, computed from the input's shape
(as PyTorch exports ``interpolate(size=...)``), and given at run time; the ``ai.onnx`` domain
spelled out; a rank-0 input; a Conv before the Upsample at IR 3 (YOLOv3's route, weights
listed as graph inputs). Beside these forms, the exporters' corpus (``legacy_exporters.py``,
group ``"exporters"``): nine models as public converters really wrote them, each with what
the tools must make of it. tests/test_legacy_corpus.py inspects, runs, upgrades (verified
bit-identical in onnxruntime) and downgrades every one; scripts/verify_matrix.py runs
``upgrade --verify`` over the exporters' corpus at opsets 11, 13, 18 and the default.

Run: ``python scripts/make_legacy_corpus.py DIR`` (one ``NAME/model.onnx`` per model).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

SHAPE = [1, 2, 5, 7]


def _exporters():  # type: ignore[no-untyped-def]
    """legacy_exporters.py beside this file (also when this file is loaded by path)."""
    name = "legacy_exporters"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


exporters = _exporters()


@dataclass(frozen=True)
class Entry:
    """One corpus model: how it is built and what the tools should make of it."""

    name: str
    build: Callable[[], onnx.ModelProto]
    legacy_modes: bool = False  # its modes need onnx-upsample's legacy_modes to run
    invalid: bool = False       # onnx's checker and onnxruntime reject it as it is
    # back to opset 9 after an upgrade, or what downgrade says instead (a regular
    # expression): onnx's converter has no Slice adapter from opset 10 down to 9, and a
    # Resize that shrinks is no Upsample
    downgrade_refusal: str | None = None
    external: bool = False      # save its tensors beside it
    runtime_inputs: tuple[str, ...] = ()  # inputs besides X that the model takes
    # onnxruntime's default optimization level (ORT_ENABLE_ALL) runs the upgrade differently
    # from the original (its NCHWc Upsample kernel takes a linear Resize after a Conv, and an
    # Upsample-9 with constant scales, but not an Upsample-7), which upgrade --verify
    # reports as a note; None: the model has no Conv before an Upsample
    default_level_differs: bool | None = None
    group: str = "forms"        # "exporters": the nine models of legacy_exporters.py
    # run --random runs it (Upsample refuses scales below 1)
    runs: bool = True
    # options upgrade needs, and the words its refusal without them must contain
    upgrade_options: tuple[str, ...] = ()
    refused_without: str = ""
    # words upgrade --verify must print (on stdout or stderr) beyond "verified"
    verify_says: tuple[str, ...] = ()


def _model(nodes: list[onnx.NodeProto], opset: int, ir: int, inputs: list | None = None,
           initializers: list | None = None, listed: bool = False,
           domain: str = "", x_shape: list | None = None,
           functions: list | None = None, extra_opsets: list | None = None) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, SHAPE if x_shape is None
                                      else x_shape)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph_inputs = [x, *(inputs or [])]
    if listed:  # IR 3: every initializer is also a graph input
        graph_inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                         for t in initializers or []]
    graph = helper.make_graph(nodes, "legacy", graph_inputs, [y], initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset),
                                                    *(extra_opsets or [])],
                              functions=functions or [], producer_name="legacy-corpus")
    model.ir_version = ir
    return model


def _scales(values: list[float], name: str = "scales") -> TensorProto:
    return numpy_helper.from_array(np.array(values, np.float32), name)


def v1(mode: str) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Upsample", ["X"], ["Y"], name="up", mode=mode,
                                            height_scale=2.0, width_scale=1.5)], 1, 3)


def v7(opset: int, mode: str, ir: int = 3) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Upsample", ["X"], ["Y"], name="up", mode=mode,
                                            scales=[1.0, 1.0, 1.5, 2.0])], opset, ir)


def v9_initializer(mode: str, ir: int, listed: bool, opset: int = 9,
                   domain: str = "") -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up",
                                            mode=mode)], opset, ir,
                          initializers=[_scales([1, 1, 2, 1.3333334])], listed=listed,
                          domain=domain)


def v9_constant_node() -> onnx.ModelProto:
    constant = helper.make_node("Constant", [], ["scales"],
                                value=_scales([1, 1, 1.5, 2.7], "value"))
    return _model([constant, helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up",
                                              mode="linear")], 9, 4)


def v9_size_export() -> onnx.ModelProto:
    """scales = Concat([1, 1], f32(size) / f32(Shape(X)[2:])): PyTorch's size= export."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Slice", ["shape"], ["hw"], starts=[2], ends=[4]),  # Slice-1
        helper.make_node("Cast", ["hw"], ["hw_f"], to=TensorProto.FLOAT),
        helper.make_node("Div", ["size", "hw_f"], ["ratio"]),
        helper.make_node("Concat", ["ones", "ratio"], ["scales"], axis=0),
        helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up", mode="nearest"),
    ]
    inits = [numpy_helper.from_array(np.array([10, 14], np.float32), "size"),
             numpy_helper.from_array(np.array([1, 1], np.float32), "ones")]
    return _model(nodes, 9, 4, initializers=inits)


def v9_runtime_scales() -> onnx.ModelProto:
    scales = helper.make_tensor_value_info("S", TensorProto.FLOAT, [4])
    return _model([helper.make_node("Upsample", ["X", "S"], ["Y"], name="up")], 9, 4,
                  inputs=[scales])


def v10() -> onnx.ModelProto:
    return _model([helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up",
                                    mode="nearest")], 10, 5,
                  initializers=[_scales([1, 1, 2, 2])])


def conv_then_upsample(opset: int, mode: str) -> Callable[[], onnx.ModelProto]:
    """YOLOv3's route as Darknet and Caffe2 converters of 2018 saved it: Conv (weights and
    bias listed as graph inputs, as IR 3 requires), LeakyRelu, 2x Upsample."""
    def build() -> onnx.ModelProto:
        rng = np.random.default_rng(2018)
        weights = numpy_helper.from_array(
            (rng.standard_normal((8, SHAPE[1], 3, 3)) * 0.3).astype(np.float32), "conv_w")
        bias = numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32),
                                       "conv_b")
        nodes = [helper.make_node("Conv", ["X", "conv_w", "conv_b"], ["conv"], name="conv",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 helper.make_node("LeakyRelu", ["conv"], ["leaky"], name="leaky", alpha=0.1)]
        initializers = [weights, bias]
        if opset < 9:
            nodes.append(helper.make_node("Upsample", ["leaky"], ["Y"], name="up", mode=mode,
                                          scales=[1.0, 1.0, 2.0, 2.0]))
        else:
            nodes.append(helper.make_node("Upsample", ["leaky", "scales"], ["Y"], name="up",
                                          mode=mode))
            initializers.append(_scales([1, 1, 2, 2]))
        return _model(nodes, opset, 3, initializers=initializers, listed=True)
    return build


def in_function() -> onnx.ModelProto:
    body = [helper.make_node("Constant", [], ["s"], value=_scales([1, 1, 2, 1.5], "v")),
            helper.make_node("Upsample", ["x", "s"], ["y"], name="fup", mode="linear")]
    function = helper.make_function("local", "Up", ["x"], ["y"], body,
                                    [helper.make_opsetid("", 9)])
    return _model([helper.make_node("Up", ["X"], ["Y"], domain="local")], 9, 8,
                  functions=[function], extra_opsets=[helper.make_opsetid("local", 1)])


def in_if_branches() -> onnx.ModelProto:
    def branch(name: str, values: list[float], mode: str) -> onnx.GraphProto:
        out = helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)
        nodes = [helper.make_node("Constant", [], [f"{name}_s"], value=_scales(values, "v")),
                 helper.make_node("Upsample", ["X", f"{name}_s"], [f"{name}_y"],
                                  name=f"{name}_up", mode=mode)]
        return helper.make_graph(nodes, name, [], [out])

    condition = helper.make_tensor_value_info("C", TensorProto.BOOL, [])
    node = helper.make_node("If", ["C"], ["Y"], then_branch=branch("then", [1, 1, 2, 2], "nearest"),
                            else_branch=branch("else", [1, 1, 2, 2], "linear"))
    return _model([node], 9, 4, inputs=[condition])


def rank0() -> onnx.ModelProto:
    node = helper.make_node("Upsample", ["X"], ["Y"], name="up0", mode="nearest")
    node.attribute.append(helper.make_attribute("scales", [], attr_type=AttributeProto.FLOATS))
    return _model([node], 7, 3, x_shape=[])


CORPUS = [
    Entry("ir3_opset1_v1_bilinear", v1("bilinear")),
    Entry("ir3_opset1_v1_nearest", v1("nearest")),
    Entry("ir3_opset7_v7_nearest", v7(7, "nearest")),
    Entry("ir3_opset7_v7_linear", v7(7, "linear")),
    Entry("ir3_opset8_v7_linear", v7(8, "linear")),
    Entry("ir3_opset9_v9_listed_initializer", v9_initializer("linear", 3, listed=True)),
    Entry("ir4_opset9_v9_initializer", v9_initializer("nearest", 4, listed=False)),
    Entry("ir4_opset9_ai_onnx_domain", v9_initializer("linear", 4, False, domain="ai.onnx")),
    Entry("ir4_opset9_constant_node", v9_constant_node),
    Entry("ir4_opset9_size_export", v9_size_export),
    Entry("ir4_opset9_runtime_scales", v9_runtime_scales, runtime_inputs=("S",)),
    Entry("ir5_opset10_v10", v10, invalid=True),
    Entry("ir3_opset7_upper_case_NEAREST", v7(7, "NEAREST"), legacy_modes=True, invalid=True),
    Entry("ir3_opset7_upper_case_BILINEAR", v7(7, "BILINEAR"), legacy_modes=True, invalid=True),
    Entry("ir4_opset9_upper_case_Linear", v9_initializer("Linear", 4, False),
          legacy_modes=True, invalid=True),
    Entry("ir4_opset9_external_data", v9_initializer("linear", 4, False), external=True),
    Entry("ir8_opset9_local_function", in_function),
    Entry("ir4_opset9_if_branches", in_if_branches, runtime_inputs=("C",)),
    Entry("ir3_opset7_rank0", rank0),
    Entry("ir3_opset7_conv_v7_nearest", conv_then_upsample(7, "nearest"),
          default_level_differs=False),
    Entry("ir3_opset9_conv_v9_nearest", conv_then_upsample(9, "nearest"),
          default_level_differs=False),
    Entry("ir3_opset7_conv_v7_linear", conv_then_upsample(7, "linear"),
          default_level_differs=True),
    Entry("ir3_opset9_conv_v9_linear", conv_then_upsample(9, "linear"),
          default_level_differs=False),
    # the exporters' corpus: what public converters wrote (legacy_exporters.py)
    Entry("ir3_opset7_conv_mixed_case_modes", exporters.conv_mixed_case_modes,
          legacy_modes=True, invalid=True, group="exporters",
          verify_says=("it runs with them in lower case",
                       "up_2  1x8x26x26  1x8x52x52  [1,1,2,2]  onnxruntime / onnxruntime")),
    Entry("ir3_opset9_conv_BILINEAR_listed", exporters.conv_bilinear_listed,
          legacy_modes=True, invalid=True, group="exporters",
          verify_says=("it runs with them in lower case", "onnxruntime / onnxruntime")),
    Entry("ir3_opset7_batch_scaled_linear", exporters.batch_scaled_linear, group="exporters",
          verify_says=("onnxruntime refused the original model's Upsample 'up': ",
                       "onnxruntime refused the upgraded model's Resize 'up': ",
                       "* 5-D inputs with the corresponding outermost 2 scale values being 1",
                       "that node ran in onnx-upsample, every other node in onnxruntime",
                       "node 'up': onnxruntime refused it on both sides")),
    Entry("ir4_opset9_computed_scales_symbolic", exporters.computed_scales_symbolic,
          group="exporters",
          verify_says=("feat float32[2, 16, 4, 8], route float32[2, 16, 16, 32]",
                       "[1,1,4,4]  onnxruntime / onnxruntime      yes")),
    Entry("ir5_opset10_resize10_runtime_scales", exporters.resize10_runtime_scales,
          group="exporters", runtime_inputs=("scales",)),
    Entry("ir4_opset9_rank0_output_declaration", exporters.rank0_output_declaration,
          invalid=True, group="exporters",
          verify_says=("output 'Y' is declared with shape [], but the Upsample computing it "
                       "gives shape [1, 1, 4, 6]",)),
    Entry("ir4_opset9_v7_form_tensorrt", exporters.v7_form_in_opset9, invalid=True,
          group="exporters",
          verify_says=("it runs as the equivalent opset-9 Upsample model",)),
    Entry("ir4_opset9_darknet_listed_inputs", exporters.darknet_listed_inputs,
          group="exporters"),
    Entry("ir4_opset9_tf2onnx_downscale", exporters.tf2onnx_downscale, invalid=True,
          group="exporters", runs=False, upgrade_options=("--allow-downscale",),
          refused_without="--allow-downscale",
          verify_says=("the original ran as the Resize-10 it literally means",
                       "TensorFlow's tf.image.resize, for one, samples at half-pixel centres"),
          downgrade_refusal=r"nearest_mode is 'ceil'; Upsample rounds down"),
]


def write(folder: Path) -> list[tuple[Entry, Path]]:
    """Save every corpus model as ``folder/NAME/model.onnx``."""
    written = []
    for entry in CORPUS:
        path = folder / entry.name / "model.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        model = entry.build()
        if entry.external:
            onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                      location="tensors.bin", size_threshold=0)
        else:
            onnx.save(model, path)
        written.append((entry, path))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    for entry, path in write(args.folder):
        print(f"wrote {path} ({entry.name})")


if __name__ == "__main__":
    main()
