"""The lazy import of an optional, heavy module, safe under forks and signals.

The kernels load with the package (``import onnx_upsample`` takes about 4 ms more for them
here, most of it the Python modules around the compiled one, which itself takes 0.3 ms; the
first call is as much faster), so that a call imports nothing. A lazy import inside a
call could be cut in half twice over. By a fork: a child inherits a module that another
thread was importing marked as initialising, with its import lock held by a thread the
child does not have, and its first import of that module waits forever (a thread pool
making first calls while the main thread forked hung 56 of 60 children). By a signal
handler (or a finalizer) that calls ``upsample`` on the importing thread itself: it finds
the module half initialised (47 of 60 timer signals during a first call raised
``ImportError: cannot import name 'Window' from partially initialized module``), and on
Python 3.11 an import it starts inside importlib's own locking corrupts the import it
interrupted (``KeyError``).

What is still imported lazily goes through :func:`load`: ``ml_dtypes`` (most of a
second here), at the first torch bfloat16 tensor. It imports under one re-entrant lock that
a fork takes before it forks (``os.register_at_fork``): a fork waits for a load in progress
on another thread, and the child inherits either nothing or the finished module. The lock is
re-entrant, so that a fork or a load from a signal handler on the thread that holds it does
not wait for itself, at any instant (there is no step between taking the lock and recording
who holds it). A load re-entered on the thread that is importing (a signal handler running
in the middle of that import) raises :class:`~onnx_upsample.UpsampleError` rather than
reading the half-imported module. A module loaded once is returned without the lock.

One hazard is Python's and remains: on Python 3.11 a signal handler that runs the process's
first ``load`` while its thread is inside another import's locking may corrupt that import.
A program that upsamples torch bfloat16 tensors in signal handlers imports ``ml_dtypes``
first.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType

from ._errors import UpsampleError

__all__ = ["load"]

_lock = threading.RLock()  # re-entrant: held by its thread, a fork's handler takes it again
_importing: str | None = None  # the module being imported, by the lock's holder
_loaded: dict[str, ModuleType] = {}  # read without the lock: a dict lookup is atomic


def load(name: str) -> ModuleType:
    """The module ``name``, imported at its first use in a way that no fork can cut in half.

    Raises
    ------
    ImportError
        The module is not installed (the caller words the ``pip install``).
    UpsampleError
        Called on the thread that is importing ``name``, from a signal handler (or a
        finalizer) that interrupted that import.
    """
    global _importing
    module = _loaded.get(name)
    if module is not None:
        return module
    with _lock:
        module = _loaded.get(name) or _finished(name)
        if module is not None:
            _loaded[name] = module
            return module
        if _importing is not None:  # only this thread can be inside the lock: re-entered
            raise UpsampleError(
                f"{name} is needed while this thread is still importing {_importing} (a "
                "signal handler or finalizer interrupted that import); import "
                f"{_importing} before installing the handler")
        _importing = name
        try:
            module = importlib.import_module(name)
        finally:
            _importing = None
        _loaded[name] = module
        return module


def _finished(name: str) -> ModuleType | None:
    """``name`` if it is in ``sys.modules`` and fully imported (importlib marks a module it
    is executing as initialising), else None."""
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def _before_fork() -> None:
    _lock.acquire()  # waits for another thread's load; the holder's own fork takes it again


def _after_fork() -> None:
    _lock.release()


if hasattr(os, "register_at_fork"):  # every POSIX platform; Windows has no fork
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork,
                        after_in_child=_after_fork)
