"""``onnx-upsample apply`` on images (Pillow): modes, bit depths, palettes, JPEG quality,
and a slow write that says so. Every written result is compared bit for bit with the
in-memory ``onnx_upsample.upsample`` of what was read."""

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

from file_checks import one_line_error, only, same  # noqa: E402
from runners import run_main  # noqa: E402

from onnx_upsample import upsample  # noqa: E402
from onnx_upsample.io import apply as apply_job  # noqa: E402
from onnx_upsample.io import formats  # noqa: E402

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


