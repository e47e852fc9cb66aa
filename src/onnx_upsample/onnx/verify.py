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
    """

    name: str
    shape: tuple[int, ...]
    largest: float
    identical: bool


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
            f"opset-{target} Upsample model written by downgrade()")
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


def _session(model: onnx.ModelProto, which: str) -> Any:
    """An onnxruntime CPU session of ``model``; UpsampleError (one line) if ORT refuses it."""
    ort = import_onnxruntime()
    options = ort.SessionOptions()
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


def compare(original: RunnableOriginal, converted: onnx.ModelProto,
            feeds: dict[str, np.ndarray],
            labels: Sequence[str] = ("original", "converted")) -> list[OutputDifference]:
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

    Returns
    -------
    list of OutputDifference
        One per output of ``converted``, in its order.

    Raises
    ------
    ImportError
        If onnxruntime is not installed.
    UpsampleError
        If onnxruntime cannot load one of the models.
    """
    if original.legacy_modes:
        # ORT refuses the original's modes: it runs in onnx-upsample's evaluator instead
        from ._evaluator import reference_evaluator

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UpsampleWarning)
            before = reference_evaluator(original.model, legacy_modes=True).run(None, feeds)
    else:
        before = _session(original.model, labels[0]).run(None, feeds)
    after = _session(converted, labels[1]).run(None, feeds)
    names = [value.name for value in converted.graph.output]
    rows = []
    for name, a, b in zip(names, before, after, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        rows.append(OutputDifference(name, tuple(b.shape), largest_difference(a, b),
                                     bits_equal(a, b)))
    return rows
