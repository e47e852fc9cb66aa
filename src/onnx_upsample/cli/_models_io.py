"""What the model commands (cli/models.py) share: reading models and arrays, writing files,
tables, warnings, and fixes spelled as the commands to type.

onnx is imported inside the functions only, so that ``onnx-upsample --help`` and the core
commands work without the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import os
import shlex
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import UpsampleError, UpsampleWarning
from .._spec.spelling import OPTIONS
from ._common import shell_command, warn

if TYPE_CHECKING:
    from ..onnx._external import ModelProto
    from ..onnx._fixes import Action, Fix

__all__ = ["add_input_options", "caught_warnings", "check_model_output", "describe_array",
           "file_name", "hinted", "hints_as_commands", "kept_warnings", "load_model",
           "parse_shapes", "read_inputs", "save_model", "save_npy", "spell_fix", "warn_all"]

Handler = Callable[[argparse.Namespace], int]


def load_model(path: str, which: str = "small") -> ModelProto:
    """The model at ``path``, read safely (see onnx/_external.py): its small external
    tensors loaded (``which="all"``: every tensor, to run it)."""
    from ..onnx import _external

    return _external.read(path, which)  # type: ignore[arg-type]


def add_input_options(parser: argparse.ArgumentParser, *, condition: str = "",
                      shapes: bool = True) -> None:
    """The options of a command that runs a model: ``--input`` (arrays for named inputs),
    ``--input-shape`` (with ``shapes``: shapes of the random ones), ``--seed``; each help
    starts with ``condition`` (``with --verify: ``)."""
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help=f"{condition}use this array for input NAME (repeatable)")
    if shapes:
        parser.add_argument("--input-shape", action="append", default=[],
                            metavar="NAME=D0,D1,...", help=f"{condition}random values of "
                            "this shape for input NAME (repeatable)")
    parser.add_argument("--seed", type=int, default=0,
                        help=f"{condition}seed of the random inputs (0 or above)")


def read_inputs(items: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays of ``--input NAME=FILE.npy`` options, read without pickle."""
    feeds: dict[str, np.ndarray] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UpsampleError(f"--input {item!r}: expected NAME=FILE.npy")
        if name in feeds:
            raise UpsampleError(f"--input gives {name!r} twice")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise UpsampleError(f"--input {name}: file {path!r} does not exist") from None
        except (OSError, ValueError) as error:
            raise UpsampleError(f"--input {name}: cannot read {path!r} as a .npy array: "
                                f"{error}") from None
    return feeds


def parse_shapes(items: Sequence[str]) -> dict[str, list[int]]:
    """The shapes of ``--input-shape NAME=D0,D1,...`` options, as written (the sizes are
    checked with the rest of the inputs, by ``onnx._feeds``)."""
    shapes: dict[str, list[int]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            dims = [int(d) for d in text.split(",")] if text else []
        except ValueError:
            dims = None
        if not sep or not name or dims is None:
            raise UpsampleError(f"--input-shape {item!r}: expected NAME=D0,D1,... with "
                                 "whole numbers")
        if name in shapes:
            raise UpsampleError(f"--input-shape gives {name!r} twice")
        shapes[name] = dims
    return shapes


@contextmanager
def caught_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Collect the library's warnings, for the command to word them as warning lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        yield caught


def warn_all(args: argparse.Namespace, messages: Sequence[object]) -> None:
    """Each distinct message once as a warning line (stderr, also under ``-q``), kept for the
    ``--json`` document; a fix that names a call is spelled as the command to type."""
    from ..onnx._fixes import FixableWarning

    kept: list[str] = args.__dict__.setdefault("warning_lines", [])
    argv = getattr(args, "argv", ())
    lines = [message.render(lambda action: spell_action(action, args.model, argv))
             if isinstance(message, FixableWarning) else str(message) for message in messages]
    for text in dict.fromkeys(lines):
        warn(text)
        kept.append(text)


def check_model_output(path: str, source: str, overwrite: bool) -> None:
    """Refuse, before any work, an output model that cannot be written (io.atomic's
    ``check_output_path``: the input model ``source`` under any name without ``overwrite``,
    a missing folder, a directory)."""
    from ..io.atomic import check_output_path

    check_output_path(path, source, overwrite, source_named="input model")


def save_model(model: ModelProto, path: str, source: str | None = None) -> None:
    """Write ``model`` atomically (through io.atomic, the package's one atomic writer);
    its external data (relative to ``source``'s folder) is copied beside ``path`` where that
    is another folder."""
    from ..io.atomic import atomic_path, check_output_path
    from ..onnx import _external

    check_output_path(path)
    source_base = None if source is None else os.path.dirname(os.path.abspath(source))
    with atomic_path(path) as temporary:
        _external.save(model, temporary, source_base)


def npy_ready(name: str, array: np.ndarray) -> np.ndarray:
    """``array`` as a .npy file that readers load without pickle: strings (object arrays of
    str or bytes, as runtimes return ONNX string tensors) as fixed-width text; other objects
    are refused in one line."""
    if array.dtype.kind != "O":
        return array
    values = array.reshape(-1).tolist()
    for kind in (str, bytes):
        if all(isinstance(value, kind) for value in values):
            return np.asarray(array.tolist(), dtype=kind).reshape(array.shape)
    raise UpsampleError(f"output {name!r} holds Python objects that are not all text, which "
                        "a .npy stores only with pickle (readers refuse it by default); run "
                        "without --output-dir to see it")


def save_npy(path: str, array: np.ndarray) -> None:
    """Write ``array`` atomically, without pickle: never a half-written output."""
    from ..io.atomic import atomic_path, check_output_path

    check_output_path(path)
    with atomic_path(path) as temporary, open(temporary, "wb") as stream:
        np.save(stream, array, allow_pickle=False)


def file_name(name: str) -> str:
    """A file name for output ``name``: characters a file system may refuse become ``_``."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    return (safe or "output") + ".npy"


def describe_array(array: np.ndarray) -> dict[str, Any]:
    """dtype, shape and range, numbers in the array's own precision (float32 digits)."""
    found: dict[str, Any] = {"dtype": str(array.dtype), "shape": list(array.shape)}
    if array.size and array.dtype.kind in "biuf":
        found["min"], found["max"] = str(array.min()), str(array.max())
    return found


# ---------------------------------------------------------------------- fixes as commands


def spell_action(action: Action, model: str, argv: Sequence[str] = ()) -> str:
    """``action`` as the line to type for the model at ``model``; where ``argv`` (the words
    the user typed after ``onnx-upsample``) is the action's own command, that command with
    the action's options set, keeping the user's output and other options."""
    output = action.output_for(model)
    words = action.command_words(model, output)
    if words and argv and str(argv[0]) == words[0]:
        words = action.retyped(argv)
    if words:
        return shell_command(*words)
    return shlex.join(action.python_command(model, output))


def spell_fix(fix: Fix, model: str) -> str:
    """A fix with its actions as the commands to type for the model at ``model``."""
    return fix.render(lambda action: spell_action(action, model))


@contextmanager
def hints_as_commands(model: str, argv: Sequence[str] = ()) -> Iterator[None]:
    """Re-word an error whose fix names a call (``FixableError``) with the command to type
    instead (``spell_action``); main() prints it as usual."""
    from ..onnx._fixes import FixableError

    try:
        yield
    except FixableError as error:
        raise UpsampleError(error.render(lambda action: spell_action(action, model, argv),
                                         OPTIONS)) from None


def hinted(command: Handler) -> Handler:
    """``command`` with the fixes of the library's errors spelled as commands to type."""
    def handler(args: argparse.Namespace) -> int:
        with hints_as_commands(args.model, getattr(args, "argv", ())):
            return command(args)
    return handler


def kept_warnings(args: argparse.Namespace) -> list[str]:
    """The warning lines a command printed (``warn_all``), for its ``--json`` document."""
    return list(getattr(args, "warning_lines", []))
