"""Backends for the CI-facing tests of the conformance grader (tests/test_conformance_ci.py),
loaded by its worker processes: ``one_ulp`` answers every float output one ULP above the
exact one; ``told`` answers as its ``behave`` option says (``exact``, or zeros by default);
``crash_after_answer`` answers exactly, then its process dies a moment later."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np
from conformance_backends import exact


def one_ulp(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [np.nextafter(y, np.float32(np.inf)) for y in exact(model_bytes, inputs)]


def told(model_bytes: bytes, inputs: dict[str, np.ndarray], behave: str = "zeros",
         **unused: Any) -> list[np.ndarray]:
    outputs = exact(model_bytes, inputs)
    return outputs if behave == "exact" else [np.zeros_like(y) for y in outputs]


def crash_after_answer(model_bytes: bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    threading.Timer(0.3, lambda: ctypes.string_at(0)).start()
    return exact(model_bytes, inputs)
