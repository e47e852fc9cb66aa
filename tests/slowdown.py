"""How much slower the kernels run here than in a normal build (no tests in this module).

``scripts/test_sanitize.sh`` runs tests against builds with AddressSanitizer,
UndefinedBehaviorSanitizer and ThreadSanitizer, and ``scripts/test_aarch64.sh`` under an
emulator of another processor: both several times slower. They set
ONNX_UPSAMPLE_SLOW_BUILD=1, and time limits are multiplied by SLOWDOWN there, and only there.
"""

from __future__ import annotations

import os

SLOWDOWN = 10.0 if os.environ.get("ONNX_UPSAMPLE_SLOW_BUILD") else 1.0
