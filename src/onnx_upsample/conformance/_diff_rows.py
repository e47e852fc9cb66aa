"""One Upsample or Resize node of a model-level diff, compared between two runtimes, and its
words: :class:`NodeDiff` (with :class:`SideExplanation`, which convention one runtime's
output follows). :mod:`._diff_result` gathers them into the model's result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._diff_values import ValueDifference

__all__ = ["DIFFERS", "FOLLOWS_INPUT", "IDENTICAL", "NOT_COMPARED", "NOT_OBSERVED", "NodeDiff",
           "SideExplanation", "names"]

#: A node's verdicts: the same bits; a difference of the node itself; a difference its
#: input already had (run alone on one input, or by the conventions, the node agrees).
IDENTICAL, DIFFERS, FOLLOWS_INPUT = "identical", "DIFFERS", "input differs"
NOT_OBSERVED, NOT_COMPARED = "not observed", "not compared"


@dataclass(frozen=True)
class SideExplanation:
    """Which convention one runtime's output of a node follows.

    Attributes
    ----------
    backend : str
        The runtime.
    verdict : str
        The explainer's verdict (``upsample``, ``convention``, ``close``, ``none``), or
        ``not explained``.
    convention : str
        The convention named: of those that reproduce the output, the one closest to the
        node's own; for ``close``, the closest; ``""`` for none.
    own : bool
        Whether the node's own convention reproduces the output.
    others : int
        How many other conventions reproduce the output as well (one output cannot tell
        them apart).
    max_ulp : int or None
        For ``close``: the largest gap in units in the last place.
    summary : str
        The explainer's own line, or why it could not run.
    """

    backend: str
    verdict: str
    convention: str = ""
    own: bool = False
    others: int = 0
    max_ulp: int | None = None
    summary: str = ""

    def words(self, own: str) -> str:
        """One clause: ``onnx-reference matches Resize half_pixel (linear), float64
        throughout``; ``own`` is the node's own convention in words."""
        if self.own:
            return f"{self.backend} follows the node's own convention, {own}"
        if self.verdict in ("upsample", "convention"):
            more = f" (or any of {self.others} others equally)" if self.others else ""
            return f"{self.backend} matches {self.convention}{more}"
        if self.verdict == "close":
            return (f"{self.backend} is closest to {self.convention}, within {self.max_ulp} "
                    "ULP (no convention tried reproduces it exactly)")
        return f"{self.backend}: {self.summary}"

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def names(labels: Sequence[str], most: int = 3) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b', 'c' and 4 more``."""
    quoted = [repr(label) for label in labels]
    if len(quoted) > most:
        return f"{', '.join(quoted[:most])} and {len(quoted) - most} more"
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


@dataclass(frozen=True)
class NodeDiff:
    """One Upsample or Resize node compared between two runtimes.

    Attributes
    ----------
    node : str
        The node as messages name it.
    op : str
        ``Upsample-9``, ``Resize-13``, ...
    output : str
        Its output.
    where : str
        ``""`` in the main graph; else the subgraph or function holding it (not observed).
    convention : str
        The node's own convention, in words (``Resize half_pixel (linear)``).
    input_shape, output_shape : tuple of int or None
        The shapes it ran at in the first runtime.
    scales : tuple of float or None
        The scales it ran with (computed ones as computed).
    exercised : bool or None
        Whether it resized X (None where not observed).
    input_difference, difference : ValueDifference or None
        Its input X and its output compared between the runtimes.
    alone : ValueDifference or None
        Where an input differed: its output compared with the node run alone in each
        runtime on the first runtime's inputs.
    refused : tuple of str or None
        ``(runtime, message)`` where a runtime refused the node (its output then came from
        the other, so the rest of the model could run: nothing to compare).
    explanations : tuple of SideExplanation
        Where the node differs: what each runtime's output follows.
    unexplained : str
        Why the explainer cannot say (a cubic Resize, scales that shrink, ...).
    copies : bool
        Its scales are constants, all 1: it copies X whatever the inputs, so not resizing
        is no gap (computed scales that came to 1 are one).
    inputs_identical : bool or None
        Whether every value it reads (X, and computed scales or sizes) is the same in both
        runtimes (None where not compared: then X's comparison decides).
    sources : tuple of str
        Where its inputs differ: the nodes where that difference begins.
    """

    node: str
    op: str
    output: str
    where: str = ""
    convention: str = ""
    input_shape: tuple[int, ...] | None = None
    output_shape: tuple[int, ...] | None = None
    scales: tuple[float, ...] | None = None
    exercised: bool | None = None
    input_difference: ValueDifference | None = None
    difference: ValueDifference | None = None
    alone: ValueDifference | None = None
    refused: tuple[str, str] | None = None
    explanations: tuple[SideExplanation, ...] = ()
    unexplained: str = ""
    copies: bool = False
    inputs_identical: bool | None = None
    sources: tuple[str, ...] = ()

    @property
    def _inputs_same(self) -> bool:
        if self.inputs_identical is not None:
            return self.inputs_identical
        return self.input_difference is None or self.input_difference.identical

    @property
    def verdict(self) -> str:
        """``identical``, ``DIFFERS``, ``input differs`` (only its input made it differ),
        ``refused by RUNTIME``, ``not observed`` (in a subgraph or function) or ``not
        compared``."""
        if self.where:
            return NOT_OBSERVED
        if self.refused is not None:
            return f"refused by {self.refused[0]}"
        if self.difference is None:
            return NOT_COMPARED
        if self.difference.identical:
            return IDENTICAL
        if self._inputs_same:
            return DIFFERS
        if self.alone is not None:
            return FOLLOWS_INPUT if self.alone.identical else DIFFERS
        return FOLLOWS_INPUT if self._same_convention() else DIFFERS

    def _same_convention(self) -> str:
        """The convention both runtimes' outputs follow, each on its own input, or ``""``."""
        sides = self.explanations
        if len(sides) == 2 and all(side.own for side in sides):
            return self.convention
        if len(sides) == 2 and sides[0].convention and sides[0].convention == (
                sides[1].convention) and sides[0].verdict in ("upsample", "convention"):
            return sides[0].convention
        return ""

    def describe(self) -> str:
        """One line for a node that differs: where, how much, and what each runtime did."""
        assert self.difference is not None
        found = self.difference
        ulps = "" if found.max_ulp is None else (
            f", {found.max_ulp} ULP{'s' if found.max_ulp != 1 else ''}")
        head = (f"{self.node}: {found.mismatch}" if found.mismatch else
                f"{self.node}: {found.differing} of {found.size} elements differ (largest "
                f"difference {found.largest:.3g}{ulps})")
        source = self.input_difference
        begins = f", a difference that begins at {names(self.sources)}" if self.sources else ""
        if self.verdict == FOLLOWS_INPUT:
            assert source is not None
            why = ("run alone on the same input, both runtimes give the same bits"
                   if self.alone is not None else
                   f"each runtime's output follows {self._same_convention()} on its own input")
            inputs = (f"its input does ({source.count_words()}{begins})"
                      if not source.identical else f"its computed scales or sizes do{begins}")
            return f"{head} only because {inputs}: {why}"
        parts = [head]
        if not self._inputs_same and self.alone is not None:
            behind = f" (a difference that begins at {names(self.sources)})" if (
                self.sources) else ""
            parts.append(f"its input differs too{behind}, and run alone on the same input "
                         f"{self.alone.count_words()} still differ")
        # the runtime that departs from the node's own convention first
        ordered = sorted(self.explanations, key=lambda side: side.own)
        parts += [side.words(self.convention) for side in ordered]
        if self.unexplained:
            parts.append(f"not explained: {self.unexplained}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON takes them."""
        def compared(value: ValueDifference | None) -> dict[str, object] | None:
            return None if value is None else value.to_dict()

        return {"node": self.node, "op": self.op, "output": self.output, "where": self.where,
                "convention": self.convention, "input_shape": _listed(self.input_shape),
                "output_shape": _listed(self.output_shape), "scales": _listed(self.scales),
                "exercised": self.exercised, "verdict": self.verdict,
                "input_difference": compared(self.input_difference),
                "difference": compared(self.difference), "alone": compared(self.alone),
                "refused": None if self.refused is None else {
                    "backend": self.refused[0], "message": self.refused[1]},
                "explanations": [side.to_dict() for side in self.explanations],
                "unexplained": self.unexplained, "sources": list(self.sources),
                "summary": self.describe() if self.verdict in (DIFFERS, FOLLOWS_INPUT) else ""}


def _listed(values: Sequence[object] | None) -> list[object] | None:
    return None if values is None else list(values)
