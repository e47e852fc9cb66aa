"""Test helper: what the file tests check of a folder, an array and an error line (no tests
here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from runners import assert_one_line_error


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line the command printed on stderr (and nothing else)."""
    err = capsys.readouterr().err
    assert_one_line_error(err)
    return err.strip("\n")


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def only(folder: Path, *names: str) -> None:
    """Nothing but ``names`` in ``folder``: no output left behind, no temporary files."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)
