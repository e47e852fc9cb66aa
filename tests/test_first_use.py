"""Forks while other threads make their first calls (``onnx_upsample._first_use``).

The kernels load at the first call that needs them. A process that forks while another
thread is in the middle of that load must give a child whose calls work: before the
first-use lock, the child inherited the half-imported kernels with their import lock held by
a thread it does not have, and hung in 56 of 60 runs of the first script below. Each run is
a fresh interpreter (a first use happens once per process), forking at a different moment
of the other threads' first calls; a child that does not finish within the limit is a hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes import outputs_of
from slowdown import SLOWDOWN

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


def test_a_fork_inside_a_first_use_on_the_same_thread_does_not_wait_for_itself() -> None:
    """A signal handler may fork while its own thread is loading: the fork must not wait for
    the lock that thread holds (it would wait forever), and the child finishes the load."""
    script = WAIT_FOR_CHILD + """
import os, signal, time
from onnx_upsample._first_use import first_use
with first_use():
    pid = os.fork()
    if pid == 0:
        with first_use():  # the child's thread still owns the step it forked inside
            pass
        os._exit(0)
print(wait_for(pid, float(os.environ["LIMIT"])))
with first_use():  # released in the parent after the block
    print("again")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=4 * CHILD_LIMIT, cwd=ROOT,
                            env={**os.environ, "LIMIT": str(CHILD_LIMIT)}, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "again"]
