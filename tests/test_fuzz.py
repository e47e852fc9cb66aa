"""Robustness fuzz: any mix of argument kinds ends in a result, a TypeError or an
UpsampleError — never a crash, a hang, another exception, a wrong value or a half-written
``out=``.

Each generated call runs in a persistent child process (tests/fuzz_worker.py), so that a
segfault is a failing example with its case, not a dead test run; the child is restarted
after a crash or a timeout. Results small enough are compared with the slow reference.
The CI profile runs FUZZ_EXAMPLES cases (about 20 s); HYPOTHESIS_PROFILE=thorough runs more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

WORKER = Path(__file__).with_name("fuzz_worker.py")
CASE_TIMEOUT = 30.0
FUZZ_EXAMPLES = 1500 if os.environ.get("HYPOTHESIS_PROFILE") != "thorough" else 20000

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "str",
          "bytes", "object", "datetime64", "structured"]
X_KINDS = ["array", "array", "array", "fortran", "reversed", "strided", "big-endian",
           "read-only", "matrix", "masked", "list", "scalar"]
SCALE_VALUES = [1, 1, 1.0, 1.5, 2, 2, 3, 1.3333334, 2.7, 0.5, -1, 0, "nan", "inf", 1e12, 1e30]
SCALE_KINDS = ["list", "list", "tuple", "array", "2d-array", "numpy-scalars", "none",
               "string", "bools", "number"]
MODES = ["nearest", "nearest", "linear", "linear", "bilinear", "NEAREST", "cubic", None, 3]
OUT_KINDS = [None, None, None, "fits", "wrong-shape", "wrong-dtype", "read-only", "fortran",
             "matrix", "masked", "overlap", "list"]


# Most cases are valid calls in every memory layout and type (checked against the
# reference); the rest mix in every wrong kind and value.
VALID_X_KINDS = ["array", "fortran", "reversed", "strided", "big-endian", "read-only"]
VALID_DTYPES = DTYPES[:-2]
VALID_SCALES = [1, 1.0, 1.5, 2, 3, 1.3333334, 2.7]
VALID_SCALE_KINDS = ["list", "tuple", "array", "numpy-scalars"]
VALID_OUT_KINDS = [None, None, "fits"]


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    valid = draw(st.integers(0, 9)) < 7
    rank = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0 if not valid else 1, 4), min_size=rank,
                          max_size=rank))
    n_scales = rank if valid else draw(st.sampled_from([rank, rank, max(rank - 1, 0), rank + 1]))
    scale_dtype = draw(st.sampled_from(["float64", "float32", "int64", "float16"]))

    def pick(valid_choices: list[Any], any_choices: list[Any]) -> Any:
        return draw(st.sampled_from(valid_choices if valid else any_choices))

    out_kind = pick(VALID_OUT_KINDS, OUT_KINDS)
    return {
        "seed": draw(st.integers(0, 2**16)),
        "x": {"kind": pick(VALID_X_KINDS, X_KINDS), "dtype": pick(VALID_DTYPES, DTYPES),
              "shape": shape, "specials": draw(st.booleans())},
        "scales": {"kind": pick(VALID_SCALE_KINDS, SCALE_KINDS), "dtype": scale_dtype,
                   "values": draw(st.lists(st.sampled_from(VALID_SCALES if valid
                                                            else SCALE_VALUES),
                                           min_size=n_scales, max_size=n_scales))},
        "mode": pick(["nearest", "linear"], MODES),
        "out": None if out_kind is None else {"kind": out_kind},
    }


class Worker:
    """A persistent child running fuzz_worker.py; restarted after a crash or a hang."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-u", str(WORKER)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "ONNX_UPSAMPLE_NUM_THREADS": "2"},
            )
        return self.process

    def ask(self, case: dict[str, Any]) -> dict[str, Any]:
        process = self.start()
        assert process.stdin is not None and process.stdout is not None
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(process.stdout.readline()))
        try:
            process.stdin.write(json.dumps(case) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass
        reader.start()
        reader.join(CASE_TIMEOUT)
        if reader.is_alive() or not answer or not answer[0]:
            process.kill()
            process.wait()
            stderr = process.stderr.read()[-2000:] if process.stderr else ""
            self.close()
            how = "hung" if reader.is_alive() else f"died with code {process.returncode}"
            return {"outcome": "crash", "message": f"worker {how}: {stderr}"}
        return json.loads(answer[0])

    def close(self) -> None:
        """Stop the child and close its pipes (left open, they warn, ResourceWarning, when
        collected: in whichever later test records warnings)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        self.process = None


@pytest.fixture(scope="module")
def worker() -> Any:
    pytest.importorskip("ml_dtypes")
    w = Worker()
    yield w
    w.close()


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_any_call_ends_in_a_result_or_a_clean_error(worker: Worker, case: dict[str, Any]) -> None:
    outcome = worker.ask(case)
    kind = outcome["outcome"]
    event(f"outcome: {kind}" + (" (checked against the reference)" if outcome.get("checked")
                                else ""))
    assert kind in ("result", "TypeError", "UpsampleError", "UpsampleWarning"), (case, outcome)
    if kind == "result":
        assert outcome["same"], ("differs from the reference", case, outcome)
        assert outcome["returned_out"], ("out= given but another array returned", case)
    else:
        assert outcome["out_unchanged"], ("a failed call wrote into out=", case, outcome)
        assert outcome["message"] and "\n" not in outcome["message"].strip(), (case, outcome)
