"""Graded runs as JUnit XML, the report format CI systems read (stdlib only).

One ``<testsuite>`` per run (backend and model form), one ``<testcase>`` per case: its
``classname`` the backend and the case's group, its ``time`` the seconds the runtime took.
A case whose verdict fails the run (``--fail-on``) is a ``<failure>`` (a wrong output) or an
``<error>`` (the runtime raised, crashed, timed out or ran out of memory); a waived failure,
or a verdict that does not fail the run, is ``<skipped>`` with its reason; a pass has no
child. The run's settings are ``<properties>``; a failing case's replay command, where one
was kept, is its ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Collection, Mapping
from typing import Any

from ._grade import ACCEPTED_INVALID, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE
from ._report import verdict
from ._runner import BackendResult, CaseResult

# grades that say the output is wrong (a failure); every other failing verdict says the
# runtime did not produce one (an error)
_WRONG_OUTPUT = (WRONG, WRONG_DTYPE, WRONG_SHAPE, ULP1, ACCEPTED_INVALID)


def _case(suite: ElementTree.Element, run: BackendResult, result: CaseResult,
          fail_on: Collection[str], replays: Mapping[tuple[str, str], str]) -> str:
    element = ElementTree.SubElement(suite, "testcase", {
        "classname": f"{run.label}.{result.group}", "name": result.id,
        "time": f"{result.seconds:.4f}"})
    words = verdict(result)
    detail = result.grade.detail
    if result.waiver is not None and result.verdict != result.grade.kind:
        detail = f"{detail}; waiver: {result.waiver.reason} ({result.waiver.source})"
    explanation = (result.explanation or {}).get("summary")
    if result.verdict in fail_on:
        tag = "failure" if result.grade.kind in _WRONG_OUTPUT else "error"
        child = ElementTree.SubElement(element, tag, {"type": result.verdict,
                                                      "message": f"{words}: {detail}"})
        child.text = "\n".join(filter(None, [detail, explanation]))
        replay = replays.get((run.label, result.id))
        if replay:
            ElementTree.SubElement(element, "system-out").text = f"replay: {replay}"
        return tag
    if not result.passed or result.verdict != result.grade.kind:
        ElementTree.SubElement(element, "skipped", {"message": f"{words}: {detail}"})
        return "skipped"
    return "passed"


def junit(runs: list[BackendResult], suite: Mapping[str, Any], fail_on: Collection[str],
          replays: Mapping[tuple[str, str], str] | None = None) -> str:
    """The runs as one JUnit XML document; ``replays`` maps (run label, case ID) to the
    command that replays a failing case."""
    root = ElementTree.Element("testsuites", {"name": "onnx-upsample conformance"})
    for run in runs:
        element = ElementTree.SubElement(root, "testsuite", {
            "name": f"Upsample conformance: {run.label} {run.version}",
            "tests": str(len(run.results)),
            "time": f"{sum(r.seconds for r in run.results):.3f}"})
        properties = ElementTree.SubElement(element, "properties")
        values = {"backend": run.backend, "version": run.version, "form": run.form,
                  "suite_version": str(suite.get("version", run.suite_version)),
                  "content_hash": run.content_hash,
                  "tolerance": run.tolerance or "exact",
                  "fail_on": ",".join(fail_on) or "none",
                  **{f"setting.{key}": value for key, value in run.settings.items()}}
        for name, value in values.items():
            ElementTree.SubElement(properties, "property", {"name": name, "value": value})
        outcomes = [_case(element, run, r, fail_on, replays or {}) for r in run.results]
        for outcome, attribute in (("failure", "failures"), ("error", "errors"),
                                   ("skipped", "skipped")):
            element.set(attribute, str(outcomes.count(outcome)))
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
