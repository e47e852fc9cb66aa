"""Test helper: collect the output of subprocesses started together (run concurrently
because each is slow), failing on the first that fails and killing every one left."""

from __future__ import annotations

import subprocess
from collections.abc import Hashable
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)


def outputs_of(procs: dict[Key, subprocess.Popen[str]], timeout: float) -> dict[Key, list[str]]:
    """Each process's stdout lines, by key; asserts each exited with status 0."""
    outputs = {}
    try:
        for key, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"{key}: {stderr[-3000:]}"
            outputs[key] = stdout.splitlines()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs
