"""The inputs a run of a model is given (``verify_upgrade``, ``conformance.diff``, and the
commands ``upgrade --verify``, ``diff``, ``run``): one set of checks, worded for the
caller. The Python API names its arguments (``inputs=``, ``input_shapes=``, ``seed=``), the
command line its options (``--input``, ``--input-shape``, ``--seed``), and each is checked
before anything is converted or started."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from runners import assert_one_line_error, run_cli  # noqa: E402

from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.onnx import upgrade  # noqa: E402
from onnx_upsample.onnx.verify import verify_upgrade  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("legacy_exporters",
                                               ROOT / "scripts" / "legacy_exporters.py")
assert _spec is not None and _spec.loader is not None
exporters = importlib.util.module_from_spec(_spec)
sys.modules["legacy_exporters"] = exporters
_spec.loader.exec_module(exporters)


def _upgraded(model: onnx.ModelProto) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        return upgrade(model)


def _with_a_string_input() -> onnx.ModelProto:
    """X -> Upsample -> Y, and a string tensor S passed through."""
    graph = helper.make_graph(
        [helper.make_node("Upsample", ["X", "s"], ["Y"], name="up"),
         helper.make_node("Identity", ["S"], ["T"], name="same")], "strings",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2]),
         helper.make_tensor_value_info("S", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("T", TensorProto.STRING, None)],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    return model


@pytest.fixture
def symbolic(tmp_path: Path) -> str:
    path = tmp_path / "computed.onnx"
    onnx.save(exporters.computed_scales_symbolic(), str(path))
    return str(path)


# ----------------------------------------------------------------- the Python API's words


def test_a_string_input_is_named_a_string_tensor_to_give_in_inputs() -> None:
    model = _with_a_string_input()
    with pytest.raises(UpsampleError) as raised:
        verify_upgrade(model, _upgraded(model))
    message = str(raised.value)
    assert "input 'S' is a string tensor" in message and "object" not in message
    assert "inputs={'S': array}" in message and "--input" not in message
    given = verify_upgrade(model, _upgraded(model),
                           inputs={"S": np.array(["a", "b"], dtype=object)})
    assert given.verified


def test_python_messages_name_the_arguments_not_the_options() -> None:
    model = exporters.computed_scales_symbolic()
    upgraded = _upgraded(model)
    for kwargs, words in (
            ({"inputs": {"nope": np.zeros(2, np.float32)}}, "inputs gives arrays for ['nope']"),
            ({"input_shapes": {"nope": [1, 2]}}, "input_shapes names ['nope']"),
            ({"input_shapes": {"feat": [1, 16, 4]}}, "input_shapes['feat'] is [1, 16, 4]")):
        with pytest.raises(UpsampleError) as raised:
            verify_upgrade(model, upgraded, **kwargs)  # type: ignore[arg-type]
        assert words in str(raised.value) and "--" not in str(raised.value), raised.value


@pytest.mark.parametrize("seed, error", [(-1, UpsampleError), ("1", TypeError),
                                         (True, TypeError), (1.5, TypeError)])
def test_a_bad_seed_is_named_before_numpy_sees_it(seed: object, error: type) -> None:
    model = exporters.computed_scales_symbolic()
    with pytest.raises(error, match=r"^seed is "):
        verify_upgrade(model, model, seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("shapes, error", [({"feat": [2, "a", 4, 4]}, TypeError),
                                           ({"feat": "2,16,4,4"}, TypeError),
                                           ([("feat", [2, 16, 4, 4])], TypeError),
                                           ({"feat": [2, -16, 4, 4]}, UpsampleError)])
def test_input_shapes_of_the_wrong_kind_are_a_type_error(shapes: object, error: type) -> None:
    model = exporters.computed_scales_symbolic()
    with pytest.raises(error, match="input_shapes"):
        verify_upgrade(model, model, input_shapes=shapes)  # type: ignore[arg-type]


# ----------------------------------------------------------------- the command line's words


def test_a_negative_seed_is_one_line_naming_the_option(
        symbolic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["upgrade", symbolic, "-o", tmp_path / "up.onnx", "--verify"],
                 ["run", symbolic, "--random"]):
        code, out, err = run_cli(capsys, *argv, "--seed", "-1")
        assert code == 2, (argv, err)
        assert_one_line_error(err)
        assert "--seed is -1" in err and out == "", err


def test_command_line_messages_name_the_options(
        symbolic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strings = tmp_path / "strings.onnx"
    onnx.save(_with_a_string_input(), str(strings))
    zeros = tmp_path / "zeros.npy"
    np.save(zeros, np.zeros(2, np.float32))
    upgrade_ = ["upgrade", symbolic, "-o", tmp_path / "up.onnx", "--verify"]
    for argv, words in (
            ([*upgrade_, "--input-shape", "nope=1,2"], "--input-shape names ['nope']"),
            ([*upgrade_, "--input", f"nope={zeros}"], "--input gives arrays for ['nope']"),
            (["upgrade", strings, "-o", tmp_path / "s.onnx", "--verify"],
             "give it with --input S=FILE.npy"),
            (["run", strings, "--random"], "give it with --input S=FILE.npy"),
            (["run", strings], "--input NAME=FILE.npy, or pass --random")):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2, (argv, err)
        assert_one_line_error(err)
        assert words in err, (argv, err)


def test_input_shape_twice_for_one_input_is_refused_as_input_twice_is(
        symbolic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "upgrade", symbolic, "-o", tmp_path / "up.onnx",
                             "--verify", "--input-shape", "feat=1,16,4,4",
                             "--input-shape", "feat=1,16,8,8")
    assert code == 2 and out == "", err
    assert "--input-shape gives 'feat' twice" in err


def test_a_wrong_input_shape_is_refused_before_the_conversion_is_said(
        symbolic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "upgrade", symbolic, "-o", tmp_path / "up.onnx",
                             "--verify", "--input-shape", "feat=1,16,4")
    assert code == 2 and out == "", out  # no summary of a conversion that is not written
    assert_one_line_error(err)
    assert "--input-shape feat=1,16,4 (rank 3)" in err and "warning" not in err
    assert not (tmp_path / "up.onnx").exists()
