"""First-use steps that a ``fork`` cannot cut in half (stdlib only).

The package loads its heavy parts lazily: the compiled kernels at the first call that needs
them, ``ml_dtypes`` at the first torch bfloat16 tensor. An import that another thread is in
the middle of when the process forks is inherited half-done: the child sees the module in
``sys.modules``, marked as initialising, with its import lock held by a thread that does not
exist in the child, and its first call waits for that lock forever. (A thread pool starting
to upsample while the main thread forks workers hung 56 of 60 children.)

So every such step runs under :func:`first_use`, one lock that a fork takes before it
forks (``os.register_at_fork``): a fork waits for a first use in progress to finish, and the
child inherits either nothing or the finished module, never half of it. A fork made from
inside a first use on the same thread (a signal handler's) does not wait for itself; the
child continues that same import on that same thread. Once loaded, the modules are read
without the lock: the lock costs a fraction of a microsecond, and only calls that miss the
call cache take it.

The compiled kernels' own thread pool has fork handlers of its own (``_native/pool.c``), and
the output buffer pool takes no lock at all (``_buffers.py``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

__all__ = ["first_use"]

_lock = threading.Lock()
_holder: int | None = None  # the thread running a first use, while one runs
_fork_holds = False  # whether the fork in progress took the lock (released after it)


@contextlib.contextmanager
def first_use() -> Iterator[None]:
    """Run the block (a lazy import, a one-time load) so that no fork can split it.

    Re-entrant on one thread: a first use inside another runs directly.
    """
    global _holder
    me = threading.get_ident()
    if _holder == me:
        yield
        return
    with _lock:
        _holder = me
        try:
            yield
        finally:
            _holder = None


def _before_fork() -> None:
    global _fork_holds
    # a fork from inside this thread's own first use (a signal handler) cannot wait for it
    if _holder != threading.get_ident():
        _lock.acquire()
        _fork_holds = True


def _after_fork() -> None:
    global _fork_holds
    if _fork_holds:
        _fork_holds = False
        _lock.release()


if hasattr(os, "register_at_fork"):  # every POSIX platform; Windows has no fork
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork,
                        after_in_child=_after_fork)
