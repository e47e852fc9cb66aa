"""Name the resampling convention behind another runtime's ONNX ``Upsample`` output.

Runtimes disagree with ``Upsample`` (versions 7, 9, 10; version 1 is the 4-D case) silently:
many turn the node into a ``Resize`` (opset 10/11/13/18) with some
``coordinate_transformation_mode`` and ``nearest_mode``, compute the source coordinate by
multiplying with a reciprocal (PyTorch), in float64 (the ONNX reference evaluator), blend
axis by axis instead of summing corners, fuse the sum's multiplies and adds (onnxruntime's
aarch64 build), round the output size (TVM) or round the exact product, round integer
results or convert an overflow as x86 does, or apply the scales to the wrong axes.
:func:`explain` takes the input, the runtime's output, the scales and the mode, and names the
convention that reproduces the output exactly, bit for bit, when the output departs from
Upsample in enough places to tell it from chance (else it says the output coincides with
it).

The package is layered one way: :mod:`._conventions` (the conventions as data: size rules,
coordinate transformations, roundings, blends, names) <- :mod:`._resample` (each
convention's output at some positions) <- :mod:`._search` (sampling, grouping, exact and
closest matches, narrowed types) <- :mod:`._verdict` (the arguments and the verdict).
Upsample's own rules (output size, nearest index, linear taps, interpolated axes, modes,
element types, argument checks) come from :mod:`onnx_upsample._spec`, and Upsample's own
output from :func:`onnx_upsample.upsample`. numpy only: no onnx, no onnxruntime.
"""

from __future__ import annotations

from ._conventions import Convention, conventions
from ._verdict import Explanation, explain

__all__ = ["Convention", "Explanation", "conventions", "explain"]
