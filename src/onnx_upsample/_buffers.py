"""Reuse of large output buffers (stdlib and numpy only).

A fresh multi-megabyte array costs the kernel a page fault and zeroing per 4 KiB page on first
write, which is as much time as a nearest upsample itself (measured: 67 MB, 2.5 ms of kernel
and about 4.5 ms of page faults). onnxruntime avoids it by handing out views of a reused
arena. Here, once every array that uses a large result's memory has been released, the
memory returns to a small pool and the next result of a similar size is built in it. A
result stays an ordinary, writable, C-contiguous array that owns no other data; nothing is
reused while any view of it is alive. At most ``MAX_POOLED`` buffers are kept;
``ONNX_UPSAMPLE_REUSE_OUTPUTS=0`` turns reuse off.
"""

from __future__ import annotations

import math
import os
import threading
import weakref

import numpy as np

MIN_POOLED_BYTES = 1 << 20  # below this, malloc's own free lists already reuse memory
MAX_POOLED = 2
ENV_VAR = "ONNX_UPSAMPLE_REUSE_OUTPUTS"

_lock = threading.Lock()
_free: list[np.ndarray] = []


class _Lease:
    """Owner of one result's memory: the result's base, so it lives exactly as long as the
    result and its views do; when it is collected the memory goes back to the pool."""

    __slots__ = ("__array_interface__", "__weakref__", "raw")

    def __init__(self, raw: np.ndarray, n_bytes: int) -> None:
        self.raw = raw
        self.__array_interface__ = {
            "shape": (n_bytes,), "typestr": "|u1", "data": (raw.ctypes.data, False),
            "version": 3,
        }


def _give_back(raw: np.ndarray) -> None:
    """Keep the most recently released buffers: they fit the sizes in use now."""
    with _lock:
        _free.append(raw)
        if len(_free) > MAX_POOLED:
            del _free[0]


def _take(n_bytes: int) -> np.ndarray:
    """A pooled buffer of at least ``n_bytes`` (at most twice as large), or a new one."""
    with _lock:
        fitting = [i for i, raw in enumerate(_free) if n_bytes <= raw.nbytes <= 2 * n_bytes]
        if fitting:
            best = min(fitting, key=lambda i: _free[i].nbytes)
            return _free.pop(best)
    return np.empty(n_bytes, np.uint8)


def new_output(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, built in a reused buffer when it is large."""
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes < MIN_POOLED_BYTES or dtype.hasobject or os.environ.get(ENV_VAR) == "0":
        return np.empty(shape, dtype)
    raw = _take(n_bytes)
    lease = _Lease(raw, n_bytes)
    weakref.finalize(lease, _give_back, raw)
    return np.asarray(lease).view(dtype).reshape(shape)
