"""What a model-level diff of two runtimes found, and its words: :class:`ModelDiff`.

Per Upsample and Resize node: the shapes it ran at, how its output compares between the
runtimes, and, where it differs, which convention each runtime's output follows (the
explainer's name, the one closest to the node's own); per model output, the comparison.
:meth:`ModelDiff.lines` words it line by line with its kind (a note, a warning, a
finding), in the Python API's spelling or the command line's; the command line prints those
lines, and ``to_dict`` is its ``--json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._spec.spelling import PYTHON, Spelling
from ..onnx._compare import Difference
from ..onnx._exercise import empty_output, shape_hint
from ..onnx._report import scales_words, shape_words, table
from ..onnx._verification import InputUsed, inputs_words

__all__ = ["DIFFERS", "FOLLOWS_INPUT", "IDENTICAL", "ModelDiff", "NodeDiff", "SideExplanation"]

Kind = Literal["note", "warning", "finding"]

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
    input_difference, difference : Difference or None
        Its input and its output compared between the runtimes.
    alone : Difference or None
        Where its input differed: its output compared with the node run alone in each
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
    input_difference: Difference | None = None
    difference: Difference | None = None
    alone: Difference | None = None
    refused: tuple[str, str] | None = None
    explanations: tuple[SideExplanation, ...] = ()
    unexplained: str = ""
    copies: bool = False

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
        if self.input_difference is None or self.input_difference.identical:
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
        head = (f"{self.node}: {found.differing} of {found.size} elements differ (largest "
                f"difference {found.largest:.3g})")
        source = self.input_difference
        if self.verdict == FOLLOWS_INPUT:
            assert source is not None
            why = ("run alone on the same input, both runtimes give the same bits"
                   if self.alone is not None else
                   f"each runtime's output follows {self._same_convention()} on its own input")
            return (f"{head} only because its input does ({source.differing} of "
                    f"{source.size} elements): {why}")
        parts = [head]
        if source is not None and not source.identical and self.alone is not None:
            parts.append(f"its input differs too, and run alone on the same input "
                         f"{self.alone.differing} of {self.alone.size} elements still differ")
        # the runtime that departs from the node's own convention first
        ordered = sorted(self.explanations, key=lambda side: side.own)
        parts += [side.words(self.convention) for side in ordered]
        if self.unexplained:
            parts.append(f"not explained: {self.unexplained}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON takes them."""
        def compared(value: Difference | None) -> dict[str, object] | None:
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
                "unexplained": self.unexplained,
                "summary": self.describe() if self.verdict in (DIFFERS, FOLLOWS_INPUT) else ""}


def _listed(values: Sequence[object] | None) -> list[object] | None:
    return None if values is None else list(values)


@dataclass(frozen=True)
class ModelDiff:
    """One model run in two runtimes, every Upsample and Resize node compared
    (:func:`onnx_upsample.conformance.diff`).

    Attributes
    ----------
    model : str
        The model as messages name it (its path, or ``"model"``).
    backends : tuple of str
        The two runtimes, in the order given.
    versions : tuple of str
        Their versions.
    inputs : tuple of InputUsed
        What both ran on.
    seed : int
        The seed of the random inputs.
    shapes_tried : int
        How many sets of input shapes were tried to exercise every node.
    nodes : tuple of NodeDiff
        Per Upsample and Resize node, the comparison.
    outputs : tuple of Difference
        Per model output, the comparison.
    whole : tuple of str
        Per runtime, its message where it refused the model as a whole (it then ran cut at
        each Upsample and Resize); ``""`` where it ran it whole.
    exercise_shapes : dict
        Per node not exercised, the graph inputs its scales (or X) come from and their
        declared dimensions: what to give to exercise it.
    """

    model: str
    backends: tuple[str, str]
    versions: tuple[str, str]
    inputs: tuple[InputUsed, ...]
    seed: int
    shapes_tried: int
    nodes: tuple[NodeDiff, ...]
    outputs: tuple[Difference, ...]
    whole: tuple[str, str] = ("", "")
    exercise_shapes: dict[str, dict[str, list[int | str]]] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        """Whether some Upsample or Resize node itself differs between the runtimes."""
        return any(node.verdict == DIFFERS for node in self.nodes)

    @property
    def differing(self) -> list[NodeDiff]:
        """The nodes that differ (verdict ``DIFFERS``)."""
        return [node for node in self.nodes if node.verdict == DIFFERS]

    def _idle(self) -> list[NodeDiff]:
        return [node for node in self.nodes if node.exercised is False and not node.copies]

    def lines(self, spelling: Spelling = PYTHON) -> list[tuple[Kind, str]]:
        """The report, line by line with its kind; what to give is named as ``spelling``
        names it: the command line's options (``--input-shape``), or Python keywords."""
        first, second = self.backends
        out: list[tuple[Kind, str]] = []
        if self.inputs:
            out.append(("note", inputs_words(self.inputs, self.seed, self.shapes_tried,
                                             "that exercise the most nodes")))
        for backend, message in zip(self.backends, self.whole, strict=True):
            if message:
                # the message is said once: with the node it came from, where one was refused
                said = any(node.refused is not None and node.refused[0] == backend
                           for node in self.nodes)
                out.append(("warning", f"{backend} refused the model as a whole"
                            + ("" if said else f" ({message})") + ": it ran cut at each "
                            f"Upsample and Resize, every piece in {backend} where it takes it"))
        for node in self.nodes:
            if node.refused is not None:
                backend, message = node.refused
                other = second if backend == first else first
                out.append(("warning", f"{backend} refused node {node.node!r} ({node.op}): "
                            f"{message}; its output came from {other}, so that the rest of "
                            "the model ran on: the node is not compared"))
        if self.nodes:
            out.append(("note", table(
                ("node", "op", "input", "output", "scales", "exercised", "differing",
                 "verdict"),
                [(n.node, n.op, shape_words(n.input_shape), shape_words(n.output_shape),
                  scales_words(n.scales), {True: "yes", False: "no", None: "?"}[n.exercised],
                  "-" if n.difference is None else f"{n.difference.differing} of "
                  f"{n.difference.size}", n.verdict) for n in self.nodes])))
        if self.outputs:
            out.append(("note", table(
                ("output", "shape", "differing", "largest difference"),
                [(o.name, shape_words(o.shape), f"{o.differing} of {o.size}", f"{o.largest:g}")
                 for o in self.outputs])))
        out += [("note", node.describe()) for node in self.nodes
                if node.verdict == FOLLOWS_INPUT]
        out += self._gaps(spelling)
        out += [("finding", node.describe()) for node in self.differing]
        out.append(("finding" if self.differs else "note", self._conclusion()))
        return out

    def _gaps(self, spelling: Spelling) -> list[tuple[Kind, str]]:
        out: list[tuple[Kind, str]] = []
        for node in self._idle():
            shapes = self.exercise_shapes.get(node.node)
            hint = "" if shapes is None else shape_hint(shapes, spelling)
            if node.output_shape is not None and 0 in node.output_shape:
                out.append(("warning", empty_output(node.node, node.input_shape or (),
                                                    node.output_shape)))
                continue
            out.append(("warning", f"node {node.node!r} was not exercised: its scales came to "
                        f"{scales_words(node.scales)} under each of the {self.shapes_tried} "
                        "input shape(s) tried, so both runtimes copied X"
                        + (f"; give inputs under which they exceed 1: {hint}" if hint else "")))
        out += [("warning", f"node {node.node!r} lies in {node.where}: its output is not "
                 "observed on its own, only through the model's outputs")
                for node in self.nodes if node.where]
        return out

    def _conclusion(self) -> str:
        first, second = (name if version == "unknown" else f"{name} {version}"
                         for name, version in zip(self.backends, self.versions, strict=True))
        changed = [output for output in self.outputs if not output.identical]
        outputs = ("" if not changed else "; " + ", ".join(
            output.describe() for output in changed))
        compared = [node for node in self.nodes if node.difference is not None]
        if self.differs:
            return (f"{len(self.differing)} of {len(compared)} compared Upsample/Resize "
                    f"node(s) differ between {first} and {second}{outputs}")
        if compared:
            what = f"no Upsample or Resize node differs between {first} and {second}"
            return (f"{what}{outputs}: the difference arises in other nodes" if changed
                    else f"{what}; neither does any output")
        what = ("the model has no Upsample or Resize node" if not self.nodes
                else "no Upsample or Resize node could be compared")
        return f"{what}{outputs}" if changed else (
            f"{what}; its outputs are the same in {first} and {second}")

    @property
    def summary(self) -> str:
        """The report as text (Python spelling)."""
        return "\n".join(text for _, text in self.lines())

    def __str__(self) -> str:
        return self.summary

    def to_dict(self) -> dict[str, Any]:
        """The diff as JSON takes it (``onnx-upsample diff --json``)."""
        return {"model": self.model, "differs": self.differs,
                "backends": [{"name": name, "version": version, "refused_model": message}
                             for name, version, message in zip(
                                 self.backends, self.versions, self.whole, strict=True)],
                "inputs": [{"name": i.name, "dtype": i.dtype, "shape": list(i.shape),
                            "given": i.given} for i in self.inputs],
                "seed": self.seed, "shapes_tried": self.shapes_tried,
                "nodes": [node.to_dict() for node in self.nodes],
                "outputs": [output.to_dict() for output in self.outputs],
                "conclusion": self._conclusion()}
