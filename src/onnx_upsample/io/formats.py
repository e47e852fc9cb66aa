"""npy, image and zarr files: readers and writers.

Readers return the data with as little loaded as possible (``.npy`` memory-mapped, zarr
lazily). Every writer goes through :mod:`.atomic`: it writes to a hidden temporary path
beside the target and renames only on success, so an interrupted or failed run never leaves
a half-written output under the target's name.

Pillow, zarr and dask are imported inside the functions that need them, so that the formats
a run does not touch need no optional dependency.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import numpy as np

from .._errors import UpsampleError
from .._interop import image_array
from .atomic import ZARR_MARKERS, atomic_path, reason

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_JPEG_QUALITY", "IMAGE_FORMATS", "SUFFIXES", "ZARR_MARKERS", "Kind", "Source",
    "check_image_output", "kind_of", "read", "read_image", "read_npy", "reason",
    "save_image", "save_npy", "slow_step",
]

Kind = Literal["npy", "image", "zarr"]

IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF"}
SUFFIXES = ".npy, .png, .jpg/.jpeg, .tif/.tiff or .zarr (a zarr store directory)"
# JPEG quality on Pillow's scale (1-100): 95 keeps upsampled edges free of visible artefacts;
# above it the file grows for little gain
DEFAULT_JPEG_QUALITY = 95
# the attribute in which xarray keeps axis names in zarr v2 stores (v3 has dimension_names)
XARRAY_DIMENSIONS = "_ARRAY_DIMENSIONS"


@dataclass
class Source:
    """An opened input: its kind, the array (numpy, memory-mapped or zarr), image details.

    Attributes
    ----------
    kind : {"npy", "image", "zarr"}
        The input's format.
    path : str
        The path it was read from, for messages.
    data : array-like
        A numpy array (memory-mapped for ``.npy``) or a zarr array.
    image_mode : str or None
        The Pillow mode of an image input after conversion (``"RGB"``, ``"I;16"``, ...).
    attrs : dict
        A zarr store's attributes (kept in a zarr output).
    """

    kind: Kind
    path: str
    data: Any
    image_mode: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape as Python ints."""
        return tuple(int(n) for n in self.data.shape)

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """A zarr input's axis names: a v3 array's ``dimension_names``, or the
        ``_ARRAY_DIMENSIONS`` attribute xarray writes in v2 stores (kept in a zarr output)."""
        if self.kind != "zarr":
            return None
        names = getattr(getattr(self.data, "metadata", None), "dimension_names", None)
        if names is None:
            names = self.attrs.get(XARRAY_DIMENSIONS)
        if not isinstance(names, list | tuple) or len(names) != len(self.shape):
            return None
        if not all(name is None or isinstance(name, str) for name in names):
            return None
        return tuple(names)

    @property
    def dtype(self) -> np.dtype:
        """The array's element type."""
        return np.dtype(self.data.dtype)


def kind_of(path: str, role: str) -> Kind:
    """The format of ``path`` from its suffix (or, for an input directory, its contents).

    Parameters
    ----------
    path : str
        The file or store.
    role : {"input", "output"}
        Named in the message; only an input directory is recognised by its zarr markers.

    Raises
    ------
    UpsampleError
        The suffix is none of :data:`SUFFIXES`.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        return "npy"
    if suffix in IMAGE_FORMATS:
        return "image"
    if suffix == ".zarr" or (
        role == "input" and os.path.isdir(path)
        and any(os.path.exists(os.path.join(path, m)) for m in ZARR_MARKERS)
    ):
        return "zarr"
    shown = f"suffix {suffix!r}" if suffix else "no suffix"
    raise UpsampleError(
        f"{role} {path!r} has an unknown format ({shown}); expected {SUFFIXES}"
    )


# --- readers -------------------------------------------------------------------------------


def read(path: str) -> Source:
    """Open an input file or store; raises :class:`UpsampleError` with a one-line reason."""
    kind = kind_of(path, "input")
    if not os.path.exists(path):
        raise UpsampleError(f"input {path!r} does not exist")
    if kind == "npy":
        return Source("npy", path, read_npy(path))
    if kind == "image":
        data, mode = read_image(path)
        return Source("image", path, data, image_mode=mode)
    array, attrs = _open_zarr(path)
    return Source("zarr", path, array, attrs=attrs)


def read_npy(path: str) -> np.ndarray:
    """A ``.npy`` file, memory-mapped; pickled (object) arrays are refused.

    Raises
    ------
    UpsampleError
        The file cannot be read as a ``.npy`` array (missing, truncated, pickled, ...).
    """
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise UpsampleError(f"cannot read {path!r} as a .npy array: {reason(error)}") from None


def read_image(path: str) -> tuple[np.ndarray, str]:
    """Read an image as (H, W) or (H, W, C) and return it with the Pillow mode it has.

    Palette images become RGB, or RGBA where they have transparency; 1-bit images become L
    (8-bit); other colour spaces (CMYK, YCbCr, ...) become RGB. 16-bit images stay 16-bit.
    """
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # pragma: no cover - the images extra is missing
        raise UpsampleError(
            "reading images needs Pillow, which is not installed: "
            "pip install 'onnx-upsample[images]'"
        ) from None
    try:
        with Image.open(path) as opened:
            opened.load()
            return image_array(opened)  # the one reading of images, upsample's too
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise UpsampleError(f"cannot read {path!r} as an image: {reason(error)}") from None


def _open_zarr(path: str) -> tuple[Any, dict[str, Any]]:
    """The zarr array at ``path`` (lazily) and its attributes."""
    import zarr

    try:
        node = zarr.open(path, mode="r")
    except Exception as error:  # zarr raises many kinds for a broken store
        raise UpsampleError(f"cannot open {path!r} as a zarr store: {reason(error)}") from None
    if not isinstance(node, zarr.Array):
        names = sorted(name for name, _ in node.arrays())
        hint = f" (it has {', '.join(names[:5])})" if names else " (it has no arrays)"
        raise UpsampleError(
            f"input {path!r} is a zarr group, not an array; give the path of an array "
            f"inside it, such as {path.rstrip('/')}/NAME{hint}"
        )
    return node, dict(node.attrs)


# --- writers of whole arrays ---------------------------------------------------------------


def save_npy(path: str, array: np.ndarray) -> None:
    """Write ``array`` to ``path`` as ``.npy``, atomically.

    Raises
    ------
    UpsampleError
        ``array`` holds objects (they would need pickle, which the readers refuse), or the
        file cannot be written.
    """
    if array.dtype.hasobject:
        raise UpsampleError(
            f"output {path!r}: .npy files cannot hold object arrays without pickle; "
            "write a zarr store or convert the strings to a fixed-width type"
        )
    with atomic_path(path) as temporary, io_errors(path):
        with open(temporary, "wb") as stream:
            np.save(stream, array, allow_pickle=False)


@contextlib.contextmanager
def io_errors(path: str) -> Iterator[None]:
    """A failed write as one line (:class:`UpsampleError`) naming the output."""
    try:
        yield
    except (OSError, ValueError, TypeError) as error:
        raise UpsampleError(f"cannot write {path!r}: {reason(error)}") from None


# (dtype kind+size, channels) -> Pillow mode; channels 0 means a 2-D array
_IMAGE_MODES = {
    ("u1", 0): "L", ("u1", 1): "L", ("u1", 2): "LA", ("u1", 3): "RGB", ("u1", 4): "RGBA",
    ("u2", 0): "I;16", ("u2", 1): "I;16", ("i4", 0): "I", ("i4", 1): "I",
    ("f4", 0): "F", ("f4", 1): "F", ("b1", 0): "1", ("b1", 1): "1",
}
_FORMAT_MODES = {
    "PNG": {"L", "LA", "RGB", "RGBA", "I;16", "1"},
    "JPEG": {"L", "RGB"},
    "TIFF": {"L", "LA", "RGB", "RGBA", "I;16", "I", "F", "1"},
}
# the suffix a message suggests for each format, lossless first
_FORMAT_SUFFIXES = {".png": "PNG", ".tif": "TIFF", ".jpg": "JPEG"}


def _image_mode(path: str, shape: tuple[int, ...], dtype: np.dtype) -> str:
    """The Pillow mode an array of this shape and type is written in, or UpsampleError."""
    image_format = IMAGE_FORMATS[Path(path).suffix.lower()]
    channels = shape[2] if len(shape) == 3 else 0
    key = (f"{dtype.kind}{dtype.itemsize}", channels)
    mode = _IMAGE_MODES.get(key) if len(shape) in (2, 3) else None
    if mode is None or mode not in _FORMAT_MODES[image_format]:
        allowed = {
            "PNG": "uint8 (H, W) or (H, W, 1-4 channels), uint16 (H, W) or bool (H, W)",
            "JPEG": "uint8 (H, W) or (H, W, 3)",
            "TIFF": "uint8 with 1-4 channels, or (H, W) of uint16, int32, float32 or bool",
        }[image_format]
        # the fix: an image format that holds it (RGBA: .png), else an array file
        holding = [suffix for suffix, other in _FORMAT_SUFFIXES.items()
                   if mode is not None and mode in _FORMAT_MODES[other]]
        instead = " or ".join(holding) if holding else ".npy or .zarr"
        raise UpsampleError(
            f"output {path!r}: a {image_format} image cannot hold an array of shape {shape} "
            f"and element type {dtype.name}; it holds {allowed}; write {instead} instead"
        )
    return mode


def check_image_output(path: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Refuse, before any work, an array the image format of ``path`` cannot hold.

    Raises
    ------
    UpsampleError
        The format has no mode for this shape and element type (the message lists those
        it has).
    """
    # The mode depends on the element type's kind and size only, not on its byte order; the
    # type is not converted to native order first because some have none (numpy's
    # variable-width StringDType, in a zarr store) and would raise a TypeError, not this
    # message, for a file the image format cannot hold.
    _image_mode(path, shape, np.dtype(dtype))


def save_image(path: str, array: np.ndarray, *, jpeg_quality: int | None = None) -> None:
    """Write ``array`` as the image format of ``path``'s suffix, atomically (a JPEG with
    ``jpeg_quality``, default :data:`DEFAULT_JPEG_QUALITY`)."""
    from PIL import Image

    array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    mode = _image_mode(path, array.shape, array.dtype)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    image_format = IMAGE_FORMATS[Path(path).suffix.lower()]
    with atomic_path(path) as temporary, io_errors(path):
        image = Image.fromarray(array)
        if image.mode != mode:  # pragma: no cover - fromarray picks these modes itself
            image = image.convert(mode)
        quality = DEFAULT_JPEG_QUALITY if jpeg_quality is None else jpeg_quality
        options = {"quality": quality} if image_format == "JPEG" else {}
        image.save(temporary, format=image_format, **options)


# --- progress --------------------------------------------------------------------------------

# A step that lasts longer than this gets a line (a person starts to wonder after a second)
SLOW_STEP_SECONDS = 1.0


@contextlib.contextmanager
def slow_step(out: TextIO | None, what: str) -> Iterator[None]:
    """Say on ``out`` that ``what`` is under way once it has lasted a second, and when it
    ends (Pillow's PNG encoder takes tens of seconds for a large image and reports
    nothing); nothing for a quick step, or when ``out`` is None."""
    if out is None:
        yield
        return
    started = time.perf_counter()
    said = threading.Event()

    def say() -> None:
        said.set()
        print(f"{what} ...", file=out, flush=True)

    timer = threading.Timer(SLOW_STEP_SECONDS, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        if said.is_set():
            print(f"{what}: done in {time.perf_counter() - started:.1f} s", file=out,
                  flush=True)
