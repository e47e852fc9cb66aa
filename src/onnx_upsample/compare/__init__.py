"""Why frameworks disagree about nearest upsampling: ONNX ``Upsample``'s nearest index maps
beside PyTorch's and OpenCV's, for one image, and a picture of them.

:func:`compare` gives, for an image and a scale per axis (height, width), ONNX Upsample's
nearest and linear results and three nearest *index maps*: for every output pixel, which
input pixel it copies under ONNX Upsample / onnxruntime 1.32, under PyTorch's
``interpolate(scale_factor=s)`` and under OpenCV's ``resize(dsize, INTER_NEAREST)``.
:func:`render` draws them side by side (each input pixel in its own colour, pixels where a
peer reads another input pixel than ONNX marked in red; needs Pillow). The command
``onnx-upsample compare`` prints and saves both.

ONNX's map is computed by :func:`onnx_upsample.upsample` itself, on an array of pixel
numbers (so the global no-resize rule applies too); the peers' maps come from their rules in
:mod:`onnx_upsample._spec.peers`, not from the libraries. Every rule takes the same scale:
the float32 value an ONNX file holds (1.7 is 1.7000000476837158 for all three).
"""

from __future__ import annotations

from ._draw import MAX_ZOOM, check_zoom, render
from ._maps import MAX_SIDE, Comparison, IndexMap, check_comparison, compare

__all__ = ["MAX_SIDE", "MAX_ZOOM", "Comparison", "IndexMap", "check_comparison", "check_zoom",
           "compare", "render"]
