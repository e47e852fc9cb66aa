"""What ``upgrade`` declares for an output the original declares without a shape or a type
(issue 38, item 4: ``upgrade --allow-downscale`` of such a tf2onnx model exited 2 and sent
the user to ``check``, whose fix was the same command)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx_models import declared_as, dims, ort_run, tf2onnx_shrinking, upsample_model

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from runners import run_cli  # noqa: E402

from onnx_upsample.onnx import upgrade  # noqa: E402


def _assert_declares(model: onnx.ModelProto, shape: tuple[int, ...],
                     agreed: tuple[int, ...]) -> None:
    """The model's output is declared with a shape (onnx's checker wants one), and what it
    says of each dimension is what onnxruntime gives, or nothing where onnx's own rule gives
    another size (a converted model may leave those unknown, which onnx's full check and
    onnxruntime both accept); the axes ``agreed`` on by both rules are declared."""
    onnx.checker.check_model(model)
    declared = dims(model.graph.output[0].type)
    assert len(declared) == len(shape)
    assert all(d is None or d == n for d, n in zip(declared, shape, strict=True)), declared
    assert all(declared[axis] == shape[axis] for axis in agreed), declared


@pytest.mark.parametrize("declared", ["no shape", "no type"])
def test_upgrade_allow_downscale_declares_an_undeclared_output_as_the_plain_upgrade_does(
        declared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The loop was: upgrade --allow-downscale exits 2 (the converted model fails onnx's
    checker: the output has no shape) and says to run check, whose fix is upgrade
    --allow-downscale."""
    path = tmp_path / "tf.onnx"
    onnx.save(tf2onnx_shrinking(0.7, declared), str(path))
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
    _assert_declares(upgraded, y.shape, agreed=(0, 3))


@pytest.mark.parametrize("declared", ["no shape", "no type"])
def test_the_plain_upgrade_declares_an_output_declared_without_a_shape_or_a_type(
        declared: str) -> None:
    model = upsample_model("v9-raw", [1, 1, 1.4, 2], shape=[1, 1, 5, 3])
    model.graph.output[0].CopyFrom(declared_as(model.graph.output[0], declared))
    upgraded = upgrade(model)
    onnx.checker.check_model(upgraded)
    [y] = ort_run(upgraded, {"X": np.zeros((1, 1, 5, 3), np.float32)}, "disabled")
    # 5 x 1.4: trunc(f32(5) * f32(1.4)) = 7 (onnx's float64 rule: 6), 3 x 2 = 6
    assert y.shape == (1, 1, 7, 6)
    _assert_declares(upgraded, y.shape, agreed=(0, 1, 3))
