"""What a model-level diff of two runtimes found, and its words: :class:`ModelDiff`.

Per Upsample and Resize node: the shapes it ran at, how its output compares between the
runtimes, and, where it differs, which convention each runtime's output follows (the
explainer's name, the one closest to the node's own); per model output, the comparison;
for the model's nodes of every kind, where differences begin (:class:`Origin`) and which
nodes and outputs each one reaches. :meth:`ModelDiff.lines` words it line by line with its
kind (a note, a warning, a finding), in the Python API's spelling or the command line's; the
command line prints those lines, and ``to_dict`` is its ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .._spec.spelling import PYTHON, Spelling
from ..onnx._exercise import empty_output, shape_hint
from ..onnx._report import scales_words, shape_words, table
from ..onnx._verification import InputUsed, inputs_words
from ._diff_rows import (
    DIFFERS,
    FOLLOWS_INPUT,
    IDENTICAL,
    NodeDiff,
    SideExplanation,
    names,
)
from ._diff_values import ValueDifference

__all__ = ["DIFFERS", "FOLLOWS_INPUT", "IDENTICAL", "ModelDiff", "NodeDiff", "Origin",
           "SideExplanation"]

Kind = Literal["note", "warning", "finding"]


@dataclass(frozen=True)
class Origin:
    """A node where a difference between the runtimes begins: its output differs while
    every value it reads is the same in both (or, for an Upsample or Resize whose input
    differs too, its output still differs when it runs alone on one input).

    Attributes
    ----------
    node, op : str
        The node as messages name it, and its operator (``Conv``, ``Upsample-9``).
    difference : ValueDifference
        Its (first) output that differs: how many elements, by how much (absolute, ULP),
        or its other shape.
    behind : tuple of str
        Origins upstream whose difference reaches its input as well (only an Upsample or
        Resize, shown to add a difference of its own, has any).
    reaches : tuple of str
        The nodes downstream whose outputs differ through it, in the graph's order.
    outputs : tuple of str
        The model outputs it changes.
    """

    node: str
    op: str
    difference: ValueDifference
    behind: tuple[str, ...] = ()
    reaches: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def reach_words(self) -> str:
        """``it reaches 37 nodes ('relu1', 'add2', 'mul3' and 34 more) and output 'y'``;
        ``it is a model output`` where it is one and reaches nothing else."""
        parts = []
        if self.reaches:
            count = len(self.reaches)
            parts.append(f"{count} node{'s' if count > 1 else ''} ({names(self.reaches)})")
        if self.outputs == (self.difference.name,) and not self.reaches:
            return "it is a model output"
        if self.outputs:
            parts.append(f"output{'s' if len(self.outputs) > 1 else ''} "
                         f"{names(self.outputs, 8)}")
        if not parts:
            return "it changes no model output"
        return f"it reaches {' and '.join(parts)}"

    def describe(self) -> str:
        """One line: where it begins, how large it is, what it reaches."""
        found = self.difference
        return (f"a difference begins at node {self.node!r} ({self.op}), whose inputs are the "
                f"same in both runtimes: output {found.name!r}: {found.size_words()}; "
                f"{self.reach_words()}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON takes them."""
        return {"node": self.node, "op": self.op, "difference": self.difference.to_dict(),
                "behind": list(self.behind), "reaches": list(self.reaches),
                "outputs": list(self.outputs)}


@dataclass(frozen=True)
class ModelDiff:
    """One model run in two runtimes, every node's outputs compared, every Upsample and
    Resize node explained (:func:`onnx_upsample.conformance.diff`).

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
    outputs : tuple of ValueDifference
        Per model output, the comparison.
    whole : tuple of str
        Per runtime, its message where it refused the model as a whole (it then ran cut at
        each Upsample and Resize); ``""`` where it ran it whole.
    exercise_shapes : dict
        Per node not exercised, the graph inputs its scales (or X) come from and their
        declared dimensions: what to give to exercise it.
    origins : tuple of Origin
        Where differences begin, among the main graph's nodes of every kind, in the
        graph's order.
    nodes_compared : int
        How many main-graph nodes (of every kind) had their outputs compared (a node a
        runtime refused is not).
    nodes_differing : int
        How many of them have an output that differs (where differences begin, and the
        nodes they reach).
    exposure : tuple of str
        Per runtime that computes the model otherwise with every value exposed (it fuses
        nodes only across values that are no graph output), or refuses it so, what changed
        (then where differences begin is as that run shows it; the rows and the outputs are
        from the run that exposes only their values).
    """

    model: str
    backends: tuple[str, str]
    versions: tuple[str, str]
    inputs: tuple[InputUsed, ...]
    seed: int
    shapes_tried: int
    nodes: tuple[NodeDiff, ...]
    outputs: tuple[ValueDifference, ...]
    whole: tuple[str, str] = ("", "")
    exercise_shapes: dict[str, dict[str, list[int | str]]] = field(default_factory=dict)
    origins: tuple[Origin, ...] = ()
    nodes_compared: int = 0
    nodes_differing: int = 0
    exposure: tuple[str, ...] = ()

    @property
    def differs(self) -> bool:
        """Whether some Upsample or Resize node itself differs between the runtimes (a
        difference that begins in another node is in :attr:`origins`)."""
        return any(node.verdict == DIFFERS for node in self.nodes)

    @property
    def differing(self) -> list[NodeDiff]:
        """The nodes that differ (verdict ``DIFFERS``)."""
        return [node for node in self.nodes if node.verdict == DIFFERS]

    @property
    def nothing_compared(self) -> bool:
        """Whether the main graph has Upsample or Resize nodes and none of them could be
        compared (a runtime refused each one): the diff then answers nothing."""
        main = [node for node in self.nodes if not node.where]
        return bool(main) and all(node.difference is None for node in main)

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
        out += [("warning", text) for text in self.exposure]
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
                  "-" if n.difference is None else n.difference.amount(), n.verdict)
                 for n in self.nodes])))
        if self.outputs:
            out.append(("note", table(
                ("output", "shape", "differing", "largest difference"),
                [(o.name, shape_words(o.shapes[0]), o.amount(),
                  "-" if o.mismatch else f"{o.largest:g}") for o in self.outputs])))
        rows = {node.node: node for node in self.nodes}
        out += [("note", origin.describe()) for origin in self.origins
                if origin.node not in rows]
        out += [("note", node.describe()) for node in self.nodes
                if node.verdict == FOLLOWS_INPUT]
        out += self._gaps(spelling)
        reach = {origin.node: origin.reach_words() for origin in self.origins}
        out += [("finding", node.describe() + (f"; {reach[node.node]}" if node.node in reach
                                               else "")) for node in self.differing]
        failing = self.differs or self.nothing_compared
        out.append(("finding" if failing else "note", self._conclusion()))
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
            # scales above 1 whose output sizes round back to the input's want a larger X
            enlarging = node.scales is not None and any(scale > 1 for scale in node.scales)
            why = (f"{scales_words(node.scales)} left every size of X as it was" if enlarging
                   else f"came to {scales_words(node.scales)}")
            give = "larger inputs" if enlarging else "inputs under which they exceed 1"
            out.append(("warning", f"node {node.node!r} was not exercised: its scales {why} "
                        f"under each of the {self.shapes_tried} input shape(s) tried, so both "
                        "runtimes copied X" + (f"; give {give}: {hint}" if shapes else "")))
        out += [("warning", f"node {node.node!r} lies in {node.where}: its output is not "
                 "observed on its own, only through the model's outputs")
                for node in self.nodes if node.where]
        return out

    def _others(self) -> str:
        """The origins that are no Upsample or Resize node, as the conclusion names them."""
        rows = {node.node for node in self.nodes}
        others = [f"{origin.node!r} ({origin.op})" for origin in self.origins
                  if origin.node not in rows]
        if len(others) > 3:
            others = [*others[:3], f"{len(others) - 3} more"]
        return ", ".join(others)

    def _conclusion(self) -> str:
        first, second = (name if version == "unknown" else f"{name} {version}"
                         for name, version in zip(self.backends, self.versions, strict=True))
        changed = [output for output in self.outputs if not output.identical]
        outputs = ("" if not changed else "; " + ", ".join(
            output.describe() for output in changed))
        compared = [node for node in self.nodes if node.difference is not None]
        others = self._others()
        if self.differs:
            also = f" (differences begin in other nodes too: {others})" if others else ""
            return (f"{len(self.differing)} of {len(compared)} compared Upsample/Resize "
                    f"node(s) differ between {first} and {second}{also}{outputs}")
        if self.nothing_compared:
            refusers: dict[str, int] = {}
            for node in self.nodes:
                if node.refused is not None:
                    refusers[node.refused[0]] = refusers.get(node.refused[0], 0) + 1
            which = ", ".join(f"{name} refused {count}" for name, count in refusers.items())
            return (f"no Upsample or Resize node could be compared ({which} of "
                    f"{len([node for node in self.nodes if not node.where])}), so this diff "
                    f"cannot say whether {first} and {second} agree on them{outputs}")
        where = f"other nodes: {others}" if others else "other nodes"
        if compared:
            what = f"no Upsample or Resize node differs between {first} and {second}"
            if changed:
                return f"{what}{outputs}: the difference begins in {where}"
            return (f"{what}; neither does any output" + (
                f" (differences begin in {where}, and go no further)" if others else ""))
        what = ("the model has no Upsample or Resize node" if not self.nodes
                else "no Upsample or Resize node of the main graph could be compared")
        if changed:
            return f"{what}{outputs}" + (f": the difference begins in {where}" if others
                                         else "")
        return f"{what}; its outputs are the same in {first} and {second}"

    @property
    def summary(self) -> str:
        """The report as text (Python spelling)."""
        return "\n".join(text for _, text in self.lines())

    def __str__(self) -> str:
        return self.summary

    def to_dict(self) -> dict[str, Any]:
        """The diff as JSON takes it (``onnx-upsample diff --json``)."""
        return {"model": self.model, "differs": self.differs,
                "nothing_compared": self.nothing_compared,
                "backends": [{"name": name, "version": version, "refused_model": message}
                             for name, version, message in zip(
                                 self.backends, self.versions, self.whole, strict=True)],
                "inputs": [{"name": i.name, "dtype": i.dtype, "shape": list(i.shape),
                            "given": i.given} for i in self.inputs],
                "seed": self.seed, "shapes_tried": self.shapes_tried,
                "nodes": [node.to_dict() for node in self.nodes],
                "outputs": [output.to_dict() for output in self.outputs],
                "nodes_compared": self.nodes_compared,
                "nodes_differing": self.nodes_differing,
                "origins": [origin.to_dict() for origin in self.origins],
                "exposure": list(self.exposure),
                "conclusion": self._conclusion()}
