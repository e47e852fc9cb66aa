"""onnxruntime 1.32 as a test oracle for ONNX ``Upsample`` (no tests in this module).

Builds the smallest model that holds one ``Upsample`` node and runs it in onnxruntime's CPU
execution provider. Three forms of the node are available:

``"v9"``
    opset 9, ``scales`` stored as a float32 initializer (what exporters write);
``"v9-input"``
    opset 9, ``scales`` fed as a graph input on every run (validated at run time);
``"v7"``
    opset 7, ``scales`` as a FLOATS attribute.

The input ``X`` is declared with the element type and rank only (symbolic dimensions), so one
session serves every shape of that rank; sessions are cached by
``(element type, rank, scales, mode, form)`` and the cache key uses the float32 bits of the
scales, so ``1.1`` and ``np.float32(1.1)`` share a session.

Typical use::

    from ort_oracle import ort_upsample, ort_runs

    y = ort_upsample(x, [1, 1, 2, 1.5], "linear", form="v7")

Which inputs ORT accepts is described by :func:`ort_accepts` (docs/peers.md §3-§4): element types
float32, float16 (ORT inserts casts to float32), int8, uint8 and int32; nearest for every
rank >= 1 (rank 0 in the v7 form only); linear for rank 2, rank 3, rank 4 with ``s0 == s1 == 1``
or ``s0 == s3 == 1``, and rank 5 with ``s0 == s1 == 1``.
"""

from __future__ import annotations

import functools
import platform
import sys
from collections.abc import Sequence
from typing import Literal

import numpy as np
import onnx
import pytest
from differential import assert_identical_but_nan_payloads
from onnx import TensorProto, helper
from slowdown import SLOWDOWN

from onnx_upsample import reference, upsample


def no_ort_wheel_here() -> str | None:
    """Why onnxruntime 1.32 cannot be installed on this platform (it publishes wheels for
    glibc Linux x86-64 and aarch64, macOS arm64 and Windows only), or None where it can."""
    if sys.platform == "darwin" and platform.machine() == "x86_64":
        return "onnxruntime 1.32 publishes no macOS x86-64 wheel"
    if sys.platform == "linux" and platform.libc_ver()[0] != "glibc":
        return "onnxruntime 1.32 publishes no musl (musllinux) wheel"
    return None


#: Whether this machine's onnxruntime computes linear Upsample as onnx-upsample does on every
#: platform: each multiply and each add rounded on its own, in the kernel's order (its x86-64
#: build). Its aarch64 build contracts them into fused multiply-adds, so its linear bits
#: differ (nearest ones do not): there the linear comparisons with ORT are replaced by the
#: slow reference and by the outputs the x86-64 build recorded (tests/test_recorded_bits.py).
ORT_LINEAR_AS_X86 = platform.machine().lower() in ("x86_64", "amd64")
#: The outputs (times SLOWDOWN) the slow reference computes in well under a minute.
REFERENCE_ELEMENTS = 1_000_000
LINEAR_NOT_X86 = (
    f"onnxruntime's {platform.machine()} build fuses linear Upsample's multiply-adds: its "
    "bits are not its x86-64 build's, which onnx-upsample gives on every platform (here "
    "checked against the reference and the outputs recorded on x86-64)"
)

try:
    import onnxruntime as ort
except ImportError:
    # only where ORT cannot be had: anywhere else a missing onnxruntime is a broken test
    # environment, and the import error says so
    if no_ort_wheel_here() is None:
        raise
    pytest.skip(f"{no_ort_wheel_here()}: the comparisons with it cannot run here",
                allow_module_level=True)

__all__ = [
    "FORMS",
    "LINEAR_NOT_X86",
    "ORT_DTYPES",
    "ORT_LINEAR_AS_X86",
    "Form",
    "assert_same_bits",
    "bits_of",
    "make_upsample_model",
    "onnx_elem_type",
    "ort_accepts",
    "ort_runs",
    "ort_session",
    "ort_upsample",
    "skip_where_linear_bits_differ",
]

Form = Literal["v9", "v9-input", "v7"]
FORMS: tuple[Form, ...] = ("v9", "v9-input", "v7")

# numpy dtype -> ONNX element type, for every type an ONNX tensor can hold.
_NUMPY_TO_ONNX: dict[str, int] = {
    "bool": TensorProto.BOOL,
    "int8": TensorProto.INT8,
    "int16": TensorProto.INT16,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64,
    "float16": TensorProto.FLOAT16,
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "complex64": TensorProto.COMPLEX64,
    "complex128": TensorProto.COMPLEX128,
    "bfloat16": TensorProto.BFLOAT16,
}

#: The element types ORT 1.32 has an Upsample kernel for (float16 through inserted casts).
ORT_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(name) for name in ("float32", "float16", "int8", "uint8", "int32")
)

# Number of ORT runs made through this module (the test files report it).
_runs = 0


def ort_runs() -> int:
    """How many times :func:`ort_upsample` has run a model in this process."""
    return _runs


def onnx_elem_type(dtype: np.dtype | type) -> int:
    """The ``TensorProto`` element type of a numpy dtype (any byte order).

    Covers the 15 numeric types (bfloat16 from ``ml_dtypes``) and maps numpy ``str``,
    ``bytes`` and object arrays to ``TensorProto.STRING``. Raises ``KeyError`` otherwise.
    """
    dtype = np.dtype(dtype)
    if dtype.kind in "USO":
        return TensorProto.STRING
    return _NUMPY_TO_ONNX[dtype.name]


def _f32_tuple(scales: Sequence[float] | np.ndarray) -> tuple[np.float32, ...]:
    return tuple(np.float32(s) for s in np.asarray(scales, dtype=np.float32).reshape(-1))


def ort_accepts(dtype: np.dtype | type, scales: Sequence[float], mode: str,
                form: Form = "v9") -> bool:
    """Whether ORT 1.32 has a kernel for this element type, rank, scales and mode.

    Follows docs/peers.md §2-§4; every scale is assumed finite and >= 1. Note that for int8/uint8
    4-D linear with ``s0 == s3 == 1`` and ``s1 != 1`` ORT runs, but through its fixed-point
    path, which the library deliberately does not follow (docs/semantics.md §2).
    """
    if np.dtype(dtype) not in ORT_DTYPES:
        return False
    s = [float(v) for v in _f32_tuple(scales)]
    rank = len(s)
    if rank == 0:
        return mode == "nearest" and form == "v7"
    if mode == "nearest":
        return True  # any rank >= 1 (peers checked 1-6; 7 and 8 run too)
    return mode == "linear" and ORT_LINEAR_AS_X86 and _has_linear_kernel(s)


def _has_linear_kernel(s: Sequence[float]) -> bool:
    """Whether ORT 1.32 has a linear kernel for scales ``s`` (its x86-64 build and others)."""
    rank = len(s)
    if rank in (2, 3):
        return True
    if rank == 4:
        return s[0] == 1 and (s[1] == 1 or s[3] == 1)
    if rank == 5:
        return s[0] == 1 and s[1] == 1
    return False


def make_upsample_model(dtype: np.dtype | type, rank: int, scales: Sequence[float],
                        mode: str = "nearest", form: Form = "v9") -> onnx.ModelProto:
    """A one-node model ``Y = Upsample(X, scales)`` with ``X`` of any shape of ``rank``.

    ``form`` is ``"v9"`` (scales initializer), ``"v9-input"`` (scales graph input named
    ``scales``) or ``"v7"`` (scales attribute). The scales are stored as float32.
    """
    elem = onnx_elem_type(dtype)
    values = np.asarray(_f32_tuple(scales), dtype=np.float32)
    # rank 0 is declared shapeless: onnx's inference reads an empty scales attribute as
    # missing and refuses the model, while the kernel itself runs it (a scalar copy)
    dims = [f"d{axis}" for axis in range(rank)] if rank else None
    out_dims = [f"o{axis}" for axis in range(rank)] if rank else None
    x_info = helper.make_tensor_value_info("X", elem, dims)
    y_info = helper.make_tensor_value_info("Y", elem, out_dims)
    inputs = [x_info]
    initializers = []
    if form == "v7":
        node = helper.make_node("Upsample", ["X"], ["Y"], mode=mode)
        # explicit type: an empty list (rank-0 X) has no element to infer FLOATS from
        node.attribute.append(helper.make_attribute(
            "scales", values.tolist(), attr_type=onnx.AttributeProto.FLOATS))
        opset = 7
    elif form in ("v9", "v9-input"):
        node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode)
        opset = 9
        if form == "v9":
            initializers.append(helper.make_tensor("scales", TensorProto.FLOAT,
                                                   [len(values)], values))
        else:
            inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT,
                                                        [len(values)]))
    else:
        raise ValueError(f"form is {form!r}; expected one of {FORMS}")
    graph = helper.make_graph([node], "upsample", inputs, [y_info], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # every ORT 1.x loads IR 8
    return model


@functools.lru_cache(maxsize=4096)
def _cached_session(dtype_name: str, rank: int, scale_bits: tuple[int, ...], mode: str,
                    form: Form) -> ort.InferenceSession:
    scales = np.array(scale_bits, dtype=np.uint32).view(np.float32).tolist()
    model = make_upsample_model(np.dtype(dtype_name), rank, scales, mode, form)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def ort_session(dtype: np.dtype | type, rank: int, scales: Sequence[float],
                mode: str = "nearest", form: Form = "v9") -> ort.InferenceSession:
    """The cached CPU session for (element type, rank, float32 scales, mode, form)."""
    bits = tuple(int(b) for b in np.asarray(_f32_tuple(scales), np.float32).view(np.uint32))
    return _cached_session(np.dtype(dtype).name, rank, bits, mode, form)


def skip_where_linear_bits_differ(mode: str) -> None:
    """Skip the calling test for linear mode where this machine's ORT build fuses
    multiply-adds (``ORT_LINEAR_AS_X86``), naming why: its bits are not the semantics tested.
    Call it before a premise that ORT computes the case (``ort_accepts`` is False there)."""
    if mode == "linear" and not ORT_LINEAR_AS_X86:
        pytest.skip(LINEAR_NOT_X86)


def ort_upsample(x: np.ndarray, scales: Sequence[float], mode: str = "nearest",
                 form: Form = "v9") -> np.ndarray:
    """Run ORT 1.32's Upsample on ``x`` (converted to a C-contiguous native-order array).

    Raises whatever onnxruntime raises for inputs it refuses (see :func:`ort_accepts`).
    Skips the calling test for linear mode where ORT's build fuses multiply-adds
    (``ORT_LINEAR_AS_X86``), naming why: its bits are not the semantics tested.
    """
    global _runs
    skip_where_linear_bits_differ(mode)
    x = np.asarray(x)
    # not np.ascontiguousarray: it turns a 0-d array into shape (1,)
    x = np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)
    session = ort_session(x.dtype, x.ndim, scales, mode, form)
    feeds = {"X": x}
    if form == "v9-input":
        feeds["scales"] = np.asarray(_f32_tuple(scales), dtype=np.float32)
    _runs += 1
    return session.run(None, feeds)[0]


def bits_of(a: np.ndarray) -> np.ndarray:
    """The raw bits of a numeric array as unsigned integers of the same width, C order.

    Complex values become two unsigned words per element (shape ``(*a.shape, 2)``).
    Comparing these compares NaN payloads and the sign of zero too, which
    ``numpy.array_equal`` does not.
    """
    a = np.asarray(a)
    native = np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)
    if native.dtype.kind == "c":
        part = native.real.dtype
        return native.reshape(-1).view(f"u{part.itemsize}").reshape(*native.shape, 2)
    return native.view(f"u{native.dtype.itemsize}")


def assert_same_bits(got: np.ndarray, expected: np.ndarray, context: str = "") -> None:
    """Assert ``got`` equals ``expected`` bit for bit: dtype, shape, and every element's bits.

    The message names the first differing index, both values and their bits, how many
    elements differ, and ``context`` (put the input, scales, mode and form there).
    """
    where = f" [{context}]" if context else ""
    assert isinstance(got, np.ndarray), f"result is a {type(got).__name__}{where}"
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != expected {expected.dtype}{where}"
    assert got.shape == expected.shape, f"shape {got.shape} != expected {expected.shape}{where}"
    got_bits, expected_bits = bits_of(got), bits_of(expected)
    differ = got_bits != expected_bits
    if differ.ndim > got.ndim:
        differ = differ.any(axis=-1)
    if differ.any():
        first = tuple(int(i) for i in np.argwhere(differ)[0])
        raise AssertionError(
            f"{int(differ.sum())} of {got.size} elements differ{where}; first at {first}: "
            f"got {got[first]!r} (bits {got_bits[first]!r}), expected {expected[first]!r} "
            f"(bits {expected_bits[first]!r})"
        )


def assert_linear_exact(x: np.ndarray, scales: Sequence[float]) -> None:
    """Assert onnx-upsample's linear result on ``x`` is ORT's bit for bit where ORT has a
    kernel for it, and the slow reference's elsewhere (NaN payloads aside, where two NaNs
    meet: see differential.py)."""
    context = f"{x.dtype}{x.shape}, scales {list(scales)}"
    got = upsample(x, list(scales), "linear")
    if ort_accepts(x.dtype, scales, "linear"):
        assert_same_bits(got, ort_upsample(x, scales, "linear"), context)
        return
    if (np.dtype(x.dtype) in ORT_DTYPES and _has_linear_kernel(_f32_tuple(scales))
            and got.size * SLOWDOWN > REFERENCE_ELEMENTS):
        # ORT's x86-64 build checks these bits; where its build fuses, the reference stands in,
        # unless it would take minutes (under an emulator)
        pytest.skip(f"{LINEAR_NOT_X86}; {context} gives {got.size} outputs, too many for "
                    "the reference here")
    assert_identical_but_nan_payloads(got, reference.upsample(x, list(scales), "linear"),
                                      context)
