"""Outputs recorded on one machine, to check another's bits against (no tests in this module).

onnx-upsample gives the same bits on every platform: onnxruntime's x86-64 build's wherever
it has a kernel. On a platform whose onnxruntime computes otherwise (its aarch64 build fuses
linear multiply-adds), the only oracle for those bits is a record made on x86-64:
``python tests/recorded_bits.py FILE`` writes, for a fixed set of random cases (every
element type, ranks 1-5, both modes, integer and fractional scales, special float values),
the input, onnx-upsample's output and, where onnxruntime has a kernel, onnxruntime's; and
``tests/test_recorded_bits.py`` compares a machine's outputs with such a file
(``make test-aarch64`` records on x86-64 and compares under qemu).

The one allowed difference is the NaN an operation creates (0 * inf, inf - inf), whose sign
is the processor's (x86: negative, ARM: positive; see platform_nan.py): a created NaN on one
side may be the other sign's created NaN on the other.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

CASES = 600
SEED = 20261206
# element types by numpy name; bfloat16 from ml_dtypes
DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "uint16",
          "int32", "uint32", "int64", "uint64", "bool", "complex64", "complex128"]
SCALES = [1.0, 2.0, 3.0, 1.5, 1.3, 2.7, 4.0, 1.25]


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
        return rng.integers(low, high, shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        parts = rng.standard_normal((2, *shape)) * 100
        return (parts[0] + 1j * parts[1]).astype(dtype)
    x = (rng.standard_normal(shape) * 100).astype(np.float32).astype(dtype)
    if x.size and rng.random() < 0.3:  # special values: NaN selection, created NaNs, -0
        flat = x.reshape(-1)
        for value in (np.inf, -np.inf, np.nan, -0.0):
            flat[rng.integers(0, flat.size)] = value
    return x


def cases() -> list[dict[str, Any]]:
    """The recorded cases' descriptions: element type, mode, shape, scales."""
    rng = np.random.default_rng(SEED)
    found = []
    for i in range(CASES):
        name = DTYPES[i % len(DTYPES)]
        # linear is not defined for bool
        mode = "linear" if (i // len(DTYPES)) % 2 and name != "bool" else "nearest"
        rank = int(rng.integers(1, 6))
        shape = tuple(int(n) for n in rng.integers(1, 9, rank))
        scales = [float(rng.choice(SCALES)) for _ in range(rank)]
        if rng.random() < 0.5:  # ORT's own kernels' shapes: batch and channels at scale 1
            scales[: max(0, rank - 2)] = [1.0] * max(0, rank - 2)
        found.append({"dtype": name, "mode": mode, "shape": shape, "scales": scales})
    return found


def record(path: Path) -> None:
    """Write the cases' inputs and outputs (onnx-upsample's, onnxruntime's where it has a
    kernel with this machine's linear bits) to `path` (.npz)."""
    from ort_oracle import ort_accepts, ort_upsample

    from onnx_upsample import upsample

    rng = np.random.default_rng(SEED + 1)
    arrays: dict[str, np.ndarray] = {}
    described = []
    for i, case in enumerate(cases()):
        dtype = _dtype(case["dtype"])
        x = _values(rng, case["shape"], dtype)
        arrays[f"x{i}"] = _raw(x)
        arrays[f"ours{i}"] = _raw(upsample(x, case["scales"], case["mode"]))
        ort = ort_accepts(dtype, case["scales"], case["mode"])
        if ort:
            arrays[f"ort{i}"] = _raw(ort_upsample(x, case["scales"], case["mode"]))
        described.append({**case, "ort": bool(ort)})
    arrays["cases"] = np.frombuffer(json.dumps(described).encode(), np.uint8)
    np.savez_compressed(path, **arrays)


def _raw(a: np.ndarray) -> np.ndarray:
    """The array as its bytes' unsigned words (bfloat16 and every other type alike)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "b":
        return a.view(np.uint8)
    word = a.dtype.itemsize // 2 if a.dtype.kind == "c" else a.dtype.itemsize
    return a.view(f"u{word}")


def load(path: Path) -> tuple[list[dict[str, Any]], Any]:
    """The recorded cases and their arrays (an NpzFile)."""
    data = np.load(path)
    return json.loads(bytes(data["cases"]).decode()), data


# Each float type's word of the NaN an operation creates, less its sign (x86's is negative,
# ARM's positive); complex types by their parts' words
CREATED_NAN = {"float16": (16, 0x7E00), "bfloat16": (16, 0x7FC0), "float32": (32, 0x7FC00000),
               "complex64": (32, 0x7FC00000), "float64": (64, 0x7FF8000000000000),
               "complex128": (64, 0x7FF8000000000000)}


def differences(got: np.ndarray, recorded: np.ndarray, dtype_name: str) -> int:
    """Elements (words) whose bits differ, but for a created NaN of either sign on both
    sides."""
    got, recorded = got.reshape(-1), recorded.reshape(-1)
    if got.shape != recorded.shape:
        return max(got.size, recorded.size)
    differ = np.flatnonzero(got != recorded)
    if dtype_name not in CREATED_NAN:
        return int(differ.size)
    bits, quiet = CREATED_NAN[dtype_name]
    magnitude = (1 << (bits - 1)) - 1
    return sum(not (int(got[i]) & magnitude == quiet and int(recorded[i]) & magnitude == quiet)
               for i in differ)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if len(sys.argv) != 2:
        raise SystemExit("usage: python tests/recorded_bits.py OUT.npz")
    record(Path(sys.argv[1]))
    print(f"recorded_bits: {CASES} cases written to {sys.argv[1]}")
