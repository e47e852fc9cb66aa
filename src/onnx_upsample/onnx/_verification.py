"""What a verification found, and its words: :class:`Verification` and its parts.

The result of :func:`onnx_upsample.onnx.verify.verify_upgrade`: per output and per converted
node the comparison, what ran each side of each node, whether the node was exercised, what
onnxruntime refused and why, what stays unverified. :meth:`Verification.lines` words it,
each line with its kind (a note, a warning, a failure), in the Python API's spelling or the
command line's (``--input-shape``); the command line prints those lines, ``to_dict`` is its
``--json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .._spec.spelling import PYTHON, Spelling
from ._alone import KERNEL, LITERAL
from ._compare import Difference
from ._exercise import copies, empty_output, shape_hint
from ._report import scales_words, shape_words, table

__all__ = ["ORT", "InputUsed", "NodeCheck", "Refusal", "Verification", "inputs_words"]

ORT = "onnxruntime"
Kind = Literal["note", "warning", "failure"]


@dataclass(frozen=True)
class Refusal:
    """onnxruntime refusing one node (or a whole model), and what ran instead.

    Attributes
    ----------
    side : {"original", "upgraded"}
    node : str
        The node as messages name it; ``""`` for the model as a whole.
    op : str
        The node's operator (``Upsample``, ``Resize``).
    message : str
        onnxruntime's message, whole, on one line.
    runs_in : str
        What ran the node instead (``onnx-upsample``, ``onnx reference``, ...).
    """

    side: str
    node: str
    op: str
    message: str
    runs_in: str

    def describe(self) -> str:
        """One line: which side, which node, onnxruntime's whole message, what ran instead."""
        if not self.node:
            return (f"onnxruntime refused the {self.side} model as a whole: {self.message}; "
                    "it ran in pieces, cut at each Upsample and Resize")
        return (f"onnxruntime refused the {self.side} model's {self.op} {self.node!r}: "
                f"{self.message}; that node ran in {self.runs_in}, every other node in "
                "onnxruntime")


@dataclass(frozen=True)
class NodeCheck:
    """One Upsample of the original against the node that replaced it.

    Attributes
    ----------
    node : str
        The Upsample as messages name it.
    output : str
        Its output, which the replacing node writes too.
    where : str
        ``""`` in the main graph; else the subgraph or function holding it (not observed).
    input_shape, output_shape : tuple of int or None
        The shapes it ran at (None where not observed).
    scales : tuple of float or None
        Its scales as they were in the run (computed ones as computed).
    computed : bool
        Whether its scales are computed at run time.
    runs_in : tuple of str
        What ran the original's node and the upgrade's: ``onnxruntime``, ``onnx-upsample``
        (the kernel), ``onnxruntime (Resize-10)`` (the literal meaning of scales that
        shrink), ``onnx reference``.
    exercised : bool or None
        Whether the node enlarged X (None where not observed).
    difference : Difference or None
        The comparison of its output (None where not compared).
    cross_check : str
        Where onnx-upsample computed both sides: how onnx's reference Resize compares.
    behind : tuple of str
        The graph inputs its scales are computed from.
    """

    node: str
    output: str
    where: str = ""
    input_shape: tuple[int, ...] | None = None
    output_shape: tuple[int, ...] | None = None
    scales: tuple[float, ...] | None = None
    computed: bool = False
    runs_in: tuple[str, str] = (ORT, ORT)
    exercised: bool | None = None
    difference: Difference | None = None
    cross_check: str = ""
    behind: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """``bit-identical``, ``DIFFERS``, ``unverified`` (onnx-upsample computed both
        sides), ``not observed`` (in a subgraph or function) or ``not compared``."""
        if self.where:
            return "not observed"
        if self.difference is None:
            return "not compared"
        if not self.difference.identical:
            return "DIFFERS"
        return "unverified" if self.runs_in == (KERNEL, KERNEL) else "bit-identical"

    def to_dict(self) -> dict[str, object]:
        """The fields as JSON takes them."""
        return {"node": self.node, "output": self.output, "where": self.where,
                "input_shape": _listed(self.input_shape), "output_shape": _listed(
                    self.output_shape), "scales": _listed(self.scales),
                "computed_scales": self.computed,
                "original_runs_in": None if self.where else self.runs_in[0],
                "upgraded_runs_in": None if self.where else self.runs_in[1],
                "exercised": self.exercised,
                "verdict": self.verdict, "cross_check": self.cross_check,
                "difference": None if self.difference is None else self.difference.to_dict()}


def _listed(values: Sequence[object] | None) -> list[object] | None:
    return None if values is None else list(values)



@dataclass(frozen=True)
class InputUsed:
    """One input both models ran on: its name, element type, shape, and whether it was
    given (else made up at random)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    given: bool

    def describe(self) -> str:
        return f"{self.name} {self.dtype}[{', '.join(map(str, self.shape))}]"


def inputs_words(inputs: Sequence[InputUsed], seed: int, shapes_tried: int,
                 which: str) -> str:
    """``inputs random (seed 0): X float32[1, 3, 8, 8]; given: ...``: what a run was given;
    ``which`` says which shapes were chosen where more than one set was tried."""
    made = [item for item in inputs if not item.given]
    given = [item for item in inputs if item.given]
    parts = []
    if made:
        tried = f", the shapes {which} of {shapes_tried} tried" if shapes_tried > 1 else ""
        parts.append(f"random (seed {seed}{tried}): "
                     + ", ".join(item.describe() for item in made))
    if given:
        parts.append("given: " + ", ".join(item.describe() for item in given))
    return "inputs " + "; ".join(parts)


@dataclass(frozen=True)
class Verification:
    """The result of verifying an upgrade (:func:`~onnx_upsample.onnx.verify.verify_upgrade`).

    Attributes
    ----------
    level : str
        onnxruntime's optimization level of the comparison.
    inputs : tuple of InputUsed
        What both models ran on.
    seed : int
        The seed of the random inputs.
    shapes_tried : int
        How many sets of input shapes were tried to exercise every Upsample.
    notes : tuple of str
        How the original runs (the rewrites that made it runnable).
    outputs : tuple of Difference
        Per output of the upgraded model, the comparison.
    nodes : tuple of NodeCheck
        Per Upsample of the original, the comparison with the node that replaced it.
    refusals : tuple of Refusal
        What onnxruntime refused, and what ran instead.
    default_level_note : str
        How the outputs compare at onnxruntime's default level, where that differs.
    exercise_shapes : dict of str to dict
        Per node not exercised (by its label), the graph inputs its scales (or X) come from
        and their declared dimensions (symbolic ones by name): what to give to exercise it
        (:func:`~onnx_upsample.onnx._exercise.shape_hint` words it for the caller).
    """

    level: str
    inputs: tuple[InputUsed, ...]
    seed: int
    shapes_tried: int
    notes: tuple[str, ...]
    outputs: tuple[Difference, ...]
    nodes: tuple[NodeCheck, ...]
    refusals: tuple[Refusal, ...] = ()
    default_level_note: str = ""
    exercise_shapes: dict[str, dict[str, list[int | str]]] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """Every output and every compared node bit-identical."""
        return (all(output.identical for output in self.outputs)
                and all(node.verdict != "DIFFERS" for node in self.nodes))

    def _gaps(self) -> list[str]:
        """Nodes onnx-upsample computed on both sides, and nodes not observed."""
        lines = []
        for node in self.nodes:
            if node.verdict == "unverified":
                lines.append(f"node {node.node!r}: onnxruntime refused it on both sides, so "
                             "onnx-upsample computed both (the Resize read as the Upsample it "
                             "equals): its comparison shows only that the rest of the model is "
                             f"unchanged around it; {node.cross_check}")
            elif node.verdict == "not observed":
                lines.append(f"node {node.node!r} lies in {node.where}: its output is not "
                             "observed on its own, only through the model's outputs (where "
                             "it ran)")
        return lines

    def _idle(self) -> list[NodeCheck]:
        """The nodes that were not exercised although they could be."""
        return [node for node in self.nodes if node.exercised is False and not _copies(node)]

    @property
    def unverified(self) -> list[str]:
        """What stays unverified, one line each: nodes onnx-upsample computed on both sides,
        nodes not observed, nodes not exercised."""
        return self._gaps() + [self._not_exercised(node, PYTHON) for node in self._idle()]

    def _not_exercised(self, node: NodeCheck, spelling: Spelling) -> str:
        if node.output_shape is not None and 0 in node.output_shape:
            return empty_output(node.node, node.input_shape or (), node.output_shape)
        ran = f"X {shape_words(node.input_shape)} -> {shape_words(node.output_shape)}"
        shapes = self.exercise_shapes.get(node.node)
        hint = "" if shapes is None else shape_hint(shapes, spelling)
        source = (f"computed at run time from {', '.join(node.behind) or 'the inputs'}"
                  if node.computed else "constant")
        return (f"node {node.node!r} was not exercised: its scales ({source}) came to "
                f"{scales_words(node.scales)} ({ran}) under each of the {self.shapes_tried} "
                "input shape(s) tried, so it copied X" + (f"; give inputs under which they "
                                                          f"exceed 1: {hint}" if hint else ""))

    def lines(self, spelling: Spelling = PYTHON) -> list[tuple[Kind, str]]:
        """The report, line by line with its kind; what to give is named as ``spelling``
        names it: the command line's options (``--input-shape``), or Python keywords."""
        out: list[tuple[Kind, str]] = [("note", note) for note in self.notes]
        which = ("under which every converted node resizes X" if not self._idle() else
                 "that exercise the most converted nodes")
        if self.inputs:
            out.append(("note", inputs_words(self.inputs, self.seed, self.shapes_tried, which)))
        out += [("warning", refusal.describe()) for refusal in self.refusals]
        for node in self.nodes:
            if node.runs_in[0] == LITERAL:
                out.append(("warning", f"node {node.node!r} shrinks, and no runtime runs an "
                            "Upsample that does: the original ran as the Resize-10 it literally "
                            "means, so what is verified is that the upgrade writes that meaning, "
                            "not that it is what the exporter meant"))
        if self.nodes:
            out.append(("note", table(
                ("node", "input", "output", "scales", "runs in (original / upgraded)",
                 "exercised", "verdict"),
                [(n.node, shape_words(n.input_shape), shape_words(n.output_shape),
                  scales_words(n.scales),
                  "-" if n.where else f"{n.runs_in[0]} / {n.runs_in[1]}",
                  {True: "yes", False: "no", None: "?"}[n.exercised], n.verdict)
                 for n in self.nodes])))
        out.append(("note", table(
            ("output", "shape", "largest difference", "bit-identical"),
            [(o.name, shape_words(o.shape), f"{o.largest:g}", "yes" if o.identical else "NO")
             for o in self.outputs])))
        if self.verified:
            same = sum(node.verdict == "bit-identical" for node in self.nodes)
            what = "outputs are bit-identical" + (
                "" if not same else ", and so is each converted node's output"
                if same == len(self.nodes) else
                f", and so are the outputs of {same} of the {len(self.nodes)} converted nodes")
            left = self.unverified
            out.append(("note", f"verified: {what} ({ORT}, {self.level})"
                        + (f"; {len(left)} thing(s) unverified (warned)" if left else "")))
            if self.default_level_note:
                out.append(("note", self.default_level_note))
        out += [("note", f"node {n.node!r} copies X (constant scales {scales_words(n.scales)}): "
                 "there is nothing to exercise") for n in self.nodes if _copies(n)]
        out += [("warning", self._not_exercised(node, spelling)) for node in self._idle()]
        out += [("warning", line) for line in self._gaps()]
        out += self._failures()
        return out

    def _failures(self) -> list[tuple[Kind, str]]:
        failing = [node for node in self.nodes if node.verdict == "DIFFERS"]
        out: list[tuple[Kind, str]] = []
        for node in failing:
            assert node.difference is not None
            out.append(("failure", "verification FAILED: "
                        + node.difference.describe(f"node {node.node!r}, output")))
        blame = "" if failing or not self.nodes else (
            "; every converted node's output is bit-identical, so the difference arises in "
            "the other nodes")
        out += [("failure", f"verification FAILED: {output.describe()}{blame}")
                for output in self.outputs if not output.identical]
        return out

    @property
    def summary(self) -> str:
        """The report as text (Python spelling)."""
        return "\n".join(text for _, text in self.lines())

    def __str__(self) -> str:
        return self.summary

    def to_dict(self) -> dict[str, object]:
        """The verification as JSON takes it (``upgrade --verify --json``)."""
        return {"level": self.level, "verified": self.verified,
                "identical": all(output.identical for output in self.outputs),
                "note": "; ".join(self.notes), "notes": list(self.notes),
                "inputs": [{"name": i.name, "dtype": i.dtype, "shape": list(i.shape),
                            "given": i.given} for i in self.inputs],
                "seed": self.seed, "shapes_tried": self.shapes_tried,
                "default_level_note": self.default_level_note,
                "outputs": [output.to_dict() for output in self.outputs],
                "nodes": [node.to_dict() for node in self.nodes],
                "refusals": [vars(refusal) for refusal in self.refusals],
                "unverified": self.unverified}


def _copies(node: NodeCheck) -> bool:
    """A node whose constant scales are all 1 (or none, at rank 0): it copies X whatever
    the inputs, so not enlarging is no gap in the verification."""
    return copies(None if node.computed else node.scales)
