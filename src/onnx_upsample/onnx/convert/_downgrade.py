"""``downgrade``: every Upsample-equivalent Resize becomes Upsample, in an opset 7-9 model,
and every Resize-10-equivalent one Resize-10, in an opset-10 model.

A Resize means exactly Upsample when it maps output pixel o to input o / scale
(``asymmetric``), rounds down for nearest (``floor``) and takes scales (>= 1 where they
are constant) and nothing else (no sizes, axes, antialias); every other Resize is refused
with the reason. A Resize-11 or later means exactly Resize-10 (as onnxruntime runs it:
asymmetric coordinates; nearest rounds down where a scale is >= 1, up where it is below 1)
where it is asymmetric and, for nearest, rounds the way its scales' side of 1 says for every
input size (``_bounds`` proves that for computed scales, as for ``upgrade``). Opset 10 gets
Resize-10, never Upsample-10 (deprecated: onnx's checker and onnxruntime refuse it). Nodes onnx
has no down adapter for move down unchanged where they mean the same (``_bridge``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TypeProto

from ..._errors import UpsampleError, UpsampleWarning
from ..._spec.modes import MODES
from ..._spec.versions import (
    DEFAULT_DOMAINS,
    DEFAULT_DOWNGRADE_OPSET,
    DEFAULT_UPGRADE_OPSET,
    DOWNGRADE_OPSETS,
    RESIZE_OPSET,
    is_resize10_opset,
    takes_scales_input,
)
from .._bounds import rounding_of, side_of
from .._fixes import Action, Fix, FixableError
from .._fold import from_shapes, static_value
from .._graphs import ModelLike, Site, default_opset, is_upsample, model_of, node_label, walk
from .._shape_bounds import ShapeBounds, scale_sides
from ._pipeline import (
    Job,
    as_text,
    attribute_value,
    convert_rest,
    each_node,
    finish_job,
    newest_opset,
    require_opset,
    scales_input,
    set_pending,
    start_job,
    upsample_info,
)

__all__ = ["downgrade"]


def _constant_or_none(site: Site, node: onnx.NodeProto, position: int) -> np.ndarray | None:
    if len(node.input) <= position or not node.input[position]:
        return None
    return site.scope.constant(node.input[position])


def _resize_as_upsample(site: Site, node: onnx.NodeProto, label: str) -> tuple[str, str]:
    """Mode and scales name of a Resize that means exactly Upsample, or UpsampleError."""
    opset = site.opset or RESIZE_OPSET

    def refuse(why: str, fix: str) -> UpsampleError:
        return UpsampleError(f"Resize node {label!r} is not an Upsample: {why}; {fix}")

    mode = as_text(attribute_value(node, "mode", b"nearest"))
    if mode not in MODES:
        raise refuse(f"mode is {mode!r} (Upsample has nearest and linear)",
                     "keep this model at its opset")
    if is_resize10_opset(opset):
        if len(node.input) != 2 or not node.input[1]:
            raise refuse("Resize-10 needs inputs X and scales", "fix the node")
        scales_position = 1
    else:
        ctm = as_text(attribute_value(node, "coordinate_transformation_mode",
                                      b"half_pixel"))
        if ctm != "asymmetric":
            raise refuse(f"coordinate_transformation_mode is {ctm!r}; Upsample maps output "
                         "pixel o to input o / scale ('asymmetric')",
                         "only Resize nodes with coordinate_transformation_mode='asymmetric' "
                         "become Upsample")
        if mode == "nearest":
            nearest_mode = as_text(attribute_value(node, "nearest_mode",
                                                   b"round_prefer_floor"))
            if nearest_mode != "floor":
                raise refuse(f"nearest_mode is {nearest_mode!r}; Upsample rounds down "
                             "('floor')", "only nearest_mode='floor' becomes Upsample")
        for name, default in (("antialias", 0), ("exclude_outside", 0)):
            value = attribute_value(node, name, default)
            if value != default:
                raise refuse(f"{name} is {value!r}", f"set {name} to {default}")
        if attribute_value(node, "axes", None) is not None:
            raise refuse("it has the axes attribute", "give one scale per axis instead")
        if len(node.input) > 3 and node.input[3]:
            sizes = _constant_or_none(site, node, 3)
            if sizes is None or sizes.size:
                raise refuse("it takes output sizes; Upsample takes scales",
                             "compute the scales (fold them into a constant) first")
        if len(node.input) < 3 or not node.input[2]:
            raise refuse("it has no scales input", "give the scales")
        scales_position = 2
    scales = _constant_or_none(site, node, scales_position)
    if scales is not None:
        values = [float(v) for v in np.asarray(scales).reshape(-1)]
        if not values:
            raise refuse("its scales are empty", "give one scale per axis")
        for axis, value in enumerate(values):
            if not math.isfinite(value) or value < 1:
                raise refuse(f"scales[{axis}] is {value!r}; Upsample only enlarges "
                             "(scales must be finite and >= 1)", "keep this model at its opset")
        if np.asarray(scales).dtype != np.float32:
            raise refuse(f"its scales have element type {np.asarray(scales).dtype}",
                         "store the scales as float32")
    return mode, node.input[scales_position]


def _resize10_refusal(label: str, why: str, fix: str) -> UpsampleError:
    return UpsampleError(f"Resize node {label!r} is not a Resize-10 (cannot downgrade it to "
                         f"opset {RESIZE_OPSET}): {why}; fix: {fix}")


def _sizes_as_scales(site: Site, node: onnx.NodeProto, label: str,
                     types: dict[str, TypeProto]) -> np.ndarray:
    """The float32 scales with which onnxruntime's Resize-10 gives the node's constant
    sizes, on the same input pixels; UpsampleError where none do exactly."""
    keep = "keep the model at its opset, or give the Resize scales"
    sizes = _constant_or_none(site, node, 3)
    x_type = types.get(node.input[0])
    dims = ([] if x_type is None or not x_type.tensor_type.HasField("shape")
            else list(x_type.tensor_type.shape.dim))
    if sizes is None or not dims or not all(d.HasField("dim_value") for d in dims):
        raise _resize10_refusal(label, "it takes output sizes computed at run time or of an "
                                "input whose shape is not static, and Resize-10 takes scales",
                                keep)
    wanted = [int(v) for v in np.asarray(sizes).reshape(-1)]
    given = [int(d.dim_value) for d in dims]
    if len(wanted) != len(given) or min(given + wanted) <= 0:
        raise _resize10_refusal(label, f"its sizes {wanted} do not fit X's shape {given}", keep)
    # onnxruntime's Resize-11+ maps pixels by size / n in float32; Resize-10 with that scale
    # gives trunc(n * scale), which must be the size for the two to agree
    scales = np.array([np.float32(m) / np.float32(n) for n, m in zip(given, wanted, strict=True)],
                      np.float32)
    made = [int(np.float32(n) * s) for n, s in zip(given, scales, strict=True)]
    if made != wanted:
        raise _resize10_refusal(label, f"its sizes {wanted} are not exactly scales of X's "
                                f"shape {given} in float32 (they would give {made})", keep)
    return scales


def _resize_as_resize10(site: Site, node: onnx.NodeProto, label: str,
                        types: dict[str, TypeProto], bounds: Callable[[], ShapeBounds]
                        ) -> tuple[str, str | np.ndarray]:
    """Mode and scales (a name, or float32 values to store) of a Resize-11 or later that
    onnxruntime runs exactly as Resize-10, or UpsampleError."""
    keep = f"keep the model at opset {RESIZE_OPSET + 1} or later"
    mode = as_text(attribute_value(node, "mode", b"nearest"))
    if mode not in MODES:
        raise _resize10_refusal(label, f"mode is {mode!r} (Resize-10 has nearest and linear)",
                                keep)
    ctm = as_text(attribute_value(node, "coordinate_transformation_mode", b"half_pixel"))
    if ctm != "asymmetric":
        raise _resize10_refusal(
            label, f"coordinate_transformation_mode is {ctm!r}; Resize-10 maps output pixel o "
            "to input o / scale ('asymmetric')", f"{keep} (only asymmetric Resize nodes "
            f"become Resize-10)")
    for name, default in (("antialias", 0), ("exclude_outside", 0)):
        value = attribute_value(node, name, default)
        if value != default:
            raise _resize10_refusal(label, f"{name} is {value!r}; Resize-10 has no {name}",
                                    f"set {name} to {default}, or {keep}")
    if attribute_value(node, "axes", None) is not None:
        raise _resize10_refusal(label, "it has the axes attribute; Resize-10 takes one scale "
                                "per axis", "give one scale per axis instead")
    scales_name = node.input[2] if len(node.input) > 2 else ""
    constant = _constant_or_none(site, node, 2)
    scales: str | np.ndarray = scales_name
    if not scales_name or (constant is not None and not constant.size):
        if len(node.input) < 4 or not node.input[3]:
            raise _resize10_refusal(label, "it has neither scales nor sizes", "fix the node")
        scales = constant = _sizes_as_scales(site, node, label, types)
    if constant is not None:
        values = [float(v) for v in np.asarray(constant).reshape(-1)]
        bad = [v for v in values if not math.isfinite(v) or v <= 0]
        if not values or bad:
            raise _resize10_refusal(label, f"its scales {values} are not all finite and > 0",
                                    "fix the scales")
        if np.asarray(constant).dtype != np.float32:
            raise _resize10_refusal(label, f"its scales have element type "
                                    f"{np.asarray(constant).dtype}", "store them as float32")
    if mode == "nearest":
        nearest_mode = as_text(attribute_value(node, "nearest_mode", b"round_prefer_floor"))
        if nearest_mode not in ("floor", "ceil"):
            raise _resize10_refusal(
                label, f"nearest_mode is {nearest_mode!r}; onnxruntime's Resize-10 rounds "
                "down where a scale is >= 1 and up where it is below 1", keep)
        sides = ([side_of(v) for v in values] if constant is not None
                 else scale_sides(bounds(), scales_name))
        if rounding_of(sides) != nearest_mode and not (
                sides is not None and all(side == "one" for side in sides)):
            where = ">= 1" if nearest_mode == "floor" else "<= 1"
            what = "are" if constant is not None else (
                f"are computed at run time ({site.scope.origin(scales_name)}) and")
            raise _resize10_refusal(
                label, f"nearest_mode is {nearest_mode!r}, and its scales {what} not shown to "
                f"be {where} on every axis for every input size; onnxruntime's Resize-10 "
                "rounds down where a scale is >= 1 and up where it is below 1", keep)
    return mode, scales


def _never_shrinks(site: Site, types: dict[str, TypeProto], scales: str) -> bool:
    """Whether computed scales are >= 1 on every axis for every input size, as far as the
    graph shows (``_bounds``: PyTorch's ``size=`` export, for one)."""
    bounds = ShapeBounds(site, types)
    return rounding_of(scale_sides(bounds, scales)) == "floor"


def _computed_scales_fix(site: Site, types: dict[str, TypeProto], scales: str) -> Fix:
    """The fix for computed scales that Upsample-7 cannot take: fold_scales where it makes
    them a constant Upsample-7 takes (>= 1), and Upsample-9, which takes them as they are."""
    value = static_value(site, types, scales)
    opset9 = Action("downgrade", (("opset", 9),))
    if value is not None and value.size and bool(np.all(value >= 1)):
        return Fix("{0} first (they depend on constants and static shapes only), or {1}",
                   (Action("fold_scales"), opset9))
    also = ("; where the input always has one size, fold's --input-shape makes them a "
            "constant first") if from_shapes(site, scales) else ""
    return Fix(f"{{0}} (Upsample-9 takes scales computed at run time){also}", (opset9,))


def _check_ops_exist(model: onnx.ModelProto, target: int) -> None:
    for site in walk(model):
        for index, node in enumerate(site.owner.node):
            if node.domain not in DEFAULT_DOMAINS:
                continue
            try:
                onnx.defs.get_schema(node.op_type, target)
            except onnx.defs.SchemaError:
                raise UpsampleError(
                    f"node {node_label(site, node, index)!r} is a {node.op_type}, which opset "
                    f"{target} does not have; a model with it cannot be brought to opset "
                    f"{target}") from None


def downgrade(model: ModelLike, opset: int = DEFAULT_DOWNGRADE_OPSET) -> onnx.ModelProto:
    """Turn every Upsample-equivalent ``Resize`` into ``Upsample``, in a model at opset 9
    (or 7, 8); or every Resize-10-equivalent one into ``Resize-10``, at opset 10.

    For runtimes that know ``Upsample`` but not ``Resize`` (old TensorRT, OpenVINO, ncnn,
    CoreML converters). A ``Resize`` means exactly Upsample when it gives scales (no sizes, no
    axes), scales that are >= 1 where constant, mode ``nearest`` with
    ``coordinate_transformation_mode="asymmetric"`` and ``nearest_mode="floor"`` or mode
    ``linear`` with ``asymmetric`` (Resize-10 always is), no antialias. Every ``Upsample``
    already in the model (versions 1, 7, 9, 10) is rewritten in the target's form too, and
    every other node goes through onnx's version converter.

    At opset 10 the target is Resize-10 as onnxruntime runs it, never the deprecated
    Upsample-10 (onnx's checker and onnxruntime refuse it): what :func:`upgrade` made of an
    opset-10 model comes back with the same outputs. A Resize-11 or later is Resize-10 where
    it is ``asymmetric`` with no antialias or axes and, for nearest, has
    ``nearest_mode="floor"`` with scales >= 1 or ``"ceil"`` with scales <= 1 on every axis
    for every input size (constant, or computed from shapes as PyTorch's ``size=`` export
    does: proven from the graph, as ``upgrade`` proves it); constant sizes of a static input
    become scales where onnxruntime's Resize-10 gives exactly those sizes. An Upsample becomes
    Resize-10 with its scales.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk); it is not modified.
    opset : {9, 8, 7, 10}
        The target opset: 9 writes Upsample-9 (scales as an input); 7 and 8 write
        Upsample-7 (a scales attribute, so the scales must be constant); 10 writes Resize-10.

    Returns
    -------
    onnx.ModelProto
        A new model at ``opset`` that passes ``onnx.checker.check_model``; onnxruntime gives
        bit-identical outputs.

    Raises
    ------
    TypeError
        If ``model`` is not a ModelProto or ``opset`` not an integer.
    UpsampleError
        Naming the node: a Resize that is not Upsample-equivalent (at opset 10: not
        Resize-10-equivalent), scales computed at run time into opset 7 or 8, a node that
        does not exist at ``opset`` or that onnx's converter cannot bring there.

    Warns
    -----
    UpsampleWarning
        For a Resize whose scales arrive at run time: it shrinks where they fall below 1,
        while the Upsample it becomes refuses them.

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 4, 4])
    >>> s = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    >>> node = helper.make_node("Resize", ["X", "", "s"], ["Y"], mode="nearest",
    ...                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    >>> new = downgrade(helper.make_model(helper.make_graph([node], "g", [x], [y], [s]),
    ...                                   opset_imports=[helper.make_opsetid("", 13)]))
    >>> [(n.op_type, list(n.input)) for n in new.graph.node], new.opset_import[0].version
    ([('Upsample', ['X', 's'])], 9)
    """
    model = model_of(model)
    # an opset above the newest onnx knows cannot be written either: the fix names that one
    higher = (min(opset, newest_opset()) if isinstance(opset, int) and opset > DOWNGRADE_OPSETS[-1]
              else DEFAULT_UPGRADE_OPSET)
    target = require_opset(opset, DOWNGRADE_OPSETS[0], DOWNGRADE_OPSETS[-1], Fix(
        f"downgrade writes Upsample-7 (opsets 7 and 8), Upsample-9 (opset 9) or Resize-"
        f"{RESIZE_OPSET} (opset {RESIZE_OPSET}); for opset {DOWNGRADE_OPSETS[-1] + 1} and "
        "later use {0}", (Action("upgrade", (("opset", higher),)),)))
    source = default_opset(model.opset_import)
    if source is None:
        raise UpsampleError("the model imports no default-domain ('' or 'ai.onnx') opset; "
                            "add one with onnx.helper.make_opsetid('', N)")
    job = start_job(model)
    takes_input = takes_scales_input(target)  # Upsample-9; Upsample-7 takes an attribute
    writes_resize10 = is_resize10_opset(target)
    analyses: dict[int, ShapeBounds] = {}

    def bounds_of(site: Site, types: dict[str, TypeProto]) -> Callable[[], ShapeBounds]:
        """What is known of ``site``'s values, analysed once and only where asked for."""
        key = id(site.owner)

        def bounds() -> ShapeBounds:
            if key not in analyses:
                analyses[key] = ShapeBounds(site, types)
            return analyses[key]
        return bounds

    def to_resize10(site: Site, index: int, node: onnx.NodeProto,
                    types: dict[str, TypeProto]) -> None:
        """Write ``node`` as a pending Resize-10 (the target has no Upsample it may write)."""
        label = node_label(site, node, index)
        if is_upsample(node):
            # Upsample-9 is Resize-10 with scales >= 1, which upsample_info requires
            info = upsample_info(site, index, node, types, f"downgrade to opset {target}")
            assert info.mode is not None
            if info.scales is not None and info.scales.size == 0:
                # a rank-0 X, which Upsample copies and Resize refuses (as upgrade writes it)
                job.orphans.update(name for name in node.input[1:] if name)
                del node.input[1:]
                del node.attribute[:]
                node.op_type, node.domain = "Identity", ""
                return
            set_pending(node, "Resize", [node.input[0], scales_input(job, site, info)],
                        {"mode": info.mode})
            return
        if is_resize10_opset(site.opset):
            return  # already Resize-10
        mode, scales = _resize_as_resize10(site, node, label, types, bounds_of(site, types))
        if not isinstance(scales, str):
            scales = job.add_constant(site, f"{node.name or node.output[0]}_scales", scales)
        job.orphans.update(name for name in node.input[1:] if name and name != scales)
        set_pending(node, "Resize", [node.input[0], scales], {"mode": mode})

    def pending_upsample(site: Site, node: onnx.NodeProto, label: str, mode: str,
                         scales_name: str, constant: np.ndarray | None,
                         types: dict[str, TypeProto]) -> None:
        if takes_input:
            set_pending(node, "Upsample", [node.input[0], scales_name], {"mode": mode})
            return
        if constant is None:
            raise FixableError(
                f"cannot downgrade node {label!r} to opset {target}: its scales are computed "
                f"at run time ({site.scope.origin(scales_name)}) and Upsample-7 takes them as "
                "an attribute", _computed_scales_fix(site, types, scales_name),
                joiner="; fix: ")
        values = np.asarray(constant, dtype=np.float32).reshape(-1)
        job.orphans.update(name for name in node.input[1:] if name)
        set_pending(node, "Upsample", [node.input[0]],
                    {"mode": mode, "scales": [float(v) for v in values]})

    def visit(site: Site, index: int, node: onnx.NodeProto,
              types: dict[str, TypeProto]) -> None:
        label = node_label(site, node, index)
        if writes_resize10:
            if is_upsample(node) or (node.op_type == "Resize"
                                     and node.domain in DEFAULT_DOMAINS):
                to_resize10(site, index, node, types)
        elif is_upsample(node):
            info = upsample_info(site, index, node, types, f"downgrade to opset {target}")
            assert info.mode is not None
            if takes_input:
                scales_name = scales_input(job, site, info)
                pending_upsample(site, node, label, info.mode, scales_name, info.scales, types)
            else:
                pending_upsample(site, node, label, info.mode, info.scales_input or "",
                                 info.scales, types)
        elif node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS:
            try:
                mode, scales_name = _resize_as_upsample(site, node, label)
            except UpsampleError as error:
                try:  # what Upsample cannot say (a shrinking nearest, sizes) Resize-10 may
                    _resize_as_resize10(site, node, label, types, bounds_of(site, types))
                except UpsampleError:
                    raise error from None
                raise FixableError(str(error), Fix(
                    f"or {{0}}, where it is a Resize-{RESIZE_OPSET} with the same outputs",
                    (Action("downgrade", (("opset", RESIZE_OPSET),)),))) from None
            constant = site.scope.constant(scales_name)
            if constant is None and takes_input and not _never_shrinks(site, types,
                                                                       scales_name):
                # a model that shrank must not silently become one that refuses to
                warnings.warn(
                    f"Resize node {label!r}: its scales arrive at run time "
                    f"({site.scope.origin(scales_name)}); the Resize shrinks where they fall "
                    "below 1, but the Upsample-9 it becomes refuses them ('Upsample only "
                    "enlarges'): runs whose scales shrink fail in the downgraded model",
                    UpsampleWarning, stacklevel=3)
            pending_upsample(site, node, label, mode, scales_name, constant, types)

    each_node(job, visit)
    job.flush()
    _check_ops_exist(job.model, target)
    converted = convert_rest(job, source, target)

    def build(site: Site, node: onnx.NodeProto, job: Job) -> None:
        node.domain = ""

    return finish_job(converted, model, target, build, job)
