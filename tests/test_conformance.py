"""The conformance suite: export, grading in isolated workers, reports, onnx's loader.

The suite is exported once per module with the onnxruntime check on (a case whose ORT tag
is wrong stops the export), then graded by onnxruntime, onnx's plain ReferenceEvaluator and
test backends that crash, hang, raise or answer wrongly on purpose.
"""

from __future__ import annotations

import io
import json
import math
import platform
import subprocess
import sys
import unittest
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from onnx_upsample import UpsampleError, conformance, output_shape, upsample
from onnx_upsample.cli import main
from onnx_upsample.conformance import _cases, _grade, _report

TESTS = Path(__file__).parent
BACKENDS_MODULE = "conformance_backends"


@pytest.fixture(scope="module")
def suite(exported_suite: tuple[conformance.Suite, Path]) -> conformance.Suite:
    return exported_suite[0]


@pytest.fixture(scope="module")
def ort_run(suite: conformance.Suite) -> conformance.BackendResult:
    return conformance.run("onnxruntime", suite)


# ------------------------------------------------------------------------------ the cases

def test_cases_cover_what_the_suite_promises(suite: conformance.Suite) -> None:
    infos = [case.info for case in suite.cases]
    assert {i["form"] for i in infos} == set(_cases.FORMS)
    assert {i["dtype"] for i in infos} == set(_cases.SPEC_TYPES)
    assert {i["dtype"] for i in infos if i["mode"] == "linear"} == set(_cases.NUMERIC_TYPES)
    assert {len(i["input_shape"]) for i in infos} == {0, 1, 2, 3, 4, 5, 6}
    assert any(0 in i["input_shape"] for i in infos)
    assert any(1.3333333730697632 in i["scales"] for i in infos)
    # scales that change no length: ORT's global copy
    assert any(i["output_shape"] == i["input_shape"] and any(s != 1 for s in i["scales"])
               for i in infos)
    assert any(int(np.prod(i["output_shape"])) >= 500_000 for i in infos)
    tags = {t for i in infos for t in i["tags"]}
    assert {"ORT-documented-difference", "beyond-ORT", "v1", "v10", "rank6"} <= tags
    for info in infos:
        assert info["description"] and "\n" not in info["description"]
        if info["must_refuse"] is None:
            assert info["output_shape"] == list(output_shape(info["input_shape"],
                                                             info["scales"]))


def test_special_values_are_in_the_inputs(suite: conformance.Suite) -> None:
    case = next(c for c in suite.cases if c.id == "special_float32_linear")
    x = case.inputs()[0]
    assert np.isnan(x).any() and np.isposinf(x).any() and np.isneginf(x).any()
    assert (np.signbit(x) & (x == 0)).any()
    assert ((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)).any()
    extremes = next(c for c in suite.cases if c.id == "extremes_int8_linear").inputs()[0]
    assert extremes.min() == -128 and extremes.max() == 127


def test_manifest_names_version_hash_and_ort(suite: conformance.Suite) -> None:
    manifest = suite.manifest
    assert manifest["version"] == conformance.SUITE_VERSION
    assert manifest["content_hash"].startswith("sha256:")
    assert manifest["ort_tags_measured_with"] == "onnxruntime 1.32"
    assert any(c.startswith("onnxruntime 1.32") for c in manifest["checked_against"])
    assert manifest["notes"] == []  # with ORT 1.32 every tag held (else export raises)
    size = sum(p.stat().st_size for p in suite.directory.rglob("*") if p.is_file())
    # two trees (Upsample and upgraded Resize models) of about 4 MiB each
    assert size < 12 * 2**20, f"the default export is {size / 2**20:.1f} MiB"


@pytest.mark.slow
def test_case_data_and_models_are_the_same_in_every_process() -> None:
    """Stable IDs and data: a fresh interpreter (another hash seed) builds the same bytes."""
    probe = (
        "import hashlib;from onnx_upsample.conformance import _cases, _inputs, _models\n"
        "h = hashlib.sha256()\n"
        "for c in _cases.all_cases(True):\n"
        "    h.update(c.id.encode()); h.update(_models.build_model(c).SerializeToString())\n"
        "    h.update(_inputs.make_input(c).tobytes() if c.dtype != 'string' else "
        "str(_inputs.make_input(c).tolist()).encode())\n"
        "print(h.hexdigest())\n"
    )
    digests = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
               for seed in ("1", "2")}
    assert len(digests) == 1


# The suites as released. A change of any case's model, input or expected output changes
# this hash: then bump SUITE_VERSION (case IDs keep their meaning) and pin the new hash.
SUITE_HASHES = {"1.0": "sha256:d1eb45aad03479748f3766786ffac1de61d3da26d81685d052a7c6613034eab8",
                "2.0": "sha256:834f0fd54f4170a56d16b440091925e29e2f58e8c846218ec7e7a07d83336c68",
                # 2.1: the upgraded models of the 10 output-size cases whose size onnx's shape
                # inference and onnxruntime compute differently leave that dimension unknown
                # (2.0 declared onnxruntime's, which onnx's full check rejects)
                "2.1": "sha256:a954d2e1e473fdf605031dea1ade4afbaa069a2c4b0dadadd0db85c310389e8a"}


def test_released_suite_content_is_pinned(suite: conformance.Suite) -> None:
    assert suite.content_hash == SUITE_HASHES[conformance.SUITE_VERSION]


def test_every_released_case_keeps_its_content(suite: conformance.Suite) -> None:
    """The cases of 1.0, hashed as 1.0 hashed them (their Upsample tree only), still give
    1.0's content hash: released IDs kept their files bit for bit."""
    from onnx_upsample.conformance._suite import _suite_hash

    added_in_2_0 = {"element types (NCHW)", "output-size rules", "coordinate rules",
                    "must refuse"}
    released = {c.id: c.info["sha256"] for c in suite.cases if c.group not in added_in_2_0}
    assert len(released) == 133
    assert _suite_hash(released) == SUITE_HASHES["1.0"]


def test_export_refuses_a_directory_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UpsampleError, match="holds other files"):
        conformance.export(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_changed_file_is_detected(suite: conformance.Suite, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(suite.directory, copy)
    output = copy / "upsample" / "test_upsample_rank2_linear" / "test_data_set_0" / "output_0.pb"
    tensor = onnx.TensorProto()
    tensor.ParseFromString(output.read_bytes())
    array = numpy_helper.to_array(tensor).copy()
    array.flat[0] += 1
    output.write_bytes(numpy_helper.from_array(array, "Y").SerializeToString())
    with pytest.raises(UpsampleError, match=r"rank2_linear.*changed since export"):
        conformance.load(copy)


# ------------------------------------------------------------------- the backend-test layout

def test_every_pb_round_trips(suite: conformance.Suite) -> None:
    files = list(suite.directory.rglob("*.pb"))
    assert len(files) >= 2 * len(suite.cases)
    for path in files:
        data = path.read_bytes()
        tensor = onnx.TensorProto()
        tensor.ParseFromString(data)
        assert tensor.SerializeToString() == data
        again = numpy_helper.from_array(numpy_helper.to_array(tensor), tensor.name)
        assert again.SerializeToString() == data, path


@pytest.mark.slow
def test_onnx_backend_test_machinery_loads_and_runs_the_suite(
        suite: conformance.Suite) -> None:
    from onnx.backend.test.loader import load_model_tests
    from onnx.backend.test.runner import Runner

    sys.path.insert(0, str(TESTS))
    try:
        from conformance_backends import ReferenceBackend
    finally:
        sys.path.remove(str(TESTS))
    loaded = load_model_tests(data_dir=str(suite.directory), kind="upsample")
    assert sorted(t.name for t in loaded) == sorted(f"test_upsample_{c.id}"
                                                    for c in suite.cases)
    runner = Runner(ReferenceBackend, __name__)
    runner._test_items.clear()  # keep only our cases, not onnx's own generated node tests
    chosen = {"test_upsample_v9_linear_frac", "test_upsample_type_string_nearest",
              "test_upsample_v1_linear_int", "test_upsample_rank0_v7"}
    for test in loaded:
        if test.name in chosen:
            runner._add_model_test(test, "Node")
    result = unittest.TextTestRunner(verbosity=0, stream=io.StringIO()).run(runner.test_suite)
    # one test per device onnx knows; the backend supports the CPU only
    assert result.testsRun - len(result.skipped) == len(chosen)
    assert result.wasSuccessful(), result.failures + result.errors


# ------------------------------------------------------------------------------- grading

def test_onnxruntime_is_exact_but_for_the_documented_differences(
        ort_run: conformance.BackendResult) -> None:
    assert ort_run.backend == "onnxruntime" and ort_run.version.startswith("1.32")
    by_ort = {}
    for result in ort_run.results:
        if result.must_refuse is None:
            by_ort.setdefault(result.ort, set()).add(result.grade.kind)
    # the int32 wrap-around is x86's float-to-int conversion; ARM saturates, as Upsample
    differs = {"wrong"} if platform.machine() in ("x86_64", "AMD64") else {"wrong", "exact"}
    assert by_ort["exact"] == {"exact"}
    # float16 v1: ORT's own inserted Cast makes the graph invalid, an error, not a refusal
    assert by_ort["refuses"] == {"refused", "error"}
    assert by_ort["differs"] <= differs and "wrong" in by_ort["differs"]
    # the built-in waiver takes every documented difference and missing kernel, by name
    assert {r.verdict for r in ort_run.results} <= {"exact", "refused-as-required", "waived",
                                                     "unexpected-pass"}
    report = _report.terminal([ort_run])
    assert "a documented difference of onnxruntime 1.32" in report
    first = report.splitlines()[0]
    assert " waived (" in first and " wrong," not in first
    markdown = _report.markdown([ort_run], {**_suite_meta(ort_run)})
    assert "| version forms |" in markdown


def _no_constants(name: str) -> None:
    raise AssertionError(f"{name} in JSON: not strict JSON")


def _suite_meta(run: conformance.BackendResult) -> dict[str, object]:
    return {"version": run.suite_version, "content_hash": run.content_hash, "cases": [],
            "ort_tags_measured_with": "onnxruntime 1.32"}


def test_plain_onnx_reference_refuses_what_it_does_not_implement(
        suite: conformance.Suite) -> None:
    result = conformance.run("onnx-reference", suite)
    grades = {r.id: r.grade for r in result.results}
    # onnx's own Upsample runs integer-scale nearest only
    for case_id in ("v9_nearest_int", "scale_2_nearest", "scale_3_nearest"):
        assert grades[case_id].kind == "exact", (case_id, grades[case_id])
    for case_id in ("v9_nearest_frac", "v9_linear_int", "rank2_linear", "scale_1p5_nearest"):
        assert grades[case_id].kind == "refused"
        assert "Not implemented" in grades[case_id].detail
    # the attribute forms (v1, v7) are not implemented at all: its evaluator fails on the
    # attributes with a TypeError, not an explicit refusal
    for case_id in ("v7_nearest_int", "v1_nearest_int", "v1_linear_frac"):
        assert grades[case_id].kind == "error", (case_id, grades[case_id])
        assert grades[case_id].detail.startswith("TypeError: Issues with types")
    assert not any(r.grade.kind in ("crashed", "timeout") for r in result.results)


@pytest.mark.slow
def test_isolated_workers_grade_crashes_hangs_refusals_and_errors(
        suite: conformance.Suite, importable_test_backends: None) -> None:
    from conformance_backends import BEHAVIOUR  # type: ignore[import-not-found]

    chosen = set(BEHAVIOUR) | {"rank1_linear", "rank2_linear"}
    result = conformance.run(f"{BACKENDS_MODULE}:misbehaving", suite, timeout=5,
                             cases=chosen.__contains__)
    grades = {r.id: r.grade for r in result.results}
    assert grades["rank1_nearest"].kind == "crashed"
    assert "SIGABRT" in grades["rank1_nearest"].detail
    assert grades["rank2_nearest"].kind == "timeout"
    assert grades["rank3_nearest"].kind == "refused"
    assert "NotImplementedError: Upsample with this scale" in grades["rank3_nearest"].detail
    assert grades["rank4_nearest"].kind == "wrong-shape"
    assert grades["rank5_nearest"].kind == "1-ulp"
    assert grades["rank5_nearest"].max_ulp == 1
    wrong = grades["rank6_nearest"]
    assert wrong.kind == "wrong" and wrong.share == 1.0 and wrong.first_index == (0,) * 6
    assert wrong.max_difference == 0.5
    assert grades["rank3_linear"].kind == "adapter-error"
    assert "not an array of numbers or strings" in grades["rank3_linear"].detail
    # the worker came back after the crash and the hang
    assert grades["rank1_linear"].kind == "exact" and grades["rank2_linear"].kind == "exact"
    # every report says what happened
    meta = _suite_meta(result)
    page = _report.to_html([result], meta)
    assert "<td>rank1_nearest</td><td>crashed</td>" in page
    assert "<td>rank2_nearest</td><td>timed out</td>" in page
    assert "refusals and errors, by message" in page and "[rank3_nearest]" in page
    data = json.loads(_report.to_json([result], meta), parse_constant=_no_constants)
    assert {c["grade"] for c in data["backends"][0]["cases"]} >= {"crashed", "timeout"}
    text = _report.terminal([result])
    assert "rank1_nearest: crashed" in text and "rank2_nearest: timed out" in text


@pytest.mark.slow
def test_a_backend_class_and_a_callable_are_accepted(
        suite: conformance.Suite, importable_test_backends: None) -> None:
    for spec in (f"{BACKENDS_MODULE}:ReferenceBackend", f"{BACKENDS_MODULE}:exact"):
        result = conformance.run(spec, suite, cases=lambda i: i.startswith("v"))
        assert result.results and {r.grade.kind for r in result.results} == {"exact"}, spec


def test_an_unknown_backend_is_one_clear_error(suite: conformance.Suite) -> None:
    with pytest.raises(UpsampleError, match="built-in backends are onnxruntime"):
        conformance.run("no_such_runtime_module", suite)


# -------------------------------------------------------------------------------- grades

def test_grade_rules() -> None:
    expected = np.array([1.0, np.nan, -0.0, 3.0], np.float32)
    payload = expected.copy()
    payload.view(np.uint32)[1] = 0x7FC00123  # another NaN is still NaN
    assert _grade.compare(expected, payload).kind == "exact"
    zero = expected.copy()
    zero[2] = 0.0
    assert _grade.compare(expected, zero).kind == "1-ulp"
    assert _grade.compare(expected, expected.astype(np.float64)).kind == "wrong-dtype"
    assert _grade.compare(expected, expected[:3]).kind == "wrong-shape"
    nan_for_number = expected.copy()
    nan_for_number[0] = np.nan
    grade = _grade.compare(expected, nan_for_number)
    assert grade.kind == "wrong" and np.isnan(grade.max_difference)
    ints = np.array([[1, 2], [3, 4]], np.int32)
    grade = _grade.compare(ints, ints + np.array([[0, 0], [0, 2]], np.int32))
    assert (grade.kind, grade.first_index, grade.share, grade.max_difference) == (
        "wrong", (1, 1), 0.25, 2.0)
    strings = np.array(["a", "b"], dtype=object)
    assert _grade.compare(strings, np.array([b"a", b"b"], dtype=object)).kind == "exact"
    assert _grade.compare(strings, np.array(["a", "c"], dtype=object)).kind == "wrong"
    complex_ = np.array([1 + 1j, np.nan + 2j], np.complex64)
    assert _grade.compare(complex_, complex_.copy()).kind == "exact"


# ----------------------------------------------------------------------------- the CLI

@pytest.mark.slow
def test_cli_export_then_run_with_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' plumbing, on the rank cases alone (the whole suite is exported once per
    test run, by the exported_suite fixture)."""
    from onnx_upsample.conformance import _suite

    every = _suite.all_cases
    monkeypatch.setattr(_suite, "all_cases", lambda full=False: [
        case for case in every(full) if case.id.startswith("rank")])
    directory = tmp_path / "suite"
    assert main(["conformance", "export", str(directory), "--no-ort-check"]) == 0
    out = capsys.readouterr().out
    assert "cases to" in out and "sha256:" in out
    report = tmp_path / "report"
    code = main(["conformance", "run", "--backend", "onnxruntime", "--suite", str(directory),
                 "--cases", "rank*", "--json-file", f"{report}.json", "--markdown",
                 f"{report}.md", "--html", f"{report}.html"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("onnxruntime 1.32")
    data = json.loads(Path(f"{report}.json").read_text())
    (backend,) = data["backends"]
    assert {c["id"] for c in backend["cases"]} == {c.id for c in conformance.load(
        directory).cases if c.id.startswith("rank")}
    assert "<table>" in Path(f"{report}.html").read_text()
    assert "| ranks 1-6 |" in Path(f"{report}.md").read_text()


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "run", "--backend", "onnxruntime", "--suite",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "manifest.json" in err


def test_cli_explain_names_the_convention(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    x = np.arange(480, dtype=np.float32).reshape(16, 30)

    def half_pixel(n: int, scale: float) -> np.ndarray:
        # Resize half_pixel + round_prefer_floor in float32, by hand
        c = (np.arange(int(n * scale), dtype=np.float32) + np.float32(0.5)) / np.float32(scale)
        c -= np.float32(0.5)
        return np.clip(np.floor(c) + (c - np.floor(c) > 0.5), 0, n - 1).astype(np.int64)

    theirs = x[half_pixel(16, 1.5)][:, half_pixel(30, 1.7)]
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "theirs.npy", theirs)
    args = ["explain", str(tmp_path / "x.npy"), str(tmp_path / "theirs.npy"), "--scales",
            "1.5", "1.7"]
    assert main(args) == 0
    # one output cannot tell half_pixel from pytorch_half_pixel, nor the roundings apart
    out = capsys.readouterr().out
    assert out.startswith("matches ") and (
        " conventions equally, not Upsample: Resize half_pixel + round_prefer_floor;" in out)
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "convention"
    # on 4 x 5 it reads another index than Upsample at 2 output indices: it only coincides
    small = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.save(tmp_path / "small.npy", small)
    np.save(tmp_path / "theirs.npy", small[half_pixel(4, 1.5)][:, half_pixel(5, 1.7)])
    assert main(["explain", str(tmp_path / "small.npy"), *args[2:]]) == 0
    assert capsys.readouterr().out.startswith(
        "coincides with Resize half_pixel + round_prefer_floor where it departs from Upsample")
    np.save(tmp_path / "ours.npy", upsample(x, [1.5, 1.7]))
    assert main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "ours.npy"),
                 "--scales", "1.5", "1.7"]) == 0
    assert capsys.readouterr().out.startswith("matches Upsample")


def test_ulp_gaps_are_exact_at_every_width() -> None:
    import ml_dtypes

    for dtype, steps in ((np.float16, 300), (np.float32, 300), (np.float64, 300),
                         (ml_dtypes.bfloat16, 3)):
        expected = np.array([1.5], dtype=dtype)
        actual = expected.copy()
        actual.view(f"u{expected.dtype.itemsize}")[0] += steps
        grade = _grade.compare(expected, actual)
        assert (grade.kind, grade.max_ulp) == ("wrong", steps), dtype
        actual.view(f"u{expected.dtype.itemsize}")[0] -= steps - 1
        assert _grade.compare(expected, actual).kind == "1-ulp", dtype
    complex_ = np.array([1 + 1j], np.complex128)
    off = complex_.copy()
    off.view(np.uint64)[0] += 100  # the real part, 100 ULP away
    assert _grade.compare(complex_, off).max_ulp == 100
    largest = np.array([np.finfo(np.float32).max], np.float32)
    grade = _grade.compare(largest, np.array([np.inf], np.float32))
    assert grade.kind == "wrong" and grade.max_ulp is None
    assert json.loads(json.dumps(grade.to_dict(), allow_nan=False))["max_difference"] == "inf"


def test_run_checks_its_arguments(suite: conformance.Suite) -> None:
    for timeout in (0, -1, math.nan, math.inf):
        with pytest.raises(UpsampleError, match="timeout is"):
            conformance.run("onnxruntime", suite, timeout=timeout)
    with pytest.raises(TypeError, match="timeout is '5'"):
        conformance.run("onnxruntime", suite, timeout="5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="backend is 3"):
        conformance.run(3, suite)  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_failed_export_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnx_upsample.conformance import _suite

    real = _suite.expected_output

    def failing(case: _cases.Case, x: np.ndarray) -> np.ndarray:
        if case.id == "rank1_nearest":
            raise UpsampleError("stop here")
        return real(case, x)

    monkeypatch.setattr(_suite, "expected_output", failing)
    with pytest.raises(UpsampleError, match="stop here"):
        conformance.export(tmp_path / "suite", check_ort=False)
    assert list(tmp_path.iterdir()) == []


def test_export_replaces_an_earlier_export_only(suite: conformance.Suite,
                                                tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(suite.directory, copy)
    (copy / "mine.txt").write_text("keep me")
    with pytest.raises(UpsampleError, match=r"holds other files \(mine.txt\)"):
        conformance.export(copy, check_ort=False)
    assert (copy / "mine.txt").read_text() == "keep me"


def test_workers_ignore_packages_in_the_current_directory(
        suite: conformance.Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an onnx source checkout, the worker must still import the installed onnx."""
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "__init__.py").write_text("raise ImportError('the source tree')\n")
    monkeypatch.chdir(tmp_path)
    result = conformance.run("onnxruntime", suite, cases={"rank2_nearest"}.__contains__)
    assert [r.grade.kind for r in result.results] == ["exact"]
