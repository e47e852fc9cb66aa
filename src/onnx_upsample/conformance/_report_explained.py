"""Which conventions explain a graded run's differences, summed up per mode and kind of
scales from the explainer's verdict on each case (stdlib only): what every report prints
under "explained"."""

from __future__ import annotations

from collections import Counter

from ._explain._conventions import FMA_WORDS
from ._grade import EXACT, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE
from ._runner import BackendResult, CaseResult
from ._waivers import WAIVED

__all__ = ["explained_lines", "scale_kind"]


def scale_kind(result: CaseResult) -> str:
    return "integer scales" if "integer-scales" in result.tags else "non-integer scales"


# Name parts that change only the arithmetic (the order or precision of the sum), not which
# elements are read: outputs within a few ULP of a family are that family.
_ARITHMETIC = ("float64 throughout", "separable sum", "separable lerp", "float64 arithmetic",
               FMA_WORDS)


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
        if result.grade.kind in (EXACT, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE):
            ran[key] += 1
        if result.explanation is None or result.verdict == WAIVED:
            continue
        verdict = result.explanation.get("verdict")
        best = str(result.explanation.get("best") or "")
        if verdict == "convention":
            exact.setdefault(key, []).append(tuple(result.explanation.get("matches") or
                                                   (best,)))
        elif verdict == "close" and best:
            gap = int(result.explanation.get("max_ulp") or 0)
            close.setdefault(key, {}).setdefault(_family(best), []).append(gap)
        elif verdict == "coincides" and best:
            # too few departures from Upsample to name a convention for them
            other.setdefault(key, Counter())[
                f" coincide with {best} (too few departures from Upsample to name it)"] += 1
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
