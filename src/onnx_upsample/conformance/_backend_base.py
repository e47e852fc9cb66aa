"""What every runtime adapter of the conformance suite shares: the loaded :class:`Backend`,
its errors, which of a runtime's errors are explicit refusals, and how a missing runtime is
reported (``_backends`` holds the adapters of the built-in runtimes, ``_pytorch`` the
PyTorch one; both build on this module, neither on the other).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError

NOT_IMPLEMENTED = r"^NotImplementedError:"

#: The built-in backends' names.
BUILTIN = ("onnxruntime", "onnx-reference", "onnx-reference+onnx-upsample", "openvino",
           "tract", "tinygrad", "tvm", "pytorch")

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


@dataclass(frozen=True)
class Option:
    """A setting a built-in backend takes (``--backend-option KEY=VALUE``): what it sets,
    its default (what the grader uses when it is not given), and its values where they are
    a fixed list (``choices``) or a count (``count``: an integer >= 0)."""

    help: str
    default: str
    choices: tuple[str, ...] = ()
    count: bool = False


#: name -> the options the built-in backend takes. A custom backend takes any option, as a
#: keyword argument of its callable (or of ``prepare``/``run_model``), always a string.
OPTIONS: dict[str, dict[str, Option]] = {
    "onnxruntime": {
        "graph_optimization_level": Option(
            "the session's graph optimizations (SessionOptions.graph_optimization_level)",
            "all", ("disable", "basic", "extended", "layout", "all")),
        "execution_provider": Option("the execution provider that runs the model",
                                     "CPUExecutionProvider"),
        "intra_op_num_threads": Option("threads within one operator (0: onnxruntime's "
                                       "choice)", "0", count=True),
        "inter_op_num_threads": Option("threads across operators (0: onnxruntime's choice)",
                                       "0", count=True),
    },
    "openvino": {
        "device": Option("the device that compiles and runs the model", "CPU"),
        "inference_precision": Option(
            "INFERENCE_PRECISION_HINT: f32 grades the model's own precision; on CPUs with "
            "bfloat16 OpenVINO's default is bf16", "f32", ("f32", "f16", "bf16")),
        "num_threads": Option("INFERENCE_NUM_THREADS (0: OpenVINO's choice)", "0",
                              count=True),
    },
    "tinygrad": {"device": Option("tinygrad's device (DEV)", "CPU")},
    "tvm": {"target": Option("the target TVM compiles for", "llvm")},
}


def options_of(name: str) -> dict[str, Option] | None:
    """The options backend ``name`` takes: a built-in's table (empty when it takes none),
    None for a custom backend, which takes any."""
    if name in BUILTIN:
        return OPTIONS.get(name, {})
    return None


def check_options(name: str, options: Mapping[str, object], *,
                  defaults: bool = True) -> dict[str, str]:
    """``options`` for backend ``name`` as strings (a number or a bool as ``str`` writes
    it), with the defaults of the ones not given where ``defaults`` (the settings a report
    records). Raises :class:`UpsampleError` for an option the backend does not take or a
    value it cannot have, before any worker starts."""
    table = options_of(name)
    given: dict[str, str] = {}
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str | int | float | bool):
            raise TypeError(f"backend option {key!r}={value!r}: expected a name and a value "
                            "(text or a number)")
        text = given[key] = str(value)
        if table is None:
            continue
        if key not in table:
            takes = (f"it takes {', '.join(table)}" if table else "it takes none")
            raise UpsampleError(f"backend option {key!r} is not an option of {name}; "
                                f"{takes} (see onnx-upsample conformance run --help)")
        option = table[key]
        if option.choices and text not in option.choices:
            raise UpsampleError(f"backend option {key}={text!r} for {name}: expected one "
                                f"of {', '.join(option.choices)}")
        if option.count and not (text.isdigit() and text.isascii()):
            raise UpsampleError(f"backend option {key}={text!r} for {name}: expected an "
                                "integer >= 0")
    if table is None or not defaults:
        return given
    return {key: given.get(key, option.default) for key, option in table.items()}


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
    #: the settings it runs with (its options, defaults included), for the report
    settings: Mapping[str, str] = field(default_factory=dict)

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
