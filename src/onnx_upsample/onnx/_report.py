"""What the model tools print: the rows of ``onnx-upsample inspect`` (one per ``Upsample``
node, with shapes inferred), and text tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TypeProto

from .._errors import UpsampleError
from ._graphs import element_name, is_upsample, node_label
from ._infer import ort_shapes, rank_of, site_type_maps
from ._node import describe

__all__ = ["NodeRow", "scales_words", "shape_words", "table", "upsample_rows"]


@dataclass(frozen=True)
class NodeRow:
    """One Upsample node as ``inspect`` shows it."""

    node: str
    form: str
    mode: str
    scales: str
    input_shape: str
    output_shape: str


def _shape_text(value_type: TypeProto | None) -> str:
    if value_type is None or not value_type.HasField("tensor_type"):
        return "?"
    tensor = value_type.tensor_type
    elem = element_name(tensor.elem_type) if tensor.elem_type else "?"
    if not tensor.HasField("shape"):
        return f"{elem}[?]"
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
            for d in tensor.shape.dim]
    return f"{elem}[{','.join(dims)}]"


def _scales_text(scales: np.ndarray | None, dynamic: bool) -> str:
    if scales is None:
        return "dynamic" if dynamic else "?"
    return "[" + ",".join(f"{float(s):g}" for s in scales) + "]"


def upsample_rows(model: onnx.ModelProto) -> list[NodeRow]:
    """One :class:`NodeRow` per Upsample node of ``model`` (subgraphs and functions too)."""
    try:
        typed = ort_shapes(model)
    except UpsampleError:
        typed = model
    rows = []
    for site, types in site_type_maps(typed):
        for index, node in enumerate(site.owner.node):
            if not is_upsample(node):
                continue
            label = node_label(site, node, index)
            x_type = types.get(node.input[0]) if node.input else None
            info = describe(node, label, site.opset, site.scope, rank_of(x_type))
            version = info.version
            form = "?" if version is None else f"v{version}"
            if info.form is not None and site.opset is not None:
                form += f" (opset {site.opset})"
            y_type = types.get(node.output[0]) if node.output else None
            rows.append(NodeRow(
                node=label,
                form=form,
                mode=info.mode_name,
                scales=_scales_text(info.scales, bool(info.scales_input)),
                input_shape=_shape_text(x_type),
                output_shape=_shape_text(y_type),
            ))
    return rows


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, with a rule under the headers."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows,
                                                                       strict=True)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
             .rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def shape_words(shape: Sequence[int] | None) -> str:
    """A shape a run gave, in a table: ``1x16x26x26``, ``scalar``, ``?`` where unknown."""
    return "?" if shape is None else "x".join(map(str, shape)) or "scalar"


def scales_words(scales: Sequence[float] | None) -> str:
    """Scales a run used, in a table: ``[1,1,2,2]``, ``?`` where unknown."""
    return "?" if scales is None else "[" + ",".join(f"{s:g}" for s in scales) + "]"
