"""The worker process that runs conformance cases in one runtime.

``python -m onnx_upsample.conformance._worker BACKEND OPTIONS`` (OPTIONS: the backend's
options as a JSON object of strings) loads the backend, answers ``("ready", name, version,
settings)`` or ``("unavailable", message)``, then for each request (a case directory, or
``("model", path, inputs)``: any model file and its inputs by name, for a model-level diff)
first acknowledges it, ``("received",)`` (so that the grader knows whether a worker found
dead died before or after taking the request), then answers ``(kind, payload, peak)``:
``("ok", outputs, ...)``, ``("refused", message, ...)`` (the runtime's explicit
not-supported error, as its backend recognises it), ``("error", message, ...)`` (any other
exception) or ``("adapter-error", message, ...)`` (the adapter broke its contract); ``peak``
is the process's peak resident memory in bytes where it rose during the request
(``getrusage``), else None.

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


def _inputs(case_dir: Path) -> dict[str, Any]:
    """The case's inputs by the model's input names (writable copies: some runtimes write
    into, or refuse, read-only buffers)."""
    import onnx

    from ._suite import read_inputs

    model = onnx.load(str(case_dir / "model.onnx"), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    values = [array.copy() for array in read_inputs(case_dir)]
    return dict(zip(names, values, strict=True))


def _plain_outputs(outputs: list[Any]) -> list[np.ndarray]:
    """Numeric or string arrays only: anything else could not be graded, or unpickled."""
    plain = []
    for index, value in enumerate(outputs):
        if value is None:
            raise AdapterError(f"output {index} is None, not an array")
        array = np.asarray(value)
        if array.dtype.kind == "O" and not all(isinstance(v, str | bytes)
                                               for v in array.reshape(-1)):
            raise AdapterError(
                f"output {index} is not an array of numbers or strings (it holds "
                f"{type(array.reshape(-1)[0]).__name__ if array.size else 'nothing'})")
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


def _peak_bytes() -> int:
    """This process's peak resident memory so far, in bytes."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
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
            return 0
        send(protocol, ("received",))
        before = _peak_bytes()
        if isinstance(request, tuple):
            _, path, inputs = request
            model_path = Path(path)
        else:
            model_path = Path(request) / "model.onnx"
            try:
                inputs = _inputs(Path(request))
            except Exception as error:  # the suite's files, not the runtime: not its fault
                send(protocol, ("harness", f"cannot read the case: {_one_line(error)}",
                                None))
                continue
        try:
            reply: tuple[str, Any] = ("ok", _plain_outputs(backend.run(model_path, inputs)))
        except AdapterError as error:
            reply = (ADAPTER_ERROR, f"the adapter broke its contract: {error}")
        except Exception as error:
            words = _one_line(error)  # recognised whole, sent shortened
            reply = (REFUSED if backend.refuses(words) else ERROR, shorten(words, 600))
        peak = _peak_bytes()
        send(protocol, (*reply, peak if peak > before else None))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
