"""Reports of graded runs: terminal table, JSON, Markdown and HTML (stdlib only).

A pass matrix has case groups as rows and backends as columns. For onnxruntime, the cases
whose ORT difference is documented (contract §2) are reported as such, not as failures.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from ._grade import EXACT, GRADE_WORDS, GRADES, REFUSED, ULP1, WRONG, WRONG_SHAPE
from ._runner import BackendResult, CaseResult

DOCUMENTED = "documented ORT difference"


def documented(result: CaseResult, backend: str) -> bool:
    """A wrong onnxruntime output on a case that documents ORT's difference."""
    return backend == "onnxruntime" and result.ort == "differs" and result.grade.kind in (
        WRONG, WRONG_SHAPE, ULP1)


def scale_kind(result: CaseResult) -> str:
    return "integer scales" if "integer-scales" in result.tags else "non-integer scales"


# Name parts that change only the arithmetic (the order or precision of the sum), not which
# elements are read: outputs within a few ULP of a family are that family.
_ARITHMETIC = ("float64 throughout", "separable sum", "separable lerp", "float64 arithmetic")


def _family(name: str) -> str:
    parts = name.split(", ")
    kept = [parts[0]] + [p for p in parts[1:] if p not in _ARITHMETIC]
    return ", ".join(kept)


def explained_lines(run: BackendResult) -> list[str]:
    """One line per (mode, scale kind) and convention family: the convention that
    reproduces a runtime's non-exact outputs, e.g. "nearest, non-integer scales: Resize
    half_pixel + round_prefer_floor in 38/40 cases (all bit for bit), not Upsample".

    A family is the convention's name before its arithmetic details (", float64
    throughout", ", separable sum"...): outputs within a few ULP of a family count for it.
    """
    ran: Counter[str] = Counter()
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for result in run.results:
        key = f"{result.mode}, {scale_kind(result)}"
        if result.grade.kind in (EXACT, ULP1, WRONG, WRONG_SHAPE):
            ran[key] += 1
        if result.explanation is None or documented(result, run.backend):
            continue
        verdict = result.explanation.get("verdict")
        best = str(result.explanation.get("best") or "")
        if verdict in ("convention", "close") and best:
            family = _family(best)
            ulp = 0 if verdict == "convention" else int(result.explanation.get("max_ulp") or 0)
        else:
            summary = str(result.explanation.get("summary", ""))
            family = ("the output's shape: " + summary.split(": ", 1)[1]
                      if "does not resize them" in summary else "no convention tried")
            ulp = -1
        found.setdefault((key, family), []).append((best, ulp))
    lines = []
    for (key, family), hits in sorted(found.items(), key=lambda item: (item[0][0],
                                                                         -len(item[1]))):
        count = f"{len(hits)}/{ran[key]} cases"
        if family == "no convention tried":
            lines.append(f"{key}: {count} match no convention tried (noise or a bug)")
            continue
        if family.startswith("the output's shape"):
            lines.append(f"{key}: {count}: {family[len('the output' + chr(39) + 's shape: '):]}")
            continue
        exact = sum(ulp == 0 for _, ulp in hits)
        worst = max(ulp for _, ulp in hits)
        how = "all bit for bit" if exact == len(hits) else (
            f"{exact} bit for bit, the others within {worst} ULP: same coordinates, "
            "other arithmetic")
        lines.append(f"{key}: {family} in {count} ({how}), not Upsample")
    return lines


def _refusal_lines(run: BackendResult, limit: int = 6) -> list[str]:
    messages: Counter[str] = Counter()
    for result in run.results:
        if result.grade.kind == REFUSED:
            messages[result.grade.detail[:160]] += 1
    return [f"{count} x {message}" for message, count in messages.most_common(limit)]


def _score(run: BackendResult) -> str:
    counts = run.counts()
    parts = []
    differences = sum(documented(r, run.backend) for r in run.results)
    for kind in GRADES:
        if not counts.get(kind):
            continue
        count = counts[kind]
        if kind in (WRONG, WRONG_SHAPE, ULP1) and differences:
            shown = sum(r.grade.kind == kind and documented(r, run.backend)
                        for r in run.results)
            if shown:
                parts.append(f"{shown} {DOCUMENTED}{'s' if shown > 1 else ''}")
                count -= shown
        if count:
            parts.append(f"{count} {GRADE_WORDS[kind]}")
    return ", ".join(parts)


def _groups(runs: list[BackendResult]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for result in run.results:
            seen.setdefault(result.group, None)
    return list(seen)


def _cell(run: BackendResult, group: str) -> str:
    results = [r for r in run.results if r.group == group]
    if not results:
        return "-"
    exact = sum(r.grade.kind == EXACT or documented(r, run.backend) for r in results)
    return f"{exact}/{len(results)}"


def terminal(runs: list[BackendResult], *, verbose: bool = False) -> str:
    """The report for a terminal: score, pass matrix, non-exact cases and explanations."""
    lines = []
    for run in runs:
        lines.append(f"{run.backend} {run.version}: {len(run.results)} cases of suite "
                     f"{run.suite_version} ({run.content_hash[:19]}): {_score(run)}")
    groups = _groups(runs)
    width = max([len(g) for g in groups] + [10])
    names = [f"{run.backend}" for run in runs]
    lines.append("")
    lines.append(f"{'exact per group':<{width}}  " + "  ".join(f"{n:>12}" for n in names))
    for group in groups:
        lines.append(f"{group:<{width}}  "
                     + "  ".join(f"{_cell(run, group):>12}" for run in runs))
    for run in runs:
        lines.append("")
        lines.append(f"{run.backend}:")
        others = [r for r in run.results if r.grade.kind != EXACT]
        shown = others if verbose else others[:25]
        for result in shown:
            label = GRADE_WORDS[result.grade.kind]
            if documented(result, run.backend):
                label = DOCUMENTED
            elif run.backend == "onnxruntime" and result.ort == "refuses":
                label = "refused (no ORT kernel, as documented)"
            lines.append(f"  {result.id}: {label}: {result.grade.detail}"[:220])
            if result.explanation is not None and verbose:
                lines.append(f"      {result.explanation.get('summary', '')}")
        if len(others) > len(shown):
            lines.append(f"  ... and {len(others) - len(shown)} more (--verbose lists all)")
        if not others:
            lines.append("  every case exact")
        for line in explained_lines(run):
            lines.append(f"  explained: {line}")
    return "\n".join(lines)


def to_json(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    return json.dumps({"suite": suite, "backends": [r.to_dict() for r in runs]}, indent=1)


def markdown(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    """A Markdown report: scores, the pass matrix, explanations, refusals, crashes."""
    out = [f"Suite {suite['version']} ({suite['content_hash']}), {len(suite['cases'])} "
           f"cases; ORT tags measured with {suite['ort_tags_measured_with']}.", ""]
    out += ["| backend | version | result |", "| --- | --- | --- |"]
    for run in runs:
        out.append(f"| {run.backend} | {run.version} | {_score(run)} |")
    out += ["", "Exact cases per group (documented ORT differences count as expected):", ""]
    out.append("| group | " + " | ".join(run.backend for run in runs) + " |")
    out.append("| --- | " + " | ".join("---" for _ in runs) + " |")
    for group in _groups(runs):
        out.append(f"| {group} | " + " | ".join(_cell(run, group) for run in runs) + " |")
    for run in runs:
        out += ["", f"### {run.backend} {run.version}", ""]
        explained = explained_lines(run)
        failures = [r for r in run.results if r.grade.kind in ("crashed", "timeout")]
        refusals = _refusal_lines(run)
        if not (explained or failures or refusals) and all(
                r.grade.kind == EXACT or documented(r, run.backend) for r in run.results):
            out.append("Every case exact.")
        if explained:
            out.append("Differences, and the convention that reproduces them:")
            out.append("")
            out += [f"- {line}" for line in explained]
            out.append("")
        if failures:
            out.append("Crashes and time-outs:")
            out.append("")
            out += [f"- `{r.id}`: {GRADE_WORDS[r.grade.kind]}: {r.grade.detail}"
                    for r in failures]
            out.append("")
        if refusals:
            out.append("Most frequent refusals:")
            out.append("")
            out += [f"- {line}" for line in refusals]
    return "\n".join(out) + "\n"


def to_html(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    """The pass matrix and scores as a standalone HTML page."""
    def row(cells: list[str], tag: str = "td") -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"

    parts = ["<!doctype html><meta charset='utf-8'><title>Upsample conformance</title>",
             "<style>table{border-collapse:collapse}td,th{border:1px solid #999;"
             "padding:2px 8px}</style>",
             f"<h1>ONNX Upsample conformance, suite {html.escape(suite['version'])}</h1>",
             "<table>", row(["backend", "version", "result"], "th")]
    parts += [row([r.backend, r.version, _score(r)]) for r in runs]
    parts += ["</table><h2>Exact cases per group</h2><table>",
              row(["group"] + [r.backend for r in runs], "th")]
    parts += [row([g] + [_cell(r, g) for r in runs]) for g in _groups(runs)]
    parts.append("</table>")
    for run in runs:
        lines = explained_lines(run)
        if lines:
            parts.append(f"<h2>{html.escape(run.backend)}: explained differences</h2><ul>")
            parts += [f"<li>{html.escape(line)}</li>" for line in lines]
            parts.append("</ul>")
    return "\n".join(parts) + "\n"
