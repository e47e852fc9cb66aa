"""Why a node's output differs between two runtimes: which convention each runtime's output
follows, in the explainer's words, relative to the node's own (:func:`explain_side`).

One output often cannot tell several conventions apart (integer scales, small axes): of
those that reproduce it, the one named is the closest to the node's own convention (fewest
choices apart), and the count of the others is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from .._errors import UpsampleError
from ._diff_nodes import ComparedNode
from ._diff_rows import SideExplanation
from ._explain import conventions, explain

__all__ = ["explain_side"]

NOT_EXPLAINED = "not explained"


@cache
def _departures(mode: str) -> dict[str, frozenset[str]]:
    """Each convention's name and what it changes from Upsample, for ``mode``."""
    return {found.name: frozenset(found.departures) for found in conventions(mode)}


def _closest(matches: Sequence[str], node: ComparedNode) -> str:
    """Of the conventions in ``matches``, the one fewest choices away from the node's own."""
    assert node.mode is not None
    own = frozenset(node.convention.departures) if node.convention is not None else frozenset()
    known = _departures(node.mode)

    def apart(name: str) -> int:
        return len(known.get(name, frozenset()) ^ own)

    return min(matches, key=apart)  # min keeps the first of equals: the simplest


def explain_side(node: ComparedNode, backend: str, x: np.ndarray, y: np.ndarray,
                 scales: tuple[float, ...] | str) -> SideExplanation:
    """Which convention ``backend``'s output ``y`` of ``node`` follows, given its input
    ``x`` and the scales it ran with (or why the explainer cannot take them)."""
    if node.unexplained or node.mode is None:
        return SideExplanation(backend, NOT_EXPLAINED, summary=node.unexplained)
    if isinstance(scales, str):
        return SideExplanation(backend, NOT_EXPLAINED, summary=scales)
    try:
        found = explain(x, y, scales, node.mode)
    except (UpsampleError, TypeError) as error:
        return SideExplanation(backend, NOT_EXPLAINED, summary=str(error))
    if found.verdict == "close":
        return SideExplanation(backend, found.verdict, found.best or "", False, 0,
                               found.max_ulp, found.summary)
    if not found.matches:
        return SideExplanation(backend, found.verdict, summary=found.summary)
    own = [name for name in node.conventions_named() if name in found.matches]
    named = own[0] if own else _closest(found.matches, node)
    return SideExplanation(backend, found.verdict, named, bool(own), len(found.matches) - 1,
                           None, found.summary)
