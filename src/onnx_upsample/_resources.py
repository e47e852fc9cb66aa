"""What this process may use: memory limits and the one "too large" message.

Every entry point that allocates something proportional to its input (calls, chunked tasks,
the CLI's readers, external-data models) refuses it here first, with one wording, before
numpy or onnx tries the allocation and dies with a MemoryError.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ._errors import UpsampleError

CGROUP_MEMORY_MAX = "/sys/fs/cgroup/memory.max"  # cgroup v2; v1 below
CGROUP_V1_MEMORY_LIMIT = "/sys/fs/cgroup/memory/memory.limit_in_bytes"


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def _cgroup_memory() -> int | None:
    for path in (CGROUP_MEMORY_MAX, CGROUP_V1_MEMORY_LIMIT):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            return int(text)
    return None


def memory_limit() -> tuple[int | None, str]:
    """The memory this process may use, and what sets it: the smaller of the machine's
    physical memory and its cgroup's limit (not the momentarily free memory)."""
    physical, cgroup = _physical_memory(), _cgroup_memory()
    if cgroup is not None and (physical is None or cgroup < physical):
        return cgroup, "this process's cgroup memory limit"
    return physical, "this machine's memory"


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


def kernel_working_bytes(x: np.ndarray, threads: int) -> int:
    """Memory a call on ``x`` may need besides its output: the kernels' scratch, and a
    contiguous native-order copy of ``x`` when it is not one already."""
    copy = 0 if (x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative) else x.nbytes
    return copy + KERNEL_WORKING_BYTES + threads * KERNEL_WORKING_BYTES_PER_THREAD


def check_bytes_fit(n_bytes: int, what: str, fix: str, working_bytes: int = 0) -> None:
    """Refuse ``n_bytes`` (plus ``working_bytes`` needed alongside) beyond the memory this
    process may use (physical memory or the cgroup limit), before anything tries to hold
    them: ``{what} {size}, more than {limit}; {fix}``, ``what`` saying what needs the size
    ("the output would have shape (2, 3) and take", "'model.onnx' is")."""
    available, source = memory_limit()
    if available is not None and n_bytes + working_bytes > available:
        working = (f" plus {format_bytes(working_bytes)} of working memory"
                   if working_bytes else "")
        raise UpsampleError(
            f"{what} {format_bytes(n_bytes)}{working}, more than {source} "
            f"({format_bytes(available)}); {fix}"
        )


def check_fits_in_memory(
    shape: tuple[int, ...], itemsize: int, what: str = "the output",
    fix: str = "use smaller scales, or onnx_upsample.dask.upsample for arrays beyond memory",
    working_bytes: int = 0,
) -> None:
    """Refuse an array (plus ``working_bytes`` needed alongside it) larger than the memory
    this process may use (physical memory or the cgroup limit) before numpy tries to
    allocate it."""
    check_bytes_fit(math.prod(shape) * itemsize, f"{what} would have shape {shape} and take",
                    fix, working_bytes)
