"""Reports of graded runs: terminal table, JSON, Markdown and HTML (stdlib only).

A pass matrix has case groups as rows and backends as columns. For onnxruntime, the cases
whose ORT difference is documented (docs/semantics.md §2) are reported as such, not as failures.
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
    family = ", ".join(kept)
    return "Upsample's coordinates" if family in ("Upsample", "Upsample coordinates") \
        else family


def explained_lines(run: BackendResult) -> list[str]:
    """Per (mode, scale kind): the conventions that reproduce a runtime's non-exact
    outputs, e.g. "nearest, non-integer scales: Resize half_pixel + round_prefer_floor in
    38/40 cases, bit for bit".

    Exact reproductions are counted by the convention that reproduces the most cases
    (several coincide on a given case); outputs only within a few ULP count for their
    convention's family, its name without the arithmetic details.
    """
    ran: Counter[str] = Counter()
    exact: dict[str, list[tuple[str, ...]]] = {}
    close: dict[str, dict[str, list[int]]] = {}
    other: dict[str, Counter[str]] = {}
    for result in run.results:
        key = f"{result.mode}, {scale_kind(result)}"
        if result.grade.kind in (EXACT, ULP1, WRONG, WRONG_SHAPE):
            ran[key] += 1
        if result.explanation is None or documented(result, run.backend):
            continue
        verdict = result.explanation.get("verdict")
        best = str(result.explanation.get("best") or "")
        if verdict == "convention":
            exact.setdefault(key, []).append(tuple(result.explanation.get("matches") or
                                                   (best,)))
        elif verdict == "close" and best:
            gap = int(result.explanation.get("max_ulp") or 0)
            close.setdefault(key, {}).setdefault(_family(best), []).append(gap)
        else:
            summary = str(result.explanation.get("summary", ""))
            words = (": " + summary.split(": ", 1)[1] if "does not resize them" in summary
                     else " match no convention tried (noise or a bug)")
            other.setdefault(key, Counter())[words] += 1
    lines = []
    for key in sorted(ran):
        for name, count in _cover(exact.get(key, [])):
            lines.append(f"{key}: {name} in {count}/{ran[key]} cases, bit for bit")
        for family, gaps in sorted(close.get(key, {}).items(), key=lambda i: -len(i[1])):
            lines.append(f"{key}: within {max(gaps)} ULP of {family} in "
                         f"{len(gaps)}/{ran[key]} cases (the same elements and weights, "
                         "other float arithmetic)")
        for words, count in other.get(key, Counter()).items():
            lines.append(f"{key}: {count}/{ran[key]} cases{words}")
    return lines


def _cover(cases: list[tuple[str, ...]]) -> list[tuple[str, int]]:
    """Greedy: the convention that reproduces the most cases, then the most of the rest;
    ties go to the convention listed earliest (simplest) by the explainer."""
    left = list(cases)
    chosen = []
    while left:
        counts: Counter[str] = Counter(name for matches in left for name in set(matches))
        rank = {name: min(m.index(name) for m in left if name in m) for name in counts}
        name = max(counts, key=lambda n: (counts[n], -rank[n]))
        covered = [m for m in left if name in m]
        chosen.append((name, len(covered)))
        left = [m for m in left if name not in m]
    return chosen


def _refusal_lines(run: BackendResult, limit: int = 6) -> list[str]:
    """The most frequent refusals: grouped by how their message begins (the rest often
    names the node or shape), each shown with the whole message of its first case."""
    groups: dict[str, list[CaseResult]] = {}
    for result in run.results:
        if result.grade.kind == REFUSED:
            groups.setdefault(result.grade.detail[:100], []).append(result)
    ranked = sorted(groups.values(), key=len, reverse=True)[:limit]
    return [f"{len(members)} x (e.g. `{members[0].id}`) {members[0].grade.detail}"
            for members in ranked]


def _failure_lines(run: BackendResult) -> list[str]:
    return [f"`{r.id}`: {GRADE_WORDS[r.grade.kind]}: {r.grade.detail}"
            for r in run.results if r.grade.kind in ("crashed", "timeout")]


def _score(run: BackendResult) -> str:
    """E.g. "83 exact, 3 documented ORT differences, 47 refused"."""
    counts = Counter(DOCUMENTED if documented(r, run.backend) else r.grade.kind
                     for r in run.results)
    words = {**GRADE_WORDS, DOCUMENTED: DOCUMENTED}
    parts = [f"{counts[kind]} {words[kind]}"
             + ("s" if kind == DOCUMENTED and counts[kind] > 1 else "")
             for kind in (EXACT, DOCUMENTED, *GRADES[1:]) if counts[kind]]
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
        lines += [f"  {line}" for line in _backend_details(run, verbose)]
    return "\n".join(lines)


def _label(result: CaseResult, backend: str) -> str:
    if documented(result, backend):
        return DOCUMENTED
    if backend == "onnxruntime" and result.ort == "refuses" and result.grade.kind == REFUSED:
        return "refused (no ORT kernel, as documented)"
    return GRADE_WORDS[result.grade.kind]


def _backend_details(run: BackendResult, verbose: bool, limit: int = 10) -> list[str]:
    """Outputs that differ first, then refusals grouped by message, then the explained
    differences; --verbose lists every case that is not exact, with its explanation."""
    lines: list[str] = []
    differing = [r for r in run.results if r.grade.kind not in (EXACT, REFUSED)]
    shown = differing if verbose else differing[:limit]
    for result in shown:
        lines.append(f"{result.id}: {_label(result, run.backend)}: {result.grade.detail}"[:220])
        if result.explanation is not None and verbose:
            lines.append(f"    {result.explanation.get('summary', '')}"[:220])
    if len(differing) > len(shown):
        lines.append(f"... and {len(differing) - len(shown)} more (--verbose lists all)")
    refused = [r for r in run.results if r.grade.kind == REFUSED]
    if verbose:
        lines += [f"{r.id}: {_label(r, run.backend)}: {r.grade.detail}"[:220] for r in refused]
    elif refused:
        expected = all(_label(r, run.backend) != GRADE_WORDS[REFUSED] for r in refused)
        lines.append(f"{len(refused)} refused" + (" (no ORT kernel, as documented)"
                                                  if expected else "") + ", most often:")
        lines += [f"  {line}"[:240] for line in _refusal_lines(run, limit=4)]
    if not differing and not refused:
        lines.append("every case exact")
    lines += [f"explained: {line}" for line in explained_lines(run)]
    return lines


def to_json(runs: list[BackendResult], suite: dict[str, Any]) -> str:
    return json.dumps({"suite": suite, "backends": [r.to_dict() for r in runs]}, indent=1,
                      allow_nan=False)


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
        failures = _failure_lines(run)
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
            out += [f"- {line}" for line in failures]
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
        sections = (("explained differences", explained_lines(run)),
                    ("crashes and time-outs", _failure_lines(run)),
                    ("most frequent refusals", _refusal_lines(run)))
        for title, lines in sections:
            if lines:
                parts.append(f"<h2>{html.escape(run.backend)}: {title}</h2><ul>")
                parts += [f"<li>{html.escape(line)}</li>" for line in lines]
                parts.append("</ul>")
    return "\n".join(parts) + "\n"
