"""``onnx-upsample compare``: why frameworks disagree about nearest upsampling, in one picture.

The grid shows the input, ONNX ``Upsample``'s nearest and linear results, and three nearest
*index maps* side by side: for every output pixel, which input pixel it copies under ONNX
Upsample / onnxruntime 1.32, under PyTorch's ``interpolate(scale_factor=s)`` and under
OpenCV's ``resize(dsize, INTER_NEAREST)``. Each input pixel has its own colour, so a row or
column that a framework repeats, skips or shifts shows as a wider, missing or moved stripe;
pixels where a peer reads another input pixel than ONNX are marked in red.

ONNX's map is computed by :func:`onnx_upsample.upsample` itself, on an array of pixel
numbers (so the global no-resize rule applies too); the peers' maps come from their rules in
:mod:`onnx_upsample._spec.peers`, not from the libraries. Every rule takes the same scale:
the float32 value an ONNX file holds (``--scales 1.7`` is 1.7000000476837158 for all three).

Pillow is imported inside the handler.
"""

from __future__ import annotations

import argparse
import colorsys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .._spec.call import scales_of, shape_of
from .._spec.peers import opencv_nearest_indices, pytorch_nearest_indices
from .._spec.spelling import command_line
from ._common import EXIT_OK, add_output_options, note, print_json

__all__ = ["MAX_SIDE", "register"]

# compare draws a cell per output pixel, three maps side by side: past this many pixels a side
# the picture is beyond a screen (and the index tables beyond reading)
MAX_SIDE = 1024


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand to the ``onnx-upsample`` parser."""
    compare = subparsers.add_parser(
        "compare",
        help="picture of ONNX nearest/linear results and the nearest index maps of "
        "ONNX, PyTorch and OpenCV",
        description="Render IN (an image or a 2-D/3-D .npy), its ONNX Upsample nearest and "
        "linear results, and the nearest index maps of ONNX Upsample (onnxruntime 1.32), "
        "PyTorch interpolate(scale_factor=s) and OpenCV resize(INTER_NEAREST) side by side, "
        "all three with the float32 scale an ONNX file holds; print the maps and how many "
        "pixels each peer reads differently.",
    )
    compare.add_argument("input", help="input image (.png .jpg .tif) or .npy")
    compare.add_argument("-o", "--output", required=True, help="output picture (.png)")
    compare.add_argument("--scales", "--scale", dest="scale", type=float, nargs="+",
                         required=True, metavar="S",
                         help="one scale for height and width, or two (height width); "
                         "--scale is its old name")
    compare.add_argument("--zoom", type=int, default=None,
                         help="screen pixels per output pixel (default: fit about 240)")
    add_output_options(compare, json_help="print one JSON object: the scales, the shapes, "
                       "and per framework its row and column maps and how many pixels it "
                       "reads differently from ONNX")
    compare.set_defaults(handler=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..io import formats

    if len(args.scale) not in (1, 2):
        raise UpsampleError(
            f"--scales has {len(args.scale)} values; give one (height and width) or two "
            "(height width)"
        )
    if args.zoom is not None and not 1 <= args.zoom <= 64:
        raise UpsampleError(f"--zoom is {args.zoom}; expected 1 to 64")
    if formats.kind_of(args.output, "output") != "image" or not args.output.lower().endswith(
        ".png"
    ):
        raise UpsampleError(f"output {args.output!r} must be a .png file")
    image = _load(args.input)
    scales = [float(s) for s in args.scale] * (2 // len(args.scale))
    # checked here, so that a bad scale names --scales rather than upsample()'s argument
    words = command_line(args.input)
    out_shape = shape_of(image.shape[:2], scales_of(scales, image.shape[:2], words), words)
    if max(out_shape) > MAX_SIDE:
        raise UpsampleError(
            f"--scales {' '.join(f'{s:g}' for s in args.scale)} makes the {image.shape[0]} x "
            f"{image.shape[1]} input {out_shape[0]} x {out_shape[1]}; compare draws every "
            f"output pixel, at most {MAX_SIDE} per side: use smaller --scales or a crop of "
            "the input"
        )
    comparison = compare(image, scales)
    picture = render(image, comparison, zoom=args.zoom)
    formats.save_image(args.output, picture)
    if args.json:
        print_json({"command": "compare", "input": args.input, "output": args.output,
                    **comparison.as_json(), "warnings": []})
    else:
        note(args, comparison.text())
        note(args, f"wrote {args.output}")
    return EXIT_OK


def _load(path: str) -> np.ndarray:
    from ..io import formats

    source = formats.read(path)
    if source.kind == "zarr" or len(source.shape) not in (2, 3):
        raise UpsampleError(
            f"input {path!r} has shape {source.shape}; compare takes an image or a 2-D "
            "(height, width) or 3-D (height, width, channels) .npy"
        )
    data = np.asarray(source.data)
    if data.dtype.kind not in "biuf":
        raise UpsampleError(
            f"input {path!r} has element type {data.dtype.name}; compare takes numbers"
        )
    if data.ndim == 3 and data.shape[2] not in (1, 2, 3, 4):
        raise UpsampleError(
            f"input {path!r} has {data.shape[2]} channels; compare takes 1 to 4"
        )
    if data.size == 0:
        raise UpsampleError(f"input {path!r} is empty (shape {data.shape})")
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("="))


# --- index maps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexMap:
    """Source row and column of every output pixel under one framework's nearest rule."""

    name: str
    rows: np.ndarray  # (H_out, W_out)
    cols: np.ndarray
    row_table: np.ndarray  # per axis, for the text summary
    col_table: np.ndarray


@dataclass(frozen=True)
class Comparison:
    """The results and index maps ``compare`` draws."""

    scales: list[float]
    nearest: np.ndarray
    linear: np.ndarray
    maps: list[IndexMap]

    def differing(self, index: int) -> tuple[int, int]:
        """(pixels that read another input pixel than ONNX, ONNX's pixel count)."""
        ref, other = self.maps[0], self.maps[index]
        total = ref.rows.size
        if other.rows.shape != ref.rows.shape:
            h = min(ref.rows.shape[0], other.rows.shape[0])
            w = min(ref.rows.shape[1], other.rows.shape[1])
            same = ((ref.rows[:h, :w] == other.rows[:h, :w])
                    & (ref.cols[:h, :w] == other.cols[:h, :w]))
            return total - int(same.sum()), total
        same = (ref.rows == other.rows) & (ref.cols == other.cols)
        return total - int(same.sum()), total

    def as_json(self) -> dict[str, object]:
        """The scales, the results' shape and each map, for ``--json``."""
        maps = []
        for position, index_map in enumerate(self.maps):
            entry: dict[str, object] = {
                "name": index_map.name, "shape": list(index_map.rows.shape),
                "rows": index_map.row_table.tolist(), "cols": index_map.col_table.tolist(),
            }
            if position:
                entry["differing"], entry["of"] = self.differing(position)
            maps.append(entry)
        return {"scales": self.scales, "output_shape": list(self.nearest.shape),
                "maps": maps}

    def text(self) -> str:
        """The per-axis index maps and how often each peer differs from ONNX."""
        lines = [f"nearest index maps, scales {self.scales[0]:g} x {self.scales[1]:g}:"]
        for position, index_map in enumerate(self.maps):
            rows = " ".join(str(int(i)) for i in index_map.row_table[:32])
            cols = " ".join(str(int(i)) for i in index_map.col_table[:32])
            more_r = " ..." if index_map.row_table.size > 32 else ""
            more_c = " ..." if index_map.col_table.size > 32 else ""
            size = f"{index_map.rows.shape[0]}x{index_map.rows.shape[1]}"
            verdict = ""
            if position:
                diff, total = self.differing(position)
                verdict = f"; reads another pixel than ONNX at {diff} of {total}"
            lines.append(f"  {index_map.name} ({size}{verdict})")
            lines.append(f"    rows: {rows}{more_r}")
            lines.append(f"    cols: {cols}{more_c}")
        return "\n".join(lines)


def compare(image: np.ndarray, scales: list[float]) -> Comparison:
    """ONNX nearest and linear results of ``image`` and the three nearest index maps, every
    rule with the float32 ``scales`` (height, width) an ONNX file would hold."""
    from .._api import upsample

    scales = [float(np.float32(s)) for s in scales]
    h, w = image.shape[:2]
    full = [*scales, 1.0] if image.ndim == 3 else list(scales)
    values = image.astype(np.float32) if image.dtype.kind == "b" else image
    nearest = upsample(values, full, "nearest")
    linear = upsample(values, full, "linear")
    numbers = np.arange(h * w, dtype=np.int64).reshape(h, w)
    ort = upsample(numbers, scales, "nearest")
    ort_rows, ort_cols = ort // w, ort % w
    maps = [IndexMap("ONNX Upsample / onnxruntime", ort_rows, ort_cols,
                     ort_rows[:, 0], ort_cols[0, :])]
    t_rows = pytorch_nearest_indices(h, scales[0])
    t_cols = pytorch_nearest_indices(w, scales[1])
    rows, cols = np.meshgrid(t_rows, t_cols, indexing="ij")
    maps.append(IndexMap("PyTorch interpolate(scale_factor)", rows, cols, t_rows, t_cols))
    c_rows = opencv_nearest_indices(h, ort.shape[0])
    c_cols = opencv_nearest_indices(w, ort.shape[1])
    rows, cols = np.meshgrid(c_rows, c_cols, indexing="ij")
    maps.append(IndexMap("OpenCV resize(INTER_NEAREST)", rows, cols, c_rows, c_cols))
    return Comparison(list(scales), nearest, linear, maps)


# --- drawing ----------------------------------------------------------------------------------

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


def render(image: np.ndarray, comparison: Comparison, zoom: int | None = None) -> np.ndarray:
    """The comparison grid as an (H, W, 3) uint8 picture."""
    from PIL import Image, ImageDraw, ImageFont

    out_h, out_w = comparison.nearest.shape[:2]
    peer_h = max(m.rows.shape[0] for m in comparison.maps)
    peer_w = max(m.rows.shape[1] for m in comparison.maps)
    if zoom is None:
        zoom = max(1, min(32, 240 // max(peer_h, peer_w, 1)))
    cell_w, cell_h = peer_w * zoom, peer_h * zoom
    font = ImageFont.load_default(size=12)
    title_h, note_h = 34, 30
    grid_w = 3 * cell_w + 4 * _PAD
    strip_columns = max(8, min(peer_w, (max(grid_w, 420) - 2 * _PAD - _LABEL_W) // _STRIP_CELL - 2))
    strip_h = 2 * (len(comparison.maps) + 2) * _STRIP_ROW + _PAD
    grid_h = 2 * (title_h + cell_h + note_h) + 3 * _PAD + 24 + strip_h
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

