"""Grading a runtime on the suite: one isolated worker process per backend.

The worker is restarted after a crash or a timeout, so one bad case costs only itself.
Every output that is not exact goes through the explainer, which names the convention that
reproduces it. A case that must be refused (an invalid model) passes when the runtime
raises its own error, and fails as "accepted invalid input" when it returns outputs.

The grader trusts no file a runtime could have written: each case's files are read once,
checked against the manifest's hash and kept in memory; the runtime gets a copy of the
model in a folder of its own (absolute paths: a runtime that changes directory finds it)
and the inputs in the request, and the output is graded against the expected output that
was checked. A case whose files changed since export is not run, and fails.
"""

from __future__ import annotations

import datetime
import fnmatch
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .._spec.spelling import Spelling, spelled
from ._backend_base import check_options
from ._grade import (
    ACCEPTED_INVALID,
    ADAPTER_ERROR,
    CLOSE,
    CRASHED,
    ERROR,
    EXACT,
    PASSES,
    REFUSED,
    REFUSED_AS_REQUIRED,
    ULP1,
    WRONG,
    WRONG_DTYPE,
    WRONG_SHAPE,
    Grade,
    Tolerance,
    as_expected_type,
    compare,
)
from ._process import DEFAULT_MEMORY_LIMIT, Answer, Worker
from ._suite import CaseFiles, Suite, SuiteCase, read_case
from ._waivers import (
    UNEXPECTED_PASS,
    WAIVED,
    Waiver,
    builtin_note,
    builtin_waivers,
    verdict_of,
    waiver_for,
)

Progress = Callable[[int, int, str, str], None]


@dataclass(frozen=True)
class CaseResult:
    """One case graded on one backend; ``explanation`` is the explainer's dict, if run."""

    id: str
    group: str
    mode: str
    tags: tuple[str, ...]
    ort: str
    grade: Grade
    seconds: float
    explanation: dict[str, Any] | None = None
    must_refuse: str | None = None
    #: the waiver about this case, if one is (see ``verdict``)
    waiver: Waiver | None = None
    #: the worker's peak resident memory while it ran the case, where the system tells it
    peak_bytes: int | None = None

    @property
    def verdict(self) -> str:
        """The grade, or ``waived`` / ``unexpected-pass`` where a waiver is about the case."""
        return verdict_of(self.grade.kind, self.waiver)

    @property
    def passed(self) -> bool:
        """The output is the expected one (or within the tolerance), an invalid model was
        refused, or the failure is waived."""
        return self.verdict in (*PASSES, WAIVED, UNEXPECTED_PASS)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "group": self.group, "grade": self.grade.kind,
                                "verdict": self.verdict, **self.grade.to_dict(),
                                "seconds": round(self.seconds, 4)}
        data.pop("kind")
        if self.peak_bytes is not None:
            data["peak_mib"] = round(self.peak_bytes / 2**20, 1)
        if self.waiver is not None:
            data["waiver"] = self.waiver.to_dict()
        if self.must_refuse is not None:
            data["must_refuse"] = self.must_refuse
        if self.explanation is not None:
            data["explanation"] = self.explanation
        return data


@dataclass
class BackendResult:
    """All cases of a suite graded on one backend."""

    backend: str
    version: str
    suite_version: str
    content_hash: str
    date: str
    results: list[CaseResult] = field(default_factory=list)
    form: str = "upsample"
    #: the backend's settings (its options, defaults included)
    settings: dict[str, str] = field(default_factory=dict)
    #: the tolerance outputs were graded with (None: exact only)
    tolerance: str | None = None
    memory_limit: int | None = None
    #: what the report should say about how the run was graded (a waiver not applied...)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The backend's name, and the model form when it is not the Upsample models."""
        return self.backend if self.form == "upsample" else f"{self.backend} ({self.form})"

    def counts(self) -> dict[str, int]:
        """How many cases got each grade."""
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.grade.kind] = counts.get(result.grade.kind, 0) + 1
        return counts

    def verdicts(self) -> dict[str, int]:
        """How many cases got each verdict (grades, with waived failures apart)."""
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "version": self.version, "form": self.form,
                "settings": self.settings, "tolerance": self.tolerance,
                "memory_limit_mib": (None if self.memory_limit is None
                                     else round(self.memory_limit / 2**20)),
                "suite_version": self.suite_version, "content_hash": self.content_hash,
                "date": self.date, "counts": self.counts(), "verdicts": self.verdicts(),
                "notes": self.notes, "cases": [r.to_dict() for r in self.results]}


def _grade(case: SuiteCase, status: str, payload: Any, tolerance: Tolerance | None,
           expected: np.ndarray | None) -> tuple[Grade, np.ndarray | None]:
    """The grade of one answer against the case's checked ``expected`` output, and the
    output to explain when it is not exact."""
    must_refuse = case.must_refuse
    if status == "ok" and must_refuse is not None:
        return Grade(ACCEPTED_INVALID, f"returned {len(payload)} output(s) for a model that "
                                       f"must be refused ({must_refuse})"), None
    if status in (REFUSED, ERROR) and must_refuse is not None:
        return Grade(REFUSED_AS_REQUIRED, payload), None
    if status != "ok":
        return Grade(status, payload), None
    if len(payload) != 1:
        return Grade(WRONG_SHAPE, f"{len(payload)} outputs, expected 1"), None
    assert expected is not None, f"case {case.id} has no expected output"
    output = np.asarray(payload[0])
    grade = compare(expected, output, tolerance)
    if grade.kind == WRONG_DTYPE:
        # explain the values when they are wrong too, in the expected type
        converted = as_expected_type(expected, output)
        if converted is None or compare(expected, converted).kind == EXACT:
            return grade, None
        return grade, converted
    return grade, (output if grade.kind in (WRONG, WRONG_SHAPE, ULP1, CLOSE) else None)


def _explain(case: SuiteCase, x: np.ndarray, output: np.ndarray) -> dict[str, Any] | None:
    from ._explain import explain

    try:
        return explain(x, output, case.scales, case.mode).to_dict()
    except Exception as error:
        return {"verdict": "none", "summary": f"not explained ({type(error).__name__}: "
                                              f"{error})"}


def check_timeout(timeout: object) -> float:
    """``timeout`` (seconds one run may take in a runtime) as a float.

    Raises
    ------
    TypeError
        If it is not a number.
    UpsampleError
        If it is not finite and above 0 (worded for ``timeout=`` and ``--timeout``).
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"timeout is {timeout!r}; expected a number of seconds")
    if not (math.isfinite(timeout) and timeout > 0):
        raise spelled(lambda s: (
            f"{s.argument('timeout')} is {timeout:g}; give a finite number of seconds > 0"
            if s.options else
            f"timeout is {timeout!r}; expected a finite number of seconds > 0"))
    return float(timeout)


CaseSelection = str | Iterable[str] | Callable[[str], bool] | None


def select_cases(cases: CaseSelection, suite: Suite) -> Callable[[str], bool] | None:
    """The cases of ``suite`` that ``cases`` selects, as a predicate on case IDs (None:
    every case): the one reading of ``run(cases=...)`` and of ``conformance run --cases``.

    ``cases`` is a shell pattern (``'v9_*'``, matched as :func:`fnmatch.fnmatchcase` does:
    the whole ID, case-sensitive), several patterns (an ID matching any of them is
    selected; an ID is a pattern that matches itself), or a predicate on case IDs.

    Raises
    ------
    TypeError
        If ``cases`` is none of these.
    UpsampleError
        If a pattern matches no case of the suite (worded for ``cases=`` and ``--cases``).
    """
    if cases is None:
        return None
    if callable(cases):
        return cases
    expected = ("expected a shell pattern of case IDs such as 'v9_*', a list of them, or a "
                "function of a case ID")
    if isinstance(cases, bytes | bytearray) or not isinstance(cases, str | Iterable):
        raise TypeError(f"cases is {cases!r}; {expected}")
    patterns = [cases] if isinstance(cases, str) else list(cases)
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise TypeError(f"cases holds {pattern!r}; {expected}")
    ids = [case.id for case in suite.cases]
    if not patterns:
        raise UpsampleError("cases is empty; give at least one pattern, or None for every "
                            "case")
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(case_id, pattern) for case_id in ids):
            raise _matches_nothing(pattern, alone=isinstance(cases, str))
    return lambda case_id: any(fnmatch.fnmatchcase(case_id, p) for p in patterns)


def _matches_nothing(pattern: str, alone: bool) -> UpsampleError:
    def words(spelling: Spelling) -> str:
        name = spelling.argument("cases")
        which = f"{name} {pattern!r}" if alone else f"the pattern {pattern!r} of {name}"
        where = ("its manifest.json" if spelling.options
                 else "its manifest.json (or the suite's cases)")
        return f"{which} matches no case of the suite; see the IDs in {where}"

    return spelled(words)


#: Called with each graded case, its checked files (None where they had changed), its
#: result, its outputs (None when the runtime gave none) and the run so far: how a caller
#: keeps what it needs of a case (a replay directory) without the run holding every output.
CaseHook = Callable[[SuiteCase, "CaseFiles | None", CaseResult, "list[np.ndarray] | None",
                     "BackendResult"], None]


def _run_case(worker: Worker, case: SuiteCase, files: CaseFiles, folder: Path,
              timeout: float) -> Answer:
    """The worker's answer to ``case``: its model copied into ``folder`` (removed after),
    its inputs by the model's input names; a message that names the copy names the suite's
    model instead."""
    import onnx

    graph = onnx.load_model_from_string(files.model).graph
    initializers = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in initializers]
    copy = folder / case.path.name / "model.onnx"
    copy.parent.mkdir()
    copy.write_bytes(files.model)
    try:
        answer = worker.call(("model", str(copy), dict(zip(names, files.inputs, strict=True))),
                             timeout)
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    if isinstance(answer.payload, str):
        answer = replace(answer, payload=answer.payload.replace(
            str(copy), str(case.path / "model.onnx")))
    return answer


def grade_backend(spec: str, suite: Suite, *, timeout: float = 60.0,
                  select_ids: Callable[[str], bool] | None = None,
                  explain: bool = True, progress: Progress | None = None,
                  options: Mapping[str, str] | None = None,
                  tolerance: Tolerance | None = None, waivers: Sequence[Waiver] = (),
                  memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
                  on_case: CaseHook | None = None) -> BackendResult:
    """Run every case of ``suite`` in backend ``spec`` and grade the outputs (the suite's
    form, ``upsample`` or ``upgraded``, is the one it was loaded in); ``waivers`` are the
    user's, before the built-in ones that apply to the backend's runtime and version."""
    if not isinstance(spec, str):
        raise TypeError(f"backend is {spec!r}; expected a name such as 'onnxruntime'")
    check_timeout(timeout)
    check_options(spec, options or {})
    worker = Worker(spec, options, memory_limit=memory_limit)
    scratch: Path | None = None
    try:
        worker.start()
        result = BackendResult(worker.name, worker.version, suite.version, suite.content_hash,
                               datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
                               form=suite.form, settings=dict(worker.settings),
                               tolerance=None if tolerance is None else str(tolerance),
                               memory_limit=memory_limit)
        applied = [*waivers, *builtin_waivers(spec, worker.version, suite.form)]
        note = builtin_note(spec, worker.version)
        if note is not None:
            result.notes.append(note)

        def waiver(case: SuiteCase, grade: Grade) -> Waiver | None:
            return waiver_for(applied, case.id, case.ort, spec, grade.kind,
                              case.must_refuse is not None)
        cases = [c for c in suite.cases if select_ids is None or select_ids(c.id)]

        def crashed_after(message: str) -> None:
            # the worker answered the last case, then died: that case crashed
            last = result.results[-1]
            grade = Grade(CRASHED, message)
            result.results[-1] = replace(last, grade=grade, explanation=None,
                                         waiver=waiver(crashed_case[-1], grade))

        crashed_case: list[SuiteCase] = []  # the case last answered
        scratch = Path(tempfile.mkdtemp(prefix="onnx-upsample-cases-"))
        for done, case in enumerate(cases, 1):
            files: CaseFiles | None
            try:
                files = read_case(case)
            except UpsampleError as error:  # not the runtime's to grade, nor the grader's
                files, seconds = None, 0.0
                why = str(error).removeprefix(f"case {case.id}: ")
                answer = Answer(ADAPTER_ERROR, f"not run: {why}; something wrote into the "
                                "suite during the run (a runtime under test?): export it "
                                "again")
            else:
                started = time.perf_counter()
                answer = _run_case(worker, case, files, scratch, timeout)
                seconds = time.perf_counter() - started
            if answer.died_after_previous is not None and result.results:
                crashed_after(answer.died_after_previous)
            grade, to_explain = _grade(case, answer.status, answer.payload, tolerance,
                                       None if files is None else files.expected)
            explanation = (_explain(case, files.inputs[0], to_explain)
                           if explain and to_explain is not None and files is not None
                           else None)
            graded = CaseResult(case.id, case.group, case.mode, tuple(case.tags), case.ort,
                                grade, seconds, explanation, case.must_refuse,
                                waiver(case, grade), answer.peak_bytes)
            result.results.append(graded)
            crashed_case[:] = [case]
            if on_case is not None:
                on_case(case, files, graded,
                        answer.payload if answer.status == "ok" else None, result)
            if progress is not None:
                progress(done, len(cases), case.id, graded.verdict)
        died = worker.finish()
        if died is not None and result.results:
            crashed_after(died)
        return result
    finally:
        worker.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


__all__ = ["EXACT", "BackendResult", "CaseResult", "check_timeout", "grade_backend"]
