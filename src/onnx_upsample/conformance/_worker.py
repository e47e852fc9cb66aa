"""The worker process that runs conformance cases in one runtime.

``python -m onnx_upsample.conformance._worker BACKEND`` loads the backend, answers
``("ready", name, version)`` or ``("unavailable", message)``, then for each request (a case
directory) answers ``("ok", outputs)`` or ``("error", message)``. Messages are
length-prefixed pickles on the process's original standard output; anything the runtime
prints goes to standard error instead, so it cannot corrupt the protocol.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ._protocol import receive, send

_LOCATION = re.compile(r"^Exception from |failed at \S+:\d+:?$")


def _one_line(error: BaseException) -> str:
    """The error's type and its informative words on one line (C++ runtimes wrap the
    message in source locations, e.g. "Exception from src/inference/src/cpp/core.cpp:84:")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    words = [line for line in lines if not _LOCATION.search(line)] or lines
    return f"{type(error).__name__}: {' '.join(words)}"[:300]


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
        array = np.asarray(value)
        if array.dtype.kind == "O" and not all(isinstance(v, str | bytes)
                                               for v in array.reshape(-1)):
            raise TypeError(f"output {index} is not an array of numbers or strings (it holds "
                            f"{type(array.reshape(-1)[0]).__name__ if array.size else 'nothing'})")
        if array.dtype.kind == "V" and array.dtype.names:
            raise TypeError(f"output {index} is a structured array")
        plain.append(array)
    return plain


def _no_core_files() -> None:
    """A crashing runtime must die at once: writing a core file can take a minute."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv: list[str]) -> int:
    _no_core_files()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the runtime's own prints go to stderr
    requests = sys.stdin.buffer
    warnings.simplefilter("ignore")
    from ._backends import BackendUnavailableError, load

    try:
        backend = load(argv[0])
    except BackendUnavailableError as error:
        send(protocol, ("unavailable", str(error)))
        return 0
    except Exception as error:
        send(protocol, ("unavailable", f"backend {argv[0]!r} failed to load: "
                                       f"{_one_line(error)}"))
        return 0
    send(protocol, ("ready", backend.name, backend.version))
    while True:
        try:
            request = receive(requests)
        except EOFError:
            return 0
        case_dir = Path(request)
        try:
            inputs = _inputs(case_dir)
        except Exception as error:  # the suite's files, not the runtime: not its fault
            send(protocol, ("harness", f"cannot read the case: {_one_line(error)}"))
            continue
        try:
            reply: tuple[str, Any] = ("ok", _plain_outputs(backend.run(
                case_dir / "model.onnx", inputs)))
        except Exception as error:
            reply = ("error", _one_line(error))
        send(protocol, reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
