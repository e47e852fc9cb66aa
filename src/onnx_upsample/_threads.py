"""How many threads the compiled kernels use (stdlib only), and their place in threadpoolctl.

The count for a call is the first of: a ``threadpoolctl.threadpool_limits`` block in force,
``set_num_threads(n)``, the environment variable ``ONNX_UPSAMPLE_NUM_THREADS``, the
environment variable ``OMP_NUM_THREADS`` (its first field; a value that is not a count >= 1
is another library's business and is ignored), and the number of cores this process may
use: its CPU affinity, reduced by a cgroup CPU quota (containers), not ``os.cpu_count()``.
Both variables are read once, when this module is imported, as OpenMP runtimes and BLAS
libraries read theirs when they load (empty means unset): distributed's nanny writes
``OMP_NUM_THREADS=1`` into the *client's* environment when it starts a worker, and reading it
at each call would drop the client's own calls to one thread from then on; and a lookup in
``os.environ`` costs about a microsecond, a tenth of a small call. A bad
``ONNX_UPSAMPLE_NUM_THREADS`` is an error at every call (:func:`thread_variable_is_bad`),
not at import. Any count >= 1 is accepted; a call
then runs on at most ``threads_for_call()`` threads: the count chosen, but never more than
the cores this process may use at that moment (affinity is read at every call large enough
to share, so a worker pinned after import, or a forked child, is seen; a call too small to
share runs on the caller alone and reads no count) nor than the pool's ``MAX_THREADS``; more
threads than cores only take turns on them, which made a large call 47 times slower with
10,000. The kernels use fewer still when the work is too small to be worth sharing.

OMP_NUM_THREADS is honoured because distributed's workers and joblib's process workers set
it (to 1, or to their share of the cores) so that no native pool in a worker starts a thread
per core: without it, N workers × N threads oversubscribe the machine. A threadpoolctl block
applies to the whole process, as ``set_num_threads`` does.
"""

from __future__ import annotations

import functools
import importlib.machinery
import math
import operator
import os
import sys
import types
import warnings
from typing import Any

from ._errors import UpsampleError

ENV_VAR = "ONNX_UPSAMPLE_NUM_THREADS"
OMP_ENV_VAR = "OMP_NUM_THREADS"
CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"
CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us"

# The pool's upper bound (the C pool, pool.c, has the same; a test checks they agree).
MAX_THREADS = 256

_requested: int | None = None
# The count a threadpoolctl.threadpool_limits block sets, while it is in force.
_limit: int | None = None
_registered = False
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

    Overrides the environment variables ``ONNX_UPSAMPLE_NUM_THREADS`` and
    ``OMP_NUM_THREADS``; a ``threadpoolctl.threadpool_limits`` block overrides it while the
    block lasts. Results do not depend on the thread count. Any count >= 1 is accepted; a
    call uses at most as many threads as the cores this process may use at that moment (and
    at most 256), and fewer when its work is too small to be worth sharing.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    UpsampleError
        If ``n`` is below 1.
    """
    global _requested
    _requested = _check(n, "n")


def _omp_num_threads() -> int | None:
    """OMP_NUM_THREADS's first field ("4,2" gives threads per nesting level), or None where
    it is unset or not a count >= 1 (other libraries own that variable and its errors)."""
    first = os.environ.get(OMP_ENV_VAR, "").split(",")[0].strip()
    return int(first) if first.isdecimal() and int(first) >= 1 else None


def _environment_count() -> int | str | None:
    """ONNX_UPSAMPLE_NUM_THREADS as given: a whole number, the text itself where it is not
    one (an error when a count is needed), or None where it is unset or empty."""
    configured = os.environ.get(ENV_VAR, "").strip()
    if not configured:
        return None
    try:
        return int(configured)
    except ValueError:
        return configured


_omp_at_import = _omp_num_threads()
_env_at_import = _environment_count()


def thread_variable_is_bad() -> bool:
    """Whether ONNX_UPSAMPLE_NUM_THREADS holds something other than a count >= 1: every
    call is then an error, also one small enough to need no count."""
    value = _env_at_import
    return isinstance(value, str) or (value is not None and value < 1)


def configured_threads(cores: int | None = None) -> int:
    """The count chosen without a threadpoolctl limit: set_num_threads, else
    ONNX_UPSAMPLE_NUM_THREADS, else OMP_NUM_THREADS, else the cores this process may use
    (``cores`` where the caller has just read them)."""
    if _requested is not None:
        return _requested
    value = _env_at_import
    if isinstance(value, str):
        raise UpsampleError(
            f"the environment variable {ENV_VAR} is {value!r}; expected a whole number of "
            f"threads >= 1, or unset it (default: {cores or available_cores()} cores)"
        )
    if value is not None:
        return _check(value, f"the environment variable {ENV_VAR}")
    return _omp_at_import or cores or available_cores()


def num_threads() -> int:
    """The thread count for the next call: a threadpoolctl limit in force, else
    :func:`configured_threads`."""
    _watch_threadpoolctl()
    return _limit if _limit is not None else configured_threads()


def threads_for_call() -> int:
    """The most threads the next call may use: the configured count, capped at the cores
    this process may use now (read once: a system call) and at MAX_THREADS."""
    cores = available_cores()
    _watch_threadpoolctl()
    wanted = _limit if _limit is not None else configured_threads(cores)
    return min(wanted, cores, MAX_THREADS)


def get_num_threads() -> int:
    """The most threads the next ``upsample`` call may use.

    The first of: a ``threadpoolctl.threadpool_limits`` block in force,
    :func:`set_num_threads`, the environment variables ``ONNX_UPSAMPLE_NUM_THREADS`` and
    ``OMP_NUM_THREADS``, the cores this process may use (CPU affinity and cgroup quota);
    never more than those cores nor 256. A call uses fewer when its work is too small to be
    worth sharing.

    Raises
    ------
    UpsampleError
        If ``ONNX_UPSAMPLE_NUM_THREADS`` is set to something other than a count >= 1.
    """
    return threads_for_call()


# --- threadpoolctl ----------------------------------------------------------------------
# threadpoolctl finds thread pools among the shared libraries loaded in the process, by
# file name, and asks each library's controller for its count. Ours is the kernel
# extension, _kernels/_native.<EXTENSION_SUFFIX>; hypothesis ships a _native extension too,
# so the controller also checks the path. Importing threadpoolctl costs as much again as
# `import onnx_upsample` itself, so it is never imported here: the controller is
# registered when threadpoolctl is already imported, else right after it is (a finder at
# the head of sys.meta_path that looks only at that one name and removes itself), so the
# import order does not matter and a process without threadpoolctl pays nothing.

THREADPOOLCTL_API = "onnx_upsample"
_EXTENSION_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels")
_mapped: list[object] = []  # the extension as ctypes mapped it (kept for the process)


def _extension_path() -> str | None:
    """The compiled kernels' file, or None in a source tree where they are not built."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(_EXTENSION_DIR, "_native" + suffix)
        if os.path.exists(path):
            return os.path.realpath(path)
    return None


# The limits threadpoolctl blocks set, innermost last: for each, the limit in force before it
# and the count threadpoolctl read on entering (and gives back on leaving).
_limit_stack: list[tuple[int | None, int | None]] = []


def _set_limit(count: int | None) -> None:
    """What threadpoolctl sets on entering a block, and gives back on leaving it.

    threadpoolctl enters a block by reading the count (our ``num_threads()``) and setting
    the limit, and leaves it by setting the count it read. A call that gives back the
    count read on entering the innermost block is that block's end: the state before the
    block comes back exactly, so a ``set_num_threads`` made inside the block applies once
    it ends, and nested blocks unwind in turn. A call that sets the count
    in force changes nothing (threadpoolctl gives every library its count back at the end of
    a block, also the libraries the block did not limit). Any other call is a new limit.
    """
    global _limit
    if _limit_stack and count == _limit_stack[-1][1]:
        _limit = _limit_stack.pop()[0]
        return
    if count is None:  # the count threadpoolctl read was unknown (a bad environment)
        _limit = None
        return
    try:
        before: int | None = num_threads()
    except UpsampleError:
        before = None
    if count == before:
        return
    _limit_stack.append((_limit, before))
    # Refusing a count here would leave the libraries threadpoolctl set before us limited
    # for good (the block never starts, so it never restores them): below 1 means 1.
    _limit = max(1, operator.index(count))


def _controller_class(threadpoolctl: Any) -> type:
    """A threadpoolctl ``LibController`` for the kernels' pool (threadpoolctl >= 3)."""

    class OnnxUpsampleController(threadpoolctl.LibController):
        user_api = THREADPOOLCTL_API
        internal_api = THREADPOOLCTL_API
        filename_prefixes = ("_native.",)
        check_symbols = ("PyInit__native",)

        def get_num_threads(self) -> int | None:
            try:
                return num_threads()
            except UpsampleError:  # a bad ONNX_UPSAMPLE_NUM_THREADS: the call words it
                return None

        def set_num_threads(self, num_threads: int | None) -> None:
            _set_limit(num_threads)

        def get_version(self) -> str | None:
            return _package_version()

        def set_additional_attributes(self) -> None:
            # Another package's _native extension (hypothesis has one) is not our pool:
            # without the handle, threadpoolctl's check of check_symbols passes it over.
            if self.filepath is None or os.path.realpath(self.filepath) != _extension_path():
                self.dynlib = None

    return OnnxUpsampleController


@functools.cache
def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnx-upsample")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return None


def _register(threadpoolctl: Any) -> None:
    """Make threadpoolctl see the pool: map the extension (threadpoolctl lists loaded
    libraries only; the package has loaded it already, so this only finds it again, and
    this layer does not import the kernels) and register the controller."""
    global _registered
    if _registered or not hasattr(threadpoolctl, "register"):  # threadpoolctl < 3
        return
    _registered = True
    path = _extension_path()
    if path is None:
        return
    import ctypes

    try:
        _mapped.append(ctypes.CDLL(path))
        threadpoolctl.register(_controller_class(threadpoolctl))
    except Exception as error:  # never let this break the user's import of threadpoolctl
        warnings.warn(f"onnx_upsample could not register its thread pool with threadpoolctl "
                      f"({error}); use onnx_upsample.set_num_threads(n) instead",
                      RuntimeWarning, stacklevel=2)


class _RegisterOnImport:
    """A ``sys.meta_path`` finder that answers for no module: when threadpoolctl is being
    imported, it lets the other finders find it and registers the controller once it has
    run."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != "threadpoolctl":
            return None
        _unwatch()
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_register(module: types.ModuleType) -> None:
            exec_module(module)
            _register(module)

        loader.exec_module = exec_then_register
        return spec


_finder = _RegisterOnImport()


def _unwatch() -> None:
    # a new list, not remove(): another thread's import may be iterating over the old one,
    # and removing an element under it would make it skip the next finder
    if _finder in sys.meta_path:
        sys.meta_path = [finder for finder in sys.meta_path if finder is not _finder]


def _watch_threadpoolctl() -> None:
    """Register now if threadpoolctl is imported (a cheap check, made at each call, in case
    it was imported without the finder: another finder first, or importlib tricks)."""
    if not _registered:
        module = sys.modules.get("threadpoolctl")
        if module is not None:
            _unwatch()
            _register(module)


_watch_threadpoolctl()
if not _registered:
    sys.meta_path.insert(0, _finder)
