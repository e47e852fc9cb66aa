"""Child process of tests/test_fuzz.py: builds one call from a plain description, runs it,
and reports how it ended. A crash of this process (a segfault, an abort) is what the fuzz
test exists to catch, so nothing here may take the parent down with it.

Protocol: one JSON case per line on stdin, one JSON outcome per line on stdout.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import numpy as np

import onnx_upsample
from onnx_upsample import UpsampleError, UpsampleWarning, reference, upsample

REFERENCE_LIMIT = 400  # output elements the slow oracle checks per case


def make_array(spec: dict[str, Any], seed: int) -> Any:
    """x as described: a dtype, a shape and a kind of container or memory layout."""
    kind, dtype, shape = spec["kind"], spec["dtype"], tuple(spec["shape"])
    rng = np.random.default_rng(seed)
    if kind == "scalar":
        return 2.5
    if kind == "list":
        return (rng.integers(-5, 6, size=shape)).tolist()
    if dtype == "bfloat16":
        import ml_dtypes

        base = (rng.standard_normal(shape) * 4).astype(np.float32).astype(ml_dtypes.bfloat16)
    elif dtype in ("str", "bytes", "object"):
        words = np.array(["a", "bc", "", "déf"])[rng.integers(0, 4, size=shape)]
        if dtype == "bytes":
            base = np.char.encode(words, "utf-8").astype("S8")
        else:
            base = words.astype({"str": "U3", "object": object}[dtype])
    elif dtype == "datetime64":
        base = np.zeros(shape, "datetime64[s]")
    elif dtype == "structured":
        base = np.zeros(shape, [("a", "i4"), ("b", "f4")])
    else:
        values = np.asarray(rng.standard_normal(shape) * 60)
        specials = spec.get("specials", False) and np.dtype(dtype).kind in "fc"
        if specials and values.size:
            flat = values.reshape(-1)
            flat[rng.integers(0, flat.size, size=min(3, flat.size))] = [np.nan, np.inf, -0.0][
                : min(3, flat.size)
            ]
        base = values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0
    base = np.asarray(base)
    if kind == "fortran":
        return np.asfortranarray(base)
    if kind == "reversed":
        return base[tuple(slice(None, None, -1) for _ in shape)]
    if kind == "strided":
        wide = np.repeat(base, 2, axis=-1) if base.ndim else base
        return wide[..., ::2] if base.ndim else wide
    if kind == "big-endian" and base.dtype.kind in "iufc" and base.dtype.itemsize > 1:
        return base.astype(base.dtype.newbyteorder(">"))
    if kind == "read-only":
        base.flags.writeable = False
        return base
    if kind == "matrix" and base.ndim == 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            return np.asmatrix(base)
    if kind == "masked":
        return np.ma.array(base)
    return base


def make_scales(spec: dict[str, Any]) -> Any:
    kind, values = spec["kind"], spec["values"]
    values = [float(v) if isinstance(v, str) else v for v in values]  # "nan", "inf" in JSON
    if kind == "tuple":
        return tuple(values)
    if kind == "array":
        dtype = spec.get("dtype", "float64")
        if np.dtype(dtype).kind == "i" and not all(np.isfinite(values)):
            dtype = "float64"  # an integer array cannot hold nan or inf
        with np.errstate(over="ignore"):
            return np.array(values, dtype=np.float64).astype(dtype)
    if kind == "2d-array":
        return np.array(values, dtype="float32").reshape(1, -1)
    if kind == "numpy-scalars":
        return [np.float32(v) for v in values]
    if kind == "none":
        return None
    if kind == "string":
        return "2"
    if kind == "bools":
        return [True] * len(values)
    if kind == "number":
        return values[0] if values else 2.0
    return values


def make_out(spec: dict[str, Any] | None, x: Any, scales: Any, mode: Any) -> Any:
    """out= as described, sized from the call's own result where it should fit."""
    if spec is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shape = onnx_upsample.output_shape(np.shape(x), scales)
        dtype = np.asarray(x).dtype.newbyteorder("=")
    except Exception:
        shape, dtype = (2, 2), np.dtype(np.float32)
    kind = spec["kind"]
    if kind == "list":
        return [0] * 4
    if int(np.prod(shape, dtype=object)) > 10_000_000:  # too large to allocate: any array
        return np.zeros((1,), dtype)
    if kind == "wrong-shape":
        return np.zeros((*shape, 1), dtype)
    if kind == "wrong-dtype":
        return np.zeros(shape, np.int8 if dtype != np.int8 else np.int16)
    out = np.zeros(shape, dtype)
    if kind == "read-only":
        out.flags.writeable = False
    elif kind == "fortran" and out.ndim >= 2:
        out = np.asfortranarray(out)
    elif kind == "matrix" and out.ndim == 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            out = np.asmatrix(out)
    elif kind == "masked":
        out = np.ma.zeros(shape, dtype)
    elif kind == "overlap" and isinstance(x, np.ndarray) and x.dtype == dtype and x.size:
        return x  # the input itself
    return out


def run(case: dict[str, Any]) -> dict[str, Any]:
    try:
        x = make_array(case["x"], case["seed"])
        scales = make_scales(case["scales"])
        mode = case["mode"]
        out = make_out(case.get("out"), x, scales, mode)
    except Exception as error:  # the case cannot be built: a fault of this file, not the library
        return {"outcome": "setup", "message": f"{type(error).__name__}: {error}"}
    before = np.array(out, copy=True) if isinstance(out, np.ndarray) else None
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpsampleWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        try:
            result = upsample(x, scales, mode, out=out)
        except (TypeError, UpsampleError, UpsampleWarning) as error:
            unchanged = before is None or (
                np.asarray(out).tobytes() == np.asarray(before).tobytes()
            )
            return {"outcome": type(error).__name__, "message": str(error),
                    "out_unchanged": bool(unchanged)}
        except BaseException as error:  # anything else is a finding
            return {"outcome": "other", "message": f"{type(error).__name__}: {error}"}
    checked = False
    same = True
    if np.asarray(result).size <= REFERENCE_LIMIT:
        try:
            expected = reference.upsample(np.asarray(x), scales, mode)
        except (TypeError, UpsampleError) as error:
            return {"outcome": "other",
                    "message": f"fast path ran but the reference refused: {error}"}
        got = np.asarray(result)
        if got.dtype.hasobject:
            same = got.shape == expected.shape and got.tolist() == expected.tolist()
        else:
            same = got.shape == expected.shape and got.tobytes() == expected.tobytes()
        checked = True
    returned_out = out is None or result is out
    return {"outcome": "result", "checked": checked, "same": bool(same),
            "returned_out": bool(returned_out), "shape": list(np.shape(result))}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        outcome = run(json.loads(line))
        sys.stdout.write(json.dumps(outcome) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
