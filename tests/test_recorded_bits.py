"""This machine's bits against outputs recorded on x86-64 (see recorded_bits.py).

``make test-aarch64`` records the cases with the x86-64 build and onnxruntime's x86-64 build,
then runs this file on aarch64 under qemu with ONNX_UPSAMPLE_RECORDED_BITS naming the file:
every output must be the recorded one, bit for bit (the NaN an operation creates aside,
whose sign is the processor's), and so onnxruntime's x86-64 output where it has a kernel.
Elsewhere (make test) the file is recorded first, by a separate process of this machine:
the comparison then holds the recorder, and onnx-upsample's outputs against onnxruntime's
own, to the same rules.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import recorded_bits

from onnx_upsample import upsample

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    named = os.environ.get("ONNX_UPSAMPLE_RECORDED_BITS")
    if named:
        return Path(named)
    path = tmp_path_factory.mktemp("recorded") / "bits.npz"
    subprocess.run([sys.executable, str(HERE / "recorded_bits.py"), str(path)], check=True,
                   capture_output=True, text=True)
    return path


def test_outputs_are_the_recorded_ones(recorded: Path) -> None:
    cases, data = recorded_bits.load(recorded)
    assert len(cases) == recorded_bits.CASES
    wrong, against_ort = [], 0
    for i, case in enumerate(cases):
        dtype = recorded_bits._dtype(case["dtype"])
        x = data[f"x{i}"].view(dtype).reshape(case["shape"])
        got = recorded_bits._raw(upsample(x, case["scales"], case["mode"]))
        n = recorded_bits.differences(got, data[f"ours{i}"], case["dtype"])
        if case["ort"]:
            against_ort += 1
            n += recorded_bits.differences(got, data[f"ort{i}"], case["dtype"])
        if n:
            wrong.append((i, case, n))
    assert not wrong, f"{len(wrong)} of {len(cases)} cases differ: {wrong[:5]}"
    # the cases reach onnxruntime's kernels in both modes
    assert against_ort > len(cases) // 10
    modes = {c["mode"] for c in cases if c["ort"]}
    assert modes == {"nearest", "linear"}


def test_created_nans_are_the_only_allowed_difference() -> None:
    """The comparison's own rule, on hand-made words: a created NaN of either sign matches,
    any other difference does not."""
    x86, arm = np.array([0xFFC00000], np.uint32), np.array([0x7FC00000], np.uint32)
    assert recorded_bits.differences(x86, arm, "float32") == 0
    payload = np.array([0x7FC00001], np.uint32)
    assert recorded_bits.differences(payload, arm, "float32") == 1
    assert recorded_bits.differences(x86, arm, "int32") == 1
    assert recorded_bits.differences(np.array([0xFE00], np.uint16),
                                     np.array([0x7E00], np.uint16), "float16") == 0
