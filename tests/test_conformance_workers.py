"""Workers that cannot fool the grader (``conformance._process``): a runtime that closes or
reads its standard input breaks nothing and raises nothing; a worker that dies after
answering is reported on the next request (``Answer.died_after_previous``) or by
``Worker.finish()``; a worker over its memory limit, by leaking across cases, holding too
much or in a spike between two readings, is graded out-of-memory; each answer carries its
case's peak memory.

The backend is a module written here, asked what to do by an input (``what``); each worker
start costs about half a second, so each test uses one worker through several requests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import numpy as np
import pytest
from worker_requests import LINUX, MiB, ask, assert_answered, limit_above_start

from onnx_upsample import UpsampleError
from onnx_upsample._resources import format_bytes
from onnx_upsample.conformance import _process, _protocol
from onnx_upsample.conformance._grade import OUT_OF_MEMORY
from onnx_upsample.conformance._process import (
    DEFAULT_MEMORY_LIMIT,
    Worker,
    check_memory_limit,
    parse_memory_limit,
)

BACKEND = '''
import ctypes, os, threading, time
import numpy as np

HELD = []

def backend(model_bytes, inputs):
    what, *amounts = str(inputs["what"][()]).split(":")
    if what == "close-stdin":
        os.close(0)
    elif what == "read-stdin":
        assert os.read(0, 100) == b"", "stdin is not empty"
    elif what == "crash-later":
        threading.Timer(float(amounts[0]), lambda: ctypes.string_at(0)).start()
    elif what == "leak":
        HELD.append(np.ones(int(amounts[0]) << 20, np.uint8))
        time.sleep(float(amounts[1]) if amounts[1:] else 0)
    elif what == "spike":
        block = np.ones(int(amounts[0]) << 20, np.uint8)
        del block
    return [inputs["x"] * 2]
'''


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The backend importable by the workers, and a model file for requests (the backend
    does not read it)."""
    folder = tmp_path_factory.mktemp("worker_backend")
    (folder / "worker_backend.py").write_text(BACKEND)
    (folder / "model.onnx").write_bytes(b"not read")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(folder))
        yield str(folder / "model.onnx")


def _assert_ok(answer: _process.Answer) -> None:
    assert_answered(answer)
    assert len(answer.payload) == 1
    assert answer.peak_bytes is None or answer.peak_bytes > 0


# ---------------------------------------------------------------- the protocol's pipes

def test_a_runtime_closing_or_reading_its_stdin_breaks_nothing(model: str) -> None:
    worker = Worker("worker_backend:backend", memory_limit=None)
    try:
        # reading its stdin, it finds nothing (no request taken from the grader)
        _assert_ok(ask(worker, model, "read-stdin"))
        _assert_ok(ask(worker, model, "close-stdin"))
        # the next requests reach it still
        _assert_ok(ask(worker, model, "plain"))
        # no limit: a spike is answered, its size in the peak where the system tells it
        answer = ask(worker, model, "spike:300")
        _assert_ok(answer)
        if LINUX:
            assert answer.peak_bytes is not None and answer.peak_bytes > 300 * MiB
        # a clean exit when its requests end is no death
        assert worker.finish() is None
        assert worker.process is None
    finally:
        worker.close()


def test_stop_never_raises_for_a_request_left_in_a_pipe_with_no_reader() -> None:
    worker = Worker("worker_backend:backend")
    try:
        worker.process = subprocess.Popen([sys.executable, "-S", "-c", ""],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          start_new_session=True)
        worker.process.wait()
        assert worker.process.stdin is not None
        worker.process.stdin.write(b"unsent")  # buffered: closing flushes it to no reader
        worker.stop()
        assert worker.process is None
        worker.stop()
    finally:
        worker.close()


# ---------------------------------------------------------------- deaths after answering

def _dies(worker: Worker) -> None:
    """Wait until the worker's process has died, as the grader does not."""
    assert worker.process is not None
    os.waitid(os.P_PID, worker.process.pid, os.WEXITED | os.WNOWAIT)


def test_a_death_after_answering_is_reported(model: str) -> None:
    worker = Worker("worker_backend:backend")
    try:
        # found dead before the next request: that request goes to a new worker
        _assert_ok(ask(worker, model, "crash-later:0.1"))
        _dies(worker)
        answer = ask(worker, model, "plain")
        _assert_ok(answer)
        assert answer.died_after_previous is not None
        assert answer.died_after_previous.startswith("killed by signal SIGSEGV after "
                                                     "answering; ")

        # alive when looked at, dead before it takes the request: the same
        _assert_ok(ask(worker, model, "crash-later:0.1"))
        _dies(worker)
        assert worker.process is not None
        worker.process.poll = lambda: None  # type: ignore[method-assign]
        answer = ask(worker, model, "plain")
        _assert_ok(answer)
        assert answer.died_after_previous is not None
        assert "SIGSEGV after answering" in answer.died_after_previous
        assert ask(worker, model, "plain").died_after_previous is None

        # a death shortly after the last answer
        _assert_ok(ask(worker, model, "crash-later:0.1"))
        started = time.monotonic()
        died = worker.finish()
        assert died is not None and died.startswith("killed by signal SIGSEGV after "
                                                    "answering; ")
        assert time.monotonic() - started < _process.FINISH_WAIT
        assert worker.finish() is None
    finally:
        worker.close()


# ---------------------------------------------------------------- memory

@pytest.mark.skipif(not LINUX, reason="the limit is enforced during a case only with /proc")
def test_memory_over_the_limit_is_graded_out_of_memory(
        model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = Worker("worker_backend:backend")
    try:
        limit = limit_above_start(worker, 150 * MiB)
        started_with = limit - 150 * MiB

        # a spike between two readings is caught by the peak after the answer
        monkeypatch.setattr(_process, "WATCH_EVERY", 60.0)
        answer = ask(worker, model, "spike:300")
        assert answer.status == OUT_OF_MEMORY, answer.payload
        assert answer.peak_bytes is not None and answer.peak_bytes > 300 * MiB
        assert answer.payload.startswith(
            f"resident memory peaked at {format_bytes(answer.peak_bytes)}, "
            f"{format_bytes(answer.peak_bytes - limit)} over")
        assert f" over the worker's limit of {format_bytes(limit)}" in answer.payload
        assert "kept from earlier" not in answer.payload
        # the worker goes on; its peak is this case's alone
        answer = ask(worker, model, "plain")
        _assert_ok(answer)
        assert answer.peak_bytes is not None and answer.peak_bytes < limit
        monkeypatch.undo()

        # a leak across cases: stopped while the case that goes over runs, not when it
        # ends; the message says the memory was kept from earlier cases
        for count in range(1, 4):
            answer = ask(worker, model, "leak:40")
            _assert_ok(answer)
            assert answer.peak_bytes is not None
            assert answer.peak_bytes > started_with + count * 40 * MiB
        began = time.monotonic()
        answer = ask(worker, model, "leak:40:5")
        assert answer.status == OUT_OF_MEMORY, answer.payload
        assert time.monotonic() - began < 2.5
        assert answer.payload.startswith("resident memory reached ")
        assert len(answer.payload) <= 220
        assert f" over the worker's limit of {format_bytes(limit)}" in answer.payload
        assert "kept from earlier cases" in answer.payload
        assert "--memory-limit" in answer.payload and "memory_limit=" in answer.payload
        assert worker.process is None
    finally:
        worker.close()


def test_the_default_memory_limit() -> None:
    worker = Worker("worker_backend:backend")
    worker.close()
    assert worker.memory_limit == DEFAULT_MEMORY_LIMIT
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 0 < DEFAULT_MEMORY_LIMIT <= min(4 << 30, physical // 2)
    unlimited = Worker("x", memory_limit=None)
    unlimited.close()
    assert unlimited.memory_limit is None


@pytest.mark.parametrize(("text", "size"), [
    ("4G", 4 << 30), ("512M", 512 << 20), ("512m", 512 << 20), ("1.5GiB", 3 << 29),
    ("2000000000", 2_000_000_000), ("262144KiB", 256 << 20), ("2 TB", 2 << 40),
    ("1gb", 1 << 30), ("268435456B", 1 << 28), ("none", None), ("None", None),
    (" NONE ", None)])
def test_memory_limits_as_typed(text: str, size: int | None) -> None:
    assert parse_memory_limit(text) == size


@pytest.mark.parametrize("text", ["0", "0G", "-1", "-4G", "4X", "", "G", "1.5.2G", "0.1",
                                  "4 G B", "inf", "nan", "1e9"])
def test_memory_limits_refused_name_the_value(text: str) -> None:
    with pytest.raises(UpsampleError) as caught:
        parse_memory_limit(text)
    option = caught.value.option  # type: ignore[attr-defined]
    assert option.startswith(f"--memory-limit is {text!r}" if not text or " " in text
                             else f"--memory-limit is {text};")
    assert "4G" in option and "none" in option


def test_memory_limits_below_what_a_worker_holds_are_refused() -> None:
    # a worker holds about 100 MiB before its runtime loads: 255 MiB would fail every case
    for text in ("255M", "10", "1K"):
        with pytest.raises(UpsampleError, match=f"memory_limit is {text}, below 256 MiB"):
            parse_memory_limit(text)
    with pytest.raises(UpsampleError, match="below 256 MiB"):
        check_memory_limit(100 << 20)


def test_memory_limit_arguments() -> None:
    assert check_memory_limit(None) is None
    assert check_memory_limit(256 << 20) == 256 << 20
    assert check_memory_limit(np.int64(3 << 30)) == 3 << 30
    assert check_memory_limit("2G") == 2 << 30  # as --memory-limit takes it
    for wrong in (True, 4.0, b"4G", [1]):
        with pytest.raises(TypeError, match=r"memory_limit is .*whole number of bytes"):
            check_memory_limit(wrong)
    for value in (0, -5):
        with pytest.raises(UpsampleError, match=rf"^memory_limit is {value}; .*> 0") as caught:
            check_memory_limit(value)
        assert caught.value.option.startswith(  # type: ignore[attr-defined]
            f"--memory-limit is {value}; give a size such as 4G")
    with pytest.raises(UpsampleError, match="memory_limit is 0"):
        Worker("x", memory_limit=0)


# ---------------------------------------------------------------- the protocol's read

def test_read_watches_while_it_waits_and_keeps_its_timeout() -> None:
    reader, writer = os.pipe()
    try:
        calls: list[float] = []

        def watch() -> bool:
            calls.append(time.monotonic())
            return False

        began = time.monotonic()
        assert _protocol.read(reader, 0.2, watch, every=0.02) is None
        waited = time.monotonic() - began
        assert 0.2 <= waited < 0.5 and 5 <= len(calls) <= 11
        assert _protocol.read(reader, 5.0, lambda: True, every=0.02) is _protocol.STOPPED
        with os.fdopen(os.dup(writer), "wb") as stream:
            _protocol.send(stream, ("ok", [1], None))
        assert _protocol.read(reader, 1.0, watch, every=0.02) == ("ok", [1], None)
        os.close(writer)
        writer = -1
        assert _protocol.read(reader, 1.0, watch, every=0.02) is _protocol.CLOSED
    finally:
        os.close(reader)
        if writer >= 0:
            os.close(writer)
