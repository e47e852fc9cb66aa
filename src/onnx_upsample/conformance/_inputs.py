"""The deterministic input data of the conformance cases: the same bytes on every machine
and numpy version, so that a case's files, and the suite's hash, never change."""

from __future__ import annotations

import zlib

import numpy as np

from ._cases import Case

__all__ = ["make_input"]


def _mix(count: int, seed: int) -> np.ndarray:
    """``count`` well-mixed 64-bit words from ``seed`` (splitmix64). Written out rather than
    drawn from numpy's generators so the data, and so the suite's hash, never depend on
    the numpy version."""
    with np.errstate(over="ignore"):
        z = (np.arange(count, dtype=np.uint64) + np.uint64(seed)) * np.uint64(
            0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


def _unit(words: np.ndarray) -> np.ndarray:
    """Words to float64 in [0, 1)."""
    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _special_floats(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, info.smallest_subnormal,
                     -info.smallest_subnormal, info.max, -info.max, info.tiny, 1.0, -2.5],
                    dtype=dtype)


def _integer_extremes(dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    values = [info.min, info.max, info.max - 1, info.min + 1, 0, info.max // 2]
    if info.min < 0:
        values += [-1, 1]
    return np.array(values, dtype=dtype)


def make_input(case: Case) -> np.ndarray:
    """The input of ``case``: deterministic, the same on every machine and numpy version."""
    count = int(np.prod(case.shape, dtype=np.int64))
    words = _mix(count, _seed(case.id))
    unit = _unit(words)
    if case.dtype == "string":
        return np.array([f"s{int(w % 1000)}" for w in words], dtype=object).reshape(case.shape)
    dtype = np.dtype(case.dtype)
    if case.data == "ramp":
        values = np.arange(1, count + 1) % 251
        return values.astype(dtype).reshape(case.shape)
    if dtype.kind == "b":
        return (words & np.uint64(1)).astype(bool).reshape(case.shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if case.data == "extremes":
            pool = _integer_extremes(dtype)
            # extremes next to each other, so linear blends min with max
            return pool[(words % np.uint64(len(pool))).astype(np.int64)].reshape(case.shape)
        span = float(info.max) - float(info.min)
        values = np.floor(float(info.min) + unit * span)
        values = np.clip(values, info.min, info.max)
        if dtype.itemsize == 8:  # float64 cannot hold every int64: build from the words
            return words.view(np.int64 if dtype.kind == "i" else np.uint64).astype(
                dtype).reshape(case.shape)
        return values.astype(dtype).reshape(case.shape)
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        real = (unit * 200 - 100).astype(part)
        imag = (_unit(_mix(count, _seed(case.id) + 1)) * 200 - 100).astype(part)
        if case.data == "special":
            pool = _special_floats(part)
            real[::3] = pool[np.arange(len(real[::3])) % len(pool)]
            imag[1::4] = pool[np.arange(len(imag[1::4])) % len(pool)]
        values = np.empty(count, dtype)
        values.real, values.imag = real, imag
        return values.reshape(case.shape)
    values = (unit * 200 - 100).astype(dtype)
    if case.data == "special":
        pool = _special_floats(dtype)
        values[::2] = pool[np.arange(len(values[::2])) % len(pool)]
    return values.reshape(case.shape)
