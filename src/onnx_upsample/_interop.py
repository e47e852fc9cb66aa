"""Other libraries' arrays as ``x``: read into numpy without a copy where they allow one, and
the result given back as theirs.

- dask arrays go to :func:`onnx_upsample.dask.upsample`, whose lazy result comes back
  (computing it here would hold the whole output in memory);
- torch tensors and array-API arrays (anything with ``__array_namespace__``: jax, cupy,
  ``array_api_strict``) are read through DLPack, which shares their memory, and the result
  goes back to their namespace the same way (torch's bfloat16, which DLPack cannot hand to
  numpy, as its 16-bit patterns);
- Pillow images are read as the command line reads them (:func:`image_array`: palette
  images as RGB or RGBA, never blended on their indices) and come back as images of that
  mode;
- xarray ``DataArray``\\ s are refused with the fix (``onnx_upsample.xarray``, which keeps
  their coordinates); everything else is read by ``numpy.asarray`` and comes back as numpy.

None of these libraries is imported here: an input of one is recognised through the modules
the process has already loaded (``sys.modules``), which it must have to hold such an input.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._errors import UpsampleError
from ._first_use import load

# DLPack's device type of main memory (kDLCPU): every other device is one the kernels
# cannot read (torch reports pinned host memory as CPU too).
DLPACK_CPU = 1

# Pillow modes an image keeps when read as an array (with the element type numpy gives them)
KEPT_IMAGE_MODES = {"L", "LA", "RGB", "RGBA", "I;16", "I;16B", "I;16L", "I", "F"}


def image_array(image: Any) -> tuple[np.ndarray, str]:
    """A Pillow image as a C-contiguous (H, W) or (H, W, C) array, and the mode it was read
    in: the one reading of images, for the command line's files and for ``upsample``.

    Palette images become RGB, or RGBA where they have transparency (their indices mean
    nothing in between: a blend of two would pick an unrelated colour); 1-bit images become
    L (8-bit), premultiplied alpha becomes straight (LA, RGBA); other colour spaces (CMYK,
    YCbCr, ...) become RGB. The modes of :data:`KEPT_IMAGE_MODES` stay, 16-bit ones 16-bit.
    """
    mode = image.mode
    if mode in ("P", "PA"):
        transparent = mode == "PA" or "transparency" in image.info
        image = image.convert("RGBA" if transparent else "RGB")
    elif mode == "1":
        image = image.convert("L")
    elif mode in ("La", "RGBa"):
        image = image.convert(mode.upper())
    elif mode not in KEPT_IMAGE_MODES:
        image = image.convert("RGB")
    return np.ascontiguousarray(np.asarray(image)), image.mode


def with_channel_scale(image_shape: tuple[int, ...], scales: Any) -> Any:
    """An image's scales per axis of its array: two scales on an image read with channels,
    (height, width, channels), are its height and width, and the channels stay (a scale of
    1 added); anything else is returned as given, for the call's checks to judge."""
    if (len(image_shape) == 3 and isinstance(scales, list | tuple | np.ndarray)
            and np.ndim(scales) == 1 and len(scales) == 2):
        return [*scales, 1.0]
    return scales


def _kind(x: object) -> str:
    return f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"


def _loaded(module: str, name: str, x: object) -> bool:
    """Whether ``x`` is an instance of ``module.name``, without importing the module (a
    process holding such an object has it loaded)."""
    found = sys.modules.get(module)
    cls = getattr(found, name, None) if found is not None else None
    return isinstance(cls, type) and isinstance(x, cls)


def is_dask_array(x: object) -> bool:
    """Whether ``x`` is a dask array."""
    return _loaded("dask.array", "Array", x)


class Source:
    """How one input is read as a numpy array, and how its result goes back: as numpy (this
    base: lists, scalars, numpy arrays and their subclasses, anything with ``__array__``)."""

    def read(self, x: object) -> np.ndarray:
        """``x`` as a numpy array, sharing its memory where it allows."""
        if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
            return np.asarray(x)
        return read_dlpack(x)

    def scales(self, x: object, scales: object) -> object:
        """The scales as the call takes them (an image's may leave its channels out)."""
        return scales

    def check(self, out_shape: tuple[int, ...]) -> None:
        """Refuse an output that cannot go back as the input's kind."""

    def back(self, result: np.ndarray) -> object:
        """The result as the input's kind."""
        return result


PLAIN = Source()


class _Torch(Source):
    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def read(self, x: object) -> np.ndarray:
        return read_dlpack(x)

    def back(self, result: np.ndarray) -> object:
        torch = self.torch
        if result.dtype.name == "bfloat16":  # ml_dtypes' (the only bfloat16 numpy holds)
            return torch.from_numpy(result.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(result)  # shares the result's memory


class _Namespace(Source):
    """An array-API array: back through its namespace's ``from_dlpack`` (no copy), or its
    ``asarray`` for a type DLPack cannot carry (ml_dtypes' bfloat16 to jax)."""

    def __init__(self, x: Any) -> None:
        self.namespace = x.__array_namespace__()
        self.device = getattr(x, "device", None)

    def back(self, result: np.ndarray) -> object:
        xp = self.namespace
        try:
            if self.device is not None:
                try:
                    return xp.from_dlpack(result, device=self.device)
                except TypeError:  # a namespace older than from_dlpack's device=
                    pass
            return xp.from_dlpack(result)
        except (BufferError, RuntimeError, TypeError, ValueError):
            return xp.asarray(result)


class _Image(Source):
    """A Pillow image: read as the command line reads it, back in the mode it was read in."""

    def __init__(self, image_module: Any) -> None:
        self.image_module = image_module
        self.array: np.ndarray | None = None
        self.mode = ""

    def read(self, x: object) -> np.ndarray:
        if self.array is None:  # read once: the scales may have asked first
            self.array, self.mode = image_array(x)
        return self.array

    def scales(self, x: object, scales: object) -> object:
        """Two scales on an image read with channels are (height, width), as on the command
        line: the channels stay."""
        return with_channel_scale(self.read(x).shape, scales)

    def check(self, out_shape: tuple[int, ...]) -> None:
        assert self.array is not None
        if len(out_shape) == 3 and out_shape[2] != self.array.shape[2]:
            raise UpsampleError(
                f"x is a PIL image of mode {self.mode}, read as an array of shape "
                f"{self.array.shape} (height, width, channels); scales[2] would make "
                f"{out_shape[2]} channels, which no image of that mode holds: give 1 as "
                "scales[2] (or pass numpy.asarray(x) for an array result)"
            )

    def back(self, result: np.ndarray) -> object:
        assert self.array is not None
        # the element type as read (I;16B is big-endian): fromarray gives the mode back
        return self.image_module.fromarray(result.astype(self.array.dtype, copy=False))


def source_of(x: object) -> Source:
    """How ``x``, which is not a plain numpy array, is read and given back.

    Raises
    ------
    TypeError
        ``x`` is an xarray ``DataArray`` (``onnx_upsample.xarray`` is its entry).
    """
    if isinstance(x, np.ndarray):
        return PLAIN
    if _loaded("xarray", "DataArray", x):
        raise TypeError(
            "x is an xarray.DataArray; onnx_upsample.xarray.upsample(x, scales, mode) keeps "
            "its dims and coordinates (and stays lazy when its data are a dask array): use "
            "it, or pass x.values for a numpy result"
        )
    if _loaded("PIL.Image", "Image", x):
        return _Image(sys.modules["PIL.Image"])
    if _loaded("torch", "Tensor", x):
        return _Torch(sys.modules["torch"])
    if hasattr(x, "__array_namespace__") and hasattr(x, "__dlpack__"):
        return _Namespace(x)
    return PLAIN


def read_dlpack(x: Any) -> np.ndarray:
    """A tensor (torch, and any array with ``__dlpack__``: jax, cupy, array-API arrays) as a
    numpy array sharing its memory; torch's bfloat16, which DLPack cannot hand to numpy, as
    its 16-bit patterns viewed as ml_dtypes' bfloat16 (no copy either).

    What the CPU cannot read is one UpsampleError line: another device, a tensor that
    requires grad (upsample is not differentiable, so gradients would stop here silently:
    ``.detach()`` says so explicitly), a sparse tensor, an element type numpy lacks.
    """
    kind = _kind(x)
    device = getattr(x, "__dlpack_device__", None)
    if device is not None and int(device()[0]) != DLPACK_CPU:
        where = getattr(x, "device", None) or f"DLPack device type {int(device()[0])}"
        raise UpsampleError(f"x is a {kind} on {where}; upsample runs on the CPU: pass "
                            "x.cpu() (or copy x to host memory), and move the result back")
    if getattr(x, "requires_grad", False) is True:
        raise UpsampleError(f"x is a {kind} that requires grad; upsample is not "
                            "differentiable (gradients would stop here): pass x.detach()")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _read_torch(x, torch)
    try:
        return np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return np.asarray(x)  # through __array__, or check_call words why not


def _read_torch(x: Any, torch: Any) -> np.ndarray:
    """A CPU torch tensor that needs no grad, as a numpy array sharing its memory."""
    if x.layout != torch.strided:
        raise UpsampleError(f"x is a torch tensor of layout {x.layout}; pass x.to_dense()")
    x = x.resolve_conj().resolve_neg()  # a copy only where a conjugation is still pending
    if x.dtype == torch.bfloat16:
        try:
            ml_dtypes = load("ml_dtypes")
        except ImportError:
            raise UpsampleError("x is a torch.bfloat16 tensor; numpy holds bfloat16 through "
                                "ml_dtypes: pip install ml_dtypes (or pass x.float())") from None
        return np.from_dlpack(x.view(torch.int16)).view(ml_dtypes.bfloat16)
    try:
        return np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError) as error:
        raise UpsampleError(f"x is a torch tensor of element type {x.dtype}, which numpy "
                            f"cannot hold ({error}); convert it first, e.g. x.float()") from None


def chunked(x: Any, scales: object, mode: object, out: object) -> Any:
    """A dask array's lazy result, from :func:`onnx_upsample.dask.upsample`.

    Raises
    ------
    UpsampleError
        ``out`` is given: the result is lazy, and is stored by its own ``store``.
    """
    # the one way up a layer (tests/test_architecture.py names it): the chunked entry owns
    # dask arrays, and importing it needs dask, which x being one shows is there
    from .dask import upsample as lazy

    result = lazy(x, scales, mode)  # type: ignore[arg-type]
    if out is not None:  # the last check, as for any x
        raise UpsampleError(
            "out is given but x is a dask array, whose result is lazy (a dask array, computed "
            "chunk by chunk): leave out= out and write the result into out with "
            "result.store(out), or pass x.compute()"
        )
    return result
