"""Reports of graded runs: terminal table, JSON, Markdown and HTML (stdlib only).

A pass matrix has case groups as rows and backends as columns; the cases that must be
refused (invalid models) are a row of their own. Waived failures (the user's expected
failures, onnxruntime's documented ones) count as passed and are listed by waiver, with
their reasons. Every report lists each case that does not pass, with its ID, its verdict and
the explainer's one-line verdict; refusals and errors are grouped by message, with every ID;
the run's settings, and its slowest and most memory-hungry cases.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from typing import Any

from ._grade import (
    ACCEPTED_INVALID,
    CLOSE,
    ERROR,
    EXACT,
    GRADE_WORDS,
    GRADES,
    PASSES,
    REFUSED,
    REFUSED_AS_REQUIRED,
    ULP1,
    WRONG,
    WRONG_DTYPE,
    WRONG_SHAPE,
)
from ._protocol import shorten
from ._report_explained import explained_lines
from ._runner import BackendResult, CaseResult
from ._waivers import UNEXPECTED_PASS, VERDICT_WORDS, WAIVED

#: The pass-matrix row of the cases that must be refused, whatever their group.
MUST_REFUSE_ROW = "invalid models (must be refused)"


def verdict_kind(result: CaseResult) -> str:
    """The grade, or ``waived`` / ``unexpected-pass`` (what ``--fail-on`` matches)."""
    return result.verdict


def verdict(result: CaseResult) -> str:
    """The verdict in words; a waived failure says which grade it waives."""
    kind = result.verdict
    if kind == WAIVED:
        return f"waived ({GRADE_WORDS[result.grade.kind]})"
    return VERDICT_WORDS.get(kind) or GRADE_WORDS[kind]


def passed(result: CaseResult) -> bool:
    return result.passed


def findings(runs: list[BackendResult],
             kinds: set[str]) -> list[tuple[BackendResult, CaseResult]]:
    """(run, case) for every case whose verdict kind (:func:`verdict_kind`) is in
    ``kinds``."""
    return [(run, r) for run in runs for r in run.results if verdict_kind(r) in kinds]


# Parts of runtime messages that name the case rather than the problem: model paths, the
# scales or shapes printed in brackets, node numbers. Refusals are grouped by the rest.
_CASE_PARTS = ((re.compile(r"\S*test_upsample_\w+\S*"), "<model>"),
               (re.compile(r"\[[^\[\]]*\d[^\[\]]*\]"), "[…]"),
               (re.compile(r"#\d+"), "#…"), (re.compile(r"_\d{3,}"), "_…"))


def _message_key(detail: str) -> str:
    for pattern, placeholder in _CASE_PARTS:
        detail = pattern.sub(placeholder, detail)
    return detail


def message_groups(run: BackendResult, kinds: tuple[str, ...] = (REFUSED, ERROR),
                   width: int = 300) -> list[str]:
    """Refusals and errors grouped by message, largest group first, each with every case
    ID. A group's message is shown whole when its cases share it, else with the parts that
    name the case (paths, bracketed values, node numbers) replaced by placeholders."""
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for result in run.results:
        if result.grade.kind in kinds and not result.passed:
            group = (verdict(result), _message_key(result.grade.detail))
            groups.setdefault(group, []).append(result)
    lines = []
    for (words, template), members in sorted(groups.items(), key=lambda i: -len(i[1])):
        message = members[0].grade.detail if len({m.grade.detail for m in members}) == 1 \
            else template
        ids = ", ".join(m.id for m in members)
        lines.append(f"{len(members)} {words}: {shorten(message, width)} [{ids}]")
    return lines


def _explanation(result: CaseResult) -> str:
    if result.explanation is None:
        return ""
    return str(result.explanation.get("summary") or "")


def case_rows(run: BackendResult, width: int = 300) -> list[tuple[str, str, str, str]]:
    """(ID, verdict, what happened, the explainer's one-line verdict) for every case that
    does not pass and is not a refusal or error (those are :func:`message_groups`)."""
    return [(r.id, verdict(r), shorten(r.grade.detail, width), shorten(_explanation(r), width))
            for r in run.results if not r.passed and r.grade.kind not in (REFUSED, ERROR)]


def waived_groups(run: BackendResult) -> list[str]:
    """The waived cases, by waiver: its reason and where it was written, with every case ID;
    then the waived cases that passed (the waiver may be out of date)."""
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for result in run.results:
        if result.waiver is not None and result.verdict in (WAIVED, UNEXPECTED_PASS):
            key = (result.verdict, f"{result.waiver.reason} ({result.waiver.source})")
            groups.setdefault(key, []).append(result)
    lines = []
    for (kind, why), members in sorted(groups.items(), key=lambda i: (i[0][0], -len(i[1]))):
        grades = Counter(GRADE_WORDS[m.grade.kind] for m in members)
        what = ", ".join(f"{n} {g}" for g, n in grades.items())
        head = ("waived" if kind == WAIVED else "expected to fail, but passed")
        lines.append(f"{len(members)} {head} ({what}): {why} "
                     f"[{', '.join(m.id for m in members)}]")
    return lines


def settings_words(run: BackendResult) -> str:
    """How the run was set up: the backend's settings, the tolerance, the memory limit."""
    parts = [f"{key}={value}" for key, value in run.settings.items()]
    parts.append(f"tolerance {run.tolerance}" if run.tolerance else "exact grading")
    if run.memory_limit is not None:
        parts.append(f"memory limit {run.memory_limit / 2**20:.0f} MiB")
    return ", ".join(parts)


def resource_lines(run: BackendResult, count: int = 3) -> list[str]:
    """The slowest cases and the largest peak memory of the run's worker."""
    if not run.results:
        return []
    slowest = sorted(run.results, key=lambda r: -r.seconds)[:count]
    lines = [f"time: {sum(r.seconds for r in run.results):.1f} s in all; slowest: "
             + ", ".join(f"{r.id} {r.seconds:.2f} s" for r in slowest)]
    peaks = [r for r in run.results if r.peak_bytes is not None]
    if peaks:
        largest = sorted(peaks, key=lambda r: -(r.peak_bytes or 0))[:count]
        lines.append("peak memory: " + ", ".join(
            f"{r.id} {(r.peak_bytes or 0) / 2**20:.0f} MiB" for r in largest))
    return lines


def form_rows(runs: list[BackendResult]) -> list[tuple[str, str, str, list[str]]]:
    """For each backend graded on both forms, the cases it does not pass on the Upsample
    models, grouped by (backend, verdict on the Upsample model, verdict on the upgraded
    Resize model): whether the upgrade fixes them. The cases are listed by ID."""
    upgraded = {run.backend: {r.id: r for r in run.results} for run in runs
                if run.form == "upgraded"}
    groups: dict[tuple[str, str, str], list[str]] = {}
    for run in runs:
        if run.form != "upsample" or run.backend not in upgraded:
            continue
        for result in run.results:
            if result.grade.kind in PASSES:  # a waived failure is still one
                continue
            other = upgraded[run.backend].get(result.id)
            after = "no upgraded model" if other is None else (
                "fixed: exact" if other.passed else verdict(other))
            key = (run.backend, verdict(result), after)
            groups.setdefault(key, []).append(result.id)
    return [(backend, before, after, ids) for (backend, before, after), ids in groups.items()]


def _score(run: BackendResult) -> str:
    """E.g. "83 exact, 47 waived (3 wrong, 44 refused), 2 refused; invalid models: 6/6
    refused, as required"."""
    valid = [r for r in run.results if r.must_refuse is None]
    counts = Counter(r.verdict for r in valid)
    order = [g for g in GRADES if g not in (REFUSED_AS_REQUIRED, ACCEPTED_INVALID)]
    parts = [f"{counts[kind]} {GRADE_WORDS[kind]}" for kind in order if counts[kind]]
    waived = Counter(GRADE_WORDS[r.grade.kind] for r in valid if r.verdict == WAIVED)
    if waived:
        parts.append(f"{sum(waived.values())} waived ("
                     + ", ".join(f"{n} {g}" for g, n in waived.items()) + ")")
    if counts[UNEXPECTED_PASS]:
        parts.append(f"{counts[UNEXPECTED_PASS]} {VERDICT_WORDS[UNEXPECTED_PASS]}")
    invalid = [r for r in run.results if r.must_refuse is not None]
    if invalid:
        refused = sum(r.grade.kind == REFUSED_AS_REQUIRED for r in invalid)
        parts.append(f"invalid models: {refused}/{len(invalid)} refused, as required")
        waived_invalid = sum(r.verdict == WAIVED for r in invalid)
        if waived_invalid:
            parts[-1] += f", {waived_invalid} accepted as waived"
        # a backend that raises on everything (a broken adapter, a missing feature) also
        # "refuses" every invalid model: without one output for a valid model, that proves
        # nothing about its checks
        ran = (EXACT, CLOSE, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE)
        if refused and not any(r.grade.kind in ran for r in run.results
                               if r.must_refuse is None):
            parts[-1] += " (unverified: it returned no output for any valid model either)"
    return ", ".join(parts) or "no cases"


def _row(result: CaseResult) -> str:
    return MUST_REFUSE_ROW if result.must_refuse is not None else result.group


def _groups(runs: list[BackendResult]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for result in run.results:
            seen.setdefault(_row(result), None)
    return list(seen)


def _cell(run: BackendResult, group: str) -> str:
    results = [r for r in run.results if _row(r) == group]
    if not results:
        return "-"
    return f"{sum(r.passed for r in results)}/{len(results)}"


def terminal(runs: list[BackendResult], *, verbose: bool = False) -> str:
    """The report for a terminal: score, pass matrix, every case that does not pass, and
    the conventions that explain the differences; ``verbose`` lists refusals and errors
    case by case instead of grouped by message."""
    lines = []
    for run in runs:
        lines.append(f"{run.label} {run.version}: {len(run.results)} cases of suite "
                     f"{run.suite_version} ({run.content_hash[:19]}): {_score(run)}")
        lines.append(f"  ({settings_words(run)})")
    groups = _groups(runs)
    width = max([len(g) for g in groups] + [10])
    names = [run.label for run in runs]
    column = max([len(n) for n in names] + [12])
    lines.append("")
    lines.append(f"{'passed per group':<{width}}  " + "  ".join(f"{n:>{column}}" for n in names))
    for group in groups:
        lines.append(f"{group:<{width}}  "
                     + "  ".join(f"{_cell(run, group):>{column}}" for run in runs))
    if any(r.verdict == WAIVED for run in runs for r in run.results):
        lines.append("(passed: exact, within the tolerance, refused as required, or waived)")
    for run in runs:
        lines.append("")
        lines.append(f"{run.label}:")
        lines += [f"  {line}" for line in _backend_details(run, verbose)]
    rows = form_rows(runs)
    if rows:
        lines += ["", "does the upgrade (Upsample -> Resize) fix what a backend gets wrong?"]
        lines += [f"  {backend}: {len(ids)} {before} -> upgraded: {after} [{', '.join(ids)}]"
                  for backend, before, after, ids in rows]
    return "\n".join(lines)


def _backend_details(run: BackendResult, verbose: bool) -> list[str]:
    lines: list[str] = []
    for case, words, detail, explanation in case_rows(run, width=220):
        lines.append(f"{case}: {words}: {detail}")
        if explanation:
            lines.append(f"    {explanation}")
    if verbose:
        lines += [f"{r.id}: {verdict(r)}: {shorten(r.grade.detail, 300)}"
                  for r in run.results if r.grade.kind in (REFUSED, ERROR) and not r.passed]
    else:
        lines += message_groups(run, width=220)
    lines += waived_groups(run)
    lines += run.notes
    if run.results and all(r.passed for r in run.results):
        lines.append(_all_passed(run))
    lines += [f"explained: {line}" for line in explained_lines(run)]
    lines += resource_lines(run)
    return lines


def _all_passed(run: BackendResult) -> str:
    waived = sum(r.verdict == WAIVED for r in run.results)
    return "every case passed" + (f" but the {waived} waived" if waived else "")


def _strict(value: Any) -> Any:
    """``value`` with every infinite or NaN float written as text (strict JSON: the
    manifest's must-refuse cases hold NaN and infinite scales)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(item) for item in value]
    return value


def to_json(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    return json.dumps(_strict({"suite": suite, "backends": [r.to_dict() for r in runs]}),
                      indent=1, allow_nan=False)


def upgrade_table(runs: list[BackendResult]) -> list[str]:
    """:func:`form_rows` as a Markdown table (no lines when no backend ran both forms)."""
    rows = form_rows(runs)
    if not rows:
        return []
    return ["| backend | on the Upsample model | on the upgraded model | cases |",
            "| --- | --- | --- | --- |",
            *[f"| {b} | {_md(before)} | {_md(after)} | {len(ids)}: "
              + ", ".join(f"`{i}`" for i in ids) + " |" for b, before, after, ids in rows]]


def _md(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("|", "\\|")


def markdown(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    """A Markdown report: scores, the pass matrix, every case that does not pass (with the
    explainer's verdict), refusals and errors by message, the upgrade comparison."""
    out = [f"Suite {suite['version']} ({suite['content_hash']}), {len(suite['cases'])} "
           f"cases; ORT tags measured with {suite['ort_tags_measured_with']}.", ""]
    out += ["| backend | version | settings | result |", "| --- | --- | --- | --- |"]
    for run in runs:
        out.append(f"| {_md(run.label)} | {run.version} | {_md(settings_words(run))} | "
                   f"{_md(_score(run))} |")
    out += ["", "Cases passed per group (exact, or within the tolerance given; waived failures "
            "and invalid models refused as required count as passed):", ""]
    out.append("| group | " + " | ".join(_md(run.label) for run in runs) + " |")
    out.append("| --- | " + " | ".join("---" for _ in runs) + " |")
    for group in _groups(runs):
        out.append(f"| {_md(group)} | " + " | ".join(_cell(run, group) for run in runs) + " |")
    table = upgrade_table(runs)
    if table:
        out += ["", "Does the upgrade (Upsample to Resize) fix what a backend gets wrong?", "",
                *table]
    for run in runs:
        out += ["", f"### {run.label} {run.version}", ""]
        explained = explained_lines(run)
        cases = case_rows(run)
        groups = message_groups(run)
        waived = waived_groups(run) + run.notes
        if run.results and all(r.passed for r in run.results):
            out += [_all_passed(run).capitalize() + ".", ""]
        if explained:
            out += ["Differences, and the convention that reproduces them:", ""]
            out += [f"- {line}" for line in explained]
            out.append("")
        if cases:
            # folded: a runtime far from Upsample has a hundred rows, which hide the summary
            out += [f"<details><summary>{len(cases)} cases that did not pass, one by one "
                    "(refusals and errors follow, by message)</summary>", "",
                    "| case | verdict | what happened | explanation |",
                    "| --- | --- | --- | --- |"]
            out += [f"| `{c}` | {_md(w)} | {_md(d)} | {_md(e)} |" for c, w, d, e in cases]
            out += ["", "</details>", ""]
        if groups:
            out += ["Refusals and errors, by message:", ""]
            out += [f"- {line}" for line in groups]
            out.append("")
        if waived:
            out += ["Waivers:", ""]
            out += [f"- {line}" for line in waived]
            out.append("")
        out += [f"- {line}" for line in resource_lines(run)] + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def to_html(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    """The same report as :func:`markdown`, as a standalone HTML page."""
    def row(cells: list[str] | tuple[str, ...], tag: str = "td") -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"

    parts = ["<!doctype html><meta charset='utf-8'><title>Upsample conformance</title>",
             "<style>table{border-collapse:collapse}td,th{border:1px solid #999;"
             "padding:2px 8px;vertical-align:top}</style>",
             f"<h1>ONNX Upsample conformance, suite {html.escape(suite['version'])}</h1>",
             "<table>", row(["backend", "version", "settings", "result"], "th")]
    parts += [row([r.label, r.version, settings_words(r), _score(r)]) for r in runs]
    parts += ["</table><h2>Cases passed per group</h2><table>",
              row(["group"] + [r.label for r in runs], "th")]
    parts += [row([g] + [_cell(r, g) for r in runs]) for g in _groups(runs)]
    parts.append("</table>")
    rows = form_rows(runs)
    if rows:
        parts += ["<h2>Does the upgrade fix what a backend gets wrong?</h2><table>",
                  row(["backend", "on the Upsample model", "on the upgraded model", "cases"],
                      "th")]
        parts += [row([b, before, after, f"{len(ids)}: {', '.join(ids)}"])
                  for b, before, after, ids in rows]
        parts.append("</table>")
    for run in runs:
        parts.append(f"<h2>{html.escape(run.label)} {html.escape(run.version)}</h2>")
        explained = explained_lines(run)
        cases = case_rows(run)
        groups = message_groups(run)
        waived = waived_groups(run) + run.notes
        if run.results and all(r.passed for r in run.results):
            parts.append(f"<p>{html.escape(_all_passed(run).capitalize())}.</p>")
        if explained:
            parts.append("<h3>explained differences</h3><ul>")
            parts += [f"<li>{html.escape(line)}</li>" for line in explained]
            parts.append("</ul>")
        if cases:
            parts.append("<h3>cases that did not pass</h3><table>")
            parts.append(row(["case", "verdict", "what happened", "explanation"], "th"))
            parts += [row(c) for c in cases]
            parts.append("</table>")
        if groups:
            parts.append("<h3>refusals and errors, by message</h3><ul>")
            parts += [f"<li>{html.escape(line)}</li>" for line in groups]
            parts.append("</ul>")
        if waived:
            parts.append("<h3>waivers</h3><ul>")
            parts += [f"<li>{html.escape(line)}</li>" for line in waived]
            parts.append("</ul>")
        parts += [f"<p>{html.escape(line)}</p>" for line in resource_lines(run)]
    return "\n".join(parts) + "\n"
