"""``upgrade`` (Upsample -> Resize) and ``downgrade`` (Resize -> Upsample), outputs unchanged.

Both work the same way (``_pipeline``): every node whose meaning onnx's version converter
would change (or cannot carry) is first replaced by a *pending* node of a private domain,
which the converter leaves alone; the converter then brings every other node to the target
opset; last, each pending node becomes the target node. ``_upgrade`` and ``_downgrade`` hold
what each direction writes; ``_bridge`` says which nodes can go down an opset unchanged where
onnx has no down adapter.

Imports point one way: ``_upgrade``, ``_downgrade`` -> ``_pipeline`` -> ``_bridge``;
``_summary`` counts what a conversion rewrites, for reports.
"""

from __future__ import annotations

from ._downgrade import downgrade
from ._pipeline import newest_opset
from ._summary import rewrites
from ._upgrade import DEFAULT_UPGRADE_OPSET, upgrade

__all__ = ["DEFAULT_UPGRADE_OPSET", "downgrade", "newest_opset", "rewrites", "upgrade"]
