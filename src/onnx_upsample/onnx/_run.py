"""A model with ``Upsample`` run as onnxruntime runs it (:func:`run`, and the ``run``
command).

onnxruntime is the oracle every Upsample here is bit-identical to, so a model runs there:
whole, in one session, at the optimization level a plain ``onnxruntime.InferenceSession``
uses, where onnxruntime takes it. Where it refuses the model (Upsample-1 and Upsample-10,
which it has no kernel for or calls deprecated; a mode in the case old converters wrote; a
form its opset does not have), the model is cut at every main-graph Upsample and Resize
(``verify.OnnxruntimeRun``, as a verification cuts it): the pieces between run in
onnxruntime, each cut node alone in onnxruntime where it takes it, else in onnx-upsample's
kernel, which gives onnxruntime's own Upsample bits. The result says which node ran where.

The weights are not copied on the way: a file is read as its structure and views of its
tensors (``_mapped``), which onnxruntime takes as they are, so that a run costs about what
onnxruntime's own load and run of the file cost.

onnx's reference evaluator with onnx-upsample's Upsample (``onnx-reference+onnx-upsample``,
the name ``conformance`` gives it) remains a backend: a runtime of its own, whose other
operators (Conv sums in another order, Resize-10 it cannot run) give other bits.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np
import onnx

from .._errors import SpelledError, UpsampleError
from .._spec.spelling import spelled
from ..io.formats import slow_step
from ._alone import KERNEL, REFERENCE, run_upsample
from ._external import check_file, check_model, read
from ._feeds import check_feeds, checked_inputs, graph_inputs, random_feeds, scales_inputs
from ._graphs import ModelLike, is_upsample, node_label, walk
from ._mapped import Detached, attach, detach, map_file, stand_ins

__all__ = ["BACKENDS", "DEFAULT_LEVEL", "LEVELS", "NodeRun", "RunResult", "run"]

# The backends, named as ``conformance`` names them.
ONNXRUNTIME, REFERENCE_BACKEND = "onnxruntime", "onnx-reference+onnx-upsample"
BACKENDS = (ONNXRUNTIME, REFERENCE_BACKEND)
# onnxruntime's GraphOptimizationLevel names, least to most; the last is its default, what
# onnxruntime.InferenceSession(path) runs at.
LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_LAYOUT",
          "ORT_ENABLE_ALL")
DEFAULT_LEVEL = "ORT_ENABLE_ALL"
ORT = "onnxruntime"  # what ran a node, as results name it (also KERNEL, REFERENCE)


@dataclass(frozen=True)
class NodeRun:
    """Where one main-graph Upsample or Resize node ran.

    Attributes
    ----------
    node : str
        The node as messages name it (its name, or ``Op#index``).
    op : str
        Its operator and version, ``Upsample-10``, ``Resize-11``.
    runs_in : str
        ``onnxruntime``; ``onnx-upsample`` (its kernel, for an Upsample onnxruntime
        refuses, or with the reference backend); ``onnx reference`` (onnx's reference
        evaluator's own operator); ``onnxruntime (Resize-10)`` (an Upsample whose scales
        shrink, as the Resize it literally means).
    refused : str
        onnxruntime's message where it refused the node alone, on one line; ``""`` else.
    """

    node: str
    op: str
    runs_in: str
    refused: str = ""

    def describe(self) -> str:
        """One line: the node, its operator, what ran it and why."""
        why = f" (onnxruntime refuses it: {self.refused})" if self.refused else ""
        return f"{self.node} ({self.op}): {self.runs_in}{why}"


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` computed, and what ran it.

    Attributes
    ----------
    outputs : dict of str to numpy.ndarray
        The model's outputs, by name, in the graph's order.
    inputs : dict of str to numpy.ndarray
        The inputs it ran on (those given, and those made up where ``seed`` was given).
    backend : str
        ``onnxruntime`` or ``onnx-reference+onnx-upsample``.
    runtime : str
        The runtime and its version (``onnxruntime 1.32.0``, ``onnx 1.23.0``).
    level : str or None
        onnxruntime's graph optimization level; None for the reference backend.
    refused : str
        onnxruntime's message where it refused the model as a whole (then it ran in pieces);
        ``""`` where it ran it whole, or for the reference backend.
    nodes : tuple of NodeRun
        Each Upsample and Resize node of the main graph, in order, and where it ran.
    """

    outputs: dict[str, np.ndarray]
    inputs: dict[str, np.ndarray]
    backend: str
    runtime: str
    level: str | None
    refused: str = ""
    nodes: tuple[NodeRun, ...] = field(default=())

    @property
    def cut(self) -> bool:
        """Whether the model ran in pieces (onnxruntime refused it whole)."""
        return bool(self.refused)

    def lines(self) -> list[str]:
        """What ran the model, then one line per Upsample and Resize node."""
        if self.backend == REFERENCE_BACKEND:
            head = (f"ran in onnx's reference evaluator ({self.runtime}), every Upsample in "
                    "onnx-upsample's kernel")
        elif self.cut:
            head = (f"{self.runtime} refuses the model as a whole ({self.refused}): it ran "
                    f"in pieces ({self.level}), cut at each Upsample and Resize, every other "
                    "node in onnxruntime")
        else:
            head = f"ran in {self.runtime} ({self.level}), the whole model"
        return [head, *(f"  {node.describe()}" for node in self.nodes)]

    def to_dict(self) -> dict[str, Any]:
        """What ran the model, as JSON: the backend, the runtime, the level, whether and why
        it was cut, and each Upsample and Resize node (the arrays are left out)."""
        return {"backend": self.backend, "runtime": self.runtime, "level": self.level,
                "cut": self.cut, "refused": self.refused,
                "nodes": [vars(node) for node in self.nodes]}


def _check_choices(backend: object, level: object) -> None:
    if backend not in BACKENDS:
        raise spelled(lambda s: (
            f"{s.argument('backend')} is {backend!r}; expected "
            + " or ".join(repr(name) for name in BACKENDS)))
    if level not in LEVELS:
        raise spelled(lambda s: (
            f"{s.argument('level')} is {level!r}; expected one of onnxruntime's "
            f"GraphOptimizationLevel names: {', '.join(LEVELS)} (its default: "
            f"{DEFAULT_LEVEL})"))


def _op(node: onnx.NodeProto, opset: int | None) -> str:
    """``Upsample-10``: the node's operator and the version its opset gives it."""
    try:
        version = onnx.defs.get_schema(node.op_type, opset or 1, node.domain).since_version
    except Exception:  # an operator onnx does not know, or a custom domain
        return node.op_type
    return f"{node.op_type}-{version}"


def _cut_nodes(model: onnx.ModelProto) -> list[tuple[str, str, str]]:
    """Each main-graph Upsample and Resize: its first output, label and operator."""
    site = next(walk(model, functions=False))
    return [(node.output[0], node_label(site, node, index), _op(node, site.opset))
            for index, node in enumerate(model.graph.node)
            if (is_upsample(node) or node.op_type == "Resize") and node.output]


def _source(model: ModelLike, backend: str, progress: TextIO | None) -> Detached:
    """The model to run: for onnxruntime its structure and large tensors (a file mapped,
    else loaded and split), for the reference evaluator the whole model (no tensors)."""
    if isinstance(model, onnx.ModelProto):
        return detach(model) if backend == ONNXRUNTIME else Detached(model, {})
    if not isinstance(model, str | os.PathLike):
        raise TypeError(f"model is a {type(model).__name__}; expected an onnx.ModelProto or "
                        "the path of a .onnx file")
    path = os.fspath(model)
    check_file(path)
    if backend == ONNXRUNTIME:
        mapped = map_file(path)
        if mapped is not None:
            check_model(mapped.model, path)
            return mapped
    with slow_step(progress, f"reading {path}"):
        loaded = read(path, "all")
        return detach(loaded) if backend == ONNXRUNTIME else Detached(loaded, {})


def _feeds(model: onnx.ModelProto, inputs: object, seed: int | None) -> dict[str, np.ndarray]:
    declared = graph_inputs(model)
    given, _, number = checked_inputs(declared, inputs, None, 0 if seed is None else seed)
    if seed is None:
        check_feeds(declared, given)
        return given
    return random_feeds(declared, given, scales_inputs(model), number)


def run(model: ModelLike, inputs: Mapping[str, np.ndarray] | None = None, *,
        seed: int | None = None, backend: str = ONNXRUNTIME, level: str = DEFAULT_LEVEL,
        legacy_modes: bool = False, progress: TextIO | None = None) -> RunResult:
    """Run a model with ``Upsample`` nodes (versions 1, 7, 9, 10) as onnxruntime runs it.

    The model runs in onnxruntime (CPU), whole, at ``level``: its outputs are those of
    ``onnxruntime.InferenceSession(model).run(None, inputs)``, bit for bit. Where
    onnxruntime refuses the model (Upsample-1, Upsample-10, a mode in upper case, a form its
    opset does not have), it runs in pieces cut at each main-graph Upsample and Resize: the
    pieces, and each cut node onnxruntime takes alone, in onnxruntime; each Upsample it
    refuses in onnx-upsample's kernel, bit-identical to onnxruntime's Upsample kernel.
    :attr:`RunResult.nodes` says which node ran where.

    Parameters
    ----------
    model : onnx.ModelProto or str or os.PathLike
        The model, or its ``.onnx`` file (read with its external data, which must lie in its
        folder; a file's tensors are not copied on the way to onnxruntime). Not modified.
    inputs : mapping of str to numpy.ndarray, optional
        A value for each graph input (of the declared element type and shape).
    seed : int, optional
        Make up the inputs not given, with this seed (symbolic dimensions become 8; an
        Upsample's or Resize's scales input gets scales that enlarge); by default every
        input must be given.
    backend : {"onnxruntime", "onnx-reference+onnx-upsample"}
        ``onnx-reference+onnx-upsample``: onnx's ``ReferenceEvaluator`` with
        :class:`~onnx_upsample.onnx.Upsample` (its other operators are its own: a Conv
        differs from onnxruntime's in the last bits).
    level : str, default ``"ORT_ENABLE_ALL"``
        onnxruntime's graph optimization level (a ``GraphOptimizationLevel`` name); the
        default is ``InferenceSession``'s.
    legacy_modes : bool, default False
        Run modes written in upper or mixed case by old converters (``'NEAREST'``) as their
        lower-case names, with an :class:`~onnx_upsample.UpsampleWarning` (onnxruntime
        refuses them, so those nodes run in onnx-upsample's kernel).
    progress : text stream, optional
        Where a line goes for each step (loading, a piece of a cut model) that takes more
        than a second, and when it ends.

    Returns
    -------
    RunResult
        ``outputs`` by name; ``inputs``; ``backend``, ``runtime``, ``level``; ``refused``
        (onnxruntime's message where it ran in pieces); ``nodes``; ``lines()`` and
        ``to_dict()`` to report what ran where.

    Raises
    ------
    UpsampleError
        For a bad argument (an unknown backend or level, inputs missing or of another type
        or shape than declared), a file that is no ONNX model, an Upsample that cannot run
        (scales below 1, an unknown mode), or a model onnxruntime refuses even cut at its
        Upsample and Resize nodes (a node of another kind; the message names the reference
        backend).
    ImportError
        If the backend is onnxruntime and onnxruntime is not installed (``pip install
        onnxruntime``), or onnx is not (``pip install onnx-upsample[onnx]``).

    Examples
    --------
    >>> import numpy as np
    >>> from onnx import TensorProto, helper
    >>> from onnx_upsample.onnx import run
    >>> x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    >>> y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    >>> node = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up")
    >>> scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])
    >>> graph = helper.make_graph([node], "g", [x], [y], [scales])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    >>> result = run(model, {"X": np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)})
    >>> result.outputs["Y"][0, 0]
    array([[0., 0., 1., 1.],
           [0., 0., 1., 1.],
           [2., 2., 3., 3.],
           [2., 2., 3., 3.]], dtype=float32)
    >>> print(result.lines()[1])
      up (Upsample-9): onnxruntime

    At opset 10 the same node is Upsample-10, which onnxruntime refuses: the model runs in
    pieces, ``up`` in onnx-upsample's kernel (``result.cut``; ``result.nodes[0].runs_in`` is
    ``"onnx-upsample"``), with an UpsampleWarning that Upsample-10 is deprecated.
    """
    _check_choices(backend, level)
    if backend == ONNXRUNTIME:
        from .verify import import_onnxruntime

        ort = import_onnxruntime()  # before any work: a missing runtime is one line
        if not hasattr(ort.GraphOptimizationLevel, level):  # an older onnxruntime
            raise spelled(lambda s: (
                f"{s.argument('level')} is {level!r}, which onnxruntime "
                f"{ort.__version__} does not have; use one of "
                + ", ".join(name for name in LEVELS if hasattr(ort.GraphOptimizationLevel,
                                                                name))))
    source = _source(model, backend, progress)
    feeds = _feeds(source.model, inputs, seed)
    if backend == REFERENCE_BACKEND:
        return _run_reference(source.model, feeds, legacy_modes, progress)
    return _run_onnxruntime(source, feeds, level, legacy_modes, progress)


def _run_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray], legacy_modes: bool,
                   progress: TextIO | None) -> RunResult:
    from ._evaluator import reference_evaluator

    try:
        with slow_step(progress, "running the model in onnx's reference evaluator"):
            session = reference_evaluator(model, legacy_modes=legacy_modes)
            results = session.run(None, feeds)
    except UpsampleError:
        raise
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        kind = type(error).__name__
        raise spelled(lambda s: (
            f"onnx's reference evaluator cannot run the model: {kind}: {first}; run it in "
            f"onnxruntime ({s.assign('backend', ONNXRUNTIME)})")) from None
    outputs = {name: np.asarray(value)
               for name, value in zip(session.output_names, results, strict=True)}
    nodes = tuple(NodeRun(label, op, KERNEL if op.startswith("Upsample") else REFERENCE)
                  for _, label, op in _cut_nodes(model))
    return RunResult(outputs, feeds, REFERENCE_BACKEND, f"onnx {onnx.__version__}", None,
                     "", nodes)


def _run_onnxruntime(source: Detached, feeds: dict[str, np.ndarray], level: str,
                     legacy_modes: bool, progress: TextIO | None) -> RunResult:
    from .verify import OnnxruntimeRun, RefusedError, import_onnxruntime, ort_outputs, ort_session

    model, tensors = source
    names = [value.name for value in model.graph.output]
    if set(names) & set(stand_ins(model)):  # an output that is a weight: the pieces read it
        model, tensors = attach(model, tensors), {}
    runtime = f"onnxruntime {import_onnxruntime().__version__}"
    nodes = _cut_nodes(model)
    refused = ""
    try:
        with slow_step(progress, "loading the model into onnxruntime"):
            session = ort_session(model, level, tensors)
        try:
            with slow_step(progress, "running the model in onnxruntime"):
                results = ort_outputs(session, feeds)
        finally:
            del session  # before the tensors it reads go
    except RefusedError as error:
        refused = error.message
    if not refused:
        outputs = dict(zip(names, results, strict=True))
        return RunResult(outputs, feeds, ONNXRUNTIME, runtime, level, "",
                         tuple(NodeRun(label, op, ORT) for _, label, op in nodes))
    labels = {output: label for output, label, _ in nodes}
    kernel = functools.partial(run_upsample, legacy_modes=legacy_modes, quiet=False)
    # an Upsample whose scales shrink is refused, as upsample() refuses it
    pieces = OnnxruntimeRun(model, "model", labels, tensors=tensors, progress=progress,
                            kernel=kernel, literal=False)
    try:
        outputs = pieces.run(feeds, names, cut=True, level=level)
    except RefusedError as error:
        raise _refused_in_pieces(error.message) from None
    ran = tuple(NodeRun(label, op, pieces.runs_in.get(output, ORT),
                        pieces.refusals[output].message if output in pieces.refusals else "")
                for output, label, op in nodes)
    return RunResult(outputs, feeds, ONNXRUNTIME, runtime, level, refused, ran)


def _refused_in_pieces(message: str) -> SpelledError:
    return spelled(lambda s: (
        f"onnxruntime cannot run the model, also with each Upsample and Resize run alone: "
        f"{message}; run it in onnx's reference evaluator with onnx-upsample's Upsample "
        f"({s.assign('backend', REFERENCE_BACKEND)})"))

