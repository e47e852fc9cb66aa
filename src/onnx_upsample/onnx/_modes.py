"""Upsample modes written in the case old converters wrote ('NEAREST', 'BILINEAR'), in
lower case: what ``upgrade`` does (with a warning) and what a verification does to run the
original in onnxruntime, which refuses them. Lower case changes nothing else: the modes
mean what they meant."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ._graphs import is_upsample, node_label, walk
from ._node import case_fixed, describe

__all__ = ["ModeCase", "lower_mode_case"]


@dataclass(frozen=True)
class ModeCase:
    """One mode written in lower case: the node, the name it had, the name it has."""

    node: str
    written: str
    lower: str

    def describe(self) -> str:
        """``Upsample node 'up': mode 'NEAREST' (...) is written 'nearest'``."""
        return (f"Upsample node {self.node!r}: mode {self.written!r} (the case old converters "
                "wrote, which onnx's checker and onnxruntime refuse) is written "
                f"{self.lower!r}")


def lower_mode_case(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[ModeCase]]:
    """``model``, or a copy whose Upsample modes in upper or mixed case are in lower case
    (the name the node's form takes: 'BILINEAR' is 'linear' in the version-7 and -9
    forms, 'bilinear' in version 1's), and what was changed."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    changes = []
    for site in walk(copy):
        for index, node in enumerate(site.owner.node):
            if not is_upsample(node):
                continue
            for attribute in node.attribute:
                if attribute.name != "mode" or attribute.type != onnx.AttributeProto.STRING:
                    continue
                name = attribute.s.decode("utf-8", "replace")
                label = node_label(site, node, index)
                lower = case_fixed(name, describe(node, label, site.opset, site.scope).form)
                if lower is not None:
                    attribute.s = lower.encode()
                    changes.append(ModeCase(label, name, lower))
    return (copy if changes else model), changes
