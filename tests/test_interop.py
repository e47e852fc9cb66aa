"""Other libraries' arrays as x, and tensors as scales: torch (CPU, skipped without torch),
array-API arrays (``array_api_strict``) and any DLPack or ``__array__`` producer, read without
a copy where the producer allows, and given back as their own kind; Pillow images read as
the command line reads them and given back as images; what the CPU cannot read is one
UpsampleError line, and scales that are not real numbers stay a TypeError. (dask arrays:
tests/test_dask.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from onnx_upsample import UpsampleError, _interop, upsample


class DLPackOnly:
    """An array-API array that offers nothing but DLPack (no __array__, no tolist)."""

    def __init__(self, array: np.ndarray, device: tuple[int, int] = (1, 0)) -> None:
        self._array, self._device = array, device

    def __dlpack__(self, **kwargs: object) -> object:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


class ArrayOnly:
    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self._array


class ToListOnly:
    def __init__(self, values: list[object]) -> None:
        self._values = values

    def tolist(self) -> list[object]:
        return self._values


X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("scales", [
    DLPackOnly(np.array([2.0, 1.5])), DLPackOnly(np.array([[2, 1.5]])),  # ORT's [1, n] too
    ArrayOnly(np.array([2, 1.5])), ToListOnly([2, 1.5]),
], ids=["dlpack", "dlpack-2d", "__array__", "tolist"])
def test_scales_from_any_array(scales: object) -> None:
    assert np.array_equal(upsample(X, scales, "linear"), upsample(X, [2, 1.5], "linear"))


@pytest.mark.parametrize(("scales", "message"), [
    (DLPackOnly(np.array([True, True])), "scales has element type bool"),
    (DLPackOnly(np.array([2j, 1])), "scales has element type complex128"),
    (ArrayOnly(np.array(["2", "1.5"])), "scales has element type str"),
    (ToListOnly([2, "1.5"]), "scales[1] is '1.5'"),
    (ToListOnly([2, True]), "scales[1] is True"),
    (np.float64(2.0), "such as [2, 2]"),  # a scalar is not a sequence: one per axis of X
])
def test_scales_that_are_not_real_numbers_stay_a_type_error(scales: object,
                                                            message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        upsample(X, scales)


def test_a_dlpack_array_is_read_without_a_copy() -> None:
    read = _interop.PLAIN.read(DLPackOnly(X))
    assert np.shares_memory(read, X)
    result = upsample(DLPackOnly(X), [2, 2])  # no namespace to go back to: numpy
    assert type(result) is np.ndarray
    assert np.array_equal(result, upsample(X, [2, 2]))


def test_another_device_is_one_line_after_the_kinds_of_the_arguments() -> None:
    on_gpu = DLPackOnly(X, device=(2, 0))  # kDLCUDA
    with pytest.raises(UpsampleError) as error:
        upsample(on_gpu, [2, 2])
    assert str(error.value) == ("x is a test_interop.DLPackOnly on DLPack device type 2; "
                                "upsample runs on the CPU: pass x.cpu() (or copy x to host "
                                "memory), and move the result back")
    with pytest.raises(TypeError, match="scales"):  # kinds first, as for any x
        upsample(on_gpu, [2, True])


# --- array-API arrays ----------------------------------------------------------------------


class Namespace:
    """A namespace whose from_dlpack refuses (as jax's does for ml_dtypes' bfloat16)."""

    def __init__(self) -> None:
        self.asarray_calls = 0

    def from_dlpack(self, x: object, **kwargs: object) -> object:
        raise BufferError("this namespace cannot take it through DLPack")

    def asarray(self, x: np.ndarray) -> object:
        self.asarray_calls += 1
        return ArrayOnly(np.asarray(x))


class WithNamespace(DLPackOnly):
    namespace = Namespace()

    def __array_namespace__(self, api_version: object = None) -> Namespace:
        return self.namespace


def test_array_api_arrays_come_back_in_their_namespace() -> None:
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray(X)
    assert np.shares_memory(_interop.source_of(x).read(x), np.from_dlpack(x))  # no copy
    for mode in ("nearest", "linear"):
        result = upsample(x, [2, 1.5], mode)
        assert type(result) is type(x) and result.dtype == xp.float32
        assert result.device == x.device
        assert np.array_equal(np.from_dlpack(result), upsample(X, [2, 1.5], mode))
    if hasattr(xp, "Device"):  # newer array-api-strict: made-up devices besides the CPU
        on_device = xp.asarray(X, device=xp.Device("device1"))
        assert upsample(on_device, [2, 2]).device == on_device.device
    for dtype in (xp.bool, xp.uint16, xp.int64, xp.complex64):  # nearest: every type
        y = xp.asarray(np.arange(6).reshape(2, 3) % 2, dtype=dtype)
        assert upsample(y, [1, 2]).dtype == dtype
        assert np.from_dlpack(upsample(y, [1, 2])).tolist() == upsample(
            np.from_dlpack(y), [1, 2]).tolist()


def test_a_namespace_that_refuses_dlpack_gets_asarray() -> None:
    x = WithNamespace(X)
    result = upsample(x, [2, 2])
    assert isinstance(result, ArrayOnly) and WithNamespace.namespace.asarray_calls == 1
    assert np.array_equal(result.__array__(), upsample(X, [2, 2]))


def test_out_is_the_result_whatever_x_is() -> None:
    xp = pytest.importorskip("array_api_strict")
    out = np.empty((6, 8), np.float32)
    assert upsample(xp.asarray(X), [2, 2], out=out) is out
    assert np.array_equal(out, upsample(X, [2, 2]))


def test_an_xarray_data_array_is_refused_with_its_entry() -> None:
    xr = pytest.importorskip("xarray")
    with pytest.raises(TypeError, match=r"^x is an xarray.DataArray; onnx_upsample.xarray."
                                        r"upsample\(x, scales, mode\) keeps its dims and "
                                        r"coordinates .* or pass x.values for a numpy result$"):
        upsample(xr.DataArray(X, dims=("y", "x")), [2, 2])


# --- Pillow images ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pil() -> object:
    return pytest.importorskip("PIL.Image")


def _palette(pil, transparent: bool = False) -> object:
    """A 2 x 2 palette image: index 0 black, 1 red, 2 green (the indices say nothing of the
    colours: a blend of index 0 and 2 would be index 1, red)."""
    image = pil.new("P", (2, 2))
    image.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0])
    image.putdata([0, 2, 2, 0])
    if transparent:
        image.info["transparency"] = 0
    return image


def test_palette_images_are_blended_in_colour_never_on_their_indices(pil) -> None:
    result = upsample(_palette(pil), [1, 2, 1], "linear")
    assert isinstance(result, pil.Image) and result.mode == "RGB" and result.size == (4, 2)
    pixels = np.asarray(result)
    # black to green along each row (asymmetric: outputs at 0, 0.5, 1, 1.5 input pixels)
    assert pixels[..., 0].max() == 0 and pixels[..., 2].max() == 0  # never red, never blue
    assert pixels[0, :, 1].tolist() == [0, 127, 255, 255]  # 127.5 truncated, as ORT
    assert pixels[1, :, 1].tolist() == [255, 127, 0, 0]
    nearest = upsample(_palette(pil), [2, 1, 1])
    assert nearest.mode == "RGB" and np.asarray(nearest)[:, 0].tolist() == [
        [0, 0, 0], [0, 0, 0], [0, 255, 0], [0, 255, 0]]
    assert upsample(_palette(pil, transparent=True), [2, 2, 1]).mode == "RGBA"


@pytest.mark.parametrize(("mode", "read_as"), [
    ("L", "L"), ("LA", "LA"), ("RGB", "RGB"), ("RGBA", "RGBA"), ("I;16", "I;16"),
    ("I;16B", "I;16B"), ("I", "I"), ("F", "F"), ("1", "L"), ("CMYK", "RGB"),
])
def test_images_come_back_in_the_mode_they_are_read_in(pil, mode: str, read_as: str) -> None:
    image = pil.new(mode, (3, 2))
    image.putdata([(i * 37) % 200 if mode not in ("LA", "RGB", "RGBA", "CMYK") else
                   tuple(((i * 37) + c * 11) % 200 for c in range(len(mode)))
                   for i in range(6)])
    array, _ = _interop.image_array(image)
    scales = [2, 2, 1][:array.ndim]
    for how in ("nearest", "linear"):
        result = upsample(image, scales, how)
        assert isinstance(result, pil.Image) and result.mode == read_as
        assert result.size == (6, 4)
        assert np.array_equal(np.asarray(result), upsample(array, scales, how))


@pytest.mark.parametrize("mode", ["P", "RGB", "RGBA", "LA", "L", "I;16", "F"])
def test_two_scales_are_an_images_height_and_width(pil, mode: str) -> None:
    """As the command line's --scales on an image: two scales leave the channels, whether
    the image is read with them (a palette image becomes RGB) or without (L)."""
    image = pil.new(mode, (3, 2))
    array, _ = _interop.image_array(image)
    result = upsample(image, [2, 3], "linear")
    assert result.size == (9, 4)
    per_axis = [2, 3, 1][:array.ndim]
    assert np.array_equal(np.asarray(result), upsample(array, per_axis, "linear"))


def test_an_image_keeps_its_channels(pil) -> None:
    with pytest.raises(UpsampleError, match=r"^x is a PIL image of mode RGB, read as an array "
                                            r"of shape \(2, 3, 3\) .* scales\[2\] would make "
                                            r"6 channels"):
        upsample(pil.new("RGB", (3, 2)), [2, 2, 2])
    out = np.empty((4, 6, 6), np.uint8)  # into an array of one's own: any scales
    assert upsample(pil.new("RGB", (3, 2)), [2, 2, 2], out=out) is out


# --- torch -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> object:
    return pytest.importorskip("torch", reason="torch is not installed (it is not in the "
                                               "test extra: 800 MB)")


def test_torch_tensors_are_read_without_a_copy_and_come_back(torch) -> None:
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)[:, ::2]  # a strided view
    read = _interop.source_of(t).read(t)
    assert np.shares_memory(read, t.numpy())
    result = upsample(t, [2, 1.5], "linear")
    assert type(result) is torch.Tensor and result.dtype == torch.float32
    assert np.array_equal(result.numpy(), upsample(t.numpy(), [2, 1.5], "linear"))
    for dtype in (torch.bool, torch.uint8, torch.int16, torch.uint16, torch.int64,
                  torch.float16, torch.complex128):
        assert upsample(torch.zeros(2, 3, dtype=dtype), [2, 1]).dtype == dtype


def test_torch_bfloat16_is_read_as_its_bits(torch) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = (torch.arange(24, dtype=torch.float32) / 7).to(torch.bfloat16).reshape(4, 6)[:, ::2]
    read = _interop.source_of(t).read(t)
    assert read.dtype == ml_dtypes.bfloat16
    assert np.shares_memory(read.view(np.int16), t.view(torch.int16).numpy())
    bits = t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    for mode in ("nearest", "linear"):
        result = upsample(t, [2, 1.5], mode)
        assert result.dtype == torch.bfloat16
        assert (result.view(torch.int16).numpy().tobytes()
                == upsample(bits, [2, 1.5], mode).tobytes())
        # torch's own float32 arithmetic rounded to bfloat16 agrees (another reading)
        expected = upsample(t.float().numpy(), [2, 1.5], mode)
        assert np.array_equal(result.float().numpy(), expected.astype(ml_dtypes.bfloat16)
                              .astype(np.float32))


def test_torch_conjugate_views_are_resolved(torch) -> None:
    t = torch.tensor([[1 + 2j, 3 - 1j]], dtype=torch.complex64).conj()
    assert upsample(t, [1, 2]).numpy().tolist() == [[1 - 2j, 1 - 2j, 3 + 1j, 3 + 1j]]


def test_torch_tensors_the_cpu_cannot_read_are_one_line(torch) -> None:
    cases = [
        (torch.ones(2, 2, requires_grad=True), "x is a torch.Tensor that requires grad; "
         "upsample is not differentiable (gradients would stop here): pass x.detach()"),
        (torch.nn.Parameter(torch.ones(2, 2)), "x is a torch.Parameter that requires grad"),
        (torch.ones(2, 2).to_sparse(), "x is a torch tensor of layout torch.sparse_coo; "
         "pass x.to_dense()"),
        (torch.ones(2, 2).to(torch.float8_e4m3fn), "x is a torch tensor of element type "
         "torch.float8_e4m3fn, which numpy cannot hold"),
    ]
    for tensor, message in cases:
        with pytest.raises(UpsampleError) as error:
            upsample(tensor, [2, 2])
        assert str(error.value).startswith(message) and "\n" not in str(error.value)
    assert np.array_equal(upsample(cases[0][0].detach(), [2, 2]).numpy(), np.ones((4, 4)))


def test_torch_scales(torch) -> None:
    expected = upsample(X, [2, 1.5], "linear")
    for scales in (torch.tensor([2.0, 1.5]), torch.tensor([[2.0, 1.5]]),
                   torch.tensor([2.0, 1.5], dtype=torch.bfloat16),
                   torch.tensor([2.0, 1.5], requires_grad=True)):
        assert np.array_equal(upsample(X, scales, "linear"), expected), scales
    assert upsample(np.arange(3), torch.tensor(2)).tolist() == [0, 0, 1, 1, 2, 2]
    with pytest.raises(TypeError, match="scales has element type bool"):
        upsample(X, torch.tensor([True, True]))
    with pytest.raises(UpsampleError, match=r"scales has 3 value\(s\)"):
        upsample(X, torch.tensor([1.0, 2.0, 2.0]))


def test_the_typed_mode_names_are_the_accepted_ones() -> None:
    """The public signatures' Literal lists what mode_of accepts, no more, no less."""
    from typing import get_args

    from onnx_upsample._spec.modes import LEGACY_LINEAR_NAMES, MODES, ModeName

    assert get_args(ModeName) == (*MODES, *LEGACY_LINEAR_NAMES)
