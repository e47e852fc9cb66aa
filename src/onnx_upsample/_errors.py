"""The one exception family of onnx-upsample (stdlib only)."""

from __future__ import annotations

__all__ = ["UpsampleError", "UpsampleWarning"]


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
