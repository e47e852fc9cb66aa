"""The explainer: which convention reproduces another runtime's ``Upsample`` output.

Outputs of the ONNX ``Resize`` conventions come from onnx's own reference evaluator
(``onnx.reference.ReferenceEvaluator`` on a one-node Resize model), never from the
explainer's formulas. The conventions built here from their definitions (PyTorch, TVM,
integer rounding, lerp) are tested in test_explain_rules.py; sizes, shapes, limits, the list
of conventions and the arguments in test_explain_sizes.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from explain_inputs import (
    RNG_SEED,
    UPSAMPLE_CASES,
    any_type,
    differs_from_upsample,
    onnx_resize,
    random_array,
)
from onnx import TensorProto, helper

import onnx_upsample
from onnx_upsample.conformance._explain import Explanation, _search, explain

f32 = np.float32




# ---------------------------------------------------------------------------------------------
# Upsample itself
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "uint8", "int32",
                                   "complex64"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(("shape", "scales"), UPSAMPLE_CASES)
def test_upsample_output_is_upsample(dtype: str, mode: str, shape: tuple[int, ...],
                                     scales: list[float]) -> None:
    x = any_type(shape, dtype, np.random.default_rng(RNG_SEED))
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
    # long enough axes that each reads another input index than Upsample at ten output
    # indices or more (fewer only coincide: test_few_departures_only_coincide)
    x = random_array((1, 2, 16, 30))
    theirs = onnx_resize(x, scales, "nearest", transform, nearest_mode)
    assert differs_from_upsample(x, theirs, scales, "nearest")
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
    x = random_array(shape, seed=1)
    theirs = onnx_resize(x, scales, "linear", transform)
    assert differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == expected


def test_resize_pytorch_half_pixel_linear() -> None:
    # pytorch_half_pixel differs from half_pixel only for a 1-long output, which enlarging
    # never makes (a 1-long input clamps every coordinate to 0 in both): both names match
    scales = [1, 1, 1.5, 1.7]
    x = random_array((1, 2, 4, 5), seed=2)
    theirs = onnx_resize(x, scales, "linear", "pytorch_half_pixel", opset=13)
    assert differs_from_upsample(x, theirs, scales, "linear")
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
    x = random_array((1, 2, 7, 9), seed=12)
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
    assert differs_from_upsample(x, theirs, scales, "linear")
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "convention", result.summary
    assert result.best == expected


# ---------------------------------------------------------------------------------------------
# Noise and near misses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_noise_matches_nothing(mode: str) -> None:
    rng = np.random.default_rng(RNG_SEED + 8)
    x = random_array((1, 3, 16, 20), seed=8)
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
    x = random_array((1, 3, 16, 20), seed=14)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "nearest")
    noisy = rng.random(theirs.shape) < 0.3
    theirs.view(np.int32)[noisy] += rng.choice([-16, 16], int(noisy.sum())).astype(np.int32)
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "none" and result.max_ulp is None, result.summary
    share = float(np.mean(~np.isin(theirs, x)))
    assert result.summary.startswith(f"{share:.1%} of the output's values are not elements")


def test_nearest_of_input_elements_by_another_rule_is_none_not_close() -> None:
    x = random_array((1, 1, 6, 7), seed=15)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "nearest")[..., ::-1].copy()  # mirrored
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "none"
    assert "every value is an element of the input" in result.summary


def test_one_ulp_from_upsample_is_close() -> None:
    rng = np.random.default_rng(RNG_SEED + 9)
    x = random_array((1, 3, 16, 20), seed=9)
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
    x = random_array((1, 3, 300, 400), seed=10)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "linear")
    theirs *= f32(1) + f32(0.03) * rng.standard_normal(theirs.shape).astype(np.float32)
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "none"


def test_to_dict_is_json() -> None:
    x = random_array((1, 2, 16, 30))
    theirs = onnx_resize(x, [1, 1, 1.5, 1.7], "nearest", "half_pixel", "round_prefer_floor")
    result = explain(x, theirs, [1, 1, 1.5, 1.7])
    assert isinstance(result, Explanation)
    data = json.loads(json.dumps(result.to_dict()))
    assert data == {"verdict": "convention", "matches": list(result.matches),
                    "best": "Resize half_pixel + round_prefer_floor", "max_ulp": None,
                    "summary": result.summary}
    assert data["summary"].startswith(f"matches {len(result.matches)} conventions equally, not "
                                      "Upsample: Resize half_pixel + round_prefer_floor; ")


# ---------------------------------------------------------------------------------------------
# Named beyond chance, or coinciding
# ---------------------------------------------------------------------------------------------


def test_few_departures_only_coincide() -> None:
    # half_pixel + round_prefer_floor on 4 x 5 reads another input index than Upsample at
    # two output indices only: 36 conventions reproduce it, and one change of a row or
    # column in either direction would agree with any of them half the time
    x = random_array((1, 2, 4, 5))
    theirs = onnx_resize(x, [1, 1, 1.5, 1.7], "nearest", "half_pixel", "round_prefer_floor")
    result = explain(x, theirs, [1, 1, 1.5, 1.7])
    assert result.verdict == "coincides", result.summary
    assert result.best == "Resize half_pixel + round_prefer_floor"
    assert "Resize half_pixel + round_prefer_floor" in result.matches
    assert result.summary.startswith(
        "coincides with Resize half_pixel + round_prefer_floor where it departs from Upsample "
        "(2 output indices read from another input index): too few departures to tell it "
        f"from chance, so no convention is named (that takes {_search.MIN_DEPARTURES})")


def _float64_rows(n_in: int, scale: float) -> np.ndarray:
    """The ONNX reference's nearest rows: floor(o / s) of the float64 quotient."""
    n_out = onnx_upsample.output_shape((n_in,), [scale])[0]
    return np.minimum(np.floor(np.arange(n_out) / float(f32(scale))), n_in - 1).astype(np.int64)


def test_off_by_one_rows_are_named_only_beyond_chance() -> None:
    # the float64 quotient reads one row less than Upsample's float32 one where f32(o) / s
    # rounds up to a whole number: a runtime reading those rows one off coincides with
    # float64 arithmetic, and is named for it only where there are ten such rows or more
    float64 = "Upsample coordinates, float64 arithmetic"
    for rows, verdict in [(7, "coincides"), (100, "convention")]:
        x = random_array((1, 1, rows, 3), seed=30)
        index = _float64_rows(rows, 2.2)
        upsample_rows = onnx_upsample.upsample(np.arange(rows, dtype=f32), [2.2]).astype(int)
        departing = int(np.count_nonzero(index != upsample_rows))
        assert (departing < _search.MIN_DEPARTURES) == (verdict == "coincides"), departing
        theirs = x[:, :, index][:, :, :, np.arange(6) // 2]
        result = explain(x, theirs, [1, 1, 2.2, 2], "nearest")
        assert result.verdict == verdict, result.summary
        assert result.best == float64


