"""How a message names the arguments and writes its fix: as a Python call or as options.

A check words its rule once; the names in it come from a :class:`Spelling`. The Python API
passes :data:`PYTHON` (``scales[2] is 0.5``, ``use mode='nearest'``); the command line
passes :func:`command_line` (``value 3 of --scales is 0.5``, ``use --mode nearest``), so
that every hint it prints is something to type at a shell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._errors import SpelledError


def number(value: float | int) -> str:
    """A scale as a person types it: ``2`` rather than ``2.0``, every digit otherwise."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


# The arguments whose option is not their name with dashes: a mapping of names in Python
# is an option given once per name on the command line.
_OPTION_NAMES = {"inputs": "--input", "input_shapes": "--input-shape"}


def _plain(word: str) -> bool:
    """Whether a shell takes ``word`` as it is (no quotes needed)."""
    return bool(word) and all(c.isalnum() or c in "_.,:/+-" for c in word)


@dataclass(frozen=True)
class Spelling:
    """The names one kind of caller uses.

    Attributes
    ----------
    x : str
        The input, as messages name it (``x``; ``input 'a.npy'`` on the command line).
    options : bool
        True for the command line: arguments are options (``--scales``, ``--mode``).
    """

    x: str = "x"
    options: bool = False

    @property
    def scales(self) -> str:
        """The scales argument."""
        return "--scales" if self.options else "scales"

    def scale(self, axis: int) -> str:
        """One scale, by its axis."""
        return f"value {axis + 1} of --scales" if self.options else f"scales[{axis}]"

    @property
    def mode(self) -> str:
        """The mode argument."""
        return "--mode" if self.options else "mode"

    def argument(self, name: str) -> str:
        """Any other argument, by its Python name: ``jpeg_quality``, or the option
        ``--jpeg-quality`` (``inputs``: ``--input``, given once per input)."""
        if not self.options:
            return name
        return _OPTION_NAMES.get(name, f"--{name.replace('_', '-')}")

    def assign(self, name: str, value: object) -> str:
        """What to write to give argument ``name`` the value ``value``: ``seed=0``,
        ``--seed 0``."""
        if self.options:
            return f"{self.argument(name)} {self.value(value)}"
        return f"{name}={value!r}"

    def value(self, given: object) -> str:
        """A value as given: its repr in Python, as typed on the command line."""
        if self.options and isinstance(given, str) and _plain(given):
            return given
        return repr(given)  # quoted, as a shell needs it too

    def set_mode(self, name: str) -> str:
        """What to write for mode ``name``."""
        return self.assign("mode", name)

    def shown(self, values: Sequence[float | int], more: bool = False) -> str:
        """Scales as they were given: a list in Python, the words after ``--scales``;
        ``more`` marks the first few of a longer list."""
        if self.options:
            return f"({' '.join([*map(number, values), *['...'] * more])})"
        return f"[{', '.join([*map(repr, values), *['...'] * more])}]"

    def set_scales(self, values: Sequence[float | int]) -> str:
        """What to write for these scales."""
        words = [number(v) for v in values]
        return f"--scales {' '.join(words)}" if self.options else f"scales=[{', '.join(words)}]"


#: The Python API's names.
PYTHON = Spelling()
#: The command line's names, where a message names no input file.
OPTIONS = Spelling(options=True)


def command_line(input_path: str) -> Spelling:
    """The command line's names, for a command reading ``input_path``."""
    return Spelling(x=f"input {input_path!r}", options=True)


def spelled(words: Callable[[Spelling], str]) -> SpelledError:
    """The error ``words`` says, worded for both callers: ``str(error)`` is
    ``words(PYTHON)`` (``seed is -1; ... use seed=0``), ``error.option``, which the command
    line prints, ``words(OPTIONS)`` (``--seed is -1; ... use --seed 0``)."""
    return SpelledError(words(PYTHON), words(OPTIONS))
