# Type stubs of the compiled kernel extension (src/onnx_upsample/_kernels/_native/*.c).
from typing import Any

import numpy as np

MAX_THREADS: int
MAX_OUTER: int
AXIS_COPY: int
AXIS_GATHER: int
AXIS_BLEND: int
ROW_COPY: int
ROW_REPEAT: int
ROW_GATHER: int

class Kernel:
    def __call__(self, x: np.ndarray, out: np.ndarray, threads: int, row_base: int = 0,
                 col_first: int = 0, col_count: int = -1, stream: bool = False) -> None: ...

def nearest_kernel(*args: Any) -> Kernel: ...
def linear_kernel(*args: Any) -> Kernel: ...
def repeat_factor(axis: np.ndarray, scale: float) -> int: ...
def cpu_has_avx2() -> bool: ...
def _set_join_delay(seconds: float) -> None: ...
