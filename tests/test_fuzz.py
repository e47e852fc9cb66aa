"""The fuzzer: any call of ``upsample`` ends in the reference's bits (and onnxruntime 1.32's,
where ORT has a kernel) or in a clean TypeError / UpsampleError: never a crash, a hang,
another exception, a wrong value or a half-written ``out=``.

Most drawn calls are valid: every element type the library accepts, both modes, ranks 0-6,
any axis scaled (batch and channel included), values with each type's extremes and arbitrary
float bit patterns (NaN payloads, signalling NaNs, infinities, -0.0, denormals), in every
memory layout and kind of scales argument, with and without ``out=``, and as the first call
of its kind or after one (which ``upsample`` remembers, checks and all). A quarter of them are
shaped the way ORT has kernels (its element types, its linear configurations) and run in
one of its three node forms; another quarter are linear sums of floats, where NaN payloads,
infinities and -0.0 meet. A third of all calls break one or more arguments of a valid call
with every wrong kind and value.

Each call runs in a persistent child process (tests/fuzz_worker.py), so that a segfault is a
failing example with its case, not a dead test run; the child is restarted after a crash or
a timeout. The reference and ORT run here, on the x the child used. Where the reference's
work would be too slow (invalid calls that succeed with a large output) it is skipped.

Where ORT's documented differences (docs/semantics.md §2) can show, the comparison with ORT
allows exactly them: NaN payloads in linear sums and in float16 (ORT's casts canonicalise
them), and int32 linear sums that reach 2**31 (ORT wraps to -2**31, we saturate to
2**31-1); int8/uint8 NHWC linear (ORT's fixed-point path) is not compared with ORT.
``derandomize=True``: the same cases every run (FUZZ_EXAMPLES of them; more with
HYPOTHESIS_PROFILE=thorough).
"""

from __future__ import annotations

import base64
import math
import os
import pickle
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
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
from fuzz_worker import sources
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ort_oracle import FORMS, ORT_DTYPES, ort_accepts, ort_upsample

from onnx_upsample import UpsampleWarning, reference

WORKER = Path(__file__).with_name("fuzz_worker.py")
CASE_TIMEOUT = 30.0
FUZZ_EXAMPLES = 1000 if os.environ.get("HYPOTHESIS_PROFILE") != "thorough" else 20000
NEAREST_BUDGET = 2000  # output elements the reference computes per case
LINEAR_BUDGET = 8000  # output elements x corners per element (2**interpolated axes)
FIXED_SCALES = (1.0, 2.0, 3.0, 1.1, 1.3333334, 1.5, 1.7, 2.7)
ORT_TYPES = tuple(dtype.name for dtype in ORT_DTYPES)
FLOAT_TYPES = ("float32", "float16", "bfloat16", "float64", "complex64", "complex128")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# --- values --------------------------------------------------------------------------------

def values_strategy(name: str, n: int) -> st.SearchStrategy[np.ndarray]:
    """``n`` values of type ``name`` (1-D), extremes and special bit patterns included."""
    dtype = dtype_of(name)
    if name == "bool":
        return st.lists(st.booleans(), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=bool))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = [int(info.min), int(info.max), 0, 1, int(info.max) - 1]
        if info.min < 0:
            edges += [-1, int(info.min) + 1]
        ints = st.one_of(st.sampled_from(edges), st.integers(int(info.min), int(info.max)))
        return st.lists(ints, min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=object).astype(dtype))
    if name == "bfloat16":
        return _bits_strategy(16, BFLOAT16_SPECIAL_BITS, n).map(
            lambda b: b.view(ml_dtypes.bfloat16))
    if dtype.kind == "f":
        width = 8 * dtype.itemsize
        return _bits_strategy(width, FLOAT_SPECIAL_BITS[width], n).map(
            lambda b: b.view(dtype))
    if dtype.kind == "c":
        width = 4 * dtype.itemsize
        return _bits_strategy(width, FLOAT_SPECIAL_BITS[width], 2 * n).map(
            lambda b: b.view(dtype))
    if name == "str":
        text = st.text(alphabet=st.sampled_from("aZ é\u20ac\U0001f600"), max_size=4)
        return st.lists(text, min_size=n, max_size=n).map(lambda v: np.array(v, dtype="<U4"))
    if name == "bytes":
        raw = st.binary(max_size=3)
        return st.lists(raw, min_size=n, max_size=n).map(lambda v: np.array(v, dtype="S3"))
    pool = st.sampled_from([None, "text", b"raw", 7, 2.5, (1, 2)])
    objects = st.one_of(pool, st.builds(list, st.lists(st.integers(), max_size=2)),
                        st.builds(lambda: np.arange(2)))
    return st.lists(objects, min_size=n, max_size=n).map(_object_array)


def _bits_strategy(width: int, specials: list[int], n: int) -> st.SearchStrategy[np.ndarray]:
    float_type = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    unsigned = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]

    def bits_of_float(value: float) -> int:
        return int(np.array([value], dtype=float_type).view(unsigned)[0])

    element = st.one_of(
        st.sampled_from(specials),
        st.integers(0, 2**width - 1),
        st.floats(width=width, allow_nan=False).map(bits_of_float),
        st.floats(-100, 100, width=width).map(bits_of_float),
    )
    return st.lists(element, min_size=n, max_size=n).map(
        lambda bits: np.array(bits, dtype=np.uint64).astype(unsigned))


# --- shapes and scales ---------------------------------------------------------------------

def interpolated_axes(scales: list[float]) -> int:
    """How many axes linear mode blends (docs/semantics.md §2, "which axes interpolate")."""
    rank = len(scales)
    unit = [np.float32(s) == 1 for s in scales]
    if rank in (2, 3):
        return rank
    if rank == 4 and unit[0] and (unit[1] or unit[3]):
        return 2
    if rank == 5 and unit[0] and unit[1]:
        return 3
    return rank - sum(unit)


def reference_cost(out_size: int, scales: list[float], mode: str) -> int:
    """The reference's work, in the units of NEAREST_BUDGET (1 per output element) or
    LINEAR_BUDGET (2**interpolated axes per output element)."""
    return out_size * (1 if mode == "nearest" else 2 ** interpolated_axes(scales))


def fit(shape: list[int], scales: list[float], mode: str) -> list[int]:
    """Shrink the largest axis until the reference's work fits the budget."""
    shape = list(shape)
    budget = NEAREST_BUDGET if mode == "nearest" else LINEAR_BUDGET
    while reference_cost(math.prod(int(np.float32(n) * np.float32(s)) for n, s in
                                   zip(shape, scales, strict=True)), scales, mode) > budget:
        shape[int(np.argmax(shape))] -= 1
    return shape


scale_strategy = st.one_of(
    st.just(1.0),
    st.sampled_from(FIXED_SCALES),
    st.floats(1.0, 4.0, width=32, exclude_max=True),
)

# Every layout and container of valid values; those that do not apply to a type are left out
# (a 1-byte or object type has no byte order; object arrays hold references, never unaligned).
LAYOUTS = ["array", "array", "array", "fortran", "negative-strides", "strided",
           "byte-swapped", "unaligned", "read-only", "list"]


def _layout_applies(layout: str, x: np.ndarray) -> bool:
    dtype = x.dtype
    if layout == "byte-swapped":
        return dtype.kind != "O" and dtype.byteorder != "|" and dtype.name != "bfloat16"
    if layout == "unaligned":
        return dtype.kind != "O" and dtype.alignment > 1
    if layout == "list":  # nested lists of Python numbers (an empty one has lost its shape)
        return dtype.kind in "biufc" and x.size > 0
    return True


def scales_object(draw: st.DrawFn, scales: list[float]) -> object:
    """The scales in one of the accepted kinds (numpy arrays of any shape, scalars...)."""
    kind = draw(st.sampled_from(["list", "list", "tuple", "float64-array", "float32-array",
                                 "2d-array", "big-endian-array", "numpy-scalars"]))
    if kind == "tuple":
        return tuple(scales)
    if kind == "float64-array":
        return np.array(scales, dtype=np.float64)
    if kind == "float32-array":
        return np.array(scales, dtype=np.float32)
    if kind == "2d-array":
        return np.array(scales, dtype=np.float32).reshape(1, -1)
    if kind == "big-endian-array":
        return np.array(scales, dtype=">f8")
    if kind == "numpy-scalars":
        return [np.float32(s) for s in scales]
    return list(scales)


@st.composite
def valid_calls(draw: st.DrawFn) -> dict[str, Any]:
    shaped = draw(st.integers(0, 3))
    if shaped == 0:  # ORT's element types, and its linear configurations
        name = draw(st.sampled_from(ORT_TYPES))
        mode = draw(st.sampled_from(["nearest", "linear"]))
        rank = draw(st.integers(1, 6) if mode == "nearest" else st.integers(2, 5))
        scales = [draw(scale_strategy) for _ in range(rank)]
        if mode == "linear" and rank >= 4:
            scales[0] = 1.0
            if rank == 5 or name in ("int8", "uint8") or draw(st.booleans()):
                scales[1] = 1.0  # NCHW (rank 4) or rank 5
            else:
                scales[3] = 1.0  # NHWC
    elif shaped == 1:  # linear sums of floats: where NaN payloads, infinities and -0.0 meet
        name = draw(st.sampled_from(FLOAT_TYPES))
        mode = "linear"
        scales = [draw(scale_strategy) for _ in range(draw(st.integers(2, 5)))]
    else:
        name = draw(st.sampled_from(ALL_TYPES))
        mode = draw(st.sampled_from(["nearest", "linear"] if name in LINEAR_TYPES
                                    else ["nearest"]))
        scales = [draw(scale_strategy) for _ in range(draw(st.integers(0, 6)))]
    rank = len(scales)
    smallest = 0 if draw(st.integers(0, 9)) == 0 else 1  # sometimes an empty axis
    shape = fit([draw(st.integers(smallest, 5)) for _ in range(rank)], scales, mode)
    x = draw(values_strategy(name, math.prod(shape))).reshape(shape)
    layout = draw(st.sampled_from([k for k in LAYOUTS if _layout_applies(k, x)]))
    if mode == "linear" and draw(st.integers(0, 9)) == 0:
        mode = draw(st.sampled_from(["bilinear", "trilinear"]))  # legacy names: a warning
    return {"x": x, "layout": layout, "scales": scales_object(draw, scales), "mode": mode,
            "out": draw(st.sampled_from([None, None, "fits"])), "valid": True,
            "form": draw(st.sampled_from(FORMS)), "prepared": draw(st.booleans())}


# --- wrong arguments -----------------------------------------------------------------------

WRONG_X = [
    None, [], [[1, 2], [3]], "abc", b"ab", object(), {"a": 1}, 1 + 2j,
    np.zeros(2, "M8[s]"), np.zeros(2, "m8[ms]"), np.zeros(2, [("a", "<i4"), ("b", "<f4")]),
    np.zeros(2, ml_dtypes.float8_e4m3fn), np.zeros(2, ml_dtypes.int4), np.zeros(2, "V4"),
    np.array([True, False]), np.array(["a", "b"]), np.array([None, 1], dtype=object),
]
WRONG_X_LAYOUTS = ["masked", "matrix", "scalar"]
WRONG_SCALE_VALUES = [0.5, 0.999, -1, 0, -0.0, math.nan, math.inf, -math.inf, 1e39, 1e30, 1e12,
                      10**400, True, None, "2", 1 + 1j, [2], np.float64(0.5)]
WRONG_SCALES = [
    None, "1 2", b"\x01\x02", 2.0, 2, np.float32(2), {1: 2}, object(), [[2], [2]],
    np.array([True]), np.array(["2"]), np.array([1 + 0j]), np.array([None, 1], dtype=object),
]
WRONG_MODES = ["cubic", "NEAREST", "Linear", " nearest", "", None, 3, b"nearest", "linear"]
WRONG_OUTS = ["wrong-shape", "wrong-dtype", "read-only", "byte-swapped", "fortran", "strided",
              "unaligned", "overlap", "matrix", "masked", [0.0] * 4, b"out", np.zeros(3)]


@st.composite
def wrong_calls(draw: st.DrawFn) -> dict[str, Any]:
    """A valid call with one or more arguments broken (any mix of kinds and values)."""
    case = draw(valid_calls())
    case["valid"] = False
    arguments = st.sampled_from(["x", "scales", "mode", "out"])
    broken = {draw(arguments)}  # mostly one, so that each check is reached on its own
    if draw(st.integers(0, 3)) == 0:
        broken.update(draw(st.lists(arguments, max_size=3)))
    if "x" in broken:
        if draw(st.booleans()):
            case["x"], case["layout"] = draw(st.sampled_from(WRONG_X)), "array"
        else:
            case["layout"] = draw(st.sampled_from(WRONG_X_LAYOUTS))
    if "scales" in broken:
        values = list(np.asarray(case["scales"], dtype=np.float64).reshape(-1))
        how = draw(st.sampled_from(["value", "count", "kind"]))
        if how == "value" and values:
            values[draw(st.integers(0, len(values) - 1))] = draw(
                st.sampled_from(WRONG_SCALE_VALUES))
            case["scales"] = values
        elif how in ("value", "count"):
            case["scales"] = draw(st.sampled_from([[*values, 2.0], values[:-1], values * 2]))
        else:
            case["scales"] = draw(st.sampled_from(WRONG_SCALES))
    if "mode" in broken:
        case["mode"] = draw(st.sampled_from(WRONG_MODES))
    if "out" in broken:
        case["out"] = draw(st.sampled_from(WRONG_OUTS))
    return case


calls = st.one_of(valid_calls(), valid_calls(), wrong_calls())


# --- the child process ---------------------------------------------------------------------

class Worker:
    """A persistent child running fuzz_worker.py; restarted after a crash or a hang."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-u", str(WORKER)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "ONNX_UPSAMPLE_NUM_THREADS": "2"},
            )
        return self.process

    def ask(self, case: dict[str, Any]) -> dict[str, Any]:
        process = self.start()
        assert process.stdin is not None and process.stdout is not None
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(process.stdout.readline()))
        try:
            process.stdin.write(base64.b64encode(pickle.dumps(case)).decode() + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass
        reader.start()
        reader.join(CASE_TIMEOUT)
        if reader.is_alive() or not answer or not answer[0]:
            process.kill()
            process.wait()
            stderr = process.stderr.read()[-2000:] if process.stderr else ""
            self.close()
            how = "hung" if reader.is_alive() else f"died with code {process.returncode}"
            return {"outcome": "crash", "message": f"worker {how}: {stderr}"}
        return pickle.loads(base64.b64decode(answer[0]))

    def close(self) -> None:
        """Stop the child and close its pipes (left open, they warn, ResourceWarning, when
        collected: in whichever later test records warnings)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        self.process = None


@pytest.fixture(scope="module")
def worker() -> Any:
    w = Worker()
    yield w
    w.close()


# --- the property --------------------------------------------------------------------------

def describe(case: dict[str, Any]) -> str:
    x, out = case["x"], case["out"]
    shown_x = f"{x.dtype}{x.shape}" if isinstance(x, np.ndarray) else repr(x)[:60]
    shown_out = f"{out.dtype}{out.shape}" if isinstance(out, np.ndarray) else repr(out)[:60]
    return (f"x {shown_x} as {case['layout']}, scales {case['scales']!r}, "
            f"mode {case['mode']!r}, out {shown_out}")


def is_linear(mode: object) -> bool:
    return mode in ("linear", "bilinear", "trilinear")


def assert_matches_ort(got: np.ndarray, x: object, scales: list[float], mode: str, form: str,
                       context: str) -> bool:
    """got == ORT's output where ORT has a kernel, up to its documented differences; returns
    whether ORT was compared."""
    x = np.asarray(x)
    native = x.dtype.newbyteorder("=")
    if not ort_accepts(native, scales, mode, form):
        return False
    if (mode == "linear" and native.name in ("int8", "uint8") and len(scales) == 4
            and np.float32(scales[1]) != 1 and np.float32(scales[3]) == 1):
        return False  # ORT's fixed-point NHWC path: test_int8_uint8_nhwc_fixed_point_differs
    expected = ort_upsample(x, scales, mode, form)
    assert got.shape == expected.shape, f"ORT shape {expected.shape} [{context}]"
    if mode == "linear" and native == np.int32:
        # the sum reached 2**31: ORT's conversion wraps, ours saturates (documented)
        wrapped = (got == INT32_MAX) & (expected == INT32_MIN)
        expected = np.where(wrapped, got, expected)
    if mode == "linear" or native == np.float16:
        assert_identical_but_nan_payloads(got, expected, "ORT, " + context)
    else:
        assert_identical(got, expected, "ORT, " + context)
    return True


@pytest.mark.slow
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=calls)
def test_any_call_matches_reference_and_ort_or_fails_cleanly(worker: Worker,
                                                             case: dict[str, Any]) -> None:
    outcome = worker.ask(case)
    kind = outcome["outcome"]
    context = describe(case)
    if kind != "result":
        event(f"{'valid' if case['valid'] else 'wrong'} call: {kind}")
        assert kind in ("TypeError", "UpsampleError"), (context, outcome)
        assert not case["valid"], ("a valid call failed", context, outcome)
        assert outcome["out_unchanged"], ("a failed call wrote into out=", context, outcome)
        assert outcome["message"] and "\n" not in outcome["message"].strip(), outcome
        return
    assert outcome["returned_out"], ("out= given but another array returned", context)
    if case["out"] is None:
        assert outcome["fresh"], ("not a new C-contiguous native writable array", context)
    assert bool(outcome["warnings"]) == (case["mode"] in ("bilinear", "trilinear")), (
        outcome["warnings"], context)
    x, got = pickle.loads(outcome["x_and_result"])
    scales = [float(s) for s in np.asarray(case["scales"], dtype=np.float64).reshape(-1)]
    mode = "linear" if is_linear(case["mode"]) else "nearest"
    budget = NEAREST_BUDGET if mode == "nearest" else LINEAR_BUDGET
    checked = []
    if reference_cost(got.size, scales, mode) <= budget:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UpsampleWarning)
            expected = reference.upsample(x, case["scales"], case["mode"])
        if got.dtype.kind == "O":  # the same objects of x, which only the child can tell
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), context
            assert min(outcome["sources"], default=0) >= 0, ("not x's objects", context)
            assert outcome["sources"] == sources(expected, x), ("other objects", context)
        elif mode == "nearest":
            assert_identical(got, expected, context)
        else:
            assert_identical_but_nan_payloads(got, expected, context)
        checked.append("reference")
    assert checked or not case["valid"], ("a valid case beyond the reference's budget", context)
    if case["valid"] and assert_matches_ort(got, x, scales, mode, case["form"], context):
        checked.append("ORT")
    event(f"{'valid' if case['valid'] else 'wrong'} call: result checked against "
          f"{' and '.join(checked) or 'nothing (too large for the reference)'}")
