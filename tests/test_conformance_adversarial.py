"""A runtime under test that tries to fool the grader, by accident or not: its answers may
build only arrays in the grader (a pickle naming anything else, such as a ``str`` subclass
of the runtime's module, is refused, never imported), a length that lies allocates nothing,
an ``os._exit(0)`` after answering and a death while a forked child holds the pipes are
crashes, memory held by the processes it starts counts, and files it writes into the suite
change no grade; the grader's own edges (a rank-0 output that is not exact, a tolerance of
2**64 ULPs, a report to a pipe, an empty --failures-dir made beforehand, a waiver file with
a byte-order mark, 4Gi).

Each worker start costs about a second: each test keeps one worker through its requests.
"""

from __future__ import annotations

import os
import pickle
import resource
import shutil
import stat
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hand_suite import build_suite
from worker_requests import LINUX, MiB, ask, assert_answered, limit_above_start

from onnx_upsample import conformance
from onnx_upsample.cli import main
from onnx_upsample.conformance import _grade, _memory, _process, _protocol, _waivers
from onnx_upsample.conformance._grade import CRASHED, OUT_OF_MEMORY
from onnx_upsample.conformance._process import Worker

needs_proc = pytest.mark.skipif(not LINUX, reason="finds its pipes and children in /proc")

BACKEND = '''
import ctypes, os, pickle, struct, subprocess, sys, threading, time
import numpy as np

if os.path.exists(os.environ["ADVERSARY_HANGS"]):  # a start that never ends
    time.sleep(60)

class Text(str):
    """A string whose pickle names this module: the grader must not import it."""

class Call:
    def __reduce__(self):
        return (os.system, ("touch " + os.environ["ADVERSARY_MARK"],))

def _protocol_fd():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
            flags = open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1].split()[0]
        except (OSError, IndexError):
            continue
        if fd > 2 and pipe and int(flags, 8) & os.O_WRONLY:
            return fd
    raise RuntimeError("no protocol")

def backend(model_bytes, inputs):
    what, *amounts = str(inputs["what"][()]).split(":")
    if what == "text":
        return [np.array([Text("a"), "b"], dtype=object)]
    if what == "forge":
        data = pickle.dumps(("ok", [Call()], None, None))
        os.write(_protocol_fd(), struct.pack("<Q", len(data)) + data)
        time.sleep(5)
    elif what == "long":
        os.write(_protocol_fd(), struct.pack("<Q", 1 << 40))
        time.sleep(5)
    elif what == "exit0-later":
        threading.Timer(0.1, lambda: os._exit(0)).start()
    elif what == "fork-crash":
        if os.fork() == 0:  # keeps every pipe open
            time.sleep(30)
            os._exit(0)
        ctypes.string_at(0)
    elif what == "child-holds":
        if os.fork() == 0:
            block = np.ones(int(amounts[0]) << 20, np.uint8)
            time.sleep(30)
            os._exit(0)
        time.sleep(float(amounts[1]))
    elif what == "child-peaks":
        subprocess.run([sys.executable, "-c", "import numpy, time; b = numpy.ones("
                        + amounts[0] + " << 20, numpy.uint8); time.sleep(0.2)"], check=True)
    return [inputs["x"] * 2]
'''


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("adversary")
    (folder / "adversary.py").write_text(BACKEND)
    (folder / "model.onnx").write_bytes(b"not read")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(folder))
        patch.setenv("ADVERSARY_MARK", str(folder / "the grader ran it"))
        patch.setenv("ADVERSARY_HANGS", str(folder / "hang at start"))
        yield str(folder / "model.onnx")


# ---------------------------------------------------------------- what an answer may build

def _through_a_pipe(message: bytes, limit: int | None = None, timeout: float = 5.0) -> object:
    reader, writer = os.pipe()
    thread = threading.Thread(target=lambda: os.write(writer, message))
    thread.start()
    try:
        return (_protocol.read(reader, timeout) if limit is None
                else _protocol.read(reader, timeout, limit=limit))
    finally:
        thread.join()
        os.close(reader)
        os.close(writer)


def _message(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _protocol.HEADER.pack(len(data)) + data


def test_an_answer_builds_arrays_and_plain_values_only() -> None:
    import ml_dtypes

    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((3, 2), ">f4").T,
              np.float32(2.5), np.array(7, np.int64), np.array(["a", b"b"], dtype=object),
              np.ones(3, ml_dtypes.bfloat16), np.zeros((2, 2), np.complex64)[:, :1]]
    message = ("ok", arrays, 12, None)
    back = _through_a_pipe(_message(message))
    assert isinstance(back, tuple) and back[0] == "ok" and back[2:] == (12, None)
    for sent, got in zip(arrays, back[1], strict=True):
        assert np.asarray(got).dtype == np.asarray(sent).dtype
        np.testing.assert_array_equal(got, sent)
    # a string subclass, an object whose pickle calls a function: refused by name
    for value, name in (([_Text("x")], "test_conformance_adversarial._Text"),
                        ([_Call()], "posix.system")):
        with pytest.raises(pickle.UnpicklingError, match=f"not {name}$"):
            _through_a_pipe(_message(("ok", value, None, None)))
    assert not _Call.called


class _Text(str):
    pass


class _Call:
    called = False

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("true",))


def test_a_length_that_lies_allocates_nothing() -> None:
    # over the limit: refused before the body is read
    with pytest.raises(_protocol.MessageTooLargeError) as caught:
        _through_a_pipe(_message(("ok", [np.zeros(100)], None, None)), limit=100)
    assert caught.value.limit == 100 and caught.value.size > 800
    # no limit: 2 GiB said, 10 bytes sent; memory is taken as bytes come, not up front
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert _through_a_pipe(_protocol.HEADER.pack(2 << 30) + b"x" * 10, timeout=0.2) is None
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grew * (1 if sys.platform == "darwin" else 1024) < 64 * MiB


# ---------------------------------------------------------------- a worker that misbehaves

@needs_proc
def test_what_a_runtime_writes_to_the_pipes_is_never_run_or_trusted(model: str) -> None:
    worker = Worker("adversary:backend", memory_limit=256 * MiB + (1 << 30))
    try:
        # a str subclass comes back a str; its module is not imported here
        answer = ask(worker, model, "text")
        assert answer.status == "ok", answer.payload
        assert [type(v) for v in answer.payload[0]] == [str, str]
        assert "adversary" not in sys.modules
        # a message forged onto the protocol's pipe, whose pickle calls os.system
        answer = ask(worker, model, "forge")
        assert answer.status == CRASHED
        assert answer.payload == ("its answer could not be read (UnpicklingError: a message "
                                  "may hold only arrays and plain values, not posix.system)")
        assert not Path(os.environ["ADVERSARY_MARK"]).exists()
        # a length far over the worker's memory limit
        answer = ask(worker, model, "long")
        assert answer.status == CRASHED
        assert answer.payload.startswith("its answer could not be read (it says it is 1.0 "
                                         "TiB long, more than the worker's memory limit of")
    finally:
        worker.close()


@needs_proc
def test_deaths_that_looked_like_something_else(
        model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = Worker("adversary:backend", memory_limit=None)
    try:
        # dead while a forked child holds its pipes: crashed at once, not timed out
        began = time.monotonic()
        answer = ask(worker, model, "fork-crash", timeout=20)
        assert answer.status == CRASHED, answer.payload
        assert answer.payload.startswith("killed by signal SIGSEGV")
        assert time.monotonic() - began < 5
        # os._exit(0) from a thread after the last answer, before the worker said goodbye
        assert_answered(ask(worker, model, "exit0-later"))
        assert worker.finish() == "exited with status 0 after answering; it printed nothing"
        # a restart that hangs is waited for once, not for every later case
        monkeypatch.setattr(_process, "START_TIMEOUT", 1.0)
        Path(os.environ["ADVERSARY_HANGS"]).touch()
        try:
            first = ask(worker, model, "plain")
            began = time.monotonic()
            second = ask(worker, model, "plain")
        finally:
            Path(os.environ["ADVERSARY_HANGS"]).unlink()
        assert time.monotonic() - began < 0.5
        assert first == second and first.status == CRASHED
        assert str(first.payload).startswith("the worker did not restart: backend "
                                             "'adversary:backend': its worker did not start")
    finally:
        worker.close()


@needs_proc
def test_memory_held_by_the_processes_a_worker_starts_counts(
        model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = Worker("adversary:backend")
    try:
        limit = limit_above_start(worker, 150 * MiB)
        # a forked child that holds 300 MiB while the worker waits: stopped during the case
        began = time.monotonic()
        answer = ask(worker, model, "child-holds:300:10")
        assert answer.status == OUT_OF_MEMORY, answer.payload
        assert time.monotonic() - began < 8
        assert answer.payload.startswith("resident memory of the worker and the process it "
                                         "started reached ")
        assert f"over the worker's limit of {_format(limit)}" in answer.payload
        # a child that peaked at 300 MiB and ended before it was counted: its peak counts
        monkeypatch.setattr(_process, "FAMILY_EVERY", 60.0)
        answer = ask(worker, model, "child-peaks:300")
        assert answer.status == OUT_OF_MEMORY, answer.payload
        assert answer.payload.startswith("resident memory of a process it started peaked at ")
        assert answer.peak_bytes is not None and answer.peak_bytes > 300 * MiB
    finally:
        worker.close()


def _format(size: int) -> str:
    from onnx_upsample._resources import format_bytes

    return format_bytes(size)


# ---------------------------------------------------------------- files written into the suite

TAMPER = '''
import os
from pathlib import Path
import numpy as np
from onnx import numpy_helper
from conformance_backends import exact

def _case(name):
    return Path(os.environ["TAMPERED_SUITE"]) / "upsample" / f"test_upsample_{name}"

def backend(model_bytes, inputs):
    outputs = exact(model_bytes, inputs)
    if b"test_upsample_plain" in model_bytes:
        # its own expected output made what it answers, a zero; then it changes directory
        wrong = np.zeros_like(outputs[0])
        (_case("plain") / "test_data_set_0" / "output_0.pb").write_bytes(
            numpy_helper.from_array(wrong, "Y").SerializeToString())
        (Path(os.environ["TAMPERED_SUITE"]) / "upsample" / "test_upsample_linear"
         / "model.onnx.cache").write_bytes(b"a later case's folder")
        os.chdir("/")
        return [wrong]
    # beside its own model: a runtime's cache, an optimised model
    Path(os.environ["TAMPERED_SUITE"], "written by a runtime").write_bytes(b"")
    return outputs
'''


def test_files_a_runtime_writes_change_no_grade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = build_suite(tmp_path / "suite")
    (tmp_path / "tamper.py").write_text(TAMPER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path),
                                                      str(Path(__file__).parent)]))
    monkeypatch.setenv("TAMPERED_SUITE", str(suite))
    monkeypatch.chdir(tmp_path)  # the suite by a relative path, as a CI script gives it
    result = conformance.run("tamper:backend", "suite", cases=["plain", "frac", "linear"])
    grades = {r.id: (r.grade.kind, r.grade.detail) for r in result.results}
    # graded against the expected output read before the runtime ran
    assert grades["plain"][0] == "wrong"
    # after the runtime changed directory, the next case still runs
    assert grades["frac"] == ("exact", "")
    # a later case whose folder changed is not run, and fails
    assert grades["linear"] == ("adapter-error", (
        "not run: its files in the suite changed since export (hash mismatch); something "
        "wrote into the suite during the run (a runtime under test?): export it again"))


# ---------------------------------------------------------------- the grader's own edges

def test_outputs_of_rank_0_and_tolerances_beyond_any_gap() -> None:
    one = np.array(1.0, np.float32)
    assert _grade.compare(one, np.array(2.0, np.float32)).kind == "wrong"
    assert _grade.compare(one, np.nextafter(one, np.float32(2))).kind == "1-ulp"
    assert _grade.compare(np.array(1 + 1j, np.complex64),
                          np.array(1 + 2j, np.complex64)).kind == "wrong"
    # NaN only against NaN, an infinity only against itself, at any count of ULPs
    expected = np.array([1.0, 2.0], np.float32)
    for ulps in ("18446744073709551615ulp", "18446744073709551616ulp"):
        tolerance = _grade.parse_tolerance(ulps)
        for wrong in (np.nan, np.inf):
            actual = np.array([1.0, wrong], np.float32)
            assert _grade.compare(expected, actual, tolerance).kind == "wrong", (ulps, wrong)
        assert _grade.compare(expected, expected + 1, tolerance).kind == "close"


def test_reports_to_a_pipe_an_empty_failures_dir_a_marked_waiver_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = build_suite(tmp_path / "suite")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    fifo, failures = tmp_path / "report.xml", tmp_path / "failures"
    os.mkfifo(fifo)
    failures.mkdir()  # as CI makes its artifact folders beforehand
    waivers = tmp_path / "waivers.txt"
    waivers.write_bytes("\ufeffplain  written by Notepad\r\n".encode())
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["conformance", "run", "--suite", str(suite), "--backend", "ci_backends:told",
                 "--cases", "[pf][lr]a[ic]*", "--junit", str(fifo), "--failures-dir", str(failures),
                 "--expected-failures", str(waivers), "-q"]) == 1
    reader.join(10)
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # written into, not replaced by a file
    cases = ElementTree.fromstring(received[0]).iter("testcase")
    assert {case.get("name"): [child.tag for child in case] for case in cases} == {
        "plain": ["skipped"], "frac": ["failure", "system-out"]}
    assert sorted(p.name for p in failures.iterdir()) == ["ci_backends_told", "index.json"]
    assert _waivers.read_waivers(waivers, ["plain"])[0].pattern == "plain"
    assert _memory.parse_memory_limit("4Gi") == 4 << 30
    shutil.rmtree(suite)
