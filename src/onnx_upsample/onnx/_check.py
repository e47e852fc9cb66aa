"""``check(model)``: every ``Upsample`` node of a model, what is wrong with it and the fix."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, TypeProto

from .._errors import UpsampleError
from .._spec.dtypes import ORT_ONNX_TYPES, linear_defined_for_onnx, onnx_type_names
from .._spec.rules import ORT_LINEAR_KERNELS, ort_linear_axes
from .._spec.versions import RESIZE_OPSET, VERSIONS, runnable_opset
from ._fixes import Action, Fix, FixableError, fix_of
from ._fold import from_shapes, static_value
from ._graphs import (
    ModelLike,
    Site,
    default_opset,
    is_resize10,
    is_upsample,
    model_of,
    node_label,
    type_string,
)
from ._infer import ort_shapes, output_type, rank_of, site_type_maps
from ._node import UpsampleNode, describe
from ._resize10 import resize10_rounding
from ._shape_bounds import ShapeBounds

__all__ = ["Finding", "check"]


@dataclass(frozen=True)
class Finding:
    """One problem that :func:`check` found in a model.

    Attributes
    ----------
    severity : {"error", "warning"}
        ``"error"``: onnx's checker or onnxruntime rejects the model, or its outputs are not
        what the model says; ``"warning"``: the model is valid, but a runtime or tool will
        trip over it (no onnxruntime kernel, computed scales, onnx's different shape rule).
    node : str
        The node's name (``Upsample#3`` for the fourth node when unnamed), prefixed by the
        place of its graph for subgraphs (``loop.body/up``) and functions.
    message : str
        What is wrong, with the values involved.
    fix : str
        How to fix it; a call of this package is written as Python
        (``onnx_upsample.onnx.downgrade(model, opset=9)``).
    code : str
        A short stable identifier of the kind of problem (``deprecated``, ``form-opset``,
        ``declared-shape``, ...), for filtering.
    remedy : Fix or None
        The same fix with its calls as data (``remedy.actions``), for tools that word them
        otherwise: the command line renders each as the command to type.
    """

    severity: Literal["error", "warning"]
    node: str
    message: str
    fix: str
    code: str = ""
    remedy: Fix | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.severity}: {self.node}: {self.message}. Fix: {self.fix}"


def _dims(value_type: TypeProto | None) -> list[int | None] | None:
    if value_type is None or not value_type.HasField("tensor_type"):
        return None
    if not value_type.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None
            for d in value_type.tensor_type.shape.dim]


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, severity: Literal["error", "warning"], node: str, code: str, message: str,
            fix: str | Fix) -> None:
        remedy = fix_of(fix)
        self.items.append(Finding(severity, node, message, remedy.python(), code, remedy))


def _check_types(out: _Findings, info: UpsampleNode, x_type: TypeProto | None) -> None:
    if x_type is None or not x_type.HasField("tensor_type") or info.version is None:
        return
    elem = x_type.tensor_type.elem_type
    if elem == TensorProto.UNDEFINED:
        return
    name = type_string(elem)
    allowed = VERSIONS[info.version].element_types
    if name not in allowed:
        out.add("error", info.label, "element-type",
                f"X has element type {name}, which Upsample-{info.version} does not allow "
                f"(allowed: {', '.join(allowed)}); onnx's checker (full_check) and "
                "onnxruntime reject it",
                "Cast X to an allowed type (float) before the node and back after it; "
                "onnx-upsample's evaluator runs every type")
    elif name not in ORT_ONNX_TYPES:
        out.add("warning", info.label, "ort-element-type",
                f"onnxruntime 1.32 has no Upsample kernel for {name} ('Could not find an "
                "implementation for Upsample'); it has "
                f"{', '.join(onnx_type_names(ORT_ONNX_TYPES))}",
                Fix("run the model with {0}, or Cast X to float around the node",
                    (Action("run"),)))
    if info.mode == "linear" and not linear_defined_for_onnx(name):
        out.add("error", info.label, "linear-type",
                f"mode is linear but X has element type {name}; linear interpolation is "
                "defined for numeric types only", "use mode='nearest'")


def _check_linear(out: _Findings, info: UpsampleNode, rank: int | None) -> None:
    if info.mode != "linear" or info.scales is None or info.blocking or rank is None:
        return
    scales = [float(s) for s in info.scales]
    if len(scales) == rank and ort_linear_axes(scales) is None:
        out.add("warning", info.label, "ort-linear",
                f"onnxruntime 1.32 refuses linear Upsample for rank {rank} with scales "
                f"{scales} (it runs {'; '.join(k.words for k in ORT_LINEAR_KERNELS)}); "
                "onnx-upsample runs it",
                Fix("run the model with {0}", (Action("run"),)))


def _check_dynamic(out: _Findings, info: UpsampleNode, site: Site,
                   types: dict[str, TypeProto]) -> None:
    if (info.form is None or info.schema.scales_from != "scales_input" or info.scales is not None
            or info.blocking or not info.scales_input):
        return
    fix: str | Fix
    if static_value(site, types, info.scales_input) is not None:
        fix = Fix("{0} evaluates the computation and stores the scales as an initializer (it "
                  "depends only on constants and static shapes)", (Action("fold_scales"),))
    elif from_shapes(site, info.scales_input):
        # no command folds scales computed from symbolic dimensions without their sizes
        fix = ("where the input always has one size, fold the scales for it (onnx-upsample's "
               "fold with --input-shape NAME=D0,D1,..., fold_scales(model, input_shapes=...) "
               "in Python); the scales then hold for that size only")
    else:
        fix = ("store the scales as an initializer (a float32 tensor) if they do not change "
               "between runs")
    out.add("warning", info.label, "dynamic-scales",
            f"the scales are computed at run time ({info.scales_origin}): shape inference "
            "cannot know the output size, and static runtimes (TensorRT, CoreML, ncnn) "
            "refuse such a node", fix)


def _check_shapes(out: _Findings, info: UpsampleNode, x_type: TypeProto | None,
                  declared: TypeProto | None) -> None:
    if info.scales is None or info.blocking or info.mode is None:
        return
    x_dims = _dims(x_type)
    if x_dims is None or len(x_dims) != len(info.scales):
        return
    expected = _dims(output_type(x_type, info.scales))
    name = info.node.output[0]
    declared_dims = _dims(declared)
    if declared_dims is not None and expected is not None:
        if len(declared_dims) != len(expected):
            out.add("error", info.label, "declared-shape",
                    f"the model declares output {name!r} with rank {len(declared_dims)}, but "
                    f"Upsample's output has rank {len(expected)}",
                    Fix("{0} writes the right type", (Action("infer_shapes"),)))
        elif any(d is not None and e is not None and d != e
                 for d, e in zip(declared_dims, expected, strict=True)):
            shown = [d if d is not None else "?" for d in declared_dims]
            right = [e if e is not None else "?" for e in expected]
            out.add("error", info.label, "declared-shape",
                    f"the model declares output {name!r} with shape {shown}, but the output "
                    f"has shape {right} (trunc(float32(dim) * float32(scale)), as onnxruntime "
                    "computes it)",
                    Fix("{0} writes the right shape", (Action("infer_shapes"),)))
    exact = "use scales whose products are exact (1.5, 2, 3)"
    for axis, (n, scale) in enumerate(zip(x_dims, info.scales.tolist(), strict=True)):
        if n is None or expected is None or expected[axis] is None:
            continue
        onnx_value = math.floor(float(n) * float(scale))
        # infer_shapes fixes a declaration of either size (it leaves the size unknown, which
        # onnx's full check takes); where none is declared, naming it again would send the
        # user round in a circle
        declares = (declared_dims is not None and len(declared_dims) == len(expected)
                    and declared_dims[axis] is not None)
        fix = (Fix(f"{{0}} leaves that size unknown, which onnx's full check and onnxruntime's "
                   f"loading take; or {exact}", (Action("infer_shapes"),)) if declares else
               Fix(f"{exact}; the model declares no size there (as infer_shapes writes it)"))
        if onnx_value != expected[axis]:
            out.add("warning", info.label, "onnx-shape-inference",
                    f"onnx's shape inference (float64 rule, onnx >= 1.22) infers {onnx_value} "
                    f"for axis {axis} ({n} x {float(np.float32(scale))!r}) where onnxruntime "
                    f"produces {expected[axis]}: shapes onnx infers downstream are wrong, "
                    "check_model(full_check=True) rejects a model that declares the real shape, "
                    "and onnxruntime's graph-level inference (the same rule) refuses to load a "
                    "model whose static shapes downstream need the real size ('Can't merge "
                    "shape info') and, with its default optimizations, folds a Shape of this "
                    "output into onnx's size", fix)


def _check_resize10(out: _Findings, site: Site, index: int, node: NodeProto,
                    types: dict[str, TypeProto], bounds: list[ShapeBounds]) -> None:
    """A nearest Resize-10 whose computed scales do not show how onnxruntime rounds it for
    every input size: ``upgrade`` refuses it (``_resize10``)."""
    mode = next((a.s for a in node.attribute if a.name == "mode"), b"nearest")
    if (mode != b"nearest" or len(node.input) != 2 or not node.input[1]
            or site.scope.constant(node.input[1]) is not None):
        return
    if not bounds:
        bounds.append(ShapeBounds(site, types))
    label = node_label(site, node, index)
    found = resize10_rounding(site, node, label, bounds[0], types)
    if found.rounding is None:
        assert found.fix is not None
        out.add("warning", label, "resize10-rounding",
                f"{found.problem}: upgrade cannot convert it with its outputs unchanged",
                found.fix)


def _rewrite_at(opset: int) -> Action:
    """The conversion that writes every Upsample in the form of ``opset``."""
    if opset >= RESIZE_OPSET:
        return Action("upgrade", (("opset", opset),))
    return Action("downgrade", (("opset", runnable_opset(opset)),))


def _check_function_opsets(out: _Findings, model: ModelProto) -> None:
    """A model-local function must import the model's default-domain opset: onnx's checker
    rejects another version, and onnxruntime inlines the function and runs its nodes at the
    model's opset (an Upsample-7 form in an opset-9 model then fails to load)."""
    model_opset = default_opset(model.opset_import)
    for function in model.functions:
        own = default_opset(function.opset_import)
        if own is None or model_opset is None or own == model_opset:
            continue
        if not any(is_upsample(node) for node in function.node):
            continue
        out.add("error", f"function {function.domain}::{function.name}", "function-opset",
                f"the function imports opset {own} and the model opset {model_opset}; onnx's "
                "checker rejects the model ('Opset import for domain in function op ... is not "
                "compatible with the version imported by model'), and onnxruntime inlines the "
                f"function and runs its Upsample at opset {model_opset}",
                Fix(f"make the function import opset {model_opset} and write its Upsample in "
                    "that opset's form ({0} does it)", (_rewrite_at(model_opset),)))


def check(model: ModelLike) -> list[Finding]:
    """Check every ``Upsample`` node (versions 1, 7, 9, 10) of a model.

    Looks at the main graph, every ``If``/``Loop``/``Scan`` subgraph and every model-local
    function. A node with no inputs or malformed attributes is a finding, never an exception.

    Checks, per node: inputs and outputs for its form; required attributes and their types;
    unknown attributes; the mode name (``bilinear`` is version 1's name, an error from
    version 7 on); constant scales (count, finite, >= 1, float element type); X's element
    type against the version's list, and against onnxruntime's kernels; the node's form
    against the model's opset (the version-7 form at opset 9, anything at opset 10 and
    later); declared output shapes against the size rule ``trunc(f32(n) * f32(s))``, and
    where onnx's own shape inference (float64 rule) disagrees with onnxruntime; scales
    computed at run time; linear cases onnxruntime refuses. And per nearest Resize-10 (which
    ``upgrade`` rewrites) whose scales are computed at run time: whether they lie on one
    side of 1 on every axis for every input size, which ``upgrade`` needs
    (``resize10-rounding``, a warning).

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk).
        The model; it is not modified.

    Returns
    -------
    list of Finding
        In model order; empty when nothing is wrong. ``severity == "error"`` means onnx's
        checker or onnxruntime rejects the model, or its declared shapes are wrong.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 4, 4])
    >>> node = helper.make_node("Upsample", ["X"], ["Y"], name="up", scales=[1.0, 1, 2, 2])
    >>> graph = helper.make_graph([node], "g", [x], [y])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    >>> [(f.severity, f.node, f.code) for f in check(model)]
    [('error', 'up', 'form-opset')]
    """
    model = model_of(model)
    out = _Findings()
    try:
        inferred = ort_shapes(model)
    except UpsampleError as error:
        # the problem only: the error's fix points here, to check()
        reason = error.problem if isinstance(error, FixableError) else str(error)
        out.add("warning", "(model)", "shape-inference",
                "shape inference failed, so element types and shapes are not checked: "
                f"{reason}",
                "fix the model so that onnx.shape_inference.infer_shapes runs")
        inferred = model
    _check_function_opsets(out, model)
    inferred_sites = site_type_maps(inferred)
    declared_sites = site_type_maps(model)
    for (site, declared), (_, types) in zip(declared_sites, inferred_sites, strict=True):
        bounds: list[ShapeBounds] = []  # made for the first Resize-10 that needs one
        for index, node in enumerate(site.owner.node):
            if is_resize10(node, site.opset):
                _check_resize10(out, site, index, node, types, bounds)
            if not is_upsample(node):
                continue
            label = node_label(site, node, index)
            x_type = types.get(node.input[0]) if node.input else None
            rank = rank_of(x_type)
            importer = ("the model" if site.function is None else
                        f"function {site.function.domain}::{site.function.name}")
            info = describe(node, label, site.opset, site.scope, rank, importer=importer)
            for problem in info.problems:
                out.add(problem.severity, label, problem.code, problem.message, problem.fix)
            if not info.blocking or all(p.code not in ("no-inputs", "arity")
                                        for p in info.blocking):
                _check_types(out, info, x_type)
            _check_linear(out, info, rank)
            _check_dynamic(out, info, site, types)
            if node.output and node.output[0]:
                _check_shapes(out, info, x_type, declared.get(node.output[0]))
    return out.items
