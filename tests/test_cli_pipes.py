"""The command line in a pipe whose reader goes away (``onnx-upsample inspect M --json | head``):
the output stops quietly, as a Unix tool's does, with no traceback and exit status 141
(128 + SIGPIPE, what a shell reports for a tool that SIGPIPE stopped), never 1. (``--help``
needs nothing: argparse ignores a failed write of the help.)

Each command runs in a child process whose stdout is a real pipe; the reader closes its end
early (at once, or after the first line of an output larger than the pipe's buffer).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from onnx_upsample.cli import EXIT_BROKEN_PIPE, EXIT_OK

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "yolo_head_opset9.onnx"
# more than a pipe's buffer (64 KiB on Linux): the writer is still writing when the reader
# closes after its first line
LARGE = 256 * 1024


def _closed_early(argv: list[object], *, read_first_line: bool) -> tuple[int, str]:
    """Run ``onnx-upsample ARGV`` with stdout a pipe that its reader closes early; its exit
    status and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "onnx_upsample", *map(str, argv)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    if read_first_line:
        assert process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read()
    process.stderr.close()
    return process.wait(timeout=120), err


def _assert_quiet_stop(code: int, err: str, *, finished: bool = False) -> None:
    """No traceback, and 141; or 0 where ``finished``: a write under way when the reader
    closes may still complete, and then the command has nothing left to write."""
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception" not in err, err
    assert code in ((EXIT_OK, EXIT_BROKEN_PIPE) if finished else (EXIT_BROKEN_PIPE,)), err


def test_inspect_json_into_a_closed_pipe(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    _assert_quiet_stop(*_closed_early(["inspect", EXAMPLE, "--json"], read_first_line=False))


@pytest.mark.slow
def test_inspect_json_read_one_line_then_closed(tmp_path: Path) -> None:
    # `inspect --json | head -1` on a model whose JSON passes the pipe's buffer: Upsample
    # nodes in a row, with long names
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    count = 32
    nodes = [helper.make_node("Upsample", [f"t{i}", "scales"], [f"t{i + 1}"],
                              name=f"{i}_" + "n" * 8000, mode="nearest") for i in range(count)]
    scales = numpy_helper.from_array(np.ones(4, np.float32), "scales")
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info(f"t{count}", TensorProto.FLOAT, [1, 1, 2, 2])],
        [scales])
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)]), str(path))
    whole = subprocess.run([sys.executable, "-m", "onnx_upsample", "inspect", str(path),
                            "--json"], capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0 and len(whole.stdout) > LARGE, whole.stderr
    _assert_quiet_stop(*_closed_early(["inspect", path, "--json"], read_first_line=True),
                       finished=True)


def test_upgrade_json_into_a_closed_pipe(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    output = tmp_path / "up.onnx"
    _assert_quiet_stop(*_closed_early(["upgrade", EXAMPLE, "-o", output, "--json"],
                                      read_first_line=False))


def test_compare_json_into_a_closed_pipe(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    source = tmp_path / "in.npy"
    np.save(source, np.arange(300, dtype=np.uint8).reshape(12, 25))
    _assert_quiet_stop(*_closed_early(["compare", source, "-o", tmp_path / "grid.png",
                                       "--scales", "1.7", "--json"], read_first_line=False))
