"""Grading a runtime on the suite: one isolated worker process per backend.

The worker is restarted after a crash or a timeout, so one bad case costs only itself.
Every output that is not exact goes through the explainer, which names the convention that
reproduces it.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from ._grade import CRASHED, EXACT, REFUSED, TIMEOUT, ULP1, WRONG, WRONG_SHAPE, Grade, compare
from ._protocol import CLOSED, read, send
from ._suite import Suite, SuiteCase

#: Seconds a worker may take to import and set up its runtime.
START_TIMEOUT = 180.0

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

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "group": self.group, "grade": self.grade.kind,
                                **self.grade.to_dict(), "seconds": round(self.seconds, 4)}
        data.pop("kind")
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

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.grade.kind] = counts.get(result.grade.kind, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "version": self.version,
                "suite_version": self.suite_version, "content_hash": self.content_hash,
                "date": self.date, "counts": self.counts(),
                "cases": [r.to_dict() for r in self.results]}


class _Worker:
    """One worker process, started on demand and replaced after a crash or timeout."""

    def __init__(self, spec: str) -> None:
        if os.name != "posix":  # pragma: no cover - select() on pipes, process groups
            raise UpsampleError("conformance run needs a POSIX system (Linux or macOS) for "
                                "its worker processes")
        self.spec = spec
        self.process: subprocess.Popen[bytes] | None = None
        self.errors = tempfile.TemporaryFile()
        self.name, self.version = spec, "unknown"

    def start(self) -> None:
        self.errors.seek(0)
        self.errors.truncate()
        # PYTHONSAFEPATH: the current directory (an onnx source checkout, say) must not
        # shadow the installed packages in the worker
        environment = {**os.environ, "PYTHONSAFEPATH": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "onnx_upsample.conformance._worker", self.spec],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
            start_new_session=True, env=environment)
        reply = self._read(START_TIMEOUT)
        if not (isinstance(reply, tuple) and reply[0] == "ready"):
            self.stop()
            message = reply[1] if isinstance(reply, tuple) else (
                f"backend {self.spec!r}: its worker did not start ({self._last_words()})")
            raise UpsampleError(message)
        _, self.name, self.version = reply

    def _read(self, timeout: float) -> Any:
        assert self.process is not None and self.process.stdout is not None
        try:
            return read(self.process.stdout.fileno(), timeout)
        except Exception as error:  # an answer that cannot be unpickled
            return ("unreadable", f"its answer could not be read ({type(error).__name__}: "
                                  f"{error})")

    def call(self, case_dir: str, timeout: float) -> tuple[str, Any]:
        if self.process is None or self.process.poll() is not None:
            try:
                self.start()
            except UpsampleError as error:  # it started before: grade this case, go on
                return CRASHED, f"the worker did not restart: {error}"
        assert self.process is not None and self.process.stdin is not None
        try:
            send(self.process.stdin, case_dir)  # type: ignore[arg-type]
        except OSError:
            return self._died()
        reply = self._read(timeout)
        if reply is CLOSED:
            return self._died()
        if reply is None:
            self.stop()
            return TIMEOUT, f"no answer within {timeout:g} s (worker stopped)"
        if reply[0] == "unreadable":
            self.stop()
            return CRASHED, reply[1]
        if reply[0] == "harness":
            raise UpsampleError(f"case {Path(case_dir).name}: {reply[1]}; export the suite "
                                "again")
        return reply

    def _died(self) -> tuple[str, str]:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # closed its output but lingers: stop it
            self.stop()
            return CRASHED, "closed its output and did not exit (worker stopped)"
        self.stop()
        how = (f"killed by signal {signal.Signals(-code).name}" if code < 0
               else f"exited with status {code}")
        return CRASHED, f"{how}; {self._last_words()}"

    def _last_words(self) -> str:
        self.errors.seek(0)
        lines = [line for line in self.errors.read().decode("utf-8", "replace").splitlines()
                 if line.strip()]
        return lines[-1][:200] if lines else "it printed nothing"

    def stop(self) -> None:
        """Stop the worker and everything it started (its process group)."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process = None

    def close(self) -> None:
        self.stop()
        self.errors.close()


def _explain(case: SuiteCase, output: np.ndarray) -> dict[str, Any] | None:
    from ._explain import explain

    try:
        return explain(case.inputs()[0], output, case.scales, case.mode).to_dict()
    except Exception as error:
        return {"verdict": "none", "summary": f"not explained ({type(error).__name__}: "
                                              f"{error})"}


def grade_backend(spec: str, suite: Suite, *, timeout: float = 60.0,
                  select_ids: Callable[[str], bool] | None = None,
                  explain: bool = True, progress: Progress | None = None) -> BackendResult:
    """Run every case of ``suite`` in backend ``spec`` and grade the outputs."""
    if not isinstance(spec, str):
        raise TypeError(f"backend is {spec!r}; expected a name such as 'onnxruntime'")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"timeout is {timeout!r}; expected a number of seconds")
    if not (math.isfinite(timeout) and timeout > 0):
        raise UpsampleError(f"timeout is {timeout!r}; expected a finite number of seconds > 0")
    worker = _Worker(spec)
    try:
        worker.start()
        result = BackendResult(worker.name, worker.version, suite.version, suite.content_hash,
                               datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"))
        cases = [c for c in suite.cases if select_ids is None or select_ids(c.id)]
        for done, case in enumerate(cases, 1):
            started = time.perf_counter()
            status, payload = worker.call(str(case.path), timeout)
            seconds = time.perf_counter() - started
            explanation = None
            if status == "ok":
                outputs = payload
                if len(outputs) != 1:
                    grade = Grade(WRONG_SHAPE, f"{len(outputs)} outputs, expected 1")
                else:
                    grade = compare(case.expected(), outputs[0])
                    if explain and grade.kind in (WRONG, WRONG_SHAPE, ULP1):
                        explanation = _explain(case, np.asarray(outputs[0]))
            elif status == "error":
                grade = Grade(REFUSED, payload)
            else:
                grade = Grade(status, payload)
            result.results.append(CaseResult(case.id, case.group, case.mode,
                                             tuple(case.tags), case.ort, grade, seconds,
                                             explanation))
            if progress is not None:
                progress(done, len(cases), case.id, grade.kind)
        return result
    finally:
        worker.close()


__all__ = ["EXACT", "BackendResult", "CaseResult", "grade_backend"]
