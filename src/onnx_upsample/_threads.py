"""How many threads the compiled kernels use (stdlib only).

The default is the number of cores this process may use: its CPU affinity, reduced by a
cgroup CPU quota (containers), not ``os.cpu_count()``. ``set_num_threads(n)`` or the
environment variable ``ONNX_UPSAMPLE_NUM_THREADS`` (read at each call; empty means unset)
choose another count; any count >= 1 is accepted. A call then runs on at most
``threads_for_call()`` threads: the count chosen, but never more than the cores this process
may use at that moment (affinity is read at every call, so a worker pinned after import, or
a forked child, is seen) nor than the pool's ``MAX_THREADS``; more threads than cores only
take turns on them, which made a large call 47 times slower with 10,000. The kernels use
fewer still when the work is too small to be worth sharing.
"""

from __future__ import annotations

import math
import operator
import os

from ._errors import UpsampleError

ENV_VAR = "ONNX_UPSAMPLE_NUM_THREADS"
CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"
CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us"

# The pool's upper bound (the C pool, pool.c, has the same; a test checks they agree).
MAX_THREADS = 256

_requested: int | None = None
# The cgroup quota does not change under a running process; read once per process.
_quota_by_pid: dict[int, float | None] = {}


def _cgroup_cpus() -> float | None:
    """The CPU quota of this process's cgroup in cores, or None where there is none."""
    try:
        with open(CGROUP_CPU_MAX) as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open(CGROUP_V1_QUOTA) as f:
            quota_us = int(f.read())
        with open(CGROUP_V1_PERIOD) as f:
            period_us = int(f.read())
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    except (OSError, ValueError):
        return None


def available_cores() -> int:
    """Cores this process may use now: CPU affinity, then the cgroup quota (rounded up)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        cores = os.cpu_count() or 1
    pid = os.getpid()
    if pid not in _quota_by_pid:
        _quota_by_pid[pid] = _cgroup_cpus()
    quota = _quota_by_pid[pid]
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


def _check(n: object, source: str) -> int:
    if isinstance(n, bool):
        raise TypeError(f"{source} is {n!r}; expected a whole number of threads >= 1")
    try:
        count = operator.index(n)  # type: ignore[arg-type]  # int, numpy ints, any __index__
    except TypeError:
        raise TypeError(f"{source} is {n!r}; expected a whole number of threads >= 1") from None
    if count < 1:
        raise UpsampleError(
            f"{source} is {count}; expected a number of threads >= 1 (this process may use "
            f"{available_cores()} cores)"
        )
    return count


def set_num_threads(n: int) -> None:
    """Set the number of threads ``upsample`` uses (default: the cores this process may use).

    Overrides the environment variable ``ONNX_UPSAMPLE_NUM_THREADS``. Results do not
    depend on the thread count. Any count >= 1 is accepted; a call uses at most as many
    threads as the cores this process may use at that moment (and at most 256), and fewer
    when its work is too small to be worth sharing.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    UpsampleError
        If ``n`` is below 1.
    """
    global _requested
    _requested = _check(n, "n")


def num_threads() -> int:
    """The thread count for the next call: set_num_threads, else the env var, else cores."""
    if _requested is not None:
        return _requested
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured:
        try:
            value: object = int(configured)
        except ValueError:
            value = configured
        if isinstance(value, str):
            raise UpsampleError(
                f"the environment variable {ENV_VAR} is {configured!r}; expected a whole "
                f"number of threads >= 1, or unset it (default: {available_cores()} cores)"
            )
        return _check(value, f"the environment variable {ENV_VAR}")
    return available_cores()


def threads_for_call() -> int:
    """The most threads the next call may use: the configured count, capped at the cores
    this process may use now and at MAX_THREADS."""
    return min(num_threads(), available_cores(), MAX_THREADS)
