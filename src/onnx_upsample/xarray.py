"""ONNX ``Upsample`` on xarray ``DataArray``: dims, coordinates, name and attributes kept.

The only module of onnx-upsample that imports xarray (extra ``xarray``); import it
explicitly: ``import onnx_upsample.xarray``. A dask-backed DataArray stays lazy: its data go
through :func:`onnx_upsample.dask.upsample` (extra ``dask``), anything else through
:func:`onnx_upsample.upsample`.

New coordinates follow Upsample's asymmetric mapping: output index ``o`` of an axis with
scale ``s`` reads the input at position ``o / s`` (nearest takes the element at or before it,
linear blends the two around it), so its coordinate is the input coordinate at that
position, interpolated linearly between the two input coordinates around it, and
extrapolated past the last one with the spacing of the last two. For a regular grid that is
exactly the finer regular grid starting at the same first value: ``c0 + o * step / s``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from ._api import upsample as _upsample
from ._errors import UpsampleError, UpsampleWarning
from ._spec.modes import ModeName
from ._spec.scales import scale_value_problems, scale_values, scales_of

try:
    import xarray as xr
except ModuleNotFoundError as missing:  # the extra is not installed: one line naming it
    if (missing.name or "").split(".")[0] != "xarray":
        raise  # xarray is there but one of its own dependencies is broken: its own error
    raise ModuleNotFoundError(
        "onnx_upsample.xarray needs xarray: pip install 'onnx-upsample[xarray]'",
        name=missing.name) from None

__all__ = ["upsample"]


def upsample(
    da: xr.DataArray,
    scales: Mapping[Hashable, float] | Sequence[float],
    mode: ModeName = "nearest",
) -> xr.DataArray:
    """Apply the ONNX ``Upsample`` operator (versions 7, 9, 10) to an xarray ``DataArray``.

    The data are exactly ``onnx_upsample.upsample(da.values, scales, mode)`` (bit for bit,
    onnxruntime 1.32's arithmetic), computed lazily through :mod:`onnx_upsample.dask` when
    ``da`` is dask-backed. Dims, name and attributes are kept, and so are coordinates along
    dims whose length and mapping do not change.

    **Pass the whole array in one call, never slice by slice.** In linear mode ORT chooses
    which axes to interpolate from the rank and the scales (docs/semantics.md §2), unscaled
    axes included, so a slice of lower rank is computed with other weights: upsampling the
    2-D bands of a (3, 6, 5) float32 array one at a time (scale 1.5 on y) changes the last
    bits (1 ULP) of 13% of the last band's elements.

    Parameters
    ----------
    da : xarray.DataArray
        Any dims, element type and backing (numpy, dask).
    scales : mapping of dim to float, or sequence of float
        ``{dim: scale}`` (dims left out keep scale 1), or one scale per dim in
        ``da.dims`` order; each finite and >= 1, converted to float32 as ONNX stores them.
    mode : {"nearest", "linear"}
        As in :func:`onnx_upsample.upsample`.

    Returns
    -------
    xarray.DataArray
        Same dims, name and attributes (a new dict). A coordinate along a dim whose scale is
        not 1 is recomputed for the new samples: sample ``o`` sits at input position
        ``o / s`` (``s`` the float32 scale, the division in float64), and its coordinate is
        the linear interpolation of the input coordinate there, extrapolated past the last
        input sample with the spacing of the last two. Numbers give float64 (float32 stays
        float32), dates and durations give the same unit, rounded to a whole unit. When no
        axis changes length, ORT's result is a copy of the input, and so are the
        coordinates. Coordinates that cannot be placed this way are dropped with an
        :class:`UpsampleWarning` naming them: coordinates of other element types (strings,
        bools, objects), coordinates spanning more than one dim, and coordinates along a dim
        of length 1 (no spacing to place new samples by).

    Raises
    ------
    TypeError
        If ``da`` is not a DataArray, or for scales of the wrong kind.
    UpsampleError
        For a dim in ``scales`` that ``da`` does not have, a count of scales other than the
        number of dims, and every error of :func:`onnx_upsample.upsample`.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from onnx_upsample.xarray import upsample
    >>> da = xr.DataArray(np.arange(3.0), dims="x", coords={"x": [10.0, 20.0, 30.0]})
    >>> upsample(da, {"x": 2})["x"].values.tolist()
    [10.0, 15.0, 20.0, 25.0, 30.0, 35.0]
    """
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"da is a {type(da).__name__}; expected an xarray.DataArray (for a "
                        "Dataset, upsample each of its variables: ds[name])")
    values = _scales_by_dim(da, scales)
    data = da.data
    dask_array = sys.modules.get("dask.array")  # data cannot be a dask array unless loaded
    if dask_array is not None and isinstance(data, dask_array.Array):
        from . import dask as chunked

        result: Any = chunked.upsample(data, values, mode)
    else:
        result = _upsample(data, values, mode)
    f32_scales = scales_of(values, da.shape)
    coords = _coordinates(da, dict(zip(da.dims, f32_scales, strict=True)), result.shape)
    return xr.DataArray(result, dims=da.dims, coords=coords, name=da.name,
                        attrs=dict(da.attrs))


def _scales_by_dim(
    da: xr.DataArray, scales: Mapping[Hashable, float] | Sequence[float]
) -> list[float | int]:
    """One scale per dim of ``da``, in its order, from a mapping or a sequence; messages
    name a mapping's scales by dim (``scales['y']``)."""
    if isinstance(scales, Mapping):
        unknown = [dim for dim in scales if dim not in da.dims]
        if unknown:
            raise UpsampleError(
                f"scales names dim {unknown[0]!r}, which da does not have (dims {da.dims}); "
                f"use names from da.dims"
            )
        by_dim = {}
        for dim, value in scales.items():
            try:
                by_dim[dim] = scale_values([value])[0]
            except TypeError:
                raise TypeError(f"scales[{dim!r}] is {value!r}; expected a number >= 1 (the "
                                f"scale of dim {dim!r})") from None
        values = [by_dim.get(dim, 1.0) for dim in da.dims]
        names = [f"scales[{dim!r}]" for dim in da.dims]
    else:
        values = scale_values(scales)
        if len(values) != da.ndim:
            raise UpsampleError(
                f"scales has {len(values)} value(s) {values} but da has {da.ndim} dims "
                f"{da.dims}; give one scale per dim in that order, or a mapping {{dim: scale}}"
            )
        names = [f"scales[{axis}]" for axis in range(da.ndim)]
    problems = scale_value_problems(values)[1]
    if problems:
        axis, problem, fix = problems[0]
        raise UpsampleError(f"{names[axis]} is {problem}; {fix}")
    return values


def _coordinates(
    da: xr.DataArray, scales: dict[Hashable, np.float32], out_shape: tuple[int, ...]
) -> dict[Hashable, xr.Variable]:
    """The output's coordinates: kept, recomputed at the new positions, or dropped."""
    # ORT's global rule: when no axis changes length the result is a copy, whatever the
    # scales, so every sample stays where it was
    no_resize = out_shape == da.shape
    moved = set() if no_resize else {dim for dim, s in scales.items() if s != 1}
    kept: dict[Hashable, xr.Variable] = {}
    dropped: list[str] = []
    for name, coord in da.coords.items():
        variable = coord.variable
        along = [dim for dim in variable.dims if dim in moved]
        if not along:
            kept[name] = variable.copy(deep=False)
            continue
        why = _cannot_place(variable)
        if why is None and name in da.xindexes and len(da.xindexes.get_all_coords(name)) > 1:
            # a level of a multi-index: its values repeat and wrap along the dim, so
            # interpolating between neighbours means nothing
            why = "a level of a multi-index"
        if why is not None:
            dropped.append(f"{name!r} ({why})")
            continue
        dim = along[0]
        length = out_shape[da.get_axis_num(dim)]
        positions = np.arange(length, dtype=np.float64) / np.float64(scales[dim])
        kept[name] = xr.Variable(variable.dims, _interpolate(variable.values, positions),
                                 attrs=dict(variable.attrs))
    if dropped:
        warnings.warn(
            "upsample dropped coordinate(s) " + ", ".join(dropped) + "; they cannot be placed "
            "at the new samples' positions (o / scale): recompute them and assign_coords",
            UpsampleWarning, stacklevel=3)
    return kept


def _cannot_place(variable: xr.Variable) -> str | None:
    """Why a coordinate along a scaled dim cannot be recomputed, or None if it can."""
    if variable.ndim != 1:
        return f"it spans dims {variable.dims}"
    if variable.dtype.kind not in "iufmM":
        return f"element type {variable.dtype}"
    if variable.size == 1:
        return "one value gives no spacing to place new samples by"
    return None


def _interpolate(coord: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``coord`` at fractional ``positions``: linear between samples, and past the last one
    with the spacing of the last two (the asymmetric mapping only looks forward)."""
    kind = coord.dtype.kind
    if kind in "mM":  # dates and durations: whole units, relative to the first valid value
        nat = np.isnat(coord)
        start = coord[~nat][0] if not nat.all() else coord[0]
        # NaT is the int64 minimum: as a number it would be interpolated into nonsense dates,
        # so it travels as NaN, as NaN does through a float coordinate
        offsets = np.where(nat, np.nan, (coord - start).astype(np.int64).astype(np.float64))
        placed = _interpolate(offsets, positions)
        missing = np.isnan(placed)
        whole = np.rint(np.where(missing, 0.0, placed)).astype(np.int64)
        result = start + whole.astype(f"m8[{np.datetime_data(coord.dtype)[0]}]")
        result[missing] = np.array("NaT", dtype=result.dtype)
        return result
    values = coord.astype(coord.dtype if coord.dtype == np.float32 else np.float64)
    left = np.minimum(np.floor(positions).astype(np.intp), len(values) - 2)
    fraction = (positions - left).astype(values.dtype)
    placed = values[left] + fraction * (values[left + 1] - values[left])
    # a sample that lands on an input sample takes its value, also beside a NaN (0 * NaN)
    on_sample, on_next = fraction == 0, fraction == 1
    placed[on_sample] = values[left][on_sample]
    placed[on_next] = values[left + 1][on_next]
    return placed
