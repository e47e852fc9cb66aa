"""``onnx-upsample compare``: the peers' nearest index maps (docs/peers.md §7), checked against
PyTorch itself where it is installed, the grid, and the README's example."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")

from runners import run_main  # noqa: E402

from onnx_upsample import UpsampleError, upsample  # noqa: E402
from onnx_upsample._spec.peers import (  # noqa: E402
    opencv_nearest_indices,
    pytorch_nearest_indices,
)
from onnx_upsample._spec.rules import nearest_indices  # noqa: E402
from onnx_upsample.compare import compare, render  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# index maps: the cases docs/peers.md §7 measured
# ---------------------------------------------------------------------------------------------


def test_peers_4x4_at_4_over_3() -> None:
    """With the float32 scale an exporter writes for 4/3, PyTorch's reciprocal is exactly
    0.75 and it reads what ORT reads; the decimal 1.3333334 given to PyTorch as a double
    (f32(1 / 1.3333334) = 0.74999994) reads row and column 2 at output 4 (docs/peers.md §7)."""
    x = np.arange(16, dtype=np.uint8).reshape(4, 4)
    result = compare(x, [4 / 3, 4 / 3])
    assert result.nearest[-1].tolist() == [12, 12, 13, 14, 15]
    ort, torch = result.maps[0], result.maps[1]
    assert (ort.rows * 4 + ort.cols)[-1].tolist() == [12, 12, 13, 14, 15]
    assert (torch.rows * 4 + torch.cols)[-1].tolist() == [12, 12, 13, 14, 15]
    assert result.differing(1) == (0, 25)
    assert pytorch_nearest_indices(4, 1.3333334).tolist() == [0, 0, 1, 2, 2]


def test_peers_10x3_at_1_3() -> None:
    """The width keeps out == in: torch's 2-D kernel is the identity, ORT maps [0, 0, 1];
    the height: floor(10 * f32(1.3)) = 12 rows in double, ORT's float32 product gives 13."""
    result = compare(np.zeros((10, 3), np.uint8), [1.3, 1.3])
    assert result.maps[0].col_table.tolist() == [0, 0, 1]
    assert result.maps[1].col_table.tolist() == [0, 1, 2]
    assert result.maps[0].rows.shape == (13, 3) and result.maps[1].rows.shape == (12, 3)
    assert pytorch_nearest_indices(3, 1.3).tolist() == [0, 1, 2]


def test_torch_formula_by_hand() -> None:
    # floor(4 * 1.3333334) = 5 outputs; f32(1 / 1.3333334) = 0.74999994: o = 4 reads 2
    assert pytorch_nearest_indices(4, 1.3333334).tolist() == [0, 0, 1, 2, 2]
    # output twice the input: o >> 1 whatever the scale's last bits
    assert pytorch_nearest_indices(3, 2.0000002).tolist() == [0, 0, 1, 1, 2, 2]
    assert pytorch_nearest_indices(5, 1.5).tolist() == [0, 0, 1, 2, 2, 3, 4]
    # f32(1 / f32(1.7)) = 0.58823526; 17 * that = 9.999999 -> 9, where ORT's float32
    # 17 / 1.7000000476837158 rounds to 10.0
    assert pytorch_nearest_indices(14, float(np.float32(1.7)))[17] == 9
    assert nearest_indices(14, 23, np.float32(1.7))[17] == 10


def test_opencv_formula_by_hand() -> None:
    # dsize 4 from 3: step 1 / (4 / 3) = 0.75 -> floor(0, .75, 1.5, 2.25)
    assert opencv_nearest_indices(3, 4).tolist() == [0, 0, 1, 2]
    # 14 -> 18: step 0.7777..., o = 17 reads floor(13.22) = 13, where ORT reads 12
    assert opencv_nearest_indices(14, 18)[-1] == 13
    assert nearest_indices(14, 18, np.float32(1.3333334))[-1] == 12


# sizes with odd and even lengths, scales that keep or double a length (PyTorch's own
# branches), the exporter's float32 values and decimals as typed
TORCH_SIZES = [1, 2, 3, 5, 10, 14]
TORCH_SCALES = [1.05, 1.2, 1.3, 4 / 3, 1.3333334, 1.5, 1.7, 2.0, 2.0000002, 2.05, 2.2, 2.7,
                2.9, 3.0]


def test_pytorch_rule_is_pytorch() -> None:
    """The rule compare draws is what torch.nn.functional.interpolate(scale_factor=s,
    mode="nearest") computes, at every size and scale of the table (decimal and float32)."""
    torch = pytest.importorskip("torch")
    for scale in [*TORCH_SCALES, *(float(np.float32(s)) for s in TORCH_SCALES)]:
        for h in TORCH_SIZES:
            w = 7
            x = torch.arange(h * w, dtype=torch.float64).reshape(1, 1, h, w)
            y = torch.nn.functional.interpolate(x, scale_factor=(scale, 1.5), mode="nearest")
            got = y[0, 0].numpy().astype(np.int64)
            rows = pytorch_nearest_indices(h, scale)
            cols = pytorch_nearest_indices(w, 1.5)
            assert got.tolist() == (rows[:, None] * w + cols[None, :]).tolist(), (h, scale)


def test_differences_are_counted() -> None:
    """At 1.7 on 10 x 14: PyTorch differs at column 17 only (17 rows); OpenCV (step 14/23)
    at columns 5, 10, 15, 20 and 22 (floor(5 * 0.6087) = 3 where ORT's 5 / 1.7 reads 2)."""
    result = compare(np.zeros((10, 14), np.uint8), [1.7, 1.7])
    assert result.differing(1) == (17, 391)
    assert result.differing(2) == (5 * 17, 391)
    text = result.text()
    assert "17 of 391" in text and "85 of 391" in text
    assert "cols: 0 0 1 1 2 2 3 4 4 5 5 6 7 7 8 8 9 10 10 11 11 12 12" in text


def test_onnx_map_is_the_operator_itself() -> None:
    x = np.zeros((10, 14, 3), np.uint8)
    result = compare(x, [1.3333334, 1.6666666])
    rows = nearest_indices(10, 13, np.float32(1.3333334))
    cols = nearest_indices(14, 23, np.float32(1.6666666))
    assert result.maps[0].row_table.tolist() == rows.tolist()
    assert result.maps[0].col_table.tolist() == cols.tolist()
    assert result.nearest.shape == (13, 23, 3)
    assert result.linear.tobytes() == upsample(x, [1.3333334, 1.6666666, 1], "linear").tobytes()
    # the global no-resize rule: every axis unchanged -> identity maps
    same_size = compare(np.zeros((3, 20), np.uint8), [1.3, 1.04])
    assert same_size.maps[0].row_table.tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    "image",
    [
        np.zeros((5, 6), np.uint16) + 4000,
        np.linspace(-1, 1, 30, dtype=np.float32).reshape(5, 6),
        np.zeros((5, 6, 4), np.uint8),
        np.zeros((5, 6, 2), np.uint8),
        np.ones((2, 2), bool),
    ],
    ids=["uint16", "float32", "rgba", "la", "bool"],
)
def test_render_any_image(image: np.ndarray) -> None:
    result = compare(image, [2.5, 1.5])
    picture = render(image, result)
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, grid = tmp_path / "in.png", tmp_path / "grid.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (10, 14, 3), np.uint8)).save(source)
    assert run_main(["compare", source, "-o", grid, "--scale", "1.3333334"]) == 0
    out = capsys.readouterr().out
    assert "PyTorch" in out and "OpenCV" in out and "26 of 234" in out
    with Image.open(grid) as picture:
        assert picture.mode == "RGB"
        width, height = picture.size
    assert width > 3 * 18 * 13 and height > 2 * 13 * 13  # three panels of 18 x 13 at zoom 13
    assert run_main(["compare", source, "-o", grid, "--scale", "2", "1.5", "--zoom", "4",
                "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert run_main(["compare", source, "-o", grid, "--scales", "1.7", "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_compare_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, grid = tmp_path / "in.png", tmp_path / "grid.png"
    Image.fromarray(np.zeros((10, 14, 3), np.uint8)).save(source)
    assert run_main(["compare", source, "-o", grid, "--scales", "1.7", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert next(iter(document)) == "command" and document["command"] == "compare"
    assert document["scales"] == [float(np.float32(1.7))] * 2  # the float32 value, as used
    assert document["output_shape"] == [17, 23, 3] and document["warnings"] == []
    onnx, torch, opencv = document["maps"]
    assert onnx["cols"] == nearest_indices(14, 23, np.float32(1.7)).tolist()
    assert "differing" not in onnx
    assert (torch["differing"], torch["of"]) == (17, 391)
    assert (opencv["differing"], opencv["of"]) == (85, 391)
    assert grid.exists()


def test_readme_example_is_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's compare command, run as written, prints the counts the README states; and
    PyTorch itself, given the same float32 scale, differs from ORT at as many pixels."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^onnx-upsample (compare docs/compare_input\.png .*)$", readme,
                        re.MULTILINE)
    claim = re.search(r"\((\d+) of (\d+)\s+for PyTorch, (\d+) for OpenCV here\)", readme)
    assert command is not None and claim is not None
    argv = command.group(1).split()
    argv[argv.index("-o") + 1] = str(tmp_path / "grid.png")
    argv[1] = str(ROOT / argv[1])
    assert run_main(argv) == 0
    out = capsys.readouterr().out
    torch_count, total, opencv_count = (int(g) for g in claim.groups())
    assert "PyTorch interpolate(scale_factor) (" in out
    assert f"reads another pixel than ONNX at {torch_count} of {total}" in out
    assert f"at {opencv_count} of {total}" in out
    torch = pytest.importorskip("torch")
    scale = float(np.float32(float(argv[argv.index("--scales") + 1])))
    with Image.open(ROOT / "docs" / "compare_input.png") as picture:
        h, w = picture.height, picture.width
    pixels = torch.arange(h * w, dtype=torch.float64).reshape(1, 1, h, w)
    theirs = torch.nn.functional.interpolate(pixels, scale_factor=scale, mode="nearest")
    ours = upsample(np.arange(h * w, dtype=np.float64).reshape(h, w), [scale, scale])
    assert theirs.shape[2:] == ours.shape and ours.size == total
    assert int((theirs[0, 0].numpy() != ours).sum()) == torch_count


def test_sample_script_makes_the_readme_picture(tmp_path: Path) -> None:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "make_compare_picture.py"
    spec = importlib.util.spec_from_file_location("make_compare_picture", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.run(tmp_path) == 0
    assert (tmp_path / "compare.png").exists() and (tmp_path / "compare_input.png").exists()


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["in.png", "-o", "grid.jpg", "--scale", "2"], r"must be a \.png"),
        (["in.png", "-o", "grid.png", "--scales", "2", "2", "2"], "--scales has 3 values"),
        (["in.png", "-o", "grid.png", "--scale", "0.5"], r"value 1 of --scales is 0\.5"),
        (["in.png", "-o", "grid.png", "--scales", "2", "nan"], r"value 2 of --scales is nan"),
        (["in.png", "-o", "grid.png", "--scales", "300", "2"],
         r"--scales \(300 2\) would make input .* of 4 x 4 pixels 1200 x 8; .* at most 1024 "
         r"per side: use smaller --scales"),
        (["missing.png", "-o", "grid.png", "--scale", "2"], "does not exist"),
        (["line.npy", "-o", "grid.png", "--scale", "2"], "compare takes an image"),
        (["in.png", "-o", "grid.png", "--scale", "2", "--zoom", "0"], "--zoom is 0"),
        (["in.png", "--scale", "2"], "required: -o/--output"),
    ],
)
def test_compare_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                        pattern: str) -> None:
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / "in.png")
    np.save(tmp_path / "line.npy", np.zeros(5, np.uint8))
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [tmp_path / a if a.endswith((".png", ".jpg", ".npy")) else a for a in argv]
    assert run_main(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(pattern, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_compare_is_a_python_api_with_its_own_checks() -> None:
    """The comparison and its picture are library calls; their checks name Python's
    arguments (the command line's name its options, test_compare_errors)."""
    image = np.arange(12, dtype=np.uint8).reshape(3, 4)
    comparison = compare(image, [1.7, 1.7])
    assert comparison.nearest.shape == (5, 6)
    assert render(image, comparison).dtype == np.uint8
    with pytest.raises(UpsampleError, match=r"^scales\[0\] is 0\.5"):
        compare(image, [0.5, 2])
    with pytest.raises(UpsampleError, match=r"^scales \[600\.0, 2\.0\] would make x of 3 x 4"):
        compare(image, [600, 2])
    with pytest.raises(UpsampleError, match=r"^x has shape \(12,\); compare takes an image"):
        compare(image.reshape(-1), [2])


def test_render_checks_its_zoom_and_the_pictures_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zoom of 64 on a 1024-pixel output is a picture of about 200,000 pixels a side:
    refused before Pillow allocates it, as every size beyond memory is."""
    from onnx_upsample import _resources

    image = np.arange(12, dtype=np.uint8).reshape(3, 4)
    comparison = compare(image, [2, 2])
    with pytest.raises(UpsampleError, match=r"^zoom is 0; expected 1 to 64"):
        render(image, comparison, zoom=0)
    with pytest.raises(TypeError, match=r"^zoom is '3'"):
        render(image, comparison, zoom="3")  # type: ignore[arg-type]
    monkeypatch.setattr(_resources, "memory_limit", lambda: (10**6, "this machine's memory"))
    monkeypatch.setattr(_resources, "checked_from", lambda: 0)  # a few MiB are checked too
    with pytest.raises(UpsampleError, match=r"^a picture of \d+ x \d+ pixels takes .*use a "
                                            r"smaller zoom"):
        render(image, comparison, zoom=64)
