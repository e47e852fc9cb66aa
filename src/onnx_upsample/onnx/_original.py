"""The original model of a verification in the form onnxruntime runs, and its Upsample nodes.

onnxruntime loads Upsample-7 and Upsample-9 in models of their own opsets, with modes in
lower case. Whatever else a legacy model holds is brought to such a form by rewrites that
cannot change a result: modes in the case old converters wrote are lowered (``_modes``);
Upsample-1 and Upsample-10, and a form that does not match the opset (the TensorRT
samples' version-7 form at opset 9), become the equivalent opset-7 or opset-9 model that
``downgrade`` writes. :func:`runnable_original` gives that model and says what was done;
:func:`upsample_nodes` lists the Upsample nodes a verification compares one by one.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import onnx

from .._errors import UpsampleWarning
from .._spec.versions import NEWEST_UPSAMPLE_OPSET, runnable_opset
from ._check import check
from ._graphs import default_opset, is_resize10, is_upsample, node_label, walk
from ._modes import lower_mode_case
from ._node import describe
from .convert import downgrade

__all__ = ["RunnableOriginal", "UpsampleAt", "runnable_original", "upsample_nodes"]


@dataclass(frozen=True)
class RunnableOriginal:
    """The original model in the form it runs in, for a verification.

    Attributes
    ----------
    model : onnx.ModelProto
        The model to run: the original itself, or the equivalent model the rewrites give.
    notes : tuple of str
        One line per rewrite, saying what it changed and why that changes no result.
    """

    model: onnx.ModelProto
    notes: tuple[str, ...] = ()


def _onnxruntime_form(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """The model in a form onnxruntime loads (opset 7 or 9 Upsample), and how it was made."""
    if not any(is_upsample(node) for site in walk(model) for node in site.owner.node):
        return model, ""
    opset = default_opset(model.opset_import) or NEWEST_UPSAMPLE_OPSET
    codes = {finding.code for finding in check(model)}
    target = runnable_opset(opset)
    if target == opset and not codes & {"form-opset", "mode"}:
        return model, ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        rewritten = downgrade(model, opset=target)
    note = (f"onnxruntime cannot load the original (opset {opset}); it runs as the equivalent "
            f"opset-{target} Upsample model that downgrade writes")
    return rewritten, note


def runnable_original(model: onnx.ModelProto) -> RunnableOriginal:
    """The form in which ``model`` runs for a verification, and what was done to it.

    Parameters
    ----------
    model : onnx.ModelProto
        The original; it is not modified.

    Returns
    -------
    RunnableOriginal
        ``model`` itself where onnxruntime loads it; else ``model`` with its modes in lower
        case, then, where it holds Upsample-1 or Upsample-10 or forms its opset does not
        have, the equivalent opset-7 or opset-9 Upsample model (``downgrade()``).

    Raises
    ------
    UpsampleError
        If ``downgrade()`` cannot write the equivalent model.
    """
    notes = []
    lowered, cases = lower_mode_case(model)
    if cases:
        written = ", ".join(sorted({repr(case.written) for case in cases}))
        notes.append(f"the original writes modes in upper or mixed case ({written}), which "
                     "onnxruntime refuses: it runs with them in lower case, which changes "
                     "nothing else")
    rewritten, note = _onnxruntime_form(lowered)
    if note:
        notes.append(note)
    return RunnableOriginal(rewritten, tuple(notes))


@dataclass(frozen=True)
class UpsampleAt:
    """A node of the original that upgrade rewrites (an Upsample, or a Resize-10), where a
    verification finds it.

    Attributes
    ----------
    label : str
        The node as messages name it (in the original model).
    output : str
        Its output Y, which the Resize that replaced it writes too.
    x : str
        Its input X.
    scales : str
        Its scales input where the scales are one (``""`` for the attribute forms).
    constant : tuple of float or None
        The scales where they are constant; None where they are computed at run time.
    index : int or None
        Its place in the main graph of the runnable original; None inside a subgraph or a
        model-local function, where a run cannot expose its output.
    where : str
        ``""`` for the main graph, else the subgraph or function that holds it.
    """

    label: str
    output: str
    x: str
    scales: str
    constant: tuple[float, ...] | None
    index: int | None
    where: str = ""


def _converted(node: onnx.NodeProto, opset: int | None) -> bool:
    """Whether ``upgrade`` rewrites ``node``: an Upsample, or a Resize-10 (whose rounding the
    converter would change)."""
    return bool(node.output and node.input) and (is_upsample(node) or is_resize10(node, opset))


def upsample_nodes(original: onnx.ModelProto, runnable: onnx.ModelProto) -> list[UpsampleAt]:
    """Every node of ``original`` that ``upgrade`` rewrites (Upsample; Resize-10), as found
    in ``runnable`` (its runnable form): the main graph's first, in order, then those of
    subgraphs and functions."""
    labels = {node.output[0]: node_label(site, node, index) for site in walk(original)
              for index, node in enumerate(site.owner.node) if _converted(node, site.opset)}
    found: list[UpsampleAt] = []
    nested: list[UpsampleAt] = []
    for site in walk(runnable):
        main = site.path == "" and site.function is None
        for index, node in enumerate(site.owner.node):
            if not _converted(node, site.opset):
                continue
            label = labels.get(node.output[0], node_label(site, node, index))
            if is_upsample(node):
                info = describe(node, label, site.opset, site.scope)
                values, scales = info.scales, info.scales_input or ""
            else:  # Resize-10: X and scales
                scales = node.input[1] if len(node.input) > 1 else ""
                values = site.scope.constant(scales) if scales else None
            constant = None if values is None else tuple(
                float(v) for v in np.asarray(values).reshape(-1))
            place = UpsampleAt(label, node.output[0], node.input[0], scales, constant,
                               index if main else None, "" if main else site.path)
            (found if main else nested).append(place)
    return found + nested
