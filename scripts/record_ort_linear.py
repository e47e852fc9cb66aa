"""Record onnxruntime's linear ``Upsample`` outputs on this machine, for the explainer's tests.

``tests/data/ort_linear.npz`` holds a few inputs (``x_<i>``, ``s_<i>``, their ``names``) and
onnxruntime 1.32's outputs for them on two machines: its x86-64 build and its aarch64 build,
which computes the linear sums with fused multiply-adds (GCC contracts them on aarch64) and
differs from the x86-64 build in the last bits of about a third of float32 outputs. The
aarch64 build ran under qemu-user, in the environment ``scripts/aarch64_env.sh`` makes.

Run it with each machine's Python to add that machine's outputs (``<machine>_<i>``, and
``<machine>_platform``: the machine and onnxruntime's version)::

    .venv/bin/python scripts/record_ort_linear.py tests/data/ort_linear.npz
    build/aarch64/bin/python scripts/record_ort_linear.py tests/data/ort_linear.npz

``--take SOURCE.npz I [I ...]`` first makes the file from cases ``I`` of a file in the same
layout (the inputs were drawn at random: layout, shape, scales in [1, 4], element type and
values; ``int32`` near its limits, ``float32`` with infinities and NaNs among them).
Each model is ``Upsample``-9, ``mode='linear'``, the scales an initializer, run on
onnxruntime's CPU provider with one thread. Needs numpy, onnx and onnxruntime only.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

ELEMENT_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
                 "uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "int32": TensorProto.INT32}


def _model(dtype: str, rank: int, scales: np.ndarray) -> onnx.ModelProto:
    element = ELEMENT_TYPES[dtype]
    x_info = helper.make_tensor_value_info("X", element, [f"d{a}" for a in range(rank)])
    y_info = helper.make_tensor_value_info("Y", element, [f"o{a}" for a in range(rank)])
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode="linear")
    initializer = helper.make_tensor("scales", TensorProto.FLOAT, [rank],
                                     np.asarray(scales, np.float32))
    graph = helper.make_graph([node], "upsample", [x_info], [y_info], [initializer])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    return model


def _take(source: Path, indices: list[int]) -> dict[str, np.ndarray]:
    cases = np.load(source)
    names = json.loads(str(cases["names"]))
    arrays = {}
    for new, old in enumerate(indices):
        arrays[f"x_{new}"] = cases[f"x_{old}"]
        arrays[f"s_{new}"] = cases[f"s_{old}"]
    arrays["names"] = np.array(json.dumps([names[i] for i in indices]))
    return arrays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--take", nargs="+", metavar=("SOURCE.npz", "I"))
    args = parser.parse_args()
    if args.take:
        arrays = _take(Path(args.take[0]), [int(i) for i in args.take[1:]])
    else:
        with np.load(args.file) as stored:
            arrays = dict(stored)
    names = json.loads(str(arrays["names"]))
    machine = platform.machine().lower()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    for i in range(len(names)):
        x, scales = arrays[f"x_{i}"], arrays[f"s_{i}"]
        session = ort.InferenceSession(_model(x.dtype.name, x.ndim, scales).SerializeToString(),
                                       options, providers=["CPUExecutionProvider"])
        arrays[f"{machine}_{i}"] = session.run(None, {"X": x})[0]
    arrays[f"{machine}_platform"] = np.array(f"{machine} onnxruntime {ort.__version__}")
    temporary = args.file.with_suffix(".tmp.npz")
    np.savez_compressed(temporary, **arrays)
    temporary.replace(args.file)
    print(f"{args.file}: {len(names)} outputs of {machine} onnxruntime {ort.__version__}")


if __name__ == "__main__":
    main()
