"""What this process may use: memory limits and the one "too large" message.

Every entry point that allocates something proportional to its input (calls, chunked tasks,
the CLI's readers, external-data models) refuses it here first, with one wording, before
numpy or onnx tries the allocation. The bound is what the process can really have now, not
the machine's size: Linux overcommits, so an allocation beyond it often succeeds and the
process is killed by the OOM killer while it writes the pages (a ``MemoryError`` is the
lucky case). Where an allocation fails anyway (a small request, which is not checked, or
memory taken by others since the check), :func:`allocation_failed` words it the same way.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from ._errors import UpsampleError

if sys.platform != "win32":
    # imported with the package (0.3 ms), not inside a call: an import that a signal handler
    # interrupts, or runs while another import is half done, is not safe
    import resource

MEMINFO = "/proc/meminfo"
SELF_CGROUP = "/proc/self/cgroup"
SELF_STATM = "/proc/self/statm"
CGROUP_ROOT = "/sys/fs/cgroup"  # cgroup v2's mount; v1's memory controller is under memory/

# Of memory shared with other processes (the machine's, a cgroup's), one request may take
# nine tenths: the kernel's MemAvailable is an estimate, other processes keep allocating,
# and a machine driven to its last pages stalls or kills someone. A limit of this process
# alone (RLIMIT_AS, RLIMIT_DATA) is exact.
SHARED_PART = 0.9
# Requests below this are not checked: reading the limits costs about 20 us (more under
# cgroup limits), a few percent of writing 64 MiB; a smaller request that fails is still an
# UpsampleError (allocation_failed). Where a static limit is small (a 256 MiB container),
# the gate is a sixteenth of it instead, so that no unchecked request takes much of it.
CHECKED_FROM_BYTES = 64 << 20
# cgroup v1 writes "no limit" as a page-rounded 2**63-1
_UNLIMITED = 1 << 62


@dataclass(frozen=True)
class Limit:
    """One bound on this process's memory: the bytes a request may take and, in words,
    where the number comes from (``"nine tenths of the 23.0 GiB this machine has
    available, MemAvailable"``), as a message prints it in parentheses."""

    bytes: int
    source: str


def _read(path: str) -> str | None:
    """A small file of /proc or /sys, or None (os.read: half the time of open() there)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (OSError, ValueError):
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _fields(text: str | None) -> dict[str, int]:
    """``name value`` or ``name: value kB`` lines as a dict of numbers (kB as bytes)."""
    found: dict[str, int] = {}
    for line in (text or "").splitlines():
        words = line.replace(":", " ").split()
        if len(words) >= 2 and words[1].isdigit():
            found[words[0]] = int(words[1]) * (1024 if words[2:3] == ["kB"] else 1)
    return found


def _number(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def _shared(n_bytes: int, what: str) -> Limit:
    n_bytes = max(0, n_bytes)
    return Limit(int(n_bytes * SHARED_PART), f"nine tenths of the {format_bytes(n_bytes)} {what}")


def _machine() -> Limit | None:
    """The machine's available memory: MemAvailable on Linux (memory free without swapping;
    free swap is not counted: an output that only fits in swap is written at the disk's
    speed, and ``out=`` a memory-mapped file does that on purpose), the available physical
    memory on Windows, the physical memory elsewhere."""
    lines = (_read(MEMINFO) or "").splitlines()
    available = _fields("\n".join(line for line in lines if line.startswith("MemAvailable:"))
                        ).get("MemAvailable")
    if available is not None:
        return _shared(available, "this machine has available, MemAvailable")
    if sys.platform == "win32":  # pragma: no cover - run on Windows only
        return _windows_available()
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no sysconf
        return None
    return _shared(physical, "this machine's memory")


if sys.platform == "win32":  # pragma: no cover - run on Windows only
    def _windows_available() -> Limit | None:
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        *((name, ctypes.c_ulonglong) for name in (
                            "ullTotalPhys", "ullAvailPhys", "ullTotalPageFile",
                            "ullAvailPageFile", "ullTotalVirtual", "ullAvailVirtual",
                            "ullAvailExtendedVirtual"))]

        status = _Status()
        status.dwLength = ctypes.sizeof(_Status)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
        return _shared(int(status.ullAvailPhys), "this machine has available")


def _cgroup_dirs() -> tuple[tuple[int, str], ...]:
    """This process's cgroup folders that may limit its memory, innermost first, with the
    cgroup version of each: the whole chain up to the mount (a limit set on any ancestor
    applies)."""
    dirs: list[tuple[int, str]] = []
    for line in (_read(SELF_CGROUP) or "").splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            version, mount = 2, CGROUP_ROOT
        elif "memory" in controllers.split(","):
            version, mount = 1, os.path.join(CGROUP_ROOT, "memory")
        else:
            continue
        # in a container without its own cgroup namespace, the path is the host's and the
        # mount shows the container's own cgroup at its root
        here = os.path.normpath(os.path.join(mount, path.strip().lstrip("/")))
        if not os.path.isdir(here):
            here = mount
        dirs.append((version, here))
        while here != mount and here != os.path.dirname(here):
            here = os.path.dirname(here)
            dirs.append((version, here))
    return tuple(dirs)


# each version's files: the limit, the use, and the inactive file cache in memory.stat
_CGROUP_FILES = {2: ("memory.max", "memory.current", "inactive_file"),
                 1: ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")}


@functools.cache
def _cgroup_limits() -> tuple[tuple[int, str, int], ...]:
    """(version, folder, limit) of this process's cgroups that limit its memory. Read once,
    as the gate is: a process rarely moves between cgroups or sees its limit change, and
    reading the chain costs more than the rest of the check."""
    found = []
    for version, folder in _cgroup_dirs():
        limit = _number(_read(os.path.join(folder, _CGROUP_FILES[version][0])))
        if limit is not None and limit < _UNLIMITED:  # not "max", nor v1's page-rounded 2**63
            found.append((version, folder, limit))
    return tuple(found)


def _cgroup() -> Limit | None:
    """The room left under this process's cgroup memory limits: limit minus use, the
    inactive file cache counted as free (the kernel reclaims it first), the tightest."""
    best: Limit | None = None
    for version, folder, limit in _cgroup_limits():
        _, use_file, cache_field = _CGROUP_FILES[version]
        used = _number(_read(os.path.join(folder, use_file)))
        if used is None:
            continue
        cache = _fields(_read(os.path.join(folder, "memory.stat"))).get(cache_field, 0)
        found = _shared(limit - max(0, used - cache),
                        f"left under its cgroup's memory limit of {format_bytes(limit)}, "
                        f"with {format_bytes(used)} in use")
        if best is None or found.bytes < best.bytes:
            best = found
    return best


_RLIMITS = (("RLIMIT_AS", "ulimit -v", 0), ("RLIMIT_DATA", "ulimit -d", 5))  # statm's field


def _address_space() -> Limit | None:
    """The room left under this process's RLIMIT_AS (``ulimit -v``) and RLIMIT_DATA
    (``ulimit -d``), from its current sizes (Linux: /proc/self/statm, read only where a
    limit is set)."""
    if sys.platform == "win32":  # pragma: no cover - Windows has no rlimits
        return None
    best: Limit | None = None
    statm: list[str] | None = None
    for name, option, field in _RLIMITS:
        soft = resource.getrlimit(getattr(resource, name))[0]
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        if statm is None:
            statm = (_read(SELF_STATM) or "").split()
        if len(statm) < 6 or not all(word.isdigit() for word in statm):
            return None
        used = int(statm[field]) * os.sysconf("SC_PAGE_SIZE")
        found = Limit(max(0, soft - used),
                      f"its address-space limit {name} ({option}) of {format_bytes(soft)}, "
                      f"with {format_bytes(used)} in use")
        if best is None or found.bytes < best.bytes:
            best = found
    return best


def memory_limit() -> tuple[int | None, str]:
    """The memory one request of this process may take now, and where the number comes from
    (words for parentheses after it): the tightest of the machine's available memory, the room
    under its cgroup's limits, and under its address-space limits (None: nothing known)."""
    found = [limit for limit in (_machine(), _cgroup(), _address_space()) if limit is not None]
    if not found:
        return None, ""
    tightest = min(found, key=lambda limit: limit.bytes)
    return tightest.bytes, tightest.source


@functools.cache
def checked_from() -> int:
    """Requests of at least this many bytes are checked against :func:`memory_limit`:
    :data:`CHECKED_FROM_BYTES`, or a sixteenth of a static limit below 1 GiB (a cgroup's
    limit, ``ulimit -v``), read once."""
    static = [limit for _, _, limit in _cgroup_limits()]
    if sys.platform != "win32":
        static.append(resource.getrlimit(resource.RLIMIT_AS)[0])
    bounds = [n for n in static if n is not None and 0 < n < _UNLIMITED]
    return min([CHECKED_FROM_BYTES, *(n // 16 for n in bounds)])


def format_bytes(n: int) -> str:
    """``1536`` -> ``'1.5 KiB'``: sizes as every message prints them."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


# What one call of the kernels may need besides its output: per thread, a linear scratch
# (_kernels._layout.LINEAR_SCRATCH_BYTES, with a cache of expanded input rows of at most
# _native.LINEAR_DIRECT_CACHE_BYTES where its rows are found by number) and a gathered row's
# positions (_kernels._compiled.MAX_GATHER_SEGMENT entries), and once the float32 piece of a
# float16/bfloat16 result (_kernels._compiled.HALF_SCRATCH_BYTES); a test holds these
# bounds together. Nothing the kernels use grows with the output.
KERNEL_WORKING_BYTES_PER_THREAD = 3 << 20
KERNEL_WORKING_BYTES = 4 << 20

#: The fix for an output beyond memory, wherever the in-memory call makes one.
OUTPUT_FIX = ("use smaller scales, or pass out= a preallocated or memory-mapped array "
              "(numpy.lib.format.open_memmap), or compute it chunk by chunk with "
              "onnx_upsample.dask.upsample (on the command line: onnx-upsample apply, which "
              "writes .npy and zarr outputs chunk by chunk)")


def kernel_working_bytes(x: np.ndarray, threads: int) -> int:
    """Memory a call on ``x`` may need besides its output: the kernels' scratch, and a
    contiguous native-order copy of ``x`` when it is not one already."""
    copy = 0 if (x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative) else x.nbytes
    return copy + KERNEL_WORKING_BYTES + threads * KERNEL_WORKING_BYTES_PER_THREAD


def _needs(n_bytes: int, working_bytes: int) -> str:
    working = f" plus {format_bytes(working_bytes)} of working memory" if working_bytes else ""
    return f"{format_bytes(n_bytes)}{working}"


def check_bytes_fit(n_bytes: int, what: str, fix: str, working_bytes: int = 0) -> None:
    """Refuse ``n_bytes`` (plus ``working_bytes`` needed alongside) beyond what this process
    can take now (:func:`memory_limit`), before anything tries to hold them:
    ``{what} {size}, more than the {limit} this process can take now ({source}); {fix}``,
    ``what`` saying what needs the
    size ("the output would have shape (2, 3) and take", "'model.onnx' is"). Requests below
    :func:`checked_from` pass unread (reading the limits costs more than they do)."""
    if n_bytes + working_bytes < checked_from():
        return
    available, source = memory_limit()
    if available is not None and n_bytes + working_bytes > available:
        raise UpsampleError(
            f"{what} {_needs(n_bytes, working_bytes)}, more than the "
            f"{format_bytes(available)} this process can take now ({source}); {fix}"
        )


def check_fits_in_memory(
    shape: tuple[int, ...], itemsize: int, what: str = "the output",
    fix: str = OUTPUT_FIX, working_bytes: int = 0,
) -> None:
    """Refuse an array (plus ``working_bytes`` needed alongside it) larger than what this
    process can take now (:func:`check_bytes_fit`) before numpy tries to allocate it."""
    check_bytes_fit(math.prod(shape) * itemsize, f"{what} would have shape {shape} and take",
                    fix, working_bytes)


class AllocationError(UpsampleError):
    """An allocation that failed all the same (a ``MemoryError`` from numpy or the kernels),
    worded as the check words a size beyond memory; it keeps what failed, so that an entry
    with words of its own (the command line's ``apply``) can say it its way."""

    def __init__(self, message: str, shape: tuple[int, ...], itemsize: int,
                 working_bytes: int) -> None:
        super().__init__(message)
        self.shape, self.itemsize, self.working_bytes = shape, itemsize, working_bytes

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (str(self), self.shape, self.itemsize, self.working_bytes))


def allocation_failed(
    shape: tuple[int, ...], itemsize: int, what: str = "the output", fix: str = OUTPUT_FIX,
    working_bytes: int = 0,
) -> AllocationError:
    """The error for an allocation that failed all the same: the check's words, to raise
    ``from None`` (one line, and no traceback of numpy's attached for the command line to
    print)."""
    return AllocationError(
        f"{what} would have shape {shape} and take "
        f"{_needs(math.prod(shape) * itemsize, working_bytes)}, which this process could not "
        f"allocate (MemoryError); {fix}", shape, itemsize, working_bytes)
