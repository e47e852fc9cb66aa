"""The checks every case passes before the suite is written: the expected output against the
slow reference, the model through onnx's ReferenceEvaluator, onnxruntime where installed, and
for the cases that must be refused, that each of these refuses them.

The reference computes one element at a time in Python: it checks every element of outputs
up to :data:`FULL_REFERENCE_LIMIT` elements, and a deterministic sample of the larger ones
(every axis' first, second, last and next-to-last index, the indices around 2**24 on an axis
that long, and random positions), so that the full export takes seconds, not a quarter of
an hour. Every element of every output is still checked by the model run (onnx's
ReferenceEvaluator with onnx-upsample's operator) and, where it runs the case, onnxruntime.
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .._errors import UpsampleError
from .._spec.modes import ModeName
from ._cases import ORT_DIFFERS, ORT_EXACT, ORT_MEASURED, ORT_REFUSES, Case
from ._grade import compare, same_bits

__all__ = ["FULL_REFERENCE_LIMIT", "OrtCheck", "evaluate_model", "expected_output",
           "refusals"]

# Outputs up to this many elements are compared with the reference in full (a second or
# two each); larger ones on REFERENCE_SAMPLE positions and the axes' edges.
FULL_REFERENCE_LIMIT = 200_000
REFERENCE_SAMPLE = 20_000
_EXACT_BELOW = 2**24  # float32 holds every integer below this: index rules change there


@dataclass
class OrtCheck:
    """onnxruntime, when installed, and what it said of each case."""

    version: str | None
    strict: bool
    notes: list[str]  # a case whose ORT tag did not hold (installed ORT is not 1.32)
    # what ORT does with the must-refuse cases and the upgraded models: facts about ORT,
    # recorded apart from the notes (which say whether the suite's own tags hold)
    findings: list[str] = field(default_factory=list)
    upgraded_refusals: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def start(cls, use: bool) -> OrtCheck:
        version = None
        if use:
            try:
                import onnxruntime

                version = str(onnxruntime.__version__)
            except ImportError:
                version = None
        strict = version is not None and version.startswith(ORT_MEASURED + ".")
        return cls(version, strict, [])

    def run(self, model: bytes, feeds: list[np.ndarray]) -> np.ndarray:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        session = onnxruntime.InferenceSession(model, options,
                                               providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return np.asarray(session.run(None, dict(zip(names, feeds, strict=True)))[0])

    def outcome(self, model: bytes, feeds: list[np.ndarray]) -> tuple[np.ndarray | None, str]:
        """ORT's output, or None and the first line of its refusal."""
        try:
            return self.run(model, feeds), ""
        except Exception as error:
            return None, str(error).splitlines()[0][:200]

    def check(self, case: Case, model: bytes, feeds: list[np.ndarray],
              expected: np.ndarray | None) -> None:
        if self.version is None:
            return
        got, refusal = self.outcome(model, feeds)
        if case.must_refuse is not None:
            # a runtime that runs an invalid node is a finding about the runtime, never a
            # reason not to write the suite
            if got is not None:
                self.findings.append(f"case {case.id}: onnxruntime {self.version} runs it, but "
                                  f"it must be refused ({case.must_refuse})")
            return
        assert expected is not None
        if case.ort == ORT_REFUSES:
            problem = None if got is None else "ORT ran it, but the case says it refuses"
        elif got is None:
            problem = f"ORT refused it: {refusal}"
        elif case.ort == ORT_EXACT:
            grade = compare(expected, got)
            problem = None if grade.kind == "exact" else f"ORT gives {grade.detail}"
        else:  # ORT_DIFFERS
            problem = ("ORT matches it bit for bit, but the case documents a difference"
                       if same_bits(expected, got) else None)
        if problem is None:
            return
        message = (f"case {case.id}: {problem} (tags measured with onnxruntime {ORT_MEASURED} "
                   "on x86-64)")
        # a documented difference may not show on every CPU (int32 wrap-around is x86's
        # conversion; ARM saturates): a note, never a refusal to export
        if self.strict and case.ort != ORT_DIFFERS:
            raise UpsampleError(f"{message}; the suite was not written")
        self.notes.append(f"{message}; installed: onnxruntime {self.version}")

    def check_upgraded(self, case: Case, model: bytes, feeds: list[np.ndarray],
                       expected: np.ndarray) -> None:
        """The upgraded Resize model on ORT: a difference is noted (ORT's Resize is another
        kernel than its Upsample, with its own types and limits)."""
        if self.version is None:
            return
        got, refusal = self.outcome(model, feeds)
        if got is None:
            # one line per reason: ORT's Resize refuses whole element types
            self.upgraded_refusals.setdefault(refusal, []).append(case.id)
        elif case.ort != ORT_DIFFERS and not same_bits(expected, got):
            # (a documented difference of ORT's Upsample shows in its Resize too)
            self.findings.append(f"upgraded case {case.id}: onnxruntime {self.version} "
                                 f"gives {compare(expected, got).detail}")

    def all_findings(self) -> list[str]:
        """The findings, then one line per reason ORT gave for refusing upgraded models."""
        return self.findings + [
            f"upgraded cases {', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''} "
            f"({len(ids)}): onnxruntime {self.version} refuses the Resize model: {reason}"
            for reason, ids in self.upgraded_refusals.items()]


def evaluate_model(model: Any, feeds: list[np.ndarray]) -> np.ndarray:
    """The case's model run by onnx's ReferenceEvaluator with onnx-upsample's operator."""
    from onnx.reference import ReferenceEvaluator

    from ..onnx import Upsample

    evaluator = ReferenceEvaluator(model, new_ops=[Upsample])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v10 and 'bilinear' warn by design
        names = list(evaluator.input_names)
        outputs: list[Any] = list(evaluator.run(None, dict(zip(names, feeds, strict=True))))
    return np.asarray(outputs[0])


def expected_output(case: Case, x: np.ndarray) -> np.ndarray:
    """The expected output of ``case``: onnx-upsample's kernel, checked against the
    reference (bit for bit; a sample of the elements beyond FULL_REFERENCE_LIMIT)."""
    from .. import reference, upsample

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = upsample(x, case.scales, cast("ModeName", case.mode))
        if ours.size <= FULL_REFERENCE_LIMIT:
            slow = reference.upsample(x, case.scales, case.mode)
            if not same_bits(ours, slow):
                raise UpsampleError(f"case {case.id}: the kernel and the reference disagree "
                                    f"({compare(slow, ours).detail}); the suite was not "
                                    "written")
            return ours
    _check_sample(case, x, ours)
    return ours


def _sample_positions(case: Case, shape: tuple[int, ...]) -> np.ndarray:
    """Output positions (rows of indices) to check: random ones and each axis' edges."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    rows = [np.stack([rng.integers(0, n, REFERENCE_SAMPLE) for n in shape], axis=1)]
    for axis, n in enumerate(shape):
        special = {0, 1, n - 2, n - 1}
        if n > _EXACT_BELOW:
            special |= set(range(_EXACT_BELOW - 3, _EXACT_BELOW + 4))
        for index in sorted(i for i in special if 0 <= i < n):
            row = np.stack([rng.integers(0, m, 16) for m in shape], axis=1)
            row[:, axis] = index
            rows.append(row)
    return np.concatenate(rows)


def _check_sample(case: Case, x: np.ndarray, ours: np.ndarray) -> None:
    from .. import reference

    scales = [np.float32(s) for s in case.scales]
    shape = tuple(reference.output_length(n, s) for n, s in zip(x.shape, scales, strict=True))
    if shape != ours.shape or ours.shape == x.shape:  # large cases always resize
        raise UpsampleError(f"case {case.id}: output shape {ours.shape}, the reference's "
                            f"{shape}; the suite was not written")
    for position in _sample_positions(case, shape):
        o = tuple(int(i) for i in position)
        with np.errstate(all="ignore"):
            if case.mode == "nearest":
                value = x[tuple(reference.nearest_index(o[a], x.shape[a], scales[a])
                                for a in range(len(o)))]
            else:
                value = reference._linear_element(x, o, scales)
        slow = np.asarray(value, dtype=ours.dtype)
        if not same_bits(ours[o].reshape(1), slow.reshape(1)):
            raise UpsampleError(f"case {case.id}: the kernel and the reference disagree at "
                                f"{list(o)} ({ours[o]!r}, the reference {value!r}); the suite "
                                "was not written")


def refusals(case: Case, model: Any, feeds: list[np.ndarray], x: np.ndarray) -> None:
    """Check that onnx-upsample's kernel and the model run refuse a must-refuse case."""
    from .. import upsample

    assert case.must_refuse is not None
    mode = cast("ModeName", case.mode)  # a must-refuse case's mode may be any string
    for who, attempt in (("onnx-upsample's kernel", lambda: upsample(x, case.scales, mode)),
                         ("the model run", lambda: evaluate_model(model, feeds))):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                attempt()
        except Exception:  # any refusal will do: onnx wraps the operator's error its own way
            continue
        raise UpsampleError(f"case {case.id}: {who} runs it, but it must be refused "
                            f"({case.must_refuse}); the suite was not written")
