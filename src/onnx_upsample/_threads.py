"""How many threads the compiled kernels use (stdlib only; numba is configured lazily)."""

from __future__ import annotations

import functools
import os

from ._errors import UpsampleError

ENV_VAR = "ONNX_UPSAMPLE_NUM_THREADS"

_requested: int | None = None


@functools.cache
def max_threads() -> int:
    """The most threads the kernels can run: numba's pool size (all cores by default)."""
    configured = os.environ.get("NUMBA_NUM_THREADS")
    if configured and configured.strip().isdigit() and int(configured) > 0:
        return int(configured)
    return os.cpu_count() or 1


def _check(n: object, source: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{source} is {n!r}; expected a whole number of threads >= 1")
    limit = max_threads()
    if not 1 <= n <= limit:
        raise UpsampleError(
            f"{source} is {n}; expected a number of threads from 1 to {limit} (this "
            "machine's cores; set NUMBA_NUM_THREADS before the first call to allow more)"
        )
    return n


def set_num_threads(n: int) -> None:
    """Set the number of threads ``upsample`` uses (default: all cores).

    Overrides the environment variable ``ONNX_UPSAMPLE_NUM_THREADS``. Results do not
    depend on the thread count.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    UpsampleError
        If ``n`` is below 1 or above the number of threads available.
    """
    global _requested
    _requested = _check(n, "n")


def num_threads() -> int:
    """The thread count for the next call: set_num_threads, else the env var, else all."""
    if _requested is not None:
        return _requested
    configured = os.environ.get(ENV_VAR)
    if configured is not None:
        try:
            value: object = int(configured)
        except ValueError:
            value = configured
        return _check(value, f"the environment variable {ENV_VAR}")
    return max_threads()
