"""Reuse of large output buffers (stdlib and numpy only).

A fresh multi-megabyte array costs the kernel a page fault and zeroing per 4 KiB page on first
write, which is as much time as a nearest upsample itself (measured: 67 MB, 2.5 ms of kernel
and about 4.5 ms of page faults). onnxruntime avoids it by handing out views of a reused
arena. Here, once every array that uses a large result's memory has been released, the
memory returns to a small pool and the next result of a similar size is built in it. A
result stays an ordinary, writable, C-contiguous array that owns no other data; nothing is
reused while any view of it is alive. At most ``MAX_POOLED`` buffers are kept;
``ONNX_UPSAMPLE_REUSE_OUTPUTS=0`` turns reuse off.

The pool takes no lock. Buffers come back from a destructor, which the garbage collector
may run in the middle of any statement, ``_take`` included, and a process may fork while
another thread is anywhere in this module. So every step is one atomic operation on a
``collections.deque`` (append, pop): a destructor can never wait for anything, a forked
child never inherits a held lock, and a race between threads costs at most one missed reuse.
"""

from __future__ import annotations

import collections
import math
import os

import numpy as np

MIN_POOLED_BYTES = 1 << 20  # below this, malloc's own free lists already reuse memory
MAX_POOLED = 2
ENV_VAR = "ONNX_UPSAMPLE_REUSE_OUTPUTS"

# most recently released last; maxlen drops the oldest atomically as a new one arrives
_free: collections.deque[np.ndarray] = collections.deque(maxlen=MAX_POOLED)


class _Lease:
    """Owner of one result's memory: the result's base, so it lives exactly as long as the
    result and its views do; when it is collected the memory goes back to the pool."""

    __slots__ = ("__array_interface__", "raw")

    def __init__(self, raw: np.ndarray, n_bytes: int) -> None:
        self.raw = raw
        self.__array_interface__ = {
            "shape": (n_bytes,), "typestr": "|u1", "data": (raw.ctypes.data, False),
            "version": 3,
        }

    def __del__(self, _pool: collections.deque[np.ndarray] = _free) -> None:
        # one atomic append: safe from any thread, any garbage collection, any fork (the
        # pool is bound here so that it is still reachable during interpreter shutdown)
        _pool.append(self.raw)


def _take(n_bytes: int) -> np.ndarray:
    """A pooled buffer of at least ``n_bytes`` (at most twice as large), or a new one.

    Empties the pool one atomic pop at a time, keeps the best fit and returns the rest; a
    thread that finds the pool momentarily empty allocates, which is only a missed reuse.
    """
    held: list[np.ndarray] = []
    while True:
        try:
            held.append(_free.pop())
        except IndexError:
            break
    fitting = [raw for raw in held if n_bytes <= raw.nbytes <= 2 * n_bytes]
    best = min(fitting, key=lambda raw: raw.nbytes) if fitting else None
    for raw in held:  # newest first, each put in front: the order is kept
        if raw is not best:
            _free.appendleft(raw)
    return best if best is not None else np.empty(n_bytes, np.uint8)


def new_output(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, built in a reused buffer when it is large."""
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes < MIN_POOLED_BYTES or dtype.hasobject or os.environ.get(ENV_VAR) == "0":
        return np.empty(shape, dtype)
    lease = _Lease(_take(n_bytes), n_bytes)
    return np.asarray(lease).view(dtype).reshape(shape)
