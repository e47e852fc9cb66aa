"""The NaN this machine's float arithmetic creates (no tests in this module).

IEEE 754 leaves the sign and payload of a NaN that an invalid operation creates (inf - inf,
0 * inf) to the processor: x86's is negative (0xFFC00000 in float32), ARM's positive
(0x7FC00000). onnxruntime's kernels, ours and the reference do the same float operations on
the same processor, so they create the same one (docs/semantics.md). Tests whose data must
hold no NaN other than the one a sum can create take it from here, not x86's constant.
"""

from __future__ import annotations

import numpy as np


def _created(dtype: type[np.floating]) -> np.floating:
    infinity = np.full(4, np.inf, dtype)
    with np.errstate(invalid="ignore"):
        return (infinity - infinity)[0]


CREATED_NAN32 = _created(np.float32)
CREATED_NAN64 = _created(np.float64)
# float16 is computed in float32 and narrowed (ours and ORT's casts alike): the sign stays
CREATED_NAN16 = CREATED_NAN32.astype(np.float16)
