"""Child process of tests/test_fuzz.py: runs one call of ``upsample`` and reports how it ended.
A crash of this process (a segfault, an abort) is what the fuzzer exists to catch, so nothing
here may take the parent down with it.

Protocol: one case per line on stdin, one outcome per line on stdout, each a base64-encoded
pickle. A case holds the arguments as objects, except what a pickle cannot carry (a memory
layout, a read-only flag, an ``out=`` that must fit or overlap x): those are named and built
here. An outcome holds the error, or the result pickled together with x; for an object
array also which of x's objects each element of the result is.
"""

from __future__ import annotations

import base64
import pickle
import sys
import warnings
from typing import Any

import numpy as np

import onnx_upsample
from onnx_upsample import UpsampleError, UpsampleWarning, upsample


# Memory layouts of an array's values (tests/test_layouts.py uses them too): each returns
# the same values in a layout that is not C-contiguous, native, aligned and writable.
def strided(x: np.ndarray) -> np.ndarray:
    padded = np.zeros(tuple(2 * n + 1 for n in x.shape), dtype=x.dtype)
    view = padded[tuple(slice(1, None, 2) for _ in x.shape)]
    view[...] = x
    return view


def negative_strides(x: np.ndarray) -> np.ndarray:
    return np.flip(np.flip(x).copy())


def read_only(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y.flags.writeable = False
    return y


def byte_swapped(x: np.ndarray) -> np.ndarray:
    return x.astype(x.dtype.newbyteorder("S"))


def unaligned(x: np.ndarray) -> np.ndarray:
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    view = raw[1:].view(x.dtype).reshape(x.shape)  # one byte into the buffer
    view[...] = x
    return view


def with_layout(x: Any, layout: str) -> Any:
    """x's values in another memory layout or container (the caller picks one that fits)."""
    if not isinstance(x, np.ndarray) or layout == "array":
        return x
    if x.ndim == 0 and layout in ("fortran", "negative-strides", "strided"):
        return x  # a scalar has no strides
    if layout == "fortran":
        return np.asfortranarray(x)
    if layout == "negative-strides":
        return negative_strides(x)
    if layout == "strided":
        return strided(x)
    if layout == "byte-swapped":
        return byte_swapped(x)
    if layout == "unaligned":
        return unaligned(x) if x.dtype.kind != "O" else x
    if layout == "read-only":
        return read_only(x)
    if layout == "list":
        return x.tolist()
    if layout == "scalar":
        return x.item() if x.size == 1 else 2.5
    if layout == "matrix":
        if x.ndim > 2:
            return x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            return np.asmatrix(x)
    if layout == "masked":
        return np.ma.array(x)
    raise ValueError(f"unknown layout {layout!r}")


def make_out(spec: Any, x: Any, scales: Any) -> Any:
    """out= as named (sized from the call's output shape where it should fit), or the object
    the case holds."""
    if not isinstance(spec, str):
        return spec
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shape = onnx_upsample.output_shape(np.shape(x), scales)
        dtype = np.asarray(x).dtype.newbyteorder("=")
    except Exception:
        shape, dtype = (2, 2), np.dtype(np.float32)
    if spec == "overlap" and isinstance(x, np.ndarray):
        return x  # the input itself
    if int(np.prod(shape, dtype=object)) > 10_000_000:  # too large to allocate: any array
        return np.zeros((1,), dtype)
    if spec == "wrong-shape":
        return np.zeros((*shape, 1), dtype)
    if spec == "wrong-dtype":
        return np.zeros(shape, np.int8 if dtype != np.int8 else np.int16)
    out = np.empty(shape, dtype)
    if dtype.kind != "O":  # garbage that must be overwritten everywhere
        out.reshape(-1).view(np.uint8)[:] = 0x41 if dtype.kind == "U" else 0xA5
    if spec == "fits":
        return out
    if spec == "read-only":
        out.flags.writeable = False
        return out
    if spec == "byte-swapped":
        return out.astype(dtype.newbyteorder("S"))
    if spec == "overlap":  # x is no array: an out that fits
        return out
    return with_layout(out, spec)  # fortran, strided, unaligned, matrix, masked


def _raw(a: Any) -> bytes | None:
    """out's bytes (pointers for object arrays: identity), or None for a non-array."""
    if not isinstance(a, np.ndarray):
        return None
    return np.array(a.view(np.ndarray), copy=True, order="K").tobytes(order="A")


def sources(result: np.ndarray, x: Any) -> list[int]:
    """For each element of an object array's result, the flat index of the first element of
    x that is that very object (-1 for none): object identity, which a pickle does not carry
    for numbers."""
    first: dict[int, int] = {}
    for i, item in enumerate(np.asarray(x).reshape(-1)):
        first.setdefault(id(item), i)
    return [first.get(id(item), -1) for item in result.reshape(-1)]


def run(case: dict[str, Any]) -> dict[str, Any]:
    try:
        x = with_layout(case["x"], case["layout"])
        scales, mode = case["scales"], case["mode"]
        out = make_out(case["out"], x, scales)
    except Exception as error:  # the case cannot be built: a fault of the fuzzer, not the library
        return {"outcome": "setup", "message": f"{type(error).__name__}: {error}"}
    before = _raw(out)
    if case.get("prepared"):  # the call once without out=: the next one takes its kernel
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                upsample(x, scales, mode)
            except Exception:
                pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        try:
            result = upsample(x, scales, mode, out=out)
        except (TypeError, UpsampleError) as error:
            return {"outcome": type(error).__name__, "message": str(error),
                    "out_unchanged": before is None or _raw(out) == before}
        except BaseException as error:  # anything else is a finding
            return {"outcome": "other", "message": f"{type(error).__name__}: {error!r}"}
    plain = result.view(np.ndarray) if isinstance(result, np.ndarray) else result
    fresh = isinstance(plain, np.ndarray) and (
        plain.flags.c_contiguous and plain.flags.writeable and plain.dtype.isnative
        and (not isinstance(x, np.ndarray) or not np.shares_memory(plain, x)))
    return {
        "outcome": "result",
        "x_and_result": pickle.dumps((x.view(np.ndarray) if isinstance(x, np.ndarray) else x,
                                      plain)),
        "returned_out": out is None or result is out,
        "fresh": bool(fresh),
        "warnings": [str(w.message) for w in caught if issubclass(w.category, UpsampleWarning)],
        "sources": sources(plain, x) if plain.dtype.kind == "O" else None,
    }


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        outcome = run(pickle.loads(base64.b64decode(line)))
        sys.stdout.write(base64.b64encode(pickle.dumps(outcome)).decode() + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
