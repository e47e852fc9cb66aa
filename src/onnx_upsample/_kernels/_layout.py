"""Canonical form of one kernel call (numpy only): axes merged, element views, work split.

Turns the axes of a call (or of one output window) into the flat description the compiled
kernels take: outer axes, one row axis, a contiguous block per row-axis position, and a split
of the work into items for the threads. An axis is described by its rule (whole-axis input
length, the window's first output and input index, the scale), not by tables: the kernels
compute each index they need (``_native/axis_rule.h``), so nothing here grows with the
output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._spec.rules import MAX_DIM, linear_taps

# A trailing run of unchanged axes at least this long is streamed as the row itself;
# shorter runs (RGB channels, complex parts) ride along each position of the row axis.
MIN_STREAMED_BLOCK = 32
# A blended last axis with no unchanged axis behind it is a row of its own from this many
# outputs on (a YOLO head's 13 -> 26): its rows' bookkeeping then costs less than gathering
# four taps per output as a blended block (measured: 20-30% faster at 26 outputs, slower
# at 16).
MIN_BLENDED_ROW = 24
# A helper thread pays only for a share of work well beyond the time it takes to wake it:
# an idle core is woken in 40-200 us on a virtual machine (and the wake-up costs the caller
# 15-20 us of system call), while 4 MiB of nearest output is written in 100-300 us. Each
# thread's share is at least this much work, counted in bytes written (times the corners
# each element blends, for linear); smaller calls run on fewer threads, down to the caller
# alone.
MIN_SHARE_WORK = 1 << 22
# Per-item scratch of the linear kernel (cached expanded rows + accumulator), in bytes.
LINEAR_SCRATCH_BYTES = 1 << 21
# Items per thread: enough to balance load, few enough to keep row reuse inside items.
ITEMS_PER_THREAD = 4
# Output elements of one work item at most (signals are checked between items).
MAX_ITEM_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class Rule:
    """Where a window sits on a resized axis: the whole axis' input length, the whole-axis
    index of the window's first output and first input, and the float32 scale."""

    n_in: int
    out_first: int
    in_first: int
    scale: np.float32


@dataclass
class Axis:
    """One axis of the canonical form.

    ``kind`` is ``"copy"`` (output index o reads input o), ``"gather"`` (nearest) or
    ``"blend"`` (linear taps); the last two carry their ``rule``. Lengths are those of the
    input and output windows.
    """

    n_in: int
    n_out: int
    kind: str
    rule: Rule | None = None


@dataclass
class Layout:
    """The flat description of a call: outer axes, row axis, block, and the work split.

    Each row-axis position holds ``block`` output elements (``block_in`` in the input). The
    block is a short run of trailing copy axes, possibly behind one short interpolated axis
    (``block_blend``: the channels of an (H, W, C) image, which ORT's rank-3 kernel
    interpolates), whose taps then address ``block_in / block_blend.n_in`` parts each.
    """

    outer: list[Axis]
    row: Axis
    block: int
    rows: int
    strides: list[int] = field(default_factory=list)
    n_blocks: int = 1
    n_segments: int = 1
    segment: int = 1
    block_in: int = 1
    block_blend: Axis | None = None
    threads: int = 1
    worth: int = 1  # the threads the work is worth, whatever the count asked for


def element_axis(length: int) -> list[Axis]:
    """A trailing unchanged axis for the parts of one element (bytes, or real/imag)."""
    return [Axis(length, length, "copy")] if length > 1 else []


@dataclass
class Canonical:
    """Axes merged: outer axes, the row axis, and the block's blended axis and copy length."""

    outer: list[Axis]
    row: Axis
    block_blend: Axis | None
    parts: int

    @property
    def block(self) -> int:
        return self.parts * (self.block_blend.n_out if self.block_blend else 1)

    @property
    def block_in(self) -> int:
        return self.parts * (self.block_blend.n_in if self.block_blend else 1)


def canonical(axes: list[Axis]) -> Canonical:
    """Drop unit copy axes, merge neighbouring copy axes, pick the row axis and block.

    A trailing run of copy axes at least MIN_STREAMED_BLOCK long is the row itself; a
    shorter one rides along each row position as the block, and so does a short blended
    axis just before it when another axis can be the row (channels last; with no block
    behind it, one shorter than MIN_BLENDED_ROW).
    """
    kept = [a for a in axes if not (a.kind == "copy" and a.n_out == 1)]
    merged: list[Axis] = []
    for axis in kept:
        if axis.kind == "copy" and merged and merged[-1].kind == "copy":
            merged[-1] = Axis(merged[-1].n_in * axis.n_in, merged[-1].n_out * axis.n_out, "copy")
        else:
            merged.append(axis)
    if not merged:
        return Canonical([], Axis(1, 1, "copy"), None, 1)
    last = merged[-1]
    if last.kind == "copy" and (last.n_out >= MIN_STREAMED_BLOCK or len(merged) == 1):
        return Canonical(merged[:-1], last, None, 1)
    parts = 1
    if last.kind == "copy":
        parts = last.n_out
        merged = merged[:-1]
    inner = merged[-1]
    longest = max(inner.n_out, inner.n_in)
    if (len(merged) >= 2 and inner.kind == "blend" and longest * parts < MIN_STREAMED_BLOCK
            and (parts > 1 or longest < MIN_BLENDED_ROW)):
        return Canonical(merged[:-2], merged[-2], inner, parts)
    return Canonical(merged[:-1], inner, None, parts)


def plan_layout(
    axes: list[Axis], threads: int, work_per_element: int, bytes_per_position: int = 0
) -> Layout:
    """Canonical form plus a split into ``n_blocks x n_segments`` work items.

    ``work_per_element`` is what one output element costs in MIN_SHARE_WORK's units; the
    call uses at most ``threads`` threads, and no more than its work is worth
    (``layout.threads``). ``bytes_per_position`` is the scratch one row-axis position costs
    (linear kernel); segments are shortened so that an item's scratch stays within
    LINEAR_SCRATCH_BYTES.
    """
    form = canonical(axes)
    outer, row, block = form.outer, form.row, form.block
    rows = math.prod(a.n_out for a in outer)
    in_lengths = [a.n_in for a in outer] + [row.n_in * form.block_in]
    strides = [math.prod(in_lengths[i + 1 :]) for i in range(len(outer))]
    layout = Layout(outer, row, block, rows, strides, block_in=form.block_in,
                    block_blend=form.block_blend)
    total = rows * row.n_out * block
    layout.worth = max(1, total * work_per_element // MIN_SHARE_WORK)
    layout.threads = min(threads, layout.worth)
    wanted = layout.threads * ITEMS_PER_THREAD if layout.threads > 1 else 1
    # bounded items: a Ctrl-C is seen between items, and a long call stays interruptible
    wanted = max(wanted, -(-total // MAX_ITEM_ELEMENTS))
    layout.n_blocks = max(1, min(rows, wanted))
    n_segments = max(1, -(-wanted // layout.n_blocks))
    if bytes_per_position:
        longest = max(1, LINEAR_SCRATCH_BYTES // (bytes_per_position * block))
        n_segments = max(n_segments, -(-row.n_out // longest))
    n_segments = min(n_segments, max(1, row.n_out))
    layout.segment = max(1, -(-row.n_out // n_segments))
    layout.n_segments = max(1, -(-row.n_out // layout.segment))
    return layout


def axis_fields(axis: Axis) -> dict[str, int]:
    """One axis' numbers as the kernels read them, by the names of their fields
    (``_native.AXIS_FIELDS``, in the order of the extension's description; the kind is the
    caller's to add): lengths, the window's first output and input, and ``num / den``, the
    scale exactly (``num`` 0 for an integer beyond int64)."""
    if axis.rule is None:
        return {"n_out": axis.n_out, "in_len": axis.n_in, "n_in": axis.n_in, "out_first": 0,
                "in_first": 0, "num": 1, "den": 1}
    rule = axis.rule
    num, den = float(rule.scale).as_integer_ratio()
    if num > MAX_DIM:
        num = 0
    return {"n_out": axis.n_out, "in_len": axis.n_in, "n_in": rule.n_in,
            "out_first": rule.out_first, "in_first": rule.in_first, "num": num, "den": den}


def blend_taps(axis: Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The taps of a (short) blended axis' window, local to its input window."""
    assert axis.rule is not None
    rule = axis.rule
    lo, hi, w_lo, w_hi = linear_taps(rule.n_in, rule.out_first + axis.n_out, rule.scale,
                                     rule.out_first)
    return lo - rule.in_first, hi - rule.in_first, w_lo, w_hi
