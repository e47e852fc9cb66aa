"""Memory layout and byte order never change the result (docs/semantics.md §3).

For every layout of the same values (C and Fortran order, strided slices, negative strides,
read-only, big- and little-endian, unaligned, 0-stride broadcast views, and combinations)
``upsample`` returns the bits it returns for the C-contiguous native copy, for several
element types and both modes. The result is always a new C-contiguous, native-byte-order,
writable array that shares no memory with x, also under the no-resize copy.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

from onnx_upsample import reference, upsample

TYPES = ("float32", "float16", "float64", "int8", "uint16", "int64", "complex128", "bfloat16",
         "bool", "str", "object")
LINEAR_TYPES = ("float32", "float16", "float64", "int8", "uint16", "int64", "complex128",
                "bfloat16")


def dtype_of(name: str) -> np.dtype:
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"str": "<U3", "object": "O"}.get(name, name))


def values(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """C-contiguous native values with each type's specials (NaN payloads, -0.0, extremes)."""
    n = math.prod(shape)
    rng = np.random.default_rng(n + len(name))
    dtype = dtype_of(name)
    if name == "bool":
        flat = rng.random(n) < 0.5
    elif name == "str":
        flat = np.array([["", "a", "é€", "xyz"][i % 4] for i in range(n)], dtype)
    elif name == "object":
        flat = np.empty(n, dtype=object)
        for i in range(n):
            flat[i] = [None, "s", [i], 2.5][i % 4]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
        flat[:2] = [info.min, info.max]
    else:
        flat = (rng.standard_normal(n) * 100).astype(dtype)
        if dtype.kind == "c":
            flat.imag = rng.standard_normal(n)
        specials = np.array([np.inf, -np.inf, -0.0, np.nan, 1e-40], dtype=np.float32)
        flat[: min(n, specials.size)] = specials[:n].astype(dtype)
        if dtype == np.float32 and n >= 8:  # a payload NaN and a signalling NaN
            flat.view(np.uint32)[5:7] = [0x7FC00123, 0x7F800001]
        rng.shuffle(flat)
    return np.asarray(flat, dtype).reshape(shape)


def _strided(x: np.ndarray) -> np.ndarray:
    padded = np.zeros(tuple(2 * n + 1 for n in x.shape), dtype=x.dtype)
    view = padded[tuple(slice(1, None, 2) for _ in x.shape)]
    view[...] = x
    return view


def _negative(x: np.ndarray) -> np.ndarray:
    return np.flip(np.flip(x).copy())


def _readonly(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y.flags.writeable = False
    return y


def _byteorder(order: str) -> Callable[[np.ndarray], np.ndarray]:
    def convert(x: np.ndarray) -> np.ndarray:
        return x.astype(x.dtype.newbyteorder(order))
    return convert


def _unaligned(x: np.ndarray) -> np.ndarray:
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    y = raw[1:].view(x.dtype).reshape(x.shape)  # starts one byte into the buffer
    y[...] = x
    return y


def _big_endian_fortran_strided(x: np.ndarray) -> np.ndarray:
    return _strided(np.asfortranarray(_byteorder(">")(x)))


def _transposed(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.T).T


LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "c": lambda x: x,
    "fortran": np.asfortranarray,
    "strided": _strided,
    "negative-strides": _negative,
    "read-only": _readonly,
    "big-endian": _byteorder(">"),
    "little-endian": _byteorder("<"),
    "unaligned": _unaligned,
    "transposed": _transposed,
    "big-endian-fortran-strided": _big_endian_fortran_strided,
    "read-only-negative": lambda x: _readonly(_negative(x))[...],
}

def applicable(name: str, layout: str) -> bool:
    """Byte-order variants need a dtype with a byte order numpy can swap (bfloat16's
    swapped dtype is raw void); object arrays hold references and cannot be unaligned."""
    if "endian" in layout and name in ("bfloat16", "object"):
        return False
    return not (layout == "unaligned" and name == "object")


def variant(name: str, layout: str, x: np.ndarray) -> np.ndarray:
    y = LAYOUTS[layout](x)
    assert y.shape == x.shape
    if x.dtype.hasobject:
        assert all(a is b for a, b in zip(x.reshape(-1), y.reshape(-1), strict=True))
    else:  # premise: the variant holds the same bits
        native = np.array(y, dtype=y.dtype.newbyteorder("="), order="C", copy=True)
        assert native.tobytes() == x.tobytes(), f"premise: {layout} changed the values"
    return y


CASES = [
    ("nearest", (2, 3, 4), [1.5, 2.0, 1.3333334], "nearest-3d"),
    ("nearest", (3, 1, 2, 3), [2.0, 1.0, 2.7, 1.7], "nearest-4d"),
    ("linear", (3, 4), [1.7, 2.5], "linear-2d"),
    ("linear", (1, 3, 2, 3), [1.0, 1.0, 2.0, 1.5], "linear-nchw"),
    ("linear", (2, 3, 2, 2), [2.0, 1.0, 1.5, 1.0], "linear-batch-scaled"),
]
LAYOUT_CASES = [
    pytest.param(mode, shape, scales, name, layout, id=f"{case_id}-{name}-{layout}")
    for mode, shape, scales, case_id in CASES
    for name in (TYPES if mode == "nearest" else LINEAR_TYPES)
    for layout in LAYOUTS
    if applicable(name, layout)
]
COPY_CASES = [
    pytest.param(mode, scales, name, layout, id=f"{mode}-{scales_id}-{name}-{layout}")
    for mode in ("nearest", "linear")
    for scales, scales_id in (([1.0, 1.0, 1.0], "all-ones"), ([1.1, 1.2, 1.3], "same-lengths"))
    for name in (TYPES if mode == "nearest" else LINEAR_TYPES)
    for layout in LAYOUTS
    if applicable(name, layout)
]


def assert_fresh_result(result: np.ndarray, x: np.ndarray) -> None:
    """A new C-contiguous, native-order, writable array sharing no memory with x."""
    assert isinstance(result, np.ndarray) and type(result) is np.ndarray
    assert result.flags.c_contiguous, "result is not C-contiguous"
    assert result.flags.writeable, "result is read-only"
    assert result.dtype.isnative, f"result dtype {result.dtype.str} is not native order"
    assert not np.shares_memory(result, x), "result shares memory with x"


def assert_same_bits(got: np.ndarray, expected: np.ndarray, context: str) -> None:
    assert got.dtype == expected.dtype, f"{got.dtype} != {expected.dtype} [{context}]"
    assert got.shape == expected.shape, f"{got.shape} != {expected.shape} [{context}]"
    if got.dtype.hasobject:
        assert all(a is b for a, b in zip(got.reshape(-1), expected.reshape(-1), strict=True)
                   ), f"different objects [{context}]"
        return
    assert got.tobytes() == expected.tobytes(), (
        f"bits differ [{context}]: got {got.reshape(-1)[:8]}..., "
        f"expected {expected.reshape(-1)[:8]}...")


@pytest.mark.parametrize(("mode", "shape", "scales", "name", "layout"), LAYOUT_CASES)
def test_layout_gives_same_bits(mode: str, shape: tuple[int, ...], scales: list[float],
                                name: str, layout: str) -> None:
    """Each layout of the same values gives the C-contiguous copy's bits, in a fresh array."""
    x = values(name, shape)
    y = variant(name, layout, x)
    expected = upsample(np.ascontiguousarray(x), scales, mode)  # the C-contiguous copy
    result = upsample(y, scales, mode)
    assert_same_bits(result, expected, f"{layout} {name} {mode} {scales}")
    assert_fresh_result(result, y)


@pytest.mark.parametrize("layout", ["fortran", "negative-strides", "big-endian", "strided"])
@pytest.mark.parametrize("name", ["float32", "int64", "str"])
def test_layout_matches_reference(name: str, layout: str) -> None:
    """Independent of our own output: a layout variant against the reference."""
    x = values(name, (2, 3, 4))
    y = variant(name, layout, x)
    scales = [1.5, 2.0, 1.3333334]
    assert_same_bits(upsample(y, scales), reference.upsample(np.ascontiguousarray(x), scales),
                     f"{layout} {name}")


@pytest.mark.parametrize(("mode", "scales", "name", "layout"), COPY_CASES)
def test_no_resize_copy_is_fresh(mode: str, scales: list[float], name: str,
                                 layout: str) -> None:
    """When no axis changes length the result is a copy of x (by hand: the same values),
    yet still a new C-contiguous native array, never x or a view of it."""
    x = values(name, (2, 3, 3))
    y = variant(name, layout, x)
    result = upsample(y, scales, mode)
    assert result is not y
    assert_fresh_result(result, y)
    assert_same_bits(result, x, f"{layout} {name}")  # x: C-contiguous, native order


@pytest.mark.parametrize("name", ["float32", "int8", "complex128", "object"])
def test_broadcast_view(name: str) -> None:
    """0-stride views (``numpy.broadcast_to``): the same bits as the materialised array."""
    row = values(name, (4,))
    view = np.broadcast_to(row, (3, 4))
    assert view.strides[0] == 0  # premise
    dense = np.ascontiguousarray(view)
    for mode, scales in [("nearest", [2.0, 1.5]), ("linear", [1.7, 2.0]),
                         ("nearest", [1.0, 1.0])]:
        if mode == "linear" and name == "object":
            continue
        result = upsample(view, scales, mode)
        assert_same_bits(result, upsample(dense, scales, mode), f"{name} {mode}")
        assert_fresh_result(result, view)
        result[...] = result.reshape(-1)[0]  # writable, and writing leaves x alone
        assert_same_bits(np.ascontiguousarray(view), dense, "x unchanged")


def test_result_is_independent_of_x() -> None:
    """Writing into the result never changes x, and writing into x never changes the
    result (checked for the no-resize copy, where a view would be the easy mistake)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = x.copy()
    result = upsample(x, [1.0, 1.0])
    result[...] = -1
    assert_same_bits(x, before, "x after writing the result")
    again = upsample(x, [1.1, 1.2])
    x[...] = 7
    assert_same_bits(again, before, "result after writing x")


def test_scalars_and_lists() -> None:
    """Python scalars and nested lists are inputs too: results as for their arrays."""
    assert_same_bits(upsample(3.5, []), np.array(3.5), "float scalar")
    assert_same_bits(upsample([[1, 2], [3, 4]], [1.5, 2.0]),
                     reference.upsample(np.array([[1, 2], [3, 4]]), [1.5, 2.0]), "list")
