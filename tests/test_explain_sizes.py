"""The explainer's sizes, shapes and limits, its list of conventions, and its arguments.

The size rules are checked against :func:`onnx_upsample.output_shape` (Upsample's own) and
their definitions; the argument messages about Upsample's own arguments against
:func:`onnx_upsample.upsample`'s, which they must be.
"""

from __future__ import annotations

import numpy as np
import pytest
from explain_inputs import RNG_SEED, UPSAMPLE_CASES, any_type, random_array

import onnx_upsample
from onnx_upsample import UpsampleError
from onnx_upsample._spec.dtypes import element_type
from onnx_upsample.conformance._explain import (
    Convention,
    Explanation,
    _conventions,
    _resample,
    _search,
    conventions,
    explain,
)

f32 = np.float32


# ---------------------------------------------------------------------------------------------
# Size rules and shapes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_in", "scale", "sizes"), [
    # rule order: trunc, floor, round (half away from zero), round half to even, ceil (each
    # of the float32 product), then round, round half to even and ceil of the exact product
    (5, 1.3, (6, 6, 7, 6, 7, 6, 6, 7)),  # f32(1.3) * 5: 6.49999976, a tie 6.5 in float32
    (3, 1.5, (4, 4, 5, 4, 5, 5, 4, 5)),  # 4.5: exact ties too
    (5, 1.5, (7, 7, 8, 8, 8, 8, 8, 8)),  # 7.5: the even neighbour is 8
    (4, 2.0, (8, 8, 8, 8, 8, 8, 8, 8)),
    (7, 1.7, (11, 11, 12, 12, 12, 12, 12, 12)),  # 11.9
    (5, 1.4, (7, 6, 7, 7, 7, 7, 7, 7)),  # f32(1.4) * 5 = 6.99999988 exactly, 7.0 in float32
    # f32(1.6) * 5 = 8.00000012 exactly, 8.0 in float32: only the exact ceil gives 9
    (5, 1.6000000238, (8, 8, 8, 8, 8, 8, 8, 9)),
    # f32(1.7) * 5 = 8.50000024 exactly, the tie 8.5 in float32: half to even gives 8, 9
    (5, 1.7, (8, 8, 9, 8, 9, 9, 9, 9)),
])
def test_size_rules(n_in: int, scale: float, sizes: tuple[int, ...]) -> None:
    assert _conventions.SIZE_RULES == ("trunc", "floor", "round", "round_half_even", "ceil",
                                       "exact_round", "exact_round_half_even", "exact_ceil")
    got = tuple(_conventions.output_length(rule, n_in, f32(scale))
                for rule in _conventions.SIZE_RULES)
    assert got == sizes


def test_output_size_by_exact_ceil_is_named() -> None:
    # 5 x f32(1.6) is 8.00000012: 9 rows by the exact (float64) ceil, 8 by every other rule
    # (this output used to match no size rule). Rows read as Upsample reads them, o / 1.6.
    x = random_array((1, 1, 5, 4), seed=25)
    rows = np.minimum(np.trunc(np.arange(9, dtype=f32) / f32(1.6)), 4).astype(np.int64)
    cols = np.arange(8) // 2
    theirs = x[:, :, rows][:, :, :, cols]
    result = explain(x, theirs, [1, 1, 1.6000000238, 2], "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, output size by exact ceil"


def test_trunc_size_rule_is_upsamples() -> None:
    # "trunc" is Upsample's own rule: trunc(f32 * f32), exact from 2**24 on (it used to fall
    # through to ceil, so that 5 x 1.3 gave 7)
    for n_in in [0, 1, 5, 7, 300, 2**24 - 1, 2**24, 2**24 + 1, 3 * 2**25 + 5]:
        for scale in [1.0, 1.3, 1.3333334, 1.5, 1.7, 2.1333334, 1000.5]:
            expected = onnx_upsample.output_shape((n_in,), [scale])[0]
            assert _conventions.output_length("trunc", n_in, f32(scale)) == expected


def test_output_size_by_round_half_to_even_is_named() -> None:
    # H: 5 x f32(1.3) is the tie 6.5 (half to even: 6, half away: 7); W: 4 x f32(1.7) = 6.8
    # (7 either way, trunc 6): only round half to even gives (6, 7)
    x = random_array((1, 1, 5, 4), seed=21)
    scales = [1, 1, 1.3, 1.7]
    rows = np.minimum(np.trunc(np.arange(6, dtype=f32) / f32(1.3)), 4).astype(np.int64)
    cols = np.minimum(np.trunc(np.arange(7, dtype=f32) / f32(1.7)), 3).astype(np.int64)
    theirs = x[:, :, rows][:, :, :, cols]
    result = explain(x, theirs, scales, "nearest")
    assert result.verdict == "convention", result.summary
    assert result.best == "Upsample, output size by round half to even (numpy's round)"


def test_every_size_rule_that_gives_the_shape_is_named() -> None:
    # 5 x 1.5 = 7.5 and 10 x 1.25 = 12.5, exactly and in float32: round (half away from
    # zero) and ceil, of either product, give 8 x 13. A ceil-sized runtime used to be named
    # "round (TVM)" only, ceil not among the matches, because only the first rule that gives
    # the shape was tried.
    x = random_array((1, 1, 5, 10), seed=24)
    rows = np.minimum(np.trunc(np.arange(8, dtype=f32) / f32(1.5)), 4).astype(np.int64)
    cols = np.minimum(np.trunc(np.arange(13, dtype=f32) / f32(1.25)), 9).astype(np.int64)
    result = explain(x, x[:, :, rows][:, :, :, cols], [1, 1, 1.5, 1.25], "nearest")
    assert result.verdict == "convention", result.summary
    rounded, ceiled = "Upsample, output size by round (TVM)", "Upsample, output size by ceil"
    assert rounded in result.matches and ceiled in result.matches
    assert result.best == rounded  # the rules' order of preference
    # every convention reproduces it with any of the four rules: each is listed with each
    with_ceil = [name for name in result.matches if name.endswith(", output size by ceil")]
    assert len(with_ceil) * 4 == len(result.matches)
    assert "Upsample, output size by exact ceil" in result.matches
    assert "round (TVM)" in result.summary and "ceil" in result.summary, result.summary


def _pytorch_indices(n_in: int, scale: float) -> np.ndarray:
    """PyTorch's nearest: floor(o * float32(1 / scale)), clamped."""
    n_out = onnx_upsample.output_shape((n_in,), [scale])[0]
    o = np.arange(n_out, dtype=f32)
    return np.minimum(np.floor(o * f32(1.0 / float(f32(scale)))), n_in - 1).astype(np.int64)


def test_pytorch_rule_at_the_exporters_four_thirds() -> None:
    # At f32(4/3) = 1.3333334 PyTorch's reciprocal rule and Upsample's division agree for
    # every output index up to 2**20, so "matches Upsample bit for bit" is true there; the
    # summary names PyTorch's rule among the conventions that match equally.
    scale = 1.3333334
    o = np.arange(2**20, dtype=f32)
    assert np.array_equal(np.floor(o * f32(1.0 / float(f32(scale)))), np.trunc(o / f32(scale)))
    x = random_array((1, 1, 12, 9), seed=22)
    theirs = x[:, :, _pytorch_indices(12, scale)][:, :, :, _pytorch_indices(9, scale)]
    result = explain(x, theirs, [1, 1, scale, scale], "nearest")
    assert result.verdict == "upsample"
    assert "Resize asymmetric + floor, reciprocal multiply (PyTorch)" in result.summary
    assert "cannot tell them apart" in result.summary
    # where the rules differ (f32(1.7), from 11 rows on) PyTorch's rule reproduces the output;
    # at 11 x 14 it reads another row than Upsample at one output row and another column at
    # one output column: too few to tell it from chance, so it only coincides
    pytorch = "Resize asymmetric + floor, reciprocal multiply (PyTorch)"
    x = random_array((1, 1, 11, 14), seed=23)
    theirs = x[:, :, _pytorch_indices(11, 1.7)][:, :, :, _pytorch_indices(14, 1.7)]
    assert not np.array_equal(theirs, onnx_upsample.upsample(x, [1, 1, 1.7, 1.7]))
    result = explain(x, theirs, [1, 1, 1.7, 1.7], "nearest")
    assert result.verdict == "coincides", result.summary
    assert pytorch in result.matches
    assert "(2 output indices read from another input index)" in result.summary
    # at 60 x 80 it departs at 5 rows and 7 columns: named; the float64 quotient picks the
    # same indices, and the summary says both
    x = random_array((1, 1, 60, 80), seed=23)
    theirs = x[:, :, _pytorch_indices(60, 1.7)][:, :, :, _pytorch_indices(80, 1.7)]
    result = explain(x, theirs, [1, 1, 1.7, 1.7], "nearest")
    assert result.verdict == "convention", result.summary
    assert pytorch in result.matches and pytorch in result.summary
    assert result.summary.startswith(f"matches {len(result.matches)} conventions equally")


def test_shape_matching_no_size_rule() -> None:
    x = np.ones((1, 1, 2, 2), dtype=np.float32)
    result = explain(x, np.ones((1, 1, 5, 7), dtype=np.float32), [1, 1, 2, 2])
    assert result.verdict == "none"
    assert "(1, 1, 5, 7)" in result.summary
    assert "matches no size rule tried" in result.summary


def test_too_large_to_explain() -> None:
    x = np.ones((1, 1, 2, 2), dtype=np.float32)
    theirs = onnx_upsample.upsample(x, [1, 1, 2, 2])
    result = explain(x, theirs, [1, 1, 2, 2], max_elements=15)
    assert result.verdict == "none"
    assert "too large" in result.summary


def test_axes_left_unresized_are_named() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    summary = explain(x, x.copy(), [1.5, 2.5], "linear").summary
    assert "leaves axes [0, 1]" in summary and "batch and channel" in summary
    four = np.zeros((1, 2, 3, 4), np.float32)
    summary = explain(four, np.zeros((1, 2, 6, 4), np.float32), [1, 2, 2, 2], "linear").summary
    assert "leaves axes [1, 3]" in summary and "batch" not in summary


def test_axes_left_unresized_against_upsamples_size() -> None:
    # axis 0 is resized as Upsample resizes it (trunc(5 x 1.3) = 6, where ceil gives 7);
    # axis 1 is left at its length
    x = np.zeros((5, 5), np.float32)
    summary = explain(x, np.zeros((6, 5), np.float32), [1.3, 2]).summary
    assert "leaves axes [1]" in summary and "batch" not in summary
    # an axis whose scale changes no length is not "left unresized": 2 x 1.4 truncates to 2
    five = np.zeros((2, 2, 3, 2, 2), np.float32)
    summary = explain(five, five.copy(), [1, 1.5, 2, 1, 1.4]).summary
    assert "leaves axes [1, 2]" in summary


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_rank_0(dtype: str) -> None:
    # one element, no axis: linear blends nothing (its separable variants used to crash)
    x = np.asarray(3, dtype=dtype)
    for mode in ("nearest", "linear"):
        assert explain(x, x.copy(), [], mode).verdict == "upsample"
        assert explain(x, x + 1, [], mode).verdict == "none"


# ---------------------------------------------------------------------------------------------
# How close is "close"
# ---------------------------------------------------------------------------------------------


def _nudged(gap: int) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """An input, and Upsample's linear output with a tenth of its elements ``gap`` ULP off."""
    rng = np.random.default_rng(RNG_SEED + 13)
    x = random_array((1, 3, 16, 20), seed=13)
    scales = [1, 1, 1.5, 1.7]
    theirs = onnx_upsample.upsample(x, scales, "linear")
    bits = theirs.view(np.int32)
    bits[rng.random(theirs.shape) < 0.1] += gap  # away from zero on both signs
    return x, theirs, scales


@pytest.mark.parametrize("gap", [20, _search.CLOSE_ULP])
def test_close_within_the_limit(gap: int) -> None:
    x, theirs, scales = _nudged(gap)
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "close", result.summary
    assert result.best == "Upsample" and result.max_ulp == gap


def test_beyond_the_limit_is_none() -> None:
    x, theirs, scales = _nudged(_search.CLOSE_ULP + 8)
    assert explain(x, theirs, scales, "linear").verdict == "none"


def test_documented_limit_is_the_code_limit() -> None:
    # the docstrings said 4 ULP while the code allowed 32
    assert _search.CLOSE_ULP == 32
    for doc in (explain.__doc__, Explanation.__doc__):
        assert f"within {_search.CLOSE_ULP} ULP" in " ".join(str(doc).split())


def test_documented_chance_rule_is_the_code_rule() -> None:
    # ten departures, each agreeing by chance half the time at most: 2**-10 < 1/1000
    assert _search.MIN_DEPARTURES == 10
    doc = " ".join(str(explain.__doc__).split())
    assert "departs in at least ten independent places" in doc
    assert "probability 2**-10 < 1/1000" in doc


# ---------------------------------------------------------------------------------------------
# The list of conventions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_conventions_list(mode: str) -> None:
    listed = conventions(mode)
    assert listed[0] == Convention("Upsample", ())
    names = [c.name for c in listed]
    assert len(set(names)) == len(names)
    assert all(c.departures for c in listed[1:])
    assert [len(c.departures) for c in listed] == sorted(len(c.departures) for c in listed)
    # per size rule and scale order that give the shape; integer rounding only for integer
    # types: 6 transforms (5 for linear) x 2 sources x 3 arithmetics x 5 roundings, or x 9
    # blends x 4 integer rules
    per_call = [c for c in listed
                if not any(d.startswith(("size:", "scales:")) for d in c.departures)]
    assert len(per_call) == (180 if mode == "nearest" else 360)
    assert len(listed) == len(per_call) * len(_conventions.SIZE_RULES) * 3
    assert "at most 180 nearest and 360 linear" in " ".join(str(conventions.__doc__).split())
    assert "Resize half_pixel + round_prefer_floor" in names or mode == "linear"
    assert "Resize align_corners (linear)" in names or mode == "nearest"


def test_evaluator_reproduces_upsample() -> None:
    # explain takes Upsample's own output for Upsample; every other convention goes through
    # the explainer's evaluator, so it must give Upsample bit for bit where they coincide
    rng = np.random.default_rng(RNG_SEED + 11)
    for dtype in ["float32", "float64", "float16", "bfloat16", "int8", "uint16", "int64",
                  "complex128"]:
        for shape, scales in [*UPSAMPLE_CASES, ((2, 2, 3, 2, 2), [1, 1.5, 2, 1, 1.4])]:
            x = any_type(shape, dtype, rng)
            for mode in ("nearest", "linear"):
                ours = onnx_upsample.upsample(x, scales, mode)
                case = _resample.Case(x, ours, tuple(f32(s) for s in scales), mode,
                                      element_type(x.dtype))
                recipe = _conventions.Recipe(mode)
                ids, tables = case.tables(recipe)
                got = case.evaluate(recipe, ids, tables, _resample.open_mesh(ours.shape), "full")
                assert _search.same(got, ours, case.floating).all(), (dtype, shape, mode)


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------

X = np.ones((1, 1, 2, 3), dtype=np.float32)
Y = np.ones((1, 1, 4, 6), dtype=np.float32)


# docs/semantics.md §3: TypeError for arguments of the wrong kind, UpsampleError for wrong values
@pytest.mark.parametrize(("kwargs", "message", "error"), [
    ({"x": None}, "x is None", TypeError),
    ({"x": [[1, 2], [3]]}, "x cannot be read", UpsampleError),
    ({"x": np.zeros((1, 1, 2, 3), dtype="datetime64[s]")}, "x has element type", UpsampleError),
    ({"theirs": None}, "theirs is None", TypeError),
    ({"theirs": Y.astype(np.float64)}, "theirs has element type 'float64'", UpsampleError),
    ({"scales": None}, "scales is None", TypeError),
    ({"scales": "1122"}, "scales is '1122'", TypeError),
    ({"scales": [2, 2]}, "scales has 2 value", UpsampleError),
    ({"scales": [1, 1, True, 2]}, r"scales\[2\] is True", TypeError),
    ({"scales": [1, 1, "2", 2]}, r"scales\[2\] is '2'", TypeError),
    ({"scales": [1, 1, 2, 0.5]}, r"scales\[3\] is 0.5; Upsample only enlarges", UpsampleError),
    ({"scales": [1, 1, 2, float("nan")]}, r"scales\[3\] is nan", UpsampleError),
    # an integer beyond float used to escape as OverflowError
    ({"scales": [1, 1, 2, 2**2000]}, r"scales\[3\] is .*beyond float32's range", UpsampleError),
    ({"mode": "cubic"}, "mode is 'cubic'; expected 'nearest' or 'linear'", UpsampleError),
    ({"mode": None}, "mode is None", UpsampleError),
    ({"max_elements": -1}, "max_elements is -1", UpsampleError),
    ({"max_elements": True}, "max_elements is True", TypeError),
])
def test_bad_arguments(kwargs: dict[str, object], message: str, error: type) -> None:
    arguments: dict[str, object] = {"x": X, "theirs": Y, "scales": [1, 1, 2, 2],
                                    "mode": "nearest"}
    arguments.update(kwargs)
    with pytest.raises(error, match=message) as raised:
        explain(**arguments)  # type: ignore[arg-type]
    assert type(raised.value) is error


@pytest.mark.parametrize(("x", "scales", "mode"), [
    (X, [2, 2], "nearest"),
    (X, [1, 1, True, 2], "nearest"),
    (X, [1, 1, 2, 0.5], "nearest"),
    (X, [1, 1, 2, float("inf")], "nearest"),
    (X, 2, "nearest"),
    (X, [1, 1, 2, 2], "cubic"),
    (np.zeros((1, 1, 2, 3), dtype="datetime64[s]"), [1, 1, 2, 2], "nearest"),
    (X.astype(bool), [1, 1, 2, 2], "linear"),
    (X.astype(str), [1, 1, 2, 2], "linear"),
])
def test_messages_are_upsamples(x: np.ndarray, scales: object, mode: str) -> None:
    # the arguments Upsample itself takes are checked by its own rules, with its words
    with pytest.raises((TypeError, UpsampleError)) as by_upsample:
        onnx_upsample.upsample(x, scales, mode)  # type: ignore[arg-type]
    with pytest.raises(type(by_upsample.value)) as by_explain:
        explain(x, x, scales, mode)  # type: ignore[arg-type]
    assert str(by_explain.value) == str(by_upsample.value)


def test_linear_of_bool_is_refused() -> None:
    x = np.ones((2, 3), dtype=bool)
    with pytest.raises(UpsampleError, match="mode 'linear' is not defined for element type bool"):
        explain(x, np.ones((4, 6), dtype=bool), [2, 2], "linear")


def test_conventions_of_a_bad_mode() -> None:
    with pytest.raises(UpsampleError, match="mode is 'cubic'"):
        conventions("cubic")
    assert conventions("bilinear") == conventions("trilinear") == conventions("linear")
