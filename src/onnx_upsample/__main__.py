"""``python -m onnx_upsample``: the command line."""

import contextlib
import os
import sys

from .cli import EXIT_INTERRUPTED, main

code = main()
if code == EXIT_INTERRUPTED:
    # Interrupted (Ctrl-C), after the command cleaned up: exit now with its status. Under
    # `-m`, CPython turns a KeyboardInterrupt that ended a string exec on the way (even one
    # the command handled) into a death by SIGINT at exit (-2 to a parent, not 130: 3 of 28
    # interrupted chunked writes here), and its shutdown would wait for worker threads.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a reader that went away too (Ctrl-C on a pipe)
            stream.flush()
    os._exit(code)
raise SystemExit(code)
