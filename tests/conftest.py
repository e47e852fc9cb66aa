"""Shared test configuration: hypothesis profiles (HYPOTHESIS_PROFILE=ci in make test), and
what several test files share: the conformance suite, exported once per run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def exported_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The default conformance suite, exported once per test run (with the check that
    onnxruntime gives the expected outputs where the cases say it does), as (Suite, the
    folder holding it). The folder also held what a killed export leaves (its work folder,
    marked with a process that is gone) and a look-alike of someone else's: the export
    removes the first and keeps the second (test_conformance_cases checks it)."""
    from onnx_upsample import conformance

    parent = tmp_path_factory.mktemp("exports")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # what a killed export leaves: its work folder, named with its process's ID
    (parent / f".suite.onnx-upsample-{gone}-abc123.tmp" / "upsample").mkdir(parents=True)
    (parent / ".suite.onnx-upsample-xyz789.tmp").mkdir()  # not named as ours: kept
    return conformance.export(parent / "suite"), parent


@pytest.fixture
def importable_test_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the suite's worker processes import tests/conformance_backends.py."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))


@pytest.fixture
def split_two_threads(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every call in this test split into small row segments and rows over two threads (the
    linear kernel's work items then start and end inside rows' sweeps)."""
    import onnx_upsample
    from onnx_upsample import _kernels, set_num_threads
    from onnx_upsample._kernels import _layout

    monkeypatch.setattr(_layout, "MIN_SHARE_WORK", 1)
    monkeypatch.setattr(_layout, "LINEAR_SCRATCH_BYTES", 1 << 12)
    cores = onnx_upsample._threads.available_cores()
    monkeypatch.setattr(onnx_upsample._threads, "available_cores", lambda: max(2, cores))
    _kernels.launcher.cache_clear()
    onnx_upsample._api._PREPARED.clear()
    set_num_threads(2)
    yield
    onnx_upsample._threads._requested = None
    _kernels.launcher.cache_clear()
    onnx_upsample._api._PREPARED.clear()
