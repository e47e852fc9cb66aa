"""What a conversion rewrites, counted by kind (``Upsample-7 -> Upsample-9: 2``).

``upgrade`` and ``downgrade`` return the model only; a tool that reports what they did (the
command line) counts the rewrites on the original with :func:`rewrites`, which follows the
same rules as the converters: every Upsample is rewritten, Resize only in the cases the
converters take.
"""

from __future__ import annotations

from typing import Literal

import onnx

from ..._spec.versions import DEFAULT_DOMAINS, is_resize10_opset, version_for_opset
from .._graphs import Site, is_upsample, node_label, walk
from .._node import describe

__all__ = ["rewrites"]


def _resize_version(opset: int) -> str:
    try:
        return str(onnx.defs.get_schema("Resize", opset).since_version)
    except onnx.defs.SchemaError:  # a Resize at an opset without one: the converter refuses
        return "?"


def rewrites(model: onnx.ModelProto, opset: int,
             direction: Literal["upgrade", "downgrade"]) -> dict[str, int]:
    """Count, by kind, the nodes that ``upgrade`` or ``downgrade`` to ``opset`` rewrites.

    Parameters
    ----------
    model : onnx.ModelProto
        The original (main graph, subgraphs and model-local functions are counted).
    opset : int
        The target opset.
    direction : {"upgrade", "downgrade"}
        Which conversion.

    Returns
    -------
    dict of str to int
        ``"Upsample-7 -> Resize-13"``, ``"Resize-13 -> Upsample-9"``, ``"Upsample-9 ->
        Upsample-9 (unchanged)"``, ...: how many nodes of each kind, in the order first met.
    """
    counts: dict[str, int] = {}
    for site in walk(model):
        for index, node in enumerate(site.owner.node):
            kind = _kind(site, index, node, opset, direction)
            if kind:
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def _kind(site: Site, index: int, node: onnx.NodeProto, opset: int, direction: str) -> str:
    source = site.opset
    if is_upsample(node):
        info = describe(node, node_label(site, node, index), source, site.scope)
        before = f"Upsample-{info.version}" if info.version else "Upsample"
        if direction == "upgrade" or is_resize10_opset(opset):  # downgrade writes Resize-10
            if info.scales is not None and info.scales.size == 0:
                return f"{before} -> Identity (rank-0 input)"
            return f"{before} -> Resize-{_resize_version(opset)}"
        after = version_for_opset(opset).version
        if info.version == after:
            return f"{before} -> Upsample-{after} (unchanged)"
        return f"{before} -> Upsample-{after}"
    if node.op_type != "Resize" or node.domain not in DEFAULT_DOMAINS or source is None:
        return ""
    before = f"Resize-{_resize_version(source)}"
    if direction == "downgrade":
        if is_resize10_opset(opset):
            resize = f"Resize-{_resize_version(opset)}"
            return (f"{before} -> {resize} (unchanged)" if before == resize
                    else f"{before} -> {resize}")
        return f"{before} -> Upsample-{version_for_opset(opset).version}"
    if is_resize10_opset(source) and not is_resize10_opset(opset):
        return f"{before} -> Resize-{_resize_version(opset)}"
    return ""
