"""An ``Upsample`` node as read from a model, and what is wrong with it (the readers that
fill it: ``_node``, ``_node_checks``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import onnx

from .._spec.versions import VERSIONS, UpsampleVersion, version_of_node
from ._fixes import Fix, FixableError, fix_of

__all__ = ["Problem", "Severity", "UpsampleNode"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a node: severity, a short code, the message and the fix."""

    severity: Severity
    code: str
    message: str
    fix: Fix
    blocking: bool = False


@dataclass
class UpsampleNode:
    """An ``Upsample`` node as read from a model (see :func:`describe`)."""

    node: onnx.NodeProto
    label: str
    opset: int | None
    form: int | None = None
    mode_name: str = "nearest"
    importer: str = "the model"  # what imports the opset: the model or a local function
    mode: Literal["nearest", "linear"] | None = "nearest"
    scales: np.ndarray | None = None
    scales_input: str | None = None
    scales_origin: str = ""
    problems: list[Problem] = field(default_factory=list)

    @property
    def version(self) -> int | None:
        """The Upsample version the node runs as: its form, and 10 for the v9 form at 10+."""
        return None if self.form is None else version_of_node(self.form, self.opset).version

    @property
    def schema(self) -> UpsampleVersion:
        """The version the node's form defines (its inputs, attributes, modes, rank)."""
        assert self.form is not None
        return VERSIONS[self.form]

    @property
    def blocking(self) -> list[Problem]:
        """The problems that make the node impossible to run or convert."""
        return [problem for problem in self.problems if problem.blocking]

    def raise_if_blocked(self, doing: str) -> None:
        """Raise :class:`UpsampleError` for the first blocking problem."""
        for problem in self.blocking:
            raise FixableError(
                f"Upsample node {self.label!r} (cannot {doing}): {problem.message}",
                problem.fix, joiner="; fix: ")

    def add(self, severity: Severity, code: str, message: str, fix: str | Fix,
            blocking: bool = False) -> None:
        self.problems.append(Problem(severity, code, message, fix_of(fix), blocking))
