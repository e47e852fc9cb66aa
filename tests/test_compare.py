"""``onnx-upsample compare``: the peers' nearest index maps (docs/peers.md §7), and the grid."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image")

from onnx_upsample import upsample  # noqa: E402
from onnx_upsample._spec.rules import nearest_indices  # noqa: E402
from onnx_upsample.cli import main  # noqa: E402
from onnx_upsample.cli.compare import (  # noqa: E402
    compare,
    opencv_indices,
    render,
    torch_indices,
)


def run(argv: list[object]) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else 2


# ---------------------------------------------------------------------------------------------
# index maps: the cases docs/peers.md §7 measured
# ---------------------------------------------------------------------------------------------


def test_peers_4x4_at_4_over_3() -> None:
    """torch's last row is [8, 8, 9, 10, 10]; ORT's is [12, 12, 13, 14, 15] (docs/peers.md §7)."""
    x = np.arange(16, dtype=np.uint8).reshape(4, 4)
    result = compare(x, [1.3333334, 1.3333334])
    assert result.nearest[-1].tolist() == [12, 12, 13, 14, 15]
    ort, torch = result.maps[0], result.maps[1]
    assert (ort.rows * 4 + ort.cols)[-1].tolist() == [12, 12, 13, 14, 15]
    assert (torch.rows * 4 + torch.cols)[-1].tolist() == [8, 8, 9, 10, 10]


def test_peers_10x3_at_1_3() -> None:
    """The width keeps out == in: torch's 2-D kernel is the identity, ORT maps [0, 0, 1]."""
    result = compare(np.zeros((10, 3), np.uint8), [1.3, 1.3])
    assert result.maps[0].col_table.tolist() == [0, 0, 1]
    assert result.maps[1].col_table.tolist() == [0, 1, 2]
    assert torch_indices(3, 1.3).tolist() == [0, 1, 2]


def test_torch_formula_by_hand() -> None:
    # floor(4 * 1.3333334) = 5 outputs; f32(1 / 1.3333334) = 0.74999994: o = 4 reads 2
    assert torch_indices(4, 1.3333334).tolist() == [0, 0, 1, 2, 2]
    # output twice the input: o >> 1 whatever the scale's last bits
    assert torch_indices(3, 2.0000002).tolist() == [0, 0, 1, 1, 2, 2]
    assert torch_indices(5, 1.5).tolist() == [0, 0, 1, 2, 2, 3, 4]


def test_opencv_formula_by_hand() -> None:
    # dsize 4 from 3: step 1 / (4 / 3) = 0.75 -> floor(0, .75, 1.5, 2.25)
    assert opencv_indices(3, 4).tolist() == [0, 0, 1, 2]
    # 14 -> 18: step 0.7777..., o = 17 reads floor(13.22) = 13, where ORT reads 12
    assert opencv_indices(14, 18)[-1] == 13
    assert nearest_indices(14, 18, np.float32(1.3333334))[-1] == 12


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


def test_differences_are_counted() -> None:
    result = compare(np.zeros((10, 14), np.uint8), [1.3333334, 1.3333334])
    assert result.differing(1) == (94, 234)
    assert result.differing(2) == (26, 234)
    text = result.text()
    assert "94 of 234" in text and "26 of 234" in text
    assert "cols: 0 0 1 2 3 3 4 5 6 6 7 8 9 9 10 11 12 12" in text


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
    assert run(["compare", source, "-o", grid, "--scale", "1.3333334"]) == 0
    out = capsys.readouterr().out
    assert "PyTorch" in out and "OpenCV" in out and "94 of 234" in out
    with Image.open(grid) as picture:
        assert picture.mode == "RGB"
        width, height = picture.size
    assert width > 3 * 18 * 13 and height > 2 * 13 * 13  # three panels of 18 x 13 at zoom 13
    assert run(["compare", source, "-o", grid, "--scale", "2", "1.5", "--zoom", "4",
                "--quiet"]) == 0
    assert capsys.readouterr().out == ""


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
        (["in.png", "-o", "grid.png", "--scale", "0.5"], r"scales\[0\] is 0.5"),
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
    assert run(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(pattern, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
