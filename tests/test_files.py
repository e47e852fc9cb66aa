"""``onnx-upsample apply`` on files, which output it writes and how it fails: an output that
is the input is refused (or replaced with ``--overwrite``), another existing one is replaced
and said; bad files and arguments are one line on stderr with exit code 2 and nothing
written. Images: test_files_images.py; zarr and chunked .npy: test_files_zarr.py; an
interrupted write: test_files_interrupted.py.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

from file_checks import one_line_error, only, same  # noqa: E402
from runners import run_main  # noqa: E402

from onnx_upsample import upsample  # noqa: E402

RNG = np.random.default_rng(20)


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
    # numpy 2's StringDType (no byte order): the type is refused before the format is asked;
    # numpy 1 reads the store as object strings (ONNX's string type), which no image holds
    (["strings.zarr", "out.png", "--scales", "2", "2"],
     r"which ONNX Upsample does not define" if hasattr(np.dtypes, "StringDType")
     else r"PNG image cannot hold .* element type object"),
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


def test_apply_words_jpeg_quality_for_python_and_for_the_command_line(tmp_path: Path) -> None:
    """apply() is a library call too: its jpeg_quality messages name the argument, and the
    command line prints the same message naming --jpeg-quality (test_bad_files_and_arguments)."""
    from onnx_upsample._errors import SpelledError
    from onnx_upsample.io.apply import apply

    np.save(tmp_path / "in.npy", np.zeros((2, 2), np.uint8))
    for output, quality, words in [
        ("out.png", 80, "{name} is for .jpg/.jpeg outputs, and {path!r} is not one; "
                        "leave {name} out"),
        ("out.jpg", 0, "{name} is 0; expected 1 (smallest file) to 100"),
    ]:
        path = str(tmp_path / output)
        with pytest.raises(SpelledError) as error:
            apply(str(tmp_path / "in.npy"), path, [2, 2], "nearest", jpeg_quality=quality)
        assert str(error.value).startswith(words.format(name="jpeg_quality", path=path))
        assert error.value.option.startswith(words.format(name="--jpeg-quality", path=path))
        assert "--" not in str(error.value)
