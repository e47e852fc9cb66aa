"""``upgrade``: every Upsample becomes a Resize with the same outputs.

onnx's 10->11 Resize adapter would give an Upsample-equivalent Resize the new defaults
(``half_pixel``, ``round_prefer_floor``) and change its results (docs/peers.md §6); the Resize
nodes written here carry ``coordinate_transformation_mode="asymmetric"`` and
``nearest_mode="floor"`` instead, which onnxruntime runs bit-identically.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import TypeProto

from ..._errors import UpsampleError, UpsampleWarning
from ..._spec.modes import MODES
from ..._spec.versions import (
    DEFAULT_DOWNGRADE_OPSET,
    DEFAULT_UPGRADE_OPSET,
    RESIZE_OPSET,
    RESIZE_OPTIONAL_ROI_OPSET,
    UPSAMPLE_OPSETS,
    is_resize10_opset,
)
from .._fixes import Action, Fix, FixableError
from .._graphs import (
    ModelLike,
    Site,
    default_opset,
    is_resize10,
    is_upsample,
    model_of,
    node_label,
)
from .._infer import rank_of
from .._modes import lower_mode_case
from .._node import shrinks
from .._resize10 import resize10_rounding
from .._shape_bounds import ShapeBounds
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

__all__ = ["DEFAULT_UPGRADE_OPSET", "upgrade"]


def _resize10_nearest_mode(site: Site, node: onnx.NodeProto, label: str) -> str:
    """``floor`` or ``ceil``: how onnxruntime's Resize-10 picks nearest pixels under the
    node's constant scales."""
    return _nearest_mode_of(site.scope.constant(node.input[1]), f"Resize-10 node {label!r}")


def _nearest_mode_of(scales: np.ndarray | None, what: str) -> str:
    """``floor`` or ``ceil``: how onnxruntime's Resize-10 picks nearest pixels for
    ``scales`` (``what`` names the node in the refusal)."""
    if scales is None:
        raise UpsampleError(
            f"cannot upgrade {what}: its scales are computed at run time, "
            "and onnxruntime's Resize-10 rounds nearest indices down when a scale is >= 1 and "
            "up when it is below 1, which no single nearest_mode of Resize-11 expresses "
            "without knowing the scales; fix: make the scales a constant (onnx-upsample's "
            "scale folding handles Upsample only, not Resize) or convert this node by hand")
    values = [float(v) for v in np.asarray(scales).reshape(-1)]
    if all(v >= 1 for v in values):
        return "floor"
    if all(v <= 1 for v in values):
        return "ceil"
    raise UpsampleError(
        f"cannot upgrade {what}: its scales {values} enlarge some axes and "
        "shrink others; onnxruntime's Resize-10 rounds nearest indices down on the first and "
        "up on the second, which no single nearest_mode of Resize-11 expresses; fix: split it "
        "into two Resize nodes (one enlarging, one shrinking) first")



def _opset_fix(opset: object, newest: int) -> Fix:
    """The fix for an opset upgrade cannot write: one it can write, the way it lies."""
    writes = (f"upgrade writes Resize at opsets {RESIZE_OPSET} to {newest} (the newest the "
              "installed onnx knows)")
    if isinstance(opset, int) and opset > newest:
        return Fix(f"{writes}; use {{0}}", (Action("upgrade", (("opset", newest),)),))
    lower = (opset if isinstance(opset, int) and opset in UPSAMPLE_OPSETS
             else DEFAULT_DOWNGRADE_OPSET)
    return Fix(f"{writes}; for opsets {UPSAMPLE_OPSETS[0]}-{UPSAMPLE_OPSETS[-1]} (Upsample) "
               "use {0}", (Action("downgrade", (("opset", lower),)),))


def _downscale_warning(label: str, scales: list[float], mode: str, nearest_mode: str) -> str:
    """What ``upgrade(allow_downscale=True)`` says it wrote for a node that shrinks."""
    rounding = f", nearest_mode={nearest_mode!r}" if mode == "nearest" else ""
    return (f"Upsample node {label!r}: scales {scales} shrink, which Upsample forbids; the "
            "node becomes the Resize it literally means, as Resize-10 is Upsample-9 without "
            "the rule that scales are >= 1 (coordinate_transformation_mode='asymmetric'"
            f"{rounding}: onnxruntime's Resize-10 rounds so when shrinking). The exporter may "
            "have meant another convention: TensorFlow's tf.image.resize, for one, samples at "
            "half-pixel centres (coordinate_transformation_mode='half_pixel'); compare the "
            "upgraded model's output with the source framework's on one input")


def upgrade(model: ModelLike, opset: int | None = DEFAULT_UPGRADE_OPSET, *,
            allow_downscale: bool = False) -> onnx.ModelProto:
    """Replace every ``Upsample`` by a ``Resize`` with the same outputs, at opset ``opset``.

    Every ``Upsample`` node (versions 1, 7, 9, 10; in the main graph, in ``If``/``Loop``/
    ``Scan`` subgraphs and in model-local functions) becomes a ``Resize`` node that
    onnxruntime runs bit-identically: ``coordinate_transformation_mode="asymmetric"``,
    ``nearest_mode="floor"`` for nearest, ``mode="linear"`` for linear (also for version 1's
    ``bilinear``), the scales copied bit for bit (attribute scales become a float32
    initializer; a scales input stays as it is, constant or computed). Every other node goes
    through onnx's version converter. ``Resize-10`` nodes already in an opset-10 model get the
    same treatment (the converter's 10->11 step would change their results, docs/peers.md §6):
    onnxruntime's Resize-10 rounds nearest indices down on an axis whose scale is >= 1 and up
    below 1, so a nearest one becomes ``nearest_mode="floor"`` or ``"ceil"`` where its scales
    are on one side of 1 on every axis for every input size, constant or computed from the
    input's shape (PyTorch's ``size=`` export: proven from the graph). The declared shapes
    leave unknown a size onnx's own inference gives otherwise (see :func:`infer_shapes`), so
    the model passes ``onnx.checker.check_model(full_check=True)`` where the original's nodes
    do.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or the path of its .onnx file (read safely: external data must lie in
        its folder; tensors over 1 MiB stay on disk); it is not modified.
    opset : int, optional
        The target default-domain opset, from 10 to the newest onnx knows; 18 by default
        (loaded by the runtimes in use), None for the newest.
    allow_downscale : bool, default False
        Convert an Upsample whose constant scales shrink (below 1, which Upsample refuses:
        tf2onnx wrote ``tf.image.resize`` so at opset 9) into the Resize it literally means
        (Resize-10 is Upsample-9 without the rule that scales are >= 1): asymmetric
        coordinates, and the nearest rounding of onnxruntime's Resize-10 (``ceil`` when
        every scale is <= 1), with an :class:`~onnx_upsample.UpsampleWarning` that the
        exporter may have meant another convention. Without it such a node is an
        ``UpsampleError`` whose fix names this option.

    Returns
    -------
    onnx.ModelProto
        A new model at ``opset`` that passes ``onnx.checker.check_model``, with the names,
        doc strings, metadata and declared graph outputs of the original.

    Raises
    ------
    TypeError
        If ``model`` is not a ModelProto or ``opset`` not an integer.
    UpsampleError
        If an Upsample cannot be expressed as a Resize with the same outputs (no inputs,
        missing attributes, an unknown mode, constant scales below 1 or not finite, version
        1 on input that is not 4-D), nor a nearest Resize-10 (scales that enlarge some axes
        and shrink others, or computed ones not shown to lie on one side of 1 for every
        input size: ``check`` reports those too), if ``opset`` is below 10, above the newest
        opset onnx knows or below the model's, or if onnx's converter fails on another node.
        The message names the node and says why.

    Notes
    -----
    ``ai.onnx`` Resize, versions 10, 11, 13, 18 and 19; Upsample versions 1, 7, 9, 10.
    Scales computed at run time are kept: Resize takes them too, but where they fall below
    1 at run time Resize shrinks while Upsample fails.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 4, 4])
    >>> node = helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1, 2, 2])
    >>> old = helper.make_model(helper.make_graph([node], "g", [x], [y]),
    ...                         opset_imports=[helper.make_opsetid("", 7)])
    >>> new = upgrade(old, opset=13)
    >>> [(n.op_type, n.input[1] == "") for n in new.graph.node]
    [('Resize', True)]
    """
    model, cases = lower_mode_case(model_of(model))
    for case in cases:
        warnings.warn(case.describe(), UpsampleWarning, stacklevel=2)
    newest = newest_opset()
    target = newest if opset is None else require_opset(opset, RESIZE_OPSET, newest,
                                                        _opset_fix(opset, newest))
    source = default_opset(model.opset_import)
    if source is None:
        raise UpsampleError("the model imports no default-domain ('' or 'ai.onnx') opset; "
                            "add one with onnx.helper.make_opsetid('', N)")
    if source > target:
        raise FixableError(
            f"the model imports opset {source}, above the target opset {target}; upgrade "
            "never lowers the opset",
            Fix("use {0} or a later opset", (Action("upgrade", (("opset", source),)),)))
    job = start_job(model)
    analyses: dict[int, ShapeBounds] = {}

    def bounds_of(site: Site, types: dict[str, TypeProto]) -> ShapeBounds:
        key = id(site.owner)
        if key not in analyses:
            analyses[key] = ShapeBounds(site, types)
        return analyses[key]

    def visit(site: Site, index: int, node: onnx.NodeProto,
              types: dict[str, TypeProto]) -> None:
        if is_upsample(node):
            info = upsample_info(site, index, node, types, f"upgrade to opset {target}",
                                 allow_downscale)
            if info.scales is not None and info.scales.size == 0:
                # a rank-0 X: Upsample copies it, and Resize cannot say so (ORT refuses an
                # empty scales tensor at run time): an Identity is the same, at any opset
                del node.input[1:]
                del node.attribute[:]
                node.op_type, node.domain = "Identity", ""
                return
            if info.schema.rank is not None and rank_of(types.get(node.input[0])) is None:
                warnings.warn(
                    f"Upsample node {info.label!r}: the rank of X is unknown; Upsample-"
                    f"{info.schema.version} is {info.schema.rank}-D only, so the Resize gets "
                    "the scales [1, 1, height_scale, width_scale]", UpsampleWarning,
                    stacklevel=3)
            scales = scales_input(job, site, info)
            assert info.mode is not None
            nearest_mode = "floor"
            values = [] if info.scales is None else [float(v) for v in info.scales]
            if any(shrinks(value) for value in values):
                if info.mode == "nearest":
                    nearest_mode = _nearest_mode_of(info.scales,
                                                    f"Upsample node {info.label!r}")
                warnings.warn(_downscale_warning(info.label, values, info.mode, nearest_mode),
                              UpsampleWarning, stacklevel=3)
            set_pending(node, "Resize", [node.input[0], scales],
                        {"mode": info.mode, "nearest_mode": nearest_mode})
        elif is_resize10(node, site.opset) and not is_resize10_opset(target):
            label = node_label(site, node, index)
            mode = as_text(attribute_value(node, "mode", b"nearest"))
            if mode not in MODES or len(node.input) != 2 or not node.input[1]:
                return  # invalid Resize-10: let the converter report it
            rounding = "floor"
            if mode == "nearest":
                if site.scope.constant(node.input[1]) is not None:
                    rounding = _resize10_nearest_mode(site, node, label)
                else:
                    found = resize10_rounding(site, node, label, bounds_of(site, types), types)
                    if found.rounding is None:
                        assert found.fix is not None
                        raise FixableError(f"cannot upgrade to opset {target}: {found.problem}",
                                           found.fix, joiner="; fix: ")
                    rounding = found.rounding
            set_pending(node, "Resize", list(node.input),
                        {"mode": mode, "nearest_mode": rounding})

    each_node(job, visit)
    job.flush()
    converted = convert_rest(job, source, target)
    roi_names: dict[int, str] = {}

    def build(site: Site, node: onnx.NodeProto, job: Job) -> None:
        mode = as_text(attribute_value(node, "mode", b"nearest"))
        nearest_mode = as_text(attribute_value(node, "nearest_mode", b"floor"))
        x, scales = node.input[0], node.input[1]
        if is_resize10_opset(target):
            inputs = [x, scales]
            attributes: dict[str, object] = {"mode": mode}
        else:
            if target >= RESIZE_OPTIONAL_ROI_OPSET:
                roi = ""
            else:
                key = id(site.owner)
                if key not in roi_names:
                    roi_names[key] = job.add_constant(site, "upsample_roi",
                                                      np.zeros(0, np.float32))
                roi = roi_names[key]
            inputs = [x, roi, scales]
            attributes = {"mode": mode, "coordinate_transformation_mode": "asymmetric"}
            if mode == "nearest":
                attributes["nearest_mode"] = nearest_mode
        set_pending(node, "Resize", inputs, attributes)
        node.domain = ""

    return finish_job(converted, model, target, build, job)
