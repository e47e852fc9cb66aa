"""The messages between the grader and its worker processes (stdlib only).

Each message is an 8-byte little-endian length and a pickle. Only the grader and the
workers it starts exchange them, over the worker's own pipes.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import time
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")

#: What :func:`read` returns when the other end closed the pipe (the worker died).
CLOSED = object()


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


def _fill(fd: int, buffer: memoryview, deadline: float) -> bool | None:
    """Read exactly len(buffer) bytes before ``deadline``: True, None on time-out, False
    when the pipe closed."""
    done = 0
    while done < len(buffer):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        count = os.readv(fd, [buffer[done:]])
        if count == 0:
            return False
        done += count
    return True


def read(fd: int, timeout: float) -> Any:
    """The next message from a worker's pipe (the grader's side): the message, None when
    ``timeout`` seconds pass first, or :data:`CLOSED`. The body goes into one buffer of
    its final size, so a large output costs one copy."""
    deadline = time.monotonic() + timeout
    header = bytearray(HEADER.size)
    status = _fill(fd, memoryview(header), deadline)
    if status is not True:
        return CLOSED if status is False else None
    (size,) = HEADER.unpack(header)
    body = bytearray(size)
    status = _fill(fd, memoryview(body), deadline)
    if status is not True:
        return CLOSED if status is False else None
    return pickle.loads(body)
