"""The messages between the grader and its worker processes (stdlib, and numpy where it
checks the outputs an answer holds).

Each message is an 8-byte little-endian length and a pickle. Only the grader and the
workers it starts exchange them, over the worker's own pipes. The grader's :func:`read` can
watch the worker while it waits (its memory, say) and give up on it.

The grader reads what a runtime could have written (the runtime runs in the worker, and can
reach its pipes), so its :func:`read` trusts no message: a pickle may build only numpy
arrays, their element types and Python's plain values (unpickling anything else could run
the runtime's code in the grader: a ``str`` subclass's module, imported there, could change
how the grader grades), and a message longer than ``limit`` is refused before its body is
read (a length is just 8 bytes: a wrong one must not make the grader allocate gigabytes).
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import struct
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

HEADER = struct.Struct("<Q")

#: What :func:`read` returns when the other end closed the pipe (the worker died).
CLOSED = object()
#: What :func:`read` returns when its ``watch`` said to stop waiting.
STOPPED = object()


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, cut between words (never inside
    one) and marked with an ellipsis where it was cut."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    cut = words.rfind(" ", 0, limit - 1)
    return words[:cut if cut > 0 else limit - 1] + "…"


#: The globals a message may name: what numpy's arrays, scalars and element types pickle
#: as (numpy 1.x's module names and 2.x's), and the element types of ml_dtypes (bfloat16,
#: float8...), which are checked to be numpy scalar types when found.
_NUMPY_GLOBALS = frozenset({
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
})
_SCALAR_TYPE_MODULES = ("ml_dtypes", "numpy.dtypes")


class _Unpickler(pickle.Unpickler):
    """An unpickler that builds arrays and plain values only."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _NUMPY_GLOBALS:
            return super().find_class(module, name)
        if module in _SCALAR_TYPE_MODULES and not name.startswith("_"):
            found = super().find_class(module, name)
            # a numpy scalar type (ml_dtypes.bfloat16) or element type (numpy.dtypes's
            # classes): constructing one runs no code of the runtime's
            if isinstance(found, type) and any(
                    base.__module__ == "numpy" and base.__name__ in ("generic", "dtype")
                    for base in found.__mro__):
                return found
        raise pickle.UnpicklingError(f"a message may hold only arrays and plain values, "
                                     f"not {module}.{name}")


class _View:
    """A file over a buffer (a bytearray or a map), for the unpickler: an array's bytes are
    copied once, from the buffer into the array."""

    def __init__(self, buffer: bytearray | mmap.mmap) -> None:
        self.buffer, self.view, self.at = buffer, memoryview(buffer), 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.view) if size < 0 else min(self.at + size, len(self.view))
        data, self.at = self.view[self.at:end].tobytes(), end
        return data

    def readinto(self, target: Any) -> int:
        into = memoryview(target).cast("B")
        count = min(len(into), len(self.view) - self.at)
        into[:count] = self.view[self.at:self.at + count]
        self.at += count
        return count

    def readline(self) -> bytes:
        end = self.buffer.find(b"\n", self.at)
        return self.read(-1 if end < 0 else end + 1 - self.at)


def loads(data: bytearray | mmap.mmap) -> Any:
    """A message's body as the grader reads it: arrays and plain values only
    (:class:`pickle.UnpicklingError` for anything else)."""
    view = _View(data)
    try:
        return _Unpickler(view).load()
    finally:
        view.view.release()  # the buffer is closed next, even after an error


class MessageTooLargeError(ValueError):
    """A message longer than the reader's limit (the length is refused, not allocated)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a message of {size} bytes, more than the limit of {limit}")
        self.size, self.limit = size, limit


def not_plain(payload: Any) -> str | None:
    """What is wrong with outputs that are not a list of plain arrays of numbers or of
    ``str``/``bytes`` (the worker sends nothing else), or None."""
    if type(payload) is not list:
        return f"its outputs are a {type(payload).__name__}, not a list"
    for index, value in enumerate(payload):
        if type(value) is not np.ndarray:
            return f"output {index} is a {type(value).__name__}, not an array"
        if value.dtype.kind == "O" and not all(type(v) in (str, bytes)
                                               for v in value.reshape(-1)):
            return f"output {index} holds objects that are not strings"
    return None


def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    """The next message, blocking (the worker's side)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Watch:
    """Calls ``watch`` every ``every`` seconds while a read waits, whether or not bytes come
    in meanwhile (a large answer written slowly is still watched)."""

    def __init__(self, watch: Callable[[], bool] | None, every: float) -> None:
        self.watch, self.every = watch, every
        self.next = time.monotonic() + every

    def wait(self, left: float) -> float:
        """How long the next select may block."""
        return left if self.watch is None else max(0.0, min(left, self.next - time.monotonic()))

    def stop(self) -> bool:
        """Whether ``watch``, if due, says to stop."""
        if self.watch is None or time.monotonic() < self.next:
            return False
        self.next = time.monotonic() + self.every
        return self.watch()


def _fill(fd: int, buffer: memoryview, deadline: float, watch: _Watch) -> object:
    """Read exactly len(buffer) bytes before ``deadline``: True, None on time-out, False
    when the pipe closed, :data:`STOPPED` when ``watch`` says so."""
    done = 0
    while done < len(buffer):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if watch.stop():
            return STOPPED
        if not select.select([fd], [], [], watch.wait(left))[0]:
            continue
        count = os.readv(fd, [buffer[done:]])
        if count == 0:
            return False
        done += count
    return True


#: Messages at least this long are read into memory the system allots as the bytes come
#: (an anonymous map), not zeroed up front.
_MAPPED = 1 << 20


def read(fd: int, timeout: float, watch: Callable[[], bool] | None = None,
         every: float = 0.025, limit: int | None = None) -> Any:
    """The next message from a worker's pipe (the grader's side): the message, None when
    ``timeout`` seconds pass first, :data:`CLOSED`, or :data:`STOPPED` when ``watch``
    (called every ``every`` seconds while the message is awaited) returns True. The body
    goes into one buffer of its final size, so a large output costs one copy; memory is
    taken only as its bytes arrive.

    Raises
    ------
    MessageTooLargeError
        If the message says it is longer than ``limit`` bytes (None: no limit).
    pickle.UnpicklingError
        If the message holds anything but arrays and plain values (see :func:`loads`).
    """
    deadline = time.monotonic() + timeout
    watching = _Watch(watch, every)
    header = bytearray(HEADER.size)
    status = _fill(fd, memoryview(header), deadline, watching)
    if status is not True:
        return CLOSED if status is False else status
    (size,) = HEADER.unpack(header)
    if limit is not None and size > limit:
        raise MessageTooLargeError(size, limit)
    body: Any = mmap.mmap(-1, size) if size >= _MAPPED else bytearray(size)
    try:
        status = _fill(fd, memoryview(body), deadline, watching)
        if status is not True:
            return CLOSED if status is False else status
        return loads(body)
    finally:
        if isinstance(body, mmap.mmap):
            body.close()
