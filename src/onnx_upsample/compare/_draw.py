"""The picture of a :class:`~onnx_upsample.compare.Comparison` (Pillow, imported when
drawing)."""

from __future__ import annotations

import colorsys
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import UpsampleError
from .._resources import check_bytes_fit

if TYPE_CHECKING:
    from ._maps import Comparison, IndexMap

# screen pixels per output pixel: beyond this a cell is larger than a small screen
MAX_ZOOM = 64
_BACKGROUND = (255, 255, 255)
_INK = (20, 20, 20)
_MARK = (230, 20, 20)
_PAD = 14


def _to_rgb8(array: np.ndarray) -> np.ndarray:
    """Any 2-D/3-D numeric image as (H, W, 3) uint8 for display (alpha over white)."""
    data = array.astype(np.float64)
    if array.dtype == np.uint8:
        scaled = data
    elif array.dtype == np.uint16:
        scaled = data / 257.0
    else:
        finite = data[np.isfinite(data)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        scaled = (data - low) * (255.0 / (high - low) if high > low else 0.0)
    scaled = np.nan_to_num(np.clip(scaled, 0, 255))
    if scaled.ndim == 2:
        scaled = scaled[:, :, None]
    channels = scaled.shape[2]
    if channels in (2, 4):
        alpha = scaled[:, :, -1:] / 255.0
        colour = scaled[:, :, :-1]
        scaled = colour * alpha + 255.0 * (1 - alpha)
    if scaled.shape[2] == 1:
        scaled = np.repeat(scaled, 3, axis=2)
    return np.round(scaled).astype(np.uint8)


def _palette(h: int, w: int) -> np.ndarray:
    """A colour per input pixel: hue by column (golden-ratio steps), lightness by row parity."""
    colours = np.empty((h, w, 3), dtype=np.uint8)
    for j in range(w):
        hue = (j * 0.618033988749895) % 1.0
        for i in range(h):
            light = 0.72 if i % 2 == 0 else 0.45
            r, g, b = colorsys.hls_to_rgb(hue, light, 0.65)
            colours[i, j] = (round(r * 255), round(g * 255), round(b * 255))
    return colours


def check_zoom(zoom: object, name: str = "zoom") -> None:
    """A zoom is an integer from 1 to :data:`MAX_ZOOM` (``name`` says what the caller calls
    it: ``--zoom`` on the command line)."""
    if isinstance(zoom, bool) or not isinstance(zoom, int | np.integer):
        raise TypeError(f"{name} is {zoom!r}; expected an integer from 1 to {MAX_ZOOM}")
    if not 1 <= zoom <= MAX_ZOOM:
        raise UpsampleError(f"{name} is {zoom}; expected 1 to {MAX_ZOOM} (screen pixels per "
                            "output pixel)")


def render(image: np.ndarray, comparison: Comparison, zoom: int | None = None) -> np.ndarray:
    """The picture of a comparison: ``image``, ONNX ``Upsample``'s nearest and linear results,
    and the three nearest index maps side by side, with a table of indices per axis.

    Parameters
    ----------
    image : numpy.ndarray
        The image ``comparison`` was made from.
    comparison : Comparison
        What :func:`onnx_upsample.compare.compare` gave.
    zoom : int, optional
        Screen pixels per output pixel, 1 to :data:`MAX_ZOOM` (default: the maps about
        240 pixels a side).

    Returns
    -------
    numpy.ndarray
        An (H, W, 3) uint8 picture.

    Raises
    ------
    TypeError
        ``zoom`` is not an integer.
    UpsampleError
        ``zoom`` is out of range, or the picture would not fit in memory.
    """
    out_h, out_w = comparison.nearest.shape[:2]
    peer_h = max(m.rows.shape[0] for m in comparison.maps)
    peer_w = max(m.rows.shape[1] for m in comparison.maps)
    if zoom is None:
        zoom = max(1, min(32, 240 // max(peer_h, peer_w, 1)))
    check_zoom(zoom)
    from PIL import Image, ImageDraw, ImageFont

    cell_w, cell_h = peer_w * zoom, peer_h * zoom
    font = ImageFont.load_default(size=12)
    title_h, note_h = 34, 30
    grid_w = 3 * cell_w + 4 * _PAD
    strip_columns = max(8, min(peer_w, (max(grid_w, 420) - 2 * _PAD - _LABEL_W) // _STRIP_CELL - 2))
    strip_h = 2 * (len(comparison.maps) + 2) * _STRIP_ROW + _PAD
    grid_h = 2 * (title_h + cell_h + note_h) + 3 * _PAD + 24 + strip_h
    # the canvas, and a zoomed picture and its copy at a time beside it
    check_bytes_fit(3 * max(grid_w, 420) * grid_h + 6 * cell_w * cell_h,
                    f"a picture of {max(grid_w, 420)} x {grid_h} pixels takes",
                    "use a smaller zoom")
    canvas = Image.new("RGB", (max(grid_w, 420), grid_h), _BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    s_h, s_w = comparison.scales
    draw.text((_PAD, 6), f"ONNX Upsample, scales {s_h:g} (height) x {s_w:g} (width)",
              fill=_INK, font=font)

    def slot(row: int, column: int) -> tuple[int, int]:
        return (_PAD + column * (cell_w + _PAD), 24 + _PAD + row * (title_h + cell_h + note_h))

    def paste(picture: np.ndarray, row: int, column: int, title: str, note: str) -> None:
        x, y = slot(row, column)
        draw.multiline_text((x, y), title, fill=_INK, font=font, spacing=2)
        canvas.paste(Image.fromarray(picture), (x, y + title_h))
        draw.multiline_text((x, y + title_h + picture.shape[0] + 4), note, fill=_INK,
                            font=font, spacing=2)

    h, w = image.shape[:2]
    input_size = (max(1, round(w * s_w * zoom)), max(1, round(h * s_h * zoom)))
    shown_input = np.asarray(Image.fromarray(_to_rgb8(image)).resize(
        input_size, Image.Resampling.NEAREST))
    paste(shown_input, 0, 0, "input", f"{h} x {w}")
    for column, (title, result) in enumerate(
        [("ONNX nearest", comparison.nearest), ("ONNX linear", comparison.linear)], start=1
    ):
        rgb = np.repeat(np.repeat(_to_rgb8(result), zoom, axis=0), zoom, axis=1)
        paste(rgb, 0, column, title, f"{out_h} x {out_w}")

    colours = _palette(h, w)
    reference = comparison.maps[0]
    titles = ["ONNX Upsample / ORT\ntrunc(f32(o) / f32(s))",
              "PyTorch interpolate(scale_factor)\nfloor(f32(o) * f32(1/s))",
              "OpenCV resize(INTER_NEAREST)\nfloor(o * (in / out))"]
    for column, index_map in enumerate(comparison.maps):
        picture = colours[index_map.rows, index_map.cols]
        picture = np.repeat(np.repeat(picture, zoom, axis=0), zoom, axis=1)
        if zoom >= 6:
            picture[::zoom, :, :] = picture[::zoom, :, :] // 2 + 127
            picture[:, ::zoom, :] = picture[:, ::zoom, :] // 2 + 127
        if column:
            _mark_differences(picture, reference, index_map, zoom)
            diff, total = comparison.differing(column)
            note = f"{index_map.rows.shape[0]} x {index_map.rows.shape[1]}; " + (
                f"{diff} of {total} pixels read\nanother input pixel (red)" if diff
                else "same map as ONNX"
            )
        else:
            note = f"{out_h} x {out_w}; colour = input pixel read"
        paste(picture, 1, column, titles[column], note)
    top = slot(2, 0)[1]
    for axis, label in ((1, "column"), (0, "row")):
        top = _draw_strip(draw, font, comparison, axis, label, top, strip_columns)
    return np.asarray(canvas)


_STRIP_CELL = 22
_STRIP_ROW = 15
_LABEL_W = 150


def _draw_strip(draw: Any, font: Any, comparison: Comparison, axis: int, label: str,
                top: int, columns: int) -> int:
    """A table: output index, then the input index each framework reads along ``axis``."""
    tables = [m.col_table if axis == 1 else m.row_table for m in comparison.maps]
    n = max(t.size for t in tables)
    shown = min(n, columns)
    names = ["ONNX / ORT", "PyTorch", "OpenCV"]
    draw.text((_PAD, top), f"output {label}", fill=_INK, font=font)
    for o in range(shown):
        draw.text((_PAD + _LABEL_W + o * _STRIP_CELL, top), str(o), fill=(120, 120, 120),
                  font=font)
    if shown < n:
        draw.text((_PAD + _LABEL_W + shown * _STRIP_CELL, top), f"... {n - 1}",
                  fill=(120, 120, 120), font=font)
    for row, (name, table) in enumerate(zip(names, tables, strict=True), start=1):
        y = top + row * _STRIP_ROW
        draw.text((_PAD, y), f"input {label}, {name}", fill=_INK, font=font)
        for o in range(min(shown, table.size)):
            differs = row > 1 and (o >= tables[0].size or table[o] != tables[0][o])
            draw.text((_PAD + _LABEL_W + o * _STRIP_CELL, y), str(int(table[o])),
                      fill=_MARK if differs else _INK, font=font)
    return top + (len(tables) + 2) * _STRIP_ROW


def _mark_differences(picture: np.ndarray, reference: IndexMap, other: IndexMap,
                      zoom: int) -> None:
    """Paint a red square in every cell where ``other`` reads another pixel than ONNX."""
    h, w = other.rows.shape
    ref_h, ref_w = reference.rows.shape
    inside = np.zeros((h, w), dtype=bool)
    inside[:min(h, ref_h), :min(w, ref_w)] = True
    differs = ~inside.copy()
    common = (slice(0, min(h, ref_h)), slice(0, min(w, ref_w)))
    differs[common] = ((reference.rows[common] != other.rows[common])
                       | (reference.cols[common] != other.cols[common]))
    size = max(1, zoom // 2)
    offset = (zoom - size) // 2
    for i, j in zip(*np.nonzero(differs), strict=True):
        y, x = i * zoom + offset, j * zoom + offset
        picture[y:y + size, x:x + size] = _MARK

