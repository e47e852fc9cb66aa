"""ONNX models with ``Upsample`` (versions 1, 7, 9, 10): run, check, infer, fold, convert.

Needs the ``onnx`` extra (``pip install onnx-upsample[onnx]``). Every function takes an
``onnx.ModelProto`` and returns a new one; the input is never modified.

- :func:`run`: run a model in onnxruntime (needs onnxruntime), each Upsample it refuses
  (Upsample-1, Upsample-10, ...) in onnx-upsample's kernel: its outputs are onnxruntime's
  wherever onnxruntime runs the model (:class:`RunResult`, with :class:`NodeRun`: which node
  ran where).
- :class:`Upsample`: the operator for ``onnx.reference.ReferenceEvaluator(model,
  new_ops=[Upsample])``, every version and scales source, bit-identical to onnxruntime 1.32.
- :func:`check`: what is wrong with each Upsample node (:class:`Finding`: severity, node,
  message, fix).
- :func:`infer_shapes`: shape inference with onnxruntime's size rule for Upsample.
- :func:`fold_scales`: scales computed from constants and static shapes become initializers.
- :func:`upgrade`: every Upsample becomes a Resize with bit-identical outputs, the rest of
  the model goes through onnx's version converter.
- :func:`downgrade`: Upsample-equivalent Resize nodes become Upsample, in an opset-9 model.
- :func:`onnx_upsample.onnx.verify.verify_upgrade` (imported on its own; needs
  onnxruntime): run a model and its upgrade on the same inputs and compare every output and
  each converted node bit for bit (what ``upgrade --verify`` prints).

Example::

    import onnx
    from onnx_upsample.onnx import check, upgrade

    model = onnx.load("yolo_head_opset9.onnx")
    for finding in check(model):
        print(finding)
    onnx.save(upgrade(model, opset=18), "yolo_head_opset18.onnx")
"""

from __future__ import annotations

from ._check import Finding, check
from ._evaluator import Upsample
from ._fold import fold_scales
from ._infer import infer_shapes
from ._run import NodeRun, RunResult, run
from .convert import downgrade, upgrade

__all__ = ["Finding", "NodeRun", "RunResult", "Upsample", "check", "downgrade", "fold_scales",
           "infer_shapes", "run", "upgrade"]
