"""Element types of ONNX ``Upsample``: one table, one row per type (numpy only).

ONNX allows 15 element types for Upsample-7/9/10; onnx-upsample also runs bfloat16
(``ml_dtypes``), numpy ``str``/``bytes`` arrays and object arrays (ONNX strings). Each row
says how numpy names the type, how ONNX names it, which real type linear mode accumulates
in (none: linear is not defined), how many real parts an element has, which element code
the compiled linear kernel reads it as, and whether onnxruntime 1.32 has a kernel for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import UpsampleError
from .spelling import PYTHON, Spelling


@dataclass(frozen=True)
class ElementType:
    """What onnx-upsample knows about one element type.

    Attributes
    ----------
    name : str
        Canonical name: ``float32``, ``bfloat16``, ``str``, ``object``...
    onnx : str or None
        The ONNX type string (``tensor(float)``); None where ONNX has no such type.
    accumulator : numpy.dtype or None
        The real type linear mode computes in; None where linear is not defined.
    parts : int
        2 for complex types (real and imaginary parts computed separately), else 1.
    kernel : str or None
        The compiled linear kernel's element code (``T_<kernel>`` in the extension).
    ort : bool
        onnxruntime 1.32 has an Upsample kernel for it.
    package : str
        The package whose dtype it is, under its ``name``: ``numpy``, or ``ml_dtypes``
        (bfloat16; float8 types would be too).
    kind : str or None
        For text and object arrays, the numpy dtype kind that is this type whatever its
        width (``U``, ``S``, ``O``); None for types matched by name.
    note : str
        Said after the name where messages list the types (``bfloat16 (ml_dtypes)``).
    in_schema : bool
        Upsample-7/9/10's schema allows its ONNX type (onnx-upsample runs the others too).
    """

    name: str
    onnx: str | None
    accumulator: np.dtype | None
    parts: int = 1
    kernel: str | None = None
    ort: bool = False
    package: str = "numpy"
    kind: str | None = None
    note: str = ""
    in_schema: bool = True

    @property
    def linear_ok(self) -> bool:
        return self.accumulator is not None

    @property
    def is_integer(self) -> bool:
        return self.name.startswith(("int", "uint"))

    @property
    def is_float(self) -> bool:
        """Floating or complex: values compare with NaN rules and ULPs."""
        return self.name.startswith(("float", "bfloat", "complex"))


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

#: Every element type, in the order of the ONNX schema's type constraint (bfloat16, which
#: the schema does not allow, last).
TYPES: tuple[ElementType, ...] = (
    ElementType("uint8", "tensor(uint8)", _F32, kernel="UINT8", ort=True),
    ElementType("uint16", "tensor(uint16)", _F32, kernel="UINT16"),
    ElementType("uint32", "tensor(uint32)", _F64, kernel="UINT32"),
    ElementType("uint64", "tensor(uint64)", _F64, kernel="UINT64"),
    ElementType("int8", "tensor(int8)", _F32, kernel="INT8", ort=True),
    ElementType("int16", "tensor(int16)", _F32, kernel="INT16"),
    ElementType("int32", "tensor(int32)", _F32, kernel="INT32", ort=True),
    ElementType("int64", "tensor(int64)", _F64, kernel="INT64"),
    ElementType("float16", "tensor(float16)", _F32, kernel="HALF", ort=True),
    ElementType("float32", "tensor(float)", _F32, kernel="FLOAT32", ort=True),
    ElementType("float64", "tensor(double)", _F64, kernel="FLOAT64"),
    ElementType("str", "tensor(string)", None, kind="U"),
    ElementType("bytes", "tensor(string)", None, kind="S"),
    ElementType("object", "tensor(string)", None, kind="O", note="ONNX strings"),
    ElementType("bool", "tensor(bool)", None),
    ElementType("complex64", "tensor(complex64)", _F32, parts=2, kernel="FLOAT32"),
    ElementType("complex128", "tensor(complex128)", _F64, parts=2, kernel="FLOAT64"),
    ElementType("bfloat16", "tensor(bfloat16)", _F32, kernel="HALF", package="ml_dtypes",
                note="ml_dtypes", in_schema=False),
)
BY_NAME = {t.name: t for t in TYPES}
_BY_KIND = {t.kind: t for t in TYPES if t.kind is not None}
_BY_PACKAGE_AND_NAME = {(t.package, t.name): t for t in TYPES if t.kind is None}

#: The 15 ONNX type strings Upsample-7/9/10's schema allows (bfloat16 is not among them).
ONNX_TYPES: tuple[str, ...] = tuple(dict.fromkeys(
    t.onnx for t in TYPES if t.onnx is not None and t.in_schema))
#: The ONNX type strings onnxruntime 1.32 has an Upsample kernel for.
ORT_ONNX_TYPES: tuple[str, ...] = tuple(t.onnx for t in TYPES if t.ort and t.onnx)

def onnx_type_names(onnx_types: tuple[str, ...]) -> tuple[str, ...]:
    """The names of ONNX type strings (``tensor(float)`` -> ``float32``), in their order;
    ``tensor(string)`` is ``str``, the first of the three arrays that hold it."""
    return tuple(next(t.name for t in TYPES if t.onnx == onnx) for onnx in onnx_types)


def linear_defined_for_onnx(onnx_type: str) -> bool:
    """Whether linear mode is defined for the ONNX type string (for a model's X)."""
    return any(t.linear_ok for t in TYPES if t.onnx == onnx_type)


#: The types, as messages list them.
SUPPORTED_NAMES = ", ".join(f"{t.name} ({t.note})" if t.note else t.name for t in TYPES)


def find_element_type(dtype: np.dtype) -> ElementType | None:
    """The table's row for ``dtype``: by kind for text and objects, else by the package
    that defines the dtype and its name ('q' is numpy's int64, and so is 'l' where C's long
    has 8 bytes, int32 on Windows; numpy's longdouble is 'float128' on x86 Linux, no row, and
    'float64' where the compiler makes it a double), checked without importing ml_dtypes."""
    by_kind = _BY_KIND.get(dtype.kind)
    if by_kind is not None:
        return by_kind
    package = dtype.type.__module__.partition(".")[0]
    return _BY_PACKAGE_AND_NAME.get((package, dtype.name))


def type_name(dtype: np.dtype) -> str:
    """A dtype as numpy names it (``float32``, ``bfloat16``), with a byte order other than
    the machine's spelled out: the name messages use (never ``<f4``)."""
    dtype = np.dtype(dtype)
    if dtype.byteorder in ("=", "|") or dtype.isnative:
        return dtype.name
    return f"{dtype.name} ({'big' if dtype.byteorder == '>' else 'little'}-endian)"


def element_type(dtype: np.dtype, spelling: Spelling = PYTHON) -> ElementType:
    """Classify ``dtype`` or raise :class:`UpsampleError` naming the supported types."""
    row = find_element_type(dtype)
    if row is None:
        fix = ("save the array as one of these types first" if spelling.options
               else f"convert {spelling.x} with {spelling.x}.astype(...) first")
        raise UpsampleError(
            f"{spelling.x} has element type {dtype.name!r} ({dtype.str}), which ONNX Upsample "
            f"does not define; expected one of: {SUPPORTED_NAMES}; {fix}"
        )
    return row


def check_mode_defined(mode: str, etype: ElementType, spelling: Spelling = PYTHON) -> None:
    """Linear mode blends values: it is not defined for bool, strings and objects."""
    if mode == "linear" and not etype.linear_ok:
        raise UpsampleError(
            f"{spelling.mode} {spelling.value('linear')} is not defined for element type "
            f"{etype.name}; use {spelling.set_mode('nearest')}"
        )
