"""``onnx-upsample upgrade | downgrade | fold``: ONNX models with Upsample rewritten, from the
command line.

The commands parse their arguments, call onnx_upsample.onnx (``upgrade``, ``downgrade``,
``fold_scales``; ``verify.verify_upgrade`` for ``upgrade --verify``, whose result they print
line by line) and print, following cli/_common.py's conventions (``-q``, ``--json``, notes on
stdout, warnings and errors on stderr). Every fix they print is the command to type, for the
user's own model. onnx (and, for ``upgrade --verify``, onnxruntime) is imported inside the
handlers only, so ``onnx-upsample --help`` and the core commands work without the ``onnx``
extra.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .._errors import UpsampleError
from .._spec.spelling import OPTIONS
from .._spec.versions import DEFAULT_DOWNGRADE_OPSET, DOWNGRADE_OPSETS, RESIZE_OPSET
from ._common import EXIT_FINDINGS, EXIT_OK, add_output_options, note, print_json, problem
from ._models_io import (
    add_input_options,
    caught_warnings,
    check_model_output,
    hinted,
    kept_warnings,
    load_model,
    parse_shapes,
    read_inputs,
    save_model,
    warn_all,
)

if TYPE_CHECKING:
    import numpy as np

    from ..onnx._external import ModelProto

# the arrays, shapes and seed of --verify's inputs, checked
_Inputs = tuple["dict[str, np.ndarray]", "dict[str, list[int]]", int]

__all__ = ["register"]


def _upgrade_fields() -> dict[str, str]:
    """The default opset the help names, from ``upgrade`` (read when the help is shown)."""
    from ..onnx.convert import DEFAULT_UPGRADE_OPSET

    return {"default_opset": str(DEFAULT_UPGRADE_OPSET)}


def register(subparsers: Any) -> None:
    """Add the ``upgrade``, ``downgrade`` and ``fold`` subcommands."""
    upgrade = subparsers.add_parser(
        "upgrade", help="turn every Upsample into a Resize with identical outputs",
        fields=_upgrade_fields,
        description="Write a copy of MODEL at opset N where every Upsample is a Resize that "
        "onnxruntime runs bit-identically, and every other node went through onnx's version "
        "converter.")
    upgrade.add_argument("model", help="the .onnx file")
    upgrade.add_argument("-o", "--output", required=True, help="the upgraded .onnx file")
    upgrade.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    upgrade.add_argument("--opset", type=int, default=None, metavar="N",
                         help="target opset, 10 to the newest onnx knows (default: "
                         "{default_opset}, which the runtimes in use load)")
    upgrade.add_argument("--allow-downscale", action="store_true",
                         help="convert an Upsample whose scales shrink (below 1, which "
                         "Upsample refuses; tf2onnx wrote them) into the Resize it literally "
                         "means, with a warning that the exporter may have meant another "
                         "convention")
    upgrade.add_argument("--verify", action="store_true",
                         help="run both models in onnxruntime (optimization level "
                         "ORT_ENABLE_EXTENDED) on the same inputs, under which every Upsample "
                         "enlarges where shapes allow, and compare every output and each "
                         "Upsample with its Resize; nodes onnxruntime refuses run alone in "
                         "onnx-upsample; exit 1 unless all are bit-identical (a difference at "
                         "the default level only is a note)")
    upgrade.add_argument("--keep-unverified", action="store_true",
                         help="with --verify: write OUTPUT even when the verification fails, "
                         "to inspect it (the exit status stays 1)")
    add_input_options(upgrade, condition="with --verify: ")
    add_output_options(upgrade, json_help="print what was rewritten and the verification as "
                       "one JSON object")
    upgrade.set_defaults(handler=hinted(_cmd_upgrade))

    downgrade = subparsers.add_parser(
        "downgrade", help="turn Upsample-equivalent Resize nodes back into Upsample (or "
        "Resize-10)",
        description="Write a copy of MODEL at opset N "
        f"({', '.join(map(str, DOWNGRADE_OPSETS))}) where every Resize that computes an "
        "Upsample (asymmetric, floor/linear, scales >= 1) is an Upsample again, with identical "
        f"outputs (onnx_upsample.onnx.downgrade); at opset {RESIZE_OPSET}, where Upsample is "
        f"deprecated, every Resize that computes a Resize-{RESIZE_OPSET} (asymmetric, linear, "
        "or nearest rounding down where the scales are >= 1 and up where they are < 1) is a "
        f"Resize-{RESIZE_OPSET}, and every Upsample too.")
    downgrade.add_argument("model", help="the .onnx file")
    downgrade.add_argument("-o", "--output", required=True, help="the downgraded .onnx file")
    downgrade.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    downgrade.add_argument("--opset", type=int, default=DEFAULT_DOWNGRADE_OPSET,
                           choices=DOWNGRADE_OPSETS,
                           help=f"target opset: 7 or 8 (Upsample-7), 9 (Upsample-9) or "
                           f"{RESIZE_OPSET} (Resize-{RESIZE_OPSET}); default "
                           f"{DEFAULT_DOWNGRADE_OPSET}")
    add_output_options(downgrade, json_help="print what was rewritten as one JSON object")
    downgrade.set_defaults(handler=hinted(_cmd_downgrade))

    fold = subparsers.add_parser(
        "fold", help="store computed Upsample and Resize scales as constants where they are "
        "static",
        description="Write a copy of MODEL where every Upsample or Resize whose scales are "
        "computed from static values (shapes, constants) reads them from an initializer "
        "(onnx_upsample.onnx.fold_scales); says which nodes it could not fold and why.")
    fold.add_argument("model", help="the .onnx file")
    fold.add_argument("-o", "--output", required=True, help="the folded .onnx file")
    fold.add_argument("--overwrite", action="store_true",
                       help="allow -o to be the input model (it is replaced)")
    fold.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                      help="a concrete shape for a graph input with symbolic dimensions "
                      "(repeatable); the written model declares it where scales were folded, "
                      "as they hold for that shape only")
    add_output_options(fold, json_help="print what was folded as one JSON object")
    fold.set_defaults(handler=hinted(_cmd_fold))


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


# --------------------------------------------------------------------------- upgrade


def _verify_inputs(args: argparse.Namespace, model: ModelProto) -> _Inputs:
    """Read and check the inputs of ``--verify`` before the conversion: a bad one is refused
    before anything is said or written."""
    from ..onnx._feeds import checked_inputs, graph_inputs

    return checked_inputs(graph_inputs(model), read_inputs(args.input),
                          parse_shapes(args.input_shape), args.seed)


def _verify(args: argparse.Namespace, original: ModelProto, upgraded: ModelProto,
            checked: _Inputs) -> tuple[int, dict[str, Any]]:
    """Print onnx_upsample.onnx.verify's verification of the upgrade: EXIT_OK if verified,
    else EXIT_FINDINGS, and the verification for ``--json``."""
    from ..onnx._external import loaded_from
    from ..onnx.verify import verify_upgrade

    # the upgrade itself reads no external data; running both models needs all of it
    fix = "leave out --verify (the upgrade itself does not need to load the data)"
    inputs, shapes, seed = checked
    verification = verify_upgrade(loaded_from(original, args.model, fix),
                                  loaded_from(upgraded, args.model, fix), inputs=inputs,
                                  input_shapes=shapes, seed=seed)
    for kind, text in verification.lines(OPTIONS):
        if kind == "note":
            note(args, text)
        elif kind == "warning":
            warn_all(args, [text])
        else:
            problem(text)
    return EXIT_OK if verification.verified else EXIT_FINDINGS, verification.to_dict()


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from ..onnx import upgrade
    from ..onnx.convert import DEFAULT_UPGRADE_OPSET, rewrites

    check_model_output(args.output, args.model, args.overwrite)
    opset = DEFAULT_UPGRADE_OPSET if args.opset is None else args.opset
    for option, given in (("--input", args.input), ("--input-shape", args.input_shape),
                          ("--keep-unverified", args.keep_unverified)):
        if given and not args.verify:
            raise UpsampleError(f"{option} is used with --verify only")
    model = load_model(args.model)
    checked = _verify_inputs(args, model) if args.verify else None
    with caught_warnings() as caught:
        upgraded = upgrade(model, opset=opset, allow_downscale=args.allow_downscale)
    warn_all(args, [item.message for item in caught])
    document = {"command": "upgrade", **_conversion_line(
        args, model, upgraded, rewrites(model, opset, "upgrade"))}
    code, written, verification = EXIT_OK, True, None
    if checked is not None:
        # verified before anything is written: a failed verification leaves no output
        # unless --keep-unverified asks for it
        code, verification = _verify(args, model, upgraded, checked)
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
                    "verification": verification,
                    "warnings": kept_warnings(args)})
    return code


# --------------------------------------------------------------------------- downgrade, fold


def _cmd_downgrade(args: argparse.Namespace) -> int:
    from ..onnx import downgrade
    from ..onnx.convert import rewrites

    check_model_output(args.output, args.model, args.overwrite)
    model = load_model(args.model)
    with caught_warnings() as caught:
        lowered = downgrade(model, opset=args.opset)
    warn_all(args, [item.message for item in caught])
    save_model(lowered, args.output, args.model)
    document = _conversion_line(args, model, lowered, rewrites(model, args.opset, "downgrade"))
    if args.json:
        print_json({"command": "downgrade", **document, "warnings": kept_warnings(args)})
    return EXIT_OK


def _cmd_fold(args: argparse.Namespace) -> int:
    from ..onnx import _feeds, fold_scales
    from ..onnx._fold import ScalesNotFolded, computed_scales

    check_model_output(args.output, args.model, args.overwrite)
    model = load_model(args.model)
    shapes = parse_shapes(args.input_shape)
    declared = {value.name: value for value in _feeds.graph_inputs(model)}
    with caught_warnings() as caught:
        folded = fold_scales(model, input_shapes=shapes or None)
    # the library's warning for scales left computed names its Python argument; here each
    # node gets a line naming the option
    not_folded = [name for item in caught if isinstance(item.message, ScalesNotFolded)
                  for name in item.message.nodes]
    warn_all(args, [item.message for item in caught
                    if not isinstance(item.message, ScalesNotFolded)])
    save_model(folded, args.output, args.model)
    before = computed_scales(model)
    note(args, f"{args.model} -> {args.output}: {before - len(not_folded)} of {before} "
               "computed scales folded")
    now = {value.name: value for value in _feeds.graph_inputs(folded)}
    for name, dims in shapes.items():
        if now[name] == declared[name]:
            note(args, f"input {name!r} keeps its declaration in {args.output} "
                       f"({_feeds.declaration(declared[name])}): no scales were folded for the "
                       "shape --input-shape gives")
        else:
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
                    "warnings": kept_warnings(args)})
    return EXIT_OK
