"""Fixes that name an action, worded once for both places a user reads them.

A fix such as "downgrade the model to opset 9" is a Python call for a user of the API
(``onnx_upsample.onnx.downgrade(model, opset=9)``) and a command for a user of the command
line (``onnx-upsample downgrade M -o OUT --opset 9``). :class:`Action` holds the call as data
and spells both forms; :class:`Fix` is the sentence around it. Messages are written here, in
``_node``, ``_check`` and the converters; the command line only renders the action with its
own quoting (``cli._common.shell_command``) and the user's real paths.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._errors import UpsampleError, UpsampleWarning
from .._spec.spelling import OPTIONS, PYTHON, Spelling
from .._spec.versions import DEFAULT_DOWNGRADE_OPSET, DEFAULT_UPGRADE_OPSET

__all__ = ["Action", "Fix", "FixableError", "FixableWarning", "fix_of"]

# For each function of onnx_upsample.onnx that a fix may name: the command that does the same
# on the command line, whether it writes a model (-o OUT), and the keywords it takes as
# options (each named as the command line's Spelling names it).
_COMMANDS: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "upgrade": ("upgrade", True, ("opset", "allow_downscale")),
    "downgrade": ("downgrade", True, ("opset",)),
    "fold_scales": ("fold", True, ()),
    "check": ("check", False, ()),
    "run": ("run", False, ("legacy_modes",)),
    "diff": ("diff", False, ("legacy_modes",)),
}
# A function without a command of its own runs through Python on the command line.
_PYTHON_ONLY = {"infer_shapes"}


@dataclass(frozen=True)
class Action:
    """One call of the public API that fixes something (see the module docstring).

    Attributes
    ----------
    function : str
        ``upgrade``, ``downgrade``, ``fold_scales``, ``infer_shapes``, ``check``, ``run``
        (run the model with ``onnx.reference.ReferenceEvaluator`` and
        :class:`~onnx_upsample.onnx.Upsample`) or ``diff``
        (:func:`onnx_upsample.conformance.diff`, the same two runtimes).
    options : tuple of (str, object)
        Keyword arguments, in order (``(("opset", 9),)``); a boolean option is given when
        True.
    """

    function: str
    options: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        if self.function not in _COMMANDS and self.function not in _PYTHON_ONLY:
            raise ValueError(f"no action {self.function!r}")
        keywords = _COMMANDS[self.function][2] if self.function in _COMMANDS else ()
        unknown = [key for key, _ in self.options if key not in keywords]
        if self.function in _COMMANDS and unknown:
            raise ValueError(f"{self.function} takes no option {unknown[0]!r}")

    def python(self) -> str:
        """The Python call: ``onnx_upsample.onnx.downgrade(model, opset=9)``."""
        if self.function == "run":
            op = ("onnx_upsample.onnx.Upsample.with_legacy_modes()"
                  if dict(self.options).get("legacy_modes") else "onnx_upsample.onnx.Upsample")
            return f"onnx.reference.ReferenceEvaluator(model, new_ops=[{op}])"
        keywords = "".join(f", {key}={value!r}" for key, value in self.options)
        if self.function == "diff":
            return f"onnx_upsample.conformance.diff(model, ours, theirs{keywords})"
        return f"onnx_upsample.onnx.{self.function}(model{keywords})"

    def output_for(self, model: str) -> str:
        """A name for the model the action writes, beside ``model``: ``yolo.onnx`` ->
        ``yolo_opset9.onnx`` (downgrade to 9), ``yolo_folded.onnx``, ...; ``""`` for an
        action that writes no model."""
        if self.function in _COMMANDS and not _COMMANDS[self.function][1]:
            return ""
        stem = os.path.splitext(model)[0]
        options = dict(self.options)
        if self.function in ("upgrade", "downgrade"):
            default = (DEFAULT_UPGRADE_OPSET if self.function == "upgrade"
                       else DEFAULT_DOWNGRADE_OPSET)
            return f"{stem}_opset{options.get('opset', default)}.onnx"
        return f"{stem}_{'folded' if self.function == 'fold_scales' else 'shapes'}.onnx"

    def command_words(self, model: str, output: str = "OUT.onnx") -> list[str]:
        """The words after ``onnx-upsample`` that do the same for the model at ``model``,
        writing ``output`` where the action writes a model."""
        if self.function in _PYTHON_ONLY:
            return []
        command, writes, _ = _COMMANDS[self.function]
        words = [command, model]
        if writes:
            words += ["-o", output]
        if command == "run":
            words.append("--random")
        for key, value in self.options:
            if isinstance(value, bool):
                if value:
                    words.append(OPTIONS.argument(key))
            else:
                words += [OPTIONS.argument(key), str(value)]
        return words

    def retyped(self, argv: Sequence[str]) -> list[str]:
        """The command the user typed (``argv``: the words after ``onnx-upsample``, for this
        action's command) with the action's options set in it: the fix for the command as
        given, keeping its output and its other options."""
        words = [str(word) for word in argv]
        for key, value in self.options:
            flag = OPTIONS.argument(key)
            at = next((i for i, word in enumerate(words)
                       if word == flag or word.startswith(flag + "=")), None)
            if isinstance(value, bool):
                if value and at is None:
                    words.append(flag)
            elif at is None or (words[at] == flag and at + 1 == len(words)):
                words[at if at is not None else len(words):] = [flag, str(value)]
            elif words[at] == flag:
                words[at + 1] = str(value)
            else:
                words[at] = f"{flag}={value}"
        return words

    def python_command(self, model: str, output: str = "OUT.onnx") -> list[str]:
        """For a function with no command: a ``python -c`` line that runs it on the files."""
        # double-quoted literals, so that a shell's single quotes hold the line unescaped
        code = (f"import onnx, onnx_upsample.onnx as u; onnx.save(u.{self.function}("
                f"onnx.load({json.dumps(model)})), {json.dumps(output)})")
        return ["python", "-c", code]


@dataclass(frozen=True)
class Fix:
    """A fix in words, with the actions it names (see the module docstring).

    Attributes
    ----------
    text : str
        The sentence; ``{0}``, ``{1}``, ... mark where the actions go.
    actions : tuple of Action
        The calls it names, in slot order; empty for a fix that is a change by hand.
    """

    text: str
    actions: tuple[Action, ...] = ()

    def render(self, spell: Callable[[Action], str]) -> str:
        """The sentence with each action spelled by ``spell``."""
        text = self.text
        for slot, action in enumerate(self.actions):
            text = text.replace(f"{{{slot}}}", spell(action))
        return text

    def python(self) -> str:
        """The sentence with the actions as Python calls (what the Python API shows)."""
        return self.render(Action.python)


def fix_of(fix: str | Fix) -> Fix:
    """A plain sentence as a :class:`Fix` without an action."""
    return fix if isinstance(fix, Fix) else Fix(fix)


class _FixText:
    """The problem and its fix, kept apart so that the fix can be spelled as a Python call
    (``str(exception)``) or as a command (:meth:`render`): what the error and the warning
    share."""

    problem: str
    fix: Fix
    joiner: str
    argument: str | None

    def _keep(self, problem: str, fix: Fix, joiner: str, argument: str | None) -> str:
        """Keep the parts; return the Python form of the message."""
        # ``problem`` may name the argument it is about as ``{argument}``: the Python name
        # (``opset``) in str(error), the option (``--opset``) on the command line
        self.problem, self.fix, self.joiner, self.argument = problem, fix, joiner, argument
        return f"{self._problem(argument)}{joiner}{fix.python()}"

    def _problem(self, name: str | None) -> str:
        return self.problem if self.argument is None else self.problem.format(argument=name)

    def render(self, spell: Callable[[Action], str], spelling: Spelling = PYTHON) -> str:
        """The message with the action spelled by ``spell``, and the argument it is about
        named as ``spelling`` names it (``--opset`` on the command line)."""
        name = None if self.argument is None else spelling.argument(self.argument)
        return f"{self._problem(name)}{self.joiner}{self.fix.render(spell)}"

    def __reduce__(self) -> tuple[object, ...]:
        # pickled (to another process) with its parts, not with the joined message
        return (type(self), (self.problem, self.fix, self.joiner, self.argument))


class FixableError(_FixText, UpsampleError):
    """An :class:`~onnx_upsample.UpsampleError` whose fix names an action.

    ``str(error)`` is the problem and the fix as a Python call; the command line rewords
    it with the fix as a command (:attr:`problem`, :attr:`fix`).
    """

    def __init__(self, problem: str, fix: Fix, joiner: str = "; ",
                 argument: str | None = None) -> None:
        super().__init__(self._keep(problem, fix, joiner, argument))


class FixableWarning(_FixText, UpsampleWarning):
    """An :class:`~onnx_upsample.UpsampleWarning` whose fix names an action (as
    :class:`FixableError`)."""

    def __init__(self, problem: str, fix: Fix, joiner: str = "; ",
                 argument: str | None = None) -> None:
        super().__init__(self._keep(problem, fix, joiner, argument))
