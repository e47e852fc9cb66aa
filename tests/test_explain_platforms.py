"""The explainer on onnxruntime 1.32's own linear outputs from two machines.

``tests/data/ort_linear.npz`` holds real outputs of onnxruntime's aarch64 build (run under
qemu-user) and of its x86-64 build on the same inputs, recorded by
``scripts/record_ort_linear.py``; each case is one where the two builds differ. The aarch64
build sums with fused multiply-adds and must be named for them (or only coincide with them
where it departs from Upsample in fewer than ten elements); the x86-64 build is Upsample,
or x86's conversion where an int32 result is beyond the range, and never the fused
multiply-add. The fused multiply-add itself is checked against the C library's ``fmaf``.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample.conformance._explain import _resample, _search, explain

DATA = Path(__file__).parent / "data" / "ort_linear.npz"
FMA = "Upsample, fused multiply-add (onnxruntime's aarch64 build)"
X86 = ("Upsample, integers beyond the type's range wrapped to its minimum (x86's conversion, "
       "onnxruntime's x86-64 build)")


def _case(index: int) -> tuple[str, np.ndarray, list[float], dict[str, np.ndarray]]:
    with np.load(DATA) as data:
        name = json.loads(str(data["names"]))[index]
        outputs = {machine: data[f"{machine}_{index}"] for machine in ("aarch64", "x86_64")}
        return name, data[f"x_{index}"], data[f"s_{index}"].tolist(), outputs


def _departing(a: np.ndarray, b: np.ndarray) -> int:
    """Elements that differ bit for bit (any NaN equal to any NaN)."""
    if a.dtype.kind != "f":
        return int(np.count_nonzero(a != b))
    bits = np.dtype(f"u{a.dtype.itemsize}")
    equal = (a.view(bits) == b.view(bits)) | (np.isnan(a) & np.isnan(b))
    return int(np.count_nonzero(~equal))


with np.load(DATA) as _data:
    CASES = range(len(json.loads(str(_data["names"]))))
    assert str(_data["aarch64_platform"]) == "aarch64 onnxruntime 1.32.0"
    assert str(_data["x86_64_platform"]) == "x86_64 onnxruntime 1.32.0"


@pytest.mark.parametrize("index", CASES)
def test_aarch64_is_named_for_its_fused_multiply_add(index: int) -> None:
    name, x, scales, outputs = _case(index)
    theirs = outputs["aarch64"]
    assert _departing(theirs, outputs["x86_64"]) > 0, name  # the builds differ here
    departing = _departing(theirs, onnx_upsample.upsample(x, scales, "linear"))
    result = explain(x, theirs, scales, "linear")
    assert result.best == FMA, (name, result.summary)
    expected = "convention" if departing >= _search.MIN_DEPARTURES else "coincides"
    assert result.verdict == expected, (name, departing, result.summary)
    # aarch64 saturates an int32 result beyond the range: not x86's conversion
    assert X86 not in result.matches


@pytest.mark.parametrize("index", CASES)
def test_x86_64_is_never_the_fused_multiply_add(index: int) -> None:
    name, x, scales, outputs = _case(index)
    theirs = outputs["x86_64"]
    departing = _departing(theirs, onnx_upsample.upsample(x, scales, "linear"))
    result = explain(x, theirs, scales, "linear")
    assert FMA not in result.matches, (name, result.summary)
    if x.dtype == np.int32 and departing:
        # 2**31 - 1 and its neighbours sum to 2**31, which x86's conversion makes -2**31
        assert result.best == X86, (name, result.summary)
        expected = "convention" if departing >= _search.MIN_DEPARTURES else "coincides"
        assert result.verdict == expected, (name, departing, result.summary)
    else:
        assert result.verdict == "upsample", (name, result.summary)


def _libm_fmaf() -> Any:
    # C99's fmaf is in every C runtime Python runs on: already loaded into this process on
    # POSIX (glibc's libm, musl's libc, macOS's libSystem), in the UCRT on Windows
    import sys

    runtime = ctypes.CDLL("ucrtbase") if sys.platform == "win32" else ctypes.CDLL(None)
    fmaf = runtime.fmaf
    fmaf.restype = ctypes.c_float
    fmaf.argtypes = [ctypes.c_float] * 3
    return fmaf


def test_fma32_is_the_c_librarys_fmaf() -> None:
    # C99's fmaf rounds once, as the instruction does: random magnitudes, sums that cancel to
    # the last bits, subnormal products, infinities and NaN
    fmaf = _libm_fmaf()
    rng = np.random.default_rng(39)
    n = 600
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)).astype(np.float32)
    cancel = slice(0, n // 3)
    c[cancel] = -(a[cancel].astype(np.float64) * b[cancel]).astype(np.float32)
    a[n // 3:n // 2] *= np.float32(2.0**-70)
    b[n // 3:n // 2] *= np.float32(2.0**-70)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.4e38], dtype=np.float32)
    c[-6:], a[-6:] = special, special[::-1]
    got = _resample.fma32(a, b, c)
    expected = np.array([fmaf(float(p), float(q), float(r))
                         for p, q, r in zip(a, b, c, strict=True)], dtype=np.float32)
    assert _departing(got, expected) == 0
    # the cancelling sums are not the float32 product plus c: an fma is needed to tell
    unfused = (a * b + c).astype(np.float32)
    assert _departing(unfused[cancel], expected[cancel]) > 50
