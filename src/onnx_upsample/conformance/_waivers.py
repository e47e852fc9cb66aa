"""Expected failures: the cases a runtime is known to fail, and why (stdlib only).

A waived case that fails is reported as ``waived``, with its reason, and does not fail the
run by default; a waived case that passes is reported as ``unexpected-pass`` (its waiver
may be out of date). Two sources:

- the built-in waiver of onnxruntime's documented differences and missing kernels
  (docs/semantics.md), which applies by runtime and version: to any backend that is
  onnxruntime (``onnxruntime`` or ``onnxruntime.backend``) at the versions whose
  behaviour the suite's ORT tags record, and to nothing else;
- the user's own file (``--expected-failures FILE``, ``expected_failures=``), one waiver a
  line::

      # case pattern     [options]                      reason
      v1_*                                             our runtime has no Upsample-1
      v9_linear_int*     grades=wrong                  rounds integer results half to even
      rank6_*            backend=tract grades=refused  no rank 6 in tract

  The first word is a shell pattern of case IDs (it must match a case of the suite); then,
  optionally, ``grades=KIND,...`` (only those grades are waived: another failure still
  fails) and ``backend=NAME`` (only that backend, as ``--backend`` names it); the rest of
  the line is the reason, which is required. ``#`` starts a comment line.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .._errors import UpsampleError
from ._grade import (
    ACCEPTED_INVALID,
    ERROR,
    FAILURES,
    GRADES,
    PASSES,
    REFUSED,
    ULP1,
    WRONG,
    WRONG_DTYPE,
    WRONG_SHAPE,
)

#: The verdicts a waiver gives, besides the grades.
WAIVED, UNEXPECTED_PASS = "waived", "unexpected-pass"
VERDICT_WORDS = {WAIVED: "waived", UNEXPECTED_PASS: "passed, though expected to fail"}

#: The runtime whose documented behaviour the built-in waiver records, and its versions:
#: the ones the suite's ORT tags were measured with (the test oracle's pin).
ORT_RUNTIME, ORT_VERSIONS = "onnxruntime", "1.32"

# what a package's top module says about which runtime a custom backend is
_RUNTIME_PACKAGES = {"onnxruntime": ORT_RUNTIME}


@dataclass(frozen=True)
class Waiver:
    """One expected failure: the cases (``pattern`` of IDs, and for the built-in waiver the
    case's ORT tag ``ort``), the grades it waives (empty: every failing grade), the backend
    it is for (None: every one), the reason and where it was written."""

    pattern: str
    reason: str
    source: str
    grades: tuple[str, ...] = ()
    backend: str | None = None
    ort: str | None = None
    #: only about valid models: an invalid model that a runtime refuses passes, so a waiver
    #: of its refusals is not about it
    valid_only: bool = False
    #: whether a pass of a case it covers is reported as unexpected (False where the waiver
    #: only may apply: the built-in one on the upgraded models, whose passes the upgrade
    #: brings)
    strict: bool = True

    def covers(self, case_id: str, ort_tag: str, backend: str, invalid: bool = False) -> bool:
        """Whether this waiver is about the case (whatever its grade)."""
        return (fnmatch.fnmatchcase(case_id, self.pattern)
                and not (self.valid_only and invalid)
                and (self.ort is None or self.ort == ort_tag)
                and (self.backend is None or self.backend == backend))

    def waives(self, grade: str) -> bool:
        """Whether a case it covers, graded ``grade``, fails as expected."""
        return grade not in PASSES and (not self.grades or grade in self.grades)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"pattern": self.pattern, "reason": self.reason,
                                   "source": self.source}
        if self.grades:
            data["grades"] = list(self.grades)
        if self.backend is not None:
            data["backend"] = self.backend
        return data


BUILTIN_SOURCE = f"built-in, for {ORT_RUNTIME} {ORT_VERSIONS}.x"


def _builtin() -> tuple[Waiver, ...]:
    return (
        Waiver("*", f"a documented difference of {ORT_RUNTIME} {ORT_VERSIONS} (see "
               "docs/semantics.md)", BUILTIN_SOURCE, (WRONG, WRONG_SHAPE, WRONG_DTYPE, ULP1),
               ort="differs", valid_only=True),
        Waiver("refuse_mode_cubic", f"{ORT_RUNTIME} {ORT_VERSIONS} runs mode 'cubic' in "
               "Upsample, outside the spec (see docs/semantics.md)", BUILTIN_SOURCE,
               (ACCEPTED_INVALID,)),
        # where onnxruntime has no kernel it refuses, or fails on its own inserted Cast
        Waiver("*", f"{ORT_RUNTIME} {ORT_VERSIONS} has no kernel for it (see "
               "docs/semantics.md)",
               BUILTIN_SOURCE, (REFUSED, ERROR), ort="refuses", valid_only=True),
    )


def runtime_of(backend: str) -> str:
    """The runtime a backend is: a built-in name, or a custom backend's package when it is a
    known runtime's own (``onnxruntime.backend`` is onnxruntime), else the name itself."""
    top = backend.partition(":")[0].split(".")[0]
    return _RUNTIME_PACKAGES.get(top, backend)


def builtin_waivers(backend: str, version: str, form: str = "upsample") -> tuple[Waiver, ...]:
    """The built-in waivers that apply to ``backend`` at ``version``: onnxruntime's, at the
    versions the suite records; none for any other runtime or version. On the upgraded
    Resize models (``form``) they waive the same failures where they remain, and a pass
    there is no surprise: it is what the upgrade is for."""
    if runtime_of(backend) != ORT_RUNTIME:
        return ()
    if version != ORT_VERSIONS and not version.startswith(ORT_VERSIONS + "."):
        return ()
    return tuple(w if form == "upsample" else replace(w, strict=False) for w in _builtin())


def builtin_note(backend: str, version: str) -> str | None:
    """Why onnxruntime's built-in waiver does not apply to this version, if it does not."""
    if runtime_of(backend) == ORT_RUNTIME and not builtin_waivers(backend, version):
        return (f"{ORT_RUNTIME} {version}: the built-in waiver of {ORT_RUNTIME}'s documented "
                f"differences is for {ORT_VERSIONS}.x, whose behaviour the suite records; "
                "not applied")
    return None


def _error(where: str, words: str) -> UpsampleError:
    return UpsampleError(f"expected failures {where}: {words}")


def read_waivers(path: str | os.PathLike[str], case_ids: Iterable[str]) -> list[Waiver]:
    """The waivers of a file (format in the module's docstring), each pattern checked
    against the suite's case IDs: one that matches no case is an error (a typo would
    otherwise waive nothing)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")  # a byte-order mark, as Notepad writes
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise UpsampleError(f"expected failures {str(path)!r} cannot be read ({reason}); "
                            "give a text file, one 'PATTERN [grades=..] [backend=..] "
                            "REASON' a line") from None
    ids = list(case_ids)
    waivers = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"{path}:{number}"
        pattern, options, rest = words[0], {}, words[1:]
        while rest and rest[0].partition("=")[0] in ("grades", "backend") and "=" in rest[0]:
            key, _, value = rest.pop(0).partition("=")
            if key in options or not value:
                raise _error(where, f"{key}= is given twice or empty; give it once, e.g. "
                             f"{key}={'wrong,refused' if key == 'grades' else 'onnxruntime'}")
            options[key] = value
        if not rest:
            raise _error(where, f"{pattern!r} has no reason; write why it is expected to "
                         "fail after the pattern (and any grades=/backend=)")
        grades = tuple(g for g in options.get("grades", "").split(",") if g)
        for grade in grades:
            if grade not in FAILURES:
                raise _error(where, f"grades= names {grade!r}, which is not a failing grade;"
                             f" give a comma list of {', '.join(FAILURES)}")
        if not any(fnmatch.fnmatchcase(case_id, pattern) for case_id in ids):
            raise _error(where, f"the pattern {pattern!r} matches no case of the suite; see "
                         "the IDs in its manifest.json")
        waivers.append(Waiver(pattern, " ".join(rest), where, grades,
                              options.get("backend")))
    return waivers


def waiver_for(waivers: Iterable[Waiver], case_id: str, ort_tag: str, backend: str,
               grade: str, invalid: bool = False) -> Waiver | None:
    """The waiver of this case (``invalid``: a model that must be refused) for this backend,
    graded ``grade``: the first that waives that grade, else the first about the case (which
    then makes a pass an unexpected one, or leaves a failure it does not waive failing). The
    user's come first."""
    about = [w for w in waivers if w.covers(case_id, ort_tag, backend, invalid)]
    return next((w for w in about if w.waives(grade)), about[0] if about else None)


def check_backends(waivers: Iterable[Waiver], backends: Iterable[str]) -> None:
    """A waiver for a backend this run does not grade is a typo that would waive nothing."""
    names = list(backends)
    for waiver in waivers:
        if waiver.backend is not None and waiver.backend not in names:
            raise _error(waiver.source, f"backend={waiver.backend} names no backend of this "
                         f"run ({', '.join(names)}); give one of them, as --backend names it")


def verdict_of(grade: str, waiver: Waiver | None) -> str:
    """A case's verdict: its grade, ``waived`` when its waiver expects that failure, or
    ``unexpected-pass`` when a waived case passed."""
    if waiver is None:
        return grade
    if grade in PASSES:
        return UNEXPECTED_PASS if waiver.strict else grade
    return WAIVED if waiver.waives(grade) else grade


#: Every verdict kind ``--fail-on`` takes: the grades, then the waivers' own.
VERDICTS = (*GRADES, WAIVED, UNEXPECTED_PASS)
