""":func:`explain`: check the arguments, then search the conventions, then say what matched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._api import upsample
from ..._errors import UpsampleError
from ..._spec.call import Call, check_described
from ..._spec.dtypes import ElementType
from ._conventions import ORDER_WORDS, SIZE_WORDS, Recipe, recipes
from ._resample import Array
from ._search import (
    MIN_DEPARTURES,
    Search,
    closest,
    departures,
    exact_matches,
    foreign_fraction,
    narrowed_to_float32,
    reference,
    same,
    searches,
    shape_summary,
)

__all__ = ["DEFAULT_MAX_ELEMENTS", "Explanation", "explain"]

DEFAULT_MAX_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Explanation:
    """What reproduces a runtime's ``Upsample`` output.

    Attributes
    ----------
    verdict : str
        ``"upsample"`` (equal to ONNX ``Upsample`` bit for bit), ``"convention"`` (another
        convention reproduces it exactly, beyond chance), ``"coincides"`` (conventions
        reproduce it exactly, but it departs from Upsample's rules in too few places to
        tell them from chance: see :func:`explain`), ``"close"`` (linear only: no
        convention exact, the best within 32 ULP) or ``"none"``.
    matches : tuple of str
        Names of the conventions that reproduce the output exactly, simplest first (for
        ``"coincides"`` too: they reproduce it, they are not named for it). One output
        often cannot tell several apart (integer scales, small axes): then ``summary`` says
        so and names them all, or the first few and how many more.
    best : str or None
        The simplest of ``matches``, or the closest for ``"close"``.
    max_ulp : int or None
        For ``"close"``: the largest gap, in units in the last place of the output type,
        between ``best`` and the runtime's output.
    summary : str
        One line for people. It rests on this one output; it says when several
        conventions reproduce it equally.
    """

    verdict: str
    matches: tuple[str, ...]
    best: str | None
    max_ulp: int | None
    summary: str

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain JSON-able values (lists, strings, ints, None)."""
        return {
            "verdict": self.verdict,
            "matches": list(self.matches),
            "best": self.best,
            "max_ulp": self.max_ulp,
            "summary": self.summary,
        }


# ---------------------------------------------------------------------------------------------
# Arguments (those of Upsample itself are checked by onnx_upsample._spec.call)
# ---------------------------------------------------------------------------------------------


def _array(value: object, name: str) -> Array:
    if value is None:
        raise TypeError(f"{name} is None; expected an array (anything numpy.asarray accepts)")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise UpsampleError(f"{name} cannot be read as an array ({error}); expected an "
                            "array of one element type") from None
    if array.dtype.kind not in "USO" and array.dtype.byteorder not in "=|":
        array = array.astype(array.dtype.newbyteorder("="))
    # not np.ascontiguousarray: it turns a rank-0 array into rank 1
    return array if array.flags.c_contiguous else array.copy(order="C")


def _max_elements(value: object) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"max_elements is {value!r}; expected an integer >= 0")
    if value < 0:
        raise UpsampleError(f"max_elements is {value!r}; expected an integer >= 0")
    return int(value)


def _check_output_type(x: Array, theirs: Array) -> None:
    # text compares by value: runtimes return ONNX strings as str, bytes or object arrays
    text = x.dtype.kind in "USO" and theirs.dtype.kind in "USO"
    if theirs.dtype != x.dtype and not text:
        raise UpsampleError(
            f"theirs has element type {theirs.dtype.name!r} but x has {x.dtype.name!r}; "
            "expected the runtime's output in x's element type (Upsample keeps it)"
        )


def _checked(x: object, theirs: object, scales: object, mode: object,
             max_elements: object) -> tuple[Array, Array, Call, int]:
    """Both arrays, Upsample's checked call and the element limit; kinds before values."""
    x_array = _array(x, "x")
    theirs_array = _array(theirs, "theirs")
    limit = _max_elements(max_elements)
    # a legacy mode name is read as linear without a warning
    call, _ = check_described(x_array.shape, x_array.dtype, scales, mode)
    _check_output_type(x_array, theirs_array)
    return x_array, theirs_array, call, limit


# ---------------------------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------------------------

# how many names a summary lists before "and N more"
LISTED = 4


def _listing(names: Sequence[str]) -> str:
    shown = "; ".join(names[:LISTED])
    return shown if len(names) <= LISTED else f"{shown}; and {len(names) - LISTED} more"


def _sizes(rules: Sequence[str]) -> str:
    """The size rules, in words: "round (TVM) and ceil"."""
    words = [SIZE_WORDS[rule] for rule in rules]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _others(count: int) -> str:
    """"does 1 other convention", "do 3 other conventions"."""
    return "does 1 other convention" if count == 1 else f"do {count} other conventions"


def _same_shape(rules: Sequence[str]) -> str:
    """When several size rules give the output's shape, a clause that says which (each
    convention that reproduces the output is named with each of them)."""
    return f"output size by {_sizes(rules)} give this shape alike" if len(rules) > 1 else ""


def _empty(search: Search, etype: ElementType) -> Explanation:
    """An empty output: nothing to compare, so every convention with the search's size rules
    and scale order gives it."""
    float32_sums = etype.accumulator == np.dtype(np.float32)
    found = sorted((recipe for rule in search.rules
                    for recipe in recipes(search.case.mode, rule, etype.is_integer,
                                          float32_sums=float32_sums, order=search.order)),
                   key=lambda recipe: recipe.rank)
    names = tuple(recipe.name for recipe in found)
    if search.order == "given" and search.rules[0] == "trunc":
        return Explanation("upsample", names, names[0], None,
                           "matches Upsample (onnxruntime 1.32) bit for bit (empty "
                           "output: every convention with its output size does)")
    what = f"output size by {_sizes(search.rules)}"
    if search.order != "given":
        what += f" and the {ORDER_WORDS[search.order]}"
    return Explanation("convention", names, names[0], None,
                       f"matches every convention with {what}, not Upsample (empty output: "
                       "only the size tells them apart)")


def _coincides(names: Sequence[str], reference_recipe: Recipe, count: int, by_index: bool,
               shape_note: str) -> Explanation:
    """Conventions that reproduce an output whose departures from Upsample's rules are too
    few to tell them from chance (:data:`MIN_DEPARTURES`)."""
    if by_index:
        unit = f"output {'index' if count == 1 else 'indices'} read from another input index"
    else:
        unit = "element" if count == 1 else "elements"
    summary = (f"coincides with {names[0]} where it departs from {reference_recipe.name} "
               f"({count} {unit}): too few departures to tell it from chance, so no "
               f"convention is named (that takes {MIN_DEPARTURES})")
    if len(names) > 1:
        summary += f"; so {_others(len(names) - 1)}: {_listing(names[1:])}"
    summary += f"; {shape_note}" if shape_note else ""
    return Explanation("coincides", tuple(names), names[0], None, summary)


def explain(
    x: npt.ArrayLike,
    theirs: npt.ArrayLike,
    scales: Sequence[float] | npt.NDArray[np.number[Any]],
    mode: str = "nearest",
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> Explanation:
    """Name the convention that reproduces a runtime's ONNX ``Upsample`` output.

    ``theirs`` is compared with ONNX ``Upsample`` (versions 7, 9, 10) as onnxruntime 1.32
    computes it (:func:`onnx_upsample.upsample`), then with the conventions of
    :func:`conventions`: ONNX ``Resize`` coordinate transformations and nearest modes,
    PyTorch's reciprocal multiply, float64 arithmetic, separable blends, the fused
    multiply-add sum of onnxruntime's aarch64 build, other output-size and integer-rounding
    rules (x86's conversion of an int32 overflow, as onnxruntime's x86-64 build), scales
    swapped or reversed. Only the size rules and scale orders that give ``theirs.shape`` are
    tried, and a convention that reproduces ``theirs`` is named with each of them.

    Equality is bitwise, except that any NaN equals any NaN (-0.0 and +0.0 differ); complex
    numbers compare real and imaginary parts; strings, bools and objects compare with ``==``.

    Parameters
    ----------
    x : array_like
        The input given to the runtime.
    theirs : array_like
        The runtime's output, in x's element type.
    scales : sequence of float or array
        One scale per axis of x, each finite and >= 1 (converted to float32, as ONNX stores
        them).
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are read as ``"linear"``.
    max_elements : int, optional
        Outputs with more elements are not explained (verdict ``"none"``).

    A convention is named only beyond chance. Where ``theirs`` departs from Upsample's own
    rules (Upsample's output; where its shape is another size rule's or another scale
    order's, Upsample's rules with those), a runtime's off-by-one or last-bit change at a
    departure goes one of two ways, so it agrees with a convention there by chance half the
    time at most, and at ten departures with probability 2**-10 < 1/1000 at most. A
    convention that reproduces ``theirs`` is named (``"convention"``) when ``theirs``
    departs in at least ten independent places, else it only ``"coincides"`` with it.
    Departures are counted as elements in linear mode (each element's rounding is its
    own) and as output indices of an axis in nearest mode (every element along one copies
    the same choice of input index: a row read off by one is one departure however long).
    A shape that only another size rule or scale order gives is itself certain: an output
    that equals Upsample's rules at that shape is named for them.

    Returns
    -------
    Explanation
        ``verdict`` is ``"upsample"`` when ``theirs`` equals Upsample, ``"convention"`` when
        another convention reproduces it exactly beyond chance, ``"coincides"`` when
        conventions reproduce it exactly but it departs from Upsample's rules in fewer than
        ten places, ``"close"`` when none does but one is within 32 ULP (linear mode,
        floating types: another order of the same float sum), else ``"none"``. Nearest
        mode copies elements and does no arithmetic: a nearest output that no convention
        reproduces is never ``"close"``; the summary says whether its values are elements of
        ``x`` at all. When several conventions reproduce ``theirs``, the summary lists
        them.

    Raises
    ------
    TypeError
        For arguments of the wrong kind: None for an array, scales that are not a sequence
        of numbers (bools and text included), a ``max_elements`` that is not an integer.
    UpsampleError
        For wrong values: arrays numpy cannot read, an element type Upsample does not
        define, ``theirs`` of another element type, a mode other than nearest/linear (or
        linear for bool, str, bytes, object), scales that are not one finite number >= 1
        per axis, a negative ``max_elements``. The messages about ``x``'s element type,
        the mode and the scales are :func:`onnx_upsample.upsample`'s own.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(20, dtype=np.float32).reshape(4, 5)
    >>> theirs = x[[0, 0, 1, 2, 2, 3]][:, [0, 0, 1, 2, 2, 3, 3, 4]]
    >>> print(explain(x, theirs, [1.5, 1.7]).summary)  # doctest: +ELLIPSIS
    coincides with Resize half_pixel + round_prefer_floor where it departs from Upsample (2
    output indices read from another input index): too few departures to tell it from ...
    """
    x_array, theirs_array, call, limit = _checked(x, theirs, scales, mode, max_elements)
    if theirs_array.size > limit:
        return Explanation("none", (), None, None,
                           f"output has {theirs_array.size} elements, more than max_elements="
                           f"{limit}: too large to explain; pass a crop or a larger "
                           "max_elements")
    searched = searches(x_array, theirs_array, call.scales, call.mode, call.etype)
    if not searched:
        return Explanation("none", (), None, None, shape_summary(
            x_array.shape, call.scales, theirs_array.shape))
    first = searched[0]
    rules = first.rules
    own_size = first.order == "given" and rules[0] == "trunc"
    shape_note = _same_shape(rules)
    if theirs_array.size == 0:
        return _empty(first, call.etype)
    floating = call.etype.is_float
    ours: Array | None = None
    if own_size:  # Upsample's own size: its own output first
        ours = upsample(x_array, [float(s) for s in call.scales], call.mode)
    for search in searched:
        exact_matches(search, ours if search is first else None)
    found = sorted((item for search in searched for item in search.found),
                   key=lambda item: item[0].rank)
    names = tuple(recipe.name for recipe, _ in found)
    if ours is not None and same(ours, theirs_array, floating).all():
        summary = "matches Upsample (onnxruntime 1.32) bit for bit"
        if len(names) > 1:
            summary += (f"; so {_others(len(names) - 1)} on this output, "
                        f"which cannot tell them apart: {_listing(names[1:])}")
        summary += f"; {shape_note}" if shape_note else ""
        return Explanation("upsample", names, names[0], None, summary)
    if found:
        ref_recipe, ref_output, ref_tables = reference(first, ours)
        differs = ~same(theirs_array, ref_output, floating)
        count = departures(call.mode, differs, found[0][1].tables, ref_tables)
        if differs.any() and count < MIN_DEPARTURES:
            return _coincides(names, ref_recipe, count, call.mode == "nearest", shape_note)
        if len(names) == 1:
            return Explanation("convention", names, names[0], None,
                               f"matches {names[0]}, not Upsample (the only convention tried "
                               "that reproduces this output)")
        return Explanation("convention", names, names[0], None,
                           f"matches {len(names)} conventions equally, not Upsample: "
                           f"{_listing(names)} (this output cannot tell them apart"
                           + (f"; {shape_note})" if shape_note else ")"))
    narrowed = narrowed_to_float32(first.case, rules[0]) if own_size else None
    if narrowed is not None:
        assert ours is not None
        count = departures(call.mode, ~same(theirs_array, ours, floating), None, ())
        if count < MIN_DEPARTURES:
            return _coincides((narrowed,), Recipe(call.mode), count, False, shape_note)
        return Explanation("convention", (narrowed,), narrowed, None,
                           f"matches {narrowed}, not Upsample")
    if floating and call.mode == "nearest":
        foreign = foreign_fraction(x_array, theirs_array)
        if foreign:
            return Explanation("none", (), None, None,
                               f"{foreign:.1%} of the output's values are not elements of the "
                               "input: nearest copies elements and does no arithmetic, so "
                               "this is noise or a bug, matching no convention")
        return Explanation("none", (), None, None,
                           "matches no convention tried: every value is an element of the "
                           "input, so another rule picks the source elements (or a bug)")
    if floating:
        close = closest(first.case, first.groups, ours)
        if close is not None:
            name, gap, by_terms = close
            unit = (" of the input's largest magnitude (the blend cancels near 0, where the "
                    "output's own ULP is tiny)") if by_terms else ""
            return Explanation("close", (), name, gap,
                               f"closest to {name}, within {gap} ULP{unit}; no convention "
                               "tried reproduces it exactly"
                               + (f" ({shape_note})" if shape_note else ""))
    return Explanation("none", (), None, None, "matches no convention tried (noise or a bug)")
