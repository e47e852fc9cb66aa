"""Element types of ONNX ``Upsample`` and how linear mode computes each (numpy only).

ONNX allows 15 element types for Upsample-7/9/10; onnx-upsample also runs bfloat16
(``ml_dtypes``), numpy ``str``/``bytes`` arrays and object arrays (ONNX strings).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._errors import UpsampleError

_ACCUMULATE_IN_F32 = frozenset("float16 bfloat16 float32 int8 uint8 int16 uint16 int32".split())
_ACCUMULATE_IN_F64 = frozenset("float64 int64 uint32 uint64".split())
SUPPORTED_NAMES = (
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, "
    "float64, complex64, complex128, bfloat16 (ml_dtypes), str, bytes, object (ONNX strings)"
)


@dataclass(frozen=True)
class ElementType:
    """What onnx-upsample knows about one element type.

    ``name`` is the canonical name (``float32``, ``bfloat16``, ``str``...); ``accumulator``
    is the real type linear mode computes in (None where linear is not defined);
    ``parts`` is 2 for complex types (real and imaginary parts computed separately), else 1.
    """

    name: str
    accumulator: np.dtype | None
    parts: int

    @property
    def linear_ok(self) -> bool:
        return self.accumulator is not None

    @property
    def is_integer(self) -> bool:
        return self.name.startswith(("int", "uint"))


_ITEMSIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16)}
_PREFIX = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}


def _numpy_name(dtype: np.dtype) -> str | None:
    """Canonical name of a plain numpy numeric dtype ('q' and 'l' are both int64)."""
    if dtype.type.__module__ != "numpy" or dtype.itemsize not in _ITEMSIZES.get(dtype.kind, ()):
        return None
    return "bool" if dtype.kind == "b" else f"{_PREFIX[dtype.kind]}{8 * dtype.itemsize}"


def is_bfloat16(dtype: np.dtype) -> bool:
    """True for ml_dtypes' bfloat16 (checked without importing ml_dtypes)."""
    return dtype.name == "bfloat16" and dtype.type.__module__.startswith("ml_dtypes")


def element_type(dtype: np.dtype) -> ElementType:
    """Classify ``dtype`` or raise :class:`UpsampleError` naming the supported types."""
    name = _numpy_name(dtype)
    if name is None:
        name = {"U": "str", "S": "bytes", "O": "object"}.get(dtype.kind)
    if name is None and is_bfloat16(dtype):
        name = "bfloat16"
    if name is None:
        raise UpsampleError(
            f"x has element type {dtype.name!r} ({dtype.str}), which ONNX Upsample does not "
            f"define; expected one of: {SUPPORTED_NAMES}; convert x with x.astype(...) first"
        )
    if name in _ACCUMULATE_IN_F32:
        return ElementType(name, np.dtype(np.float32), 1)
    if name in _ACCUMULATE_IN_F64:
        return ElementType(name, np.dtype(np.float64), 1)
    if name == "complex64":
        return ElementType(name, np.dtype(np.float32), 2)
    if name == "complex128":
        return ElementType(name, np.dtype(np.float64), 2)
    return ElementType(name, None, 1)
