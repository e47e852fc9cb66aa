"""Reuse of large output buffers: never while any view of an earlier result is alive."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

from onnx_upsample import upsample
from onnx_upsample._buffers import MIN_POOLED_BYTES

X = np.arange(256 * 256, dtype=np.float32).reshape(1, 1, 256, 256)  # output 1 MiB
SCALES = [1, 1, 2, 2]
assert 4 * X.nbytes >= MIN_POOLED_BYTES


def test_results_are_ordinary_arrays() -> None:
    y = upsample(X, SCALES)
    assert y.flags.c_contiguous and y.flags.writeable and y.flags.aligned
    assert not np.shares_memory(y, X)
    y[...] = 7  # writable everywhere
    assert (y == 7).all()


def test_memory_is_reused_only_after_every_view_is_gone() -> None:
    first = upsample(X, SCALES)
    address = first.ctypes.data
    expected = first.copy()
    view = first[0, 0, 5:9]
    del first
    gc.collect()
    second = upsample(X * 2, SCALES)
    assert second.ctypes.data != address  # `view` still uses the first result's memory
    assert np.array_equal(view, expected[0, 0, 5:9])  # and its values are intact
    released = {address, second.ctypes.data}
    del view, second
    gc.collect()
    third = upsample(X, SCALES)
    assert third.ctypes.data in released  # a released buffer came back
    assert np.array_equal(third, expected)


def test_reuse_can_be_turned_off() -> None:
    code = (
        "import numpy as np, onnx_upsample as u\n"
        "x = np.ones((1, 1, 256, 256), np.float32)\n"
        "y = u.upsample(x, [1, 1, 2, 2]); print(y.flags.owndata)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "ONNX_UPSAMPLE_REUSE_OUTPUTS": "0"}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


# The pool must be safe by construction wherever execution stands inside it: a fork there
# (a DataLoader or fork-pool worker started while another thread is mid-call) and a garbage
# collection there (which may release a pooled result in a reference cycle, running its
# destructor on this very thread). Each script below stops at every line of every function
# of onnx_upsample._buffers in turn (sys.settrace), does the disruptive thing there, and
# checks that the pool still works. A hang is what the bug looks like, so each script runs
# under a timeout.
PAUSE_AT_EVERY_LINE = """
import dis, gc, inspect, os, sys, threading, time
import numpy as np
import onnx_upsample as u
from onnx_upsample import _buffers

x = np.ones((1, 1, 256, 256), np.float32)
sizes = ([1, 1, 2, 2], [1, 1, 2, 3])  # two output sizes: both reuse and fresh allocation

def lines_of(module):
    codes = []
    for obj in vars(module).values():
        if inspect.isfunction(obj) and obj.__module__ == module.__name__:
            codes.append(obj.__code__)
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            codes += [f.__code__ for f in vars(obj).values() if inspect.isfunction(f)]
    return sorted({(c.co_name, line) for c in codes for _, line in dis.findlinestarts(c)
                   if line is not None and line > c.co_firstlineno})

def tracer_for(target, on_hit):
    name, line = target
    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == line and frame.f_code.co_name == name:
            on_hit()
        return local
    def global_(frame, event, arg):
        if frame.f_code.co_filename == _buffers.__file__:
            return local
        return None
    return global_
"""

FORK_AT_EVERY_LINE = PAUSE_AT_EVERY_LINE + """
def child_works():
    pid = os.fork()
    if pid == 0:
        ok = all(np.array_equal(u.upsample(x, s)[0, 0, :2, :2], np.ones((2, 2)))
                 for s in sizes for _ in range(3))
        os._exit(0 if ok else 3)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else "wrong"
        time.sleep(0.005)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hang"

reached = failures = 0
for target in lines_of(_buffers):
    paused, resume = threading.Event(), threading.Event()
    def on_hit():
        if not paused.is_set():
            paused.set()
            resume.wait()
    def busy():
        sys.settrace(tracer_for(target, on_hit))
        for i in range(200):
            if paused.is_set():
                break
            y = u.upsample(x, sizes[i % 2])
            del y
        sys.settrace(None)
    thread = threading.Thread(target=busy)
    thread.start()
    if paused.wait(5):
        reached += 1
        outcome = child_works()
        if outcome != "ok":
            failures += 1
            print("fork while another thread is at", target, "->", outcome)
    resume.set()
    thread.join()
print("reached", reached, "failures", failures)
"""

COLLECT_AT_EVERY_LINE = PAUSE_AT_EVERY_LINE + """
x = np.arange(256 * 256, dtype=np.float32).reshape(1, 1, 256, 256)
expected = [u.upsample(x, s).copy() for s in sizes]
gc.disable()
reached = 0
for target in lines_of(_buffers):
    hit = []
    def on_hit():
        if not hit:
            hit.append(1)
            print("collecting at", target, flush=True)
            gc.collect()  # frees the cycles below: their destructors run here and now
    for i in range(4):
        garbage = [u.upsample(x, sizes[i % 2])]
        garbage.append(garbage)  # a pooled result only the collector can free
        del garbage
        sys.settrace(tracer_for(target, on_hit))
        y = u.upsample(x, sizes[(i + 1) % 2])
        sys.settrace(None)
        # a buffer handed out while still in use would show another call's values here
        assert np.array_equal(y, expected[(i + 1) % 2])
        del y
    reached += bool(hit)
print("reached", reached)
"""


def _lines_reached(script: str) -> str:
    try:
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=240)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"the pool hung; last output: {error.stdout!r}") from None
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_fork_anywhere_in_the_pool_leaves_a_working_child() -> None:
    out = _lines_reached(FORK_AT_EVERY_LINE)
    last = out.split()
    assert last[-4] == "reached" and int(last[-3]) >= 8, out
    assert last[-2:] == ["failures", "0"], out


def test_garbage_collection_anywhere_in_the_pool_does_not_deadlock() -> None:
    out = _lines_reached(COLLECT_AT_EVERY_LINE)
    assert int(out.split()[-1]) >= 8, out
