"""``onnx-upsample apply`` on zarr stores and chunked .npy: every chunking gives the in-memory
result bit for bit; dimension names, zarr v2 and v3, an old store replaced only by a store,
the progress bar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

from file_checks import one_line_error, only, same  # noqa: E402
from runners import run_main  # noqa: E402

from onnx_upsample import upsample  # noqa: E402
from onnx_upsample.io import apply as apply_job  # noqa: E402

RNG = np.random.default_rng(20)


# ---------------------------------------------------------------------------------------------
# zarr and chunked .npy
# ---------------------------------------------------------------------------------------------


def _volume(dtype: str = "float32") -> np.ndarray:
    return RNG.normal(0, 50, (11, 9, 7)).astype(dtype)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_npy_to_zarr_to_npy(tmp_path: Path, mode: str) -> None:
    x = _volume()
    np.save(tmp_path / "in.npy", x)
    store = tmp_path / "out.zarr"
    assert run_main(["apply", tmp_path / "in.npy", store, "--scales", "2", "1.5", "1.3",
                "--mode", mode, "--chunks", "8", "--quiet"]) == 0
    assert (store / "zarr.json").exists()  # zarr v3 by default
    written = zarr.open_array(str(store), mode="r")
    assert written.chunks == (8, 8, 8)
    expected = upsample(x, [2, 1.5, 1.3], mode)
    assert same(written[...], expected)
    # zarr to zarr: chunk by chunk, attributes kept
    written_rw = zarr.open_array(str(store), mode="r+")
    written_rw.attrs["units"] = "mm"
    again = tmp_path / "again.zarr"
    assert run_main(["apply", store, again, "--scales", "1.5", "1", "1", "--mode", mode,
                "--quiet"]) == 0
    reread = zarr.open_array(str(again), mode="r")
    assert reread.attrs["units"] == "mm"
    assert reread.chunks == (12, 8, 8)  # the input's chunks, scaled
    assert same(reread[...], upsample(expected, [1.5, 1, 1], mode))
    # zarr to .npy
    assert run_main(["apply", again, tmp_path / "back.npy", "--scales", "1", "1", "1",
                "--quiet"]) == 0
    assert same(np.load(tmp_path / "back.npy"), reread[...])
    only(tmp_path, "in.npy", "out.zarr", "again.zarr", "back.npy")


def test_zarr_v2_and_image_to_zarr(tmp_path: Path) -> None:
    x = RNG.integers(0, 256, (10, 12, 3), dtype=np.uint8)
    Image.fromarray(x).save(tmp_path / "in.png")
    store = tmp_path / "out.zarr"
    assert run_main(["apply", tmp_path / "in.png", store, "--scales", "2", "2",
                "--zarr-format", "2", "--quiet"]) == 0
    assert (store / ".zarray").exists()
    assert same(zarr.open_array(str(store), mode="r")[...], upsample(x, [2, 2, 1]))
    # a zarr store to an image
    assert run_main(["apply", store, tmp_path / "out.png", "--scales", "1.5", "1", "1",
                "--quiet"]) == 0
    with Image.open(tmp_path / "out.png") as out:
        assert same(np.asarray(out), upsample(upsample(x, [2, 2, 1]), [1.5, 1, 1]))


def test_zarr_dimension_names_are_kept(tmp_path: Path) -> None:
    """Axis names survive apply: v3 ``dimension_names`` to v3, to v2 as xarray's
    ``_ARRAY_DIMENSIONS`` attribute, and from that attribute back to v3 names."""
    x = _volume()
    source = zarr.create_array(str(tmp_path / "in.zarr"), shape=x.shape, chunks=(4, 9, 7),
                               dtype=x.dtype, dimension_names=("z", None, "x"))
    source[...] = x
    named = zarr.create_array(str(tmp_path / "named.zarr"), shape=x.shape, dtype=x.dtype,
                              dimension_names=("time", "lat", "lon"))
    named[...] = x
    for name, fmt in (("in", "3"), ("named", "2")):
        assert run_main(["apply", tmp_path / f"{name}.zarr", tmp_path / f"{name}_x2.zarr",
                    "--scales", "2", "1", "1", "--zarr-format", fmt, "--quiet"]) == 0
    assert zarr.open_array(str(tmp_path / "in_x2.zarr")).metadata.dimension_names == (
        "z", None, "x")
    v2 = zarr.open_array(str(tmp_path / "named_x2.zarr"))
    assert v2.attrs["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"]
    assert same(v2[...], upsample(x, [2, 1, 1]))
    assert run_main(["apply", tmp_path / "named_x2.zarr", tmp_path / "back.zarr", "--scales", "1",
                "1", "2", "--quiet"]) == 0
    assert zarr.open_array(str(tmp_path / "back.zarr")).metadata.dimension_names == (
        "time", "lat", "lon")


@pytest.mark.parametrize("dtype", ["uint8", ">i2", "float64", "complex64", "bool", "U2"])
def test_chunked_npy_equals_in_memory(tmp_path: Path, dtype: str) -> None:
    x = _volume("float64").astype(dtype)
    np.save(tmp_path / "in.npy", x)
    mode = "nearest" if np.dtype(dtype).kind in "bU" else "linear"
    for chunks in (["5"], ["3", "4", "-1"]):
        assert run_main(["apply", tmp_path / "in.npy", tmp_path / "out.npy", "--scales", "1.5",
                    "2", "1", "--mode", mode, "--chunks", *chunks, "--quiet"]) == 0
        assert same(np.load(tmp_path / "out.npy"), upsample(x, [1.5, 2, 1], mode))


def test_large_npy_takes_the_chunked_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(apply_job, "CHUNKED_ABOVE_BYTES", 1000)
    monkeypatch.setattr(apply_job, "TARGET_CHUNK_BYTES", 800)
    monkeypatch.setattr(apply_job, "ZARR_CHUNK_BYTES", 800)
    x = _volume()
    np.save(tmp_path / "in.npy", x)
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "out.npy", "--scales", "2", "2",
                "2", "--mode", "linear"]) == 0
    assert "chunked" in capsys.readouterr().out
    assert same(np.load(tmp_path / "out.npy"), upsample(x, [2, 2, 2], "linear"))


def test_zarr_output_replaces_an_old_store_only(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "in.npy", np.arange(6, dtype=np.int32))
    store = tmp_path / "out.zarr"
    for scale in ("2", "3"):
        assert run_main(["apply", tmp_path / "in.npy", store, "--scales", scale, "--quiet"]) == 0
    assert zarr.open_array(str(store), mode="r").shape == (18,)
    other = tmp_path / "notes.zarr"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert run_main(["apply", tmp_path / "in.npy", other, "--scales", "2"]) == 2
    assert "not a zarr store" in one_line_error(capsys)
    assert (other / "keep.txt").read_text() == "mine"
    only(tmp_path, "in.npy", "out.zarr", "notes.zarr")


def test_progress_bar_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from dask.diagnostics import ProgressBar

    class Immediate(ProgressBar):
        def __init__(self, **kwargs: object) -> None:
            kwargs["minimum"] = 0
            super().__init__(**kwargs)

    monkeypatch.setattr("dask.diagnostics.ProgressBar", Immediate)
    np.save(tmp_path / "in.npy", _volume())
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "o.zarr", "--scales", "2", "2",
                "2"]) == 0
    captured = capsys.readouterr()
    assert "100% Completed" in captured.err
    assert "o.zarr" in captured.out and "Completed" not in captured.out
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "q.zarr", "--scales", "2", "2",
                "2", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


