"""Make the README's comparison picture: a small test image and ``onnx-upsample compare``'s grid.

Writes ``docs/compare_input.png`` (10 x 14 RGB, drawn here from code, so nothing external is
needed) and ``docs/compare.png``. Run from the repository root::

    .venv/bin/python scripts/make_compare_picture.py
"""

from __future__ import annotations

import colorsys
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from onnx_upsample.cli import main

HEIGHT, WIDTH = 10, 14
SCALE = "1.7"  # the README's example: PyTorch reads another column than ORT at output 17


def sample_image() -> np.ndarray:
    """A hue ramp across the columns, a 1-pixel cross and a checkerboard corner.

    One-pixel features show at once which rows and columns a nearest rule repeats or drops.
    """
    image = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
    for j in range(WIDTH):
        for i in range(HEIGHT):
            r, g, b = colorsys.hls_to_rgb(j / WIDTH, 0.35 + 0.4 * i / (HEIGHT - 1), 0.8)
            image[i, j] = (round(r * 255), round(g * 255), round(b * 255))
    image[3, :] = 255  # a white row
    image[:, 4] = 20  # a dark column
    for i in range(HEIGHT - 4, HEIGHT):  # a checkerboard in the bottom-right corner
        for j in range(WIDTH - 5, WIDTH):
            image[i, j] = 255 if (i + j) % 2 else 0
    return image


def run(docs: Path) -> int:
    docs.mkdir(parents=True, exist_ok=True)
    source = docs / "compare_input.png"
    Image.fromarray(sample_image()).save(source)
    return main(["compare", str(source), "-o", str(docs / "compare.png"), "--scale", SCALE])


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    sys.exit(run(root / "docs"))
