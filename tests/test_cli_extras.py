"""The command line without optional dependencies, and --version (issue 9).

A missing extra is one line naming the pip install to run, exit 2: checked by hiding the
module in a child process (``sys.modules[name] = None`` makes its import fail).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onnx_upsample

RUN_HIDDEN = (
    "import sys\n"
    "sys.modules[{module!r}] = None\n"
    "from onnx_upsample.cli import main\n"
    "sys.exit(main({argv!r}))\n"
)


def _run_without(module: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = RUN_HIDDEN.format(module=module, argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_version() -> None:
    result = subprocess.run([sys.executable, "-m", "onnx_upsample", "--version"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"onnx-upsample {onnx_upsample.__version__}"


@pytest.mark.parametrize(("module", "argv", "install"), [
    ("onnx", ["inspect", "model.onnx"], "pip install 'onnx-upsample[onnx]'"),
    ("onnx", ["run", "model.onnx"], "pip install 'onnx-upsample[onnx]'"),
    ("zarr", ["apply", "a.npy", "o.zarr", "--scales", "2", "2"],
     "pip install 'onnx-upsample[dask]'"),
    ("dask", ["apply", "a.npy", "o.npy", "--scales", "2", "2", "--chunks", "2"],
     "pip install 'onnx-upsample[dask]'"),
    ("PIL", ["apply", "a.npy", "o.png", "--scales", "2", "2"],
     "pip install 'onnx-upsample[images]'"),
])
def test_missing_extra_is_one_line_naming_the_install(
    tmp_path: Path, module: str, argv: list[str], install: str
) -> None:
    np.save(tmp_path / "a.npy", np.ones((3, 4), np.uint8))
    (tmp_path / "model.onnx").write_bytes(b"")
    result = _run_without(module, argv, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert install in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "model.onnx"]
