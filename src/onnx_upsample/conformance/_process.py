"""The grader's worker processes: one runtime each, started on demand, replaced after a
crash or a time-out, so that one bad case costs only itself (``_worker`` is the process's
own side; ``_protocol`` the messages between them)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from ._grade import CRASHED, TIMEOUT
from ._protocol import CLOSED, read, send

__all__ = ["START_TIMEOUT", "Answer", "Worker"]

#: Seconds a worker may take to import and set up its runtime.
START_TIMEOUT = 180.0


@dataclass(frozen=True)
class Answer:
    """A worker's answer to one request: ``status`` is ``"ok"`` (``payload`` the outputs)
    or a grade's kind (``payload`` its message). ``peak_bytes``: the worker's peak resident
    memory while it ran the request, where the system tells it. ``died_after_previous``:
    set when the worker was found dead before this request, having answered the previous
    one (how it died)."""

    status: str
    payload: Any
    peak_bytes: int | None = None
    died_after_previous: str | None = None


class Worker:
    """One worker process, started on demand and replaced after a crash or timeout."""

    def __init__(self, spec: str, options: Mapping[str, str] | None = None) -> None:
        if os.name != "posix":  # pragma: no cover - select() on pipes, process groups
            raise UpsampleError("conformance run needs a POSIX system (Linux or macOS) for "
                                "its worker processes")
        self.spec = spec
        self.options = dict(options or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.errors = tempfile.TemporaryFile()
        self.name, self.version = spec, "unknown"
        self.settings: dict[str, str] = {}

    def start(self) -> None:
        """Start the worker and wait until its runtime is loaded (UpsampleError if it
        cannot be)."""
        self.spawn()
        self.ready()

    def spawn(self) -> None:
        """Start the worker process; :meth:`ready` waits for it (two runtimes load at once
        this way)."""
        self.errors.seek(0)
        self.errors.truncate()
        # PYTHONSAFEPATH: the current directory (an onnx source checkout, say) must not
        # shadow the installed packages in the worker
        environment = {**os.environ, "PYTHONSAFEPATH": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "onnx_upsample.conformance._worker", self.spec,
             json.dumps(self.options)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
            start_new_session=True, env=environment)

    def ready(self) -> None:
        """Wait until the started worker has loaded its runtime."""
        reply = self._read(START_TIMEOUT)
        if not (isinstance(reply, tuple) and reply[0] == "ready"):
            self.stop()
            message = reply[1] if isinstance(reply, tuple) else (
                f"backend {self.spec!r}: its worker did not start ({self._last_words()})")
            raise UpsampleError(message)
        _, self.name, self.version, self.settings = reply

    def _read(self, timeout: float) -> Any:
        assert self.process is not None and self.process.stdout is not None
        try:
            return read(self.process.stdout.fileno(), timeout)
        except Exception as error:  # an answer that cannot be unpickled
            return ("unreadable", f"its answer could not be read ({type(error).__name__}: "
                                  f"{error})")

    def call(self, request: str | tuple[str, str, dict[str, np.ndarray]],
             timeout: float) -> Answer:
        """The worker's answer to ``request`` (a case directory, or ``("model", path,
        inputs)``): status ``"ok"`` with the outputs, or a grade's kind and its message."""
        status, payload = self._call(request, timeout)
        return Answer(status, payload)

    def finish(self) -> str | None:
        """After the last request: how the worker died after answering it, if it did."""
        return None

    def _call(self, request: str | tuple[str, str, dict[str, np.ndarray]],
              timeout: float) -> tuple[str, Any]:
        if self.process is None or self.process.poll() is not None:
            try:
                self.start()
            except UpsampleError as error:  # it started before: grade this case, go on
                return CRASHED, f"the worker did not restart: {error}"
        assert self.process is not None and self.process.stdin is not None
        try:
            send(self.process.stdin, request)  # type: ignore[arg-type]
        except OSError:
            return self._died()
        reply = self._read(timeout)
        if reply is CLOSED:
            return self._died()
        if reply is None:
            self.stop()
            return TIMEOUT, f"no answer within {timeout:g} s (worker stopped)"
        if reply[0] == "unreadable":
            self.stop()
            return CRASHED, reply[1]
        if reply[0] == "harness":
            raise UpsampleError(f"case {Path(str(request)).name}: {reply[1]}; export the "
                                "suite again")
        return reply

    def _died(self) -> tuple[str, str]:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # closed its output but lingers: stop it
            self.stop()
            return CRASHED, "closed its output and did not exit (worker stopped)"
        self.stop()
        how = (f"killed by signal {signal.Signals(-code).name}" if code < 0
               else f"exited with status {code}")
        return CRASHED, f"{how}; {self._last_words()}"

    def _last_words(self) -> str:
        self.errors.seek(0)
        lines = [line for line in self.errors.read().decode("utf-8", "replace").splitlines()
                 if line.strip()]
        return lines[-1][:200] if lines else "it printed nothing"

    def stop(self) -> None:
        """Stop the worker and everything it started (its process group)."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process = None

    def close(self) -> None:
        self.stop()
        self.errors.close()
