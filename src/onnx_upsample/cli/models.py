"""``onnx-upsample inspect | check | upgrade | downgrade | fold | run``: ONNX models with
Upsample, from the command line.

The commands parse their arguments, call onnx_upsample.onnx (``verify`` for ``upgrade
--verify``, ``_feeds`` for the inputs of ``run``) and print, following cli/_common.py's
conventions (``-q``, ``--json``, notes on stdout, warnings and errors on stderr). Every fix
they print is the command to type, for the user's own model (``_models_io.spell_fix``); the
library words the same fix as a Python call. onnx (and, for ``upgrade --verify``,
onnxruntime) is imported inside the handlers only, so ``onnx-upsample --help`` and the core
commands work without the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import UpsampleError
from ._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    add_output_options,
    note,
    print_json,
    problem,
)
from ._models_io import (
    caught_warnings,
    check_output_path,
    describe_array,
    file_name,
    hints_as_commands,
    load_model,
    npy_ready,
    read_inputs,
    save_model,
    save_npy,
    spell_action,
    spell_fix,
    table,
    warn_all,
    with_all_data,
)

if TYPE_CHECKING:
    from ..onnx import Finding
    from ..onnx._external import ModelProto

__all__ = ["register"]

Handler = Callable[[argparse.Namespace], int]


def _hinted(command: Handler) -> Handler:
    """``command`` with the fixes of the library's errors spelled as commands to type."""
    def handler(args: argparse.Namespace) -> int:
        with hints_as_commands(args.model):
            return command(args)
    return handler


def register(subparsers: Any) -> None:
    """Add the ``inspect``, ``check``, ``upgrade``, ``downgrade``, ``fold`` and ``run``
    subcommands."""
    inspect = subparsers.add_parser(
        "inspect", help="list the Upsample nodes of an ONNX model and what is wrong with them",
        description="A table of the model's Upsample nodes (name, version, mode, scales, "
        "input and output shapes) and every finding of onnx_upsample.onnx.check with its "
        "fix. Exit 1 if there are errors.")
    inspect.add_argument("model", help="the .onnx file")
    add_output_options(inspect, json_help="print the model, its nodes and the findings as "
                       "one JSON object")
    inspect.set_defaults(handler=_hinted(_cmd_inspect))

    upgrade = subparsers.add_parser(
        "upgrade", help="turn every Upsample into a Resize with identical outputs",
        description="Write a copy of MODEL at opset N where every Upsample is a Resize that "
        "onnxruntime runs bit-identically, and every other node went through onnx's version "
        "converter.")
    upgrade.add_argument("model", help="the .onnx file")
    upgrade.add_argument("-o", "--output", required=True, help="the upgraded .onnx file")
    upgrade.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    upgrade.add_argument("--opset", type=int, default=18, metavar="N",
                         help="target opset, 10 to the newest onnx knows (default: 18, which "
                         "the runtimes in use load)")
    upgrade.add_argument("--verify", action="store_true",
                         help="run both models in onnxruntime (optimization level "
                         "ORT_ENABLE_EXTENDED) on the same random inputs and report the "
                         "largest difference per output; exit 1 unless all are 0 (a "
                         "difference at the default level only is a note)")
    upgrade.add_argument("--keep-unverified", action="store_true",
                         help="with --verify: write OUTPUT even when the verification fails, "
                         "to inspect it (the exit status stays 1)")
    upgrade.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                         help="with --verify: use this array for input NAME (repeatable)")
    upgrade.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    add_output_options(upgrade, json_help="print what was rewritten and the verification as "
                       "one JSON object")
    upgrade.set_defaults(handler=_hinted(_cmd_upgrade))

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
    check.set_defaults(handler=_hinted(_cmd_check))

    downgrade = subparsers.add_parser(
        "downgrade", help="turn Upsample-equivalent Resize nodes back into Upsample",
        description="Write a copy of MODEL at opset N (7, 8 or 9) where every Resize that "
        "computes an Upsample (asymmetric, floor/linear, scales >= 1) is an Upsample again, "
        "with identical outputs (onnx_upsample.onnx.downgrade).")
    downgrade.add_argument("model", help="the .onnx file")
    downgrade.add_argument("-o", "--output", required=True, help="the downgraded .onnx file")
    downgrade.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    downgrade.add_argument("--opset", type=int, default=9, choices=(7, 8, 9),
                           help="target opset (default 9)")
    add_output_options(downgrade, json_help="print what was rewritten as one JSON object")
    downgrade.set_defaults(handler=_hinted(_cmd_downgrade))

    fold = subparsers.add_parser(
        "fold", help="store computed Upsample scales as constants where they are static",
        description="Write a copy of MODEL where every Upsample whose scales are computed "
        "from static values (shapes, constants) reads them from an initializer "
        "(onnx_upsample.onnx.fold_scales); says which nodes it could not fold and why.")
    fold.add_argument("model", help="the .onnx file")
    fold.add_argument("-o", "--output", required=True, help="the folded .onnx file")
    fold.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    fold.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                      help="a concrete shape for a graph input with symbolic dimensions "
                      "(repeatable); the written model declares it, as its folded scales "
                      "hold for that shape only")
    add_output_options(fold, json_help="print what was folded as one JSON object")
    fold.set_defaults(handler=_hinted(_cmd_fold))

    run = subparsers.add_parser(
        "run", help="run an ONNX model with every Upsample version (onnx's reference evaluator)",
        description="Run MODEL with onnx.reference.ReferenceEvaluator and onnx-upsample's "
        "Upsample (versions 1, 7, 9, 10; bit-identical to onnxruntime 1.32).")
    run.add_argument("model", help="the .onnx file")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                     help="the value of graph input NAME (repeat for each input)")
    run.add_argument("--output-dir", default=None, metavar="DIR",
                     help="write each output to DIR/NAME.npy (DIR is created if missing)")
    run.add_argument("--random", action="store_true",
                     help="random values for the inputs not given with --input (as upgrade "
                     "--verify makes them; symbolic dimensions become 8)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    run.add_argument("--legacy-modes", action="store_true",
                     help="run modes written in upper or mixed case by old converters "
                     "('NEAREST', 'BILINEAR') as their lower-case names, with a warning")
    add_output_options(run, json_help="print the inputs and outputs (type, shape, range, "
                       "file) as one JSON object")
    run.set_defaults(handler=_hinted(_cmd_run))


def _warnings(args: argparse.Namespace) -> list[str]:
    return list(getattr(args, "warning_lines", []))


def _conversion_line(args: argparse.Namespace, model: ModelProto, converted: ModelProto,
                     counts: dict[str, int]) -> dict[str, Any]:
    """Say what a conversion did (opsets, IR versions, each kind of rewrite); its JSON."""
    from ..onnx._graphs import default_opset

    source, target = default_opset(model.opset_import), default_opset(converted.opset_import)
    done = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "no Upsample or Resize"
    note(args, f"{args.model} (opset {source}, IR {model.ir_version}) -> {args.output} "
               f"(opset {target}, IR {converted.ir_version}): {done}")
    kept = {value.name for value in converted.graph.input}
    unlisted = [value.name for value in model.graph.input if value.name not in kept]
    if unlisted:
        note(args, f"{len(unlisted)} initializer(s) ({', '.join(unlisted[:4])}"
                   f"{', ...' if len(unlisted) > 4 else ''}) are no longer graph inputs: IR "
                   f"{model.ir_version} required every initializer to be listed as one, and at "
                   f"IR {converted.ir_version} a listed initializer is an input a caller may "
                   "override, which runtimes stop treating as a constant")
    return {"model": args.model, "output": args.output, "opset": [source, target],
            "ir_version": [model.ir_version, converted.ir_version], "rewrites": counts,
            "no_longer_inputs": unlisted}


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
    from ..onnx._report import upsample_rows

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
                    "counts": counts, "warnings": _warnings(args)})
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
                    "findings": findings, "counts": counts, "warnings": _warnings(args)})
    else:
        for finding in findings:  # those that fail the check are shown under -q too
            note(args, f"{finding['severity']}: {finding['node']}: "
                       f"{finding['message'].rstrip('.')}. Fix: {finding['fix']}",
                 failing=finding["severity"] == "error" or args.strict)
        note(args, f"{args.model}: {counts['errors']} error(s), {counts['warnings']} "
                   "warning(s)" + (" (--strict: warnings fail)" if args.strict and
                                   counts["warnings"] else ""))
    return EXIT_FINDINGS if failing else EXIT_OK


# --------------------------------------------------------------------------- upgrade


def _verify(original: ModelProto, converted: ModelProto, given: dict[str, np.ndarray],
            seed: int, args: argparse.Namespace | None = None) -> int:
    """Run ``original`` and ``converted`` on the same inputs (onnx_upsample.onnx.verify) and
    print the comparison; EXIT_OK if every output is bit-identical, else EXIT_FINDINGS.
    The result is kept as ``args.verification`` for ``--json``."""
    from ..onnx import _feeds, verify

    args = args if args is not None else argparse.Namespace()
    try:
        verify.import_onnxruntime()
    except ImportError:
        raise UpsampleError("--verify needs onnxruntime: pip install onnxruntime") from None
    runnable = verify.runnable_original(original)
    if runnable.note:
        note(args, runnable.note)
    feeds = _feeds.verification_feeds(runnable.model, original, given, seed)
    # a wrong --input is one line naming it, not onnxruntime's traceback
    _feeds.check_feeds(_feeds.graph_inputs(runnable.model), feeds)
    _feeds.check_tensor_sizes(runnable.model, feeds)
    outputs = verify.compare(runnable, converted, feeds, labels=("original", "upgraded"))
    identical = all(output.identical for output in outputs)
    default_level = verify.default_level_note(runnable, converted, feeds, outputs)
    note(args, table(("output", "shape", "largest difference", "bit-identical"),
                     [(o.name, "x".join(map(str, o.shape)) or "scalar", f"{o.largest:g}",
                       "yes" if o.identical else "NO") for o in outputs]))
    if identical:
        note(args, f"verified: outputs are bit-identical (onnxruntime, {verify.EXACT_LEVEL})")
        if default_level:
            note(args, default_level)
    for output in outputs:
        if not output.identical:
            problem(f"verification FAILED: {output.describe()}")
    args.verification = {
        "level": verify.EXACT_LEVEL, "identical": identical, "note": runnable.note,
        "default_level_note": default_level,
        "outputs": [{"name": o.name, "shape": list(o.shape), "largest_difference": o.largest,
                     "differing_elements": o.differing, "elements": o.size,
                     "identical": o.identical} for o in outputs]}
    return EXIT_OK if identical else EXIT_FINDINGS


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from ..onnx import upgrade
    from ..onnx.convert import rewrites

    check_output_path(args.output, args.model, args.overwrite)
    if args.input and not args.verify:
        raise UpsampleError("--input is used by --verify only")
    if args.keep_unverified and not args.verify:
        raise UpsampleError("--keep-unverified is used with --verify only")
    model = load_model(args.model)
    given = read_inputs(args.input)
    with caught_warnings() as caught:
        upgraded = upgrade(model, opset=args.opset)
    warn_all(args, [item.message for item in caught])
    document = {"command": "upgrade", **_conversion_line(
        args, model, upgraded, rewrites(model, args.opset, "upgrade"))}
    code, written = EXIT_OK, True
    if args.verify:
        # verified before anything is written: a failed verification leaves no output
        # unless --keep-unverified asks for it
        code = _verify(with_all_data(model, args.model), with_all_data(upgraded, args.model),
                       given, args.seed, args)
        written = code == EXIT_OK or args.keep_unverified
    if written:
        save_model(upgraded, args.output, args.model)
        if code != EXIT_OK:
            problem(f"{args.output} was written although the verification failed "
                    "(--keep-unverified)")
    else:
        problem(f"{args.output} was not written (--keep-unverified writes it for "
                "inspection)")
    if args.json:
        print_json({**document, "written": written,
                    "verification": getattr(args, "verification", None),
                    "warnings": _warnings(args)})
    return code


# --------------------------------------------------------------------------- downgrade, fold


def _cmd_downgrade(args: argparse.Namespace) -> int:
    from ..onnx import downgrade
    from ..onnx.convert import rewrites

    check_output_path(args.output, args.model, args.overwrite)
    model = load_model(args.model)
    with caught_warnings() as caught:
        lowered = downgrade(model, opset=args.opset)
    warn_all(args, [item.message for item in caught])
    save_model(lowered, args.output, args.model)
    document = _conversion_line(args, model, lowered, rewrites(model, args.opset, "downgrade"))
    if args.json:
        print_json({"command": "downgrade", **document, "warnings": _warnings(args)})
    return EXIT_OK


def _parse_shapes(items: Sequence[str]) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            dims = [int(d) for d in text.split(",")] if text else []
        except ValueError:
            dims = [-1]
        # a dimension is an int64 in ONNX: larger ones are refused here, not deep in onnx
        if not sep or not name or any(d < 0 or d >= 2**63 for d in dims):
            raise UpsampleError(f"--input-shape {item!r}: expected NAME=D0,D1,... with "
                                 "whole numbers >= 0 and below 2**63")
        shapes[name] = dims
    return shapes


def _computed_scales(model: ModelProto) -> int:
    """How many Upsample nodes read scales that no constant holds."""
    from ..onnx._graphs import is_upsample, walk

    count = 0
    for site in walk(model):
        for node in site.owner.node:
            if (is_upsample(node) and len(node.input) > 1 and node.input[1]
                    and site.scope.constant(node.input[1]) is None):
                count += 1
    return count


def _cmd_fold(args: argparse.Namespace) -> int:
    from ..onnx import _feeds, fold_scales
    from ..onnx._fold import ScalesNotFolded

    check_output_path(args.output, args.model, args.overwrite)
    model = load_model(args.model)
    shapes = _parse_shapes(args.input_shape)
    declared = {value.name: value for value in _feeds.graph_inputs(model)}
    unknown = sorted(set(shapes) - set(declared))
    if unknown:
        raise UpsampleError(f"--input-shape names {unknown}, which are not inputs of the "
                             f"model; its inputs are {sorted(declared)}")
    with caught_warnings() as caught:
        folded = fold_scales(model, input_shapes=shapes or None)
    # the library's warning for scales left computed names its Python argument; here each
    # node gets a line naming the option
    not_folded = [name for item in caught if isinstance(item.message, ScalesNotFolded)
                  for name in item.message.nodes]
    warn_all(args, [item.message for item in caught
                    if not isinstance(item.message, ScalesNotFolded)])
    save_model(folded, args.output, args.model)
    before = _computed_scales(model)
    note(args, f"{args.model} -> {args.output}: {before - len(not_folded)} of {before} "
               "computed scales folded")
    for name, dims in shapes.items():
        note(args, f"input {name!r} is declared with the static shape {dims} in "
                   f"{args.output} (was {_feeds.declaration(declared[name])}): the folded "
                   "scales hold for that shape only (--input-shape)")
    warn_all(args, [f"not folded: {name}: its scales depend on values known only at run time "
                    "(symbolic input dimensions or data); give concrete shapes with "
                    "--input-shape NAME=D0,D1,... if they come from input shapes"
                    for name in not_folded])
    if args.json:
        print_json({"command": "fold", "model": args.model, "output": args.output,
                    "input_shapes": shapes, "computed": before,
                    "folded": before - len(not_folded), "not_folded": not_folded,
                    "warnings": _warnings(args)})
    return EXIT_OK


# --------------------------------------------------------------------------- run


def _cmd_run(args: argparse.Namespace) -> int:
    from ..onnx import _feeds
    from ..onnx._evaluator import reference_evaluator

    directory = args.output_dir
    if directory is not None and os.path.exists(directory) and not os.path.isdir(directory):
        raise UpsampleError(f"--output-dir {directory!r} is a file; give a directory (it is "
                            "created if missing)")
    model = load_model(args.model, "all")
    feeds = read_inputs(args.input)
    inputs = _feeds.graph_inputs(model)
    if args.random:
        feeds |= _feeds.random_feeds(inputs, feeds, _feeds.scales_inputs(model), args.seed)
    _feeds.check_feeds(inputs, feeds)
    with caught_warnings() as caught:
        try:
            session = reference_evaluator(model, legacy_modes=args.legacy_modes)
            results = session.run(None, feeds)
        except UpsampleError:
            raise
        except Exception as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise UpsampleError(
                f"the model failed to run: {type(error).__name__}: {first}") from None
    warn_all(args, [item.message for item in caught])
    arrays = {name: np.asarray(value)
              for name, value in zip(session.output_names, results, strict=True)}
    if directory is not None:
        # every output checked before any is written: all of them, or none
        arrays = {name: npy_ready(name, array) for name, array in arrays.items()}
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
        print_json({"command": "run", "model": args.model,
                    "inputs": {name: describe_array(np.asarray(value))
                               for name, value in feeds.items()},
                    "outputs": outputs, "warnings": _warnings(args)})
    return EXIT_OK
