"""The explainer: which convention reproduces another runtime's ``Upsample`` output.

Outputs of the ONNX ``Resize`` conventions come from onnx's own reference evaluator
(``onnx.reference.ReferenceEvaluator`` on a one-node Resize model), never from the
explainer's formulas; the PyTorch, TVM, integer-rounding and lerp conventions are built here
from their definitions, each checked first to differ from Upsample so that no test passes
because the convention happens to coincide with it. Sizes, shapes, limits, the list of
conventions and the arguments are tested in test_explain_sizes.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onnx_upsample
from onnx_upsample.conformance._explain import Explanation, _search, explain

f32 = np.float32
RNG_SEED = 20240611


def _random(shape: tuple[int, ...], dtype: object = np.float32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(RNG_SEED + seed)
    return rng.standard_normal(shape).astype(dtype)


def _any_type(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of an element type named as numpy (or ml_dtypes, for bfloat16) names it."""
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _onnx_resize(x: np.ndarray, scales: list[float], mode: str, transform: str,
                 nearest_mode: str | None = None, opset: int = 18) -> np.ndarray:
    """ONNX Resize as onnx's reference evaluator computes it (float32 in and out)."""
    attributes: dict[str, str] = {"mode": mode, "coordinate_transformation_mode": transform}
    if nearest_mode is not None:
        attributes["nearest_mode"] = nearest_mode
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attributes)
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [len(scales)])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {"X": x, "scales": np.asarray(scales, dtype=np.float32)}
    return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0])


def _differs_from_upsample(x: np.ndarray, theirs: np.ndarray, scales: list[float],
                           mode: str) -> bool:
    ours = onnx_upsample.upsample(x, scales, mode)
    return ours.shape != theirs.shape or not np.array_equal(ours, theirs)


# ---------------------------------------------------------------------------------------------
# Upsample itself
# ---------------------------------------------------------------------------------------------

UPSAMPLE_CASES = [
    ((1, 2, 5, 7), [1, 1, 1.5, 1.7]),
    ((3, 4, 5), [1.5, 2, 1.3333334]),
    ((1, 3, 4, 2), [1, 2.5, 1.5, 1]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "uint8", "int32",
                                   "complex64"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(("shape", "scales"), UPSAMPLE_CASES)
def test_upsample_output_is_upsample(dtype: str, mode: str, shape: tuple[int, ...],
                                     scales: list[float]) -> None:
    x = _any_type(shape, dtype, np.random.default_rng(RNG_SEED))
    result = explain(x, onnx_upsample.upsample(x, scales, mode), scales, mode)
    assert result.verdict == "upsample"
    assert result.best == "Upsample"
    assert result.matches[0] == "Upsample"
    assert result.max_ulp is None


def test_upsample_output_of_strings_is_upsample() -> None:
    x = np.array([["a", "bb", "c"], ["dd", "e", "f"]])
    theirs = onnx_upsample.upsample(x, [2, 1.7])
    assert explain(x, theirs, [2, 1.7]).verdict == "upsample"
    # a runtime returning ONNX strings as an object array is compared by value
    assert explain(x, theirs.astype(object), [2, 1.7]).verdict == "upsample"


# ---------------------------------------------------------------------------------------------
# Resize conventions, from onnx's reference evaluator
# ---------------------------------------------------------------------------------------------

NEAREST_FAMILIES = [
    # (transform, nearest_mode, scales, expected best)
    ("half_pixel", "round_prefer_floor", [1, 1, 1.5, 1.7],
     "Resize half_pixel + round_prefer_floor"),
    ("half_pixel", "round_prefer_floor", [1, 1, 2.5, 1.3333334],
     "Resize half_pixel + round_prefer_floor"),
    # o/2 ties at every odd o tell the two rounding preferences apart; 1.7 tells them from ceil
    ("asymmetric", "round_prefer_ceil", [1, 1, 2, 1.7], "Resize asymmetric + round_prefer_ceil"),
    ("asymmetric", "ceil", [1, 1, 1.5, 1.7], "Resize asymmetric + ceil"),
    ("asymmetric", "ceil", [1, 1, 2.5, 1.3333334], "Resize asymmetric + ceil"),
]


@pytest.mark.parametrize(("transform", "nearest_mode", "scales", "expected"), NEAREST_FAMILIES)
def test_resize_nearest_conventions(transform: str, nearest_mode: str, scales: list[float],
                                    expected: str) -> None:
    x = _random((1, 2, 4, 5))
    theirs = _onnx_resize(x, scales, "nearest", transform, nearest_mode)
    assert _differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == expected
    assert "Upsample" not in result.matches
    # one output cannot tell every convention apart: the summary names them all as equals
    # (the first few, then how many more) rather than the simplest alone
    if len(result.matches) == 1:
        assert result.summary.startswith(f"matches {expected}, not Upsample (the only ")
    else:
        assert result.summary.startswith(
            f"matches {len(result.matches)} conventions equally, not Upsample: {expected}; ")
        assert all(name in result.summary for name in result.matches[:4])
        assert "cannot tell them apart" in result.summary


LINEAR_FAMILIES = [
    # (transform, shape, scales, expected best): the reference evaluator computes in float64
    ("half_pixel", (1, 2, 4, 5), [1, 1, 1.5, 1.7],
     "Resize half_pixel (linear), float64 throughout"),
    ("half_pixel", (1, 2, 4, 5), [1, 1, 2.5, 1.3333334],
     "Resize half_pixel (linear), float64 throughout"),
    # 4*1.5 and 6*2.5 are whole: the ONNX reference's length in*scale is the output length
    ("align_corners", (1, 2, 4, 6), [1, 1, 1.5, 2.5],
     "Resize align_corners (linear), float64 throughout"),
    # 5*1.7 is not whole: the ONNX reference divides by in*scale - 1, not by out - 1
    ("align_corners", (1, 2, 4, 5), [1, 1, 1.5, 1.7],
     "Resize align_corners (linear), resized length in*scale (ONNX reference), "
     "float64 throughout"),
]


@pytest.mark.parametrize(("transform", "shape", "scales", "expected"), LINEAR_FAMILIES)
def test_resize_linear_conventions(transform: str, shape: tuple[int, ...], scales: list[float],
                                   expected: str) -> None:
    x = _random(shape, seed=1)
    theirs = _onnx_resize(x, scales, "linear", transform)
    assert _differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == expected


def test_resize_pytorch_half_pixel_linear() -> None:
    # pytorch_half_pixel differs from half_pixel only for a 1-long output, which enlarging
    # never makes (a 1-long input clamps every coordinate to 0 in both): both names match
    scales = [1, 1, 1.5, 1.7]
    x = _random((1, 2, 4, 5), seed=2)
    theirs = _onnx_resize(x, scales, "linear", "pytorch_half_pixel", opset=13)
    assert _differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention"
    assert "Resize pytorch_half_pixel (linear), float64 throughout" in result.matches
    assert result.best == "Resize half_pixel (linear), float64 throughout"


@pytest.mark.parametrize(("transform", "expected"), [
    ("half_pixel", "Resize half_pixel (linear)"),
    # ORT adds its float32 offset to a double coordinate: checks that arithmetic too
    ("half_pixel_symmetric", "Resize half_pixel_symmetric (linear)"),
    ("align_corners", "Resize align_corners (linear)"),
])
def test_onnxruntime_resize_linear(transform: str, expected: str) -> None:
    # onnxruntime's own Resize computes in float32 with Upsample's corner sum: no arithmetic
    # departure is named
    ort = pytest.importorskip("onnxruntime")
    x = _random((1, 2, 7, 9), seed=12)
    scales = [1, 1, 1.7, 1.3]
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="linear",
                            coordinate_transformation_mode=transform)
    graph = helper.make_graph(
        [node], "resize", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("scales", TensorProto.FLOAT, [4], scales)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"X": x})[0]
    assert _differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == expected


# ---------------------------------------------------------------------------------------------
# Conventions built here from their definitions
# ---------------------------------------------------------------------------------------------


def _find_reciprocal_case() -> tuple[float, int, np.ndarray]:
    """A float32 scale and input length where PyTorch's floor(o * f32(1/s)) reads another
    input index than Upsample's trunc(f32(o) / f32(s)), than the exact floor(o / s), and than
    a division by f32(out) / f32(in)."""
    for scale in np.arange(1.1, 3.0, 0.01, dtype=np.float64).astype(np.float32):
        for n_in in range(2, 41):
            n_out = int(f32(n_in) * scale)
            o = np.arange(n_out)
            clamp = n_in - 1
            pytorch = np.minimum(np.floor(o.astype(f32) * f32(1.0 / float(scale))), clamp)
            upsample = np.minimum(np.trunc(o.astype(f32) / scale), clamp)
            exact = np.minimum(np.floor(o / float(scale)), clamp)
            sizes = np.minimum(np.trunc(o.astype(f32) / (f32(n_out) / f32(n_in))), clamp)
            if all(not np.array_equal(pytorch, other) for other in (upsample, exact, sizes)):
                return float(scale), n_in, pytorch.astype(np.int64)
    raise AssertionError("no float32 scale in [1.1, 3.0) where the reciprocal differs")


def test_reciprocal_multiply_pytorch_nearest() -> None:
    scale, n_in, index = _find_reciprocal_case()
    x = _random((1, 3, n_in), seed=3)
    scales = [1, 1, scale]
    theirs = x[:, :, index]
    assert _differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Resize asymmetric + floor, reciprocal multiply (PyTorch)"


def test_pytorch_nearest_keeps_an_unchanged_length() -> None:
    # ATen's nearest_idx copies an axis whose length does not change (5 x 1.1 -> 5), where
    # Upsample reads floor(o / 1.1) = 0, 0, 1, 2, 3 once another axis resizes (here the
    # doubled one, which both read as o // 2)
    x = _random((1, 1, 3, 5), seed=5)
    scales = [1, 1, 2, 1.1]
    theirs = np.repeat(x, 2, axis=2)
    assert _differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert "Resize asymmetric + floor, reciprocal multiply (PyTorch)" in result.matches


def test_output_size_by_round_tvm() -> None:
    # 5 * 1.5 = 7.5: Upsample truncates to 7, TVM rounds to 8
    x = _random((1, 1, 5, 4), seed=4)
    scales = [1, 1, 1.5, 2]
    rows = np.minimum(np.trunc(np.arange(8, dtype=f32) / f32(1.5)), 4).astype(np.int64)
    cols = np.arange(8) // 2
    theirs = x[:, :, rows][:, :, :, cols]
    assert onnx_upsample.output_shape(x.shape, scales) == (1, 1, 7, 8)
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, output size by round (TVM)"


def _bilinear_scale2(x: np.ndarray) -> np.ndarray:
    """Upsample linear with scales [1, 1, 2, 2], exactly: weights are 0, 0.5 or 1, so every
    blend of integers is exact in float64 (ties at .5 included)."""
    def taps(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        o = np.arange(2 * n)
        lo = np.minimum(o // 2, n - 1)
        hi = np.minimum(lo + 1, n - 1)
        return lo, hi, np.where(lo == hi, 0.0, (o % 2) / 2)

    rows_lo, rows_hi, ty = taps(x.shape[2])
    cols_lo, cols_hi, tx = taps(x.shape[3])
    v = x.astype(np.float64)
    ty, tx = ty[:, None], tx[None, :]
    top = v[:, :, rows_lo][:, :, :, cols_lo] * (1 - tx) + v[:, :, rows_lo][:, :, :, cols_hi] * tx
    bottom = (v[:, :, rows_hi][:, :, :, cols_lo] * (1 - tx)
              + v[:, :, rows_hi][:, :, :, cols_hi] * tx)
    return top * (1 - ty) + bottom * ty


def test_integers_rounded_instead_of_truncated_uint8_linear() -> None:
    rng = np.random.default_rng(RNG_SEED + 5)
    x = rng.integers(0, 256, (1, 2, 5, 6)).astype(np.uint8)
    scales = [1, 1, 2, 2]
    exact = _bilinear_scale2(x)
    assert np.array_equal(np.trunc(exact).astype(np.uint8),
                          onnx_upsample.upsample(x, scales, "linear"))  # the formula is right
    half_even = np.clip(np.rint(exact), 0, 255).astype(np.uint8)
    half_away = np.clip(np.floor(exact + 0.5), 0, 255).astype(np.uint8)
    assert not np.array_equal(half_even, half_away)  # .5 ties are there to tell them apart
    for theirs, expected in [
        (half_even, "Upsample, integers rounded half to even instead of truncated"),
        (half_away, "Upsample, integers rounded half away from zero instead of truncated"),
    ]:
        assert _differs_from_upsample(x, theirs, scales, "linear")
        result = explain(x, theirs, scales, "linear")
        assert result.verdict == "convention", result.summary
        assert result.best == expected


def test_separable_lerp() -> None:
    # TF's order: each row blended along the inner axis with a + (b - a) * t, then the rows
    x = _random((6, 7), seed=6)
    scales = [1.5, 1.7]

    def taps(n: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_out = int(f32(n) * f32(scale))
        c = np.clip(np.arange(n_out, dtype=f32) / f32(scale), f32(0), f32(n - 1))
        lo = c.astype(np.int64)
        return lo, np.minimum(lo + 1, n - 1), c - lo.astype(f32)

    rows_lo, rows_hi, ty = taps(6, 1.5)
    cols_lo, cols_hi, tx = taps(7, 1.7)

    def row(r: np.ndarray) -> np.ndarray:
        a, b = x[r][:, cols_lo], x[r][:, cols_hi]
        return a + (b - a) * tx[None, :]

    top, bottom = row(rows_lo), row(rows_hi)
    theirs = top + (bottom - top) * ty[:, None]
    assert theirs.dtype == np.float32
    assert _differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample coordinates, separable lerp"


def test_complex_half_pixel_nearest() -> None:
    rng = np.random.default_rng(RNG_SEED + 7)
    x = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(np.complex64)
    scales = [1.5, 1.7]

    def index(n: int, scale: float) -> np.ndarray:
        o = np.arange(int(f32(n) * f32(scale)), dtype=f32)
        c = (o + f32(0.5)) / f32(scale) - f32(0.5)
        floor = np.floor(c)
        return np.clip(floor + (c - floor > 0.5), 0, n - 1).astype(np.int64)

    theirs = x[index(4, 1.5)][:, index(5, 1.7)]
    assert _differs_from_upsample(x, theirs, scales, "nearest")
    result = explain(x, theirs, scales, "nearest")
    assert result.best == "Resize half_pixel + round_prefer_floor"


# ---------------------------------------------------------------------------------------------
# Noise and near misses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_noise_matches_nothing(mode: str) -> None:
    rng = np.random.default_rng(RNG_SEED + 8)
    x = _random((1, 3, 16, 20), seed=8)
    scales = [1, 1, 1.5, 1.7]
    ours = onnx_upsample.upsample(x, scales, mode)
    theirs = (ours * (1 + 0.03 * rng.standard_normal(ours.shape))).astype(np.float32)
    result = explain(x, theirs, scales, mode)
    assert result.verdict == "none"
    assert result.best is None and result.matches == ()
    if mode == "linear":
        assert result.summary == "matches no convention tried (noise or a bug)"
    else:
        assert result.summary.startswith("100.0% of the output's values are not elements of "
                                         "the input: nearest")


def test_nearest_noise_of_a_few_ulp_is_never_close() -> None:
    # nearest does no arithmetic: +-16 ULP on 30% of the output used to read "close"
    rng = np.random.default_rng(RNG_SEED + 14)
    x = _random((1, 3, 16, 20), seed=14)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "nearest")
    noisy = rng.random(theirs.shape) < 0.3
    theirs.view(np.int32)[noisy] += rng.choice([-16, 16], int(noisy.sum())).astype(np.int32)
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "none" and result.max_ulp is None, result.summary
    share = float(np.mean(~np.isin(theirs, x)))
    assert result.summary.startswith(f"{share:.1%} of the output's values are not elements")


def test_nearest_of_input_elements_by_another_rule_is_none_not_close() -> None:
    x = _random((1, 1, 6, 7), seed=15)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "nearest")[..., ::-1].copy()  # mirrored
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "none"
    assert "every value is an element of the input" in result.summary


def test_one_ulp_from_upsample_is_close() -> None:
    rng = np.random.default_rng(RNG_SEED + 9)
    x = _random((1, 3, 16, 20), seed=9)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "linear")
    nudge = rng.random(theirs.shape) < 0.1
    theirs[nudge] = np.nextafter(theirs[nudge], f32(np.inf))
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "close", result.summary
    assert result.best == "Upsample"
    assert result.max_ulp == 1
    assert result.matches == ()


def test_nan_payloads_are_equal_but_zero_signs_are_not() -> None:
    x = np.array([[np.nan, 1, 2], [3, 0, 5]], dtype=np.float32)
    scales = [2, 1.5]
    ours = onnx_upsample.upsample(x, scales, "nearest")
    other_nan = ours.copy()
    other_nan[np.isnan(other_nan)] = np.array(0x7FC00123, dtype=np.uint32).view(np.float32)
    assert explain(x, other_nan, scales).verdict == "upsample"
    minus_zero = ours.copy()
    minus_zero[minus_zero == 0] = -0.0
    result = explain(x, minus_zero, scales)
    # the input holds +0.0 only: a -0.0 in a nearest output was computed, not copied
    assert result.verdict == "none"
    assert "of the output's values are not elements of the input" in result.summary


def test_large_output_is_explained_quickly() -> None:
    # about a million outputs: the budget is a few seconds on two cores (generous bound here)
    rng = np.random.default_rng(RNG_SEED + 10)
    x = _random((1, 3, 300, 400), seed=10)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "linear")
    theirs *= f32(1) + f32(0.03) * rng.standard_normal(theirs.shape).astype(np.float32)
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "none"


def test_to_dict_is_json() -> None:
    x = _random((1, 2, 4, 5))
    theirs = _onnx_resize(x, [1, 1, 1.5, 1.7], "nearest", "half_pixel", "round_prefer_floor")
    result = explain(x, theirs, [1, 1, 1.5, 1.7])
    assert isinstance(result, Explanation)
    data = json.loads(json.dumps(result.to_dict()))
    assert data == {"verdict": "convention", "matches": list(result.matches),
                    "best": "Resize half_pixel + round_prefer_floor", "max_ulp": None,
                    "summary": result.summary}
    assert data["summary"].startswith("matches 36 conventions equally, not Upsample: Resize "
                                      "half_pixel + round_prefer_floor; ")


# ---------------------------------------------------------------------------------------------
# Narrowed element types, TVM's rounding of indices
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_wide_types_computed_in_float32_are_named(dtype: type) -> None:
    rng = np.random.default_rng(RNG_SEED)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((4, 5)).astype(dtype) * 100
    else:
        x = rng.integers(-(2**30), 2**30, (4, 5)).astype(dtype)
    theirs = onnx_upsample.upsample(x.astype(np.float32), [1.5, 2.5]).astype(dtype)
    assert not np.array_equal(theirs, onnx_upsample.upsample(x, [1.5, 2.5]))
    result = explain(x, theirs, [1.5, 2.5])
    assert result.verdict == "convention" and result.best == _search.NARROWED


def test_round_half_to_even_nearest_is_named() -> None:
    # TVM's resize rounds nearest indices half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.rint(np.arange(6) / f32(2)).astype(np.int64).clip(0, 2)
    cols = np.rint(np.arange(12) / f32(3)).astype(np.int64).clip(0, 3)
    theirs = x[rows][:, cols]
    assert not np.array_equal(theirs, onnx_upsample.upsample(x, [2, 3]))
    result = explain(x, theirs, [2, 3])
    assert result.best == "Resize asymmetric + round_half_even", result


def test_int64_squeezed_through_int32_is_named() -> None:
    x = (np.arange(12, dtype=np.int64).reshape(3, 4) - 6) * (2**40 + 12345)
    theirs = onnx_upsample.upsample(x.astype(np.int32).astype(np.float32), [1.5, 2]).astype(
        np.int64)
    result = explain(x, theirs, [1.5, 2])
    assert result.best == _search.NARROWED_INT32, result
