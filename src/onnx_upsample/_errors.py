"""The one exception family of onnx-upsample (stdlib only)."""

from __future__ import annotations

__all__ = ["SpelledError", "UpsampleError", "UpsampleWarning"]


class UpsampleError(ValueError):
    """A wrong value given to the ONNX ``Upsample`` operator (versions 1, 7, 9, 10).

    Raised before anything is allocated or written. The message names the argument,
    the value received, what was expected and, where one exists, the fix.
    """


class UpsampleWarning(UserWarning):
    """Input that ONNX ``Upsample`` accepts but that is suspect.

    For example the legacy mode names ``bilinear``/``trilinear``, or the deprecated
    version 10 of the operator.
    """


class SpelledError(UpsampleError):
    """An :class:`UpsampleError` about an argument that the command line gives as an option:
    ``str(error)`` names the Python argument (``seed is -1``); :attr:`option` is the same
    message naming the option (``--seed is -1``), which the command line prints instead.
    """

    def __init__(self, python: str, option: str) -> None:
        super().__init__(python)
        self.option = option

    def __reduce__(self) -> tuple[object, ...]:
        # pickled (to another process) with both wordings
        return (type(self), (str(self), self.option))

