"""First calls and lazy loads under forks and signals (``onnx_upsample._first_use``).

The kernels load with the package, so a call imports nothing; before, they loaded at the
first call, and a signal handler that upsampled during it found them half imported (47 of
60 timer signals), while a process that forked as other threads made their first calls gave
children that inherited the half-done import and hung (56 of 60). What is still imported
lazily (ml_dtypes) goes through ``_first_use.load``, whose lock a fork waits for and which a
handler on the importing thread re-enters without waiting for itself.

The signal sweeps raise SIGUSR1 at line events of a first call (or of a first load) from a
trace function, one forked child per event, so that each child makes the process's first
call afresh: the handler calls again, then forks a grandchild that calls too. A child that
does not finish within the limit is a hang. The full sweeps (every line event) are slow; the
default ones take every few events, and for a load every event of ``_first_use`` itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import outputs_of
from slowdown import SLOWDOWN

from onnx_upsample._first_use import load

ROOT = Path(__file__).resolve().parents[1]

# The parent reports each child: "ok", "failed <status>" or "hung" (killed after the limit).
WAIT_FOR_CHILD = """
def wait_for(pid, limit):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else f"failed {status}"
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"
"""

# Three threads make their first calls (shape and mode from argv: small ones run on the
# caller, large ones start the kernels' thread pool) while the main thread forks after
# argv[1] milliseconds; the child makes a call of its own and checks its values.
THREADS_THEN_FORK = WAIT_FOR_CHILD + """
import os, signal, sys, threading, time
import numpy as np
import onnx_upsample as u

delay, side, mode, limit = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])

def work():
    for _ in range(3):
        u.upsample(np.zeros((side, side), np.float32), [2, 2], mode)

for _ in range(3):
    threading.Thread(target=work, daemon=True).start()
time.sleep(delay / 1000)
pid = os.fork()
if pid == 0:
    y = u.upsample(np.arange(16, dtype=np.float32).reshape(4, 4), [2, 2], mode)
    os._exit(0 if y.shape == (8, 8) and y[7, 7] == 15 else 3)
print(wait_for(pid, limit))
"""

# A fork multiprocessing pool started while a ThreadPoolExecutor makes its first calls;
# every worker upsamples.
EXECUTOR_THEN_POOL = """
import concurrent.futures, multiprocessing, sys, time, warnings
import numpy as np
import onnx_upsample as u

warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork of a threaded process
delay, limit = float(sys.argv[1]), float(sys.argv[2])

def call(side):
    return u.upsample(np.ones((side, side), np.float32), [2, 2], "linear").shape

with concurrent.futures.ThreadPoolExecutor(3) as executor:
    calls = [executor.submit(call, side) for side in (256, 512, 256, 1024)]
    time.sleep(delay / 1000)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        shapes = pool.map_async(call, [32, 64, 48, 16]).get(limit)
    assert shapes == [(64, 64), (128, 128), (96, 96), (32, 32)], shapes
    assert [c.result() for c in calls] == [(512, 512), (1024, 1024), (512, 512), (2048, 2048)]
print("ok")
"""

RUNS = 12  # delays spread over the other threads' first calls (about 0-5 ms after start)
CHILD_LIMIT = 20.0 * SLOWDOWN  # a child's call takes milliseconds; a hang lasts forever


def _spawn(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ONNX_UPSAMPLE_NUM_THREADS": "2"})


def _outcomes(script: str, runs: list[tuple[object, ...]]) -> list[str]:
    """Each run's last line, two interpreters at a time (each is mostly start-up)."""
    lines: list[str] = []
    for start in range(0, len(runs), 2):
        batch = {run: _spawn(script, *run) for run in runs[start:start + 2]}
        for run, out in outputs_of(batch, timeout=4 * CHILD_LIMIT).items():
            lines.append(f"{run}: {out[-1] if out else 'no output'}")
    return lines


@pytest.mark.slow
@pytest.mark.parametrize(("side", "mode"), [(256, "nearest"), (1448, "linear")],
                         ids=["small-calls", "pool-starting-calls"])
def test_fork_while_other_threads_make_their_first_calls(side: int, mode: str) -> None:
    runs = [(f"{5 * i / RUNS:.2f}", side, mode, CHILD_LIMIT) for i in range(RUNS)]
    outcomes = _outcomes(THREADS_THEN_FORK, runs)
    assert all(line.endswith(": ok") for line in outcomes), "\n".join(outcomes)


@pytest.mark.slow
def test_fork_pool_started_while_an_executor_makes_first_calls() -> None:
    runs = [(f"{8 * i / 6:.2f}", CHILD_LIMIT) for i in range(6)]
    outcomes = _outcomes(EXECUTOR_THEN_POOL, runs)
    assert all(line.endswith(": ok") for line in outcomes), "\n".join(outcomes)


# A sweep: argv = what ("call": the first upsample call; "load": the first load of the module
# tiny_module, in the directory argv[4]), the stride between sampled line events, the limit
# for one child. One child per point makes that first call with SIGUSR1 raised at the point's
# line event; its handler calls again (a load may also say that this thread is still
# importing the module), then forks a grandchild that calls once more. The last line: the
# line events, the points run, the modules a first call imported, then each failure.
SWEEP = WAIT_FOR_CHILD + """
import os, signal, sys, time
import numpy as np
import onnx_upsample as u
from onnx_upsample import UpsampleError
from onnx_upsample._first_use import load

what, step, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sys.path.insert(0, sys.argv[4])

def again():
    if what == "call":
        y = u.upsample(np.arange(4, dtype=np.float32).reshape(2, 2), [2, 2], "linear")
        return y.shape == (4, 4) and y[1, 1] == 1.5 and y[3, 3] == 3  # hand-computed
    try:
        return load("tiny_module").VALUE == 42
    except UpsampleError as error:  # re-entered in the middle of that very import
        return "still importing tiny_module" in str(error)

def handler(signum, frame):
    sys.settrace(None)
    try:
        if not again():
            os._exit(4)
    except BaseException as error:
        os.write(2, f"handler: {type(error).__name__}: {error}\\n".encode())
        os._exit(5)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if again() else 3)
    if wait_for(pid, limit) != "ok":
        os._exit(6)

def first(point, events=None):
    n = 0
    def tracer(frame, event, arg):
        nonlocal n
        if event == "line":
            n += 1
            if events is not None:
                events.append(frame.f_code.co_filename.endswith("_first_use.py"))
            if n == point:
                os.kill(os.getpid(), signal.SIGUSR1)
        return tracer
    signal.signal(signal.SIGUSR1, handler)
    sys.settrace(tracer)
    try:
        if what == "call":
            y = u.upsample(np.arange(16, dtype=np.float32).reshape(4, 4), [2, 2], "nearest")
            good = y.shape == (8, 8) and y[7, 7] == 15 and y[0, 1] == 0
        else:
            good = load("tiny_module").VALUE == 42
    finally:
        sys.settrace(None)
    return good and (what == "call" or load("tiny_module").VALUE == 42)

read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:  # counts the line events of an undisturbed first call
    events, before = [], set(sys.modules)
    good = first(0, events)
    imported = sorted(set(sys.modules) - before - {"tiny_module"})
    os.write(write_end, ("".join("1" if e else "0" for e in events) + " "
                         + ",".join(imported)).encode())
    os._exit(0 if good else 3)
os.close(write_end)
assert wait_for(pid, limit) == "ok"
report = b""
while chunk := os.read(read_end, 65536):
    report += chunk
events, _, imported = report.decode().partition(" ")
points = [p for p in range(1, len(events) + 1) if (p - 1) % step == 0 or events[p - 1] == "1"]
failures, running, todo = [], {}, list(reversed(points))
while todo or running:  # two children at a time: each is mostly a fork and an exit
    while todo and len(running) < 2:
        point = todo.pop()
        pid = os.fork()
        if pid == 0:
            try:
                os._exit(0 if first(point) else 7)
            except BaseException as error:
                os.write(2, f"first: {type(error).__name__}: {error}\\n".encode())
                os._exit(8)
        running[pid] = (point, time.monotonic() + limit)
    time.sleep(0.0005)
    for pid, (point, deadline) in list(running.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done and time.monotonic() < deadline:
            continue
        if not done:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        del running[pid]
        code = os.waitstatus_to_exitcode(status) if done else "hung"
        if code != 0:
            failures.append(f"{point}:{code}")
print(len(events), len(points), imported or "-", *sorted(failures))
"""


def _sweep(what: str, step: int, directory: Path) -> tuple[int, int, str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", SWEEP, what, str(step), str(CHILD_LIMIT), str(directory)],
        capture_output=True, text=True, timeout=600 * SLOWDOWN, cwd=ROOT, check=False,
        env={**os.environ, "ONNX_UPSAMPLE_NUM_THREADS": "2"})
    assert result.returncode == 0, result.stderr[-3000:]
    events, points, imported, *failures = result.stdout.split("\n")[-2].split()
    return int(events), int(points), imported, failures


def _tiny_module(directory: Path) -> Path:
    (directory / "tiny_module.py").write_text("import math\n\nVALUE = 6 * 7\n"
                                              "ROOT = math.sqrt(VALUE)\n")
    return directory


@pytest.mark.parametrize("step", [
    16, pytest.param(1, marks=pytest.mark.slow, id="every-line")])
def test_a_signal_during_the_first_call_can_call_and_fork(step: int, tmp_path: Path) -> None:
    """The handler's call, and its fork's, work at any line of the first call; the first
    call imports nothing (before, a handler's call found the kernels half imported)."""
    events, points, imported, failures = _sweep("call", step, tmp_path)
    assert imported == "-", f"the first call imported {imported}"
    assert events > 100 and points >= events // step, (events, points)
    assert failures == [], f"{len(failures)} of {points} points failed: {failures[:20]}"


@pytest.mark.parametrize("step", [
    12, pytest.param(1, marks=pytest.mark.slow, id="every-line")])
def test_a_signal_during_a_lazy_load_can_load_and_fork(step: int, tmp_path: Path) -> None:
    """At every line of ``_first_use.load`` itself (and every few of the import under it),
    a handler's load returns the module or says the import it interrupted is not finished,
    and a fork does not wait for the lock its own thread holds (before, a fork between
    taking the lock and recording its holder waited forever)."""
    events, points, _, failures = _sweep("load", step, _tiny_module(tmp_path))
    assert events > 50 and points >= events // step, (events, points)
    assert failures == [], f"{len(failures)} of {points} points failed: {failures[:20]}"


def test_a_fork_waits_for_another_threads_lazy_load(tmp_path: Path) -> None:
    """A thread's load under way when the main thread forks: the fork waits for it, and the
    child's load returns the whole module (never the import half done, whose lock would be
    held by a thread the child does not have)."""
    (tmp_path / "slow_module.py").write_text("import time\n\ntime.sleep(0.3)\nVALUE = 42\n")
    script = WAIT_FOR_CHILD + """
import os, signal, sys, threading, time
sys.path.insert(0, sys.argv[1])
from onnx_upsample._first_use import load

thread = threading.Thread(target=load, args=("slow_module",))
thread.start()
while "slow_module" not in sys.modules:  # its body is running (it sleeps)
    time.sleep(0.001)
began = time.monotonic()
pid = os.fork()
if pid == 0:
    os._exit(0 if load("slow_module").VALUE == 42 else 3)
waited = time.monotonic() - began
print(wait_for(pid, float(sys.argv[2])), "waited" if waited > 0.1 else f"forked at once")
thread.join()
"""
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(CHILD_LIMIT)],
                            capture_output=True, text=True, timeout=4 * CHILD_LIMIT, cwd=ROOT,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "waited"]


def test_a_missing_module_is_an_import_error_each_time() -> None:
    """load() leaves nothing behind for a module that is not installed: the caller words the
    pip install, at every call."""
    for _ in range(2):
        with pytest.raises(ImportError):
            load("onnx_upsample_no_such_module")


def test_a_load_inside_its_own_import_says_so(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """What a signal handler on the importing thread gets (the module's own body stands in
    for it here): an UpsampleError that names the import and the fix, not the module half
    imported; the import then finishes, and later loads return it."""
    (tmp_path / "reentered_module.py").write_text(
        "from onnx_upsample import UpsampleError\n"
        "from onnx_upsample._first_use import load\n"
        "try:\n"
        "    load('reentered_module')\n"
        "except UpsampleError as error:\n"
        "    MESSAGE = str(error)\n"
        "VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reentered_module", raising=False)
    module = load("reentered_module")
    assert module.MESSAGE == (
        "reentered_module is needed while this thread is still importing reentered_module (a "
        "signal handler or finalizer interrupted that import); import reentered_module "
        "before installing the handler")
    assert module.VALUE == 42 and load("reentered_module") is module
