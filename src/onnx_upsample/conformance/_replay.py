"""Failing cases kept for replay: one directory each, with what reproduces it.

``conformance run --failures-dir DIR`` writes, for every case whose verdict fails the run,
``DIR/<backend>/<case ID>/``: the case's ``model.onnx``, its inputs (``input_0.npy``...),
the expected output (``expected.npy``), what the runtime returned (``actual_0.npy``..., when
it returned anything), ``result.json`` (grade, detail, explanation, time, peak memory), and
``replay.txt``: the one command that runs that case again in that backend, with the same
settings. ``DIR/index.json`` lists them. The directory appears whole when the run ends
(written beside it, then renamed), so an interrupted run leaves no half of one.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._runner import BackendResult, CaseResult
from ._suite import CaseFiles, SuiteCase

#: The file that marks a directory as written by this module (so that it may be replaced).
INDEX = "index.json"


def is_failures_dir(path: Path) -> bool:
    """Whether ``path`` is a directory an earlier run wrote (which a new one may replace)."""
    return (path / INDEX).is_file()


def replaceable(path: Path) -> bool:
    """Whether a run may replace directory ``path`` with its failures: one an earlier run
    wrote, or an empty one (which CI often makes for its artifacts beforehand)."""
    return is_failures_dir(path) or (path.is_dir() and not any(path.iterdir()))


def _safe(name: str) -> str:
    """A backend's label as one folder name (``package.module:callable`` has a colon)."""
    return re.sub(r"[^\w.+-]+", "_", name).strip("_") or "backend"


class FailureWriter:
    """The hook (``grade_backend``'s ``on_case``) that writes each failing case's directory
    under ``root``; ``command`` is the replay command's words before ``--cases ID``."""

    def __init__(self, root: str, fail_on: Sequence[str],
                 command: dict[str, list[str]]) -> None:
        self.root = Path(root)
        self.fail_on = set(fail_on)
        self.command = command
        self.written: dict[tuple[str, str], dict[str, Any]] = {}
        # each run's last case: the one its worker may die after answering, graded again
        self.last: dict[str, tuple[SuiteCase, CaseFiles | None]] = {}

    def __call__(self, case: SuiteCase, files: CaseFiles | None, result: CaseResult,
                 outputs: list[Any] | None, run: BackendResult) -> None:
        self._settle(run, run.results[:-1])
        self.last[run.label] = (case, files)
        if result.verdict in self.fail_on:
            self._write(case, files, result, outputs, run)

    def _settle(self, run: BackendResult, results: Sequence[CaseResult]) -> None:
        """The run's previous last case, graded again since its hook ran (its worker died
        after answering it): its final result, and its directory if it now fails (without
        outputs: the ones it answered were not kept)."""
        if not results or run.label not in self.last:
            return
        case, files = self.last.pop(run.label)
        final = results[-1]
        if final.id != case.id:
            return
        entry = self.written.get((run.label, case.id))
        if entry is not None and entry["verdict"] != final.verdict:
            entry["verdict"] = final.verdict
            self._result(self.root / entry["folder"], final, run, entry["replay"])
        elif entry is None and final.verdict in self.fail_on:
            self._write(case, files, final, None, run)

    def _write(self, case: SuiteCase, files: CaseFiles | None, result: CaseResult,
               outputs: list[Any] | None, run: BackendResult) -> None:
        """The case's directory: the files the grader checked and ran (none where they had
        changed in the suite: the case was not run)."""
        label = run.label
        folder = self.root / _safe(label) / case.id
        folder.mkdir(parents=True)
        if files is not None:
            (folder / "model.onnx").write_bytes(files.model)
            for index, array in enumerate(files.inputs):
                np.save(folder / f"input_{index}.npy", array, allow_pickle=False)
            if files.expected is not None:
                np.save(folder / "expected.npy", files.expected, allow_pickle=False)
        for index, array in enumerate(outputs or []):
            value = np.asarray(array)
            np.save(folder / f"actual_{index}.npy", value, allow_pickle=value.dtype.kind == "O")
        replay = shlex.join([*self.command[label], "--cases", case.id])
        (folder / "replay.txt").write_text(replay + "\n")
        self._result(folder, result, run, replay)
        self.written[(label, case.id)] = {"backend": label, "id": case.id,
                                          "verdict": result.verdict,
                                          "folder": str(folder.relative_to(self.root)),
                                          "replay": replay}

    @staticmethod
    def _result(folder: Path, result: CaseResult, run: BackendResult, replay: str) -> None:
        (folder / "result.json").write_text(json.dumps(
            {"backend": run.label, "version": run.version, "settings": run.settings,
             **result.to_dict(), "replay": replay}, indent=1, default=str) + "\n")

    def finish(self, runs: Sequence[BackendResult]) -> None:
        """After the runs: each one's last case settled (see :meth:`_settle`), then the
        index."""
        for run in runs:
            self._settle(run, run.results)
        (self.root / INDEX).write_text(
            json.dumps({"failures": list(self.written.values())}, indent=1) + "\n")
