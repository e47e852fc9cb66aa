"""Kernel dispatch: one entry point, ``run(plan, out)``, choosing a path per mode and type."""

from __future__ import annotations

import numpy as np

from .._validate import Plan
from . import _numpy
from ._tables import linear_tables, nearest_tables


def run(plan: Plan, out: np.ndarray) -> None:
    """Fill ``out`` (already checked: shape, dtype, C order) with Upsample(plan.x)."""
    x, scales = plan.x, plan.scales
    if plan.mode == "nearest":
        _numpy.nearest(x, out, nearest_tables(x.shape, plan.out_shape, scales))
    else:
        _numpy.linear(x, out, linear_tables(x.shape, plan.out_shape, scales), plan.etype)
