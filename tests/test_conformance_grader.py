"""The conformance grader: grades, backends' contracts, must-refuse cases, the two model
forms, reports, the CI exit status, and the pytorch mapping.

Runs on a suite of a few hand-built cases (no export), so that each worker start is the
main cost.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from hand_suite import SHAPE, build_suite, upsample_model
from onnx import TensorProto, helper, numpy_helper

from onnx_upsample import UpsampleError, conformance, upsample
from onnx_upsample.cli import main
from onnx_upsample.conformance import _grade, _report
from onnx_upsample.conformance._protocol import shorten
from onnx_upsample.conformance._runner import select_cases
from onnx_upsample.onnx import upgrade

TESTS = Path(__file__).parent


# ------------------------------------------------------------------ a suite built by hand

@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_suite(tmp_path_factory.mktemp("hand") / "suite")


@pytest.fixture(scope="module")
def contract_run(suite_dir: Path) -> conformance.BackendResult:
    import os

    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(TESTS)
    try:
        return conformance.run("conformance_backends:contract", conformance.load(suite_dir))
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


# ------------------------------------------------------------------------------ grades

def test_byte_order_alone_is_not_a_difference() -> None:
    expected = np.array([1.0, 2.0, -0.0], np.float32)
    assert _grade.compare(expected, expected.astype(">f4")).kind == "exact"
    off = np.array([1.0, 3.0, -0.0], ">f4")
    grade = _grade.compare(expected, off)
    # compared as numbers, not as swapped bytes: the difference is 1, at index 1
    assert (grade.kind, grade.first_index, grade.max_difference) == ("wrong", (1,), 1.0)
    assert _grade.compare(np.array([7, -2], ">i8"), np.array([7, -2], "<i8")).kind == "exact"


def test_another_element_type_is_a_wrong_dtype_that_says_whether_values_are_right() -> None:
    expected = np.array([0.5, 1.5], np.float32)
    right = _grade.compare(expected, expected.astype(np.float64))
    assert right.kind == "wrong-dtype"
    assert right.detail == ("element type float64, expected float32; converted to float32, "
                            "its values are the expected ones")
    wrong = _grade.compare(expected, expected.astype(np.float64) + 1)
    assert wrong.kind == "wrong-dtype" and "converted to float32: wrong" in wrong.detail
    assert _grade.GRADE_WORDS["wrong-dtype"] == "wrong dtype"


def test_shorten_cuts_between_words() -> None:
    text = "Could not find an implementation for Upsample(9) node with name ''"
    short = shorten(text, 30)
    assert short == "Could not find an…" and len(short) <= 30
    assert shorten("a  b\n c", 30) == "a b c"
    assert shorten("x" * 40, 10) == "x" * 9 + "…"


# --------------------------------------------------------------- the contract, refusals

def test_each_way_of_breaking_the_contract_has_its_own_verdict(
        contract_run: conformance.BackendResult) -> None:
    grades = {r.id: r.grade for r in contract_run.results}
    assert grades["plain"].kind == "exact" and grades["frac"].kind == "exact"
    for case_id, returned in (("none", "NoneType"), ("generator", "generator")):
        assert grades[case_id].kind == "adapter-error", grades[case_id]
        assert grades[case_id].detail.startswith(
            f"the adapter broke its contract: the callable returned {returned}")
    assert grades["value_error"].kind == "error"
    assert grades["value_error"].detail == "ValueError: my port cannot read these scales"
    # NotImplementedError is every backend's explicit refusal
    assert grades["not_supported"].kind == "refused"
    assert grades["big_endian"].kind == "exact"
    assert grades["float64"].kind == "wrong-dtype"
    assert "its values are the expected ones" in grades["float64"].detail
    assert grades["float64_off"].kind == "wrong-dtype"


def test_invalid_models_pass_only_when_refused(contract_run: conformance.BackendResult) -> None:
    by_id = {r.id: r for r in contract_run.results}
    accepted, refused = by_id["invalid_accepted"], by_id["invalid_refused"]
    assert accepted.grade.kind == "accepted-invalid" and accepted.must_refuse == "scales below 1"
    assert "must be refused (scales below 1)" in accepted.grade.detail
    assert refused.grade.kind == "refused-as-required"
    assert refused.grade.detail == "ValueError: my port cannot read these scales"
    assert _report.passed(refused) and not _report.passed(accepted)
    score = _report._score(contract_run)
    assert score.endswith("invalid models: 1/2 refused, as required")
    text = _report.terminal([contract_run])
    assert f"{_report.MUST_REFUSE_ROW}  " in text and "1/2" in text


def test_refusing_everything_does_not_verify_the_invalid_models(
        contract_run: conformance.BackendResult) -> None:
    # an adapter that raises on every model "refuses" the invalid ones too: the score must
    # not present that as checking them
    import dataclasses

    broken = dataclasses.replace(contract_run, results=[
        r if r.must_refuse is not None
        else dataclasses.replace(r, grade=_grade.Grade("error", "RuntimeError: adapter bug"))
        for r in contract_run.results])
    score = _report._score(broken)
    assert score.endswith("(unverified: it returned no output for any valid model either)")
    assert "unverified" not in _report._score(contract_run)


def test_every_report_lists_every_case_that_did_not_pass(
        contract_run: conformance.BackendResult) -> None:
    meta = {"version": "test", "content_hash": "sha256:x", "cases": [],
            "ort_tags_measured_with": "onnxruntime 1.32"}
    not_passed = {r.id for r in contract_run.results if not _report.passed(r)}
    assert not_passed == {"none", "generator", "value_error", "not_supported", "float64",
                          "float64_off", "invalid_accepted"}
    page = _report.to_html([contract_run], meta)
    markdown = _report.markdown([contract_run], meta)
    terminal = _report.terminal([contract_run])
    for case_id in not_passed:
        assert f"`{case_id}`" in markdown or f"[{case_id}]" in markdown, case_id
        assert case_id in page and case_id in terminal, case_id
    assert "| `float64_off` | wrong dtype |" in markdown
    assert "| `invalid_accepted` | accepted invalid input |" in markdown
    assert "1 error: ValueError: my port cannot read these scales [value_error]" in markdown
    # the explainer's one-line verdict for the wrong values
    row = next(line for line in markdown.splitlines() if line.startswith("| `float64_off`"))
    assert row.count("|") == 5 and row.split("|")[4].strip().startswith(("closest", "matches"))
    data = json.loads(_report.to_json([contract_run], meta))
    assert {c["grade"] for c in data["backends"][0]["cases"]} >= {"adapter-error", "error"}


def test_refusals_with_different_messages_are_not_merged(
        contract_run: conformance.BackendResult) -> None:
    import dataclasses

    results = [r for r in contract_run.results if r.id in ("plain", "frac", "linear")]
    refusals = ["RuntimeError: Not implemented for mode='nearest' and scale=[1. 2.]",
                "RuntimeError: Not implemented for mode='nearest' and scale=[1. 1.5]",
                "RuntimeError: no kernel for float16"]
    run = dataclasses.replace(contract_run, results=[
        dataclasses.replace(r, grade=_grade.Grade("refused", words))
        for r, words in zip(results, refusals, strict=True)])
    lines = _report.message_groups(run)
    assert lines == [
        "2 refused: RuntimeError: Not implemented for mode='nearest' and scale=[…] "
        "[plain, frac]",
        "1 refused: RuntimeError: no kernel for float16 [linear]"]


# -------------------------------------------------------------------- runtime backends

def test_a_runtime_backend_module_is_accepted_and_refuses_as_its_runtime(
        suite_dir: Path) -> None:
    suite = conformance.load(suite_dir)
    result = conformance.run("onnxruntime.backend", suite,
                             cases=["plain", "fr*", "v1", "invalid_refused"])
    grades = {r.id: r.grade for r in result.results}
    assert sorted(grades) == ["frac", "invalid_refused", "plain", "v1"]
    assert grades["plain"].kind == "exact" and grades["frac"].kind == "exact"
    # ORT's NOT_IMPLEMENTED, through onnxruntime.backend, is onnxruntime's refusal
    assert grades["v1"].kind == "refused" and grades["v1"].detail.startswith("NotImplemented")
    assert grades["invalid_refused"].kind == "refused-as-required"


@pytest.mark.slow
def test_both_forms_on_the_command_line_with_ci_exit_status(
        suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["conformance", "run", "--backend", "onnxruntime", "--suite", str(suite_dir),
              "--cases", "[plv]*"]
    assert main([*common, "--form", "both", "--fail-on", "wrong,crashed"]) == 0
    out = capsys.readouterr().out
    assert "onnxruntime (upgraded) 1.32" in out
    # Upsample-1 has no ORT kernel; its Resize upgrade runs exactly
    # onnxruntime's built-in waiver: its missing kernel is waived, and the report says so
    assert "onnxruntime: 1 waived (refused) -> upgraded: fixed: exact [v1]" in out
    # the built-in waiver is about the Upsample models: onnxruntime runs every upgraded one
    assert "expected to fail" not in out
    # -q: nothing on stdout, and the failing case on stderr (the reason for exit status 1)
    assert main([*common, "--fail-on", "waived", "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "--fail-on waived: 1 case(s) failed: onnxruntime: v1\n"
    assert main([*common, "--fail-on", "waiv", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert next(iter(doc)) == "command" and doc["command"] == "conformance run"
    assert doc["failed"] == [{"backend": "onnxruntime", "id": "v1", "verdict": "waived",
                              "words": "waived (refused)"}]
    assert [run["form"] for run in doc["runs"]] == ["upsample"]
    assert main([*common, "--fail-on", "wrang"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'wrang' is not a verdict kind" in err
    assert main([*common, "--fail-on", "wrong-"]) == 2
    assert "matches wrong-dtype, wrong-shape" in capsys.readouterr().err


@pytest.mark.slow
def test_run_exits_1_by_default_when_a_runtime_does_not_conform(
        suite_dir: Path, importable_test_backends: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    # as a test runner: any verdict but a pass (exact, within tolerance, refused as
    # required) or a waived failure is exit status 1 without --fail-on
    common = ["conformance", "run", "--backend", "conformance_backends:contract", "--suite",
              str(suite_dir)]
    # plain: exact; invalid_accepted: accepted-invalid; invalid_refused: refused, as required
    assert main([*common, "--cases", "[ip]*"]) == 1
    out = capsys.readouterr().out
    assert out.rstrip().endswith("\n1 case(s) failed: "
                                 "conformance_backends:contract: invalid_accepted"), out
    assert main([*common, "--cases", "[ip]*", "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "invalid_accepted" in captured.err
    assert "plain" not in captured.err
    # another element type is wrong too
    assert main([*common, "--cases", "float64_off", "-q"]) == 1
    assert "float64_off" in capsys.readouterr().err
    # --fail-on narrows it (none: exit 0 whatever the verdicts) or widens it
    assert main([*common, "--cases", "[ip]*", "--fail-on", "none", "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    # an error fails by default: a runtime that raises has not conformed
    assert main([*common, "--cases", "value_error", "-q"]) == 1
    assert main([*common, "--cases", "value_error", "--fail-on", "wrong,crashed"]) == 0
    capsys.readouterr()
    assert main([*common, "--cases", "plain", "--fail-on", "none,wrong"]) == 2
    assert "'none' means no verdict fails" in capsys.readouterr().err


def test_run_help_lists_the_verdicts_that_fail_by_default(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["conformance", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {', '.join(_grade.FAILURES)})" in text.replace("- ", "-"), text
    assert "{" not in text.replace("{upsample,upgraded,both}", "")


def test_the_documented_default_exit_status_is_the_codes() -> None:
    # the README's CI lines and docs/conformance.md list the verdicts that fail by default;
    # both say what the code does
    root = TESTS.parent
    from onnx_upsample.conformance import _waivers

    kinds = [f"`{kind}`" for kind in (*_grade.PASSES, _waivers.WAIVED, _waivers.UNEXPECTED_PASS)]
    listed = ", ".join(kinds[:-1]) + f" or {kinds[-1]}"
    for path in (root / "README.md", root / "docs" / "suite.md", root / "docs" /
                 "conformance.md"):
        text = " ".join(path.read_text().split())
        assert f"exits 1 when a case's verdict is anything but {listed}" in text, path


# ---------------------------------------------------------------------- pytorch mapping

def _run_pytorch(model: onnx.ModelProto, x: np.ndarray, tmp_path: Path) -> np.ndarray:
    # the pytorch backend is optional (torch is not in the dev extra: from the index it is a
    # multi-GB CUDA build); where torch is installed these tests run
    pytest.importorskip("torch", reason="the pytorch conformance backend needs torch")
    from onnx_upsample.conformance._pytorch import pytorch

    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return pytorch().run(path, {"X": x.copy()})[0]


def _ort_resize(x: np.ndarray, scales: list[float], mode: str, coordinates: str) -> np.ndarray:
    import onnxruntime

    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode=mode,
                            coordinate_transformation_mode=coordinates)
    graph = helper.make_graph(
        [node], "resize", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(scales, np.float32), "scales")])
    model = helper.makeupsample_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"X": x})[0])


def test_pytorch_maps_upsample_as_a_converter_does(tmp_path: Path) -> None:
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    # integer-scale nearest is the same in both conventions
    nearest = _run_pytorch(upsample_model("a", [1, 1, 2, 3]), x, tmp_path)
    assert np.array_equal(nearest, upsample(x, [1, 1, 2, 3]))
    # linear is interpolate's half_pixel (align_corners=False), not Upsample's asymmetric
    linear = _run_pytorch(upsample_model("b", [1, 1, 2, 2], "linear"), x, tmp_path)
    np.testing.assert_allclose(linear, _ort_resize(x, [1, 1, 2, 2], "linear", "half_pixel"),
                               rtol=1e-6)
    assert not np.allclose(linear, upsample(x, [1, 1, 2, 2], "linear"))
    # v1's attributes are read too
    v1 = _run_pytorch(upsample_model("c", [1, 1, 2, 2], opset=1), x, tmp_path)
    assert np.array_equal(v1, upsample(x, [1, 1, 2, 2]))


@pytest.mark.parametrize("change, words", [
    ("rank2", "rank 2: interpolate takes"),
    ("int32", "element type int32"),
    ("batch", "on N and C"),
    ("runtime", "given or computed at run time"),
    ("resize-asymmetric", "coordinate_transformation_mode 'asymmetric' has no interpolate"),
])
def test_pytorch_refuses_what_a_converter_cannot_map(tmp_path: Path, change: str,
                                                     words: str) -> None:
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    model = upsample_model("d", [2, 1, 2, 2] if change == "batch" else [1, 1, 2, 2],
                   "linear" if change == "resize-asymmetric" else "nearest")
    if change == "rank2":
        x = x.reshape(2, 3)
        model.graph.initializer[0].CopyFrom(numpy_helper.from_array(
            np.array([2, 2], np.float32), "scales"))
    if change == "int32":
        x = x.astype(np.int32)
    if change == "runtime":
        del model.graph.initializer[:]
        model.graph.input.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT,
                                                               [4]))
    if change == "resize-asymmetric":
        model = upgrade(model)
    with pytest.raises(NotImplementedError, match=words):
        _run_pytorch(model, x, tmp_path)


# ---------------------------------------------------------------------- choosing cases

def test_run_takes_a_pattern_as_the_command_line_does(suite_dir: Path) -> None:
    """run(cases='v9_*') was a TypeError ('str' object is not callable) while --cases took
    the pattern."""
    result = conformance.run("onnxruntime", conformance.load(suite_dir), cases="f*")
    assert sorted(r.id for r in result.results) == ["float64", "float64_off", "frac"]


@pytest.mark.parametrize(("cases", "chosen"), [
    ("f*", ["float64", "float64_off", "frac"]),
    ("*_off", ["float64_off"]),
    ("F*", []),  # case-sensitive, on every platform
    (["plain", "v*"], ["plain", "v1", "value_error"]),
    (("float64",), ["float64"]),  # an ID is a pattern that matches itself
    ({"frac", "linear"}, ["frac", "linear"]),
    (lambda case_id: case_id.endswith("_off"), ["float64_off"]),
], ids=["pattern", "suffix", "case", "patterns", "an-id", "a-set", "predicate"])
def test_the_cases_a_selection_chooses(suite_dir: Path, cases: object,
                                       chosen: list[str]) -> None:
    suite = conformance.load(suite_dir)
    if not chosen:
        with pytest.raises(UpsampleError, match="matches no case"):
            select_cases(cases, suite)  # type: ignore[arg-type]
        return
    select = select_cases(cases, suite)  # type: ignore[arg-type]
    assert select is not None
    assert sorted(c.id for c in suite.cases if select(c.id)) == chosen
    assert select_cases(None, suite) is None  # every case


@pytest.mark.parametrize(("cases", "python", "option"), [
    ("zz*", "cases 'zz*' matches no case", "--cases 'zz*' matches no case"),
    ("", "cases '' matches no case", "--cases '' matches no case"),
    (["f*", "zz*"], "the pattern 'zz*' of cases matches no case", None),
    ([], "cases is empty", None),
])
def test_a_pattern_that_matches_nothing_is_refused_before_any_runtime_starts(
        suite_dir: Path, cases: object, python: str, option: str | None,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same words from run() and from --cases (which said so alone before)."""
    suite = conformance.load(suite_dir)
    with pytest.raises(UpsampleError, match=f"^{re.escape(python)}"):
        conformance.run("no_such_module:nothing", suite, cases=cases)  # type: ignore[arg-type]
    if option is not None:
        assert main(["conformance", "run", "--backend", "no_such_module:nothing", "--suite",
                     str(suite_dir), "--cases", str(cases)]) == 2
        assert option in capsys.readouterr().err


@pytest.mark.parametrize("cases", [3, b"f*", [3], ["f*", None]])
def test_cases_of_another_kind_are_a_type_error(suite_dir: Path, cases: object) -> None:
    with pytest.raises(TypeError, match="expected a shell pattern of case IDs"):
        conformance.run("onnxruntime", conformance.load(suite_dir),
                        cases=cases)  # type: ignore[arg-type]
