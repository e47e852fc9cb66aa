"""``onnx_upsample.onnx.verify.verify_upgrade`` (issue 27): the verification a legacy-model
maintainer can trust, on the exporters' corpus (``scripts/legacy_exporters.py``).

The original runs in onnxruntime after rewrites that change no result, never in another
evaluator; each converted node is compared on its own; symbolic dimensions get distinct
sizes until every Upsample enlarges; what onnxruntime refuses is said in one line per side,
runs alone elsewhere, and what stays unverified is said. Also the tools it is built from
(``_probe``) and the conversions that now say what they change."""

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

from onnx_upsample import UpsampleError, UpsampleWarning, upsample  # noqa: E402
from onnx_upsample._spec.spelling import OPTIONS  # noqa: E402
from onnx_upsample.onnx import check, downgrade, upgrade  # noqa: E402
from onnx_upsample.onnx._probe import expose, reads, run_pieces  # noqa: E402
from onnx_upsample.onnx.verify import OnnxruntimeRun, verify_upgrade  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "legacy_exporters.py"
_spec = importlib.util.spec_from_file_location("legacy_exporters", SCRIPT)
assert _spec is not None and _spec.loader is not None
exporters = importlib.util.module_from_spec(_spec)
sys.modules["legacy_exporters"] = exporters
_spec.loader.exec_module(exporters)


def _upgraded(model: onnx.ModelProto, **options: object) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        return upgrade(model, **options)  # type: ignore[arg-type]


def _node(verification: object, name: str) -> object:
    return next(n for n in verification.nodes if n.node == name)  # type: ignore[attr-defined]


# ----------------------------------------------------------------- item 1: runs in onnxruntime


@pytest.mark.parametrize("build", [exporters.conv_mixed_case_modes,
                                   exporters.conv_bilinear_listed])
def test_modes_in_upper_case_run_in_onnxruntime_not_in_another_evaluator(
        build: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole original ran in onnx's evaluator, whose Conv rounds otherwise: a correct
    upgrade failed. Now the original runs in onnxruntime with its modes in lower case, and
    no node of it in onnx-upsample's evaluator."""
    from onnx_upsample.onnx import _alone

    def refuse(*_: object) -> None:
        raise AssertionError("no node may run outside onnxruntime here")

    monkeypatch.setattr(_alone, "run_upsample", refuse)
    model = build()  # type: ignore[operator]
    verification = verify_upgrade(model, _upgraded(model))
    assert verification.verified, verification.summary
    assert all(node.runs_in == ("onnxruntime", "onnxruntime") and
               node.verdict == "bit-identical" for node in verification.nodes)
    assert any("runs with them in lower case" in note for note in verification.notes)


# ----------------------------------------------------------------- item 2: node by node


def test_a_node_that_differs_is_named_with_its_shapes() -> None:
    model = exporters.conv_bilinear_listed()
    wrong = _upgraded(model)
    resize = next(n for n in wrong.graph.node if n.op_type == "Resize")
    for attribute in resize.attribute:  # what onnx's own converter writes
        if attribute.name == "coordinate_transformation_mode":
            attribute.s = b"half_pixel"
    verification = verify_upgrade(model, wrong)
    assert not verification.verified
    node = _node(verification, "up")
    assert node.verdict == "DIFFERS"  # type: ignore[attr-defined]
    assert (node.input_shape, node.output_shape) == ((1, 8, 13, 13), (1, 8, 26, 26))  # type: ignore[attr-defined]
    failures = [text for kind, text in verification.lines() if kind == "failure"]
    assert failures[0].startswith("verification FAILED: node 'up', output 'Y': ")
    document = verification.to_dict()
    assert document["nodes"][0]["verdict"] == "DIFFERS"  # type: ignore[index]
    assert document["nodes"][0]["output_shape"] == [1, 8, 26, 26]  # type: ignore[index]


def test_a_difference_elsewhere_is_not_blamed_on_the_upgrade() -> None:
    model = exporters.darknet_listed_inputs()
    changed = _upgraded(model)
    concat = next(n for n in changed.graph.node if n.op_type == "Concat")
    concat.input[0], concat.input[1] = concat.input[1], concat.input[0]  # same shapes
    verification = verify_upgrade(model, changed)
    assert not verification.verified
    assert _node(verification, "upsample_2").verdict == "bit-identical"  # type: ignore[attr-defined]
    [failure] = [text for kind, text in verification.lines() if kind == "failure"]
    assert failure.startswith("verification FAILED: output 'Y': ")
    assert failure.endswith("every converted node's output is bit-identical, so the difference "
                            "arises in the other nodes")


# ----------------------------------------------------------------- item 3: exercised


def test_symbolic_dimensions_get_distinct_sizes_until_every_upsample_enlarges() -> None:
    """All symbolic dimensions were 8: scales route/feat came to 1, nothing was upsampled,
    and the verification passed."""
    model = exporters.computed_scales_symbolic()
    verification = verify_upgrade(model, _upgraded(model))
    node = _node(verification, "up")
    assert node.exercised is True and node.scales == (1.0, 1.0, 4.0, 4.0)  # type: ignore[attr-defined]
    assert {i.name: i.shape for i in verification.inputs} == {
        "feat": (2, 16, 4, 8), "route": (2, 16, 16, 32)}
    assert verification.verified and not verification.unverified


def test_a_node_not_exercised_is_a_warning_naming_what_to_give() -> None:
    model = exporters.computed_scales_symbolic()
    same = {"feat": [1, 16, 8, 8], "route": [1, 16, 8, 8]}
    verification = verify_upgrade(model, _upgraded(model), input_shapes=same)
    assert _node(verification, "up").exercised is False  # type: ignore[attr-defined]
    assert verification.verified  # the bits agree; the gap is said, not hidden
    [python] = [t for k, t in verification.lines() if k == "warning"]
    [command] = [t for k, t in verification.lines(OPTIONS) if k == "warning"]
    assert python.startswith("node 'up' was not exercised: its scales (computed at run time "
                             "from feat, route) came to [1,1,1,1]")
    assert command.endswith("--input-shape feat=N,16,H,W --input-shape route=N,16,H2,W2 (or "
                            "--input NAME=FILE.npy)")
    assert python.endswith("input_shapes={'feat': ['N', 16, 'H', 'W'], "
                           "'route': ['N', 16, 'H2', 'W2']} (or inputs={NAME: array})")
    assert verification.unverified == [python]


def test_a_refusal_under_shapes_not_chosen_is_not_reported() -> None:
    """The first shapes tried (feat 1x16x2x4, route 1x16x4x8 against feat's 4x4) make
    scales below 1, which onnxruntime refuses; the shapes chosen ran whole in onnxruntime,
    yet the refusal stayed in the result (and in --json)."""
    model = exporters.computed_scales_symbolic()
    verification = verify_upgrade(model, _upgraded(model), input_shapes={"feat": [1, 16, 4, 4]})
    assert verification.shapes_tried > 1 and verification.verified
    assert _node(verification, "up").runs_in == ("onnxruntime", "onnxruntime")  # type: ignore[attr-defined]
    assert verification.refusals == ()
    assert verification.to_dict()["refusals"] == []
    assert not any("refused" in text for _, text in verification.lines())


def test_an_empty_output_is_not_exercised() -> None:
    """A batch of 0: the Upsample changes the shape (0x16x4x4 -> 0x16x8x8) but its output has
    no element to compare."""
    model = exporters.computed_scales_symbolic()
    verification = verify_upgrade(model, _upgraded(model), input_shapes={
        "feat": [0, 16, 4, 4], "route": [0, 16, 8, 8]})
    node = _node(verification, "up")
    assert node.output_shape == (0, 16, 8, 8)  # type: ignore[attr-defined]
    assert node.exercised is False  # type: ignore[attr-defined]
    [warning] = [text for kind, text in verification.lines() if kind == "warning"]
    assert warning.startswith("node 'up' was not exercised: its output is empty "
                              "(X 0x16x4x4 -> 0x16x8x8), so no element of it was compared")
    assert verification.unverified == [warning]


def test_the_public_surface_is_the_call_and_its_result() -> None:
    from onnx_upsample.onnx import verify

    assert sorted(verify.__all__) == ["Difference", "InputUsed", "NodeCheck", "Refusal",
                                      "Verification", "verify_upgrade"]


# ----------------------------------------------------------------- item 4: refusals


def test_onnxruntime_refusing_both_sides_is_said_and_the_rest_verified() -> None:
    """A batch-scaled linear Upsample: exit 2 with ORT's message cut at "'Linear' mode only
    supports:". Now one line per side with the whole message, the node in onnx-upsample,
    every other node (two Conv) in onnxruntime, and the node said to stay unverified."""
    model = exporters.batch_scaled_linear()
    verification = verify_upgrade(model, _upgraded(model))
    assert verification.verified
    assert [(r.side, r.node, r.op) for r in verification.refusals] == [
        ("original", "up", "Upsample"), ("upgraded", "up", "Resize")]
    for refusal in verification.refusals:
        assert "\n" not in refusal.message and refusal.message.endswith(
            "5-D inputs with the corresponding outermost 2 scale values being 1in the "
            f"{refusal.op} operator")
    node = _node(verification, "up")
    assert node.runs_in == ("onnx-upsample", "onnx-upsample")  # type: ignore[attr-defined]
    assert node.verdict == "unverified"  # type: ignore[attr-defined]
    assert "interpolates in float64" in node.cross_check  # type: ignore[attr-defined]
    [gap] = verification.unverified
    assert gap.startswith("node 'up': onnxruntime refused it on both sides")


def test_a_model_refused_elsewhere_is_one_error_naming_the_side() -> None:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Upsample", ["X", "s"], ["u"], name="up"),
             helper.make_node("NoSuchOp", ["u"], ["Y"], name="odd", domain="no.such")]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], [numpy_helper.from_array(
            np.array([1, 1, 2, 2], np.float32), "s")]),
        opset_imports=[helper.make_opsetid("", 9), helper.make_opsetid("no.such", 1)])
    with pytest.raises(UpsampleError, match=r"^onnxruntime cannot run the original model, "
                       r"also with each Upsample and Resize run alone: .*NoSuchOp"):
        verify_upgrade(model, model)


# ----------------------------------------------------------------- item 5: conversions


def test_downgrade_of_run_time_scales_warns_that_shrinking_is_refused() -> None:
    with pytest.warns(UpsampleWarning, match=r"^Resize node 'resize': its scales arrive at "
                      r"run time \(graph input 'scales'\).*runs whose scales shrink fail"):
        downgrade(exporters.resize10_runtime_scales())


def test_upgrade_writes_the_output_declaration_check_calls_wrong() -> None:
    model = exporters.rank0_output_declaration()
    assert "declared-shape" in {finding.code for finding in check(model)}
    with pytest.warns(UpsampleWarning, match=r"^output 'Y' is declared with shape \[\], but "
                      r"the Upsample computing it gives shape \[1, 1, 4, 6\]"):
        upgraded = upgrade(model)
    onnx.checker.check_model(upgraded, full_check=True)


@pytest.mark.parametrize("opset", [10, 13, 18])
def test_allow_downscale_writes_the_literal_resize_and_verifies_it(opset: int) -> None:
    """tf2onnx's Upsample with scales below 1: check said "use Resize to shrink" and upgrade
    refused it too. Now check's fix names the option, the option converts it (with the
    warning about the exporter's convention), and the verification says what it checks."""
    model = exporters.tf2onnx_downscale()
    [fix] = {finding.fix for finding in check(model) if finding.code == "scales-value"}
    assert fix.startswith("onnx_upsample.onnx.upgrade(model, allow_downscale=True) converts")
    with pytest.raises(UpsampleError, match=r"allow_downscale=True"):
        upgrade(model, opset=opset)
    with pytest.warns(UpsampleWarning, match=r"nearest_mode='ceil'.*half-pixel centres"):
        upgraded = upgrade(model, opset=opset, allow_downscale=True)
    verification = verify_upgrade(model, upgraded)
    assert verification.verified
    node = _node(verification, "Resize__5")
    assert node.runs_in == ("onnxruntime (Resize-10)", "onnxruntime")  # type: ignore[attr-defined]
    assert node.output_shape == (1, 3, 4, 4) and node.exercised  # type: ignore[attr-defined]
    assert any("the original ran as the Resize-10 it literally means" in text
               for kind, text in verification.lines() if kind == "warning")
    with pytest.raises(UpsampleError, match="Upsample only enlarges"):  # the operator keeps
        upsample(np.zeros((1, 1, 4, 4), np.float32), [1, 1, 0.5, 0.5])   # its rule


# ----------------------------------------------------------------- the tools: _probe


def _conv_up_conv() -> onnx.ModelProto:
    return exporters.batch_scaled_linear()


def test_expose_adds_typed_outputs_and_keeps_the_model_s() -> None:
    model = exporters.darknet_listed_inputs()
    exposed = expose(model, ["up", "Y", "bn"])
    assert [value.name for value in exposed.graph.output] == ["Y", "up", "bn"]
    assert exposed.graph.output[1].type.tensor_type.elem_type == TensorProto.FLOAT
    assert not exposed.graph.output[1].type.tensor_type.HasField("shape")
    assert [value.name for value in model.graph.output] == ["Y"]  # the input is not changed


def test_run_pieces_gives_what_the_whole_model_gives() -> None:
    model = exporters.darknet_listed_inputs()
    feeds = {"X": np.random.default_rng(1).standard_normal((1, 3, 13, 13), np.float32),
             "route": np.random.default_rng(2).standard_normal((1, 8, 26, 26), np.float32)}
    runner = OnnxruntimeRun(model, "original")
    whole = runner.run(feeds, ["Y", "up", "l1"], cut=False)
    cut = runner.run(feeds, ["Y", "up", "l1"], cut=True)
    assert runner.cut and not runner.refusals
    for name in ("Y", "up", "l1"):
        assert whole[name].tobytes() == cut[name].tobytes()
    calls: list[list[str]] = []

    def record(piece: onnx.ModelProto, fed: dict[str, np.ndarray]) -> list[np.ndarray]:
        calls.append([node.op_type for node in piece.graph.node])
        from onnx.reference import ReferenceEvaluator

        return list(ReferenceEvaluator(piece).run(None, fed))

    run_pieces(model, feeds, ["Y"], {3}, record, record)
    assert calls == [["Conv", "BatchNormalization", "LeakyRelu"], ["Upsample"], ["Concat"]]


def test_reads_names_what_a_subgraph_takes_from_outside() -> None:
    inner = helper.make_graph([helper.make_node("Add", ["a", "outer"], ["b"])], "body", [],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=inner, else_branch=inner)
    assert reads(node) == ["cond", "a", "outer"]


# ----------------------------------------------------------------- the command line


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    from onnx_upsample.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        code = main([str(word) for word in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_verify_json_carries_nodes_refusals_and_gaps(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "batch.onnx"
    onnx.save(exporters.batch_scaled_linear(), path)
    code, out, err = _cli(capsys, "upgrade", path, "-o", tmp_path / "up.onnx", "--verify",
                          "--json")
    assert code == 0, err
    verification = json.loads(out)["verification"]
    [node] = verification["nodes"]
    assert (node["input_shape"], node["output_shape"], node["scales"]) == (
        [2, 4, 6, 6], [4, 4, 12, 12], [2.0, 1.0, 2.0, 2.0])
    assert (node["original_runs_in"], node["upgraded_runs_in"], node["verdict"]) == (
        "onnx-upsample", "onnx-upsample", "unverified")
    assert [r["side"] for r in verification["refusals"]] == ["original", "upgraded"]
    assert verification["verified"] and len(verification["unverified"]) == 1
    # each refusal is one warning line on stderr, kept in the document too
    assert sum(line.startswith("onnx-upsample: warning: onnxruntime refused the ")
               for line in err.splitlines()) == 2
    assert len(json.loads(out)["warnings"]) == 3


def test_input_shape_gives_the_shapes_and_is_for_verify_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "computed.onnx"
    onnx.save(exporters.computed_scales_symbolic(), path)
    code, out, err = _cli(capsys, "upgrade", path, "-o", tmp_path / "up.onnx", "--verify",
                          "--input-shape", "feat=1,16,8,8", "--input-shape", "route=1,16,8,8")
    assert code == 0 and "feat float32[1, 16, 8, 8], route float32[1, 16, 8, 8]" in out
    assert ("onnx-upsample: warning: node 'up' was not exercised" in err
            and err.rstrip().endswith("--input-shape feat=N,16,H,W --input-shape "
                                      "route=N,16,H2,W2 (or --input NAME=FILE.npy)")), err
    code, _, err = _cli(capsys, "upgrade", path, "-o", tmp_path / "up.onnx", "--input-shape",
                        "feat=1,16,8,8")
    assert code == 2 and err.strip().endswith("--input-shape is used with --verify only")
    code, _, err = _cli(capsys, "upgrade", path, "-o", tmp_path / "up.onnx", "--verify",
                        "--input-shape", "nothing=1,2")
    assert code == 2 and "['nothing'], which are not inputs of the model" in err


def test_check_names_the_command_out_of_a_downscale(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tf.onnx"
    onnx.save(exporters.tf2onnx_downscale(), path)
    code, out, _ = _cli(capsys, "check", path)
    assert code == 1
    assert (f"Fix: onnx-upsample upgrade {path} -o {tmp_path / 'tf_opset18.onnx'} "
            "--allow-downscale converts the node into the Resize it literally means") in out
    code, out, err = _cli(capsys, "upgrade", path, "-o", tmp_path / "tf18.onnx",
                          "--allow-downscale", "--verify")
    assert code == 0 and "verified: outputs are bit-identical" in out, err
