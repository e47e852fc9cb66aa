"""The conventions the explainer tries, as data: each choice that makes one, and its name.

A convention is a combination of choices (:class:`Recipe`): the output-size rule, the ONNX
``Resize`` coordinate transformation, the scale the coordinate uses, the arithmetic that
computes it, the nearest rounding (nearest) or the way two-tap weights are combined and
integer results rounded (linear). The defaults are ONNX ``Upsample``'s, whose own rules come
from :mod:`onnx_upsample._spec`; every other choice is defined here, once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, cached_property

import numpy as np

from ..._spec.modes import mode_of
from ..._spec.rules import output_size

__all__ = ["FMA_WORDS", "ORDER_WORDS", "SCALE_ORDERS", "Convention", "Recipe", "conventions",
           "ordered_scales", "output_length", "recipes", "with_size"]


# ---------------------------------------------------------------------------------------------
# Output-size rules
# ---------------------------------------------------------------------------------------------


def _exact_product(n_in: int, scale: np.float32) -> tuple[int, int]:
    """``n_in * scale`` as the fraction ``(numerator, denominator)``, exactly (what a float64
    product gives for every length below 2**29: a float32 scale has 24 significant bits)."""
    numerator, denominator = float(scale).as_integer_ratio()
    return n_in * numerator, denominator


def _exact_floor(n_in: int, scale: np.float32) -> int:
    """``floor(n_in * scale)`` of the exact product (the ONNX reference evaluator)."""
    numerator, denominator = _exact_product(n_in, scale)
    return numerator // denominator


def _exact_rounded(n_in: int, scale: np.float32) -> int:
    """The exact product rounded half away from zero (it is never negative)."""
    numerator, denominator = _exact_product(n_in, scale)
    return (2 * numerator + denominator) // (2 * denominator)


def _exact_half_even(n_in: int, scale: np.float32) -> int:
    """The exact product rounded half to even."""
    numerator, denominator = _exact_product(n_in, scale)
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2):
        quotient += 1
    return quotient


def _exact_ceil(n_in: int, scale: np.float32) -> int:
    """The exact product rounded up."""
    numerator, denominator = _exact_product(n_in, scale)
    return -(-numerator // denominator)


def _rounded(n_in: int, scale: np.float32) -> int:
    """The float32 product rounded half away from zero (TVM); it is never negative."""
    return math.floor(float(np.float32(n_in) * scale) + 0.5)


def _half_even(n_in: int, scale: np.float32) -> int:
    """The float32 product rounded half to even (numpy's and Python's ``round``)."""
    return round(float(np.float32(n_in) * scale))


def _ceiled(n_in: int, scale: np.float32) -> int:
    """The float32 product rounded up."""
    return math.ceil(float(np.float32(n_in) * scale))


# Order is preference: among conventions with as many departures, the earlier rules win.
# "trunc" is Upsample's own rule (trunc of the float32 product, exact from 2**24 on). Each
# rounding is tried on the float32 product (C++'s ``n * scale`` with a float scale: ORT, TVM)
# and on the exact one (a double scale or numpy's float64 product: PyTorch, the ONNX
# reference); the float32 product rounds 5 x f32(1.6) = 8.0000001 to 8.0, whose ceil is 8
# where the exact ceil is 9. (The float32 product's floor is trunc: products are >= 0.)
SIZE_FUNCTIONS: dict[str, Callable[[int, np.float32], int]] = {
    "trunc": output_size,
    "floor": _exact_floor,
    "round": _rounded,
    "round_half_even": _half_even,
    "ceil": _ceiled,
    "exact_round": _exact_rounded,
    "exact_round_half_even": _exact_half_even,
    "exact_ceil": _exact_ceil,
}
SIZE_RULES = tuple(SIZE_FUNCTIONS)


def output_length(rule: str, n_in: int, scale: np.float32) -> int:
    """One axis' output length under the size rule named ``rule`` (one of SIZE_RULES)."""
    return SIZE_FUNCTIONS[rule](n_in, scale)


# ---------------------------------------------------------------------------------------------
# The other choices (order is preference, as above)
# ---------------------------------------------------------------------------------------------

TRANSFORMS = (
    "asymmetric",
    "half_pixel",
    "align_corners",
    "pytorch_half_pixel",
    "half_pixel_symmetric",
    "tf_half_pixel_for_nn",
)
# tf_half_pixel_for_nn is defined by Resize for nearest only
LINEAR_TRANSFORMS = TRANSFORMS[:-1]
# the four of Resize, and round half to even (numpy's and TVM's `round`, not a Resize mode)
NEAREST_MODES = ("floor", "round_prefer_floor", "round_prefer_ceil", "ceil", "round_half_even")
# "scale": the given float32 scale (for align_corners: the integer output length, as ORT);
# "sizes": out/in, what a runtime uses after turning Upsample into Resize with `sizes`;
# "scaled_length": align_corners with the length in*scale (the ONNX reference evaluator).
SOURCES = ("scale", "sizes", "scaled_length")
ARITHMETICS = ("float32", "float64", "reciprocal")
# "fma": Upsample's corner sum with each product but the second fused into the addition
# that follows it, ``fma(wK, XK, ... fma(w3, X3, fma(w1, X1, w2*X2)))``: what GCC's aarch64
# code for onnxruntime's linear kernels computes (its -O3 contracts ``a*b + c``, and the
# x86-64 build's baseline has no FMA instruction). Tried for sums in float32 only.
COMBINATIONS = ("corner", "fma", "separable", "lerp", "float64")
# "x86": truncated, and a result beyond the type's range becomes its minimum, as x86's
# conversions make it (cvttss2si's "integer indefinite" 0x80000000; a float too large for
# uint64 converts to 0): onnxruntime's x86-64 build turns int32's 2**31 into -2**31 (and
# 2**31 + 256 too, where a wrap modulo 2**32 would give -2**31 + 256).
INTEGER_RULES = ("trunc", "half_even", "half_away", "x86")
# The scales a runtime applies: as given, the last two axes' scales exchanged (height's on
# width, as with OpenCV's (width, height) order), or the whole vector reversed.
SCALE_ORDERS = ("given", "swapped", "reversed")
# (arithmetic, combination) pairs tried in linear mode: float64 throughout computes the
# coordinate in float64 too, and separable blends are paired with the arithmetics that
# separable kernels use (float32 division, PyTorch's reciprocal).
LINEAR_KERNELS = (
    ("float32", "corner"),
    ("float64", "corner"),
    ("reciprocal", "corner"),
    ("float32", "separable"),
    ("reciprocal", "separable"),
    ("float32", "lerp"),
    ("reciprocal", "lerp"),
    ("float64", "float64"),
    ("float32", "fma"),
)

#: Each output-size rule in words: "output size by <words>" (a name leaves Upsample's own
#: rule, trunc, unsaid).
SIZE_WORDS = {
    "trunc": "trunc (Upsample's)",
    "floor": "exact floor (ONNX reference)",
    "round": "round (TVM)",
    "round_half_even": "round half to even (numpy's round)",
    "ceil": "ceil",
    "exact_round": "exact round",
    "exact_round_half_even": "exact round half to even",
    "exact_ceil": "exact ceil",
}
_SOURCE_WORDS = {
    "sizes": "scale out/in (Resize with sizes)",
    "scaled_length": "resized length in*scale (ONNX reference)",
}
_ARITHMETIC_WORDS = {"float64": "float64 arithmetic", "reciprocal": "reciprocal multiply (PyTorch)"}
_COMBINATION_WORDS = {
    "separable": "separable sum",
    "lerp": "separable lerp",
    "float64": "float64 throughout",
}
#: The words of the fused multiply-add sum: the arithmetic of onnxruntime's aarch64 build.
FMA_WORDS = "fused multiply-add (onnxruntime's aarch64 build)"
_INTEGER_WORDS = {
    "half_even": "integers rounded half to even instead of truncated",
    "half_away": "integers rounded half away from zero instead of truncated",
    "x86": "integers beyond the type's range wrapped to its minimum (x86's conversion, "
           "onnxruntime's x86-64 build)",
}
#: Each scale order other than as given, in words.
ORDER_WORDS = {
    "swapped": "scales of the last two axes swapped",
    "reversed": "scales in reverse axis order",
}


def ordered_scales(order: str, scales: tuple[np.float32, ...]) -> tuple[np.float32, ...]:
    """The scales a runtime applies under the scale order ``order`` (one of SCALE_ORDERS)."""
    if order == "swapped" and len(scales) >= 2:
        return (*scales[:-2], scales[-1], scales[-2])
    if order == "reversed":
        return tuple(reversed(scales))
    return scales


@dataclass(frozen=True)
class Convention:
    """One way of computing ``Upsample``, named for people.

    Attributes
    ----------
    name : str
        Human words, e.g. ``"Resize half_pixel + round_prefer_floor"`` (an ONNX ``Resize``
        with that ``coordinate_transformation_mode`` and ``nearest_mode``), or ``"Upsample"``
        (ONNX ``Upsample`` 7/9/10 as onnxruntime 1.32 computes it).
    departures : tuple of str
        Short tags of what differs from ``Upsample`` (``"coordinate:half_pixel"``,
        ``"nearest_mode:round_prefer_floor"``, ``"arithmetic:reciprocal"``, ...); empty for
        ``Upsample`` itself.
    """

    name: str
    departures: tuple[str, ...]


@dataclass(frozen=True)
class Recipe:
    """One convention as the choices that make it (defaults are Upsample's)."""

    mode: str
    transform: str = "asymmetric"
    source: str = "scale"
    arithmetic: str = "float32"
    rounding: str = "floor"
    combination: str = "corner"
    integers: str = "trunc"
    size: str = "trunc"
    order: str = "given"

    @property
    def is_upsample(self) -> bool:
        return not self.departures

    @property
    def upsample_coordinates(self) -> bool:
        """Whether the per-axis indices (and, for linear, weights) are Upsample's own: its
        coordinate ``o / scale`` in float32 with its rounding, whatever the output size, the
        blend or the integer rounding."""
        return (
            self.transform == "asymmetric"
            and self.source == "scale"
            and self.arithmetic == "float32"
            and (self.rounding == "floor" if self.mode == "nearest"
                 else self.combination != "float64")
        )

    @cached_property  # a frozen dataclass: computed once, sorted on often
    def departures(self) -> tuple[str, ...]:
        tags = []
        if self.size != "trunc":
            tags.append(f"size:{self.size}")
        if self.transform != "asymmetric":
            tags.append(f"coordinate:{self.transform}")
        if self.mode == "nearest" and self.rounding != "floor":
            tags.append(f"nearest_mode:{self.rounding}")
        if self.source == "sizes":
            tags.append("scale:out/in")
        elif self.source == "scaled_length":
            tags.append("length:in*scale")
        if self.combination == "float64":
            # one choice: coordinate, weights and sum all in float64
            tags.append("float64-throughout")
        else:
            if self.arithmetic != "float32":
                tags.append(f"arithmetic:{self.arithmetic}")
            if self.combination != "corner":
                tags.append(f"sum:{self.combination}")
        if self.integers != "trunc":
            tags.append(f"integers:{self.integers.replace('_', '-')}")
        if self.order != "given":
            tags.append(f"scales:{self.order}")
        return tuple(tags)

    @cached_property  # a frozen dataclass: computed once, sorted on often
    def rank(self) -> tuple[int, ...]:
        """Sort key: fewer departures first, then the preference order of each choice."""
        return (
            len(self.departures),
            SCALE_ORDERS.index(self.order),  # a swap of scales is a bug: named last
            SIZE_RULES.index(self.size),
            TRANSFORMS.index(self.transform),
            NEAREST_MODES.index(self.rounding),
            SOURCES.index(self.source),
            ARITHMETICS.index(self.arithmetic),
            COMBINATIONS.index(self.combination),
            INTEGER_RULES.index(self.integers),
        )

    @cached_property  # a frozen dataclass: computed once, sorted on often
    def name(self) -> str:
        coordinate_details = []
        if self.source in _SOURCE_WORDS:
            coordinate_details.append(_SOURCE_WORDS[self.source])
        if self.combination != "float64" and self.arithmetic in _ARITHMETIC_WORDS:
            coordinate_details.append(_ARITHMETIC_WORDS[self.arithmetic])
        if self.combination in _COMBINATION_WORDS:
            coordinate_details.append(_COMBINATION_WORDS[self.combination])
        other_details = []
        if self.combination == "fma":
            other_details.append(FMA_WORDS)
        if self.integers in _INTEGER_WORDS:
            other_details.append(_INTEGER_WORDS[self.integers])
        if self.order in ORDER_WORDS:
            other_details.append(ORDER_WORDS[self.order])
        if self.size != "trunc":
            other_details.append(f"output size by {SIZE_WORDS[self.size]}")
        # Upsample's coordinate is defined by a division; a reciprocal multiply is another
        # formula (PyTorch's), so it is named as the Resize it amounts to.
        upsample_like = (
            self.transform == "asymmetric"
            and (self.mode == "linear" or self.rounding == "floor")
            and (self.arithmetic != "reciprocal" or self.combination == "float64")
        )
        if upsample_like:
            only_coordinates = coordinate_details and not other_details
            base = "Upsample coordinates" if only_coordinates else "Upsample"
        elif self.mode == "nearest":
            base = f"Resize {self.transform} + {self.rounding}"
        else:
            base = f"Resize {self.transform} (linear)"
        return ", ".join([base, *coordinate_details, *other_details])

    def convention(self) -> Convention:
        return Convention(self.name, self.departures)


def _sources(transform: str) -> tuple[str, ...]:
    # align_corners does not use the scale; its second variant is the length it divides by
    return ("scale", "scaled_length") if transform == "align_corners" else ("scale", "sizes")


@cache
def recipes(mode: str, size: str, integer_output: bool, *, float32_sums: bool = True,
            order: str = "given") -> tuple[Recipe, ...]:
    """Every convention tried for one canonical mode, one size rule and one scale order,
    simplest first: integer roundings for integer outputs only, the fused multiply-add for
    sums in float32 only (the types whose linear sums Upsample computes in float32; an
    exact float64 fma is not modelled)."""
    found = []
    if mode == "nearest":
        for transform in TRANSFORMS:
            for source in _sources(transform):
                for arithmetic in ARITHMETICS:
                    for rounding in NEAREST_MODES:
                        found.append(Recipe(mode, transform, source, arithmetic, rounding,
                                            size=size, order=order))
    else:
        integer_rules = INTEGER_RULES if integer_output else ("trunc",)
        kernels = [kernel for kernel in LINEAR_KERNELS if float32_sums or kernel[1] != "fma"]
        for transform in LINEAR_TRANSFORMS:
            for source in _sources(transform):
                for arithmetic, combination in kernels:
                    for integers in integer_rules:
                        found.append(Recipe(mode, transform, source, arithmetic,
                                            combination=combination, integers=integers,
                                            size=size, order=order))
    found.sort(key=lambda recipe: recipe.rank)
    return tuple(found)


@cache
def with_size(recipe: Recipe, size: str) -> Recipe:
    """``recipe`` with the size rule ``size`` (made once: explain asks for the same ones on
    every call)."""
    return replace(recipe, size=size)


def conventions(mode: str) -> tuple[Convention, ...]:
    """Every convention :func:`explain` can name for ONNX ``Upsample`` in ``mode``, simplest first.

    The conventions are combinations of: the output size rule (``trunc`` of the float32
    product as Upsample 7/9/10 in onnxruntime 1.32, ``floor`` of the exact product as the
    ONNX reference, ``round`` half away from zero as TVM, ``round_half_even`` as numpy's
    ``round``, ``ceil``, each of these three of the float32 product, and ``exact_round``,
    ``exact_round_half_even``, ``exact_ceil`` of the exact product, as float64 computes
    it); the scales applied (as given, the last two axes' exchanged, or the whole vector
    reversed); the ONNX ``Resize``
    ``coordinate_transformation_mode`` (``asymmetric`` is Upsample's, ``half_pixel``,
    ``align_corners``, ``pytorch_half_pixel``, ``half_pixel_symmetric``, and for nearest
    ``tf_half_pixel_for_nn``); the scale used in the coordinate (the given one or out/in, as
    after a conversion to ``Resize`` with ``sizes``; for ``align_corners`` the output length
    or in*scale); the coordinate arithmetic (float32 division as ORT, a reciprocal multiply
    as PyTorch, float64); for nearest, the rounding of the coordinate (Resize's
    ``nearest_mode`` floor, round_prefer_floor, round_prefer_ceil, ceil, and round half to
    even as TVM); for linear, how the two-tap weights are combined (Upsample's float32
    corner sum, separable ``a*w1 + b*w2`` innermost axis first, separable lerp
    ``a + (b-a)*t``, float64 throughout rounded once, and the corner sum with fused
    multiply-adds as onnxruntime's aarch64 build computes it) and how integer results are
    rounded (truncated as Upsample, half to even, half away from zero, or truncated with
    a result beyond the type's range wrapped to its minimum as onnxruntime's x86-64 build
    converts it).

    One call of :func:`explain` tries only the size rules and scale orders that give the
    output's shape (the size rules of one scale order give the same elements, so they are
    tried at once, and a convention that reproduces the output is named with each of
    them), integer rounding only for integer types, and the fused multiply-add only for
    sums in float32: at most 180 nearest and 360 linear conventions per size rule and
    scale order.

    Parameters
    ----------
    mode : {"nearest", "linear"}
        ``"bilinear"`` and ``"trilinear"`` are read as ``"linear"``.

    Returns
    -------
    tuple of Convention
        ``Upsample`` first.

    Raises
    ------
    UpsampleError
        For any other mode.
    """
    canonical, _ = mode_of(mode)  # a legacy name is read as linear without a warning
    found = [recipe for size in SIZE_RULES for order in SCALE_ORDERS
             for recipe in recipes(canonical, size, True, order=order)]
    found.sort(key=lambda recipe: recipe.rank)
    return tuple(recipe.convention() for recipe in found)
