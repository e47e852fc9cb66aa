"""How much slower the kernels run here than in a normal build (no tests in this module).

``scripts/test_sanitize.sh`` runs tests against builds with AddressSanitizer,
UndefinedBehaviorSanitizer and ThreadSanitizer, which are several times slower, and sets
ONNX_UPSAMPLE_SANITIZED=1: time limits are multiplied by SLOWDOWN there, and only there.
"""

from __future__ import annotations

import os

SLOWDOWN = 10.0 if os.environ.get("ONNX_UPSAMPLE_SANITIZED") else 1.0
