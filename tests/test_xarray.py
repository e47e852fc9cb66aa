"""onnx_upsample.xarray: a DataArray in, a DataArray out, its data exactly the array call's,
lazy when dask-backed, and its coordinates at the positions the asymmetric mapping reads."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from onnx_upsample import UpsampleError, UpsampleWarning, upsample

xr = pytest.importorskip("xarray", reason="xarray is not installed (extra 'xarray')")
from onnx_upsample.xarray import upsample as upsample_da  # noqa: E402


def _grid() -> xr.DataArray:
    data = (np.arange(2 * 3 * 4 * 5, dtype=np.float32) / 7).reshape(2, 3, 4, 5)
    return xr.DataArray(
        data, dims=("n", "c", "y", "x"), name="v", attrs={"units": "K"},
        coords={"y": ("y", [0.0, 10.0, 20.0, 30.0], {"units": "m"}),
                "x": [100, 101, 103, 106, 110],  # irregular integers
                "c": ["r", "g", "b"],  # strings on an unscaled dim: kept
                "t": ("n", np.array(["2020-01-01", "2020-01-03"], "M8[ns]")),
                "station": 7})


def test_data_dims_name_attrs_and_kept_coordinates() -> None:
    da = _grid()
    out = upsample_da(da, {"y": 2, "x": 1.5, "n": 1}, "linear")
    assert out.values.tobytes() == upsample(da.values, [1, 1, 2, 1.5], "linear").tobytes()
    assert (out.dims, out.name, out.attrs) == (da.dims, "v", {"units": "K"})
    assert out.attrs is not da.attrs
    assert out["c"].values.tolist() == ["r", "g", "b"] and int(out["station"]) == 7
    assert out["t"].values.tolist() == da["t"].values.tolist()
    assert out["y"].attrs == {"units": "m"}


def test_a_regular_grid_becomes_the_finer_grid() -> None:
    out = upsample_da(_grid(), [1, 1, 2, 1], "nearest")
    # positions o / 2 = 0, 0.5, ... 3.5: the last one past the end, at the last spacing
    assert out["y"].values.tolist() == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0]
    assert out["y"].values.tolist() == (np.arange(8) * 10 / 2).tolist()


def test_irregular_fractional_and_extrapolated_coordinates() -> None:
    out = upsample_da(_grid(), {"x": 1.5})
    # 5 * 1.5 -> 7 samples at positions o / 1.5: 0, 2/3, 4/3, 2, 8/3, 10/3, 4
    x = [100, 101, 103, 106, 110]
    expected = [100, 100 + 2 / 3, 101 + 2 * (1 / 3), 103, 103 + 3 * (2 / 3),
                106 + 4 * (1 / 3), 110]
    assert out["x"].dtype == np.float64
    np.testing.assert_allclose(out["x"].values, expected, rtol=0, atol=1e-12)
    assert out["x"].values[[0, 3, 6]].tolist() == [x[0], x[2], x[4]]  # whole positions exact
    long = upsample_da(_grid(), {"x": 2})  # positions up to 4.5: past the end by 0.5
    assert long["x"].values[-1] == 110 + 0.5 * (110 - 106)


def test_dates_stay_dates_in_their_unit() -> None:
    out = upsample_da(_grid(), {"n": 2})
    assert out["t"].dtype == np.dtype("M8[ns]")
    assert [str(t)[:10] for t in out["t"].values] == [
        "2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"]


def test_missing_coordinate_values_stay_missing() -> None:
    # NaT is the int64 minimum: interpolated as a number it became dates 146 billion years
    # away. Missing stays missing, and samples on an input sample keep its value beside one.
    dates = np.array(["2020-01-01", "NaT", "2020-01-03"], "M8[D]")
    out = upsample_da(xr.DataArray(np.arange(3.0), dims="t", coords={"t": dates}), {"t": 2})
    got = out.t.values.astype("M8[D]")
    assert [str(v) for v in got] == ["2020-01-01", "NaT", "NaT", "NaT", "2020-01-03", "NaT"]
    floats = upsample_da(xr.DataArray(np.arange(3.0), dims="t", coords={"t": [0, np.nan, 2]}),
                         {"t": 2})
    np.testing.assert_array_equal(floats.t.values, [0, np.nan, np.nan, np.nan, 2, np.nan])


def test_multi_index_levels_are_dropped_not_blended() -> None:
    stacked = xr.DataArray(np.arange(12.0).reshape(3, 4), dims=("y", "x"),
                           coords={"y": [0, 1, 2], "x": [0, 1, 2, 3]}).stack(z=("y", "x"))
    with pytest.warns(UpsampleWarning, match=r"'y' \(a level of a multi-index\)"):
        out = upsample_da(stacked, {"z": 2})
    assert not {"z", "y", "x"} & set(out.coords)


def test_no_resize_keeps_every_coordinate() -> None:
    """ORT's global rule: no axis changes length (3 * 1.2 -> 3), so x is copied, and every
    sample, with its coordinate, stays where it was."""
    da = xr.DataArray(np.arange(3.0), dims="x", coords={"x": [1, 2, 4]})
    out = upsample_da(da, [1.2], "linear")
    assert out.values.tolist() == [0.0, 1.0, 2.0]
    assert out["x"].values.tolist() == [1, 2, 4] and out["x"].dtype == da["x"].dtype


def test_coordinates_that_cannot_be_placed_are_dropped_with_a_warning() -> None:
    da = xr.DataArray(np.zeros((2, 3)), dims=("y", "x"),
                      coords={"label": ("x", ["a", "b", "c"]),
                              "lat": (("y", "x"), np.ones((2, 3))),
                              "x": [0.0, 1.0, 2.0]})
    with pytest.warns(UpsampleWarning) as record:
        out = upsample_da(da, {"x": 2})
    assert len(record) == 1
    message = str(record[0].message)
    assert "'label' (element type <U1)" in message and "'lat' (it spans dims" in message
    assert set(out.coords) == {"x"}
    single = xr.DataArray(np.zeros(1), dims="x", coords={"x": [5.0]})
    with pytest.warns(UpsampleWarning, match="'x' .one value gives no spacing"):
        assert "x" not in upsample_da(single, [3]).coords
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        upsample_da(da.drop_vars(["label", "lat"]), {"x": 2})  # nothing dropped, no warning


def test_dask_backed_stays_lazy_and_equal() -> None:
    pytest.importorskip("dask.array", reason="dask is not installed (extra 'dask')")
    da = _grid().chunk({"y": 3, "x": 2})
    out = upsample_da(da, {"y": 2, "x": 1.5}, "linear")
    assert type(out.data).__module__.startswith("dask")
    assert out["y"].values.tolist() == upsample_da(_grid(), {"y": 2, "x": 1.5})["y"].values.tolist()
    assert out.values.tobytes() == upsample(_grid().values, [1, 1, 2, 1.5], "linear").tobytes()


def test_the_whole_array_in_one_call_is_not_slice_by_slice() -> None:
    """Why the docs say one call: ORT interpolates all three axes of a rank-3 array, the
    unscaled band axis too (weights 0.5 and 0.5 at its last index, which rounds the sums
    differently there), and a 2-D slice has no band axis: the last bits differ."""
    data = np.random.default_rng(0).standard_normal((3, 6, 5)).astype(np.float32)
    da = xr.DataArray(data, dims=("band", "y", "x"))
    whole = upsample_da(da, {"y": 1.5}, "linear").values
    sliced = np.stack([upsample_da(da[b], {"y": 1.5}, "linear").values for b in range(3)])
    differ = whole != sliced
    assert 0.01 < differ.mean() < 0.2
    ulps = np.abs(whole.view(np.int32).astype(np.int64) - sliced.view(np.int32))
    assert ulps.max() <= 2


@pytest.mark.parametrize(("scales", "error", "message"), [
    ({"z": 2}, UpsampleError, "scales names dim 'z', which da does not have (dims ('n', 'c', "
     "'y', 'x')); use names from da.dims"),
    ([2, 2], UpsampleError, "scales has 2 value(s) [2.0, 2.0] but da has 4 dims ('n', 'c', "
     "'y', 'x'); give one scale per dim in that order, or a mapping {dim: scale}"),
    ({"y": True}, TypeError, "scales['y'] is True; expected a number >= 1 (the scale of "
     "dim 'y')"),
    ({"y": 0.5}, UpsampleError, "scales['y'] is 0.5; Upsample only enlarges"),
    ({"y": float("nan")}, UpsampleError, "scales['y'] is nan; each scale must be a finite"),
    ([1, 1, 1, 0], UpsampleError, "scales[3] is 0.0; Upsample only enlarges"),
    ("2222", TypeError, "scales is '2222'"),
])
def test_bad_scales(scales: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        upsample_da(_grid(), scales)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message)


def test_without_xarray_the_import_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "xarray", None)  # what an absent package looks like
    monkeypatch.delitem(sys.modules, "onnx_upsample.xarray")
    with pytest.raises(ImportError) as error:
        importlib.import_module("onnx_upsample.xarray")
    assert str(error.value) == ("onnx_upsample.xarray needs xarray: pip install "
                                "'onnx-upsample[xarray]'")


def test_only_dataarrays() -> None:
    with pytest.raises(TypeError, match=r"da is a Dataset; expected an xarray\.DataArray"):
        upsample_da(_grid().to_dataset(), {"y": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="da is a ndarray"):
        upsample_da(np.ones(2), [2])  # type: ignore[arg-type]
