"""The conformance grader as CI runs it: the exit status by default, tolerances, the user's
expected failures and onnxruntime's built-in waiver, JUnit XML, replayable failures, time and
memory per case, backend options, and a worker that dies after answering.

Runs on the hand-built suite of tests/hand_suite.py: a worker start is the main cost.
"""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from hand_suite import CASES, build_suite

from onnx_upsample import UpsampleError, conformance
from onnx_upsample.cli import main
from onnx_upsample.conformance import _grade, _waivers
from onnx_upsample.conformance._backend_base import check_options


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_suite(tmp_path_factory.mktemp("hand") / "suite")


@pytest.fixture
def backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the workers import tests/ci_backends.py (and conformance_backends.py)."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))


# ----------------------------------------------------------------------------- tolerance

def test_one_ulp_fails_unless_a_tolerance_takes_it() -> None:
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    above = expected.copy()
    above[1] = np.nextafter(np.float32(2.0), np.float32(3.0))  # 2 + 2**-22
    assert _grade.compare(expected, above).kind == "1-ulp"
    assert "1-ulp" in _grade.FAILURES and "close" in _grade.PASSES
    assert _grade.compare(expected, above, _grade.parse_tolerance("1ulp")).kind == "close"
    # 2**-22 = 2.38e-7: atol 3e-7 takes it, 2e-7 does not; rtol 1.2e-7 of 2 is 2.4e-7
    assert _grade.compare(expected, above, _grade.parse_tolerance("atol=3e-7")).kind == "close"
    assert _grade.compare(expected, above, _grade.parse_tolerance("atol=2e-7")).kind == "1-ulp"
    assert _grade.compare(expected, above, _grade.parse_tolerance("rtol=1.2e-7")).kind == "close"
    # NaN passes only against NaN; an integer output takes atol
    nan = np.array([np.nan], np.float32)
    assert _grade.compare(nan, np.array([1.0], np.float32),
                          _grade.parse_tolerance("atol=10")).kind == "wrong"
    assert _grade.compare(np.array([5, 9], np.int32), np.array([6, 9], np.int32),
                          _grade.parse_tolerance("atol=1")).kind == "close"
    three = expected + np.float32(3e-7) * np.array([0, 1, 0], np.float32) * 4
    assert _grade.compare(expected, three, _grade.parse_tolerance("2ulp")).kind == "wrong"


@pytest.mark.parametrize("text", ["2", "ulp", "atol", "atol=-1", "atol=1,atol=2", "rtol=nan",
                                  "0ulp", "1ulp,2ulp", ""])
def test_a_tolerance_that_is_not_one_names_itself_and_the_forms(text: str) -> None:
    with pytest.raises(UpsampleError, match=r"tolerance .*(2ulp|leave it out)"):
        _grade.parse_tolerance(text)


# ------------------------------------------------------------------------------- waivers

def _waivers_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.txt"
    path.write_text(text)
    return path


def test_a_waiver_file_is_read_with_its_options_and_checked(tmp_path: Path) -> None:
    ids = list(CASES)
    waivers = _waivers.read_waivers(_waivers_file(tmp_path, (
        "# expected failures\n\n"
        "none   my adapter returns None here\n"
        "float64*  grades=wrong-dtype backend=x:y  computes in float64\n")), ids)
    assert [(w.pattern, w.grades, w.backend, w.reason) for w in waivers] == [
        ("none", (), None, "my adapter returns None here"),
        ("float64*", ("wrong-dtype",), "x:y", "computes in float64")]
    assert waivers[0].source.endswith("waivers.txt:3")
    float64 = waivers[1]
    assert _waivers.verdict_of("wrong-dtype", float64) == "waived"
    assert _waivers.verdict_of("crashed", float64) == "crashed"  # not the grade it waives
    assert _waivers.verdict_of("exact", float64) == "unexpected-pass"
    assert _waivers.waiver_for(waivers, "float64_off", "exact", "x:y", "wrong") is float64
    assert _waivers.waiver_for(waivers, "float64_off", "exact", "other", "wrong") is None
    # of two waivers about a case, the one that waives its grade
    both = [_waivers.Waiver("v9_*_linear_*", "no linear", "f:1", ("refused",)),
            _waivers.Waiver("v9_*", "1 ULP off", "f:2", ("1-ulp",))]
    chosen = _waivers.waiver_for(both, "v9_input_linear_frac", "exact", "b", "1-ulp")
    assert chosen is both[1] and _waivers.verdict_of("1-ulp", chosen) == "waived"
    assert _waivers.waiver_for(both, "v9_input_linear_frac", "exact", "b", "wrong") is both[0]
    with pytest.raises(UpsampleError, match="backend=x:y names no backend of this run"):
        _waivers.check_backends(waivers, ["onnxruntime"])
    for text, words in (("plain\n", "has no reason"),
                        ("plain grades=wrongg why\n", "'wrongg', which is not a failing grade"),
                        ("plain grades=exact why\n", "'exact', which is not a failing grade"),
                        ("plian why\n", "'plian' matches no case of the suite"),
                        ("plain backend=a backend=b why\n", "given twice")):
        with pytest.raises(UpsampleError, match=words) as error:
            _waivers.read_waivers(_waivers_file(tmp_path, text), ids)
        assert "waivers.txt:1" in str(error.value)
    with pytest.raises(UpsampleError, match="cannot be read"):
        _waivers.read_waivers(tmp_path / "missing.txt", ids)


@pytest.mark.parametrize(("backend", "version", "applies"), [
    ("onnxruntime", "1.32.0", True), ("onnxruntime.backend", "1.32.1", True),
    ("onnxruntime", "1.31.1", False), ("onnxruntime", "1.320", False),
    ("openvino", "1.32.0", False), ("mine:onnxruntime", "1.32.0", False)])
def test_the_builtin_waiver_applies_by_runtime_and_version(backend: str, version: str,
                                                            applies: bool) -> None:
    assert bool(_waivers.builtin_waivers(backend, version)) is applies
    note = _waivers.builtin_note(backend, version)
    assert (note is not None) is (_waivers.runtime_of(backend) == "onnxruntime"
                                  and not applies)


def test_on_the_upgraded_models_the_builtin_waiver_waives_but_expects_no_failure() -> None:
    (differs, *_) = [w for w in _waivers.builtin_waivers("onnxruntime", "1.32.0", "upgraded")
                     if w.ort == "differs"]
    # a documented difference that remains in the Resize model is waived; one the upgrade
    # fixes is a plain pass there, not an unexpected one
    assert _waivers.verdict_of("wrong", differs) == "waived"
    assert _waivers.verdict_of("exact", differs) == "exact"
    (strict, *_) = [w for w in _waivers.builtin_waivers("onnxruntime", "1.32.0")
                    if w.ort == "differs"]
    assert _waivers.verdict_of("exact", strict) == "unexpected-pass"


# ------------------------------------------------------------------------- backend options

def test_backend_options_are_checked_before_any_worker_starts() -> None:
    defaults = check_options("onnxruntime", {})
    assert defaults["graph_optimization_level"] == "all"
    assert check_options("onnxruntime", {"graph_optimization_level": "extended"})[
        "graph_optimization_level"] == "extended"
    for options, words in (({"graph_level": "all"}, "not an option of onnxruntime; it takes "
                            "graph_optimization_level"),
                           ({"graph_optimization_level": "most"}, "expected one of disable"),
                           ({"intra_op_num_threads": "-1"}, "an integer >= 0"),
                           ({"device": "GPU"}, "not an option of tract; it takes none")):
        backend = "tract" if "device" in options else "onnxruntime"
        with pytest.raises(UpsampleError, match=words):
            check_options(backend, options)
    assert check_options("my.module:run", {"anything": "goes"}) == {"anything": "goes"}


# ------------------------------------------------------------------- the command line, CI

def test_by_default_every_verdict_but_a_pass_fails_the_run(
        suite_dir: Path, backends: None, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["conformance", "run", "--suite", str(suite_dir), "-q"]
    # one ULP off everywhere: exit 1 by default; a tolerance of 1 ULP passes it as "close"
    assert main([*common, "--backend", "ci_backends:one_ulp", "--cases", "plain"]) == 1
    assert "plain" in capsys.readouterr().err
    assert main([*common, "--backend", "ci_backends:one_ulp", "--cases", "plain",
                 "--tolerance", "1ulp", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["tolerance"] == "1ulp" and run["cases"][0]["verdict"] == "close"
    # a refusal, an error, None: each fails without --fail-on
    for backend, case in (("conformance_backends:refuse_all", "plain"),
                          ("conformance_backends:contract", "value_error"),
                          ("conformance_backends:contract", "none")):
        assert main([*common, "--backend", backend, "--cases", case]) == 1, backend


def test_expected_failures_junit_and_replay_directories(
        suite_dir: Path, backends: None, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    waivers = _waivers_file(tmp_path, "none  returns None: a known adapter bug\n"
                                      "plain  said to fail, but passes\n")
    junit, failures = tmp_path / "report.xml", tmp_path / "failures"
    # none, not_supported, plain, value_error
    assert main(["conformance", "run", "--suite", str(suite_dir), "--backend",
                 "conformance_backends:contract", "--cases", "[npv][ola]*",
                 "--expected-failures", str(waivers), "--junit", str(junit),
                 "--failures-dir", str(failures), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    verdicts = {c["id"]: c["verdict"] for c in doc["runs"][0]["cases"]}
    assert verdicts == {"none": "waived", "plain": "unexpected-pass",
                        "value_error": "error", "not_supported": "refused"}
    assert {f["id"] for f in doc["failed"]} == {"value_error", "not_supported"}
    # JUnit: the two failures are errors (no output), the waived and the unexpected pass
    # skipped with their reasons
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"),
            suite.get("skipped")) == ("4", "0", "2", "2")
    skipped = {c.get("name"): c.find("skipped") for c in suite.iter("testcase")}
    none = skipped["none"]
    assert none is not None and "a known adapter bug" in str(none.get("message"))
    # a directory per failing case, whose command replays it
    index = json.loads((failures / "index.json").read_text())["failures"]
    assert sorted(entry["id"] for entry in index) == ["not_supported", "value_error"]
    folder = failures / "conformance_backends_contract" / "value_error"
    assert sorted(p.name for p in folder.iterdir()) == [
        "expected.npy", "input_0.npy", "model.onnx", "replay.txt", "result.json"]
    assert np.array_equal(np.load(folder / "input_0.npy"),
                          np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    replay = (folder / "replay.txt").read_text().split()
    assert replay[:3] == ["onnx-upsample", "conformance", "run"]
    assert main([*shlex.split(" ".join(replay))[1:], "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in again["runs"][0]["cases"]] == ["value_error"]
    assert again["runs"][0]["cases"][0]["grade"] == "error"


def test_options_reach_a_custom_backend_and_are_recorded(
        suite_dir: Path, backends: None, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["conformance", "run", "--suite", str(suite_dir), "--backend", "ci_backends:told",
              "--cases", "plain", "--json"]
    assert main(common) == 1
    assert json.loads(capsys.readouterr().out)["runs"][0]["cases"][0]["grade"] == "wrong"
    assert main([*common, "--backend-option", "behave=exact"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["settings"] == {"behave": "exact"} and run["cases"][0]["grade"] == "exact"
    assert main([*common, "--backend-option", "behave"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    # with several backends, each takes the keys it knows: onnxruntime its level, the
    # custom backend every key; a key no backend takes is refused before anything runs
    assert main([*common, "--backend", "onnxruntime", "--backend-option", "behave=exact",
                 "--backend-option", "graph_optimization_level=basic"]) == 0
    first, second = json.loads(capsys.readouterr().out)["runs"]
    assert first["settings"] == {"behave": "exact", "graph_optimization_level": "basic"}
    assert second["settings"]["graph_optimization_level"] == "basic"
    assert "behave" not in second["settings"]
    assert main(["conformance", "run", "--suite", str(suite_dir), "--backend", "onnxruntime",
                 "--backend", "tract", "--backend-option", "nosuch=1"]) == 2
    assert "'nosuch' is not an option of onnxruntime" in capsys.readouterr().err


def test_onnxruntime_settings_are_applied_and_reported(suite_dir: Path) -> None:
    result = conformance.run("onnxruntime", suite_dir, cases=["plain", "v1"],
                             options={"graph_optimization_level": "disable",
                                      "intra_op_num_threads": "1"})
    assert result.settings["graph_optimization_level"] == "disable"
    assert result.settings["intra_op_num_threads"] == "1"
    by_id = {r.id: r for r in result.results}
    assert by_id["plain"].verdict == "exact"
    # Upsample-1: no onnxruntime kernel, waived built in and marked so
    assert by_id["v1"].grade.kind == "refused" and by_id["v1"].verdict == "waived"
    assert by_id["v1"].waiver is not None and by_id["v1"].waiver.source.startswith("built-in")
    assert all(r.seconds > 0 for r in result.results)


def test_a_crash_after_a_correct_answer_fails_the_case_it_answered(
        suite_dir: Path, backends: None) -> None:
    result = conformance.run("ci_backends:crash_after_answer", suite_dir,
                             cases=["plain", "frac"])
    grades = [(r.id, r.grade.kind) for r in result.results]
    # the worker answers, dies 0.3 s later: during the next case or after the last one
    assert [kind for _, kind in grades] != ["exact", "exact"], grades
    assert grades[-1][1] == "crashed" and "SIGSEGV" in result.results[-1].grade.detail
