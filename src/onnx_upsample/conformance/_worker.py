"""The worker process that runs conformance cases in one runtime.

``python -m onnx_upsample.conformance._worker BACKEND OPTIONS`` (OPTIONS: the backend's
options as a JSON object of strings) loads the backend, answers ``("ready", name, version,
settings)`` or ``("unavailable", message)``, then for each request, ``("model", path,
inputs)`` (a model file and its inputs by name: the grader writes each case's model where
no other case's files are, so that a runtime that writes beside its model, or over it,
alters nothing the grader reads), first acknowledges it, ``("received",)`` (so that the
grader knows whether a worker found dead died before or after taking the request), then
answers ``(kind, payload, peak, children_peak)``: ``("ok", outputs, ...)`` (plain numpy
arrays: a subclass, a memory map or a masked array as its plain data, a string subclass as
a string), ``("refused", message, ...)`` (the runtime's explicit not-supported error, as
its backend recognises it), ``("error", message, ...)`` (any other exception) or
``("adapter-error", message, ...)`` (the adapter broke its contract); ``peak`` is the
process's peak resident memory in bytes where it rose during the request (``getrusage``),
else None, and ``children_peak`` the largest peak of the processes it started that ended
during the request (a compiler, say), where it rose. When its requests end it says
``("bye",)`` and exits, once the runtime's threads (not daemons) have ended: a worker
that exits without it died (``os._exit(0)`` in a runtime's thread is a death too).

The protocol's pipes are out of the runtime's reach: messages go out on a duplicate of the
process's original standard output, and anything the runtime prints goes to standard error
instead, so it cannot corrupt the protocol; requests come in on a duplicate of its original
standard input, which is /dev/null from then on, so a runtime that reads or closes its
standard input takes nothing from the grader.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ._backend_base import AdapterError, BackendUnavailableError
from ._backends import load
from ._grade import ADAPTER_ERROR, ERROR, REFUSED
from ._protocol import receive, send, shorten

_LOCATION = re.compile(r"^Exception from |failed at \S+:\d+:?$")
# Rust runtimes (tract) append a backtrace of dozens of frames
_BACKTRACE = re.compile(r"^Stack backtrace:")
# C++ runtimes (onnxruntime) put the source file, line and function signature before the
# words that say what is wrong
_SOURCE = re.compile(r"/?[\w/.-]+\.(?:h|hpp|cc|cpp|c):\d+ [\w:~<>]+\([^)]*\)"
                     r"(?: const)?(?: \[with [^\]]*\])?\s*")


def _one_line(error: BaseException) -> str:
    """The error's type and its informative words on one line (C++ runtimes wrap the
    message in source locations, e.g. "Exception from src/inference/src/cpp/core.cpp:84:")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    cut = next((i for i, line in enumerate(lines) if _BACKTRACE.search(line)), len(lines))
    lines = lines[:cut]
    words = [line for line in lines if not _LOCATION.search(line)] or lines
    return " ".join(f"{type(error).__name__}: {_SOURCE.sub('', ' '.join(words))}".split())


def _plain_text(value: Any) -> str | bytes:
    """A string element as a plain ``str`` or ``bytes``: a subclass would be pickled by
    reference to its class, which the grader does not import."""
    return bytes(value) if isinstance(value, bytes) else str.__str__(value)


def _plain_outputs(outputs: list[Any]) -> list[np.ndarray]:
    """Numeric or string arrays only, as plain arrays: anything else could not be graded,
    or unpickled by the grader."""
    plain = []
    for index, value in enumerate(outputs):
        if value is None:
            raise AdapterError(f"output {index} is None, not an array")
        # a subclass (a memory map, a masked array: its data, mask or not) as a plain array
        array = np.asarray(value)
        if array.dtype.kind == "T":  # numpy's variable-width strings: as Python strings
            array = array.astype(object)
        if array.dtype.kind == "O":
            flat = array.reshape(-1)
            if not all(isinstance(v, str | bytes) for v in flat):
                raise AdapterError(
                    f"output {index} is not an array of numbers or strings (it holds "
                    f"{type(flat[0]).__name__ if array.size else 'nothing'})")
            array = np.fromiter((_plain_text(v) for v in flat), dtype=object,
                                count=flat.size).reshape(array.shape)
        if array.dtype.kind == "V" and array.dtype.names:
            raise AdapterError(f"output {index} is a structured array")
        plain.append(array)
    return plain


def _no_core_files() -> None:
    """A crashing runtime must die at once: writing a core file can take a minute."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _peak_bytes(children: bool = False) -> int:
    """This process's peak resident memory so far, in bytes; with ``children``, the largest
    of the processes it started that have ended (and were waited for)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return 0
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    peak = resource.getrusage(who).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # Linux: KiB


def _own_pipes() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's pipes, moved to descriptors of their own (not inherited by anything
    the runtime starts), and /dev/null and stderr left in their places."""
    protocol = os.fdopen(os.dup(1), "wb")
    requests = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)  # the runtime's own prints go to stderr
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)
    return protocol, requests


def main(argv: list[str]) -> int:
    _no_core_files()
    protocol, requests = _own_pipes()
    warnings.simplefilter("ignore")

    try:
        backend = load(argv[0], json.loads(argv[1]) if len(argv) > 1 else {})
    except BackendUnavailableError as error:
        send(protocol, ("unavailable", str(error)))
        return 0
    except Exception as error:
        send(protocol, ("unavailable", f"backend {argv[0]!r} failed to load: "
                                       f"{shorten(_one_line(error), 600)}"))
        return 0
    send(protocol, ("ready", backend.name, backend.version, dict(backend.settings)))
    while True:
        try:
            request = receive(requests)
        except EOFError:
            # the runtime's own threads first: one that kills the process (os._exit, a
            # crash) does so before the goodbye, so that it is graded
            for thread in threading.enumerate():
                if thread is not threading.current_thread() and not thread.daemon:
                    thread.join()
            send(protocol, ("bye",))
            return 0
        send(protocol, ("received",))
        before, children_before = _peak_bytes(), _peak_bytes(children=True)
        _, path, inputs = request
        # writable: some runtimes write into, or refuse, read-only buffers
        inputs = {name: value if not isinstance(value, np.ndarray) or value.flags.writeable
                  else value.copy() for name, value in inputs.items()}
        try:
            reply: tuple[str, Any] = ("ok", _plain_outputs(backend.run(Path(path), inputs)))
        except AdapterError as error:
            reply = (ADAPTER_ERROR, f"the adapter broke its contract: {error}")
        except Exception as error:
            words = _one_line(error)  # recognised whole, sent shortened
            reply = (REFUSED if backend.refuses(words) else ERROR, shorten(words, 600))
        peak, children = _peak_bytes(), _peak_bytes(children=True)
        send(protocol, (*reply, peak if peak > before else None,
                        children if children > children_before else None))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
