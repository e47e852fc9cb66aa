"""The grader's worker processes: one runtime each, started on demand, replaced after a
crash, a time-out or too much memory, so that one bad case costs only itself (``_worker`` is
the process's own side; ``_protocol`` the messages between them).

A worker cannot fool the grader:

- **Its pipes.** The worker takes its requests and sends its answers on duplicates of its
  original standard input and output (standard input is /dev/null, standard output its
  standard error from then on), so a runtime that reads, writes or closes them breaks
  nothing; and no pipe's error (a broken pipe, data left unsent) reaches the caller: a
  worker found dead is graded, never raised. Its answers are not trusted either: they may
  hold only arrays and plain values (what else a pickle builds could run the runtime's code
  in the grader), an answer longer than the worker's memory limit is refused unread, and a
  worker that dies while a process it started holds its pipes open is graded crashed when
  it dies, not timed out.
- **A death after answering.** The worker acknowledges each request when it takes it. A
  worker found dead before it took the next request died after answering the previous one:
  :attr:`Answer.died_after_previous` says how, and the caller grades that case crashed
  (the request goes to a new worker). After the last request, :meth:`Worker.finish` closes
  the worker's requests and waits a moment (:data:`FINISH_WAIT`) for its goodbye and a
  clean exit, so that a death after the last answer is seen too (an exit without the
  goodbye, whatever its status: ``os._exit(0)`` in a runtime's thread). A worker that dies
  while a case runs, whenever the cause was set off, is graded crashed on that case.
- **Memory.** Each worker has a memory limit (:data:`DEFAULT_MEMORY_LIMIT`; ``None``: none).
  On Linux the grader reads the worker's resident memory (``/proc/PID/statm``) every
  :data:`WATCH_EVERY` seconds while it waits for an answer, and stops the worker as soon as
  it is over the limit; the case is graded ``out-of-memory``. Before each request it resets
  the worker's peak (``/proc/PID/clear_refs``, Linux 4.0 and later) and reads it after the
  answer (``VmHWM``), so that a spike between two reads is graded ``out-of-memory`` too,
  and each :class:`Answer` carries its case's peak (:attr:`Answer.peak_bytes`). The
  processes the worker started (a compiler, a pool, a forked helper) count too: every
  :data:`FAMILY_EVERY` seconds and after each answer, the worker and those still running
  are counted by their shares of memory (``Pss``: pages a forked process shares with its
  parent count once), and the worker tells the largest peak of those that ended during the
  case. Where there is no /proc (macOS), the worker reports its peak (``getrusage``) with
  each answer where it rose during the request: the limit is checked after each answer
  only, and nothing stops a worker during a case.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .._resources import format_bytes
from ._grade import CRASHED, OUT_OF_MEMORY, TIMEOUT
from ._memory import (
    DEFAULT_MEMORY_LIMIT,
    check_memory_limit,
    family,
    parse_memory_limit,
    reset_peak,
    resident,
)
from ._memory import peak as peak_of
from ._protocol import CLOSED, STOPPED, MessageTooLargeError, not_plain, read, send

__all__ = ["DEFAULT_MEMORY_LIMIT", "FINISH_WAIT", "START_TIMEOUT", "WATCH_EVERY", "Answer",
           "Worker", "check_memory_limit", "parse_memory_limit"]

#: Seconds a worker may take to import and set up its runtime.
START_TIMEOUT = 180.0
#: Seconds :meth:`Worker.finish` waits for the worker to exit once its requests are closed:
#: a crash set off by the last case (a runtime's thread, a destructor) shows within this;
#: a worker still running after it is stopped, not graded (a large runtime can take longer
#: to unload, which is no fault).
FINISH_WAIT = 2.0
#: Seconds between two readings of a worker's resident memory while it runs a case: about
#: 15 us a reading, and what a runtime can allocate in between is caught by the peak read
#: after the answer.
WATCH_EVERY = 0.025
#: Seconds between two countings of the processes a worker started (a compiler, a pool, a
#: forked helper) while it runs a case, and the memory it and they hold together: the
#: shares are a walk of each one's page tables (about 3 ms a GiB).
FAMILY_EVERY = 0.25


@dataclass(frozen=True)
class Answer:
    """A worker's answer to one request: ``status`` is ``"ok"`` (``payload`` the outputs)
    or a grade's kind (``payload`` its message). ``peak_bytes``: the worker's peak resident
    memory while it ran the request, where the system tells it. ``died_after_previous``:
    set when the worker was found dead before it took this request, having answered the
    previous one (how it died: ``"killed by signal SIGSEGV after answering; <its last line
    on stderr>"``); this request then went to a new worker."""

    status: str
    payload: Any
    peak_bytes: int | None = None
    died_after_previous: str | None = None


@dataclass
class _Before:
    """What the grader knew of the worker's memory when it sent a request."""

    resident: int | None
    reset: bool
    peak: int | None


class Worker:
    """One worker process, started on demand and replaced after a crash, a timeout or going
    over its memory limit; once a replacement does not start (within
    :data:`START_TIMEOUT`), every later request is graded crashed at once, not after as
    long again.

    Parameters
    ----------
    spec : str
        The backend, as ``conformance run --backend`` names it.
    options : mapping of str to str, optional
        The backend's options.
    memory_limit : int or None
        Bytes the worker's resident memory may reach (:data:`DEFAULT_MEMORY_LIMIT`); None:
        no limit. Not an address-space limit (``RLIMIT_AS``): runtimes reserve several
        times the memory they use (after one case on a 2-core machine: onnxruntime 300 MiB
        of address space for 92 MiB resident, OpenVINO 590 for 113, TVM 1.1 GiB for 413),
        and more with each thread (its stack, glibc's 64 MiB malloc arena), so such a limit
        fails them on a many-core machine for memory they never touch.
    """

    def __init__(self, spec: str, options: Mapping[str, str] | None = None,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        if os.name != "posix":  # pragma: no cover - select() on pipes, process groups
            raise UpsampleError("conformance run needs a POSIX system (Linux or macOS) for "
                                "its worker processes")
        self.spec = spec
        self.options = dict(options or {})
        self.memory_limit = check_memory_limit(memory_limit)
        self.process: subprocess.Popen[bytes] | None = None
        self.errors = tempfile.TemporaryFile()
        self.name, self.version = spec, "unknown"
        self.settings: dict[str, str] = {}
        # whether the running worker answered the last request it took; its resident memory
        # once it was ready (None: not readable here); what it used when found over its limit
        self._answered = False
        self._started_with: int | None = None
        self._used = 0
        # set by a read that stopped waiting because the worker was gone
        self._dead = False
        # why the worker did not restart, once it did not: not tried again
        self._no_restart: str | None = None
        # when the processes the worker started were last counted; how many were, when
        # they and the worker were found over the limit together
        self._family_at = 0.0
        self._family = 0

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
        self._answered = False
        self._dead = False
        self._family_at, self._family = 0.0, 0
        # PYTHONSAFEPATH: the current directory (an onnx source checkout, say) must not
        # shadow the installed packages in the worker
        environment = {**os.environ, "PYTHONSAFEPATH": "1"}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "onnx_upsample.conformance._worker", self.spec,
                 json.dumps(self.options)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                start_new_session=True, env=environment)
        except OSError as error:  # out of processes or descriptors: nothing to grade
            raise UpsampleError(f"backend {self.spec!r}: its worker process could not be "
                                f"started ({error})") from None

    def ready(self) -> None:
        """Wait until the started worker has loaded its runtime."""
        reply = self._read(START_TIMEOUT)
        if not (isinstance(reply, tuple) and reply[0] == "ready"):
            self.stop()
            message = reply[1] if isinstance(reply, tuple) else (
                f"backend {self.spec!r}: its worker did not start ({self._last_words()})")
            raise UpsampleError(message)
        _, self.name, self.version, self.settings = reply
        assert self.process is not None
        self._started_with = resident(self.process.pid)

    def _read(self, timeout: float, watch: bool = False) -> Any:
        """The next message (see :func:`~._protocol.read`); ``watch``: stop waiting when
        the worker is over its memory limit (:data:`STOPPED`). A worker found dead with
        nothing left to read is :data:`CLOSED`, though a process it started may hold its
        pipe open."""
        assert self.process is not None and self.process.stdout is not None
        try:
            reply = read(self.process.stdout.fileno(), max(timeout, 0.0),
                         self._over_limit if watch else self._gone, WATCH_EVERY,
                         self.memory_limit)
        except MessageTooLargeError as error:
            return ("unreadable", f"its answer could not be read (it says it is "
                                  f"{format_bytes(error.size)} long, more than the worker's "
                                  f"memory limit of {format_bytes(error.limit)})")
        except Exception as error:  # an answer that cannot be unpickled, or is not allowed
            return ("unreadable", f"its answer could not be read ({type(error).__name__}: "
                                  f"{error})")
        return CLOSED if reply is STOPPED and self._dead else reply

    def _gone(self) -> bool:
        """Whether the worker has exited with nothing left in its pipe for the grader (a
        process it started may hold the pipe open: its end is never seen)."""
        assert self.process is not None and self.process.stdout is not None
        if self.process.poll() is None:
            return False
        fd = self.process.stdout.fileno()
        self._dead = not select.select([fd], [], [], 0)[0]
        return self._dead

    def call(self, request: tuple[str, str, dict[str, np.ndarray]], timeout: float) -> Answer:
        """The worker's answer to ``request``, ``("model", path, inputs)`` (a model file and
        its inputs by name): status ``"ok"`` with the outputs, or a grade's kind and its
        message. ``timeout`` counts from when the request is sent (a worker's start is not
        counted)."""
        died_after = self._dead_after_answering()
        for _ in range(2):  # once more where the worker died before taking the request
            if self.process is None:
                if self._no_restart is not None:  # one hung restart costs START_TIMEOUT
                    return Answer(CRASHED, self._no_restart, None, died_after)
                try:
                    self.start()
                except UpsampleError as error:  # it started before: grade this, go on
                    self._no_restart = f"the worker did not restart: {error}"
                    return Answer(CRASHED, self._no_restart, None, died_after)
            assert self.process is not None
            answered, self._answered = self._answered, False
            before = self._before()
            deadline = time.monotonic() + timeout
            taken = self._hand_over(request, deadline, timeout, before)
            if taken is True:
                status, payload, peak = self._answer(deadline, timeout, before)
                return Answer(status, payload, peak, died_after)
            if taken is False and answered and died_after is None:
                died_after = self._death(" after answering")
                continue
            if taken is False:
                return Answer(CRASHED, self._death(""), None, died_after)
            status, message = taken
            return Answer(status, message, None, died_after)
        raise AssertionError("unreachable: a new worker has answered nothing")

    def _dead_after_answering(self) -> str | None:
        """How the worker died, where it is found dead having answered its last request
        (None: alive, or never asked; a dead one is cleared away)."""
        if self.process is None or self.process.poll() is None:
            return None
        if not self._answered:
            self.stop()
            return None
        return self._death(" after answering")

    def _before(self) -> _Before:
        """The worker's memory as a request goes out, its peak reset to it where the system
        allows."""
        assert self.process is not None
        pid = self.process.pid
        if self._started_with is None:  # no /proc: the worker tells its own peak
            return _Before(None, False, None)
        reset = reset_peak(pid)
        return _Before(resident(pid), reset, None if reset else peak_of(pid))

    def _hand_over(self, request: Any, deadline: float, timeout: float,
                   before: _Before) -> bool | tuple[str, str]:
        """Send ``request`` and wait until the worker takes it: True; False where it died
        before (or cannot be written to); else the grade of this case (and the worker
        stopped)."""
        assert self.process is not None and self.process.stdin is not None
        try:
            send(self.process.stdin, request)  # type: ignore[arg-type]
        except OSError:
            return False
        reply = self._read(deadline - time.monotonic(), watch=True)
        if reply is CLOSED:
            return False
        if isinstance(reply, tuple) and reply == ("received",):
            return True
        return self._not_answered(reply, timeout, before)

    def _answer(self, deadline: float, timeout: float,
                before: _Before) -> tuple[str, Any, int | None]:
        """The worker's answer to the request it took, its grade where it gave none, and its
        peak memory while it ran it (or a process it started, where that was more)."""
        assert self.process is not None
        reply = self._read(deadline - time.monotonic(), watch=True)
        if reply is CLOSED:
            return CRASHED, self._death(""), None
        if not (isinstance(reply, tuple) and len(reply) == 4 and reply[0] != "unreadable"):
            status, message = self._not_answered(reply, timeout, before)
            return status, message, None
        status, payload, told, told_children = reply
        wrong = not_plain(payload) if status == "ok" else None
        if wrong is not None:  # the worker's own check was bypassed: nothing it says counts
            self.stop()
            return CRASHED, f"its answer could not be read ({wrong})", None
        self._answered = True
        own = self._peak_after(before, told)
        started = told_children if isinstance(told_children, int) and told_children > 0 \
            else None
        peak = max((p for p in (own, started) if p is not None), default=None)
        if (self.memory_limit is not None and self._started_with is not None
                and self._family_over_limit()):  # a process it started holds memory still
            self.stop()
            return OUT_OF_MEMORY, self._out_of_memory("reached", before, self._whose()), \
                max(self._used, peak or 0)
        if self.memory_limit is not None and peak is not None and peak > self.memory_limit:
            self._used = peak
            now = resident(self.process.pid)
            if self._started_with is None or now is None or now > self.memory_limit:
                self.stop()
            if peak != own:
                return OUT_OF_MEMORY, self._out_of_memory(
                    "peaked at", before, "of a process it started "), peak
            return OUT_OF_MEMORY, self._out_of_memory("peaked at", before), peak
        return status, payload, peak

    def _peak_after(self, before: _Before, told: int | None) -> int | None:
        """The worker's peak resident memory during the request: VmHWM where it was reset
        before, or rose since; else what the worker told (its own peak, where it rose)."""
        assert self.process is not None
        peak = peak_of(self.process.pid) if self._started_with is not None else None
        if peak is not None and (before.reset or (before.peak is not None
                                                  and peak > before.peak)):
            return peak
        return told if isinstance(told, int) and told > 0 else None

    def _not_answered(self, reply: Any, timeout: float, before: _Before) -> tuple[str, str]:
        """The grade where the worker gave no answer: out of time or memory, or one that
        cannot be read; the worker is stopped."""
        self.stop()
        if reply is None:
            return TIMEOUT, f"no answer within {timeout:g} s (worker stopped)"
        if reply is STOPPED:
            return OUT_OF_MEMORY, self._out_of_memory("reached", before, self._whose())
        if isinstance(reply, tuple) and reply[0] == "unreadable":
            return CRASHED, str(reply[1])
        return CRASHED, f"its answer could not be read (not a message of the protocol: " \
                        f"{type(reply).__name__})"

    def _over_limit(self) -> bool:
        """Whether the worker's resident memory is over its limit now, or it is gone (True
        stops the read waiting for it)."""
        if self._gone():
            return True
        if self.memory_limit is None or self._started_with is None or self.process is None:
            return False
        used = resident(self.process.pid)
        if used is not None and used > self.memory_limit:
            self._used = used
            return True
        if time.monotonic() - self._family_at < FAMILY_EVERY:
            return False
        return self._family_over_limit()

    def _family_over_limit(self) -> bool:
        """Whether the worker and the live processes it started hold more than its limit
        together, each counted by its share of the pages they share (none started: False);
        found so, :attr:`_used` is what they hold."""
        assert self.process is not None and self.memory_limit is not None
        self._family_at = time.monotonic()
        held = family(self.process.pid)
        if held is None or held[0] <= self.memory_limit:
            return False
        self._used, self._family = held
        return True

    def _whose(self) -> str:
        """Whose memory went over the limit, where not the worker's alone."""
        if not self._family:
            return ""
        return (f"of the worker and {'the process' if self._family == 1 else 'processes'} "
                "it started ")

    def _out_of_memory(self, verb: str, before: _Before, whose: str = "") -> str:
        """The out-of-memory grade's message: how much (``whose``: "of a process it
        started "), the limit, memory held from earlier cases where that is most of it, and
        the fix."""
        assert self.memory_limit is not None
        # how much over, since both round alike where it is a little
        words = (f"resident memory {whose}{verb} {format_bytes(self._used)}, "
                 f"{format_bytes(self._used - self.memory_limit)} over the worker's limit of "
                 f"{format_bytes(self.memory_limit)}")
        held = before.resident
        start = self._started_with
        # most of what it used was already held when the case began: kept from earlier
        # cases (a leak), not this case's own need
        if (not whose and held is not None and start is not None
                and held - start >= (self._used - start) / 2):
            words += (f"; it held {format_bytes(held)} before this case, {format_bytes(start)} "
                      "at start: kept from earlier cases")
        # the text report cuts a message at 220 characters: this one stays under
        return words + "; raise --memory-limit (memory_limit=), or none"

    def finish(self) -> str | None:
        """After the last request: how the worker died after answering it, if it did (None:
        it says goodbye when its requests end and exits cleanly, or is still unloading its
        runtime after :data:`FINISH_WAIT` seconds, and is stopped). An exit without the
        goodbye is a death, whatever its status. The worker is gone afterwards; a later
        :meth:`call` starts a new one."""
        if self.process is None:
            return None
        if self.process.poll() is not None:
            return self._dead_after_answering()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        began = time.monotonic()
        goodbye = self._read(FINISH_WAIT)
        if goodbye is None or not self._answered:  # still busy (unloading): not graded
            self.stop()
            return None
        if goodbye is CLOSED:
            return self._death(" after answering")
        if goodbye != ("bye",):  # alive, and what it says is no goodbye
            self.stop()
            return "said something else than goodbye after answering (worker stopped)"
        try:
            code = self.process.wait(timeout=max(FINISH_WAIT - (time.monotonic() - began), 0))
        except subprocess.TimeoutExpired:
            self.stop()
            return None
        if code == 0:
            self.stop()
            return None
        return self._death(" after answering")

    def _death(self, when: str) -> str:
        """How the worker died (``when``: words after it, " after answering"), from its exit
        status and its last line on stderr; it is cleared away."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # closed its pipes but lingers: stop it
            self.stop()
            return f"closed its output and did not exit{when} (worker stopped)"
        self.stop()
        how = (f"killed by signal {_signal_name(-code)}" if code < 0
               else f"exited with status {code}")
        return f"{how}{when}; {self._last_words()}"

    def _last_words(self) -> str:
        self.errors.seek(0)
        lines = [line for line in self.errors.read().decode("utf-8", "replace").splitlines()
                 if line.strip()]
        return lines[-1][:200] if lines else "it printed nothing"

    def stop(self) -> None:
        """Stop the worker and everything it started (its process group). Never raises: a
        request left unsent in a pipe whose reader is gone is dropped."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                # closing flushes what is buffered; with the reader gone that is a
                # BrokenPipeError, and the descriptor is closed all the same
                with contextlib.suppress(OSError):
                    stream.close()
        self.process = None
        self._answered = False

    def close(self) -> None:
        """Stop the worker and drop its stderr file."""
        self.stop()
        self.errors.close()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name
        return f"{number}"
