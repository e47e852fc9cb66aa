"""``onnx-upsample inspect | check | upgrade | downgrade | fold | run``: ONNX models with
Upsample, from the command line.

The commands parse their arguments, call onnx_upsample.onnx (``verify`` for ``upgrade
--verify``, ``_feeds`` for the inputs of ``run``) and print. onnx (and, for ``upgrade
--verify``, onnxruntime) is imported inside the handlers only, so ``onnx-upsample --help`` and
the core commands work without the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import UpsampleError, UpsampleWarning
from ._common import EXIT_FINDINGS, EXIT_OK, warn

if TYPE_CHECKING:
    from ..onnx._external import ModelProto

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``inspect``, ``check``, ``upgrade``, ``downgrade``, ``fold`` and ``run``
    subcommands."""
    inspect = subparsers.add_parser(
        "inspect", help="list the Upsample nodes of an ONNX model and what is wrong with them",
        description="A table of the model's Upsample nodes (name, version, mode, scales, "
        "input and output shapes) and every finding of onnx_upsample.onnx.check with its "
        "fix. Exit 1 if there are errors.")
    inspect.add_argument("model", help="the .onnx file")
    inspect.set_defaults(handler=_cmd_inspect)

    upgrade = subparsers.add_parser(
        "upgrade", help="turn every Upsample into a Resize with identical outputs",
        description="Write a copy of MODEL at opset N where every Upsample is a Resize that "
        "onnxruntime runs bit-identically, and every other node went through onnx's version "
        "converter.")
    upgrade.add_argument("model", help="the .onnx file")
    upgrade.add_argument("-o", "--output", required=True, help="the upgraded .onnx file")
    upgrade.add_argument("--opset", type=int, default=18, metavar="N",
                         help="target opset, 10 to the newest onnx knows (default: 18, which "
                         "the runtimes in use load)")
    upgrade.add_argument("--verify", action="store_true",
                         help="run both models in onnxruntime on the same random inputs and "
                         "report the largest difference per output; exit 1 unless all are 0")
    upgrade.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                         help="with --verify: use this array for input NAME (repeatable)")
    upgrade.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    upgrade.set_defaults(handler=_cmd_upgrade)

    check = subparsers.add_parser(
        "check", help="the findings of onnx_upsample.onnx.check; exit 1 if there are errors",
        description="Every finding (severity, node, message, fix) of onnx_upsample.onnx.check "
        "for MODEL, one per line or as JSON for CI pipelines. Exit 1 if there are errors.")
    check.add_argument("model", help="the .onnx file")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    check.set_defaults(handler=_cmd_check)

    downgrade = subparsers.add_parser(
        "downgrade", help="turn Upsample-equivalent Resize nodes back into Upsample",
        description="Write a copy of MODEL at opset N (7, 8 or 9) where every Resize that "
        "computes an Upsample (asymmetric, floor/linear, scales >= 1) is an Upsample again, "
        "with identical outputs (onnx_upsample.onnx.downgrade).")
    downgrade.add_argument("model", help="the .onnx file")
    downgrade.add_argument("-o", "--output", required=True, help="the downgraded .onnx file")
    downgrade.add_argument("--opset", type=int, default=9, choices=(7, 8, 9),
                           help="target opset (default 9)")
    downgrade.set_defaults(handler=_cmd_downgrade)

    fold = subparsers.add_parser(
        "fold", help="store computed Upsample scales as constants where they are static",
        description="Write a copy of MODEL where every Upsample whose scales are computed "
        "from static values (shapes, constants) reads them from an initializer "
        "(onnx_upsample.onnx.fold_scales); says which nodes it could not fold and why.")
    fold.add_argument("model", help="the .onnx file")
    fold.add_argument("-o", "--output", required=True, help="the folded .onnx file")
    fold.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                      help="a concrete shape for a graph input with symbolic dimensions "
                      "(repeatable)")
    fold.set_defaults(handler=_cmd_fold)

    run = subparsers.add_parser(
        "run", help="run an ONNX model with every Upsample version (onnx's reference evaluator)",
        description="Run MODEL with onnx.reference.ReferenceEvaluator and onnx-upsample's "
        "Upsample (versions 1, 7, 9, 10; bit-identical to onnxruntime 1.32).")
    run.add_argument("model", help="the .onnx file")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                     help="the value of graph input NAME (repeat for each input)")
    run.add_argument("--output-dir", default=None, metavar="DIR",
                     help="write each output to DIR/NAME.npy")
    run.add_argument("--random", action="store_true",
                     help="random values for the inputs not given with --input (as upgrade "
                     "--verify makes them; symbolic dimensions become 8)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    run.add_argument("--legacy-modes", action="store_true",
                     help="run modes written in upper or mixed case by old converters "
                     "('NEAREST', 'BILINEAR') as their lower-case names, with a warning")
    run.set_defaults(handler=_cmd_run)


def _load_model(path: str, which: str = "small") -> ModelProto:
    """The model at ``path``, read safely (see onnx/_external.py): its small external
    tensors loaded (``which="all"``: every tensor, to run it)."""
    from ..onnx import _external

    if not os.path.exists(path):
        raise UpsampleError(f"model file {path!r} does not exist")
    if os.path.isdir(path):
        raise UpsampleError(f"model {path!r} is a directory; give the .onnx file")
    try:
        model = _external.load(path, which)  # type: ignore[arg-type]
    except UpsampleError:
        raise
    except Exception as error:  # protobuf DecodeError, unreadable files, ...
        if type(error).__name__ == "DecodeError":
            raise UpsampleError(f"{path!r} is not an ONNX model (its bytes are not an ONNX "
                                 "ModelProto); give a .onnx file") from None
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UpsampleError(f"cannot read {path!r} as an ONNX model: "
                        f"{type(error).__name__} {first}".rstrip()) from None
    if not model.graph.node and not model.graph.input and not model.opset_import:
        raise UpsampleError(f"{path!r} is not an ONNX model (it holds no graph and no "
                             "opset); give a .onnx file")
    return model


def _with_all_data(model: ModelProto, source: str) -> ModelProto:
    """A copy of ``model`` with every external tensor (relative to ``source``'s folder)
    loaded, for onnxruntime; refused when the whole would pass protobuf's 2 GiB."""
    from ..onnx import _external

    if not _external.external_tensors(model):
        return model
    base = os.path.dirname(os.path.abspath(source))
    total = _external.check_locations(model, base) + model.ByteSize()
    if total > _external.PROTOBUF_LIMIT:
        raise UpsampleError("the model with its external data passes protobuf's 2 GiB, which "
                             "onnxruntime cannot take from memory: leave out --verify (the "
                             "upgrade itself does not need to load the data)")
    return _external.with_all_data(model, base)


def _read_inputs(items: Sequence[str]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UpsampleError(f"--input {item!r}: expected NAME=FILE.npy")
        if name in feeds:
            raise UpsampleError(f"--input gives {name!r} twice")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise UpsampleError(f"--input {name}: file {path!r} does not exist") from None
        except (OSError, ValueError) as error:
            raise UpsampleError(f"--input {name}: cannot read {path!r} as a .npy array: "
                            f"{error}") from None
    return feeds


def _warning_lines(caught: list[warnings.WarningMessage]) -> None:
    """Each distinct warning once, as the command line words warnings."""
    for text in dict.fromkeys(str(item.message) for item in caught):
        warn(text)


# --------------------------------------------------------------------------- inspect


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows,
                                                                       strict=True)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
             .rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from ..onnx import check
    from ..onnx._graphs import default_opset
    from ..onnx._report import upsample_rows

    model = _load_model(args.model)
    findings = check(model)
    rows = upsample_rows(model)
    producer = " ".join(p for p in (model.producer_name, model.producer_version) if p)
    print(f"{args.model}: opset {default_opset(model.opset_import)}, IR version "
          f"{model.ir_version}" + (f", produced by {producer}" if producer else ""))
    if rows:
        print()
        print(_table(("node", "version", "mode", "scales", "input", "output"),
                     [(r.node, r.form, r.mode, r.scales, r.input_shape, r.output_shape)
                      for r in rows]))
    errors = sum(f.severity == "error" for f in findings)
    if findings:
        print()
        for finding in findings:
            print(f"{finding.severity:<7}  {finding.node}: {finding.message}")
            print(f"{'':<7}  fix: {finding.fix}")
    print()
    print(f"{len(rows)} Upsample node(s), {errors} error(s), {len(findings) - errors} "
          "warning(s)")
    return EXIT_FINDINGS if errors else EXIT_OK


# --------------------------------------------------------------------------- upgrade


def _check_output_path(path: str) -> str:
    """The folder that will hold output ``path``; a bad path is refused before any work."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UpsampleError(f"output directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise UpsampleError(f"output {path!r} is a directory; give a file name such as "
                             f"{os.path.join(path, 'model.onnx')!r}")
    return directory


def _save_model(model: ModelProto, path: str, source: str | None = None) -> None:
    """Write ``model`` atomically (through io.atomic, the package's one atomic writer);
    its external data (relative to ``source``'s folder) is copied beside ``path`` where that
    is another folder."""
    from ..io.atomic import atomic_path
    from ..onnx import _external

    _check_output_path(path)
    source_base = None if source is None else os.path.dirname(os.path.abspath(source))
    with atomic_path(path) as temporary:
        _external.save(model, temporary, source_base)


def _verify(original: ModelProto, upgraded: ModelProto, given: dict[str, np.ndarray],
            seed: int) -> int:
    """Run ``original`` and ``upgraded`` on the same inputs (onnx_upsample.onnx.verify) and
    print the comparison; EXIT_OK if every output is bit-identical, else EXIT_FINDINGS."""
    from ..onnx import _feeds, verify

    try:
        verify.import_onnxruntime()
    except ImportError:
        raise UpsampleError("--verify needs onnxruntime: pip install onnxruntime") from None
    runnable = verify.runnable_original(original)
    if runnable.note:
        print(runnable.note)
    feeds = _feeds.verification_feeds(runnable.model, original, given, seed)
    _feeds.check_tensor_sizes(runnable.model, feeds)
    outputs = verify.compare(runnable, upgraded, feeds, labels=("original", "upgraded"))
    rows = [(output.name, "x".join(map(str, output.shape)) or "scalar", f"{output.largest:g}",
             "yes" if output.identical else "NO") for output in outputs]
    identical = all(output.identical for output in outputs)
    print(_table(("output", "shape", "largest difference", "bit-identical"), rows))
    print("verified: outputs are bit-identical" if identical else
          "verification FAILED: the upgraded model gives different outputs")
    return EXIT_OK if identical else EXIT_FINDINGS


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from ..onnx import upgrade
    from ..onnx._graphs import default_opset, is_upsample, walk

    _check_output_path(args.output)
    model = _load_model(args.model)
    given = _read_inputs(args.input) if args.verify else {}
    if args.input and not args.verify:
        raise UpsampleError("--input is used by --verify only")
    count = sum(is_upsample(node) for site in walk(model) for node in site.owner.node)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        upgraded = upgrade(model, opset=args.opset)
    _warning_lines(caught)
    summary = (f"{args.model} (opset {default_opset(model.opset_import)}) -> {args.output} "
               f"(opset {default_opset(upgraded.opset_import)}): {count} Upsample node(s) "
               "became Resize")
    if args.verify:
        # verified before anything is written: a failed verification leaves no output
        print(summary)
        code = _verify(_with_all_data(model, args.model), _with_all_data(upgraded, args.model),
                       given, args.seed)
        if code != EXIT_OK:
            print(f"{args.output} was not written", file=sys.stderr)
            return code
        _save_model(upgraded, args.output, args.model)
        return EXIT_OK
    _save_model(upgraded, args.output, args.model)
    print(summary)
    return EXIT_OK


# --------------------------------------------------------------------------- check, fold


def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from ..onnx import check

    findings = check(_load_model(args.model))
    errors = sum(f.severity == "error" for f in findings)
    if args.json:
        print(json.dumps([{"severity": f.severity, "node": f.node, "code": f.code,
                           "message": f.message, "fix": f.fix} for f in findings], indent=2))
    else:
        for finding in findings:
            print(f"{finding.severity}: {finding.node}: {finding.message} Fix: {finding.fix}")
        print(f"{args.model}: {errors} error(s), {len(findings) - errors} warning(s)")
    return EXIT_FINDINGS if errors else EXIT_OK


def _cmd_downgrade(args: argparse.Namespace) -> int:
    from ..onnx import downgrade
    from ..onnx._graphs import default_opset

    _check_output_path(args.output)
    model = _load_model(args.model)
    resizes = sum(node.op_type == "Resize" for node in model.graph.node)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        lowered = downgrade(model, opset=args.opset)
    _warning_lines(caught)
    left = sum(node.op_type == "Resize" for node in lowered.graph.node)
    _save_model(lowered, args.output, args.model)
    print(f"{args.model} (opset {default_opset(model.opset_import)}) -> {args.output} (opset "
          f"{default_opset(lowered.opset_import)}): {resizes - left} Resize node(s) became "
          "Upsample")
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


def _cmd_fold(args: argparse.Namespace) -> int:
    from ..onnx import fold_scales
    from ..onnx._graphs import is_upsample, walk

    _check_output_path(args.output)
    model = _load_model(args.model)
    shapes = _parse_shapes(args.input_shape)
    unknown = sorted(set(shapes) - {value.name for value in model.graph.input})
    if unknown:
        raise UpsampleError(f"--input-shape names {unknown}, which are not inputs of the "
                             "model")
    folded = fold_scales(model, input_shapes=shapes or None)
    _save_model(folded, args.output, args.model)

    def computed(m: Any) -> list[str]:
        names = []
        for site in walk(m):
            # a model-local function has no initializers: its constants are Constant nodes
            initializers = getattr(site.owner, "initializer", ())
            constants = {t.name for t in initializers} | {
                o for n in site.owner.node if n.op_type == "Constant" for o in n.output}
            for index, node in enumerate(site.owner.node):
                if is_upsample(node) and len(node.input) > 1 and node.input[1] not in constants:
                    names.append(node.name or f"Upsample#{index}")
        return names

    before, after = computed(model), computed(folded)
    print(f"{args.model} -> {args.output}: {len(before) - len(after)} of {len(before)} "
          "computed scales folded")
    for name in after:
        print(f"not folded: {name}: its scales depend on values known only at run time "
              "(symbolic input dimensions or data); give concrete shapes with --input-shape "
              "NAME=D0,D1,... if they come from input shapes")
    return EXIT_OK


# --------------------------------------------------------------------------- run


def _save_npy(path: str, array: np.ndarray) -> None:
    """Write ``array`` atomically: never a half-written output."""
    from ..io.atomic import atomic_path

    if os.path.isdir(path):
        raise UpsampleError(f"output {path!r} is a directory")
    with atomic_path(path) as temporary, open(temporary, "wb") as stream:
        np.save(stream, array, allow_pickle=array.dtype.kind == "O")


def _file_name(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    return (safe or "output") + ".npy"


def _describe(array: np.ndarray) -> str:
    """dtype, shape and range, numbers in the array's own precision (float32 digits)."""
    line = f"{array.dtype} {list(array.shape)}"
    if array.size and array.dtype.kind in "biuf":
        line += f", min {array.min()!s}, max {array.max()!s}"
    return line


def _cmd_run(args: argparse.Namespace) -> int:
    from ..onnx import _feeds
    from ..onnx._evaluator import reference_evaluator

    model = _load_model(args.model, "all")
    feeds = _read_inputs(args.input)
    inputs = _feeds.graph_inputs(model)
    if args.random:
        feeds |= _feeds.random_feeds(inputs, feeds, _feeds.scales_inputs(model), args.seed)
    _feeds.check_feeds(inputs, feeds)
    if args.output_dir is not None and not os.path.isdir(args.output_dir):
        raise UpsampleError(f"--output-dir {args.output_dir!r} is not a directory")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        try:
            session = reference_evaluator(model, legacy_modes=args.legacy_modes)
            results = session.run(None, feeds)
        except UpsampleError:
            raise
        except Exception as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise UpsampleError(
                f"the model failed to run: {type(error).__name__}: {first}") from None
    _warning_lines(caught)
    for name, value in zip(session.output_names, results, strict=True):
        array = np.asarray(value)
        line = f"{name}: {_describe(array)}"
        if args.output_dir is not None:
            path = os.path.join(args.output_dir, _file_name(name))
            _save_npy(path, array)
            line += f" -> {path}"
        print(line)
    return EXIT_OK
