"""Models with external data (issue 9): tensors stored beside the .onnx file, models over
2 GB, and external-data locations a file must not be allowed to point to."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from runners import cli_process

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample.onnx import check, upgrade  # noqa: E402


def _conv_upsample(weight: np.ndarray) -> onnx.ModelProto:
    """X -> Conv(W) -> Upsample x2 (v9, scales an initializer) -> Y."""
    c_in = weight.shape[1]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c_in, 6, 6])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Conv", ["X", "W"], ["F"], pads=[1, 1, 1, 1]),
             helper.make_node("Upsample", ["F", "scales"], ["Y"], name="up", mode="linear")]
    inits = [numpy_helper.from_array(weight, "W"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    return model


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A model whose 2.4 MB weight and scales live in weights.bin beside it."""
    weight = np.random.default_rng(0).standard_normal((512, 128, 3, 3)).astype(np.float32) / 30
    model = _conv_upsample(weight)
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(model, folder / "net.onnx", save_as_external_data=True,
              all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    return folder / "net.onnx"


@pytest.mark.slow
def test_inspect_check_upgrade_and_run_a_model_with_external_data(stored: Path,
                                                                  tmp_path: Path) -> None:
    assert (stored.parent / "weights.bin").stat().st_size > 2_000_000
    assert cli_process("inspect", str(stored), cwd=tmp_path).returncode == 0
    assert check(stored) == []
    out = tmp_path / "elsewhere"
    out.mkdir()
    result = cli_process("upgrade", str(stored), "-o", str(out / "net18.onnx"), "--verify",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified: outputs are bit-identical" in result.stdout
    # the upgrade keeps the large weight outside, beside its own file
    assert (out / "weights.bin").read_bytes() == (stored.parent / "weights.bin").read_bytes()
    upgraded = onnx.load(out / "net18.onnx", load_external_data=False)
    weight = next(t for t in upgraded.graph.initializer if t.name == "W")
    assert weight.data_location == TensorProto.EXTERNAL
    onnx.checker.check_model(str(out / "net18.onnx"))
    run = cli_process("run", str(out / "net18.onnx"), "--random", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "\nY: float32 [1, 512, 12, 12]" in run.stdout  # after what ran the model
    assert (out / "weights.bin").stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_tools_read_only_the_small_tensors(stored: Path) -> None:
    """upgrade(path) reads the scales (small) and leaves the 2.4 MB weight on disk."""
    tracemalloc.start()
    try:
        new = upgrade(stored, opset=13)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [n.op_type for n in new.graph.node] == ["Conv", "Resize"]
    assert peak < 2_000_000, peak


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/passwd", "sub/../../x.bin"])
def test_external_data_outside_the_models_folder_is_refused(tmp_path: Path,
                                                            location: str) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(b"\0" * 64)
    model = _conv_upsample(np.zeros((2, 2, 3, 3), np.float32))
    weight = next(t for t in model.graph.initializer if t.name == "W")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value=location)
    onnx.save(model, folder / "evil.onnx")
    result = cli_process("inspect", str(folder / "evil.onnx"), cwd=tmp_path)
    assert result.returncode == 2
    assert "outside the model's folder" in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(UpsampleError, match="outside the model's folder"):
        check(folder / "evil.onnx")


@pytest.mark.slow
def test_a_model_over_2gb_is_inspected_and_upgraded_without_loading_it(tmp_path: Path) -> None:
    """A 2.4 GB weight in a sparse file: inspect and upgrade read the protobuf and the
    scales, never the weight; the upgraded model refers to the same file."""
    c = 20_000  # (c, 8, 1, 1)... a (c, c, 1, 1) float32 weight is 1.6 GB
    shape = (c, c + 10_000, 1, 1)
    nbytes = int(np.prod(shape)) * 4
    assert nbytes > 2**31
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, shape[1], 2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    weight = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=shape)
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value="big.bin")
    weight.external_data.add(key="length", value=str(nbytes))
    nodes = [helper.make_node("Conv", ["X", "W"], ["F"]),
             helper.make_node("Upsample", ["F", "scales"], ["Y"], name="up")]
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [weight, scales]),
                              opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    with open(tmp_path / "big.bin", "wb") as f:
        f.truncate(nbytes)  # sparse: no disk space used
    onnx.save(model, tmp_path / "big.onnx")
    assert os.path.getsize(tmp_path / "big.onnx") < 10_000
    inspected = cli_process("inspect", "big.onnx", cwd=tmp_path)
    assert inspected.returncode == 0, inspected.stderr
    result = cli_process("upgrade", "big.onnx", "-o", "big18.onnx", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    upgraded = onnx.load(tmp_path / "big18.onnx", load_external_data=False)
    assert next(t for t in upgraded.graph.initializer if t.name == "W").data_location == \
        TensorProto.EXTERNAL
    assert [n.op_type for n in upgraded.graph.node] == ["Conv", "Resize"]
    verify = cli_process("upgrade", "big.onnx", "-o", "big18b.onnx", "--verify", cwd=tmp_path)
    assert verify.returncode == 2 and "2 GiB" in verify.stderr


def test_verify_refuses_a_model_whose_data_passes_protobufs_limit_before_writing(
        stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The limit lowered to 1 MB: the 2.4 MB weight cannot be loaded to run, so --verify is
    refused in one line naming what to leave out, and nothing is written."""
    from runners import assert_one_line_error, run_cli

    from onnx_upsample.onnx import _external

    monkeypatch.setattr(_external, "PROTOBUF_LIMIT", 2**20)
    output = tmp_path / "net18.onnx"
    code, _, err = run_cli(capsys, "upgrade", stored, "-o", output, "--verify")
    assert code == 2, err
    assert_one_line_error(err)
    assert "passes protobuf's 2 GiB" in err and "leave out --verify" in err
    assert not output.exists()
