"""``onnx-upsample apply`` on files: .npy, images (Pillow) and zarr stores, in a temporary folder.

Every written result is compared bit for bit with the in-memory ``onnx_upsample.upsample``
of what was read; failures are one line on stderr with exit code 2; an interrupted or failed
write leaves nothing under the output's name (and no temporary files).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

from runners import run_main  # noqa: E402

from onnx_upsample import upsample  # noqa: E402
from onnx_upsample.io import apply as apply_job  # noqa: E402
from onnx_upsample.io import formats  # noqa: E402


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("onnx-upsample: error:") or "error:" in lines[0]
    return lines[0]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def only(folder: Path, *names: str) -> None:
    """Nothing but ``names`` in ``folder``: no output left behind, no temporary files."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


RNG = np.random.default_rng(20)


# ---------------------------------------------------------------------------------------------
# images
# ---------------------------------------------------------------------------------------------


def _rgb(h: int = 9, w: int = 13) -> np.ndarray:
    return RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_rgb_image_round_trip(tmp_path: Path, mode: str, suffix: str) -> None:
    x = _rgb()
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    Image.fromarray(x).save(source)
    assert run_main(["apply", source, target, "--scales", "2", "1.5", "--mode", mode,
                "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == "RGB"
        got = np.asarray(out)
    assert same(got, upsample(x, [2, 1.5, 1], mode))
    only(tmp_path, source.name, target.name)


def test_three_scales_scale_the_channels(tmp_path: Path) -> None:
    x = _rgb()
    source, target = tmp_path / "in.png", tmp_path / "out.png"
    Image.fromarray(x).save(source)
    assert run_main(["apply", source, target, "--scales", "2", "2", "1.3333334", "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == "RGBA"  # 3 channels * 1.3333334 -> 4
        assert same(np.asarray(out), upsample(x, [2, 2, 1.3333334]))


def test_grayscale_takes_two_scales(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = RNG.integers(0, 256, (7, 5), dtype=np.uint8)
    source, target = tmp_path / "in.png", tmp_path / "out.png"
    Image.fromarray(x).save(source)
    assert run_main(["apply", source, target, "--scales", "3", "2.5", "--mode", "linear",
                "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == "L"
        assert same(np.asarray(out), upsample(x, [3, 2.5], "linear"))
    os.unlink(target)
    assert run_main(["apply", source, target, "--scales", "2", "2", "1"]) == 2
    assert "grayscale" in one_line_error(capsys)
    only(tmp_path, "in.png")


@pytest.mark.parametrize("transparent", [False, True])
def test_palette_images_become_rgb(tmp_path: Path, transparent: bool) -> None:
    indices = RNG.integers(0, 4, (6, 8), dtype=np.uint8)
    palette = [0, 0, 0, 255, 0, 0, 0, 255, 0, 10, 20, 250]
    image = Image.new("P", (8, 6))
    image.putdata(indices.ravel().tolist())
    image.putpalette(palette)
    if transparent:
        image.info["transparency"] = 0
    source, target = tmp_path / "in.png", tmp_path / "out.png"
    image.save(source)
    with Image.open(source) as reread:
        assert reread.mode == "P"
        expected_in = np.asarray(reread.convert("RGBA" if transparent else "RGB"))
    assert run_main(["apply", source, target, "--scales", "2", "2", "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == ("RGBA" if transparent else "RGB")
        assert same(np.asarray(out), upsample(expected_in, [2, 2, 1]))


@pytest.mark.parametrize("suffix", [".png", ".tif"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_16_bit_images_stay_16_bit(tmp_path: Path, suffix: str, mode: str) -> None:
    x = RNG.integers(0, 65536, (6, 7), dtype=np.uint16)
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    Image.fromarray(x).save(source)
    assert run_main(["apply", source, target, "--scales", "2", "1.5", "--mode", mode,
                "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == "I;16"
        got = np.asarray(out)
    assert got.dtype == np.uint16
    assert same(got, upsample(x, [2, 1.5], mode))


def test_float_tiff_and_npy_to_image(tmp_path: Path) -> None:
    x = RNG.normal(size=(5, 6)).astype(np.float32)
    source, target = tmp_path / "in.tif", tmp_path / "out.tif"
    Image.fromarray(x).save(source)
    assert run_main(["apply", source, target, "--scales", "2", "2", "--mode", "linear",
                "--quiet"]) == 0
    with Image.open(target) as out:
        assert out.mode == "F"
        assert same(np.asarray(out), upsample(x, [2, 2], "linear"))
    # an array file to an image: the array's own shape decides
    array_file, png = tmp_path / "a.npy", tmp_path / "a.png"
    rgba = RNG.integers(0, 256, (4, 5, 4), dtype=np.uint8)
    np.save(array_file, rgba)
    assert run_main(["apply", array_file, png, "--scales", "2", "3", "1", "--quiet"]) == 0
    with Image.open(png) as out:
        assert out.mode == "RGBA"
        assert same(np.asarray(out), upsample(rgba, [2, 3, 1]))


def test_jpeg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = _rgb(16, 16)
    source = tmp_path / "in.jpg"
    Image.fromarray(x).save(source, quality=90)
    with Image.open(source) as reread:
        decoded = np.asarray(reread)
    # exact through a lossless output
    assert run_main(["apply", source, tmp_path / "out.png", "--scales", "2", "2", "--quiet"]) == 0
    with Image.open(tmp_path / "out.png") as out:
        assert same(np.asarray(out), upsample(decoded, [2, 2, 1]))
    # JPEG output: right size and mode (lossy, so compared loosely)
    assert run_main(["apply", source, tmp_path / "out.jpg", "--scales", "2", "2", "--quiet"]) == 0
    with Image.open(tmp_path / "out.jpg") as out:
        assert out.mode == "RGB" and out.size == (32, 32)
        error = np.abs(np.asarray(out).astype(int) - upsample(decoded, [2, 2, 1]).astype(int))
        assert error.mean() < 12
    # JPEG cannot hold alpha; the fix is an image format that can (it said .npy or .zarr)
    rgba = tmp_path / "rgba.png"
    Image.fromarray(RNG.integers(0, 256, (4, 4, 4), dtype=np.uint8)).save(rgba)
    assert run_main(["apply", rgba, tmp_path / "x.jpg", "--scales", "2", "2"]) == 2
    assert one_line_error(capsys).endswith("a JPEG image cannot hold an array of shape "
                                           "(8, 8, 4) and element type uint8; it holds uint8 "
                                           "(H, W) or (H, W, 3); write .png or .tif instead")
    assert not (tmp_path / "x.jpg").exists()


def test_jpeg_quality(tmp_path: Path) -> None:
    """--jpeg-quality reaches the encoder; without it the documented default, 95, is used."""
    source = tmp_path / "in.png"
    Image.fromarray(_rgb(32, 32)).save(source)
    sizes = {}
    for name, extra in [("default", []), ("q95", ["--jpeg-quality", "95"]),
                        ("q20", ["--jpeg-quality", "20"])]:
        target = tmp_path / f"{name}.jpg"
        assert run_main(["apply", source, target, "--scales", "2", "2", "-q", *extra]) == 0
        sizes[name] = target.read_bytes()
    assert formats.DEFAULT_JPEG_QUALITY == 95
    assert sizes["default"] == sizes["q95"]
    # noise at quality 20 keeps far fewer bits than at 95
    assert len(sizes["q20"]) < len(sizes["q95"]) / 2


# ---------------------------------------------------------------------------------------------
# an output that is the input
# ---------------------------------------------------------------------------------------------


def _same_file_paths(tmp_path: Path) -> list[Path]:
    """The input itself, and the input through other paths: '..', a link, a hard link."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.npy").symlink_to(tmp_path / "in.npy")
    os.link(tmp_path / "in.npy", tmp_path / "hard.npy")
    return [tmp_path / "in.npy", tmp_path / "sub" / ".." / "in.npy", tmp_path / "link.npy",
            tmp_path / "hard.npy"]


def test_output_that_is_the_input_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    x = RNG.integers(0, 9, (3, 4), dtype=np.uint8)
    np.save(tmp_path / "in.npy", x)
    for target in _same_file_paths(tmp_path):
        assert run_main(["apply", tmp_path / "in.npy", target, "--scales", "2", "2"]) == 2
        line = one_line_error(capsys)
        assert "is the input" in line and "--overwrite" in line, line
        assert same(np.load(tmp_path / "in.npy"), x)
    only(tmp_path, "in.npy", "sub", "link.npy", "hard.npy")


def test_overwrite_replaces_the_input(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    x = RNG.integers(0, 9, (3, 4), dtype=np.uint8)
    np.save(tmp_path / "in.npy", x)
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "in.npy", "--scales", "2", "2",
                "--overwrite"]) == 0
    assert "replaced the existing output" in capsys.readouterr().out
    assert same(np.load(tmp_path / "in.npy"), upsample(x, [2, 2]))
    only(tmp_path, "in.npy")


def test_another_existing_output_is_replaced_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "in.npy", np.zeros((2, 2), np.uint8))
    (tmp_path / "out.npy").write_bytes(b"old")
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "out.npy", "--scales", "2", "2"]) == 0
    assert "replaced the existing output" in capsys.readouterr().out
    assert np.load(tmp_path / "out.npy").shape == (4, 4)
    # a new output is not announced as a replacement
    assert run_main(["apply", tmp_path / "in.npy", tmp_path / "new.npy", "--scales", "2", "2"]) == 0
    assert "replaced" not in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# slow steps say so
# ---------------------------------------------------------------------------------------------


def test_a_slow_write_says_so_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A write that outlasts the threshold (Pillow's PNG encoder on a large image) gets a
    line when it has lasted that long and one when it ends; a quick one and -q get none."""
    Image.fromarray(_rgb(4, 4)).save(tmp_path / "in.png")
    real_save = apply_job.save_image

    def slow_save(*args: object, **kwargs: object) -> None:
        time.sleep(0.4)
        real_save(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(apply_job, "save_image", slow_save)
    monkeypatch.setattr(formats, "SLOW_STEP_SECONDS", 0.1)
    out = tmp_path / "out.png"
    assert run_main(["apply", tmp_path / "in.png", out, "--scales", "2", "2"]) == 0
    captured = capsys.readouterr()
    assert f"writing {out} ...\n" in captured.err
    assert re.search(rf"writing {re.escape(str(out))}: done in 0\.\d s", captured.err)
    assert "writing" not in captured.out and "reading" not in captured.err  # quick: silent
    assert run_main(["apply", tmp_path / "in.png", out, "--scales", "2", "2", "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_other_pillow_modes_are_converted(tmp_path: Path) -> None:
    bits = RNG.integers(0, 2, (5, 6)).astype(bool)
    Image.fromarray(bits).save(tmp_path / "bits.png")
    data, mode = formats.read_image(str(tmp_path / "bits.png"))
    assert mode == "L" and data.dtype == np.uint8 and set(np.unique(data)) <= {0, 255}
    Image.new("CMYK", (4, 3), (10, 20, 30, 40)).save(tmp_path / "cmyk.jpg")
    data, mode = formats.read_image(str(tmp_path / "cmyk.jpg"))
    assert mode == "RGB" and data.shape == (3, 4, 3)


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
    x = _rgb(10, 12)
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


# ---------------------------------------------------------------------------------------------
# errors: one line, exit code 2, nothing written
# ---------------------------------------------------------------------------------------------


def _bad_inputs(tmp_path: Path) -> None:
    np.save(tmp_path / "ok.npy", np.zeros((4, 4), np.float32))
    (tmp_path / "garbage.png").write_bytes(b"not an image at all")
    (tmp_path / "garbage.npy").write_bytes(b"\x93NUMPY broken")
    broken = tmp_path / "broken.zarr"
    broken.mkdir()
    (broken / "zarr.json").write_text("{not json")
    corrupt = zarr.create_array(str(tmp_path / "corrupt.zarr"), shape=(4, 4), chunks=(2, 2),
                                dtype="f4")
    corrupt[...] = 1.5
    (tmp_path / "corrupt.zarr" / "c" / "1" / "0").write_bytes(b"garbage")
    group = zarr.open_group(str(tmp_path / "group.zarr"), mode="w")
    group.create_array("volume", shape=(2, 2), dtype="f4")
    Image.fromarray(np.zeros((3, 3), np.uint8)).save(tmp_path / "gray.png")
    strings = zarr.create_array(str(tmp_path / "strings.zarr"), shape=(3, 4), chunks=(2, 2),
                                dtype=str)  # numpy's StringDType, which has no byte order
    strings[...] = "x"


BAD = [
    (["ok.npy", "out.bmp", "--scales", "2", "2"], r"unknown format \(suffix '\.bmp'\)"),
    (["ok.txt", "out.npy", "--scales", "2", "2"], r"unknown format"),
    (["missing.npy", "out.npy", "--scales", "2", "2"], r"does not exist"),
    (["garbage.png", "out.png", "--scales", "2", "2"], r"cannot read .* as an image"),
    (["garbage.npy", "out.npy", "--scales", "2", "2"], r"cannot read .* as a \.npy"),
    (["broken.zarr", "out.zarr", "--scales", "2", "2"], r"cannot open .* as a zarr store"),
    (["group.zarr", "out.zarr", "--scales", "2", "2"], r"zarr group.*volume"),
    (["corrupt.zarr", "out.zarr", "--scales", "2", "2"], r"cannot upsample .*decompression"),
    (["corrupt.zarr", "out.npy", "--scales", "2", "2"], r"cannot upsample .*decompression"),
    (["ok.npy", "out.npy", "--scales", "2", "0.5"], r"value 2 of --scales is 0.5"),
    (["ok.npy", "out.npy", "--scales", "2", "1e30"], r"largest dimension"),
    (["ok.npy", "out.zarr", "--scales", "2", "1e30"], r"largest dimension"),
    (["ok.npy", "out.npy", "--scales", "2"], r"--scales has 1 value"),
    (["ok.npy", "out.npy", "--scales", "2", "2", "--mode", "cubic"], r"cubic"),
    (["ok.npy", "out.npy", "--scales", "2", "2", "--chunks", "1", "2", "3"], r"--chunks has 3"),
    (["ok.npy", "out.npy", "--scales", "2", "2", "--chunks", "0"], r"value 1 of --chunks is 0"),
    (["ok.npy", "out.png", "--scales", "2", "2"], r"PNG image cannot hold .* float32"),
    (["gray.png", "out.png", "--scales", "2", "2", "2"], r"grayscale image"),
    # numpy's StringDType (no byte order): the type is refused before the format is asked
    (["strings.zarr", "out.png", "--scales", "2", "2"], r"which ONNX Upsample does not define"),
    (["ok.npy", "no/such/out.npy", "--scales", "2", "2"], r"does not exist; create it"),
    (["ok.npy", "out.npy", "--scales", "x"], r"invalid float value"),
    (["ok.npy", "out.zarr", "--scales", "2", "2", "--zarr-format", "4"], r"invalid choice"),
    (["ok.npy", "out.jpg", "--scales", "2", "2", "--jpeg-quality", "0"],
     r"--jpeg-quality is 0; expected 1 .* to 100 .*default is 95"),
    (["ok.npy", "out.jpg", "--scales", "2", "2", "--jpeg-quality", "101"],
     r"--jpeg-quality is 101"),
    (["gray.png", "out.png", "--scales", "2", "2", "--jpeg-quality", "80"],
     r"--jpeg-quality is for \.jpg/\.jpeg outputs.*out\.png' is not one"),
]


@pytest.mark.parametrize(("argv", "pattern"), BAD)
def test_bad_files_and_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 argv: list[str], pattern: str) -> None:
    _bad_inputs(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    paths = [tmp_path / a if i < 2 else a for i, a in enumerate(argv)]
    assert run_main(["apply", *paths]) == 2
    assert re.search(pattern, one_line_error(capsys))
    assert sorted(p.name for p in tmp_path.iterdir()) == before
