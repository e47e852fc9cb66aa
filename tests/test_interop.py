"""Tensors as x and as scales: torch (CPU, skipped without torch) and any DLPack or
``__array__`` producer, read without a copy where the producer allows; what the CPU cannot
read is one UpsampleError line, and scales that are not real numbers stay a TypeError."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_upsample import UpsampleError, _api, upsample


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
    read = _api._read_x(DLPackOnly(X))
    assert np.shares_memory(read, X)
    assert np.array_equal(upsample(DLPackOnly(X), [2, 2]), upsample(X, [2, 2]))


def test_another_device_is_one_line_after_the_kinds_of_the_arguments() -> None:
    on_gpu = DLPackOnly(X, device=(2, 0))  # kDLCUDA
    with pytest.raises(UpsampleError) as error:
        upsample(on_gpu, [2, 2])
    assert str(error.value) == ("x is a test_interop.DLPackOnly on DLPack device type 2; "
                                "upsample runs on the CPU: pass x.cpu() (or copy x to host "
                                "memory)")
    with pytest.raises(TypeError, match="scales"):  # kinds first, as for any x
        upsample(on_gpu, [2, True])


# --- torch -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> object:
    return pytest.importorskip("torch", reason="torch is not installed (it is not in the "
                                               "test extra: 800 MB)")


def test_torch_tensors_are_read_without_a_copy(torch) -> None:
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)[:, ::2]  # a strided view
    read = _api._read_x(t)
    assert np.shares_memory(read, t.numpy())
    result = upsample(t, [2, 1.5], "linear")
    assert type(result) is np.ndarray
    assert np.array_equal(result, upsample(t.numpy(), [2, 1.5], "linear"))


def test_torch_bfloat16_is_read_as_its_bits(torch) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = (torch.arange(24, dtype=torch.float32) / 7).to(torch.bfloat16).reshape(4, 6)[:, ::2]
    read = _api._read_x(t)
    assert read.dtype == ml_dtypes.bfloat16
    assert np.shares_memory(read.view(np.int16), t.view(torch.int16).numpy())
    bits = t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    for mode in ("nearest", "linear"):
        result = upsample(t, [2, 1.5], mode)
        assert result.dtype == ml_dtypes.bfloat16
        assert result.tobytes() == upsample(bits, [2, 1.5], mode).tobytes()
        # torch's own float32 arithmetic rounded to bfloat16 agrees (another reading)
        expected = upsample(t.float().numpy(), [2, 1.5], mode)
        assert np.array_equal(result.astype(np.float32), expected.astype(ml_dtypes.bfloat16)
                              .astype(np.float32))


def test_torch_conjugate_views_are_resolved(torch) -> None:
    t = torch.tensor([[1 + 2j, 3 - 1j]], dtype=torch.complex64).conj()
    assert upsample(t, [1, 2]).tolist() == [[1 - 2j, 1 - 2j, 3 + 1j, 3 + 1j]]


def test_torch_tensors_the_cpu_cannot_read_are_one_line(torch) -> None:
    cases = [
        (torch.ones(2, 2, requires_grad=True), "x is a torch.Tensor that requires grad; "
         "upsample is not differentiable and returns a numpy array: pass x.detach()"),
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
    assert np.array_equal(upsample(cases[0][0].detach(), [2, 2]), np.ones((4, 4)))


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
