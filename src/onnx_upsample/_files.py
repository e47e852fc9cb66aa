"""Files for ``onnx-upsample apply``: ``.npy``, images (Pillow) and zarr stores (via dask).

Readers return the data with as little loaded as possible (``.npy`` memory-mapped, zarr
lazily); :func:`apply` runs ONNX ``Upsample`` in memory when that is small and cheap, and
through :mod:`onnx_upsample.dask` chunk by chunk otherwise (always for zarr). Every writer is
atomic: it writes to a hidden temporary path beside the target and renames only on success,
so an interrupted or failed run never leaves a half-written output under the target's name.

Pillow, zarr and dask are imported inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import numpy as np

from ._errors import UpsampleError

if TYPE_CHECKING:
    import dask.array as da

Kind = Literal["npy", "image", "zarr"]

IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF"}
SUFFIXES = ".npy, .png, .jpg/.jpeg, .tif/.tiff or .zarr (a zarr store directory)"
# .npy inputs are upsampled in memory below this output size, chunk by chunk above it
CHUNKED_ABOVE_BYTES = 256 * 2**20
# output chunks aimed at when neither --chunks nor the input's chunks say otherwise
TARGET_CHUNK_BYTES = 64 * 2**20
ZARR_CHUNK_BYTES = 8 * 2**20  # zarr stores prefer smaller chunks (each one is a file)
ZARR_MARKERS = ("zarr.json", ".zarray", ".zgroup")


@dataclass
class Source:
    """An opened input: its kind, the array (numpy, memory-mapped or zarr), image details."""

    kind: Kind
    path: str
    data: Any
    image_mode: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.data.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.data.dtype)


def kind_of(path: str, role: str) -> Kind:
    """The format of ``path`` from its suffix (or, for an input directory, its contents)."""
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
        return Source("npy", path, _read_npy(path))
    if kind == "image":
        data, mode = read_image(path)
        return Source("image", path, data, image_mode=mode)
    array, attrs = _open_zarr(path)
    return Source("zarr", path, array, attrs=attrs)


def _read_npy(path: str) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise UpsampleError(f"cannot read {path!r} as a .npy array: {reason(error)}") from None


# Pillow modes kept as they are (with the element type numpy gives them)
_KEPT_MODES = {"L", "LA", "RGB", "RGBA", "I;16", "I;16B", "I;16L", "I", "F"}


def read_image(path: str) -> tuple[np.ndarray, str]:
    """Read an image as (H, W) or (H, W, C) and return it with the Pillow mode it has.

    Palette images become RGB, or RGBA where they have transparency; 1-bit images become L
    (8-bit); other colour spaces (CMYK, YCbCr, ...) become RGB. 16-bit images stay 16-bit.
    """
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # pragma: no cover - the images extra is missing
        raise UpsampleError(
            "reading images needs Pillow; install onnx-upsample[images]"
        ) from None
    try:
        with Image.open(path) as opened:
            opened.load()
            image: Image.Image = opened
            mode = image.mode
            if mode in ("P", "PA"):
                transparent = mode == "PA" or "transparency" in image.info
                image = image.convert("RGBA" if transparent else "RGB")
            elif mode == "1":
                image = image.convert("L")
            elif mode in ("La", "RGBa"):
                image = image.convert(mode.upper())
            elif mode not in _KEPT_MODES:
                image = image.convert("RGB")
            data = np.asarray(image)
            return np.ascontiguousarray(data), image.mode
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise UpsampleError(f"cannot read {path!r} as an image: {reason(error)}") from None


def _open_zarr(path: str) -> tuple[Any, dict[str, Any]]:
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


def reason(error: BaseException) -> str:
    """An exception as one line: its message, or its class name when it has none."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


# --- scales and chunks --------------------------------------------------------------------


def resolve_scales(source: Source, scales: Sequence[float]) -> list[float]:
    """Scales per axis of the data; images take (height, width) or (height, width, channels).

    Two scales on a colour image leave the channels as they are.
    """
    scales = list(scales)
    if not source.shape:
        raise UpsampleError(
            f"{source.path!r} holds a 0-d array (a scalar), which Upsample returns unchanged "
            "and --scales cannot describe (it takes one scale per axis, and a scalar has "
            "none); copy the file as it is, or save the value with shape (1,) and pass "
            "--scales S"
        )
    if source.kind != "image":
        return scales
    shape = source.shape
    if len(shape) == 2:
        if len(scales) != 2:
            raise UpsampleError(
                f"--scales has {len(scales)} values but {source.path!r} is a grayscale image "
                f"{shape}; give two scales: height width"
            )
        return scales
    if len(scales) == 2:
        return [*scales, 1.0]
    if len(scales) != 3:
        raise UpsampleError(
            f"--scales has {len(scales)} values but {source.path!r} is an image of shape "
            f"{shape} (height, width, channels); give two scales (height width) or three "
            "(height width channels)"
        )
    return scales


def output_chunks(
    chunks: Sequence[int] | None,
    out_shape: tuple[int, ...],
) -> tuple[int, ...] | None:
    """``--chunks``: one size for every axis or one per axis; -1 means the whole axis."""
    if chunks is None:
        return None
    if len(chunks) == 1:
        chunks = list(chunks) * len(out_shape)
    if len(chunks) != len(out_shape):
        raise UpsampleError(
            f"--chunks has {len(chunks)} values but the output has rank {len(out_shape)} "
            f"(shape {out_shape}); give one chunk size, or one per axis"
        )
    result = []
    for axis, (size, n) in enumerate(zip(chunks, out_shape, strict=True)):
        if size == -1:
            size = n
        if size < 1:
            raise UpsampleError(
                f"--chunks[{axis}] is {size}; chunk sizes must be >= 1 (or -1 for a whole axis)"
            )
        result.append(max(1, min(size, n)))
    return tuple(result)


def _auto_chunks(
    out_shape: tuple[int, ...], dtype: np.dtype, target: int
) -> tuple[int, ...]:
    """Regular output chunks of about ``target`` bytes, last axes kept whole."""
    itemsize = max(1, dtype.itemsize)
    budget = max(1, target // itemsize)
    chunks = list(out_shape)
    for axis in range(len(chunks)):
        rest = math.prod(chunks[axis + 1:]) or 1
        if math.prod(chunks[axis:]) <= budget:
            break
        chunks[axis] = max(1, budget // rest)
    return tuple(max(1, c) for c in chunks)


def _input_chunks(
    out_chunks: tuple[int, ...], scales: Sequence[np.float32], in_shape: tuple[int, ...]
) -> tuple[int, ...]:
    """Input chunks that give about ``out_chunks`` once upsampled (checked float32 scales)."""
    return tuple(
        max(1, min(n, math.ceil(c / float(s))))
        for c, s, n in zip(out_chunks, scales, in_shape, strict=True)
    )


# --- apply ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What :func:`apply` did, for the one-line summary."""

    in_shape: tuple[int, ...]
    in_dtype: np.dtype
    out_shape: tuple[int, ...]
    chunked: bool


def apply(
    input_path: str,
    output_path: str,
    scales: Sequence[float],
    mode: str,
    *,
    chunks: Sequence[int] | None = None,
    zarr_format: int = 3,
    progress: TextIO | None = sys.stderr,
) -> Result:
    """Upsample the array in ``input_path`` and write it to ``output_path`` (ONNX Upsample).

    Parameters
    ----------
    input_path, output_path : str
        ``.npy``, ``.png``, ``.jpg``/``.jpeg``, ``.tif``/``.tiff`` or ``.zarr``; formats may
        differ (an image to a zarr store, a ``.npy`` to a PNG, ...).
    scales : sequence of float
        One per axis; for an image input two (height, width: channels stay) or three.
    mode : str
        ``nearest`` or ``linear`` (see :func:`onnx_upsample.upsample`).
    chunks : sequence of int, optional
        Output chunk sizes (one for all axes or one per axis); forces the chunked path.
    zarr_format : {2, 3}
        Format of a zarr output.
    progress : text stream or None
        Where the progress bar of a chunked run goes (it shows after a second); None: quiet.

    Raises
    ------
    UpsampleError
        Unknown formats, unreadable inputs, impossible scales, outputs the format cannot
        hold; nothing is left at ``output_path`` then.
    """
    from ._api import output_shape
    from ._spec.modes import mode_of

    mode_of(mode)  # a wrong mode is reported before any file is opened
    out_kind = kind_of(output_path, "output")
    source = read(input_path)
    full_scales = resolve_scales(source, scales)
    out_shape = output_shape(source.shape, full_scales)
    if out_kind == "image":
        _check_image_output(output_path, out_shape, source.dtype)
    requested = output_chunks(chunks, out_shape)
    out_bytes = math.prod(out_shape) * source.dtype.itemsize
    chunked = (
        source.kind == "zarr" or out_kind == "zarr" or requested is not None
        or (source.kind == "npy" and out_bytes > CHUNKED_ABOVE_BYTES and out_kind == "npy")
    )
    check_resources(output_path, out_shape, source.dtype, in_memory=not chunked
                    or out_kind == "image")
    if not chunked:
        from ._api import upsample

        result = upsample(np.asarray(source.data), full_scales, mode)
        _write_memory(output_path, out_kind, result, source)
    else:
        lazy = _lazy(source, full_scales, mode, requested, out_kind)
        try:
            _write_lazy(output_path, out_kind, lazy, source, zarr_format, progress)
        except (UpsampleError, ModuleNotFoundError):  # an extra missing: one line by the CLI
            raise
        except (OSError, MemoryError):
            raise
        except Exception as error:  # a corrupt chunk, a codec failure: one line, exit 2
            raise UpsampleError(
                f"cannot upsample {input_path!r} into {output_path!r}: "
                f"{type(error).__name__}: {reason(error)}"
            ) from None
    return Result(source.shape, source.dtype, out_shape, chunked)


def check_resources(
    output_path: str, out_shape: tuple[int, ...], dtype: np.dtype, in_memory: bool
) -> None:
    """Refuse, before anything is read or written, an output that cannot fit: on the disk
    that will hold it (free space as statvfs reports it; a compressed zarr store is counted
    uncompressed) and, when it is computed whole, in the memory this process may use."""
    from ._resources import check_fits_in_memory, format_bytes

    n_bytes = math.prod(out_shape) * dtype.itemsize
    folder = Path(output_path).resolve().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:  # no statvfs there: the write itself will say what is wrong
        free = None
    if free is not None and n_bytes > free:
        raise UpsampleError(
            f"output {output_path!r} would have shape {out_shape} ({dtype.name}) and take "
            f"{format_bytes(n_bytes)}, more than the {format_bytes(free)} free on its disk; "
            "use smaller scales or write it where there is room"
        )
    if in_memory:
        check_fits_in_memory(out_shape, dtype.itemsize, f"output {output_path!r}",
                             "use smaller scales, or a .zarr output (written chunk by chunk)")


def _lazy(
    source: Source,
    scales: list[float],
    mode: str,
    requested: tuple[int, ...] | None,
    out_kind: Kind,
) -> da.Array:
    import dask.array as da

    from . import dask as ou_dask
    from ._api import output_shape
    from ._spec.call import scales_of

    out_shape = output_shape(source.shape, scales)
    checked = scales_of(list(scales), tuple(source.shape))  # float32, as ONNX stores them
    if source.kind == "zarr":
        array = da.from_zarr(source.data)
        if requested is None and out_kind == "zarr":
            # zarr chunks must be regular: the input's chunks, scaled
            first = tuple(c[0] if c else 1 for c in array.chunks)
            requested = tuple(
                max(1, min(n, math.ceil(c * float(s))))
                for c, s, n in zip(first, checked, out_shape, strict=True)
            )
    else:
        if requested is None:
            target = ZARR_CHUNK_BYTES if out_kind == "zarr" else TARGET_CHUNK_BYTES
            requested = _auto_chunks(out_shape, source.dtype, target)
        array = da.from_array(
            source.data, chunks=_input_chunks(requested, checked, source.shape),
            asarray=True, inline_array=True,
        )
    return ou_dask.upsample(array, scales, mode, chunks=requested)


# --- writers -------------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_path(target: str, directory: bool = False) -> Iterator[str]:
    """A hidden temporary path beside ``target``, renamed to it only if the block succeeds.

    On any failure (an exception, Ctrl-C) the temporary file or directory is removed and
    ``target`` is left as it was.
    """
    target_path = Path(target).absolute()
    parent = target_path.parent
    if not parent.is_dir():
        raise UpsampleError(
            f"output {target!r}: the folder {str(parent)!r} does not exist; create it first"
        )
    prefix = f".{target_path.name}.onnx-upsample-"
    try:
        if directory:
            temporary = tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=parent)
        else:
            handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=parent)
            os.close(handle)
    except OSError as error:
        raise UpsampleError(f"cannot write {target!r}: {reason(error)}") from None
    try:
        yield temporary
        _set_default_permissions(temporary, directory)
        _replace(temporary, target_path, directory)
    except BaseException:
        _remove(temporary)
        raise


def _replace(temporary: str, target: Path, directory: bool) -> None:
    """Move the finished output into place (a directory replaces an old zarr store only)."""
    try:
        if not directory:
            if target.is_dir():
                raise UpsampleError(f"output {str(target)!r} is a directory; give a file name")
            os.replace(temporary, target)
            return
        if target.exists() or target.is_symlink():
            if not (target.is_dir()
                    and any((target / marker).exists() for marker in ZARR_MARKERS)):
                raise UpsampleError(
                    f"output {str(target)!r} exists and is not a zarr store; remove it or "
                    "choose another name"
                )
            aside = f"{temporary}.old"
            os.replace(target, aside)
            os.replace(temporary, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(temporary, target)
    except OSError as error:
        raise UpsampleError(f"cannot write {str(target)!r}: {reason(error)}") from None


def _set_default_permissions(path: str, directory: bool) -> None:
    """Give the output the permissions a plain ``open`` would (mkstemp makes them private)."""
    umask = os.umask(0)
    os.umask(umask)
    with contextlib.suppress(OSError):
        os.chmod(path, (0o777 if directory else 0o666) & ~umask)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _write_memory(path: str, kind: Kind, array: np.ndarray, source: Source) -> None:
    if kind == "npy":
        save_npy(path, array)
    elif kind == "image":
        save_image(path, array)
    else:  # pragma: no cover - zarr outputs always take the chunked path
        raise AssertionError(kind)


def save_npy(path: str, array: np.ndarray) -> None:
    """Write ``array`` to ``path`` as ``.npy``, atomically."""
    if array.dtype.hasobject:
        raise UpsampleError(
            f"output {path!r}: .npy files cannot hold object arrays without pickle; "
            "write a zarr store or convert the strings to a fixed-width type"
        )
    with atomic_path(path) as temporary, _io_errors(path):
        with open(temporary, "wb") as stream:
            np.save(stream, array, allow_pickle=False)


@contextlib.contextmanager
def _io_errors(path: str) -> Iterator[None]:
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
        raise UpsampleError(
            f"output {path!r}: a {image_format} image cannot hold an array of shape {shape} "
            f"and element type {dtype.name}; it holds {allowed}; write .npy or .zarr instead"
        )
    return mode


def _check_image_output(path: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
    _image_mode(path, shape, np.dtype(dtype).newbyteorder("="))


def save_image(path: str, array: np.ndarray) -> None:
    """Write ``array`` as the image format of ``path``'s suffix, atomically."""
    from PIL import Image

    array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    mode = _image_mode(path, array.shape, array.dtype)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    image_format = IMAGE_FORMATS[Path(path).suffix.lower()]
    with atomic_path(path) as temporary, _io_errors(path):
        image = Image.fromarray(array)
        if image.mode != mode:  # pragma: no cover - fromarray picks these modes itself
            image = image.convert(mode)
        options = {"quality": 95} if image_format == "JPEG" else {}
        image.save(temporary, format=image_format, **options)


def _write_lazy(
    path: str,
    kind: Kind,
    lazy: da.Array,
    source: Source,
    zarr_format: int,
    progress: TextIO | None,
) -> None:
    if kind == "image":
        with _progress(progress):
            array = lazy.compute()
        save_image(path, array)
    elif kind == "npy":
        _store_npy(path, lazy, progress)
    else:
        _store_zarr(path, lazy, source.attrs, zarr_format, progress)


@contextlib.contextmanager
def _progress(out: TextIO | None) -> Iterator[None]:
    """dask's progress bar on ``out`` for work that lasts more than a second."""
    if out is None:
        yield
        return
    from dask.diagnostics import ProgressBar

    with ProgressBar(minimum=1.0, dt=0.25, out=out):
        yield


def _store_npy(path: str, lazy: da.Array, progress: TextIO | None) -> None:
    import dask.array as da

    if lazy.dtype.hasobject:
        raise UpsampleError(
            f"output {path!r}: .npy files cannot hold object arrays without pickle; "
            "write a zarr store instead"
        )
    with atomic_path(path) as temporary:
        with _io_errors(path):
            target = np.lib.format.open_memmap(
                temporary, mode="w+", dtype=lazy.dtype, shape=lazy.shape
            )
        with _progress(progress):
            da.store(lazy, target, lock=False)
        with _io_errors(path):
            target.flush()
            del target


def _store_zarr(
    path: str,
    lazy: da.Array,
    attrs: dict[str, Any],
    zarr_format: int,
    progress: TextIO | None,
) -> None:
    import dask.array as da
    import zarr

    if zarr_format not in (2, 3):
        raise UpsampleError(f"zarr format is {zarr_format}; expected 2 or 3")
    version: Literal[2, 3] = 2 if zarr_format == 2 else 3
    chunks = tuple(max(1, c[0]) if c else 1 for c in lazy.chunks)
    regular = all(
        all(size == axis[0] for size in axis[:-1]) and axis[-1] <= axis[0]
        for axis in lazy.chunks if axis
    )
    if not regular:
        lazy = lazy.rechunk(chunks)
    with atomic_path(path, directory=True) as temporary:
        try:
            target = zarr.create_array(
                store=temporary, shape=lazy.shape, chunks=chunks, dtype=lazy.dtype,
                zarr_format=version, attributes=_json_attrs(attrs), overwrite=True,
            )
        except Exception as error:  # zarr raises many kinds for a type it cannot store
            raise UpsampleError(
                f"cannot write {path!r} as a zarr v{zarr_format} store: {reason(error)}"
            ) from None
        with _progress(progress):
            da.store(lazy, target, lock=False)  # type: ignore[arg-type]


def _json_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """The input store's attributes, kept where they are plain JSON."""
    import json

    kept = {}
    for key, value in attrs.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept


def summary(
    input_path: str, output_path: str, result: Result, mode: str
) -> str:
    """The line ``apply`` prints on success."""
    how = ", chunked" if result.chunked else ""
    return (
        f"{input_path} {result.in_shape} {result.in_dtype.name} -> {output_path} "
        f"{result.out_shape} ({mode}{how})"
    )

