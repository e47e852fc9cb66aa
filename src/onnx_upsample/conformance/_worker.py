"""The worker process that runs conformance cases in one runtime.

``python -m onnx_upsample.conformance._worker BACKEND`` loads the backend, answers
``("ready", name, version)`` or ``("unavailable", message)``, then for each request (a case
directory) answers ``("ok", outputs)`` or ``("error", message)``. Messages are
length-prefixed pickles on the process's original standard output; anything the runtime
prints goes to standard error instead, so it cannot corrupt the protocol.
"""

from __future__ import annotations

import os
import pickle
import re
import resource
import struct
import sys
import warnings
from pathlib import Path
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")


def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


_LOCATION = re.compile(r"^Exception from |failed at \S+:\d+:?$")


def _one_line(error: BaseException) -> str:
    """The error's type and its informative words on one line (C++ runtimes wrap the
    message in source locations, e.g. "Exception from src/inference/src/cpp/core.cpp:84:")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    words = [line for line in lines if not _LOCATION.search(line)] or lines
    return f"{type(error).__name__}: {' '.join(words)}"[:300]


def _inputs(case_dir: Path) -> dict[str, Any]:
    import onnx
    from onnx import numpy_helper

    files = sorted((case_dir / "test_data_set_0").glob("input_*.pb"),
                   key=lambda p: int(p.stem.split("_")[1]))
    model = onnx.load(str(case_dir / "model.onnx"), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    values = []
    for path in files:
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        # a writable copy: some runtimes write into (or refuse) read-only buffers
        values.append(numpy_helper.to_array(tensor).copy())
    return dict(zip(names, values, strict=True))


def main(argv: list[str]) -> int:
    # a crashing runtime must die at once: writing a core file can take a minute
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
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
            outputs = backend.run(case_dir / "model.onnx", _inputs(case_dir))
            reply: tuple[str, Any] = ("ok", outputs)
        except Exception as error:
            reply = ("error", _one_line(error))
        send(protocol, reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
