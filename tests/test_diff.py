"""The model-level diff: one model in two runtimes, each Upsample and Resize explained, the
convention behind a difference named (``onnx_upsample.conformance.diff``, ``onnx-upsample
diff``). The runtimes are test backends (tests/conformance_backends.py) with known
conventions, and onnxruntime against onnx's reference evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from runners import assert_one_line_error, run_cli  # noqa: E402

from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample._spec.spelling import OPTIONS  # noqa: E402
from onnx_upsample.conformance import diff  # noqa: E402
from onnx_upsample.conformance._diff_nodes import compared_nodes, run_scales  # noqa: E402

EXACT = "conformance_backends:exact"
HALF_PIXEL = "conformance_backends:half_pixel"
PERTURBED = "conformance_backends:perturbed"
NO_UPSAMPLE = "conformance_backends:no_upsample"
REFUSE_ALL = "conformance_backends:refuse_all"
CRASH = "conformance_backends:crash_on_upsample"


def _two_upsamples() -> onnx.ModelProto:
    """x -> Relu -> Upsample nearest x2 (``near``) and Upsample linear x2 (``lin``): under
    half-pixel centres nearest x2 picks the same elements, linear blends others."""
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Upsample", ["r", "scales"], ["yn"], name="near", mode="nearest"),
             helper.make_node("Upsample", ["r", "scales"], ["yl"], name="lin", mode="linear")]
    graph = helper.make_graph(
        nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 6])],
        [helper.make_tensor_value_info("yn", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("yl", TensorProto.FLOAT, None)], [scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    return model


@pytest.fixture
def two(tmp_path: Path) -> str:
    path = tmp_path / "two.onnx"
    onnx.save(_two_upsamples(), str(path))
    return str(path)


def _row(found: object, name: str) -> object:
    return next(node for node in found.nodes if node.node == name)  # type: ignore[attr-defined]


@pytest.mark.usefixtures("importable_test_backends")
def test_names_the_half_pixel_convention_of_the_node_that_differs(two: str) -> None:
    found = diff(two, EXACT, HALF_PIXEL)
    assert found.differs
    near, lin = _row(found, "near"), _row(found, "lin")
    assert near.verdict == "identical" and near.difference.differing == 0
    assert lin.verdict == "DIFFERS"
    assert lin.input_shape == (1, 2, 5, 6) and lin.output_shape == (1, 2, 10, 12)
    ours, theirs = lin.explanations
    assert ours.backend == EXACT and ours.own
    assert theirs.backend == HALF_PIXEL and not theirs.own
    assert theirs.convention.startswith("Resize half_pixel (linear)")
    line = lin.describe()
    assert line.startswith(f"lin: {lin.difference.differing} of 240 elements differ")
    assert f"{HALF_PIXEL} matches Resize half_pixel (linear)" in line
    assert f"{EXACT} follows the node's own convention, Upsample linear" in line
    assert found.outputs[0].identical and not found.outputs[1].identical


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_cli_exit_codes_and_json(two: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "diff", two, "--backend", EXACT, "--backend", HALF_PIXEL)
    assert code == 1, err
    assert "theirs" not in out and f"{HALF_PIXEL} matches Resize half_pixel (linear)" in out
    assert "1 of 2 compared Upsample/Resize node(s) differ" in out
    code, out, err = run_cli(capsys, "diff", two, "--backend", EXACT, "--backend",
                             HALF_PIXEL, "-q")
    assert code == 1 and out == ""
    assert "lin: " in err and "near: " not in err  # the finding, under -q too
    code, out, _ = run_cli(capsys, "diff", two, "--backend", EXACT, "--backend", HALF_PIXEL,
                           "--json")
    document = json.loads(out)
    assert code == 1 and document["command"] == "diff" and document["differs"] is True
    assert [b["name"] for b in document["backends"]] == [EXACT, HALF_PIXEL]
    nodes = {node["node"]: node for node in document["nodes"]}
    assert nodes["near"]["verdict"] == "identical"
    assert nodes["lin"]["verdict"] == "DIFFERS"
    assert nodes["lin"]["explanations"][1]["convention"].startswith("Resize half_pixel")
    assert nodes["lin"]["difference"]["differing_elements"] > 0
    code, out, err = run_cli(capsys, "diff", two, "--backend", EXACT, "--backend",
                             "onnx-reference+onnx-upsample")
    assert code == 0, err
    assert "no Upsample or Resize node differs" in out and "neither does any output" in out


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_noise_before_a_node_is_not_blamed_on_it(two: str) -> None:
    """Its input differs by one ULP: run alone on one input, the node gives the same bits."""
    found = diff(two, EXACT, PERTURBED)
    lin = _row(found, "lin")
    assert not lin.input_difference.identical and not lin.difference.identical
    assert lin.alone is not None and lin.alone.identical
    assert lin.verdict == "input differs" and not found.differs
    assert "only because its input does" in lin.describe()


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_noise_before_a_node_whose_scales_come_from_a_constant_node(tmp_path: Path) -> None:
    """Run alone, the node takes its Constant node along: no run records the constant's
    value (it was a KeyError)."""
    model = _two_upsamples()
    scales = model.graph.initializer.pop()
    model.graph.node.insert(0, helper.make_node("Constant", [], ["scales"], name="scales",
                                                value=scales))
    path = tmp_path / "constant_scales.onnx"
    onnx.save(model, str(path))
    found = diff(str(path), EXACT, PERTURBED)
    lin = _row(found, "lin")
    assert not lin.input_difference.identical
    assert lin.alone is not None and lin.alone.identical
    assert lin.verdict == "input differs"


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_a_runtime_that_refuses_a_node(two: str, capsys: pytest.CaptureFixture[str]) -> None:
    """It runs the rest of the model, the refused nodes' outputs coming from the other."""
    found = diff(two, NO_UPSAMPLE, EXACT)
    assert "Upsample is not supported" in found.whole[0]
    assert [_row(found, name).verdict for name in ("near", "lin")] == [
        f"refused by {NO_UPSAMPLE}"] * 2
    assert _row(found, "lin").output_shape == (1, 2, 10, 12)
    assert not found.differs and all(output.identical for output in found.outputs)
    assert found.nothing_compared
    code, out, err = run_cli(capsys, "diff", two, "--backend", NO_UPSAMPLE, "--backend", EXACT)
    assert code == 1  # it ran, and compared none of the nodes it is for
    assert f"warning: {NO_UPSAMPLE} refused node 'lin' (Upsample-9)" in err
    assert f"no Upsample or Resize node could be compared ({NO_UPSAMPLE} refused 2 of 2)" in out


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_a_runtime_that_crashes_takes_only_its_worker_down(two: str) -> None:
    found = diff(two, EXACT, CRASH)
    assert "crashed: killed by signal SIGABRT" in found.whole[1]
    lin = _row(found, "lin")
    assert lin.refused is not None and lin.refused[0] == CRASH
    assert lin.refused[1].startswith("crashed: killed by signal SIGABRT")
    assert all(output.identical for output in found.outputs)


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_bad_arguments_and_unrunnable_models(two: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "diff", two, "--backend", REFUSE_ALL, "--backend", EXACT)
    assert code == 2
    assert_one_line_error(err)
    assert "cannot run the model, also cut at each Upsample and Resize" in err
    for argv in (["--backend", EXACT], ["--backend", EXACT, "--backend", EXACT],
                 ["--backend", EXACT, "--backend", "no_such_module_here:run"],
                 ["--input", "x=missing.npy"]):
        code, _, err = run_cli(capsys, "diff", two, *argv)
        assert code == 2, argv
        assert_one_line_error(err)
    code, _, err = run_cli(capsys, "diff", str(tmp_path / "missing.onnx"))
    assert code == 2 and "does not exist" in err
    with pytest.raises(UpsampleError, match="both runtimes are"):
        diff(two, EXACT, EXACT)
    with pytest.raises(UpsampleError, match=r"inputs gives arrays for \['nope'\], which are not"):
        diff(two, EXACT, HALF_PIXEL, inputs={"nope": np.zeros(3, np.float32)})
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((1, 2, 5, 5), np.float32))
    code, _, err = run_cli(capsys, "diff", two, "--backend", EXACT, "--backend", HALF_PIXEL,
                           "--input", f"x={wrong}")
    assert code == 2 and "input 'x' is float32[1, 2, 5, 5]; the model declares" in err
    with pytest.raises(TypeError, match="theirs"):
        diff(two, EXACT, None)  # type: ignore[arg-type]


@pytest.mark.usefixtures("importable_test_backends")
def test_nodes_in_subgraphs_are_not_observed(tmp_path: Path) -> None:
    scales = helper.make_tensor("s", TensorProto.FLOAT, [2], [2.0, 2.0])
    branch = helper.make_graph(
        [helper.make_node("Constant", [], ["s"], value=scales),
         helper.make_node("Upsample", ["x", "s"], ["inner"], name="inside")], "then", [],
        [helper.make_tensor_value_info("inner", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["same"])], "else", [],
                              [helper.make_tensor_value_info("same", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="branch", then_branch=branch,
                          else_branch=other)], "sub",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    found = diff(model, EXACT, "onnx-reference+onnx-upsample")
    (row,) = found.nodes
    assert row.verdict == "not observed" and row.where == "branch.then_branch"
    assert any("lies in branch.then_branch" in text for _, text in found.lines())


@pytest.mark.slow
def test_a_resize_is_judged_by_its_own_attributes() -> None:
    """onnxruntime computes a half-pixel linear Resize as its attributes say, onnx's
    reference evaluator in float64 throughout."""
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="linear",
                            coordinate_transformation_mode="half_pixel")
    graph = helper.make_graph(
        [node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 1, 1.5, 2], np.float32), "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    found = diff(model, "onnxruntime", "onnx-reference")
    (row,) = found.nodes
    assert row.op == "Resize-13" and row.convention == "Resize half_pixel (linear)"
    assert row.verdict == "DIFFERS" and row.scales == (1.0, 1.0, 1.5, 2.0)
    ort, reference = row.explanations
    assert ort.own
    assert not reference.own and reference.convention == (
        "Resize half_pixel (linear), float64 throughout")


def test_a_resize_with_sizes_and_axes_runs_at_the_scales_of_its_shape() -> None:
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="sized",
                            mode="nearest", axes=[2, 3], coordinate_transformation_mode=(
                                "asymmetric"), nearest_mode="floor")
    graph = helper.make_graph(
        [node], "sized", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 7, 13])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([10, 20], np.int64), "sizes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (found,) = compared_nodes(model)
    assert found.op == "Resize-18" and found.words == "Resize asymmetric + floor with sizes"
    scales = run_scales(found, {}, (1, 1, 7, 13), (1, 1, 10, 20))
    assert isinstance(scales, tuple) and scales[:2] == (1.0, 1.0)
    assert [int(np.float32(n) * np.float32(s)) for n, s in zip((7, 13), scales[2:],
                                                               strict=True)] == [10, 20]
    assert "shrink" in str(run_scales(found, {}, (1, 1, 7, 13), (1, 1, 5, 20)))


ROOT = Path(__file__).resolve().parents[1]


def test_linear_example_is_what_the_script_makes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_legacy_model",
                                                  ROOT / "scripts" / "make_legacy_model.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    model = script.build("linear")
    assert model.SerializeToString() == (
        ROOT / "examples" / "yolo_head_linear_opset9.onnx").read_bytes()
    assert [a.s for n in model.graph.node for a in n.attribute
            if n.op_type == "Upsample" and a.name == "mode"] == [b"linear"]


def avx512_cpu() -> bool:
    """Whether onnxruntime's own kernels (its convolutions) may take AVX-512 paths here."""
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _transcripts() -> list[tuple[str, list[str]]]:
    """Each ``$ onnx-upsample diff ...`` block of the README: the command and its lines."""
    import re

    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^\$ onnx-upsample (diff .*)\n((?:[^$`].*\n)*)", readme, re.MULTILINE)
    return [(command, shown.splitlines()) for command, shown in blocks]


def test_the_readme_shows_two_diff_transcripts() -> None:
    """The test below is parametrized by them: none found would skip it silently."""
    assert len(_transcripts()) == 2


@pytest.mark.slow
@pytest.mark.parametrize("command, shown", _transcripts(), ids=lambda v: str(v)[:40])
def test_readme_diff_transcripts_are_what_the_command_prints(
        command: str, shown: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Versions aside (the runtimes' patch releases), the README shows the real output. The
    linear one is onnxruntime's NCHWc kernel, which only its x86 builds use."""
    import platform
    import re
    import shlex

    if "linear" in command and platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("onnxruntime's NCHWc layout kernel runs on x86 only")
    if avx512_cpu():
        pytest.skip("the transcripts were recorded where onnxruntime's convolutions take "
                    "their AVX2 kernels; its AVX-512 ones may round other bits, so that the "
                    "difference begins at the first Conv")
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli(capsys, *shlex.split(command))
    assert code == (1 if "linear" in command else 0)

    def versionless(lines: list[str]) -> list[str]:
        return [re.sub(r"\d+\.\d+\.\d+", "V", line) for line in lines]

    assert versionless(out.splitlines()) == versionless(shown)


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_computed_scales_are_exercised_and_read_from_the_run() -> None:
    """Scales computed from symbolic shapes: distinct sizes make them enlarge, and the row
    shows them as the run computed them."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "legacy_exporters", ROOT / "scripts" / "legacy_exporters.py")
    assert spec is not None and spec.loader is not None
    exporters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporters)
    found = diff(exporters.computed_scales_symbolic(), EXACT, HALF_PIXEL)
    (row,) = found.nodes
    assert row.exercised and row.scales is not None and row.scales[2] > 1
    assert row.scales == tuple(o / i for i, o in zip(row.input_shape, row.output_shape,
                                                     strict=True))


@pytest.mark.usefixtures("importable_test_backends")
def test_computed_scales_that_came_to_1_are_a_warning_as_in_verify() -> None:
    """Shapes that make the computed scales 1 (route as large as feat): the node copied X,
    which is a gap (verify_upgrade warns of it); only constant scales of 1 are no gap."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "legacy_exporters", ROOT / "scripts" / "legacy_exporters.py")
    assert spec is not None and spec.loader is not None
    exporters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporters)
    found = diff(exporters.computed_scales_symbolic(), EXACT, "onnx-reference+onnx-upsample",
                 input_shapes={"feat": [1, 16, 4, 4], "route": [1, 16, 4, 4]})
    (row,) = found.nodes
    assert row.exercised is False and row.scales == (1.0, 1.0, 1.0, 1.0)
    warnings = [text for kind, text in found.lines(OPTIONS) if kind == "warning"]
    assert len(warnings) == 1 and warnings[0].startswith(
        "node 'up' was not exercised: its scales came to [1,1,1,1]"), warnings
    assert "--input-shape" in warnings[0]


@pytest.mark.usefixtures("importable_test_backends")
def test_an_empty_output_is_not_exercised() -> None:
    """A batch of 0: the node changes the shape, but there is no element to compare."""
    model = _two_upsamples()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    found = diff(model, EXACT, "onnx-reference+onnx-upsample", input_shapes={"x": [0, 2, 5, 6]})
    assert [row.exercised for row in found.nodes] == [False, False]
    warnings = [text for kind, text in found.lines() if kind == "warning"]
    assert warnings and all("its output is empty (X 0x2x5x6 -> 0x2x10x12), so no element of "
                            "it was compared" in text for text in warnings), warnings


@pytest.mark.parametrize("kwargs, error, words", [
    ({"timeout": "5"}, TypeError, "timeout is '5'"),
    ({"timeout": 0}, UpsampleError, "timeout is 0"),
    ({"seed": -1}, UpsampleError, "seed is -1"),
    ({"input_shapes": {"x": [2, "a"]}}, TypeError, "input_shapes"),
])
def test_arguments_are_checked_before_a_runtime_starts(two: str, kwargs: dict[str, object],
                                                       error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        diff(two, **kwargs)  # type: ignore[arg-type]


def test_the_command_line_names_its_options(two: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    for option, value in (("--seed", "-1"), ("--timeout", "0")):
        code, _, err = run_cli(capsys, "diff", two, option, value)
        assert code == 2, err
        assert_one_line_error(err)
        assert f"{option} is {value}" in err, err


def test_the_help_lists_every_built_in_backend_and_the_defaults(
        capsys: pytest.CaptureFixture[str]) -> None:
    from onnx_upsample.conformance import BACKENDS
    from onnx_upsample.conformance._diff import DEFAULT_BACKENDS, DEFAULT_TIMEOUT

    code, out, _ = run_cli(capsys, "diff", "--help")
    text = " ".join(out.split())
    assert code == 0 and all(name in text for name in BACKENDS)
    assert f"default: {' and '.join(DEFAULT_BACKENDS)}" in text
    assert f"default {DEFAULT_TIMEOUT:g}" in text


def test_sizes_past_2_24_give_the_scale_onnxruntime_computes_them_with() -> None:
    """float32(2**24 + 1) is 2**24: a scale of 2 gives 2**25 + 2 (the exact rule), not the
    2**25 that float32 arithmetic makes, so 2 is the scale, not the next float above it."""
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="sized",
                            mode="nearest", coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor")
    graph = helper.make_graph(
        [node], "sized", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([2**25 + 2], np.int64), "sizes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (found,) = compared_nodes(model)
    assert run_scales(found, {}, (2**24 + 1,), (2**25 + 2,)) == (2.0,)


def test_scales_above_1_that_left_the_size_ask_for_larger_inputs() -> None:
    """8 * 1.1 = 8.8 rounds down to 8: the node copied X although its scales exceed 1."""
    from onnx_upsample.conformance._diff_result import ModelDiff, NodeDiff

    row = NodeDiff("frac", "Upsample-9", "y", input_shape=(1, 3, 8, 8),
                   output_shape=(1, 3, 8, 8), scales=(1, 1, 1.1, 1.1), exercised=False)
    found = ModelDiff("m", ("a", "b"), ("1", "1"), (), 0, 1, (row,), (),
                      exercise_shapes={"frac": {"x": ["N", 3, "H", "W"]}})
    (warning,) = [text for kind, text in found.lines(OPTIONS) if kind == "warning"]
    assert warning.startswith("node 'frac' was not exercised: its scales [1,1,1.1,1.1] left "
                              "every size of X as it was"), warning
    assert warning.endswith("give larger inputs: --input-shape x=N,3,H,W (or --input "
                            "NAME=FILE.npy)"), warning
