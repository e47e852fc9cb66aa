# Type stubs of the compiled kernel extension (src/onnx_upsample/_kernels/_native/*.c).
from typing import Any

import numpy as np

MAX_THREADS: int
MAX_OUTER: int
MAX_INTERP: int
MAX_AXIS_INPUT: int
F32_EXACT_LIMIT: int
AXIS_FIELDS: tuple[str, ...]
AXIS_COPY: int
AXIS_GATHER: int
AXIS_BLEND: int
ROW_COPY: int
ROW_REPEAT: int
ROW_GATHER: int
LINEAR_DIRECT_CACHE_BYTES: int
# float32 lanes of the baseline loops' SIMD backend (0: scalar loops only), and its name
SIMD_LANES: int
SIMD_BASELINE: str
ISA_BASELINE: int
ISA_AVX2: int
T_INT8: int
T_UINT8: int
T_INT16: int
T_UINT16: int
T_INT32: int
T_FLOAT32: int
T_HALF: int
T_INT64: int
T_UINT64: int
T_UINT32: int
T_FLOAT64: int
# each element code's name (without T_) -> (code, bytes of one stored element, bytes of its
# accumulator, the code its results are written as)
LINEAR_TYPES: dict[str, tuple[int, int, int, int]]

class Kernel:
    def __call__(self, x: np.ndarray, out: np.ndarray, threads: int, row_base: int = 0,
                 col_first: int = 0, col_count: int = -1, stream: bool = False) -> None: ...

def nearest_kernel(**description: Any) -> Kernel: ...
def linear_kernel(**description: Any) -> Kernel: ...
def linear_scratch_per_element(taps: int, n_interp: int, acc_double: bool,
                               stream: bool) -> int: ...
def repeat_factor(axis: np.ndarray, scale: float) -> int: ...
def cpu_has_avx2() -> bool: ...
def path_counts() -> dict[str, int]: ...
def _set_join_delay(seconds: float) -> None: ...
