"""What every runtime adapter of the conformance suite shares: the loaded :class:`Backend`,
its errors, which of a runtime's errors are explicit refusals, and how a missing runtime is
reported (``_backends`` holds the adapters of the built-in runtimes, ``_pytorch`` the
PyTorch one; both build on this module, neither on the other).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

NOT_IMPLEMENTED = r"^NotImplementedError:"

#: name -> what its explicit not-implemented / not-supported errors look like, as a pattern
#: searched in "ExceptionType: message" (one line). Every other exception is an error.
REFUSALS: dict[str, str] = {
    # status NOT_IMPLEMENTED (no kernel for this version or type); a type it has no support
    # for; a kernel's stated limits ("'Linear' mode only supports: 2-D inputs..."); the
    # opset-10 Upsample its schema registry calls deprecated
    "onnxruntime": r"^NotImplemented:|not currently registered or supported|only supports"
                   r"|is deprecated in domain_version",
    "onnx-reference": r"^RuntimeError: Not implemented",
    "onnx-reference+onnx-upsample": r"^RuntimeError: Not implemented",
    # the frontend cannot convert the node; a type it does not know; a plugin's limits
    "openvino": r"OpConversionFailure|Unsupported type|only supports",
    "tract": r"Unimplemented\(|Unknown DatumType",
    # its stated limits; an ONNX element type it does not know
    "tinygrad": r"not supported|is not a valid OnnxDataType",
    "tvm": r"^OpNotImplemented:|not supported|is not implemented|unknown dtype",
    # the adapter's own refusals are NotImplementedError; torch's dtype and rank limits too
    "pytorch": r"not implemented for|not supported",
}

# name -> the pip line that installs it
INSTALL = {
    "onnxruntime": "pip install 'onnxruntime==1.32.*'",
    "onnx-reference": "pip install 'onnx-upsample[onnx]'",
    "onnx-reference+onnx-upsample": "pip install 'onnx-upsample[onnx]'",
    "openvino": "pip install openvino (or 'onnx-upsample[conformance]')",
    "tract": "pip install tract (or 'onnx-upsample[conformance]')",
    "tinygrad": "pip install tinygrad (or 'onnx-upsample[conformance]'); its CPU device "
                "needs clang",
    "tvm": "pip install apache-tvm (about 300 MB; not in the conformance extra)",
    "pytorch": "pip install torch (the CPU wheel is enough: --index-url "
               "https://download.pytorch.org/whl/cpu)",
}

Run = Callable[[Path, dict[str, np.ndarray]], list[np.ndarray]]


class BackendUnavailableError(Exception):
    """The backend cannot be loaded here (not installed, or not a valid name)."""


class AdapterError(Exception):
    """The backend's adapter broke its contract (graded ``adapter-error``, not the
    runtime's fault)."""


@dataclass(frozen=True)
class Backend:
    """A loaded runtime: its name, version, how to run one case, and which of its errors
    are explicit refusals (see :data:`REFUSALS`)."""

    name: str
    version: str
    run: Run
    refusal: str = NOT_IMPLEMENTED

    def refuses(self, words: str) -> bool:
        """Whether an error, as "ExceptionType: message", is an explicit refusal."""
        return re.search(f"{NOT_IMPLEMENTED}|{self.refusal}", words) is not None


def installed_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def import_runtime(module: str, name: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        hint = INSTALL.get(name, f"pip install {module.split('.')[0]}")
        raise BackendUnavailableError(f"backend {name!r} is not installed here ({error}): "
                                 f"{hint}") from None


def as_list(outputs: Any, source: str) -> list[np.ndarray]:
    """The outputs as a list; anything but a list, tuple or dict of outputs, or one array,
    breaks the adapter's contract (a generator would be consumed once, None holds nothing)."""
    if isinstance(outputs, dict):
        return list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    if isinstance(outputs, np.ndarray):
        return [outputs]
    raise AdapterError(f"{source} returned {type(outputs).__name__}; the contract is a list, "
                       "tuple or dict of arrays (or one numpy array)")
