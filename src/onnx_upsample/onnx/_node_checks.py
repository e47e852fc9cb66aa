"""What an ``Upsample`` node's scales and its model's opset say is wrong with it: scales
that are not finite and >= 1 (with the way out for one that shrinks), a rank its version
does not take, a form the opset does not have, a deprecated or experimental version."""

from __future__ import annotations

import math

from .._spec.scales import scale_value_problems
from .._spec.versions import (
    ANY_RANK_FORMS,
    LOWEST_RUNNABLE_OPSET,
    NEWEST_UPSAMPLE_OPSET,
    RUNNABLE_VERSIONS,
    runnable_opset,
    version_for_opset,
)
from ._fixes import Action, Fix
from ._node_info import UpsampleNode

__all__ = ["check_opset", "check_scales", "shrinks"]


# The one way out for a node that shrinks (tf2onnx wrote tf.image.resize so at opset 9):
# Resize-10 is Upsample-9 without the rule that scales are >= 1, so the node has one literal
# meaning, which upgrade writes when asked to.
_DOWNSCALE_FIX = Fix(
    "{0} converts the node into the Resize it literally means (Resize-10 is Upsample-9 "
    "without the rule that scales are >= 1), which shrinks; compare its output with the "
    "exporter's framework, which may have meant another convention",
    (Action("upgrade", (("allow_downscale", True),)),))


def shrinks(value: float) -> bool:
    """Whether a scale shrinks its axis (finite, above 0, below 1)."""
    return math.isfinite(value) and 0 < value < 1


def check_scales(info: UpsampleNode, rank: int | None, allow_downscale: bool = False) -> None:
    scales = info.scales
    if scales is None:
        return
    _, problems = scale_value_problems(scales.tolist())  # the rule of upsample() itself
    for axis, problem, fix in problems:
        value = float(scales[axis])
        ort = ("'Scale value must be finite'" if not math.isfinite(value) else
               "'Scale value should be greater than or equal to 1'")
        message = f"scales[{axis}] is {problem} ({info.scales_origin}; onnxruntime: {ort})"
        if shrinks(value):
            if allow_downscale:
                continue  # the conversion writes the Resize it literally means
            info.add("error", "scales-value", f"{message}: Upsample only enlarges",
                     _DOWNSCALE_FIX, blocking=True)
            continue
        info.add("error", "scales-value", message, fix, blocking=True)
    if rank is None:
        return
    required_rank = info.schema.rank
    if required_rank is not None and rank != required_rank:
        info.add("error", "rank",
                 f"X has rank {rank}; Upsample-{info.schema.version} is defined for "
                 f"{required_rank}-D input [N, C, H, W] only",
                 f"reshape X to {required_rank}-D, or use the {ANY_RANK_FORMS} form (one "
                 "scale per axis)", blocking=True)
    elif required_rank is None and len(scales) != rank:
        info.add("error", "scales-count",
                 f"the scales ({info.scales_origin}) have {len(scales)} value(s) "
                 f"{scales.tolist()} but X has rank {rank}",
                 "give exactly one scale per axis of X", blocking=True)


def _rewrites(info: UpsampleNode, *ways: tuple[str, Action]) -> Fix:
    """A fix naming the conversions that take the node (each way: its words, ``{0}`` for its
    action): downgrade refuses a mode written in the case old converters wrote, which
    upgrade writes in lower case, so naming it would send the user round in a circle."""
    refused = any(problem.code == "mode-case" or (problem.code == "mode" and problem.blocking)
                  for problem in info.problems)
    kept = [(words, action) for words, action in ways
            if not (refused and action.function == "downgrade")]
    return Fix("; ".join(words.replace("{0}", f"{{{slot}}}")
                         for slot, (words, _) in enumerate(kept)),
               tuple(action for _, action in kept))


def check_opset(info: UpsampleNode) -> None:
    opset, form = info.opset, info.form
    if opset is None or form is None:
        return
    at_opset = version_for_opset(opset)
    schema = info.schema
    downgrade = Action("downgrade", (("opset", NEWEST_UPSAMPLE_OPSET),))
    if at_opset.deprecated:
        info.add("error", "deprecated",
                 f"Upsample is deprecated from opset {at_opset.opsets[0]} and {info.importer} "
                 f"imports opset {opset}: "
                 "onnx's checker and onnxruntime reject the model ('Op registered for Upsample "
                 f"is deprecated in domain_version of {opset}'); onnx-upsample runs it as "
                 f"Upsample-{at_opset.version} with a warning",
                 _rewrites(info, ("{0} replaces it by a Resize with bit-identical outputs",
                                  Action("upgrade")),
                           (f"{{0}} makes an opset-{NEWEST_UPSAMPLE_OPSET} model", downgrade)))
        if form != at_opset.form:
            info.add("error", "form-opset",
                     f"the node has the {schema.form_words}; Upsample-{at_opset.version} has "
                     f"the {at_opset.form_words}",
                     _rewrites(info, ("{0} rewrites it as a Resize", Action("upgrade")),
                               ("{0} as an Upsample", downgrade)))
        return
    if form != at_opset.form:
        fix = _rewrites(info, ("{0} rewrites every Upsample into the form of that opset",
                               Action("downgrade", (("opset", runnable_opset(opset)),))),
                        ("{0} turns them into Resize", Action("upgrade")))
        have, take = len(schema.inputs), len(at_opset.inputs)
        if have != take:
            detail = (f"onnxruntime: 'Node with schema(::Upsample:{at_opset.version}) has input "
                      f"size {have} not in range [min={take}, max={take}]'")
        else:
            detail = "onnx's checker and onnxruntime reject it"
        info.add("error", "form-opset",
                 f"the node has the {schema.form_words} but {info.importer} imports opset "
                 f"{opset}, whose Upsample-{at_opset.version} has the {at_opset.form_words} "
                 f"({detail})", fix)
    if schema.experimental:
        info.add("warning", "experimental",
                 f"Upsample-{schema.version} is experimental and onnxruntime has no kernel for "
                 f"it ('Could not find an implementation for Upsample({schema.version})')",
                 _rewrites(info, (f"{{0}} rewrites it as Upsample-"
                                  f"{RUNNABLE_VERSIONS[0].version}, which onnxruntime runs",
                                  Action("downgrade", (("opset", LOWEST_RUNNABLE_OPSET),))),
                           ("{0} turns it into Resize", Action("upgrade"))))
