"""The ONNX ``Upsample`` conformance suite: export it, grade any runtime, explain differences.

Needs the ``onnx`` extra; the optional runtimes are the ``conformance`` extra
(``pip install 'onnx-upsample[conformance]'``). See ``docs/conformance.md``.

- :func:`export` writes the suite (``Upsample`` versions 1, 7, 9, 9 with run-time scales,
  10; both modes; the 15 element types of the spec; ranks 0-6; special values; scales and
  sizes that tell other coordinate and output-size rules apart; large outputs; invalid
  nodes that must be refused, marked by ``expect_refusal.json``) in onnx's backend-test
  layout, with a manifest, a version and a content hash, and beside it the same cases as
  the ``Resize`` models :func:`onnx_upsample.onnx.upgrade` writes;
  :func:`load` reads either form back.
- :func:`run` grades one runtime on it, each case in an isolated worker process with a
  memory limit: exact, within tolerance (when one is given), within 1 ULP, wrong, wrong
  dtype, wrong shape, refused (the runtime's own explicit not-supported error), error (any
  other exception), adapter error, crashed (also after answering), timed out or out of
  memory; an invalid model is "refused, as required" or "accepted invalid input"; a failure
  the user's expected-failures file (or onnxruntime's built-in one) names is "waived"; every
  difference goes through :func:`explain`. Load the suite with ``form="upgraded"`` to grade the
  upgraded Resize models instead.
- :func:`explain` names the conventions (Resize's ``half_pixel``, ``align_corners``,
  PyTorch's reciprocal multiply, TVM's rounded sizes...) that reproduce a runtime's output,
  all of them when one output cannot tell them apart.
- :func:`diff` runs one model in two runtimes, compares every node's outputs, says where
  each difference begins (:class:`Origin`: a Conv as much as an ``Upsample``), and names the
  convention behind each ``Upsample`` and ``Resize`` that differs (:class:`ModelDiff`).

Example::

    from onnx_upsample import conformance

    suite = conformance.export("upsample-suite")
    result = conformance.run("onnxruntime", suite)
    print(result.counts())
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ._backend_base import check_options
from ._backends import BUILTIN as BACKENDS
from ._cases import SUITE_VERSION
from ._diff import diff
from ._diff_result import ModelDiff, NodeDiff, Origin
from ._explain import Explanation
from ._explain import explain as _explain_arrays
from ._grade import parse_tolerance
from ._process import DEFAULT_MEMORY_LIMIT, check_memory_limit
from ._runner import BackendResult, CaseResult
from ._suite import Suite, SuiteCase, export, load

__all__ = ["BACKENDS", "SUITE_VERSION", "BackendResult", "CaseResult", "Explanation",
           "ModelDiff", "NodeDiff", "Origin", "Suite", "SuiteCase", "diff", "explain", "export",
           "load", "run"]


def run(backend: str, suite: Suite | str | os.PathLike[str] | None = None, *,
        timeout: float = 60.0, cases: str | Iterable[str] | Callable[[str], bool] | None = None,
        explain: bool = True,
        progress: Callable[[int, int, str, str], None] | None = None,
        options: Mapping[str, str | int | float | bool] | None = None,
        tolerance: str | None = None,
        expected_failures: str | os.PathLike[str] | None = None,
        memory_limit: int | str | None = DEFAULT_MEMORY_LIMIT) -> BackendResult:
    """Grade ``backend`` on the ONNX ``Upsample`` conformance suite.

    Parameters
    ----------
    backend
        A name from :data:`BACKENDS`, ``package.module:callable`` (called with the model's
        bytes and a dict of inputs, returning the outputs), or a module or class with the
        onnx backend API (``prepare(model)`` returning something with ``run(inputs)``, or
        ``run_model``), as onnx's backend-test runner takes it (``onnxruntime.backend``).
    suite
        An exported suite (:class:`Suite`, in the form it was loaded in, or its directory,
        read in the Upsample form); None exports the default suite to a temporary directory
        first.
    timeout
        Seconds one case may take; the worker is then stopped and restarted.
    cases
        Only some cases: a shell pattern of case IDs (``'v9_*'``, as ``onnx-upsample
        conformance run --cases`` takes it), a list of patterns (the IDs matching any of
        them), or a predicate on case IDs. A pattern that matches no case of the suite is
        an :class:`~onnx_upsample.UpsampleError`.
    explain
        Run the explainer on every output that is not exact.
    progress
        Called as ``progress(done, total, case_id, verdict)`` after each case.
    options
        The backend's settings (values as text, or numbers): for ``onnxruntime``
        ``graph_optimization_level`` (``disable``, ``basic``, ``extended``, ``layout``,
        ``all``: the default), ``execution_provider``, ``intra_op_num_threads``,
        ``inter_op_num_threads``; for ``openvino`` ``device``, ``inference_precision``,
        ``num_threads``; ``device`` for ``tinygrad``, ``target`` for ``tvm``; any keyword
        for a custom backend (passed to its callable, or to ``prepare``/``run_model``,
        ``device`` as their device argument). The result's ``settings`` records them,
        defaults included.
    tolerance
        Outputs within it are graded ``close``, a pass: ``'2ulp'``, ``'atol=1e-6'``,
        ``'rtol=1e-5'`` or a comma list of them. None (the default): only exact outputs
        pass; one within 1 ULP is graded ``1-ulp``, a failure.
    expected_failures
        A file of the cases the backend is expected to fail, with why (one ``PATTERN
        [grades=KIND,...] [backend=NAME] REASON`` a line): their failures are graded
        ``waived``, and a waived case that passes ``unexpected-pass``. onnxruntime's
        documented differences are waived too, built in, at the onnxruntime versions the
        suite records.
    memory_limit
        Bytes the worker process may hold (resident, with the processes it starts), or a
        size as ``--memory-limit`` takes it (``'2G'``); past it, the case is graded
        ``out-of-memory`` and the worker restarted. None: no limit.
    """
    from ._runner import grade_backend, select_cases
    from ._waivers import check_backends, read_waivers

    options = check_options(backend if isinstance(backend, str) else "", options or {},
                            defaults=False)
    grading = parse_tolerance(tolerance)
    limit = check_memory_limit(memory_limit)
    if suite is None:
        with tempfile.TemporaryDirectory(prefix="onnx-upsample-suite-") as scratch:
            exported = export(os.path.join(scratch, "suite"), check_ort=False)
            return run(backend, exported, timeout=timeout, cases=cases, explain=explain,
                       progress=progress, options=options, tolerance=tolerance,
                       expected_failures=expected_failures, memory_limit=memory_limit)
    loaded = suite if isinstance(suite, Suite) else load(suite)
    waivers = ([] if expected_failures is None else
               read_waivers(expected_failures, [case.id for case in loaded.cases]))
    check_backends(waivers, [backend])
    return grade_backend(backend, loaded, timeout=timeout,
                         select_ids=select_cases(cases, loaded), explain=explain,
                         progress=progress, options=options, tolerance=grading,
                         waivers=waivers, memory_limit=limit)


def explain(x: Any, theirs: Any, scales: Sequence[float] | np.ndarray,
            mode: str = "nearest") -> Explanation:
    """Name the convention that reproduces another runtime's ``Upsample`` output.

    ``x`` is the input, ``theirs`` the runtime's output for ONNX ``Upsample`` (versions
    7, 9, 10) with ``scales`` and ``mode``. See :class:`Explanation`.
    """
    return _explain_arrays(x, theirs, scales, mode)
