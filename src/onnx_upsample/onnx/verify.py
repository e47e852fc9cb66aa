"""Verification: run an original and its conversion in onnxruntime on the same inputs and
compare the outputs bit for bit.

The original may be a model onnxruntime does not load as it is: Upsample-1 and Upsample-10
(onnxruntime has no kernel for them), a form that does not match the model's opset, or
modes written in the upper case of old converters. :func:`runnable_original` gives the form
it runs in (the equivalent opset-7 or opset-9 model written by ``downgrade()``, or
onnx-upsample's own evaluator for the upper-case modes) and says so; :func:`compare` runs
both on the inputs it is given and reports, per output, the largest difference and whether
the bits are identical.

onnxruntime is imported on first use only (:func:`import_onnxruntime`): this module loads
without it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import onnx

from .._errors import UpsampleError, UpsampleWarning
from ._check import check
from ._graphs import default_opset, is_upsample, walk
from ._node import case_variant
from .convert import downgrade

__all__ = [
    "OutputDifference",
    "RunnableOriginal",
    "bits_equal",
    "compare",
    "default_level_note",
    "differing_elements",
    "import_onnxruntime",
    "largest_difference",
    "runnable_original",
]


def import_onnxruntime() -> ModuleType:
    """onnxruntime, imported now.

    Returns
    -------
    module
        The ``onnxruntime`` module.

    Raises
    ------
    ImportError
        If onnxruntime is not installed (or fails to load); callers word the fix.
    """
    import onnxruntime

    return onnxruntime


@dataclass(frozen=True)
class RunnableOriginal:
    """The original model in the form it runs in, for a verification.

    Attributes
    ----------
    model : onnx.ModelProto
        The model to run: the original itself, or the equivalent model written by
        ``downgrade()`` where onnxruntime cannot load the original.
    note : str
        One line saying how the original runs where that is not plainly in onnxruntime;
        empty otherwise.
    legacy_modes : bool
        True if the original writes Upsample modes in upper or mixed case ('NEAREST'),
        which onnxruntime refuses: it then runs in onnx-upsample's evaluator
        (``legacy_modes=True``) instead of onnxruntime.
    """

    model: onnx.ModelProto
    note: str
    legacy_modes: bool


@dataclass(frozen=True)
class OutputDifference:
    """How one output of the conversion compares with the original's.

    Attributes
    ----------
    name : str
        The output's name (the converted model's).
    shape : tuple of int
        The converted model's output shape.
    largest : float
        The largest absolute difference (0 where both are NaN; inf for another shape or,
        on values that are not numbers, any difference).
    identical : bool
        True if both outputs have the same shape, element type and bytes.
    differing : int
        How many elements differ in their bytes (all of them for another shape or type).
    size : int
        How many elements the converted output has.
    """

    name: str
    shape: tuple[int, ...]
    largest: float
    identical: bool
    differing: int = 0
    size: int = 0

    def describe(self) -> str:
        """``output 'Y': 12 of 8192 elements differ, largest difference 4.77e-07``."""
        return (f"output {self.name!r}: {self.differing} of {self.size} element(s) differ, "
                f"largest difference {self.largest:.3g}")


def _has_mode_case_variants(model: onnx.ModelProto) -> bool:
    """True if an Upsample writes its mode in upper or mixed case ('NEAREST')."""
    return any(
        attribute.name == "mode" and case_variant(attribute.s.decode("utf-8", "replace"))
        for site in walk(model) for node in site.owner.node if is_upsample(node)
        for attribute in node.attribute
    )


def _onnxruntime_form(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """The original in a form onnxruntime loads (opset 7 or 9 Upsample), and how it was made."""
    if not any(is_upsample(node) for site in walk(model) for node in site.owner.node):
        return model, ""
    opset = default_opset(model.opset_import) or 9
    codes = {finding.code for finding in check(model)}
    if opset <= 6:
        target = 7
    elif opset >= 10:
        target = 9
    elif codes & {"form-opset", "mode"}:
        target = opset
    else:
        return model, ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        rewritten = downgrade(model, opset=target)
    note = (f"onnxruntime cannot load the original (opset {opset}); it runs as the equivalent "
            f"opset-{target} Upsample model that downgrade writes")
    return rewritten, note


def runnable_original(model: onnx.ModelProto) -> RunnableOriginal:
    """The form in which ``model`` runs for a verification, and a note on how it was made.

    Parameters
    ----------
    model : onnx.ModelProto
        The original; it is not modified.

    Returns
    -------
    RunnableOriginal
        ``model`` itself where onnxruntime loads it; the equivalent opset-7 or opset-9
        Upsample model (``downgrade()``) where it holds Upsample-1 or Upsample-10 or forms
        its opset does not have; ``model`` with ``legacy_modes`` set where it writes modes
        in upper or mixed case.

    Raises
    ------
    UpsampleError
        If ``downgrade()`` cannot write the equivalent model.
    """
    if _has_mode_case_variants(model):
        return RunnableOriginal(
            model, "the original writes modes in upper or mixed case, which onnxruntime "
            "refuses: it runs in onnx-upsample's evaluator (legacy_modes), the upgrade in "
            "onnxruntime", legacy_modes=True)
    rewritten, note = _onnxruntime_form(model)
    return RunnableOriginal(rewritten, note, legacy_modes=False)


# Where the bits of a conversion are compared. At its default level (ORT_ENABLE_ALL)
# onnxruntime adds the NCHWc layout optimization (x86), which runs a Resize after a Conv as
# com.microsoft.nchwc's Upsample kernel but leaves an Upsample-7 (scales attribute) to the
# standard one, so linear results differ in the last bit although the rewrite itself is
# exact; the level below keeps constant folding and node fusions.
EXACT_LEVEL = "ORT_ENABLE_EXTENDED"
DEFAULT_LEVEL = "ORT_ENABLE_ALL"


def _session(model: onnx.ModelProto, which: str, level: str = EXACT_LEVEL) -> Any:
    """An onnxruntime CPU session of ``model`` at optimization ``level``; UpsampleError (one
    line) if ORT refuses it."""
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    # errors come back as one line of ours; ORT's own log would print them again, in colour
    options.log_severity_level = 4
    ort.set_default_logger_severity(4)
    try:
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:
        first = str(error).strip().splitlines()[0]
        raise UpsampleError(f"onnxruntime cannot load the {which} model: {first}") from None


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` have the same shape, element type and bytes.

    Bytes, not values: NaN payloads and the sign of zero count. Arrays of objects or
    strings compare by value.
    """
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OUS":
        return bool(np.array_equal(a, b))
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                               np.ascontiguousarray(b).view(np.uint8)))


def differing_elements(a: np.ndarray, b: np.ndarray) -> int:
    """How many elements of ``a`` and ``b`` differ in their bytes (NaN payloads and the
    sign of zero count); ``b.size`` for another shape or element type."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return int(b.size)
    if a.dtype.kind in "OUS":
        return int(np.count_nonzero(a != b))
    raw = np.dtype(f"V{a.dtype.itemsize}")
    return int(np.count_nonzero(np.ascontiguousarray(a).view(raw)
                                != np.ascontiguousarray(b).view(raw)))


def largest_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest absolute difference between ``a`` and ``b``, computed in float64.

    NaN against NaN counts as 0 and NaN against a number as inf; another shape is inf;
    arrays that are not numbers (or empty) give 0 if equal, else inf.
    """
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0 or a.dtype.kind not in "biufc":
        return 0.0 if np.array_equal(a, b) else float("inf")
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    same_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    diff = np.where(same_nan, 0.0, diff)
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))


def _run_original(original: RunnableOriginal, feeds: dict[str, np.ndarray], label: str,
                  level: str) -> list[Any]:
    if original.legacy_modes:
        # ORT refuses the original's modes: it runs in onnx-upsample's evaluator instead
        from ._evaluator import reference_evaluator

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UpsampleWarning)
            return list(reference_evaluator(original.model, legacy_modes=True).run(None, feeds))
    return list(_session(original.model, label, level).run(None, feeds))


def _differences(converted: onnx.ModelProto, before: Sequence[Any],
                 after: Sequence[Any]) -> list[OutputDifference]:
    rows = []
    names = [value.name for value in converted.graph.output]
    for name, a, b in zip(names, before, after, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        rows.append(OutputDifference(name, tuple(b.shape), largest_difference(a, b),
                                     bits_equal(a, b), differing_elements(a, b), int(b.size)))
    return rows


def compare(original: RunnableOriginal, converted: onnx.ModelProto,
            feeds: dict[str, np.ndarray],
            labels: Sequence[str] = ("original", "converted"),
            level: str = EXACT_LEVEL) -> list[OutputDifference]:
    """Run both models on ``feeds`` and compare each output.

    Parameters
    ----------
    original : RunnableOriginal
        The original as :func:`runnable_original` gives it: run in onnxruntime, or in
        onnx-upsample's evaluator where it writes legacy mode names.
    converted : onnx.ModelProto
        The converted model, run in onnxruntime.
    feeds : dict of str to numpy.ndarray
        A value for every graph input of both models.
    labels : sequence of two str, optional
        What the messages call the two models.
    level : str, optional
        onnxruntime's graph optimization level (a ``GraphOptimizationLevel`` name).
        ``ORT_ENABLE_EXTENDED`` by default: it compares what the conversion changes (the
        Upsample and Resize kernels), while the default level's NCHWc layout optimization
        runs a Resize after a Conv in another kernel than an Upsample
        (:func:`default_level_note`).

    Returns
    -------
    list of OutputDifference
        One per output of ``converted``, in its order.

    Raises
    ------
    ImportError
        If onnxruntime is not installed.
    UpsampleError
        If onnxruntime cannot load one of the models, or cannot run it on ``feeds``.
    """
    before = _run(lambda: _run_original(original, feeds, labels[0], level), labels[0])
    after = _run(lambda: _session(converted, labels[1], level).run(None, feeds), labels[1])
    return _differences(converted, before, after)


def _run(call: Any, which: str) -> list[Any]:
    """``call()``; an error of onnxruntime's while running becomes one UpsampleError line."""
    try:
        return list(call())
    except UpsampleError:
        raise
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UpsampleError(f"onnxruntime cannot run the {which} model on these inputs: "
                            f"{type(error).__name__}: {first}") from None


def default_level_note(original: RunnableOriginal, converted: onnx.ModelProto,
                       feeds: dict[str, np.ndarray],
                       exact: Sequence[OutputDifference]) -> str:
    """One line on how the outputs compare at onnxruntime's default optimization level
    (``ORT_ENABLE_ALL``), or ``""`` where they compare as at the exact level.

    Parameters
    ----------
    original, converted, feeds
        As for :func:`compare`.
    exact : sequence of OutputDifference
        :func:`compare`'s result at ``ORT_ENABLE_EXTENDED``.

    Returns
    -------
    str
        Empty if the default level changes nothing; else the outputs that differ there only,
        by how much, and the cause (onnxruntime's NCHWc layout optimization), as a note:
        the conversion itself is what the exact level compares.
    """
    if not all(row.identical for row in exact):
        return ""
    rows = compare(original, converted, feeds, level=DEFAULT_LEVEL)
    changed = [row for row in rows if not row.identical]
    if not changed:
        return ""
    worst = max(changed, key=lambda row: row.largest)
    if _nchwc_resizes(converted):
        cause = ("its NCHWc layout optimization (ORT_ENABLE_ALL only) runs a Resize that "
                 "follows a Conv in its NCHWc Upsample kernel, which rounds linear "
                 "interpolation differently, but leaves the original's Upsample (the "
                 "version-7 form, for one) to the standard kernel")
    else:
        cause = "its ORT_ENABLE_ALL-only optimizations treat the two models differently"
    return (f"note: at onnxruntime's default optimization level ({DEFAULT_LEVEL}) "
            f"{worst.describe()}"
            + (f" (and {len(changed) - 1} other output(s))" if len(changed) > 1 else "")
            + f": {cause}; the Upsample -> Resize rewrite itself is exact ({EXACT_LEVEL})")


def _nchwc_resizes(model: onnx.ModelProto) -> bool:
    """Whether onnxruntime, at its default level, runs a Resize of ``model`` as its NCHWc
    Upsample kernel (read from the model it optimizes)."""
    import os
    import tempfile

    ort = import_onnxruntime()
    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, DEFAULT_LEVEL)
        options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
        try:
            ort.InferenceSession(model.SerializeToString(), options,
                                 providers=["CPUExecutionProvider"])
            optimized = onnx.load(options.optimized_model_filepath)
        except Exception:  # the cause stays unnamed; the note says the rest
            return False
    return any(node.domain == "com.microsoft.nchwc" and node.op_type == "Upsample"
               for node in optimized.graph.node)
