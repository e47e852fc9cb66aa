"""``Upsample`` for ``onnx.reference.ReferenceEvaluator``: every version, exactly as ORT 1.32."""

from __future__ import annotations

import itertools
import warnings
from typing import Any, cast

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from .._api import upsample
from .._errors import UpsampleError, UpsampleWarning
from .._spec.modes import ModeName
from .._spec.versions import DEFAULT_DOMAINS
from ._fixes import FixableWarning
from ._graphs import Scope
from ._node import describe

__all__ = ["Upsample", "reference_evaluator"]

# Problems the evaluator works around and reports as an UpsampleWarning. The legacy mode
# names are left to the kernel, which warns about them itself.
_WARNED_CODES = ("deprecated", "form-opset", "mode", "mode-case")


class Upsample(OpRun):
    """ONNX ``Upsample`` (versions 1, 7, 9 and 10) for :class:`onnx.reference.ReferenceEvaluator`.

    onnx's own reference implementation runs only nearest mode with integer scales, and
    neither the version-1 nor the version-7 form. This one runs every form with the
    onnx-upsample kernel, bit-identical to onnxruntime 1.32 (see docs/semantics.md)::

        from onnx.reference import ReferenceEvaluator
        from onnx_upsample.onnx import Upsample

        session = ReferenceEvaluator(model, new_ops=[Upsample])
        (y,) = session.run(None, {"X": x})

    The version comes from the model's (or function's) default-domain opset import: opsets
    1-6 run Upsample-1 (attributes ``height_scale``, ``width_scale``; 4-D input; mode
    ``bilinear`` is linear), 7-8 Upsample-7 (``scales`` attribute), 9 Upsample-9 (``scales``
    input, constant or computed at run time) and 10 and later the deprecated Upsample-10,
    which runs with an :class:`~onnx_upsample.UpsampleWarning`. A node whose form does not
    match the opset (for example the version-7 form at opset 9, which onnx's checker and
    onnxruntime reject) runs by its form, with an ``UpsampleWarning`` that names the mismatch.

    onnx 1.23's evaluator compiles a model's local functions without ``new_ops``, so an
    Upsample inside a model-local function runs onnx's own (integer-nearest only) version;
    build the function evaluators yourself to avoid it (the ``run`` command does)::

        functions = []
        for f in model.functions:
            functions.append(ReferenceEvaluator(f, new_ops=[Upsample], functions=functions[:]))
        session = ReferenceEvaluator(model.graph, opsets={d.domain: d.version for d in
                                     model.opset_import}, functions=functions,
                                     new_ops=[Upsample])

    Raises
    ------
    UpsampleError
        For a node that cannot run: no input, missing or malformed attributes, an unknown
        mode, scales that are not finite numbers >= 1 or not one per axis, X not 4-D in
        version 1. The message names the node.
    """

    op_domain = ""
    # Read modes in the case old converters wrote ('NEAREST') as lower case, with a warning;
    # see with_legacy_modes().
    legacy_modes = False

    @classmethod
    def with_legacy_modes(cls) -> type[Upsample]:
        """This op, but running the modes old converters wrote in upper case.

        Modes in the case old converters wrote ('NEAREST', 'BILINEAR') run as their
        lower-case names, with an UpsampleWarning, where onnx's checker and onnxruntime
        refuse them::

            ReferenceEvaluator(model, new_ops=[Upsample.with_legacy_modes()])
        """
        return type("Upsample", (cls,), {"legacy_modes": True,
                                          "__doc__": cls.with_legacy_modes.__doc__})

    def _run(self, *inputs: Any, **attributes: Any) -> tuple[np.ndarray]:
        node = self.onnx_node
        opsets: dict[str, int] = self.run_params.get("opsets", {})
        opset = next((opsets[d] for d in DEFAULT_DOMAINS if d in opsets), None)
        label = node.name or "Upsample"
        if not inputs or inputs[0] is None:
            raise UpsampleError(f"Upsample node {label!r} has no input X; connect the tensor "
                                "to upsample as the node's first input")
        x = np.asarray(inputs[0])
        info = describe(node, label, opset, Scope(), rank=x.ndim,
                        legacy_modes=self.legacy_modes)
        info.raise_if_blocked("run")
        for problem in info.problems:
            if problem.code in _WARNED_CODES and not (
                problem.code == "mode" and problem.severity == "error"
            ):
                warnings.warn(FixableWarning(f"Upsample node {label!r}: {problem.message}",
                                             problem.fix), stacklevel=2)
        from_input = info.schema.scales_from == "scales_input"
        scales = self._runtime_scales(label, inputs) if from_input else info.scales
        assert scales is not None and info.mode is not None
        # The kernel warns about 'bilinear'/'trilinear' in versions 7+; version 1's own name
        # for linear is 'bilinear', so it gets the canonical name (no warning).
        mode = info.mode if info.mode_name in info.schema.modes else info.mode_name
        try:
            return (upsample(x, scales, cast("ModeName", mode)),)
        except UpsampleError as error:
            raise UpsampleError(
                f"Upsample node {label!r} (version {info.version}): {error}") from None

    @staticmethod
    def _runtime_scales(label: str, inputs: tuple[Any, ...]) -> np.ndarray:
        if len(inputs) < 2 or inputs[1] is None:
            raise UpsampleError(f"Upsample node {label!r} has no scales input; give a float "
                                "tensor with one scale per axis of X")
        scales = np.asarray(inputs[1])
        if scales.dtype.kind not in "iuf":
            raise UpsampleError(
                f"Upsample node {label!r}: the scales input has element type {scales.dtype}; "
                "expected tensor(float) with one scale per axis of X")
        if scales.dtype != np.float32:
            warnings.warn(
                f"Upsample node {label!r}: the scales input has element type {scales.dtype}; "
                "Upsample takes tensor(float) (onnx's checker and onnxruntime reject it); "
                "the values are converted to float32", UpsampleWarning, stacklevel=3)
        return scales.reshape(-1)


def _default_domain_both_ways(model: onnx.ModelProto) -> onnx.ModelProto:
    """A model importing the default domain as 'ai.onnx' (the same domain as '', which its
    nodes use) imports it under both names: onnx's evaluator knows only the one spelled."""
    spelled = {entry.domain: entry.version for entry in model.opset_import}
    missing = [(a, b) for a, b in itertools.permutations(DEFAULT_DOMAINS, 2) if b in spelled
               and a not in spelled]
    if not missing:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for absent, present in missing:
        copy.opset_import.append(onnx.helper.make_opsetid(absent, spelled[present]))
    return copy


def reference_evaluator(model: onnx.ModelProto,
                        legacy_modes: bool = False) -> ReferenceEvaluator:
    """``ReferenceEvaluator(model, new_ops=[Upsample])``, Upsample in local functions too
    (``Upsample.with_legacy_modes()`` where ``legacy_modes``)."""
    op = Upsample.with_legacy_modes() if legacy_modes else Upsample
    model = _default_domain_both_ways(model)
    if not model.functions:
        return ReferenceEvaluator(model, new_ops=[op])
    functions: list[ReferenceEvaluator] = []
    for function in model.functions:
        functions.append(ReferenceEvaluator(function, new_ops=[op],
                                            functions=list(functions)))
    opsets = {entry.domain: entry.version for entry in model.opset_import}
    return ReferenceEvaluator(model.graph, opsets=opsets, functions=functions,
                              new_ops=[op])
