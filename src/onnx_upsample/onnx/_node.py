"""What one ``Upsample`` node is: its form (1, 7 or 9), mode, scales and what is wrong with it.

:func:`describe` never raises for a malformed node; it lists :class:`Problem` s instead.
``blocking`` problems (no inputs, missing or malformed attributes, an unknown mode, bad
constant scales) mean the node cannot be run or converted at all; the others (a form that does
not match the model's opset, the deprecated version 10, the legacy ``bilinear`` name) are
model-level mistakes onnx-upsample can work around, which onnx's checker or onnxruntime reject.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto

from .._spec.modes import LEGACY_LINEAR_NAMES, MODES
from .._spec.versions import LOWEST_RUNNABLE_OPSET, VERSIONS, version_for_opset
from ._fixes import Action, Fix
from ._graphs import Scope
from ._node_checks import check_opset, check_scales, shrinks
from ._node_info import Problem, UpsampleNode

__all__ = ["Problem", "UpsampleNode", "describe", "shrinks"]

def _attribute_value(info: UpsampleNode, attribute: AttributeProto,
                     expected: str) -> object | None:
    """The value of an attribute of the expected type, or None (with a problem added)."""
    # onnx's own name of the type ("FLOATS"); a number no version of onnx names, as it is
    known = attribute.type in AttributeProto.AttributeType.values()
    got = AttributeProto.AttributeType.Name(attribute.type) if known else str(attribute.type)
    if attribute.ref_attr_name:
        info.add("error", "attribute-reference",
                 f"attribute {attribute.name!r} refers to the enclosing function's attribute "
                 f"{attribute.ref_attr_name!r}, so its value is unknown until the function is "
                 "called",
                 f"give {attribute.name!r} a literal value", blocking=True)
        return None
    if got != expected:
        info.add("error", "attribute-type",
                 f"attribute {attribute.name!r} has type {got}; expected {expected}",
                 f"store {attribute.name!r} as an attribute of type {expected}", blocking=True)
        return None
    if expected == "FLOAT":
        return float(attribute.f)
    if expected == "FLOATS":
        return np.array(list(attribute.floats), dtype=np.float32)
    try:
        return attribute.s.decode("utf-8")
    except UnicodeDecodeError:
        info.add("error", "attribute-type",
                 f"attribute {attribute.name!r} is not valid UTF-8 text ({attribute.s!r})",
                 f"set {attribute.name!r} to 'nearest' or 'linear'", blocking=True)
        return None


def _form_by_scales_source(source: str) -> int:
    return next(info.form for info in VERSIONS.values() if info.scales_from == source)


def _read_form(info: UpsampleNode, attributes: dict[str, AttributeProto]) -> None:
    node = info.node
    has_hw = "height_scale" in attributes or "width_scale" in attributes
    has_scales = "scales" in attributes
    n_inputs = len(node.input)
    if has_hw and has_scales:
        info.add("error", "ambiguous-form",
                 "the node has both the version-1 attributes (height_scale, width_scale) and "
                 "the version-7 scales attribute",
                 "keep only one way of giving the scales", blocking=True)
        return
    if has_hw:
        info.form = _form_by_scales_source("height_width_attributes")
    elif has_scales:
        info.form = _form_by_scales_source("scales_attribute")
    elif n_inputs >= 2:
        info.form = _form_by_scales_source("scales_input")
    elif info.opset is not None and version_for_opset(info.opset).scales_from != "scales_input":
        info.form = version_for_opset(info.opset).form  # all its attributes are missing
    else:
        info.add("error", "missing-scales",
                 f"the node has {n_inputs} input(s) and no scales attribute, so it gives no "
                 "scales at all",
                 "add the scales as a second input (a float tensor, opset 9) or as the scales "
                 "attribute (opset 7-8)", blocking=True)


def _check_inputs(info: UpsampleNode, inputs: list[str]) -> None:
    """The inputs the node's form takes: X alone where the scales are attributes, X and
    scales where they are an input."""
    expected = info.schema.inputs
    if len(inputs) == len(expected):
        if len(inputs) == 2 and not inputs[1]:
            info.add("error", "arity", "the node's scales input is empty ('')",
                     "connect a float tensor with one scale per axis of X", blocking=True)
        return
    names = ", ".join(expected)
    if info.schema.scales_from != "scales_input":
        extra = ", ".join(repr(name) for name in inputs[len(expected):])
        scales_input_form = next(v for v in VERSIONS.values() if v.scales_from == "scales_input")
        info.add("error", "arity",
                 f"Upsample in the {info.schema.form_words} takes {len(expected)} input "
                 f"({names}) but the node has {len(inputs)}: the extra input(s) {extra} are "
                 f"not allowed (onnxruntime: 'input size {len(inputs)} not in range "
                 f"[min={len(expected)}, max={len(expected)}]')",
                 "remove the extra inputs, or remove the scales attribute to use the "
                 f"{scales_input_form.form_words} at opset {scales_input_form.opsets[0]}",
                 blocking=True)
    else:
        info.add("error", "arity",
                 f"Upsample-{info.form} takes {len(expected)} inputs ({names}) but the node "
                 f"has {len(inputs)}", f"give exactly the inputs {' and '.join(expected)}",
                 blocking=True)


def _check_arity(info: UpsampleNode) -> None:
    node = info.node
    inputs = list(node.input)
    if not inputs or not inputs[0]:
        info.add("error", "no-inputs",
                 "the node has no input X" if not inputs else "the node's input X is empty ('')",
                 "connect the tensor to upsample as the node's first input", blocking=True)
    if info.form is not None:
        _check_inputs(info, inputs)
    outputs = list(node.output)
    if len(outputs) != 1 or not outputs[0]:
        info.add("error", "arity",
                 f"Upsample has exactly 1 output (Y) but the node has {outputs!r}",
                 "give the node one named output", blocking=True)


def _read_attributes(info: UpsampleNode, attributes: dict[str, AttributeProto]) -> None:
    schema = info.schema
    allowed = schema.attribute_types
    for name in attributes:
        if name not in allowed:
            info.add("error", "unknown-attribute",
                     f"attribute {name!r} is not an attribute of Upsample in the "
                     f"{schema.form_words} (it has {', '.join(sorted(allowed))}); onnx's "
                     "checker rejects the node",
                     f"remove attribute {name!r}", blocking=True)
    if "mode" in attributes:
        value = _attribute_value(info, attributes["mode"], "STRING")
        if value is None:
            info.mode = None
        else:
            info.mode_name = str(value)
    for name in schema.required_attributes:
        if name not in attributes:
            info.add("error", "missing-attribute",
                     f"required attribute {name!r} of Upsample-{schema.version} is missing",
                     f"add the {schema.attribute_types[name]} attribute {name!r}",
                     blocking=True)
    if schema.scales_from == "height_width_attributes":
        height = width = None
        if "height_scale" in attributes:
            height = _attribute_value(info, attributes["height_scale"], "FLOAT")
        if "width_scale" in attributes:
            width = _attribute_value(info, attributes["width_scale"], "FLOAT")
        if isinstance(height, float) and isinstance(width, float):
            info.scales = np.array([1, 1, height, width], dtype=np.float32)
            info.scales_origin = "attributes height_scale and width_scale"
    elif schema.scales_from == "scales_attribute" and "scales" in attributes:
        scales = _attribute_value(info, attributes["scales"], "FLOATS")
        if isinstance(scales, np.ndarray):
            info.scales = scales
            info.scales_origin = "the scales attribute"


def case_variant(name: str) -> str | None:
    """The lower-case mode name that ``name`` spells in other case ('NEAREST'), or None.

    Old converters wrote mode names in upper or mixed case ('NEAREST', 'BILINEAR'), which
    onnx's checker and onnxruntime refuse.
    """
    lower = name.lower()
    known = {*(n for info in VERSIONS.values() for n in info.modes), *LEGACY_LINEAR_NAMES}
    return lower if lower != name and lower in known else None


def case_fixed(name: str, form: int | None) -> str | None:
    """The mode name that a node of ``form`` takes for ``name`` written in upper or mixed
    case, or None: 'BILINEAR' is 'linear' in the version-7 and -9 forms (where 'bilinear' is
    refused too) and 'bilinear' in version 1's, so one fix says what to write."""
    lower = case_variant(name)
    if lower in (*LEGACY_LINEAR_NAMES, "linear"):
        schema = VERSIONS[form] if form is not None else version_for_opset(LOWEST_RUNNABLE_OPSET)
        return schema.modes[MODES.index("linear")]
    return lower


def _read_mode(info: UpsampleNode, legacy_modes: bool = False) -> None:
    if info.mode is None:
        return
    name = info.mode_name
    lower = case_fixed(name, info.form)
    if lower is not None and legacy_modes:
        info.add("warning", "mode-case",
                 f"mode is {name!r}, in the case old converters wrote; onnx's checker and "
                 f"onnxruntime refuse it, onnx-upsample runs it as {lower!r} (legacy_modes)",
                 Fix(f"write mode={lower!r} ({{0}} does it)", (Action("upgrade"),)))
        info.mode_name = name = lower
    schema = info.schema
    if name in schema.modes:
        info.mode = MODES[schema.modes.index(name)]
        return
    own_linear = schema.modes[MODES.index("linear")]
    same_names = "/".join(str(v) for v, other in VERSIONS.items() if other.modes == schema.modes)
    if name == "linear":  # the canonical name, in a version that calls it otherwise
        info.mode = "linear"
        info.add("warning", "mode",
                 f"mode is 'linear'; Upsample-{same_names} calls it {own_linear!r} "
                 "(onnx-upsample runs it as linear)",
                 Fix(f"set mode={own_linear!r}, or upgrade the model: {{0}}",
                     (Action("upgrade"),)))
        return
    if name in LEGACY_LINEAR_NAMES and own_linear == "linear":
        info.mode = "linear"
        info.add("error", "mode",
                 f"mode is {name!r}, a legacy name of 'linear' that Upsample-{same_names} does "
                 f"not define; onnxruntime rejects the node ('mode attribute is {name}. It "
                 "can only be nearest(default) or linear or cubic'); onnx-upsample runs it "
                 "as linear with a warning",
                 Fix("set mode='linear' ({0} does it)", (Action("upgrade"),)))
        return
    expected = f"{schema.modes[0]!r} (the default) or {own_linear!r}"
    info.mode = None
    fix: str | Fix = f"set mode to {expected}"
    if lower is not None:
        fix = Fix(f"write mode={lower!r} ({{0}} does it; run the model as it is with {{1}})",
                  (Action("upgrade"), Action("run", (("legacy_modes", True),))))
    elif name == "cubic":
        fix = ("cubic is not an Upsample mode (onnxruntime runs it outside the specification); "
               "use Resize with mode='cubic' and coordinate_transformation_mode='asymmetric'")
    info.add("error", "mode", f"mode is {name!r}; Upsample-{schema.version} takes {expected}", fix,
             blocking=True)


def _read_scales_input(info: UpsampleNode, scope: Scope) -> None:
    name = info.node.input[1]
    info.scales_input = name
    info.scales_origin = scope.origin(name)
    value = scope.constant(name)
    if value is None:
        return
    if value.dtype != np.float32:
        info.add("error", "scales-type",
                 f"the scales tensor ({info.scales_origin}) has element type {value.dtype}; "
                 "Upsample takes tensor(float) (onnx's checker and onnxruntime reject it)",
                 "store the scales as float32", blocking=True)
        return
    if value.ndim != 1:
        info.add("warning", "scales-shape",
                 f"the scales tensor ({info.scales_origin}) has shape {list(value.shape)}; "
                 "the specification says 1-D (onnxruntime and onnx-upsample read its values "
                 "in order, other runtimes may refuse it)",
                 f"store the scales with shape [{value.size}]")
    info.scales = value.reshape(-1)


def describe(node: onnx.NodeProto, label: str, opset: int | None, scope: Scope,
             rank: int | None = None, legacy_modes: bool = False,
             importer: str = "the model", allow_downscale: bool = False) -> UpsampleNode:
    """Read an ``Upsample`` node: form, mode, constant scales, and its problems.

    Parameters
    ----------
    node : onnx.NodeProto
        An ``Upsample`` node (versions 1, 7, 9 or 10).
    label : str
        How messages name the node.
    opset : int or None
        The default-domain opset of the model (or function) holding the node.
    scope : Scope
        Constants and producers visible to the node (for the scales input).
    rank : int, optional
        The rank of X where known, to check the scales count (and v1's 4-D rule).
    legacy_modes : bool, default False
        Read modes in the case old converters wrote ('NEAREST', 'BILINEAR') as their
        lower-case names, with a warning, instead of refusing them.
    importer : str, default "the model"
        What imports ``opset``, for messages ("function local::Up" for a function's node).
    allow_downscale : bool, default False
        Take constant scales between 0 and 1 (which Upsample refuses) as they are, for
        ``upgrade(allow_downscale=True)``, which writes the Resize they literally mean.
    """
    info = UpsampleNode(node=node, label=label, opset=opset, importer=importer)
    attributes = {attribute.name: attribute for attribute in node.attribute}
    _read_form(info, attributes)
    _check_arity(info)
    if info.form is None:
        return info
    _read_attributes(info, attributes)
    _read_mode(info, legacy_modes)
    if info.schema.scales_from == "scales_input" and len(node.input) == 2 and node.input[1]:
        _read_scales_input(info, scope)
    check_scales(info, rank, allow_downscale)
    check_opset(info)
    return info
