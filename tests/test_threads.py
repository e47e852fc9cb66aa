"""How many threads a call uses, and that it never waits for a thread that has no work.

The pool (``_kernels/_native/pool.c``) wakes its helpers for a job, but a helper on an idle
core can take tens to hundreds of microseconds to run; the caller works through the items
meanwhile and must not wait for a helper that has not joined. Counts are checked as a user
sets them: absurdly large, from the environment, and after the process's CPU affinity
changes. Whatever could hang runs in a subprocess under a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from slowdown import SLOWDOWN

import onnx_upsample
from onnx_upsample import _threads, reference, set_num_threads, upsample
from onnx_upsample._kernels import _native


def _run(code: str, *args: str, timeout: float = 120, **env: str) -> str:
    try:
        result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                                text=True,
                                timeout=timeout, env={**os.environ, **env}, check=False)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"subprocess hung for {timeout} s: {error.stdout!r} {error.stderr!r}")
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


# A helper that needs 0.5 s to join (a core that is slow to wake, exaggerated; longer under
# the sanitizers) must not
# delay the calls: the caller does every item itself, and the late helper, finding the job
# closed, touches nothing of it, not even of later jobs it was not part of.
SLOW_HELPER = """
import sys, time
import numpy as np
import onnx_upsample as u
from onnx_upsample import _threads
from onnx_upsample._kernels import _layout, _native
_layout.MIN_SHARE_WORK = 1  # share even small calls
_threads.available_cores = lambda: 2
u.set_num_threads(2)
x = np.random.default_rng(0).standard_normal((4, 8, 64, 64)).astype(np.float32)
cases = [([1, 1, 2, 2], "nearest"), ([1, 1, 1.5, 2], "linear")]
u.set_num_threads(1)
expected = [u.upsample(x, s, m).tobytes() for s, m in cases]
u.set_num_threads(2)
delay = float(sys.argv[1])
_native._set_join_delay(delay)
t0 = time.perf_counter()
same = [u.upsample(x, s, m).tobytes() == e for _ in range(5) for (s, m), e in zip(cases, expected)]
elapsed = time.perf_counter() - t0
_native._set_join_delay(0.0)
time.sleep(delay + 0.1)  # the late helpers wake, find their jobs closed, and sleep again
same += [u.upsample(x, s, m).tobytes() == e
         for _ in range(20) for (s, m), e in zip(cases, expected)]
print(all(same), f"{elapsed:.3f}")
"""


def test_caller_never_waits_for_a_helper_that_has_not_joined() -> None:
    delay = 0.5 * SLOWDOWN
    same, elapsed = _run(SLOW_HELPER, str(delay)).split()
    assert same == "True"
    # ten parallel calls, each of which would have waited `delay` for its helper before
    assert float(elapsed) < delay, f"10 calls took {elapsed} s: the caller waited for a helper"


def test_work_too_small_to_share_runs_on_the_caller_alone() -> None:
    from onnx_upsample._kernels import _layout

    axes = [_layout.Axis(13, 26, "gather", _layout.Rule(13, 0, 0, np.float32(2)))] * 2
    small = _layout.plan_layout([_layout.Axis(256, 256, "copy"), *axes], 2, 4)
    assert small.threads == 1 and small.n_blocks * small.n_segments == 1
    large = _layout.plan_layout([_layout.Axis(4096, 4096, "copy"), *axes], 2, 4)
    assert large.threads == 2 and large.n_blocks * large.n_segments >= 2


def test_pool_bound_is_the_same_in_python_and_c() -> None:
    assert _threads.MAX_THREADS == _native.MAX_THREADS


@pytest.mark.parametrize("count", [2**31, 10**6, 257])
def test_huge_thread_counts_work(count: int) -> None:
    small = np.arange(3 * 7 * 5, dtype=np.float32).reshape(3, 7, 5)
    x = np.arange(4 * 300 * 300, dtype=np.float32).reshape(4, 300, 300)
    previous = _threads._requested
    try:
        set_num_threads(1)
        expected = upsample(x, [1, 2, 1.5], "linear")
        set_num_threads(count)
        assert _threads.threads_for_call() <= min(_threads.available_cores(), 256)
        assert np.array_equal(upsample(x, [1, 2, 1.5], "linear"), expected)
        assert np.array_equal(upsample(small, [1, 2, 1.5], "linear"),
                              reference.upsample(small, [1, 2, 1.5], "linear"))
    finally:
        _threads._requested = previous


def test_the_kernels_cap_a_huge_thread_count_themselves() -> None:
    """Whatever count reaches the compiled pool (Python already caps it), the pool starts
    at most MAX_THREADS threads, and the result is right."""
    x = np.arange(64 * 256 * 256, dtype=np.float32).reshape(64, 256, 256)
    from onnx_upsample._kernels import Window, _layout, launcher
    from onnx_upsample._spec.call import check_call

    _, call, _ = check_call(x, [1, 2, 2], "nearest", None)
    share = _layout.MIN_SHARE_WORK
    try:
        _layout.MIN_SHARE_WORK = 1  # as many work items as threads could want
        launch = launcher.__wrapped__(call, Window.whole(call.out_shape), x.shape, 1000)
    finally:
        _layout.MIN_SHARE_WORK = share
    out = np.empty(call.out_shape, np.float32)
    launch(x, out, 100_000)
    assert np.array_equal(out, upsample(x, [1, 2, 2]))


def test_huge_thread_count_from_the_environment() -> None:
    out = _run("import numpy as np, onnx_upsample as u\n"
               "from onnx_upsample import _threads\n"
               "y = u.upsample(np.ones((64, 512, 512), np.float32), [1, 2, 2])\n"
               "print(_threads.num_threads(), _threads.threads_for_call(), y.shape, y.all())",
               ONNX_UPSAMPLE_NUM_THREADS="2147483648")
    requested, used, *rest = out.split(maxsplit=2)
    assert requested == "2147483648" and int(used) <= _threads.available_cores()
    assert rest[0].strip() == "(64, 1024, 1024) True"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_affinity_changes_after_the_first_call_are_seen() -> None:
    out = _run("import os, numpy as np, onnx_upsample as u\n"
               "from onnx_upsample import _threads\n"
               "u.upsample(np.ones((8, 8), np.float32), [2, 2])\n"
               "cores = _threads.available_cores()\n"
               "before = _threads.threads_for_call()\n"
               "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
               "print(cores, before, _threads.threads_for_call(), _threads.available_cores())")
    cores_before, before, after, cores = map(int, out.split())
    assert before == min(cores_before, onnx_upsample._threads.num_threads())
    assert after == cores == 1


# A signal handler that forks while the calling thread is inside a parallel call: in the
# child, the items that the parent's helpers had taken are never done, so the call must fail
# there (not return a result with holes), and the child's next calls must work. The handler
# runs where the caller looks for signals, between its work items, or after the call when
# the caller's items were all done: a fork there leaves a complete result, which is right
# too. Each attempt is a fresh call; the script stops at the first fork inside a call. The
# caller looks for signals only after an item of its own and at most every 20 ms
# (POLL_INTERVAL in pool.c), and not while it waits for its helpers: the timer fires early
# (a tenth of the call: at a third, on a loaded machine the caller's items could be done by
# then, and every fork came after the call), and the call must last several times 20 ms on
# a fast machine: 64 planes of 1996 x 1996 bytes at scales whose weights are rarely 1 and 0
# (about 90 ms on 2 cores of an AVX-512 EPYC; 8 planes at x4 ended within 20 ms there).
FORK_IN_HANDLER = r"""
import os, signal, sys, time
import numpy as np
import onnx_upsample as u
from onnx_upsample import _threads
_threads.available_cores = lambda: 2
u.set_num_threads(2)
x = (np.arange(64 * 512 * 512) % 251).astype(np.uint8).reshape(64, 512, 512)
scales = [1, 3.9, 3.9]
expected = u.upsample(x, scales, "linear")
t0 = time.perf_counter(); u.upsample(x, scales, "linear"); duration = time.perf_counter() - t0
children = []
signal.signal(signal.SIGALRM, lambda *_: children.append(os.fork()))
for attempt in range(10):
    children.clear()
    signal.setitimer(signal.ITIMER_REAL, duration / 10)
    try:
        y = u.upsample(x, scales, "linear")
        outcome = "complete" if np.array_equal(y, expected) else "wrong"
    except RuntimeError as error:
        outcome = "refused" if "forked during this upsample call" in str(error) else repr(error)
    time.sleep(duration)  # the timer has fired by now, inside the call or after it
    if children and children[0] == 0:
        again = np.array_equal(u.upsample(x, scales, "linear"), expected)
        with open(sys.argv[1], "a") as report:
            report.write(f"child {outcome} {again}\n")
        os._exit(0)
    if children:
        os.waitpid(children[0], 0)
    print("parent", outcome, bool(children), flush=True)
    if open(sys.argv[1]).read().endswith(("refused True\n", "wrong True\n")):
        break
"""


@pytest.mark.slow
def test_fork_from_a_signal_handler_during_a_call_is_an_error_in_the_child(tmp_path) -> None:
    report = tmp_path / "children.txt"
    report.write_text("")
    parents = _run(FORK_IN_HANDLER, str(report), timeout=120 * SLOWDOWN).split("\n")
    children = report.read_text().splitlines()
    assert all(line == "parent complete True" for line in parents if line), parents
    assert children and all(line.endswith(" True") for line in children), children
    assert "child wrong True" not in children, "a forked child kept a result with holes"
    assert children[-1] == "child refused True", f"no fork landed inside a call: {children}"


# --- where the count comes from, and threadpoolctl ------------------------------------------


@pytest.fixture
def unconfigured(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No set_num_threads, no limit, no thread variables, 8 cores: each source is then set
    by the test alone."""
    monkeypatch.setattr(_threads, "_requested", None)
    monkeypatch.setattr(_threads, "_limit", None)
    monkeypatch.setattr(_threads, "_limit_stack", [])
    monkeypatch.setattr(_threads, "available_cores", lambda: 8)
    monkeypatch.delenv("ONNX_UPSAMPLE_NUM_THREADS", raising=False)
    monkeypatch.setattr(_threads, "_env_at_import", None)
    monkeypatch.setattr(_threads, "_omp_at_import", None)
    return monkeypatch


@pytest.mark.parametrize(("omp", "expected"), [
    ("3", 3), ("4,2", 4), (" 5 ", 5),  # "4,2": threads per nesting level, the first is ours
    ("0", 8), ("-2", 8), ("many", 8), ("", 8),  # not a count: another library's error
])
def test_omp_num_threads_sets_the_default(unconfigured: pytest.MonkeyPatch, omp: str,
                                          expected: int) -> None:
    unconfigured.setenv("OMP_NUM_THREADS", omp)
    unconfigured.setattr(_threads, "_omp_at_import", _threads._omp_num_threads())
    assert onnx_upsample.get_num_threads() == expected


def test_omp_num_threads_is_read_when_the_package_loads() -> None:
    # as OpenMP and BLAS read it: a worker started with OMP_NUM_THREADS=1 keeps to one
    # thread, and a process whose environment gains it later (distributed's nanny writes it
    # into the client's environment when it starts a worker) keeps its count
    code = ("import os, onnx_upsample as u; a = u.get_num_threads();"
            "os.environ['OMP_NUM_THREADS'] = '1'; print(a, u.get_num_threads())")
    started_with_one = _run(code, OMP_NUM_THREADS="1", ONNX_UPSAMPLE_NUM_THREADS="")
    started_without = _run(code, OMP_NUM_THREADS="", ONNX_UPSAMPLE_NUM_THREADS="")
    cores = _threads.available_cores()
    assert started_with_one.split() == ["1", "1"]
    assert started_without.split() == [str(cores), str(cores)]


def test_the_sources_of_the_count_in_order(unconfigured: pytest.MonkeyPatch) -> None:
    assert onnx_upsample.get_num_threads() == 8
    unconfigured.setattr(_threads, "_omp_at_import", 2)
    assert onnx_upsample.get_num_threads() == 2
    unconfigured.setenv("ONNX_UPSAMPLE_NUM_THREADS", "3")  # as if set before the import
    unconfigured.setattr(_threads, "_env_at_import", _threads._environment_count())
    assert onnx_upsample.get_num_threads() == 3
    set_num_threads(4)
    assert onnx_upsample.get_num_threads() == 4
    _threads._set_limit(1)  # what threadpoolctl's set_num_threads calls
    assert onnx_upsample.get_num_threads() == 1
    _threads._set_limit(4)  # restoring the configured count lifts the limit
    assert _threads._limit is None
    set_num_threads(6)
    assert onnx_upsample.get_num_threads() == 6
    set_num_threads(100)  # never more than the cores
    assert onnx_upsample.get_num_threads() == 8


@pytest.fixture
def threadpoolctl() -> object:
    return pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")


def _ours(info: list[dict[str, object]]) -> list[dict[str, object]]:
    return [lib for lib in info if lib["internal_api"] == "onnx_upsample"]


def test_threadpoolctl_sees_the_pool_once(threadpoolctl: object) -> None:
    """Only the kernels' extension: hypothesis ships a _native extension of the same name."""
    import hypothesis._native  # noqa: F401
    from threadpoolctl import threadpool_info

    ours = _ours(threadpool_info())
    assert len(ours) == 1, threadpool_info()
    assert ours[0]["filepath"] == os.path.realpath(_native.__file__)
    assert ours[0]["num_threads"] == _threads.num_threads()


def test_threadpool_limits_sets_the_count_of_each_call_and_restores_it(
    threadpoolctl: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadpoolctl import threadpool_limits

    from onnx_upsample import _api, _kernels

    used: list[int] = []
    launcher = _kernels.launcher

    def spy(*args: object) -> object:
        launch = launcher(*args)  # type: ignore[arg-type]
        return _kernels.Launcher(
            lambda x, out, threads: (used.append(threads), launch(x, out, threads)),
            launch.worth)

    monkeypatch.setattr(_api, "launcher", spy)  # bound in _api at import
    monkeypatch.setattr(_api, "_PREPARED", {})
    monkeypatch.setattr(_threads, "available_cores", lambda: 4)
    monkeypatch.setattr(_threads, "_requested", 3)
    x = np.ones((512, 512), np.float32)  # work worth 4 threads (a small call runs on 1)
    with threadpool_limits(1):
        assert onnx_upsample.get_num_threads() == 1
        upsample(x, [2, 2], "linear")
        with threadpool_limits(2):
            assert onnx_upsample.get_num_threads() == 2
        assert onnx_upsample.get_num_threads() == 1
        with threadpool_limits(1, user_api="blas"):
            assert onnx_upsample.get_num_threads() == 1
    assert onnx_upsample.get_num_threads() == 3 and _threads._limit is None
    upsample(x, [2, 2], "linear")
    with threadpool_limits(1, user_api="blas"):  # another library's pools only
        assert onnx_upsample.get_num_threads() == 3
    assert used == [1, 3]


def test_a_count_set_inside_a_block_applies_after_it(
    threadpoolctl: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the block gives back the count it read (2), which is no longer the configured one (1):
    # the block's end must still lift its limit rather than pin 2 for good
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(_threads, "available_cores", lambda: 4)
    monkeypatch.setattr(_threads, "_limit_stack", [])
    set_num_threads(2)
    try:
        with threadpool_limits(1):
            set_num_threads(1)
            assert onnx_upsample.get_num_threads() == 1
        assert _threads._limit is None and onnx_upsample.get_num_threads() == 1
        set_num_threads(3)
        assert onnx_upsample.get_num_threads() == 3
    finally:
        monkeypatch.setattr(_threads, "_requested", None)


def test_threadpool_info_survives_a_bad_environment_variable(
    threadpoolctl: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    monkeypatch.setattr(_threads, "_requested", None)
    monkeypatch.setenv("ONNX_UPSAMPLE_NUM_THREADS", "many")  # as if set before the import
    monkeypatch.setattr(_threads, "_env_at_import", _threads._environment_count())
    assert [lib["num_threads"] for lib in _ours(threadpool_info())] == [None]
    with threadpool_limits(1):
        assert onnx_upsample.get_num_threads() == 1
    with pytest.raises(onnx_upsample.UpsampleError, match="ONNX_UPSAMPLE_NUM_THREADS is 'many'"):
        onnx_upsample.get_num_threads()  # the call words the bad value, as before


# The first call of the process inside a threadpool_limits block, whichever of the two
# packages is imported first. The kernels are not loaded when the block starts, so the pool
# must be registered (and the extension mapped) when threadpoolctl is imported, not at the
# first call; and importing onnx_upsample does not import threadpoolctl.
IMPORT_ORDER = """
import sys
import numpy as np
if sys.argv[1] == "threadpoolctl-first":
    import threadpoolctl
import onnx_upsample as u
imported = "threadpoolctl" in sys.modules
from onnx_upsample import _threads
_threads.available_cores = lambda: 2
from threadpoolctl import threadpool_limits
with threadpool_limits(1):
    inside = u.get_num_threads()
    u.upsample(np.ones((3, 3), np.float32), [2, 2])
print(imported, inside, u.get_num_threads())
"""


@pytest.mark.parametrize("order", ["threadpoolctl-first", "onnx_upsample-first"])
def test_threadpoolctl_limits_the_first_call_in_either_import_order(
    threadpoolctl: object, order: str
) -> None:
    out = _run(IMPORT_ORDER, order, OMP_NUM_THREADS="", ONNX_UPSAMPLE_NUM_THREADS="")
    assert out.split() == [str(order == "threadpoolctl-first"), "1", "2"]


def test_a_call_too_small_to_share_reads_no_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # reading the cores this process may use is a system call, a tenth of a small call's
    # cost: a repeated call whose work is worth one thread at any count skips it
    from onnx_upsample import _api

    reads: list[int] = []
    cores = _threads.available_cores
    monkeypatch.setattr(_threads, "available_cores", lambda: reads.append(1) or cores())
    monkeypatch.setattr(_api, "_PREPARED", {})
    small, large = np.ones((1, 8, 13, 13), np.float32), np.ones((1, 4, 512, 512), np.float32)
    for x in (small, large):
        expected = upsample(x, [1, 1, 2, 2])  # checked and prepared: reads the count
        reads.clear()
        assert np.array_equal(upsample(x, [1, 1, 2, 2], out=np.empty_like(expected)), expected)
        assert len(reads) == (0 if x is small else 1)


def test_a_bad_thread_variable_is_an_error_even_for_a_prepared_small_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from onnx_upsample import _api

    monkeypatch.setattr(_api, "_PREPARED", {})
    monkeypatch.setattr(_threads, "_requested", None)
    x = np.ones((4, 4), np.float32)
    upsample(x, [2, 2])  # prepared while the count was readable (as inside a limits block)
    monkeypatch.setattr(_threads, "_env_at_import", "many")
    with pytest.raises(onnx_upsample.UpsampleError, match="ONNX_UPSAMPLE_NUM_THREADS is 'many'"):
        upsample(x, [2, 2])
