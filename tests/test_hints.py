"""Hints that lead somewhere (issue 38, item 4).

The two loops the issue found, each reproduced: ``diff`` of a model with modes in upper case
recommended the backend already given (it now takes ``--legacy-modes``), and ``upgrade
--allow-downscale`` of a model whose output is declared without a shape sent the user back
to ``check``, which gave the same command (it now declares the output as the plain upgrade
does).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx_models import dims, make_model, ort_run, scales_tensor, upsample_model

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from runners import run_cli  # noqa: E402

from onnx_upsample.onnx import upgrade  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def _declared_as(value: onnx.ValueInfoProto, declared: str) -> onnx.ValueInfoProto:
    """``value`` declared with its element type and no shape, or with no type at all."""
    if declared == "no shape":
        return helper.make_tensor_value_info(value.name, TensorProto.FLOAT, None)
    return onnx.ValueInfoProto(name=value.name)


def _tf2onnx_shrinking(scale: float, declared: str) -> onnx.ModelProto:
    """tf.image.resize as tf2onnx wrote it at opset 9 (NHWC, Transpose -> Upsample with
    scales below 1 -> Transpose), X 1x10x10x3, the output declared as ``declared``."""
    nodes = [helper.make_node("Transpose", ["X"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Upsample", ["nchw", "scales"], ["small"], name="Resize__5",
                              mode="nearest"),
             helper.make_node("Transpose", ["small"], ["Y"], perm=[0, 2, 3, 1], name="to_nhwc")]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 10, 10, 3])
    y = _declared_as(helper.make_tensor_value_info("Y", TensorProto.FLOAT, None), declared)
    return make_model(nodes, [x], [y], [scales_tensor([1, 1, scale, scale], "scales")],
                      opset=9, ir_version=4)


# ------------------------------------------------- upgrade --allow-downscale's declarations


@pytest.mark.parametrize("declared", ["no shape", "no type"])
def test_upgrade_allow_downscale_declares_an_undeclared_output_as_the_plain_upgrade_does(
        declared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The loop was: upgrade --allow-downscale exits 2 (the converted model fails onnx's
    checker: the output has no shape) and says to run check, whose fix is upgrade
    --allow-downscale."""
    path = _save(_tf2onnx_shrinking(0.7, declared), tmp_path / "tf.onnx")
    out = tmp_path / "up.onnx"
    code, _, err = run_cli(capsys, "upgrade", path, "-o", out, "--allow-downscale")
    assert code == 0, err
    upgraded = onnx.load(str(out))
    onnx.checker.check_model(upgraded)
    x = np.zeros((1, 10, 10, 3), np.float32)
    [y] = ort_run(upgraded, {"X": x}, "disabled")
    # trunc(f32(10) * f32(0.7)) = 7 (f32(0.7) = 0.699999988, the product rounds to 7.0 in
    # float32), as onnxruntime's Resize computes it; onnx's float64 rule would say 6
    assert y.shape == (1, 7, 7, 3)
    assert dims(upgraded.graph.output[0].type) == [1, 7, 7, 3]


@pytest.mark.parametrize("declared", ["no shape", "no type"])
def test_the_plain_upgrade_declares_an_output_declared_without_a_shape_or_a_type(
        declared: str) -> None:
    model = upsample_model("v9-raw", [1, 1, 1.4, 2], shape=[1, 1, 5, 3])
    model.graph.output[0].CopyFrom(_declared_as(model.graph.output[0], declared))
    upgraded = upgrade(model)
    onnx.checker.check_model(upgraded)
    [y] = ort_run(upgraded, {"X": np.zeros((1, 1, 5, 3), np.float32)}, "disabled")
    # 5 x 1.4: trunc(f32(5) * f32(1.4)) = 7 (onnx's float64 rule: 6), 3 x 2 = 6
    assert y.shape == (1, 1, 7, 6)
    assert dims(upgraded.graph.output[0].type) == [1, 1, 7, 6]
