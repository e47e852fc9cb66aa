"""A conformance suite of a few hand-built cases (no export), for the grader's tests: each
worker start is then the main cost."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_upsample import upsample
from onnx_upsample.conformance import _suite
from onnx_upsample.onnx import upgrade

SHAPE = (1, 1, 2, 3)


def upsample_model(case_id: str, scales: list[float], mode: str = "nearest",
           opset: int = 9) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, SHAPE)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", "C", "H", "W"])
    if opset == 1:
        node = helper.make_node("Upsample", ["X"], ["Y"], mode=mode,
                                height_scale=float(scales[2]), width_scale=float(scales[3]))
        initializers = []
    else:
        node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode)
        initializers = [numpy_helper.from_array(np.array(scales, np.float32), "scales")]
    graph = helper.make_graph([node], f"test_upsample_{case_id}", [x], [y], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def write_case(case_dir: Path, model: onnx.ModelProto, x: np.ndarray,
           expected: np.ndarray | None, must_refuse: str | None) -> str:
    (case_dir / _suite.DATA_SET).mkdir(parents=True)
    onnx.save(model, str(case_dir / "model.onnx"))
    (case_dir / _suite.DATA_SET / "input_0.pb").write_bytes(
        numpy_helper.from_array(x, "X").SerializeToString())
    if expected is None:
        (case_dir / _suite.REFUSAL_MARKER).write_text(json.dumps(
            {"expect": "refusal", "reason": must_refuse}))
    else:
        (case_dir / _suite.DATA_SET / "output_0.pb").write_bytes(
            numpy_helper.from_array(expected, "Y").SerializeToString())
    return _suite._hash_files(case_dir)


#: id -> (scales, mode, opset, why it must be refused)
CASES: dict[str, tuple[list[float], str, int, str | None]] = {
    "plain": ([1, 1, 2, 2], "nearest", 9, None),
    "frac": ([1, 1, 1.5, 2.5], "nearest", 9, None),
    "linear": ([1, 1, 2, 2], "linear", 9, None),
    "v1": ([1, 1, 2, 2], "nearest", 1, None),
    "none": ([1, 1, 2, 2], "nearest", 9, None),
    "generator": ([1, 1, 2, 2], "nearest", 9, None),
    "value_error": ([1, 1, 2, 2], "nearest", 9, None),
    "not_supported": ([1, 1, 2, 2], "linear", 9, None),
    "big_endian": ([1, 1, 1.5, 2.5], "nearest", 9, None),
    "float64": ([1, 1, 2, 2], "linear", 9, None),
    "float64_off": ([1, 1, 2, 2], "linear", 9, None),
    "invalid_accepted": ([1, 1, 0.5, 2], "nearest", 9, "scales below 1"),
    "invalid_refused": ([1, 1, 0.5, 2], "nearest", 9, "scales below 1"),
}


def build_suite(root: Path) -> Path:
    """Write the hand-built suite (:data:`CASES`, both forms) to ``root``."""
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    records, hashes = [], {}
    for case_id, (scales, mode, opset, must_refuse) in CASES.items():
        model = upsample_model(case_id, scales, mode, opset)
        expected = None if must_refuse else upsample(x, scales, mode)
        name = f"test_upsample_{case_id}"
        hashes[case_id] = write_case(root / "upsample" / name, model, x, expected, must_refuse)
        upgraded = None
        if must_refuse is None:
            key = _suite._hash_key("upgraded", case_id)
            hashes[key] = write_case(root / "upgraded" / name, upgrade(model), x, expected, None)
            upgraded = {"path": f"upgraded/{name}", "sha256": hashes[key]}
        records.append({"id": case_id, "path": f"upsample/{name}", "group": "hand-made",
                        "mode": mode, "scales": scales, "tags": [], "dtype": "float32",
                        "ort": "refuses" if opset == 1 else "exact",
                        "sha256": hashes[case_id], "must_refuse": must_refuse,
                        "upgraded": upgraded})
    manifest = {"suite": _suite.SUITE_NAME, "version": "test", "cases": records,
                "content_hash": _suite._suite_hash(hashes), "upgraded": {"opset": 18},
                "ort_tags_measured_with": "onnxruntime 1.32"}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root
