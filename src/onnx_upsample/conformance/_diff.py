"""A model run in two runtimes, every node's outputs compared and every Upsample and Resize
node explained (:func:`diff`).

1. Each runtime runs in a worker process of its own (the conformance runner's), so a
   runtime that crashes on the model takes only its worker down.
2. The inputs are those given, the others made up; symbolic dimensions get distinct sizes,
   tried in a few patterns until every node enlarges (``onnx._exercise``).
3. Two runs per runtime (``onnx._probe.expose``): one with the values the Upsample and
   Resize rows read (X, Y, computed scales) as extra graph outputs, the closest to the
   model as it runs (exposing a value keeps a runtime from fusing nodes across it); one
   with every value a main-graph node computes (polygraphy's "mark all"), which returns
   them all at once. Where the two disagree, a warning says so.
4. Where a runtime refuses the model, it runs it cut at every Upsample and Resize
   (``onnx._probe.run_pieces``); a node it refuses runs in the other runtime, so that the
   rest of the model still runs, and is reported refused.
5. Every node's outputs are compared bit for bit in the graph's order (``_diff_graph``):
   a difference begins at a node whose output differs while its inputs are the same, and
   the nodes it reaches downstream inherit it. An Upsample or Resize whose input already
   differs runs alone in both runtimes on the same input, which tells a difference of its
   own from an inherited one. A node that differs on its own is explained: each runtime's
   output goes through the explainer, which names the convention it follows.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

from .._errors import UpsampleError, UpsampleWarning
from ..onnx._check import check
from ..onnx._compare import bits_equal
from ..onnx._exercise import (
    Probe,
    copies,
    declared_dims,
    declared_shapes,
    exercised,
    inputs_behind,
    search,
    shape_candidates,
)
from ..onnx._feeds import checked_inputs, graph_inputs, scales_inputs
from ..onnx._fixes import Action, Fix, FixableError
from ..onnx._graphs import ModelLike, model_of
from ..onnx._modes import lower_mode_case
from ..onnx._probe import expose, node_model, run_pieces
from ..onnx._verification import InputUsed
from ._backends import BUILTIN
from ._diff_graph import origins, trace
from ._diff_nodes import ComparedNode, compared_nodes, run_scales
from ._diff_result import DIFFERS, ModelDiff, NodeDiff
from ._diff_rows import names
from ._diff_values import compare
from ._diff_why import explain_side
from ._process import Worker
from ._runner import check_timeout

__all__ = ["DEFAULT_BACKENDS", "DEFAULT_TIMEOUT", "diff"]

#: The runtimes :func:`diff` compares when none are named, and the seconds one run may take.
DEFAULT_BACKENDS = ("onnxruntime", "onnx-reference")
DEFAULT_TIMEOUT = 300.0
# the runtime that runs every Upsample onnx-upsample runs: the one to suggest where neither
# of the two compared runs a node
OURS = "onnx-reference+onnx-upsample"

Values = dict[str, np.ndarray]


class _NotRunError(Exception):
    """A runtime that did not run a model: refused it, failed, crashed or timed out."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.words = message if status in ("refused", "error") else f"{status}: {message}"


class _Side:
    """One runtime in its worker process; models go to it as files."""

    def __init__(self, spec: str, folder: str, timeout: float, number: int) -> None:
        self.worker = Worker(spec)
        self.folder, self.timeout, self.number, self.runs = folder, timeout, number, 0
        self.worker.spawn()

    def ready(self) -> None:
        """Wait for the runtime to load (UpsampleError where it cannot be)."""
        self.worker.ready()
        self.name, self.version = self.worker.name, self.worker.version

    def run(self, model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        self.runs += 1
        path = Path(self.folder) / f"side{self.number}-{self.runs}.onnx"
        path.write_bytes(model.SerializeToString())
        try:
            answer = self.worker.call(("model", str(path), dict(feeds)), self.timeout)
            status, payload = answer.status, answer.payload
        finally:
            path.unlink()
        if status != "ok":  # the scratch file's name says nothing to the user
            raise _NotRunError(status, str(payload).replace(str(path), "the model"))
        if len(payload) != len(model.graph.output):
            raise _NotRunError("adapter-error", f"{len(payload)} outputs for a model with "
                               f"{len(model.graph.output)}")
        return [np.asarray(value) for value in payload]

    def close(self) -> None:
        self.worker.close()


def _whole(side: _Side, exposed: onnx.ModelProto, feeds: Values) -> Values:
    """``side``'s run of the model with every value exposed (:func:`expose`)."""
    results = side.run(exposed, feeds)
    ran = dict(zip([value.name for value in exposed.graph.output], results, strict=True))
    return {**feeds, **ran}


def _cut(side: _Side, other: _Side, model: onnx.ModelProto, feeds: Values,
         names: Sequence[str], cut: set[int], refused: dict[str, str],
         labels: Mapping[str, str], neither: Callable[[str], Fix]) -> Values:
    """``model`` in pieces cut at each Upsample and Resize; a node ``side`` refuses runs in
    ``other`` (recorded in ``refused``), so that the rest still runs in ``side``; a node
    neither runs is an error whose fix is ``neither(label)``."""
    def alone(piece: onnx.ModelProto, fed: dict[str, np.ndarray]) -> list[np.ndarray]:
        try:
            return side.run(piece, fed)
        except _NotRunError as not_run:
            output = piece.graph.node[0].output[0]
            refused[output] = not_run.words
            try:
                return other.run(piece, fed)
            except _NotRunError as also:
                label = labels.get(output, output)
                raise FixableError(
                    f"neither runtime runs node {label!r} ({side.name}: {not_run.words}; "
                    f"{other.name}: {also.words})", neither(label)) from None

    try:
        return run_pieces(model, feeds, names, cut, side.run, alone)
    except _NotRunError as not_run:
        raise UpsampleError(f"{side.name} cannot run the model, also cut at each Upsample "
                            f"and Resize: {not_run.words}") from None


def _neither_fix(model: onnx.ModelProto, backends: Sequence[str],
                 upper_case: set[str]) -> Callable[[str], Fix]:
    """The fix for a node neither runtime runs: the way that works for it, never the
    comparison as it was asked for again."""
    def fix(label: str) -> Fix:
        if label in upper_case:
            # onnxruntime, onnx's evaluator and onnx-upsample's Upsample all refuse the case
            # old converters wrote; the two runtimes compared take the model in lower case
            return Fix("its mode is written in the case old converters wrote, which runtimes "
                       "refuse: {0} gives both runtimes the model with its modes in lower case",
                       (Action("diff", (("legacy_modes", True),)),))
        found = [finding for finding in check(model) if finding.node == label]
        invalid = any(finding.severity == "error" for finding in found)
        if invalid or (found and OURS in backends):
            # a node invalid as written, or one onnx-upsample refused: check says why and
            # names the fix
            return Fix("{0} says what is wrong with the node and how to fix it",
                       (Action("check"),))
        if OURS not in backends:
            return Fix(f"choose another backend, such as {OURS} (onnx's reference evaluator "
                       "with onnx-upsample's Upsample)")
        others = [name for name in BUILTIN if name not in backends]
        return Fix(f"compare it in other runtimes ({', '.join(others)})")
    return fix


def _search(sides: tuple[_Side, _Side], model: onnx.ModelProto, exposed: onnx.ModelProto,
            shown: Sequence[ComparedNode], given: Values,
            fixed: Mapping[str, Sequence[int]],
            seed: int) -> tuple[Values, list[Values | _NotRunError], int]:
    """The inputs under which the most nodes resize X (``onnx._exercise.search``), each
    runtime's whole run on them (or why it did not run; the second only where the first did
    not run), and how many sets were tried."""
    declared = graph_inputs(model)
    several = len(shape_candidates([v for v in declared if v.name not in given], fixed)) > 1

    def attempt(feeds: Values) -> tuple[list[Values | _NotRunError], Values | None]:
        runs: list[Values | _NotRunError] = []
        for side in sides:
            try:
                runs.append(_whole(side, exposed, feeds))
            except _NotRunError as not_run:
                runs.append(not_run)
            if isinstance(runs[-1], dict) or not several:
                break  # one run tells how many nodes resize
        return runs, next((run for run in runs if isinstance(run, dict)), None)

    probes = [Probe(node.x, node.output, copies(node.constant_scales)) for node in shown]
    found = search(model, declared, given, fixed, scales_inputs(model), seed, probes, attempt)
    return found.feeds, found.result, found.tried


def diff(model: ModelLike, ours: str = DEFAULT_BACKENDS[0],
         theirs: str = DEFAULT_BACKENDS[1], *,
         inputs: Mapping[str, np.ndarray] | None = None,
         input_shapes: Mapping[str, Sequence[int]] | None = None, seed: int = 0,
         timeout: float = DEFAULT_TIMEOUT, legacy_modes: bool = False) -> ModelDiff:
    """Run ``model`` in two runtimes, find where their values begin to differ, and explain
    every ONNX ``Upsample`` and ``Resize`` node that differs.

    Every main-graph node's outputs are exposed (one run per runtime) and compared bit for
    bit, in the graph's order: a difference begins at a node whose output differs while
    every value it reads is the same in both runtimes (a Conv that rounds otherwise, say),
    and the nodes downstream inherit it (:attr:`ModelDiff.origins`: where each begins, by
    how much, in ULPs too, and what it reaches). For an Upsample or Resize (versions 1, 7,
    9, 10; Resize 10 to 19) that differs, the explainer names the convention each
    runtime's output follows (for a Resize, relative to the convention its attributes
    define), e.g. ``onnx-reference matches Resize half_pixel (linear), float64
    throughout``; where its input already differed, the node first runs alone in both
    runtimes on the same input, so that a difference upstream is not blamed on it (its
    verdict is then ``input differs``, naming where that difference begins).

    A runtime may compute a model otherwise when its values are exposed: onnxruntime does
    not fuse a node into the next across a value that is a graph output. What is compared
    is each runtime's run with every value exposed.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model (a path is read with all its external data); not modified.
    ours, theirs : str
        The runtimes, as :func:`onnx_upsample.conformance.run` takes them: a name of
        :data:`BACKENDS` (``onnxruntime``, ``onnx-reference``,
        ``onnx-reference+onnx-upsample``, ``openvino``, ...) or ``package.module:callable``.
        Each runs in a worker process of its own.
    inputs : mapping of str to numpy.ndarray, optional
        Values for graph inputs; the others are made up at random.
    input_shapes : mapping of str to sequence of int, optional
        Shapes for inputs made up at random (else their symbolic dimensions are chosen so
        that every node enlarges where they can).
    seed : int, default 0
        The seed of the random inputs.
    timeout : float, default 300
        Seconds one run may take in a runtime; its worker is then stopped.
    legacy_modes : bool, default False
        Give both runtimes the model with its Upsample modes written in upper or mixed
        case by old converters ('NEAREST', 'BILINEAR') in lower case, with an
        :class:`~onnx_upsample.UpsampleWarning` per node, as ``upgrade`` writes them;
        runtimes refuse those modes otherwise.

    Returns
    -------
    ModelDiff
        ``differs``: some Upsample or Resize node differs itself; ``nothing_compared``:
        none could be compared (a runtime refused each one); ``nodes`` and ``outputs``
        the comparisons; ``origins`` where differences begin among nodes of every kind;
        ``lines()`` the report; ``to_dict()`` the same as JSON.

    Raises
    ------
    TypeError
        For a model or backend of the wrong kind.
    UpsampleError
        If a runtime cannot be loaded; if the two runtimes are one; if an input given is
        not one of the model, or has another type or shape than declared; if a runtime
        cannot run the model even cut at its Upsample and Resize nodes, or neither runs one
        of those nodes (its fix says what does: ``legacy_modes=True`` for a mode in upper
        case, another backend, or :func:`onnx_upsample.onnx.check`'s fix for the node).
    """
    for name, spec in (("ours", ours), ("theirs", theirs)):
        if not isinstance(spec, str):
            raise TypeError(f"{name} is {spec!r}; expected a backend name such as "
                            "'onnxruntime'")
    if ours == theirs:
        raise UpsampleError(f"both runtimes are {ours!r}; give two different backends")
    timeout = check_timeout(timeout)
    label = os.fspath(model) if isinstance(model, str | os.PathLike) else "model"
    loaded = model_of(model, "all")
    lowered, cases = lower_mode_case(loaded)
    if legacy_modes:
        loaded = lowered
        for case in cases:
            warnings.warn(case.describe(), UpsampleWarning, stacklevel=2)
    neither = _neither_fix(loaded, (ours, theirs),
                           set() if legacy_modes else {case.node for case in cases})
    nodes = compared_nodes(loaded)
    shown = [node for node in nodes if node.index is not None]
    labels = {node.output: node.label for node in shown}
    outputs = [value.name for value in loaded.graph.output]
    produced = {name for node in loaded.graph.node for name in node.output if name}
    # what the Upsample and Resize rows read, and every value the main graph computes
    names = (list(dict.fromkeys(outputs + [name for node in shown for name in node.reads
                                           if name in produced])),
             list(dict.fromkeys(outputs + [name for node in loaded.graph.node
                                           for name in node.output if name])))
    given, shapes, seed = checked_inputs(graph_inputs(loaded), inputs, input_shapes, seed)
    fixed = {**{name: list(value.shape) for name, value in given.items()}, **shapes}
    with tempfile.TemporaryDirectory(prefix="onnx-upsample-diff-") as folder:
        sides: list[_Side] = []
        try:
            for number, spec in enumerate((ours, theirs)):
                sides.append(_Side(spec, folder, timeout, number))
            for side in sides:  # both runtimes load at once
                side.ready()
            pair = (sides[0], sides[1])
            return _compare(pair, loaded, label, nodes, shown, names, labels, given, fixed,
                            seed, neither)
        finally:
            for side in sides:
                side.close()


def _compare(sides: tuple[_Side, _Side], model: onnx.ModelProto, label: str,
             nodes: list[ComparedNode], shown: list[ComparedNode],
             names: tuple[list[str], list[str]], labels: Mapping[str, str], given: Values,
             fixed: Mapping[str, Sequence[int]], seed: int,
             neither: Callable[[str], Fix]) -> ModelDiff:
    """The runs, the comparisons and the result. The rows and the model outputs come from
    runs that expose only what the rows read (``names[0]``): exposing a value keeps a
    runtime from fusing nodes across it, so these runs stay closest to the model as it
    runs. Where differences begin comes from one more run per runtime with every value
    exposed (``names[1]``); where that run changes what the first one computed, a warning
    says so."""
    focused = expose(model, names[0])
    feeds, runs, tried = _search(sides, model, focused, shown, given, fixed, seed)
    while len(runs) < 2:  # the search ran one side only
        try:
            runs.append(_whole(sides[len(runs)], focused, feeds))
        except _NotRunError as not_run:
            runs.append(not_run)
    cut = {node.index for node in shown if node.index is not None}
    refused: tuple[dict[str, str], dict[str, str]] = ({}, {})
    values: list[Values] = []  # each runtime's values, as the rows read them
    every: list[Values] = []  # the same with every value exposed
    changed: list[str] = []
    exposed = expose(model, names[1]) if names[1] != names[0] else focused
    for number, run in enumerate(runs):
        if isinstance(run, dict):
            values.append(run)
            every.append(run if exposed is focused else
                         _every(sides[number], exposed, feeds, run, changed))
        else:  # cut at each Upsample and Resize, every piece exposing every value
            values.append(_cut(sides[number], sides[1 - number], model, feeds, names[1], cut,
                               refused[number], labels, neither))
            every.append(values[-1])
    constants = {tensor.name: onnx.numpy_helper.to_array(tensor)
                 for tensor in model.graph.initializer}
    for side_values in (*values, *every):
        for name, value in {**constants, **feeds}.items():
            side_values.setdefault(name, np.asarray(value))
    traces = trace(model, every[0], every[1], {*refused[0], *refused[1]})
    rows = [_node_row(node, sides, model, values, refused) for node in nodes]
    # an Upsample or Resize whose input differs adds a difference of its own only where,
    # run alone on one input, it still differs (its verdict DIFFERS)
    own = {node.index: row.verdict == DIFFERS for node, row in zip(nodes, rows, strict=True)
           if node.index is not None}
    graph_outputs = [value.name for value in model.graph.output]
    found, sources = origins(traces, own, graph_outputs)
    versions = {node.label: node.op for node in shown}  # Upsample-9, not Upsample
    found = [replace(origin, op=versions.get(origin.node, origin.op)) for origin in found]
    rows = [replace(row, sources=sources.get(node.index, ())) if node.index is not None
            and not row.where and row.difference is not None
            and not row.difference.identical else row
            for node, row in zip(nodes, rows, strict=True)]
    declared = {value.name: value for value in graph_inputs(model)}
    behind_shapes = {}
    for row, node in zip(rows, nodes, strict=True):
        if row.exercised is False:
            # scales above 1 that left every size as it was want a larger X; others,
            # other values of what the scales are computed from
            enlarging = row.scales is not None and any(scale > 1 for scale in row.scales)
            source = node.x if enlarging else (node.scales or node.x)
            behind = [declared[name] for name in inputs_behind(model, source)
                      if name in declared and not (enlarging and all(
                          isinstance(d, int) for d in declared_dims(declared[name])))]
            behind_shapes[node.label] = declared_shapes(behind)
    outputs = tuple(compare(name, values[0][name], values[1][name]) for name in graph_outputs)
    used = tuple(InputUsed(name, str(value.dtype), tuple(value.shape), name in given)
                 for name, value in feeds.items())
    whole = tuple(run.words if isinstance(run, _NotRunError) else "" for run in runs)
    compared = [node for node in traces if node.outputs and not node.refused]
    return ModelDiff(label, (sides[0].name, sides[1].name),
                     (sides[0].version, sides[1].version), used, seed, tried, tuple(rows),
                     outputs, (whole[0], whole[1]), behind_shapes, tuple(found), len(compared),
                     sum(node.differs for node in compared), tuple(changed))


def _every(side: _Side, exposed: onnx.ModelProto, feeds: Values, run: Values,
           changed: list[str]) -> Values:
    """``side``'s run with every value exposed; where it computes a value of ``run`` (its
    run with fewer exposed) otherwise, a line in ``changed``; where it refuses the model
    so, ``run`` (then only the values ``run`` holds are compared)."""
    try:
        every = _whole(side, exposed, feeds)
    except _NotRunError as not_run:
        changed.append(f"{side.name} refused the model with every value exposed ("
                       f"{not_run.words}): only the Upsample and Resize nodes' values and "
                       "the outputs are compared")
        return run
    moved = [name for name in run if name in every and not bits_equal(
        np.asarray(run[name]), np.asarray(every[name]))]
    if moved:
        changed.append(f"{side.name} computes otherwise when every value is exposed as a "
                       f"graph output ({names(moved)} change; a runtime fuses nodes only "
                       "across values that are no graph output): the Upsample and Resize "
                       "rows and the outputs are from its run with only their values "
                       "exposed, where differences begin is from its run with every value "
                       "exposed")
    return every


def _node_row(node: ComparedNode, sides: tuple[_Side, _Side], model: onnx.ModelProto,
              values: list[Values], refused: tuple[dict[str, str], dict[str, str]]) -> NodeDiff:
    """One Upsample or Resize node's comparison, explained where it differs on its own."""
    if node.index is None:
        return NodeDiff(node.label, node.op, node.output, node.where, node.words)
    first, second = values
    x, y = first[node.x], first[node.output]
    scales = run_scales(node, first, np.shape(x), np.shape(y))
    shaped = NodeDiff(node.label, node.op, node.output, "", node.words, tuple(np.shape(x)),
                      tuple(np.shape(y)), None if isinstance(scales, str) else scales,
                      exercised(np.shape(x), np.shape(y)),
                      copies=copies(node.constant_scales))
    for number in (0, 1):
        if node.output in refused[number]:  # its output is the other runtime's
            return replace(shaped, refused=(sides[number].name,
                                            refused[number][node.output]))
    # X, and the scales or sizes where computed: what it reads that a runtime computed
    inputs_identical = all(bits_equal(np.asarray(first[name]), np.asarray(second[name]))
                           for name in node.reads if name != node.output and name in first
                           and name in second)
    row = replace(shaped, input_difference=compare(node.x, x, second[node.x]),
                  difference=compare(node.output, y, second[node.output]),
                  inputs_identical=inputs_identical)
    assert row.difference is not None and row.input_difference is not None
    if row.difference.identical:
        return row
    xs, ys = (x, second[node.x]), (y, second[node.output])
    both = (scales, run_scales(node, second, np.shape(xs[1]), np.shape(ys[1])))
    if not inputs_identical:
        ran = _alone(node, sides, model, first)
        if ran is not None:
            row = replace(row, alone=compare(node.output, ran[0], ran[1]))
            if row.alone is not None and row.alone.identical:
                return row
            xs, ys, both = (x, x), ran, (scales, scales)
    names = (sides[0].name, sides[1].name)
    return replace(row, explanations=tuple(
        explain_side(node, name, side_x, side_y, side_scales)
        for name, side_x, side_y, side_scales in zip(names, xs, ys, both, strict=True)),
        unexplained=node.unexplained)


def _alone(node: ComparedNode, sides: tuple[_Side, _Side], model: onnx.ModelProto,
           first: Values) -> tuple[np.ndarray, np.ndarray] | None:
    """The node's output run alone in each runtime on the first runtime's inputs, or None
    where either will not run it so."""
    assert node.index is not None
    piece = node_model(model, node.index, first)
    constants = {tensor.name for tensor in piece.graph.initializer}
    fed = {value.name: first[value.name] for value in piece.graph.input
           if value.name not in constants}
    try:
        ours, theirs = (side.run(piece, fed)[0] for side in sides)
    except _NotRunError:
        return None
    return np.asarray(ours), np.asarray(theirs)
