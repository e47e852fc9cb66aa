"""Verification of an upgrade: the original and the upgrade run on the same inputs, every
output and every converted node compared bit for bit (:func:`verify_upgrade`).

1. The original runs in onnxruntime after rewrites that cannot change a result
   (``_original``: modes in lower case; Upsample-1, Upsample-10 and forms the opset does not
   have as the equivalent opset-7 or opset-9 model), never in another evaluator.
2. The inputs are those given, the others made up; symbolic dimensions get distinct sizes,
   in a few patterns tried until every Upsample enlarges (``_exercise``).
3. Each Upsample's output and the output of the node that replaced it are extra graph
   outputs while verifying (``_probe.expose``), so that a difference is found at its node.
4. Where onnxruntime refuses a model, both are cut at every Upsample and Resize
   (``_probe.run_pieces``): every other node runs in onnxruntime, and a node onnxruntime
   refuses alone runs elsewhere (``_alone``); which side it refused, and why, is reported.
5. Where every output is identical, they are compared again at onnxruntime's default level,
   for a note.

onnxruntime is imported here only, on first use (this module loads without it).
:class:`OnnxruntimeRun` runs a model so: it passes onnxruntime to ``_probe.run_pieces`` as
the runtime of the pieces, as ``conformance.diff`` passes each runtime's worker process.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, NamedTuple, TextIO

import numpy as np
import onnx

from .._errors import UpsampleError
from ..io.formats import slow_step
from ._alone import (
    KERNEL,
    LITERAL,
    REFERENCE,
    as_upsample,
    literal_resize,
    run_reference,
    run_upsample,
)
from ._compare import Difference, difference
from ._exercise import Probe, copies, declared_shapes, exercised, inputs_behind, search
from ._feeds import checked_inputs, graph_inputs, scales_inputs
from ._graphs import ModelLike, is_upsample
from ._mapped import attach, given_stand_ins
from ._original import UpsampleAt, runnable_original, upsample_nodes
from ._probe import Runner, piece_words, run_pieces
from ._verification import ORT, InputUsed, NodeCheck, Refusal, Verification

# the call and the types of its result; the rest (OnnxruntimeRun, the levels) is this
# package's own
__all__ = ["Difference", "InputUsed", "NodeCheck", "Refusal", "Verification", "verify_upgrade"]

# Where the bits of a conversion are compared. At its default level (ORT_ENABLE_ALL)
# onnxruntime adds the NCHWc layout optimization (x86), which runs a Resize after a Conv as
# com.microsoft.nchwc's Upsample kernel but leaves an Upsample-7 (scales attribute) to the
# standard one, so linear results differ in the last bit although the rewrite itself is
# exact; the level below keeps constant folding and node fusions.
EXACT_LEVEL = "ORT_ENABLE_EXTENDED"
DEFAULT_LEVEL = "ORT_ENABLE_ALL"


def import_onnxruntime() -> ModuleType:
    """onnxruntime, imported now (ImportError if it is not installed; callers word it)."""
    import onnxruntime

    return onnxruntime


class RefusedError(UpsampleError):
    """onnxruntime refusing to load or run a model; ``message`` is its whole message, on
    one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _one_line(error: BaseException) -> str:
    return " ".join(line.strip() for line in str(error).splitlines() if line.strip())


def ort_session(model: onnx.ModelProto, level: str,
                tensors: Mapping[str, np.ndarray] | None = None) -> Any:
    """An onnxruntime session (CPU) of ``model`` at optimization ``level``; the values of
    its stand-ins (``_mapped``) come from ``tensors``, which must outlive the session, as
    initializers onnxruntime takes without a copy. :class:`RefusedError` where onnxruntime
    refuses to load it."""
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    # refusals come back as one line of ours; ORT's own log would print them again, in colour
    options.log_severity_level = 4
    ort.set_default_logger_severity(4)
    names = given_stand_ins(model, tensors or {})
    if names:
        given = tensors or {}
        options.add_external_initializers(
            names, [ort.OrtValue.ortvalue_from_numpy(given[name]) for name in names])
    try:
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:
        raise RefusedError(_one_line(error)) from None


def _ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], level: str,
             tensors: Mapping[str, np.ndarray] | None = None) -> list[np.ndarray]:
    """``model`` run in onnxruntime (CPU) at optimization ``level`` (:func:`ort_session`);
    :class:`RefusedError` where onnxruntime refuses to load or run it."""
    return ort_outputs(ort_session(model, level, tensors), feeds)


def ort_outputs(session: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """A session's outputs for ``feeds``; :class:`RefusedError` where onnxruntime fails."""
    try:
        return list(session.run(None, dict(feeds)))
    except Exception as error:
        raise RefusedError(_one_line(error)) from None


class _Record(NamedTuple):
    """What one run of :class:`OnnxruntimeRun` refused and ran elsewhere."""

    refusals: dict[str, Refusal]
    runs_in: dict[str, str]
    cross_checks: dict[str, str]
    whole: str
    cut: bool


class OnnxruntimeRun:
    """One model run in onnxruntime, with what it refuses run elsewhere.

    :meth:`run` runs the whole model in onnxruntime, or, with ``cut``, in pieces cut at every
    main-graph Upsample and Resize: the pieces in onnxruntime, each cut node alone in
    onnxruntime where it takes it, else in onnx-upsample's kernel (an Upsample; a Resize
    that means one), as the Resize-10 an Upsample that shrinks literally means, or in onnx's
    reference evaluator (any other node). What was refused, and what ran instead, is kept.

    Parameters
    ----------
    model : onnx.ModelProto
        The model (with all its data).
    side : str
        What reports call it (``original``, ``upgraded``).
    labels : mapping of str to str, optional
        How reports name a node, by its first output.
    tensors : mapping of str to numpy.ndarray, optional
        The values of ``model``'s stand-ins, where it is a structure (``_mapped``): pieces
        take them without a copy.
    progress : text stream, optional
        Where a line goes for each piece or node that takes more than a second.
    kernel : Runner, optional
        What runs an Upsample node onnxruntime refuses (default ``_alone.run_upsample``).
    literal : bool, default True
        Run an Upsample whose scales shrink, which the kernel refuses, as the Resize-10 it
        literally means (what ``upgrade --allow-downscale`` writes); False: the refusal
        stands.
    """

    def __init__(self, model: onnx.ModelProto, side: str,
                 labels: Mapping[str, str] | None = None, *,
                 tensors: Mapping[str, np.ndarray] | None = None,
                 progress: TextIO | None = None, kernel: Runner | None = None,
                 literal: bool = True) -> None:
        self.model, self.side, self.labels = model, side, dict(labels or {})
        self.tensors, self.progress = dict(tensors or {}), progress
        self.kernel: Runner = kernel or run_upsample
        self.literal = literal
        self.refusals: dict[str, Refusal] = {}
        self.whole = ""  # onnxruntime's message where it refused the model as a whole
        self.cut = False  # whether the last run was cut
        self.runs_in: dict[str, str] = {}
        self.cross_checks: dict[str, str] = {}
        self.cut_at = {index for index, node in enumerate(model.graph.node)
                       if node.op_type in ("Upsample", "Resize")}

    def run(self, feeds: Mapping[str, np.ndarray], outputs: Sequence[str],
            cut: bool | None = None, level: str = EXACT_LEVEL) -> dict[str, np.ndarray]:
        """The values named in ``outputs`` (graph outputs or any main-graph value).

        ``cut``: True runs the model in pieces, False whole; None (the default) whole, and
        where onnxruntime refuses that, in pieces (the refusal kept as :attr:`whole`).
        :attr:`cut` says how it ran. :class:`RefusedError` where onnxruntime refuses a piece
        of the model that is no Upsample or Resize. Each call starts its own record: what
        was refused, and what ran instead, is this run's (:meth:`record`).
        """
        self.refusals, self.runs_in, self.cross_checks, self.whole = {}, {}, {}, ""
        if cut is None:
            try:
                return self._run(feeds, outputs, False, level)
            except RefusedError as refused:
                self.whole = refused.message
                return self._run(feeds, outputs, True, level)
        return self._run(feeds, outputs, cut, level)

    def record(self) -> _Record:
        """What the last run refused and ran elsewhere, for :meth:`restore`."""
        return _Record(dict(self.refusals), dict(self.runs_in), dict(self.cross_checks),
                       self.whole, self.cut)

    def restore(self, record: _Record) -> None:
        """Make ``record`` (of an earlier run) the last run's."""
        self.refusals, self.runs_in = dict(record.refusals), dict(record.runs_in)
        self.cross_checks, self.whole, self.cut = (dict(record.cross_checks), record.whole,
                                                   record.cut)

    def _run(self, feeds: Mapping[str, np.ndarray], outputs: Sequence[str], cut: bool,
             level: str) -> dict[str, np.ndarray]:
        def pieces(model: onnx.ModelProto, fed: dict[str, np.ndarray]) -> list[np.ndarray]:
            with slow_step(self.progress, f"{piece_words(model)} in onnxruntime"):
                return _ort_run(model, fed, level, self.tensors)

        def alone(model: onnx.ModelProto, fed: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
            with slow_step(self.progress, piece_words(model)):
                return ran_alone(model, fed)

        def ran_alone(model: onnx.ModelProto,
                      fed: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
            node = model.graph.node[0]
            try:
                return _ort_run(model, fed, level, self.tensors)
            except RefusedError as refused:
                results, runs_in, cross = self._elsewhere(attach(model, self.tensors), fed,
                                                          level)
                label = self.labels.get(node.output[0], node.name or node.output[0])
                self.refusals[node.output[0]] = Refusal(self.side, label, node.op_type,
                                                        refused.message, runs_in)
                self.runs_in[node.output[0]] = runs_in
                if cross:
                    self.cross_checks[node.output[0]] = cross
                return results

        self.cut = cut
        feeds = {name: np.asarray(value) for name, value in feeds.items()}
        return run_pieces(self.model, feeds, outputs, self.cut_at if cut else (), pieces,
                          alone)

    def _elsewhere(self, model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                   level: str) -> tuple[Sequence[np.ndarray], str, str]:
        """A one-node model onnxruntime refused, run elsewhere: its results, what ran it,
        and (where onnx-upsample ran a Resize) how onnx's reference Resize compares."""
        node = model.graph.node[0]
        if is_upsample(node):
            try:
                return self.kernel(model, feeds), KERNEL, ""
            except UpsampleError:
                # scales that shrink: no Upsample runs them, their literal Resize-10 may
                literal = literal_resize(model) if self.literal else None
                if literal is None:
                    raise
            try:
                return _ort_run(literal, feeds, level), LITERAL, ""
            except RefusedError:
                return run_reference(literal, feeds), REFERENCE, ""
        upsample = as_upsample(model) if node.op_type == "Resize" else None
        if upsample is not None:
            try:
                results = self.kernel(upsample, feeds)
            except UpsampleError:  # run-time scales that shrink
                return run_reference(model, feeds), REFERENCE, ""
            return results, KERNEL, _cross_check(model, feeds, results[0])
        return run_reference(model, feeds), REFERENCE, ""


def _cross_check(model: onnx.ModelProto, feeds: dict[str, np.ndarray],
                 ours: np.ndarray) -> str:
    """How onnx's reference evaluator's Resize (an implementation of its own) compares with
    onnx-upsample's result for the same node."""
    try:
        theirs = run_reference(model, feeds)[0]
    except Exception as error:
        return f"onnx's reference evaluator cannot run the Resize: {_one_line(error)}"
    found = difference("", np.asarray(theirs), ours)
    if found.identical:
        return "onnx's reference evaluator gives the Resize the same bits"
    return (f"onnx's reference evaluator, whose Resize interpolates in float64, differs from "
            f"it by at most {found.largest:.3g} ({found.differing} of {found.size} elements)")


def _model(model: ModelLike) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    if not isinstance(model, str | os.PathLike):
        raise TypeError(f"model is a {type(model).__name__}; expected an onnx.ModelProto or "
                        "the path of a .onnx file")
    from ._external import load

    return load(os.fspath(model), "all")


def verify_upgrade(original: ModelLike, upgraded: ModelLike, *,
                   inputs: Mapping[str, np.ndarray] | None = None,
                   input_shapes: Mapping[str, Sequence[int]] | None = None, seed: int = 0,
                   level: str = EXACT_LEVEL, default_level: bool = True) -> Verification:
    """Verify that ``upgraded`` computes what ``original`` does: outputs and converted nodes.

    Both models run in onnxruntime on the same inputs, at optimization level ``level``;
    each Upsample of the original (versions 1, 7, 9, 10) and the node that replaced it
    (Resize, or Identity at rank 0) are compared by their output, and so is every output of
    the model, bit for bit. See the module docstring for how the original runs, how inputs
    are chosen, and what runs the nodes onnxruntime refuses.

    Parameters
    ----------
    original, upgraded : onnx.ModelProto or str or os.PathLike
        The models (paths are read with all their external data); not modified.
    inputs : mapping of str to numpy.ndarray, optional
        Values for graph inputs; the others are made up at random.
    input_shapes : mapping of str to sequence of int, optional
        Shapes for inputs made up at random (else their symbolic dimensions are chosen).
    seed : int, default 0
        The seed of the random inputs.
    level : str, default ``"ORT_ENABLE_EXTENDED"``
        onnxruntime's graph optimization level (a ``GraphOptimizationLevel`` name).
    default_level : bool, default True
        Where every output is identical, compare them at ``ORT_ENABLE_ALL`` too, for a note
        (its NCHWc layout optimization runs a Resize after a Conv in another kernel).

    Returns
    -------
    Verification
        ``verified``: every output and compared node bit-identical; ``lines()`` the report;
        ``to_dict()`` the same as JSON.

    Raises
    ------
    ImportError
        If onnxruntime is not installed.
    UpsampleError
        If an input given is not one of the model, has another type or shape than declared,
        or is too large; if the original cannot be brought to a form onnxruntime loads; if
        onnxruntime refuses a model even cut at its Upsample nodes (a node of another kind).
    """
    import_onnxruntime()
    before, after = _model(original), _model(upgraded)
    given, shapes, seed = checked_inputs(graph_inputs(before), inputs, input_shapes, seed)
    runnable = runnable_original(before)
    nodes = upsample_nodes(before, runnable.model)
    labels = {node.output: node.label for node in nodes}
    sides = (OnnxruntimeRun(runnable.model, "original", labels),
             OnnxruntimeRun(after, "upgraded", labels))
    shown = [node for node in nodes if node.index is not None]
    written = {name for node in after.graph.node for name in node.output}
    wanted = ([value.name for value in runnable.model.graph.output]
              + [name for node in shown for name in (node.x, node.output, node.scales)
                 if name and not (name == node.scales and node.constant is not None)],
              [value.name for value in after.graph.output]
              + [node.output for node in shown if node.output in written])
    declared = graph_inputs(runnable.model)
    scales = {**scales_inputs(before), **scales_inputs(runnable.model)}
    fixed = {**{name: list(value.shape) for name, value in given.items()}, **shapes}
    feeds, values, tried = _exercising(sides[0], wanted[0], shown, declared, given, fixed,
                                       scales, seed)
    cut = sides[0].cut
    try:  # both models cut alike: where either is refused whole, both run in pieces
        converted = sides[1].run(feeds, wanted[1], True if cut else None)
        if sides[1].cut and not cut:
            cut, values = True, sides[0].run(feeds, wanted[0], True)
    except RefusedError as refused:
        raise _worded(refused, "upgraded") from None
    return _verification(runnable.notes, nodes, sides, feeds, given, values, converted, after,
                         seed, tried, level, default_level, cut)


def _exercising(side: OnnxruntimeRun, wanted: Sequence[str], shown: Sequence[UpsampleAt],
                declared: Sequence[onnx.ValueInfoProto], given: Mapping[str, np.ndarray],
                fixed: Mapping[str, Sequence[int]], scales: Mapping[str, int],
                seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], int]:
    """The inputs under which the most converted nodes resize X (``_exercise.search``), the
    original's values under them, and how many sets were tried; ``side`` left with the
    record of its run on them, not of the last set tried."""
    def attempt(feeds: dict[str, np.ndarray]) -> tuple[
            tuple[dict[str, np.ndarray], _Record] | UpsampleError, dict[str, np.ndarray] | None]:
        try:
            values = side.run(feeds, wanted)
        except UpsampleError as error:  # shapes the model does not take: the next ones
            return error, None
        return (values, side.record()), values

    probes = [Probe(node.x, node.output, copies(node.constant)) for node in shown]
    found = search(side.model, declared, given, fixed, scales, seed, probes, attempt)
    if isinstance(found.result, UpsampleError):
        raise _worded(found.result, side.side)
    values, record = found.result
    side.restore(record)
    return found.feeds, values, found.tried


def _worded(error: UpsampleError, side: str) -> UpsampleError:
    if isinstance(error, RefusedError):
        return UpsampleError(f"onnxruntime cannot run the {side} model, also with each "
                             f"Upsample and Resize run alone: {error.message}")
    return error


def _verification(notes: tuple[str, ...], nodes: list[UpsampleAt],
                  sides: tuple[OnnxruntimeRun, OnnxruntimeRun], feeds: dict[str, np.ndarray],
                  given: Mapping[str, np.ndarray], values: dict[str, np.ndarray],
                  converted: dict[str, np.ndarray], after: onnx.ModelProto, seed: int,
                  tried: int, level: str, default_level: bool, cut: bool) -> Verification:
    """The comparisons, put together."""
    model = sides[0].model
    declared = {value.name: value for value in graph_inputs(model)}
    checks, behind_shapes = [], {}
    for node in nodes:
        if node.index is None:
            checks.append(NodeCheck(node.label, node.output, where=node.where,
                                    computed=node.constant is None))
            continue
        x, y = values[node.x], values[node.output]
        computed = node.constant is None
        scales = tuple(float(v) for v in np.asarray(values[node.scales]).reshape(-1)) if (
            computed and node.scales in values) else node.constant
        behind = inputs_behind(model, node.scales if computed else node.x)
        check = NodeCheck(
            node.label, node.output, "", tuple(np.shape(x)), tuple(np.shape(y)), scales,
            computed, (sides[0].runs_in.get(node.output, ORT),
                       sides[1].runs_in.get(node.output, ORT)),
            exercised(np.shape(x), np.shape(y)),
            difference(node.output, y, converted[node.output]) if (
                node.output in converted) else None,
            sides[1].cross_checks.get(node.output, ""), tuple(behind))
        checks.append(check)
        if not check.exercised:
            behind_shapes[node.label] = declared_shapes([declared[name] for name in behind
                                                         if name in declared])
    outputs = tuple(difference(value.name, values[value.name], converted[value.name])
                    for value in after.graph.output)
    inputs_used = tuple(InputUsed(name, str(value.dtype), tuple(value.shape), name in given)
                        for name, value in feeds.items())
    refusals = tuple(refusal for side in sides for refusal in (
        [*side.refusals.values()] or ([Refusal(side.side, "", "", side.whole, "")]
                                      if side.whole else [])))
    note = ""
    if default_level and all(output.identical for output in outputs):
        note = _default_level_note(sides, feeds, after, outputs, cut)
    return Verification(level, inputs_used, seed, tried, notes, outputs, tuple(checks),
                        refusals, note, behind_shapes)


def _default_level_note(sides: tuple[OnnxruntimeRun, OnnxruntimeRun],
                        feeds: dict[str, np.ndarray], after: onnx.ModelProto,
                        exact: Sequence[Difference], cut: bool) -> str:
    """One line on how the outputs compare at onnxruntime's default level, or ``""``."""
    names = [value.name for value in after.graph.output]
    try:
        before = sides[0].run(feeds, names, cut, DEFAULT_LEVEL)
        later = sides[1].run(feeds, names, cut, DEFAULT_LEVEL)
    except UpsampleError:
        return ""
    changed = [difference(name, before[name], later[name]) for name in names]
    changed = [row for row in changed if not row.identical]
    if not changed:
        return ""
    worst = max(changed, key=lambda row: row.largest)
    if _nchwc_resizes(after):
        cause = ("its NCHWc layout optimization (ORT_ENABLE_ALL only) runs a Resize that "
                 "follows a Conv in its NCHWc Upsample kernel, which rounds linear "
                 "interpolation differently, but leaves the original's Upsample (the "
                 "version-7 form, for one) to the standard kernel")
    else:
        cause = "its ORT_ENABLE_ALL-only optimizations treat the two models differently"
    return (f"note: at onnxruntime's default optimization level ({DEFAULT_LEVEL}) "
            f"{worst.describe()}"
            + (f" (and {len(changed) - 1} other output(s))" if len(changed) > 1 else "")
            + f": {cause}; the Upsample -> Resize rewrite itself is exact ({EXACT_LEVEL})")


def _nchwc_resizes(model: onnx.ModelProto) -> bool:
    """Whether onnxruntime, at its default level, runs a Resize of ``model`` as its NCHWc
    Upsample kernel (read from the model it optimizes)."""
    ort: Any = import_onnxruntime()
    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, DEFAULT_LEVEL)
        options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
        try:
            ort.InferenceSession(model.SerializeToString(), options,
                                 providers=["CPUExecutionProvider"])
            optimized = onnx.load(options.optimized_model_filepath)
        except Exception:  # the cause stays unnamed; the note says the rest
            return False
    return any(node.domain == "com.microsoft.nchwc" and node.op_type == "Upsample"
               for node in optimized.graph.node)
