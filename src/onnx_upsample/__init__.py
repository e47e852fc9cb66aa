"""onnx-upsample: the ONNX ``Upsample`` operator (versions 1, 7, 9, 10), exact and complete.

Bit-identical to onnxruntime 1.32 wherever ORT has a kernel, and defined for every ONNX
element type, every rank and every scale >= 1 (see docs/semantics.md).

Public names: :func:`upsample`, :func:`output_shape`, :func:`set_num_threads`,
:func:`get_num_threads`, :class:`UpsampleError`, :class:`UpsampleWarning`, and the slow oracle
:func:`onnx_upsample.reference.upsample`. ONNX model tools live in ``onnx_upsample.onnx``
(extra ``onnx``) and chunked arrays in ``onnx_upsample.dask`` (extra ``dask``).
"""

from __future__ import annotations

from . import reference
from ._api import output_shape, upsample
from ._errors import UpsampleError, UpsampleWarning
from ._threads import get_num_threads, set_num_threads


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata on first use (importlib.metadata
    alone costs more than the rest of ``import onnx_upsample``)."""
    if name != "__version__":
        raise AttributeError(f"module 'onnx_upsample' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnx-upsample")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"

__all__ = [
    "UpsampleError",
    "UpsampleWarning",
    "get_num_threads",
    "output_shape",
    "reference",
    "set_num_threads",
    "upsample",
]
