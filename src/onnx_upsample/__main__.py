"""``python -m onnx_upsample``: the command line."""

from .cli import main

raise SystemExit(main())
