"""A conformance worker's memory: its limit (the default, ``--memory-limit`` and
``memory_limit=`` read and checked) and, on Linux, what the process holds, read from /proc:
its resident memory, its peak, and the peak reset; the processes it started, and the share
of memory each holds (stdlib only; ``_process`` enforces the limit).
"""

from __future__ import annotations

import fractions
import numbers
import os
import re

from .._errors import UpsampleError
from .._spec.spelling import spelled

__all__ = ["DEFAULT_MEMORY_LIMIT", "check_memory_limit", "descendants", "family",
           "parse_memory_limit", "peak", "proportional", "reset_peak", "resident"]


def _default_memory_limit() -> int:
    """4 GiB, or half of this machine's physical memory where that is less."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no sysconf
        return 4 << 30
    return min(4 << 30, max(physical // 2, 1))


#: A worker's memory limit unless one is given, in bytes: 4 GiB, or half of this machine's
#: physical memory where that is less. A conformance case is small (its model and data a
#: few MiB at most), and the runtimes' workers peak at 75-460 MiB on suite 2.1 (measured
#: on Linux x86-64: onnx's reference with onnx-upsample 75, onnxruntime 1.32 100, tinygrad
#: 120, tract 130, OpenVINO 2026.4 130, PyTorch 2.13 260, TVM 0.27 460), so 4 GiB stops
#: only a runtime that leaks or runs away; half the machine leaves the grader and
#: everything else running their memory before the system's out-of-memory killer chooses
#: whom to kill.
DEFAULT_MEMORY_LIMIT = _default_memory_limit()

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# 4Gi as Kubernetes writes it too
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(?:([KMGT])(?:I?B|I)?|B)?", re.IGNORECASE)
_SIZES = ("a size such as 4G, 512M, 1.5GiB or 2000000000 (bytes; K, M, G and T are powers "
          "of 1024)")
#: The least limit taken: a worker holds about 60-100 MiB once Python, numpy and onnx are
#: loaded, before any runtime; a limit below it would grade every case out of memory.
MIN_MEMORY_LIMIT = 256 << 20


def _too_small(given: str) -> UpsampleError:
    return spelled(lambda s: (
        f"{s.argument('memory_limit')} is {given}, below {MIN_MEMORY_LIMIT >> 20} MiB: a "
        "worker holds about 100 MiB before its runtime loads; give 256M or more, or "
        f"{'none' if s.options else 'None'} for no limit"))


def parse_memory_limit(text: str) -> int | None:
    """The memory limit ``--memory-limit`` gives, in bytes: ``4G``, ``512M``, ``1.5GiB``,
    ``2000000000`` (bytes), or ``none`` for no limit (None); case-insensitive, the units
    K, M, G and T (``KB``, ``KiB``, ...) powers of 1024.

    Raises
    ------
    UpsampleError
        If ``text`` is none of these, or not above 0 (worded for ``--memory-limit`` and
        ``memory_limit=``).
    """
    words = text.strip()
    if words.lower() == "none":
        return None
    match = _SIZE.fullmatch(words)
    size = (int(fractions.Fraction(match[1]) * _UNITS[(match[2] or "").upper()])
            if match else 0)
    if size <= 0:
        raise spelled(lambda s: (
            f"{s.argument('memory_limit')} is {s.value(text)}; give {_SIZES}, or "
            f"{'none' if s.options else 'None'} for no limit"))
    if size < MIN_MEMORY_LIMIT:
        raise _too_small(text)
    return size


def check_memory_limit(value: object) -> int | None:
    """``memory_limit`` (bytes a worker's resident memory may reach; None: no limit) as an
    int.

    Raises
    ------
    TypeError
        If it is neither a whole number nor None.
    UpsampleError
        If it is not above 0 (worded for ``memory_limit=`` and ``--memory-limit``).
    """
    if value is None:
        return None
    if isinstance(value, str):  # as --memory-limit takes it: '2G'
        return parse_memory_limit(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"memory_limit is {value!r}; expected a whole number of bytes such as "
                        f"4 * 2**30, a size such as '2G', or None for no limit")
    if value <= 0:
        raise spelled(lambda s: (
            f"{s.argument('memory_limit')} is {value}; give {_SIZES}, or none for no limit"
            if s.options else
            f"memory_limit is {value}; expected a number of bytes > 0 such as 4 * 2**30, or "
            "None for no limit"))
    if value < MIN_MEMORY_LIMIT:
        raise _too_small(str(value))
    return int(value)


# ------------------------------------------------- a process's memory, read from /proc (Linux)

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _proc(pid: int, name: str) -> bytes | None:
    """A small file of /proc/PID, or None where it cannot be read (no /proc, gone)."""
    try:
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 14)
    except OSError:
        return None
    finally:
        os.close(fd)


def resident(pid: int) -> int | None:
    """The process's resident memory in bytes (statm's second field: cheaper than
    status)."""
    words = (_proc(pid, "statm") or b"").split()
    return int(words[1]) * _PAGE if len(words) > 1 and words[1].isdigit() else None


def peak(pid: int) -> int | None:
    """The process's peak resident memory (VmHWM) in bytes, since it started or since
    :func:`reset_peak`."""
    for line in (_proc(pid, "status") or b"").splitlines():
        if line.startswith(b"VmHWM:"):
            words = line.split()
            return int(words[1]) * 1024 if len(words) > 1 and words[1].isdigit() else None
    return None


def reset_peak(pid: int) -> bool:
    """Reset the process's peak resident memory to its current size (Linux 4.0 and later;
    False where it cannot be)."""
    try:
        fd = os.open(f"/proc/{pid}/clear_refs", os.O_WRONLY)
    except OSError:
        return False
    try:
        return os.write(fd, b"5") == 1
    except OSError:
        return False
    finally:
        os.close(fd)


def descendants(pid: int) -> list[int]:
    """The live processes ``pid`` started, and theirs (``/proc/PID/task/TID/children``:
    Linux 3.5 and later; none where it cannot be read). A process that left its parent's
    session is one still; one whose parent has exited is not (it is init's)."""
    found: list[int] = []
    waiting = [pid]
    while waiting:
        parent = waiting.pop()
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for thread in threads:
            for word in (_proc(parent, f"task/{thread}/children") or b"").split():
                if word.isdigit() and int(word) not in found:
                    found.append(int(word))
                    waiting.append(int(word))
    return found


def proportional(pid: int) -> int | None:
    """The process's proportional share of memory (``Pss``, ``/proc/PID/smaps_rollup``:
    Linux 4.14 and later) in bytes: a page it shares with N processes counts 1/N, so that
    a forked process and its parent together count their shared pages once. A walk of its
    page tables (about 3 ms a GiB): for the few processes a worker starts, not at every
    reading of the worker."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as stream:
            for line in stream:
                if line.startswith(b"Pss:"):
                    words = line.split()
                    return int(words[1]) * 1024 if words[1].isdigit() else None
    except OSError:
        return None
    return None


def family(pid: int) -> tuple[int, int] | None:
    """The memory ``pid`` and the live processes it started hold together, each counted by
    its share (:func:`proportional`), and how many it started; None where it started none
    (or they cannot be seen)."""
    started = descendants(pid)
    if not started:
        return None
    shares = [proportional(process) for process in (pid, *started)]
    return sum(share for share in shares if share is not None), len(started)
