"""Memory layout and byte order never change the result (docs/semantics.md §3).

For every layout of the same values (Fortran order, strided slices, negative strides,
read-only, the other byte order, unaligned, 0-stride broadcast views, and a combination)
``upsample`` returns the bits it returns for the C-contiguous native copy, for every kind of
element the kernels handle differently and both modes. The result is always a new
C-contiguous, native-byte-order, writable array that shares no memory with x, also under the
no-resize copy.

Layouts meet element types pairwise, not in the full product: what a layout changes is the
copy made before the kernels run (numpy's) and whether the kernels read x in place, which
depends on the element's size, on whether numpy knows its type (bfloat16 is a foreign one),
and on the path it takes (object arrays are gathered by numpy; linear mode views half floats
and complex numbers as other words). Each such kind of element meets every layout, with the
kind's types taking turns, and each call shape meets both.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from fuzz_worker import byte_swapped, negative_strides, read_only, strided, unaligned

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


def _swapped_fortran_strided(x: np.ndarray) -> np.ndarray:
    return strided(np.asfortranarray(byte_swapped(x)))


# The C-contiguous native layout itself is the expectation, never a case; the other byte
# order is the one that is not native (on any machine).
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "fortran": np.asfortranarray,
    "strided": strided,
    "negative-strides": negative_strides,
    "read-only": read_only,
    "byte-swapped": byte_swapped,
    "unaligned": unaligned,
    "byte-swapped-fortran-strided": _swapped_fortran_strided,
}


def applicable(name: str, layout: str) -> bool:
    """A layout that leaves x as it is is no case: 1-byte types have no byte order and are
    never unaligned; bfloat16's swapped dtype is raw void; object arrays hold references,
    with no byte order and never unaligned."""
    if "byte-swapped" in layout and (dtype_of(name).itemsize == 1 or name in
                                     ("bfloat16", "object")):
        return False
    return not (layout == "unaligned" and (dtype_of(name).alignment == 1 or name == "object"))


def variant(name: str, layout: str, x: np.ndarray) -> np.ndarray:
    y = LAYOUTS[layout](x)
    assert y.shape == x.shape
    if x.dtype.hasobject:
        assert all(a is b for a, b in zip(x.reshape(-1), y.reshape(-1), strict=True))
    else:  # premise: the variant holds the same bits, in another layout
        native = np.array(y, dtype=y.dtype.newbyteorder("="), order="C", copy=True)
        assert native.tobytes() == x.tobytes(), f"premise: {layout} changed the values"
        assert not (y.flags.c_contiguous and y.flags.aligned and y.dtype.isnative
                    and y.flags.writeable), f"premise: {layout} is x's own layout"
    return y


# The kinds of element, as the layout glue sees them, each with the types that take turns.
NEAREST_KINDS = {
    "1-byte": ("int8", "bool"),
    "2-byte": ("float16", "uint16"),
    "foreign 2-byte": ("bfloat16",),
    "4-byte": ("float32",),
    "8-byte": ("float64", "int64"),
    "two 8-byte parts": ("complex128",),
    "three 4-byte parts": ("str",),
    "references": ("object",),
}
LINEAR_KINDS = {
    "read as is": ("float32", "int8", "float64", "uint16", "int64"),
    "half float": ("float16", "bfloat16"),
    "complex": ("complex128",),
}
CALLS = {
    "nearest": [
        ((2, 3, 4), [1.5, 2.0, 1.3333334], "nearest-3d"),
        ((3, 1, 2, 3), [2.0, 1.0, 2.7, 1.7], "nearest-4d"),
    ],
    "linear": [
        ((3, 4), [1.7, 2.5], "linear-2d"),
        ((1, 3, 2, 3), [1.0, 1.0, 2.0, 1.5], "linear-nchw"),
        ((2, 3, 2, 2), [2.0, 1.0, 1.5, 1.0], "linear-batch-scaled"),
    ],
}


def _pairwise(mode: str, kinds: dict[str, tuple[str, ...]]) -> list[object]:
    """Every (layout, kind) pair once: the kind's types take turns over the layouts (one
    that does not apply gives way to the next), and the calls over the pairs."""
    cases = []
    for i, layout in enumerate(LAYOUTS):
        for j, names in enumerate(kinds.values()):
            turn = [names[(i + k) % len(names)] for k in range(len(names))]
            name = next((n for n in turn if applicable(n, layout)), None)
            if name is None:
                continue
            shape, scales, call = CALLS[mode][(i + j) % len(CALLS[mode])]
            cases.append(pytest.param(mode, shape, scales, name, layout,
                                      id=f"{call}-{name}-{layout}"))
    return cases


LAYOUT_CASES = _pairwise("nearest", NEAREST_KINDS) + _pairwise("linear", LINEAR_KINDS)


def _copy_cases() -> list[object]:
    """The no-resize copy is one ``numpy.copyto`` whatever the call: every type once and
    every layout at least once, both modes, and both ways to keep every length (all
    scales 1, or scales whose products truncate back to the lengths)."""
    cases = []
    layouts = list(LAYOUTS)
    for i, name in enumerate(TYPES):
        layout = next(layouts[(i + k) % len(layouts)] for k in range(len(layouts))
                      if applicable(name, layouts[(i + k) % len(layouts)]))
        mode = "linear" if name in LINEAR_TYPES and i % 2 else "nearest"
        scales, scales_id = ([1.0, 1.0, 1.0], "all-ones") if i % 3 else (
            [1.1, 1.2, 1.3], "same-lengths")
        cases.append(pytest.param(mode, scales, name, layout,
                                  id=f"{mode}-{scales_id}-{name}-{layout}"))
    return cases


COPY_CASES = _copy_cases()


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


@pytest.mark.parametrize("layout", ["fortran", "negative-strides", "byte-swapped", "strided"])
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
