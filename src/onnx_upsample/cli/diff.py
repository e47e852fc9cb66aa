"""``onnx-upsample diff``: one model in two runtimes, every node's outputs compared, where
differences begin located, and the convention behind each Upsample or Resize that differs
named.

The command parses its arguments, calls :func:`onnx_upsample.conformance.diff` and prints
the lines of its result (cli/_common.py's conventions: notes on stdout, warnings on stderr,
the differing nodes shown under ``-q`` too). Exit 0 when no Upsample or Resize node differs
itself; 1 when some do, or when none could be compared (a runtime refused each one: the
diff ran and its check failed, as a verification that verifies nothing fails); 2 on bad
arguments, a runtime that cannot be loaded, or a model it cannot run at all. A difference
that begins in another node (a Conv) is located and sized, and leaves the status as it is:
two runtimes' convolutions commonly differ in the last bits.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import EXIT_FINDINGS, EXIT_OK, add_output_options, note, print_json, warn
from ._models_io import (
    add_input_options,
    caught_warnings,
    hinted,
    kept_warnings,
    load_model,
    parse_shapes,
    read_inputs,
    warn_all,
)

__all__ = ["register"]


def _help_fields() -> dict[str, str]:
    """The backends and defaults the help names, from their owner (read when it is shown)."""
    from ..conformance import BACKENDS
    from ..conformance._diff import DEFAULT_BACKENDS, DEFAULT_TIMEOUT

    return {"backends": ", ".join(BACKENDS), "default_backends": " and ".join(DEFAULT_BACKENDS),
            "default_timeout": f"{DEFAULT_TIMEOUT:g}"}


def register(subparsers: Any) -> None:
    """Add the ``diff`` subcommand."""
    diff = subparsers.add_parser(
        "diff", help="run a model in two runtimes and say where their values begin to "
        "differ, and why their Upsample and Resize nodes disagree", fields=_help_fields,
        description="Run MODEL in two runtimes (each in a worker process of its own) on the "
        "same inputs, every value a node computes exposed, and compare every node's outputs "
        "bit for bit: say where differences begin (a node whose output differs while its "
        "inputs are the same), by how much, and what they reach; for each Upsample and "
        "Resize node that differs name the convention each runtime's output follows "
        "(relative to the node's own: Upsample's, or the Resize's attributes'). An "
        "Upsample or Resize whose input already differs runs alone in both runtimes on one "
        "input first, so a difference upstream is not blamed on it. A runtime that "
        "refuses the model runs it cut at each Upsample and Resize; a node it refuses runs "
        "in the other and is reported refused. Exit 0 when no Upsample or Resize node "
        "differs (a difference that begins in another node is reported, and leaves it 0), "
        "1 when some do or none could be compared, 2 on bad arguments or a runtime that "
        "cannot be loaded or run the model.")
    diff.add_argument("model", help="the .onnx file")
    diff.add_argument("--backend", action="append", default=[], metavar="NAME",
                      help="a runtime, given twice: {backends} or package.module:callable, as "
                      "'conformance run' takes them (default: {default_backends})")
    add_input_options(diff)
    diff.add_argument("--timeout", type=float, default=None, metavar="S",
                      help="seconds one run may take in a runtime (default {default_timeout})")
    diff.add_argument("--legacy-modes", action="store_true",
                      help="give both runtimes the model with its modes written in upper or "
                      "mixed case by old converters ('NEAREST', 'BILINEAR') in lower case, "
                      "with a warning (runtimes refuse them otherwise)")
    add_output_options(diff, json_help="print the comparison (nodes, outputs, explanations) "
                       "as one JSON object")
    diff.set_defaults(handler=hinted(_cmd_diff))


def _cmd_diff(args: argparse.Namespace) -> int:
    from .._errors import UpsampleError
    from .._spec.spelling import OPTIONS
    from ..conformance import diff
    from ..conformance._diff import DEFAULT_BACKENDS, DEFAULT_TIMEOUT

    backends = args.backend or list(DEFAULT_BACKENDS)
    if len(backends) != 2:
        raise UpsampleError(f"--backend is given {len(backends)} time(s) ({', '.join(backends)}); "
                            "give it twice, once for each runtime to compare (or not at all: "
                            f"{' and '.join(DEFAULT_BACKENDS)})")
    inputs, shapes = read_inputs(args.input), parse_shapes(args.input_shape)
    load_model(args.model)  # a file that is no model: one line, before a runtime starts
    with caught_warnings() as caught:
        found = diff(args.model, backends[0], backends[1], inputs=inputs,
                     input_shapes=shapes, seed=args.seed,
                     timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout,
                     legacy_modes=args.legacy_modes)
    warn_all(args, [item.message for item in caught])
    for kind, text in found.lines(OPTIONS):
        if kind == "warning":
            warn(text)
        else:
            note(args, text, failing=kind == "finding")
    if args.json:
        print_json({"command": "diff", **found.to_dict(), "warnings": kept_warnings(args)})
    return EXIT_FINDINGS if found.differs or found.nothing_compared else EXIT_OK
