"""Integers known for every input size: linear bounds over a model's input dimensions, and
which side of 1 a float computed from them lies on.

Exporters compute Resize and Upsample scales from shapes. PyTorch's ``size=`` export, for one,
divides ``Cast(out_size)`` by ``Cast(Shape(X)[2:])``, where ``out_size`` is arithmetic on the
input's dimensions (``x.shape[2] * 3 // 2``: ``Shape -> Gather -> Mul -> Div``) and X comes
from the input through a few layers (a padded Conv keeps its size). Whether such a scale is
>= 1 at every input size decides how onnxruntime's Resize-10 rounds nearest indices; this
module is the algebra that proves it (``_shape_bounds`` walks a graph with it, ``_dims`` holds
the operators' size rules):

* every dimension of a graph input that is not a constant is a *symbol*, an integer >= 1 (an
  empty input has no pixel to round); each axis of each input is its own symbol, since a
  runtime does not check that dimensions sharing a name are equal;
* every integer computed from shapes (a dimension, an element of ``Shape``'s output,
  arithmetic on those) gets a :class:`Bound`: a lower and an upper bound, each a linear form
  (:class:`Lin`) in the symbols with rational coefficients, true for every value of the
  symbols (``floor(a / c)`` lies between ``(a - c + 1) / c`` and ``a / c``);
* a float computed as ``float(a) / float(b)`` of two such integers (:class:`Ratio`) is >= 1
  where ``b >= 1`` and ``a >= b`` for every value of the symbols (conversion to float and
  division round monotonically, and 1 is a float), and <= 1 where ``a <= b``;
* a linear form is >= 0 for every value of symbols >= 1 when no coefficient is negative and
  its value with every symbol at 1 is >= 0.

The proof is sufficient, not complete: what is not recognised (an operator without a rule, a
product of two symbols) is unknown, never guessed. Dimensions are taken to be below 2**24,
where float32 holds every integer and an integer scale's product is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias

import numpy as np
import onnx

__all__ = ["FLOAT_TYPES", "ONE", "UNKNOWN", "Bound", "Elem", "Known", "Lin", "Ratio",
           "Side", "arithmetic", "broadcast_values", "converted", "rounding_of", "side_of",
           "sliced"]

# "up": >= 1 for every input size; "down": <= 1; "one": exactly 1; None: not known.
Side: TypeAlias = Literal["up", "down", "one"] | None

FLOAT_TYPES = frozenset({onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE})

@dataclass(frozen=True)
class Lin:
    """A linear form ``const + sum(coefficient * symbol)`` with rational coefficients."""

    const: Fraction
    terms: tuple[tuple[str, Fraction], ...] = ()

    @staticmethod
    def of(value: int | Fraction) -> Lin:
        return Lin(Fraction(value))

    @staticmethod
    def symbol(name: str) -> Lin:
        return Lin(Fraction(0), ((name, Fraction(1)),))

    def __add__(self, other: Lin) -> Lin:
        merged = dict(self.terms)
        for name, coefficient in other.terms:
            merged[name] = merged.get(name, Fraction(0)) + coefficient
        return Lin(self.const + other.const,
                   tuple(sorted((n, c) for n, c in merged.items() if c)))

    def times(self, factor: Fraction) -> Lin:
        if not factor:
            return Lin(Fraction(0))
        return Lin(self.const * factor, tuple((n, c * factor) for n, c in self.terms))

    def __neg__(self) -> Lin:
        return self.times(Fraction(-1))

    def __sub__(self, other: Lin) -> Lin:
        return self + (-other)

    def constant(self) -> Fraction | None:
        """The value, where the form has no symbol."""
        return None if self.terms else self.const

    def nonnegative(self) -> bool:
        """True if the form is >= 0 for every value of the symbols >= 1 (a sufficient test:
        no negative coefficient, and >= 0 with every symbol at 1)."""
        return all(c >= 0 for _, c in self.terms) and self._at_ones() >= 0

    def positive(self) -> bool:
        """True if the form is > 0 for every value of the symbols >= 1 (as above)."""
        return all(c >= 0 for _, c in self.terms) and self._at_ones() > 0

    def _at_ones(self) -> Fraction:
        return self.const + sum((c for _, c in self.terms), Fraction(0))


@dataclass(frozen=True)
class Bound:
    """An integer known to lie between ``lo`` and ``hi`` (either may be unknown: None) for
    every value of the symbols."""

    lo: Lin | None
    hi: Lin | None

    @staticmethod
    def exact(value: int | Fraction | Lin) -> Bound:
        lin = value if isinstance(value, Lin) else Lin.of(value)
        return Bound(lin, lin)

    def value(self) -> int | None:
        """The integer, where both bounds are the same constant."""
        if self.lo is None or self.lo != self.hi:
            return None
        constant = self.lo.constant()
        return int(constant) if constant is not None and constant.denominator == 1 else None

    def __add__(self, other: Bound) -> Bound:
        return Bound(_add(self.lo, other.lo), _add(self.hi, other.hi))

    def __neg__(self) -> Bound:
        return Bound(None if self.hi is None else -self.hi,
                     None if self.lo is None else -self.lo)

    def __sub__(self, other: Bound) -> Bound:
        return self + (-other)

    def times(self, factor: Fraction) -> Bound:
        """The integer times a constant (an integer, for the result to be one)."""
        lo = None if self.lo is None else self.lo.times(factor)
        hi = None if self.hi is None else self.hi.times(factor)
        return Bound(lo, hi) if factor >= 0 else Bound(hi, lo)

    def floor_div(self, divisor: int) -> Bound:
        """``floor(self / divisor)`` for a positive integer divisor."""
        step = Fraction(1, divisor)
        return Bound(None if self.lo is None else (self.lo - Lin.of(divisor - 1)).times(step),
                     None if self.hi is None else self.hi.times(step))

    def trunc_div(self, divisor: int) -> Bound:
        """``self / divisor`` rounded toward zero (C's integer division, as onnxruntime
        computes window sizes) for a positive integer divisor: ``floor`` where ``self`` is
        never negative, ``ceil`` where never positive, else between the two."""
        if self.at_least(Bound.exact(0)):
            return self.floor_div(divisor)
        if Bound.exact(0).at_least(self):
            return self.ceil_div(divisor)
        return Bound(self.floor_div(divisor).lo, self.ceil_div(divisor).hi)

    def ceil_div(self, divisor: int) -> Bound:
        """``ceil(self / divisor)`` for a positive integer divisor."""
        step = Fraction(1, divisor)
        return Bound(None if self.lo is None else self.lo.times(step),
                     None if self.hi is None else (self.hi + Lin.of(divisor - 1)).times(step))

    def at_least(self, other: Bound) -> bool:
        """True if ``self >= other`` for every value of the symbols: between integers,
        ``self - other > -1`` (a lower bound of 1/2 on an integer makes it >= 1)."""
        return (self.lo is not None and other.hi is not None
                and (self.lo - other.hi + Lin.of(1)).positive())


def _add(a: Lin | None, b: Lin | None) -> Lin | None:
    return None if a is None or b is None else a + b


ONE = Bound.exact(1)


@dataclass(frozen=True)
class Ratio:
    """A float computed as ``float(num) / float(den)`` of two integers."""

    num: Bound
    den: Bound = ONE


# An element of a small tensor: an integer (Bound), a float of integers (Ratio), a constant
# float, or not known (None).
Elem: TypeAlias = "Bound | Ratio | float | None"


@dataclass(frozen=True)
class Known:
    """What is known of one tensor: its dimensions (None: rank unknown; an element None: that
    dimension unknown) and, for a scalar or a short vector, its elements."""

    dims: tuple[Bound | None, ...] | None = None
    values: tuple[Elem, ...] | None = None


UNKNOWN = Known()


def side_of(element: Elem) -> Side:
    """Which side of 1 a scale element lies on for every input size, or None."""
    if element is None:
        return None
    if isinstance(element, float):
        if element == 1:
            return "one"
        return "up" if element > 1 else "down"
    ratio = element if isinstance(element, Ratio) else Ratio(element)
    if not ratio.den.at_least(ONE):
        return None
    up, down = ratio.num.at_least(ratio.den), ratio.den.at_least(ratio.num)
    if up and down:
        return "one"
    return "up" if up else "down" if down else None


def rounding_of(sides: Sequence[Side] | None) -> Literal["floor", "ceil"] | None:
    """How onnxruntime's Resize-10 rounds nearest indices under scales on ``sides``: down
    (``floor``) on an axis whose scale is >= 1, up (``ceil``) below 1; None where it is
    not one way for every axis and every input size (a scale of exactly 1 rounds either
    way: its indices are integers)."""
    if sides is None or any(side is None for side in sides):
        return None
    if all(side in ("up", "one") for side in sides):
        return "floor"
    if all(side in ("down", "one") for side in sides):
        return "ceil"
    return None


def sliced(n: Bound | None, start: int, end: int) -> Bound | None:
    """The size of ``[start:end]`` of an axis of size ``n``."""
    if n is None:
        return None
    size = n.value()
    if size is not None:
        return Bound.exact(len(range(size)[slice(start, end)]))
    big = 2 ** 31
    if end >= big and start >= 0 and n.at_least(Bound.exact(start)):
        return n - Bound.exact(start)
    if end >= big and start < 0 and n.at_least(Bound.exact(-start)):
        return Bound.exact(-start)
    if start >= 0 and end >= start and n.at_least(Bound.exact(end)):
        return Bound.exact(end - start)
    return None


def converted(op: str, value: Elem, to: int) -> Elem:
    """An element through Cast (to ``to``), Identity, Floor or Ceil."""
    if value is None or op == "Identity":
        return value
    integer = isinstance(value, Bound) or (isinstance(value, Ratio) and value.den == ONE)
    if op in ("Floor", "Ceil"):
        if isinstance(value, float):
            return float(np.floor(value) if op == "Floor" else np.ceil(value))
        return value if integer else None
    if to in FLOAT_TYPES:
        if isinstance(value, Bound):
            return Ratio(value)
        return value if isinstance(value, float | Ratio) else None
    if to in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
        if isinstance(value, Ratio):
            return value.num if value.den == ONE else None
        if isinstance(value, float):
            return Bound.exact(int(value)) if np.isfinite(value) else None
        return value
    return None


def broadcast_values(a: tuple[Elem, ...], b: tuple[Elem, ...]
                      ) -> list[tuple[Elem, Elem]] | None:
    if len(a) == len(b):
        return list(zip(a, b, strict=True))
    if len(a) == 1:
        return [(a[0], v) for v in b]
    if len(b) == 1:
        return [(v, b[0]) for v in a]
    return None


def arithmetic(op: str, a: Elem, b: Elem, integer: bool, double: bool) -> Elem:
    """One element of Add, Sub, Mul, Div, Max or Min (``integer``: of integer tensors;
    ``double``: of float64 ones, else float32)."""
    if a is None or b is None:
        return None
    if isinstance(a, float) and isinstance(b, float):
        kind = np.float64 if double else np.float32
        x, y = kind(a), kind(b)
        with np.errstate(all="ignore"):
            result = {"Add": x + y, "Sub": x - y, "Mul": x * y, "Div": x / y,
                      "Max": max(x, y), "Min": min(x, y)}[op]
        return float(result)
    if integer and isinstance(a, Bound) and isinstance(b, Bound):
        return _integer_arithmetic(op, a, b)
    if op == "Div":
        # a float holding an integer is that integer converted (exactly, below 2**24)
        a, b = _as_ratio(a), _as_ratio(b)
        if isinstance(a, Ratio) and isinstance(b, Ratio) and a.den == ONE and b.den == ONE:
            return Ratio(a.num, b.num)
        return None
    if op in ("Max", "Min") and isinstance(a, Ratio | float) and isinstance(b, Ratio | float):
        # Max(s, 1) >= 1 and Min(s, 1) <= 1 whatever s is: what a scale's side needs
        one = 1.0 if b == 1.0 else 1.0 if a == 1.0 else None
        other = a if b == 1.0 else b
        if one is not None:
            side = side_of(other)
            if op == "Max":
                return other if side in ("up", "one") else 1.0 if side == "down" else _AT_LEAST_ONE
            return other if side in ("down", "one") else 1.0 if side == "up" else _AT_MOST_ONE
    return None


def _as_ratio(value: Elem) -> Elem:
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2 ** 24:
        return Ratio(Bound.exact(int(value)))
    return value


# A float known only to be >= 1 (or <= 1): a Ratio whose bounds say just that.
_AT_LEAST_ONE = Ratio(Bound(Lin.of(1), None), ONE)
_AT_MOST_ONE = Ratio(Bound(None, Lin.of(1)), ONE)


def _integer_arithmetic(op: str, a: Bound, b: Bound) -> Elem:
    if op == "Add":
        return a + b
    if op == "Sub":
        return a - b
    if op == "Mul":
        factor = b.value() if b.value() is not None else None
        if factor is not None:
            return a.times(Fraction(factor))
        factor = a.value()
        return b.times(Fraction(factor)) if factor is not None else None
    if op == "Div":
        divisor = b.value()
        if divisor is None or divisor <= 0:
            return None
        exact = a.value()
        if exact is not None:  # integer Div truncates toward zero
            return Bound.exact(int(exact / divisor) if exact < 0 else exact // divisor)
        if a.at_least(Bound.exact(0)):
            return a.floor_div(divisor)
        return None
    if op in ("Max", "Min"):
        if a.at_least(b):
            return a if op == "Max" else b
        if b.at_least(a):
            return b if op == "Max" else a
    return None
