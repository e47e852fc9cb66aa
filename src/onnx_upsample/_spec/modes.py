"""Modes of ONNX ``Upsample``: names, legacy aliases, names per version, the mode message.

Upsample has two modes. ``nearest`` reads one input element per output element; ``linear``
blends the two neighbours along every interpolated axis (``2**k`` taps for ``k`` axes).
Version 1 of the operator calls linear ``bilinear``; old exporters also wrote ``bilinear``
and ``trilinear`` into version 7/9 nodes, which runtimes read as ``linear``.
"""

from __future__ import annotations

from typing import Literal

from .._errors import UpsampleError
from .spelling import PYTHON, Spelling

Mode = Literal["nearest", "linear"]
#: Every name a call accepts: the modes and their legacy aliases (the public signatures' type).
ModeName = Literal["nearest", "linear", "bilinear", "trilinear"]
#: The canonical mode names, as ``upsample()`` and versions 7, 9 and 10 spell them.
MODES: tuple[Mode, ...] = ("nearest", "linear")
#: Names old exporters wrote for ``linear``; accepted with a warning.
LEGACY_LINEAR_NAMES = ("bilinear", "trilinear")
#: Mode names each version's schema defines (version 1: ``bilinear`` is its linear).
VERSION_MODE_NAMES: dict[int, tuple[str, ...]] = {
    1: ("nearest", "bilinear"), 7: MODES, 9: MODES, 10: MODES,
}


def mode_of(mode: object, spelling: Spelling = PYTHON) -> tuple[Mode, str | None]:
    """Canonical mode name and, for a legacy alias, the warning to give.

    Raises
    ------
    UpsampleError
        For any value that is not one of the names (``None`` and other types included).
    """
    if isinstance(mode, str) and mode in MODES:
        return mode, None
    if isinstance(mode, str) and mode in LEGACY_LINEAR_NAMES:
        return "linear", (
            f"{spelling.mode} {spelling.value(mode)} is a legacy name of 'linear' (written by "
            f"old exporters); it runs as 'linear'; write {spelling.set_mode('linear')}"
        )
    raise UpsampleError(
        f"{spelling.mode} is {spelling.value(mode)}; expected 'nearest' or 'linear' (exact, "
        "lower case; 'bilinear' and 'trilinear' are accepted as 'linear'); cubic and other "
        "modes are Resize's, not Upsample's"
    )
