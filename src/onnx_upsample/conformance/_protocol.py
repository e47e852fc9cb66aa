"""The messages between the grader and its worker processes (stdlib only).

Each message is an 8-byte little-endian length and a pickle. Only the grader and the
workers it starts exchange them, over the worker's own pipes. The grader's :func:`read` can
watch the worker while it waits (its memory, say) and give up on it.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import time
from collections.abc import Callable
from typing import Any, BinaryIO

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


def read(fd: int, timeout: float, watch: Callable[[], bool] | None = None,
         every: float = 0.025) -> Any:
    """The next message from a worker's pipe (the grader's side): the message, None when
    ``timeout`` seconds pass first, :data:`CLOSED`, or :data:`STOPPED` when ``watch``
    (called every ``every`` seconds while the message is awaited) returns True. The body
    goes into one buffer of its final size, so a large output costs one copy."""
    deadline = time.monotonic() + timeout
    watching = _Watch(watch, every)
    header = bytearray(HEADER.size)
    status = _fill(fd, memoryview(header), deadline, watching)
    if status is not True:
        return CLOSED if status is False else status
    (size,) = HEADER.unpack(header)
    body = bytearray(size)
    status = _fill(fd, memoryview(body), deadline, watching)
    if status is not True:
        return CLOSED if status is False else status
    return pickle.loads(body)
