"""onnx-upsample: the ONNX ``Upsample`` operator (versions 1, 7, 9, 10), exact and complete.

Bit-identical to onnxruntime 1.32 wherever ORT has a kernel, and defined for every ONNX
element type, every rank and every scale >= 1 (see the project's contract).

Public names: :func:`upsample`, :func:`output_shape`, :func:`set_num_threads`,
:class:`UpsampleError`, :class:`UpsampleWarning`, and the slow oracle
:func:`onnx_upsample.reference.upsample`. ONNX model tools live in ``onnx_upsample.onnx``
(extra ``onnx``) and chunked arrays in ``onnx_upsample.dask`` (extra ``dask``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import reference
from ._api import output_shape, upsample
from ._errors import UpsampleError, UpsampleWarning
from ._threads import set_num_threads

try:
    __version__ = version("onnx-upsample")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "UpsampleError",
    "UpsampleWarning",
    "output_shape",
    "reference",
    "set_num_threads",
    "upsample",
]
