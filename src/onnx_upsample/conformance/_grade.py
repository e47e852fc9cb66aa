"""Grading one runtime output against the expected ``Upsample`` output (numpy only).

Grades, best first: ``exact`` (bitwise; any NaN equals any NaN, ``-0.0 != +0.0``; values are
compared in native byte order, so a big-endian output is not wrong for its byte order),
``close`` (not exact, but every element within the tolerance the user gave: a pass, and the
only grade that depends on it), ``1-ulp`` (every float element within one unit in the last
place, the two zeros counted as neighbours: a failure unless a tolerance takes it),
``wrong`` (with the largest difference, the share of differing elements and the first
differing index), ``wrong-dtype`` (another element type;
the detail says whether the values are right once converted), ``wrong-shape``, and, from the
runner: ``refused`` (the runtime's own explicit not-implemented or not-supported error; how
each backend's is recognised is in ``_backends``), ``error`` (any other exception raised
while the runtime loaded or ran the model), ``adapter-error`` (the backend adapter broke its
contract, e.g. returned None or a generator instead of a list of arrays), ``crashed`` (its
process died, while running the case or after answering it), ``timeout`` and
``out-of-memory`` (its process went over the worker's memory limit).

Cases that must be refused (invalid models) have two grades of their own:
``refused-as-required`` (the runtime raised its own error, refused or error: a pass) and
``accepted-invalid`` (it returned outputs for an invalid model: a failure).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._spec.dtypes import find_element_type
from .._spec.spelling import spelled

EXACT, CLOSE, ULP1, WRONG = "exact", "close", "1-ulp", "wrong"
WRONG_DTYPE, WRONG_SHAPE = "wrong-dtype", "wrong-shape"
REFUSED, ERROR, ADAPTER_ERROR = "refused", "error", "adapter-error"
CRASHED, TIMEOUT, OUT_OF_MEMORY = "crashed", "timeout", "out-of-memory"
REFUSED_AS_REQUIRED, ACCEPTED_INVALID = "refused-as-required", "accepted-invalid"
#: Every grade, best first.
GRADES = (EXACT, REFUSED_AS_REQUIRED, CLOSE, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE,
          ACCEPTED_INVALID, REFUSED, ERROR, ADAPTER_ERROR, CRASHED, TIMEOUT, OUT_OF_MEMORY)
GRADE_WORDS = {EXACT: "exact", REFUSED_AS_REQUIRED: "refused, as required",
               CLOSE: "within tolerance",
               ULP1: "within 1 ULP", WRONG: "wrong", WRONG_DTYPE: "wrong dtype",
               WRONG_SHAPE: "wrong shape", ACCEPTED_INVALID: "accepted invalid input",
               REFUSED: "refused", ERROR: "error", ADAPTER_ERROR: "adapter error",
               CRASHED: "crashed", TIMEOUT: "timed out",
               OUT_OF_MEMORY: "out of memory"}
#: The grades that pass: the output is the expected one (or within the tolerance given), or an
#: invalid model was refused.
PASSES = (EXACT, REFUSED_AS_REQUIRED, CLOSE)
#: The grades that fail a runtime by default, as a test runner fails a test: every other one.
#: A yardstick that CI runs must not pass a runtime that refused, raised or answered nothing;
#: a runtime that lacks a kernel on purpose says so in a waiver (``_waivers``).
#: ``conformance run`` exits 1 when one occurs, unless ``--fail-on`` names other verdicts.
FAILURES = tuple(grade for grade in GRADES if grade not in PASSES)


@dataclass(frozen=True)
class Tolerance:
    """How far a float output may be from the expected one and still pass, graded
    ``close``: ``ulp`` units in the last place, or ``atol + rtol * |expected|`` (numpy's
    ``isclose`` rule; integer outputs too). An element passes when any given bound holds;
    NaN passes only against NaN, an infinity only against the same infinity."""

    ulp: int | None = None
    atol: float | None = None
    rtol: float | None = None

    def __str__(self) -> str:
        parts = [f"{self.ulp}ulp"] if self.ulp is not None else []
        parts += [f"{name}={value:g}" for name, value in (("atol", self.atol),
                                                          ("rtol", self.rtol))
                  if value is not None]
        return ",".join(parts)

    def holds(self, expected: np.ndarray, actual: np.ndarray) -> bool:
        """Whether every element of ``actual`` is within this tolerance of ``expected``
        (same shape and type)."""
        if expected.dtype.kind in "OUSb":
            return False
        floating = _is_floating(expected)
        within = np.zeros(expected.shape, dtype=bool)
        if self.ulp is not None and floating:
            gaps = ulp_gaps(expected, actual)
            # NaN against a number, an infinity against a finite value: no count of ULPs
            within |= (gaps <= self.ulp) & (gaps != np.iinfo(np.uint64).max)
        if self.atol is not None or self.rtol is not None:
            wide = np.complex128 if expected.dtype.kind == "c" else np.float64
            e, a = expected.astype(wide), actual.astype(wide)
            with np.errstate(invalid="ignore", over="ignore"):
                bound = (self.atol or 0.0) + (self.rtol or 0.0) * np.abs(e)
                near = np.abs(e - a) <= bound
            within |= near & np.isfinite(e)
        return bool((within | equal_elements(expected, actual)).all())


_TOLERANCE_FORMS = ("give N ulp (e.g. 2ulp), atol=X, rtol=Y, or a comma list of them "
                    "(e.g. atol=1e-6,rtol=1e-5)")


def _not_a_tolerance(text: str, word: str) -> Exception:
    return spelled(lambda s: (f"{s.argument('tolerance')} {text!r}: {word!r} is not a "
                              f"tolerance; {_TOLERANCE_FORMS}, each at most once, numbers "
                              ">= 0"))


def parse_tolerance(text: str | None) -> Tolerance | None:
    """``--tolerance`` / ``tolerance=``: ``"2ulp"``, ``"atol=1e-6"``, ``"rtol=1e-5"`` or a
    comma list of them; None for none (then only exact outputs pass)."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"tolerance is {text!r}; expected text such as '2ulp' or "
                        "'atol=1e-6,rtol=1e-5'")
    values: dict[str, float] = {}
    ulp: int | None = None
    for word in (w.strip() for w in text.split(",")):
        name, equals, value = word.partition("=")
        name = name.strip().lower()
        try:
            if not equals and name.endswith("ulp") and name[:-3].strip().isdigit():
                if ulp is not None:
                    raise ValueError
                ulp = int(name[:-3])
                continue
            if equals and name in ("atol", "rtol") and name not in values:
                number = float(value)
                if math.isfinite(number) and number >= 0:
                    values[name] = number
                    continue
        except ValueError:
            pass
        raise _not_a_tolerance(text, word)
    if not ulp and not any(values.values()):
        raise spelled(lambda s: (
            f"{s.argument('tolerance')} {text!r} allows nothing beyond exact outputs; "
            f"leave it out for exact grading, or {_TOLERANCE_FORMS}"))
    return Tolerance(ulp, values.get("atol"), values.get("rtol"))


@dataclass(frozen=True)
class Grade:
    """How one output compares with the expected one; ``detail`` is one line for people."""

    kind: str
    detail: str = ""
    max_ulp: int | None = None
    max_difference: float | None = None
    share: float | None = None
    first_index: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (strict JSON: an infinite or NaN difference is written as text)."""
        data = {key: value for key, value in asdict(self).items() if value is not None}
        if "first_index" in data:
            data["first_index"] = list(data["first_index"])
        if "max_difference" in data and not math.isfinite(data["max_difference"]):
            data["max_difference"] = str(data["max_difference"])
        return data


def _type_name(array: np.ndarray) -> str:
    if array.dtype.kind in "OUS":
        return "string"
    return array.dtype.name


def _as_text(array: np.ndarray) -> np.ndarray:
    flat = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            for v in array.reshape(-1)]
    return np.array(flat, dtype=object).reshape(array.shape)


def _is_floating(array: np.ndarray) -> bool:
    etype = find_element_type(array.dtype)
    return etype is not None and etype.is_float


def _float_parts(array: np.ndarray) -> list[np.ndarray]:
    """Real arrays whose bits are compared: the array, or its real and imaginary parts."""
    # np.array, not np.ascontiguousarray: the latter makes a rank-0 array rank 1
    if array.dtype.kind == "c":
        return [np.array(array.real, order="C"), np.array(array.imag, order="C")]
    return [array if array.flags.c_contiguous else np.array(array, order="C")]


def _bits(part: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Unsigned bit patterns of a float array (any width, bfloat16 included), its sign bit
    and the pattern of +inf."""
    unsigned = np.dtype(f"u{part.dtype.itemsize}")
    infinity = int(np.array(np.inf, dtype=np.float64).astype(part.dtype).view(unsigned))
    return part.view(unsigned), 1 << (8 * part.dtype.itemsize - 1), infinity


def equal_elements(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise equality: bitwise for floats, except that any NaN equals any NaN
    (-0.0 != +0.0); plain equality for integers, bools and strings."""
    if expected.dtype.kind in "OUS":
        return np.asarray(_as_text(expected) == _as_text(actual), dtype=bool)
    if not _is_floating(expected):
        with np.errstate(all="ignore"):
            return np.asarray(expected == actual, dtype=bool)
    result = np.ones(expected.shape, dtype=bool)
    for part_e, part_a in zip(_float_parts(expected), _float_parts(actual), strict=True):
        bits_e, sign, infinity = _bits(part_e)
        bits_a, _, _ = _bits(part_a)
        magnitude = bits_e.dtype.type(sign - 1)
        both_nan = ((bits_e & magnitude) > infinity) & ((bits_a & magnitude) > infinity)
        result &= (bits_e == bits_a) | both_nan
    return result


def ulp_gaps(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise distance in units in the last place, through the ordered integer view of
    the bits (exact at every width). Both NaN: 0; -0.0 and +0.0: 1; NaN against a number,
    or an infinity against a finite value: 2**64 - 1 (no rounding makes them equal)."""
    unbounded = np.iinfo(np.uint64).max
    worst = np.zeros(expected.shape, dtype=np.uint64)
    for part_e, part_a in zip(_float_parts(expected), _float_parts(actual), strict=True):
        bits_e, sign, infinity = _bits(part_e)
        bits_a, _, _ = _bits(part_a)
        magnitude = bits_e.dtype.type(sign - 1)
        mag_e = (bits_e & magnitude).astype(np.uint64)
        mag_a = (bits_a & magnitude).astype(np.uint64)
        same_sign = (bits_e & bits_e.dtype.type(sign)) == (bits_a & bits_a.dtype.type(sign))
        gap = np.where(same_sign, np.maximum(mag_e, mag_a) - np.minimum(mag_e, mag_a),
                       mag_e + mag_a)
        # an array even at rank 0, where numpy's functions give a scalar
        gap = np.asarray(np.maximum(gap, (bits_e != bits_a).astype(np.uint64)))
        nan_e, nan_a = mag_e > infinity, mag_a > infinity
        inf_e, inf_a = mag_e == infinity, mag_a == infinity
        gap[(nan_e ^ nan_a) | ((inf_e ^ inf_a) & ~nan_e & ~nan_a)] = unbounded
        gap[nan_e & nan_a] = 0
        worst = np.maximum(worst, gap)
    return np.asarray(worst)


def max_ulp(expected: np.ndarray, actual: np.ndarray) -> int:
    """The largest of :func:`ulp_gaps` (0 for empty arrays)."""
    gaps = ulp_gaps(expected, actual)
    return int(gaps.max()) if gaps.size else 0


def same_bits(expected: np.ndarray, actual: np.ndarray) -> bool:
    """Whether two arrays of one shape and type are equal bit for bit (NaN equals NaN)."""
    return expected.shape == actual.shape and bool(equal_elements(expected, actual).all())


def _show(value: Any) -> str:
    return repr(value.item() if hasattr(value, "item") else value)


def native(array: np.ndarray) -> np.ndarray:
    """``array`` in the machine's byte order: the bits are compared as numbers, and a
    big-endian output holds the same numbers."""
    if array.dtype.byteorder in "=|" or array.dtype.kind in "OUSV":
        return array
    return array.astype(array.dtype.newbyteorder("="))


def as_expected_type(expected: np.ndarray, actual: np.ndarray) -> np.ndarray | None:
    """``actual`` converted to the element type of ``expected``; None when it cannot be."""
    try:
        # NaN to an integer, complex to real: the values then differ, which is the finding
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return actual.astype(expected.dtype)
    except (TypeError, ValueError):
        return None


def _converted(expected: np.ndarray, actual: np.ndarray) -> str:
    """Whether ``actual``, of another element type, holds the expected values."""
    back = as_expected_type(expected, actual)
    if back is None:
        return "its values cannot be converted to compare them"
    grade = compare(expected, back)
    if grade.kind == EXACT:
        return f"converted to {_type_name(expected)}, its values are the expected ones"
    return f"converted to {_type_name(expected)}: {GRADE_WORDS[grade.kind]}, {grade.detail}"


def compare(expected: np.ndarray, actual: Any, tolerance: Tolerance | None = None) -> Grade:
    """Grade a runtime's output ``actual`` against ``expected``; outputs of the right shape
    and type that are not exact are ``close`` where ``tolerance`` holds."""
    expected = native(np.asarray(expected))
    actual = native(np.asarray(actual))
    if actual.shape != expected.shape:
        return Grade(WRONG_SHAPE, f"shape {list(actual.shape)}, expected "
                                  f"{list(expected.shape)}")
    if _type_name(actual) != _type_name(expected):
        return Grade(WRONG_DTYPE, f"element type {_type_name(actual)}, expected "
                                  f"{_type_name(expected)}; {_converted(expected, actual)}")
    wrong = ~equal_elements(expected, actual)
    if not wrong.any():
        return Grade(EXACT)
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(wrong)), wrong.shape))
    share = float(wrong.mean())
    if tolerance is not None and tolerance.holds(expected, actual):
        gap = max_ulp(expected, actual) if _is_floating(expected) else None
        return Grade(CLOSE, f"{share:.1%} of elements differ, within the tolerance "
                            f"{tolerance}" + (f" (at most {gap} ULP)" if gap else ""),
                     max_ulp=gap, share=share, first_index=first)
    ulp: int | None = None
    max_difference: float | None = None
    if _is_floating(expected):
        largest = max_ulp(expected, actual)
        if largest <= 1:
            return Grade(ULP1, f"{share:.1%} of elements 1 ULP apart (first at {list(first)})",
                         max_ulp=1, share=share, first_index=first)
        ulp = largest if largest < np.iinfo(np.uint64).max else None
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        with np.errstate(invalid="ignore", over="ignore"):
            difference = np.abs(expected[wrong].astype(wide) - actual[wrong].astype(wide))
        # NaN against a number (or inf - inf where one side is NaN) stays NaN
        max_difference = float(np.max(difference))
    elif expected.dtype.kind in "iub":
        max_difference = float(np.max(np.abs(expected.astype(np.float64)[wrong]
                                              - actual.astype(np.float64)[wrong])))
    got, want = _show(actual[first]), _show(expected[first])
    words = f"{share:.1%} of elements differ; first at {list(first)}: {got}, expected {want}"
    if max_difference is not None:
        words += f"; largest difference {max_difference:.4g}"
    return Grade(WRONG, words, max_ulp=ulp, max_difference=max_difference, share=share,
                 first_index=first)
