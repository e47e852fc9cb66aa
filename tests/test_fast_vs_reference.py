"""The default path ``onnx_upsample.upsample`` against the slow reference, bit for bit, on
fixed cases of every element type.

Both implement the same contract (§2) independently; here every element type the library
accepts is compared: bool, int8-64, uint8-64, float16/32/64, complex64/128, bfloat16
(``ml_dtypes``), and for nearest also numpy ``str``, ``bytes`` and object arrays (whose
elements must be the very same objects), at ranks 0-6 with scaled batch and channel axes,
values with each type's extremes and special bit patterns (NaN payloads, signalling NaNs,
infinities, -0.0, denormals). The drawn cases (hypothesis) are in ``test_fuzz.py``, which
takes its comparisons and type tables from here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from differential import (
    ALL_TYPES,
    BFLOAT16_SPECIAL_BITS,
    FLOAT_SPECIAL_BITS,
    LINEAR_TYPES,
    _object_array,
    assert_identical,
    assert_identical_but_nan_payloads,
    dtype_of,
)

from onnx_upsample import reference, upsample

# --- comparing results -------------------------------------------------------------------







def check(x: np.ndarray, scales: list[float], mode: str) -> None:
    """fast == reference, bit for bit; and ``out=`` gives the same bits in ``out``."""
    context = f"x {x.dtype}{x.shape}, scales {scales}, {mode}"
    expected = reference.upsample(x, scales, mode)
    got = upsample(x, scales, mode)
    compare = assert_identical if mode == "nearest" else assert_identical_but_nan_payloads
    compare(got, expected, context)
    buffer = np.empty(expected.shape, expected.dtype)
    if buffer.dtype.kind != "O":  # garbage that must be overwritten everywhere
        buffer.reshape(-1).view(np.uint8)[:] = 0xA5 if buffer.dtype.kind != "U" else 0x41
    result = upsample(x, scales, mode, out=buffer)
    assert result is buffer, f"out= returned a different array [{context}]"
    assert_identical(buffer, got, "out=, " + context)




# --- deterministic coverage of every type -------------------------------------------------

def _fixed_values(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Deterministic values of type ``name`` that include its extremes."""
    n = math.prod(shape)
    rng = np.random.default_rng(len(name) * 7 + n)
    dtype = dtype_of(name)
    if name == "bool":
        return (rng.random(n) < 0.5).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
        values[: min(n, 3)] = [info.min, info.max, 0][: min(n, 3)]
        return values.reshape(shape)
    if dtype.kind in "fc" or name == "bfloat16":
        if name == "bfloat16":
            bits = np.array(BFLOAT16_SPECIAL_BITS, np.uint16)
            base = rng.standard_normal(n).astype(np.float32).astype(dtype)
            base.view(np.uint16)[: min(n, bits.size)] = bits[: min(n, bits.size)]
            return base.reshape(shape)
        part = np.finfo(dtype).dtype  # complex64 -> float32
        count = n * (2 if dtype.kind == "c" else 1)
        real = (rng.standard_normal(count) * 10).astype(part)
        width = 8 * np.dtype(part).itemsize
        specials = np.array(FLOAT_SPECIAL_BITS[width], dtype=f"u{width // 8}")
        real.view(specials.dtype)[: min(count, specials.size)] = specials[: min(count,
                                                                              specials.size)]
        rng.shuffle(real)
        return real.view(dtype).reshape(shape)
    if name == "str":
        return np.array([["", "a", "é€", "\U0001f600xyz"][i % 4] for i in range(n)],
                        "<U4").reshape(shape)
    if name == "bytes":
        return np.array([[b"", b"a\x00", b"\x00b", b"xyz"][i % 4] for i in range(n)],
                        "S3").reshape(shape)
    return _object_array([[None, "s", [1], np.arange(2), 3.5][i % 5] for i in range(n)]
                         ).reshape(shape)


# Cases that reach a kernel: every type runs each of them.
KERNEL_CASES = [
    pytest.param((7,), [2.7], id="rank1"),
    pytest.param((4, 5), [1.5, 1.3333334], id="rank2"),
    pytest.param((2, 3, 4), [1.7, 1.0, 2.0], id="rank3"),
    pytest.param((2, 3, 3, 2), [1.5, 2.0, 1.1, 1.0], id="rank4-batch-channel"),
    pytest.param((1, 2, 3, 4), [1.0, 1.0, 1.5, 2.7], id="rank4-nchw"),
    pytest.param((1, 2, 3, 2), [1.0, 1.5, 2.0, 1.0], id="rank4-nhwc"),
    pytest.param((2, 1, 2, 2, 3), [1.0, 1.0, 2.0, 1.5, 1.3], id="rank5"),
    pytest.param((2, 1, 2, 1, 2, 2), [1.5, 3.0, 1.0, 2.0, 1.0, 1.7], id="rank6"),
]
# Cases that reach no kernel: a scalar and the global no-resize rule are one copy of x
# (``numpy.copyto`` in the fast path), an empty output is nothing to write. Each type runs
# one of them, in turn, and each of them runs a third of the types.
COPY_CASES = [
    ((), [], "rank0"),
    ((3, 4), [1.1, 1.2], "no-resize-copy"),
    ((0, 3), [2.0, 1.5], "empty"),
]


# Linear sums over more blended axes (outer axes NI, taps per row position T = row x block):
# the kernel's sum has a loop per (NI, T) and accumulator (float32 or float64), and a generic
# one beyond. Each linear type runs one of them, in turn; each runs both accumulators.
SUM_CASES = [
    ((2, 2, 1, 2, 3), [1.5, 1.5, 2.0, 1.7, 1.3], "sum-generic"),  # NI 3, T 4: the generic sum
    ((2, 2, 3, 12), [1.5, 1.5, 1.7, 1.0], "sum-ni2-row"),  # NI 2, T 2: 12 channels ride along
    ((2, 2, 2, 3), [1.5, 1.5, 2.0, 1.7], "sum-ni2-row-block"),  # NI 2, T 4: blended channels
]


def _cases(names: tuple[str, ...], *in_turn: list[tuple[object, ...]]) -> list[object]:
    """Every type runs every kernel case, and one case of each list in ``in_turn``."""
    cases = [pytest.param(name, *case.values, id=f"{name}-{case.id}")
             for name in names for case in KERNEL_CASES]
    for turns in in_turn:
        for i, name in enumerate(names):
            shape, scales, case_id = turns[i % len(turns)]
            cases.append(pytest.param(name, shape, scales, id=f"{name}-{case_id}"))
    return cases


@pytest.mark.parametrize(("name", "shape", "scales"), _cases(ALL_TYPES, COPY_CASES))
def test_every_type_nearest(name: str, shape: tuple[int, ...], scales: list[float]) -> None:
    check(_fixed_values(name, shape), scales, "nearest")


@pytest.mark.parametrize(("name", "shape", "scales"), _cases(LINEAR_TYPES, COPY_CASES, SUM_CASES))
def test_every_type_linear(name: str, shape: tuple[int, ...], scales: list[float]) -> None:
    check(_fixed_values(name, shape), scales, "linear")


@pytest.mark.parametrize(("name", "value"), [
    pytest.param("int8", 127, id="int8-max"),
    pytest.param("int8", -128, id="int8-min"),
    pytest.param("uint8", 255, id="uint8-max"),
    pytest.param("int16", -32768, id="int16-min"),
    pytest.param("uint16", 65535, id="uint16-max"),
    pytest.param("int32", 2**31 - 1, id="int32-max"),
    pytest.param("int32", -(2**31), id="int32-min"),
    pytest.param("uint32", 2**32 - 1, id="uint32-max"),
    pytest.param("int64", 2**63 - 1, id="int64-max"),
    pytest.param("int64", -(2**63), id="int64-min"),
    pytest.param("uint64", 2**64 - 1, id="uint64-max"),
])
def test_linear_integer_extremes_saturate(name: str, value: int) -> None:
    """A constant extreme value blends to itself, never wraps. With scales 2 and 4 every
    weight is a multiple of 1/4 and every sum is exact, so by hand the result is the
    constant; where the accumulator rounds it up past the range (2**31-1 -> 2**31 in
    float32, 2**63-1 and 2**64-1 in float64) docs/semantics.md §2 saturates it back to the bound."""
    x = np.full((2, 3), value, dtype=name)
    scales = [2.0, 4.0]
    expected = np.full((4, 12), value, dtype=name)
    assert_identical(reference.upsample(x, scales, "linear"), expected, f"reference {name}")
    assert_identical(upsample(x, scales, "linear"), expected, f"fast {name}")
    check(x, [1.5, 2.7], "linear")
