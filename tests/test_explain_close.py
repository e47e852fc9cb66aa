"""The explainer's "close" verdict for linear outputs: measured in the output's own ULP,
and, where a blend's terms cancel near 0, in ULP of the input's largest magnitude."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx_upsample
from onnx_upsample.conformance._explain import explain
from onnx_upsample.conformance._grade import max_ulp

f32 = np.float32


def test_a_blend_that_cancels_near_zero_is_close_not_noise() -> None:
    # another order of the same sum differs by a rounding of the terms (the input's scale):
    # near 0 that is millions of the output's own ULP, and it is still not noise or a bug
    x = np.random.default_rng(6).uniform(-1, 1, (1, 1, 6, 7)).astype(f32)
    x[0, 0, 0, 0] = 1e-6  # the first output is this value, where the output's ULP is tiny
    scales = [1, 1, 2, 2]
    ours = onnx_upsample.upsample(x, scales, "linear")
    unit = f32(2.0**-24)  # ULP of the input's largest magnitude, in [0.5, 1)
    rounding = np.where(np.arange(ours.size).reshape(ours.shape) % 3 == 0, unit, f32(0))
    theirs = (ours + rounding).astype(f32)
    assert max_ulp(ours, theirs) > 10_000  # in the output's own ULP: far from close
    result = explain(x, theirs, scales, "linear")
    assert result.verdict == "close" and result.max_ulp is not None, result.summary
    assert result.max_ulp <= 2 and "ULP of the input's largest magnitude" in result.summary
    noisy = (ours + np.random.default_rng(7).normal(0, 1e-3, ours.shape)).astype(f32)
    assert explain(x, noisy, scales, "linear").verdict == "none"
