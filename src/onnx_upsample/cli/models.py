"""``onnx-upsample inspect | check | run``: ONNX models with Upsample read and run, from the
command line (``conversions`` writes them: upgrade, downgrade, fold).

The commands parse their arguments, call onnx_upsample.onnx (``_feeds`` for the inputs of
``run``) and print, following cli/_common.py's conventions (``-q``, ``--json``, notes on
stdout, warnings and errors on stderr). Every fix they print is the command to type, for the
user's own model (``_models_io.spell_fix``); the library words the same fix as a Python call.
onnx is imported inside the handlers only, so ``onnx-upsample --help`` and the core commands
work without the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import UpsampleError
from ._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_output_options,
    note,
    print_json,
)
from ._models_io import (
    add_input_options,
    caught_warnings,
    describe_array,
    file_name,
    hinted,
    kept_warnings,
    load_model,
    npy_ready,
    read_inputs,
    save_npy,
    spell_action,
    spell_fix,
    warn_all,
)

if TYPE_CHECKING:
    from ..onnx import Finding

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``inspect``, ``check`` and ``run`` subcommands."""
    inspect = subparsers.add_parser(
        "inspect", help="list the Upsample nodes of an ONNX model and what is wrong with them",
        description="A table of the model's Upsample nodes (name, version, mode, scales, "
        "input and output shapes) and every finding of onnx_upsample.onnx.check with its "
        "fix. Exit 1 if there are errors.")
    inspect.add_argument("model", help="the .onnx file")
    add_output_options(inspect, json_help="print the model, its nodes and the findings as "
                       "one JSON object")
    inspect.set_defaults(handler=hinted(_cmd_inspect))

    check = subparsers.add_parser(
        "check", help="list what is wrong with the Upsample nodes, each with the command that "
        "fixes it; exit 1 on errors",
        description="Every finding (severity, node, message, fix) of onnx_upsample.onnx.check "
        "for MODEL, one per line or as JSON for CI pipelines. Exit 1 if there are errors "
        "(with --strict, also if there are warnings).")
    check.add_argument("model", help="the .onnx file")
    check.add_argument("--strict", action="store_true",
                       help="exit 1 when there are warnings too")
    add_output_options(check, json_help="print the model, its findings and their counts as "
                       "one JSON object")
    check.set_defaults(handler=hinted(_cmd_check))

    run = subparsers.add_parser(
        "run", help="run an ONNX model in onnxruntime, each Upsample it refuses (versions 1 "
        "and 10, ...) in onnx-upsample's kernel",
        description="Run MODEL in onnxruntime, whole where it takes the model: the outputs "
        "are onnxruntime's, bit for bit. Where onnxruntime refuses the model (Upsample-1, "
        "Upsample-10, upper-case modes, ...), it runs in pieces cut at each Upsample and "
        "Resize: every other node in onnxruntime, each Upsample onnxruntime refuses in "
        "onnx-upsample's kernel (bit-identical to onnxruntime 1.32's Upsample). One line says "
        "what ran the model, one per Upsample and Resize node where it ran.")
    run.add_argument("model", help="the .onnx file")
    run.add_argument("--output-dir", default=None, metavar="DIR",
                     help="write each output to DIR/NAME.npy (DIR is created if missing)")
    run.add_argument("--random", action="store_true",
                     help="random values for the inputs not given with --input (as upgrade "
                     "--verify makes them; symbolic dimensions become 8)")
    add_input_options(run, shapes=False)
    run.add_argument("--backend", default=None, metavar="NAME",
                     help="onnxruntime (the default; needs onnxruntime) or "
                     "onnx-reference+onnx-upsample (onnx's reference evaluator with "
                     "onnx-upsample's Upsample: its Conv and other operators give other "
                     "bits than onnxruntime's)")
    run.add_argument("--level", default=None, metavar="NAME",
                     help="onnxruntime's graph optimization level: ORT_DISABLE_ALL, "
                     "ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_LAYOUT or "
                     "ORT_ENABLE_ALL (the default, as onnxruntime.InferenceSession's)")
    run.add_argument("--legacy-modes", action="store_true",
                     help="run modes written in upper or mixed case by old converters "
                     "('NEAREST', 'BILINEAR') as their lower-case names, with a warning")
    add_output_options(run, json_help="print the inputs and outputs (type, shape, range, "
                       "file), the backend and where each Upsample and Resize node ran as "
                       "one JSON object")
    run.set_defaults(handler=hinted(_cmd_run))


# --------------------------------------------------------------------------- inspect, check


def _finding(finding: Finding, model: str) -> dict[str, Any]:
    fix = finding.fix if finding.remedy is None else spell_fix(finding.remedy, model)
    commands = [] if finding.remedy is None else [spell_action(action, model)
                                                  for action in finding.remedy.actions]
    return {"severity": finding.severity, "node": finding.node, "code": finding.code,
            "message": finding.message, "fix": fix, "commands": commands}


def _counts(findings: Sequence[Finding]) -> dict[str, int]:
    errors = sum(f.severity == "error" for f in findings)
    return {"errors": errors, "warnings": len(findings) - errors}


def _cmd_inspect(args: argparse.Namespace) -> int:
    from ..onnx import check
    from ..onnx._graphs import default_opset
    from ..onnx._report import table, upsample_rows

    model = load_model(args.model)
    found = check(model)
    findings = [_finding(f, args.model) for f in found]
    rows = upsample_rows(model)
    counts = _counts(found)
    opset = default_opset(model.opset_import)
    code = EXIT_FINDINGS if counts["errors"] else EXIT_OK
    if args.json:
        print_json({"command": "inspect", "model": args.model, "opset": opset,
                    "ir_version": model.ir_version, "producer": model.producer_name,
                    "producer_version": model.producer_version,
                    "nodes": [vars(row) for row in rows], "findings": findings,
                    "counts": counts, "warnings": kept_warnings(args)})
        return code
    producer = " ".join(p for p in (model.producer_name, model.producer_version) if p)
    lines = [f"{args.model}: opset {opset}, IR version {model.ir_version}"
             + (f", produced by {producer}" if producer else "")]
    if rows:
        lines += ["", table(("node", "version", "mode", "scales", "input", "output"),
                            [(r.node, r.form, r.mode, r.scales, r.input_shape, r.output_shape)
                             for r in rows])]
    if findings:
        lines.append("")
    note(args, "\n".join(lines))
    for finding in findings:  # an error is why the exit status is 1: shown under -q too
        note(args, f"{finding['severity']:<7}  {finding['node']}: {finding['message']}\n"
                   f"{'':<7}  fix: {finding['fix']}", failing=finding["severity"] == "error")
    note(args, f"\n{len(rows)} Upsample node(s), {counts['errors']} error(s), "
               f"{counts['warnings']} warning(s)")
    return code


def _cmd_check(args: argparse.Namespace) -> int:
    from ..onnx import check

    found = check(load_model(args.model))
    findings = [_finding(f, args.model) for f in found]
    counts = _counts(found)
    failing = counts["errors"] + (counts["warnings"] if args.strict else 0)
    if args.json:
        print_json({"command": "check", "model": args.model, "strict": args.strict,
                    "findings": findings, "counts": counts, "warnings": kept_warnings(args)})
    else:
        for finding in findings:  # those that fail the check are shown under -q too
            note(args, f"{finding['severity']}: {finding['node']}: "
                       f"{finding['message'].rstrip('.')}. Fix: {finding['fix']}",
                 failing=finding["severity"] == "error" or args.strict)
        note(args, f"{args.model}: {counts['errors']} error(s), {counts['warnings']} "
                   "warning(s)" + (" (--strict: warnings fail)" if args.strict and
                                   counts["warnings"] else ""))
    return EXIT_FINDINGS if failing else EXIT_OK


# --------------------------------------------------------------------------- run


def _cmd_run(args: argparse.Namespace) -> int:
    from ..onnx import run

    directory = args.output_dir
    if directory is not None and os.path.exists(directory) and not os.path.isdir(directory):
        raise UpsampleError(f"--output-dir {directory!r} is a file; give a directory (it is "
                            "created if missing)")
    given = read_inputs(args.input)
    with caught_warnings() as caught:
        try:
            # the defaults are the library's: only the options given are passed on
            chosen = {name: value for name, value in (("backend", args.backend),
                                                      ("level", args.level))
                      if value is not None}
            result = run(args.model, given, seed=args.seed if args.random else None,
                         legacy_modes=args.legacy_modes,
                         progress=None if args.quiet else sys.stderr, **chosen)
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] != "onnxruntime":
                raise
            raise UpsampleError(
                "run runs the model in onnxruntime, which is not installed: pip install "
                "'onnxruntime==1.32.*', or run it in onnx's reference evaluator with "
                "--backend onnx-reference+onnx-upsample") from None
    warn_all(args, [item.message for item in caught])
    arrays = result.outputs
    if directory is not None:
        # every output checked before any is written: all of them, or none
        arrays = {name: npy_ready(name, array) for name, array in arrays.items()}
    for line in result.lines():
        note(args, line)
    if directory is not None and not os.path.isdir(directory):
        os.makedirs(directory)
        note(args, f"created directory {directory}")
    outputs = []
    for name, array in arrays.items():
        found = {"name": name, **describe_array(array)}
        if directory is not None:
            found["file"] = os.path.join(directory, file_name(name))
            save_npy(found["file"], array)
        outputs.append(found)
        line = f"{name}: {found['dtype']} {found['shape']}"
        if "min" in found:
            line += f", min {found['min']}, max {found['max']}"
        note(args, line + (f" -> {found['file']}" if "file" in found else ""))
    if args.json:
        print_json({"command": "run", "model": args.model, **result.to_dict(),
                    "inputs": {name: describe_array(np.asarray(value))
                               for name, value in result.inputs.items()},
                    "outputs": outputs, "warnings": kept_warnings(args)})
    return EXIT_OK
