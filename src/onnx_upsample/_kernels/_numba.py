"""Compiled kernels of ONNX ``Upsample`` (the only module that imports numba).

Both kernels see the problem in a canonical form built by :mod:`._layout`: the output is a
2-D array of ``rows x (row_len * block)`` elements. A row is one multi-index of the *outer*
axes; along a row runs the *row axis* (a table of input indices, or the identity), and each
row-axis position holds ``block`` contiguous elements (trailing axes copied unchanged).
The input is C-contiguous and flat, so an outer multi-index maps to an input offset through
per-axis element strides.

Work is split into ``n_blocks`` contiguous ranges of rows times ``n_segments`` ranges of the
row axis; each work item runs on one thread. Inside an item, consecutive rows that read the
same input rows are computed once (nearest: the previous output row is copied; linear: the
input rows, gathered and converted to the accumulation type, are cached and reused).

No fast-math and no contraction: every float operation is the IEEE one, in the order of the
contract (§2), so results are bit-identical to the slow reference and to ORT 1.32.
"""

from __future__ import annotations

import types
from collections.abc import Callable

import numba as nb
import numpy as np

# Helpers are inlined into the kernels at numba's level: as separate functions their loops
# are not vectorised (measured 10-15x slower on the byte-repeat loop).
_inline = nb.njit(nogil=True, cache=True, inline="always")

# Row kinds of the nearest kernel (chosen per call by the caller).
ROW_COPY, ROW_REPEAT, ROW_GATHER = 0, 1, 2


@_inline
def _start_index(row, sizes, index):  # type: ignore[no-untyped-def]
    """Set ``index`` to the outer multi-index of row number ``row`` (C order)."""
    rest = row
    for axis in range(sizes.size - 1, -1, -1):
        index[axis] = rest % sizes[axis]
        rest //= sizes[axis]


@_inline
def _next_index(sizes, index):  # type: ignore[no-untyped-def]
    """Advance ``index`` to the next row; returns the outermost axis that changed."""
    axis = sizes.size - 1
    while axis > 0 and index[axis] + 1 == sizes[axis]:
        index[axis] = 0
        axis -= 1
    index[axis] += 1
    return axis


@_inline
def _outer_offset(position, contrib, starts, skip):  # type: ignore[no-untyped-def]
    """Input offset of the outer multi-index ``position``, leaving out axis ``skip``.

    ``contrib[starts[a] + o]`` is the input offset that output index o of outer axis a
    reads (precomputed: index table times stride).
    """
    offset = 0
    for axis in range(position.size):
        if axis != skip:
            offset += contrib[np.uint64(starts[axis] + position[axis])]
    return offset


@_inline
def _repeat_row(x, src, out, dst, n, k):  # type: ignore[no-untyped-def]
    """``out[dst + i*k + t] = x[src + i]`` for i < n, t < k (an integer scale).

    Offsets are unsigned: numba then skips its negative-index wraparound test, which costs
    a branch per element and blocks vectorisation (measured 2-15x on these loops).
    """
    u = np.uint64
    if k == 2:
        for i in range(n):
            v = x[src + u(i)]
            out[dst + u(2 * i)] = v
            out[dst + u(2 * i + 1)] = v
    elif k == 3:
        for i in range(n):
            v = x[src + u(i)]
            out[dst + u(3 * i)] = v
            out[dst + u(3 * i + 1)] = v
            out[dst + u(3 * i + 2)] = v
    elif k == 4:
        for i in range(n):
            v = x[src + u(i)]
            out[dst + u(4 * i)] = v
            out[dst + u(4 * i + 1)] = v
            out[dst + u(4 * i + 2)] = v
            out[dst + u(4 * i + 3)] = v
    else:
        for i in range(n):
            v = x[src + u(i)]
            for t in range(k):
                out[dst + u(k * i + t)] = v


def _nearest(x, out, rows, sizes, contrib, starts,  # type: ignore[no-untyped-def]
             row_table, row_kind, repeat, block, n_blocks, n_segments, segment):
    u = np.uint64
    row_width = out.size // rows
    row_len = row_width // block
    for item in nb.prange(n_blocks * n_segments):
        b = item // n_segments
        s = item % n_segments
        r0 = b * rows // n_blocks
        r1 = (b + 1) * rows // n_blocks
        j0 = s * segment
        j1 = min(row_len, j0 + segment)
        f0 = j0 * block
        width = (j1 - j0) * block
        # integer divisions cost tens of cycles: none inside the row loop
        repeat_start = j0 // repeat
        repeat_count = (j1 - j0) // repeat
        previous = -1
        position = np.zeros(sizes.size, dtype=np.int64)
        _start_index(r0, sizes, position)
        last = sizes.size - 1
        inner = contrib[starts[last] : starts[last] + sizes[last]]
        # the innermost outer axis changes every row; the rest only when it wraps
        base = _outer_offset(position, contrib, starts, last)
        for r in range(r0, r1):
            if r > r0 and _next_index(sizes, position) < last:
                base = _outer_offset(position, contrib, starts, last)
            offset = base + inner[u(position[last])]
            dst = u(r) * u(row_width) + u(f0)
            if offset == previous and row_kind == ROW_GATHER:
                # same input row as the row above: copy it (a repeat or copy row reads
                # fewer bytes from the input than from the row above: measured faster)
                above = dst - u(row_width)
                for f in range(width):
                    out[dst + u(f)] = out[above + u(f)]
            elif row_kind == ROW_COPY:
                src = u(offset) + u(f0)
                for f in range(width):
                    out[dst + u(f)] = x[src + u(f)]
            elif row_kind == ROW_REPEAT:
                _repeat_row(x, u(offset) + u(repeat_start), out, dst, repeat_count, repeat)
            elif block == 1:
                src = u(offset)
                for j in range(width):
                    out[dst + u(j)] = x[src + u(row_table[u(j0 + j)])]
            else:
                for j in range(j1 - j0):
                    src = u(offset) + u(row_table[u(j0 + j)]) * u(block)
                    target = dst + u(j * block)
                    for c in range(block):
                        out[target + u(c)] = x[src + u(c)]
            previous = offset


@_inline
def _store(o, acc, n, saturate, low_bound, high_bound, low_value, high_value):  # type: ignore[no-untyped-def]
    """Store n results: integers truncate toward zero, then saturate (contract §2).

    The test sits outside the loops so that each loop vectorises.
    """
    if saturate:
        for f in range(n):
            v = acc[f]
            if v >= high_bound:
                o[f] = high_value
            elif v < low_bound:
                o[f] = low_value
            else:
                o[f] = v
    else:
        for f in range(n):
            o[f] = acc[f]


@_inline
def _expand(x, lut, offset, row_lo, row_hi, j0, j1, block, taps, into, repeat):  # type: ignore[no-untyped-def]
    """Gather one input row at the row axis' taps and convert it to the accumulation type.

    With an integer scale k on the row axis (``repeat``: lo[j] == j // k), the low taps are
    each input element k times (a vectorisable loop, not a gather), and the high taps are
    the low taps shifted by k, but for the clamped last k positions.
    """
    xs = x[offset:]
    n = j1 - j0
    if repeat == 2:
        low = into[0]
        start = (j0 // 2) * block
        count = n // 2
        if block == 1:
            if lut.size:
                for i in range(count):
                    v = lut[np.uint64(xs[np.uint64(start + i)])]
                    low[2 * i] = v
                    low[2 * i + 1] = v
            else:
                for i in range(count):
                    v = xs[np.uint64(start + i)]
                    low[2 * i] = v
                    low[2 * i + 1] = v
        else:
            for i in range(count):
                source = np.uint64(start + i * block)
                target = 2 * i * block
                for c in range(block):
                    if lut.size:
                        v = lut[np.uint64(xs[source + np.uint64(c)])]
                    else:
                        v = xs[source + np.uint64(c)]
                    low[target + c] = v
                    low[target + block + c] = v
        if taps == 2:
            high = into[1]
            last = row_hi[j0:j1]
            if block == 1:
                for j in range(max(n - 2, 0)):
                    high[j] = low[j + 2]
                for j in range(max(n - 2, 0), n):
                    if lut.size:
                        high[j] = lut[np.uint64(xs[np.uint64(last[j])])]
                    else:
                        high[j] = xs[np.uint64(last[j])]
            else:
                span = n * block
                for f in range(max(span - 2 * block, 0)):
                    high[f] = low[f + 2 * block]
                for j in range(max(n - 2, 0), n):
                    source = np.uint64(last[j] * block)
                    for c in range(block):
                        if lut.size:
                            high[j * block + c] = lut[np.uint64(xs[source + np.uint64(c)])]
                        else:
                            high[j * block + c] = xs[source + np.uint64(c)]
        return
    for tap in range(taps):
        picks = (row_lo if tap == 0 else row_hi)[j0:j1]
        target = into[tap]
        if block == 1:
            if lut.size:
                for j in range(n):
                    target[j] = lut[np.uint64(xs[np.uint64(picks[j])])]
            else:
                for j in range(n):
                    target[j] = xs[np.uint64(picks[j])]
        else:
            for j in range(n):
                source = np.uint64(picks[j] * block)
                base = j * block
                for c in range(block):
                    if lut.size:
                        target[base + c] = lut[np.uint64(xs[source + np.uint64(c)])]
                    else:
                        target[base + c] = xs[source + np.uint64(c)]


def _linear(x, out, lut, acc_proto, sizes, interp, lo, hi, w_lo, w_hi,  # type: ignore[no-untyped-def]
            starts, row_lo, row_hi, row_w_lo, row_w_hi, row_interp, block,
            n_blocks, n_segments, segment, saturate, low_bound, high_bound, low_value,
            high_value, row_base, repeat, row_w_elem_lo, row_w_elem_hi):
    rows = out.shape[0]
    row_len = out.shape[1] // block
    n_axes = sizes.size
    n_interp = 0
    for axis in range(n_axes):
        if interp[axis]:
            n_interp += 1
    combos = 1 << n_interp
    taps = 2 if row_interp else 1
    slots = 2 * combos
    for item in nb.prange(n_blocks * n_segments):
        b = item // n_segments
        s = item % n_segments
        r0 = b * rows // n_blocks
        r1 = (b + 1) * rows // n_blocks
        j0 = s * segment
        j1 = min(row_len, j0 + segment)
        width = (j1 - j0) * block
        # expanded input rows: [slot, tap, element], in the accumulation type
        cache = np.empty((slots, taps, width), dtype=acc_proto.dtype)
        keys = np.full(slots, -1, dtype=np.int64)
        ages = np.zeros(slots, dtype=np.int64)
        used = np.empty(combos, dtype=np.int64)
        clock = 0
        acc = np.empty(width, dtype=acc_proto.dtype)
        weights = np.empty(width, dtype=np.float32)
        m = max(n_interp, 1)
        axis_lo = np.empty(m, dtype=np.int64)
        axis_hi = np.empty(m, dtype=np.int64)
        axis_w_lo = np.empty(m, dtype=np.float32)
        axis_w_hi = np.empty(m, dtype=np.float32)
        factors = np.empty((combos, m), dtype=np.float32)
        position = np.zeros(n_axes, dtype=np.int64)
        _start_index(r0 + row_base, sizes, position)
        for r in range(r0, r1):
            if r > r0:
                _next_index(sizes, position)
            # outer multi-index: unchanged axes give a fixed offset; interpolated axes
            # (position p counted from the innermost, p = 0) give two taps each
            base = 0
            p = 0
            for axis in range(n_axes - 1, -1, -1):
                k = np.uint64(starts[axis] + position[axis])
                if interp[axis]:
                    axis_lo[p] = lo[k]
                    axis_hi[p] = hi[k]
                    axis_w_lo[p] = w_lo[k]
                    axis_w_hi[p] = w_hi[k]
                    p += 1
                else:
                    base += lo[k]
            for combo in range(combos):  # innermost outer axis fastest
                offset = base
                for q in range(n_interp):
                    if (combo >> q) & 1:
                        offset += axis_hi[q]
                        factors[combo, q] = axis_w_hi[q]
                    else:
                        offset += axis_lo[q]
                        factors[combo, q] = axis_w_lo[q]
                clock += 1
                slot = -1
                for t in range(slots):
                    if keys[t] == offset:
                        slot = t
                        break
                if slot < 0:
                    slot = 0
                    for t in range(1, slots):
                        if ages[t] < ages[slot]:
                            slot = t
                    keys[slot] = offset
                    _expand(x, lut, offset, row_lo, row_hi, j0, j1, block, taps, cache[slot],
                            repeat)
                ages[slot] = clock
                used[combo] = slot
            o = out[r, j0 * block : j1 * block]
            # the fused loops read one weight per element: row_w_elem_* repeat each
            # row-axis weight ``block`` times
            row_wl = row_w_elem_lo[j0 * block : j1 * block]
            row_wh = row_w_elem_hi[j0 * block : j1 * block]
            if row_interp and n_interp == 0:
                e0 = cache[used[0], 0]
                e1 = cache[used[0], 1]
                for j in range(width):
                    v = row_wl[j] * e0[j] + row_wh[j] * e1[j]
                    acc[j] = v
                _store(o, acc, width, saturate, low_bound, high_bound, low_value, high_value)
                continue
            if row_interp and n_interp == 1:
                f0 = factors[0, 0]
                f1 = factors[1, 0]
                e00 = cache[used[0], 0]
                e01 = cache[used[0], 1]
                e10 = cache[used[1], 0]
                e11 = cache[used[1], 1]
                for j in range(width):
                    wl = row_wl[j]
                    wh = row_wh[j]
                    v = (wl * f0) * e00[j] + (wh * f0) * e01[j]
                    v = v + (wl * f1) * e10[j]
                    v = v + (wh * f1) * e11[j]
                    acc[j] = v
                _store(o, acc, width, saturate, low_bound, high_bound, low_value, high_value)
                continue
            if row_interp and n_interp == 2:
                e0l = cache[used[0], 0]
                e0h = cache[used[0], 1]
                e1l = cache[used[1], 0]
                e1h = cache[used[1], 1]
                e2l = cache[used[2], 0]
                e2h = cache[used[2], 1]
                e3l = cache[used[3], 0]
                e3h = cache[used[3], 1]
                a0, b0 = factors[0, 0], factors[0, 1]
                a1, b1 = factors[1, 0], factors[1, 1]
                a2, b2 = factors[2, 0], factors[2, 1]
                a3, b3 = factors[3, 0], factors[3, 1]
                for j in range(width):
                    wl = row_wl[j]
                    wh = row_wh[j]
                    v = ((wl * a0) * b0) * e0l[j] + ((wh * a0) * b0) * e0h[j]
                    v = v + ((wl * a1) * b1) * e1l[j]
                    v = v + ((wh * a1) * b1) * e1h[j]
                    v = v + ((wl * a2) * b2) * e2l[j]
                    v = v + ((wh * a2) * b2) * e2h[j]
                    v = v + ((wl * a3) * b3) * e3l[j]
                    v = v + ((wh * a3) * b3) * e3h[j]
                    acc[j] = v
                _store(o, acc, width, saturate, low_bound, high_bound, low_value, high_value)
                continue
            # general case: any number of interpolated axes, any block
            first = True
            for combo in range(combos):
                values_slot = used[combo]
                for tap in range(taps):
                    if row_interp:
                        row_w = row_wl if tap == 0 else row_wh
                        for f in range(width):
                            w = row_w[f]
                            for q in range(n_interp):
                                w = w * factors[combo, q]
                            weights[f] = w
                    else:
                        w = factors[combo, 0]
                        for q in range(1, n_interp):
                            w = w * factors[combo, q]
                        for f in range(width):
                            weights[f] = w
                    values = cache[values_slot, tap]
                    if first:
                        for f in range(width):
                            acc[f] = weights[f] * values[f]
                        first = False
                    else:
                        for f in range(width):
                            acc[f] = acc[f] + weights[f] * values[f]
            _store(o, acc, width, saturate, low_bound, high_bound, low_value, high_value)


def _named(function: Callable[..., None], name: str) -> types.FunctionType:
    """A copy of ``function`` under another name.

    numba's on-disk cache is keyed by the function's qualified name and first line, not by
    the ``parallel`` option: a serial and a parallel compilation of one function share cache
    entries, and whichever was compiled first is loaded for both (measured: a parallel
    kernel that ran on one thread). Distinct names keep the two apart.
    """
    assert isinstance(function, types.FunctionType)
    copy = types.FunctionType(function.__code__, function.__globals__, name,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = name
    return copy


nearest_parallel = nb.njit(nogil=True, cache=True, parallel=True)(
    _named(_nearest, "nearest_parallel"))
nearest_serial = nb.njit(nogil=True, cache=True)(_named(_nearest, "nearest_serial"))
linear_parallel = nb.njit(nogil=True, cache=True, parallel=True)(
    _named(_linear, "linear_parallel"))
linear_serial = nb.njit(nogil=True, cache=True)(_named(_linear, "linear_serial"))


def set_threads(n: int) -> None:
    """Set numba's thread count for parallel kernels launched from this Python thread."""
    nb.set_num_threads(n)


def needs_launch_lock() -> bool:
    """True when numba's threading layer cannot take concurrent launches (workqueue)."""
    try:
        return nb.threading_layer() == "workqueue"
    except ValueError:  # no parallel kernel has run yet: the layer is not chosen
        return True
