"""What the tests of the grader's worker processes share: a request that a test backend
answers as its ``what`` input says (the model file is not read), the answer's check, and a
worker whose memory limit is a margin above what it holds once started."""

from __future__ import annotations

import os
import sys

import numpy as np

from onnx_upsample.conformance import _memory
from onnx_upsample.conformance._process import Answer, Worker

MiB = 1 << 20
#: Where the grader reads a worker's memory while a case runs.
LINUX = sys.platform.startswith("linux") and os.path.exists("/proc/self/statm")
X = np.arange(6, dtype=np.float32)


def ask(worker: Worker, model: str, what: str, timeout: float = 20.0) -> Answer:
    """The worker's answer to a request whose ``what`` input tells the backend what to do."""
    return worker.call(("model", model, {"x": X, "what": np.array(what)}), timeout)


def assert_answered(answer: Answer) -> None:
    """The backend's plain answer: ``x * 2``."""
    assert answer.status == "ok", answer.payload
    np.testing.assert_array_equal(answer.payload[0], X * 2)


def limit_above_start(worker: Worker, margin: int) -> int:
    """Start ``worker`` and set its memory limit ``margin`` bytes above what it holds then;
    the limit."""
    worker.start()
    assert worker.process is not None
    started_with = _memory.resident(worker.process.pid)
    assert started_with is not None
    worker.memory_limit = started_with + margin
    return worker.memory_limit
