"""``onnx-upsample inspect | check | upgrade | downgrade | fold | run``: ONNX models with
Upsample, from the command line.

onnx (and, for ``upgrade --verify``, onnxruntime) is imported inside the handlers only, so
``onnx-upsample --help`` and the core commands work without the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._errors import UpsampleError, UpsampleWarning
from .cli import EXIT_FINDINGS, EXIT_OK, fail

if TYPE_CHECKING:
    import onnx

__all__ = ["register"]

# Size given to symbolic dimensions of graph inputs by ``upgrade --verify``.
FREE_DIMENSION = 8


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


class _BadInputError(Exception):
    """A command-line problem reported as one line and exit code 2."""


def _load_model(path: str, which: str = "small") -> onnx.ModelProto:
    """The model at ``path``, read safely (see onnx/_external.py): its small external
    tensors loaded (``which="all"``: every tensor, to run it)."""
    from .onnx import _external

    if not os.path.exists(path):
        raise _BadInputError(f"model file {path!r} does not exist")
    if os.path.isdir(path):
        raise _BadInputError(f"model {path!r} is a directory; give the .onnx file")
    try:
        model = _external.load(path, which)  # type: ignore[arg-type]
    except UpsampleError:
        raise
    except Exception as error:  # protobuf DecodeError, unreadable files, ...
        if type(error).__name__ == "DecodeError":
            raise _BadInputError(f"{path!r} is not an ONNX model (its bytes are not an ONNX "
                                 "ModelProto); give a .onnx file") from None
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise _BadInputError(f"cannot read {path!r} as an ONNX model: "
                        f"{type(error).__name__} {first}".rstrip()) from None
    if not model.graph.node and not model.graph.input and not model.opset_import:
        raise _BadInputError(f"{path!r} is not an ONNX model (it holds no graph and no "
                             "opset); give a .onnx file")
    return model


def _with_all_data(model: onnx.ModelProto, source: str) -> onnx.ModelProto:
    """A copy of ``model`` with every external tensor (relative to ``source``'s folder)
    loaded, for onnxruntime; refused when the whole would pass protobuf's 2 GiB."""
    import onnx
    from onnx.external_data_helper import load_external_data_for_model

    from .onnx import _external

    if not _external.external_tensors(model):
        return model
    base = os.path.dirname(os.path.abspath(source))
    total = _external.check_locations(model, base) + model.ByteSize()
    if total > _external.PROTOBUF_LIMIT:
        raise _BadInputError("the model with its external data passes protobuf's 2 GiB, which "
                             "onnxruntime cannot take from memory: leave out --verify (the "
                             "upgrade itself does not need to load the data)")
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    load_external_data_for_model(copy, base)
    return copy


def _read_inputs(items: Sequence[str]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise _BadInputError(f"--input {item!r}: expected NAME=FILE.npy")
        if name in feeds:
            raise _BadInputError(f"--input gives {name!r} twice")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise _BadInputError(f"--input {name}: file {path!r} does not exist") from None
        except (OSError, ValueError) as error:
            raise _BadInputError(f"--input {name}: cannot read {path!r} as a .npy array: "
                            f"{error}") from None
    return feeds


def _graph_inputs(model: onnx.ModelProto) -> list[Any]:
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def _warning_lines(caught: list[warnings.WarningMessage]) -> None:
    seen = set()
    for item in caught:
        text = str(item.message)
        if text not in seen:
            seen.add(text)
            print(f"onnx-upsample: warning: {text}", file=sys.stderr)


def _guard(handler: Any) -> Any:
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return int(handler(args))
        except _BadInputError as error:
            return fail(str(error))
    wrapped.__doc__ = handler.__doc__
    return wrapped


# --------------------------------------------------------------------------- inspect


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows,
                                                                       strict=True)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
             .rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


@_guard
def _cmd_inspect(args: argparse.Namespace) -> int:
    from .onnx import check
    from .onnx._graphs import default_opset
    from .onnx._report import upsample_rows

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
        raise _BadInputError(f"output directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise _BadInputError(f"output {path!r} is a directory; give a file name such as "
                             f"{os.path.join(path, 'model.onnx')!r}")
    return directory


def _save_model(model: onnx.ModelProto, path: str, source: str | None = None) -> None:
    """Write ``model`` atomically (the one writer of the command line, _files.atomic_path);
    its external data (relative to ``source``'s folder) is copied beside ``path`` where that
    is another folder."""
    from ._files import atomic_path
    from .onnx import _external

    _check_output_path(path)
    source_base = None if source is None else os.path.dirname(os.path.abspath(source))
    with atomic_path(path) as temporary:
        _external.save(model, temporary, source_base)


def _runnable_original(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """The original in a form onnxruntime loads (opset 7 or 9 Upsample), and how it was made."""
    from .onnx import check, downgrade
    from .onnx._graphs import default_opset, is_upsample, walk

    if not any(is_upsample(node) for site in walk(model) for node in site.owner.node):
        return model, ""
    opset = default_opset(model.opset_import) or 9
    codes = {finding.code for finding in check(model)}
    if opset <= 6:
        target = 7
    elif opset >= 10:
        target = 9
    elif codes & {"form-opset", "mode"}:
        target = opset
    else:
        return model, ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        rewritten = downgrade(model, opset=target)
    note = (f"onnxruntime cannot load the original (opset {opset}); it runs as the equivalent "
            f"opset-{target} Upsample model written by downgrade()")
    return rewritten, note


def _random_value(value: Any, rng: np.random.Generator, scales_inputs: dict[str, int],
                  ) -> np.ndarray:
    from onnx import helper

    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor.elem_type:
        raise _BadInputError(f"input {value.name!r} is not a tensor with a known element type; "
                        "give it with --input NAME=FILE.npy")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    dims = [d.dim_value if d.HasField("dim_value") else FREE_DIMENSION
            for d in tensor.shape.dim]
    if value.name in scales_inputs:
        rank = dims[0] if dims else scales_inputs[value.name]
        pattern = [1.0] * max(rank - 2, 0) + [1.5, 2.5][: min(rank, 2)]
        return np.array(pattern, dtype=dtype).reshape(dims)
    # np.asarray: a rank-0 input must be a 0-d array, not a numpy scalar
    if dtype.kind == "f":
        return np.asarray(rng.standard_normal(dims), dtype=dtype)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0, 100, dims), dtype=dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(dims) < 0.5)
    raise _BadInputError(f"input {value.name!r} has element type {dtype}; give it with --input "
                    "NAME=FILE.npy")


def _session(model: onnx.ModelProto, which: str) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # errors come back as one line of ours; ORT's own log would print them again, in colour
    options.log_severity_level = 4
    ort.set_default_logger_severity(4)
    try:
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:
        first = str(error).strip().splitlines()[0]
        raise _BadInputError(f"onnxruntime cannot load the {which} model: {first}") from None


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OUS":
        return bool(np.array_equal(a, b))
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                               np.ascontiguousarray(b).view(np.uint8)))


def _difference(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0 or a.dtype.kind not in "biufc":
        return 0.0 if np.array_equal(a, b) else float("inf")
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    same_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    diff = np.where(same_nan, 0.0, diff)
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))


def _has_mode_case_variants(model: onnx.ModelProto) -> bool:
    """True if an Upsample writes its mode in upper or mixed case ('NEAREST')."""
    from .onnx._graphs import is_upsample, walk
    from .onnx._node import case_variant

    return any(
        attribute.name == "mode" and case_variant(attribute.s.decode("utf-8", "replace"))
        for site in walk(model) for node in site.owner.node if is_upsample(node)
        for attribute in node.attribute
    )


def _check_tensor_sizes(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    """Refuse, before onnxruntime allocates it, a model whose largest tensor for these
    inputs cannot fit in the memory this process may use (shapes as ORT makes them)."""
    import onnx

    from ._resources import format_bytes, memory_limit
    from .onnx import infer_shapes

    available, source = memory_limit()
    if available is None:
        return
    sized = onnx.ModelProto()
    sized.CopyFrom(model)
    for value in sized.graph.input:
        if value.name in feeds and value.type.HasField("tensor_type"):
            shape = value.type.tensor_type.shape
            shape.ClearField("dim")
            for n in feeds[value.name].shape:
                shape.dim.add().dim_value = n
    try:
        typed = infer_shapes(sized)
    except Exception:  # shapes unknown: ORT will report what it cannot do
        return
    for value in [*typed.graph.value_info, *typed.graph.output]:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape") or not all(
            d.HasField("dim_value") for d in tensor.shape.dim
        ):
            continue
        dims = [int(d.dim_value) for d in tensor.shape.dim]
        try:
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).itemsize
        except (KeyError, TypeError, ValueError):
            continue
        n_bytes = math.prod(dims) * itemsize
        if n_bytes > available:
            raise _BadInputError(
                f"running the model needs tensor {value.name!r} of shape {tuple(dims)}, "
                f"which takes {format_bytes(n_bytes)}, more than {source} "
                f"({format_bytes(available)}); give smaller inputs with --input"
            )


def _verify(original: onnx.ModelProto, upgraded: onnx.ModelProto, given: dict[str, np.ndarray],
            seed: int) -> int:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise _BadInputError("--verify needs onnxruntime: pip install onnxruntime") from None
    from .onnx._graphs import is_upsample

    legacy = _has_mode_case_variants(original)
    if legacy:
        # ORT refuses the original's modes: it runs in onnx-upsample's evaluator instead
        reference = original
        print("the original writes modes in upper or mixed case, which onnxruntime refuses: "
              "it runs in onnx-upsample's evaluator (legacy_modes), the upgrade in onnxruntime")
    else:
        reference, note = _runnable_original(original)
        if note:
            print(note)
    scales_inputs = {node.input[1]: 0 for node in original.graph.node
                     if is_upsample(node) and len(node.input) > 1}
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in _graph_inputs(reference):
        feeds[value.name] = given[value.name] if value.name in given else _random_value(
            value, rng, scales_inputs)
    unknown = sorted(set(given) - set(feeds))
    if unknown:
        raise _BadInputError(f"--input names {unknown}, which are not inputs of the model")
    _check_tensor_sizes(reference, feeds)
    if legacy:
        from .onnx._evaluator import reference_evaluator

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UpsampleWarning)
            before = reference_evaluator(original, legacy_modes=True).run(None, feeds)
    else:
        before = _session(reference, "original").run(None, feeds)
    after = _session(upgraded, "upgraded").run(None, feeds)
    names = [value.name for value in upgraded.graph.output]
    rows = []
    identical = True
    for name, a, b in zip(names, before, after, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        same = _bits_equal(a, b)
        identical &= same
        rows.append((name, "x".join(map(str, b.shape)) or "scalar", f"{_difference(a, b):g}",
                     "yes" if same else "NO"))
    print(_table(("output", "shape", "largest difference", "bit-identical"), rows))
    print("verified: outputs are bit-identical" if identical else
          "verification FAILED: the upgraded model gives different outputs")
    return EXIT_OK if identical else EXIT_FINDINGS


@_guard
def _cmd_upgrade(args: argparse.Namespace) -> int:
    from .onnx import upgrade
    from .onnx._graphs import default_opset, is_upsample, walk

    _check_output_path(args.output)
    model = _load_model(args.model)
    given = _read_inputs(args.input) if args.verify else {}
    if args.input and not args.verify:
        raise _BadInputError("--input is used by --verify only")
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


@_guard
def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from .onnx import check

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


@_guard
def _cmd_downgrade(args: argparse.Namespace) -> int:
    from .onnx import downgrade
    from .onnx._graphs import default_opset

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
        if not sep or not name or any(d < 0 for d in dims):
            raise _BadInputError(f"--input-shape {item!r}: expected NAME=D0,D1,... with "
                                 "whole numbers >= 0")
        shapes[name] = dims
    return shapes


@_guard
def _cmd_fold(args: argparse.Namespace) -> int:
    from .onnx import fold_scales
    from .onnx._graphs import is_upsample, walk

    _check_output_path(args.output)
    model = _load_model(args.model)
    shapes = _parse_shapes(args.input_shape)
    unknown = sorted(set(shapes) - {value.name for value in model.graph.input})
    if unknown:
        raise _BadInputError(f"--input-shape names {unknown}, which are not inputs of the "
                             "model")
    folded = fold_scales(model, input_shapes=shapes or None)
    _save_model(folded, args.output, args.model)

    def computed(m: Any) -> list[str]:
        names = []
        for site in walk(m):
            constants = {t.name for t in site.owner.initializer} | {
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
    from ._files import atomic_path

    if os.path.isdir(path):
        raise _BadInputError(f"output {path!r} is a directory")
    with atomic_path(path) as temporary, open(temporary, "wb") as stream:
        np.save(stream, array, allow_pickle=array.dtype.kind == "O")


def _file_name(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    return (safe or "output") + ".npy"


def _signature(value: Any) -> str:
    """``X float32[1, 3, 'N', 8]``: a graph input as the model declares it."""
    from onnx import helper

    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type"):
        return f"{value.name} (not a tensor)"
    try:
        name = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)).name
    except (KeyError, TypeError, ValueError):
        name = f"elem_type {tensor.elem_type}"
    if not tensor.HasField("shape"):
        return f"{value.name} {name}[any shape]"
    dims = [str(d.dim_value) if d.HasField("dim_value") else repr(d.dim_param or "?")
            for d in tensor.shape.dim]
    return f"{value.name} {name}[{', '.join(dims)}]"


def _check_feeds(inputs: list[Any], feeds: dict[str, np.ndarray]) -> None:
    """Input names, element types and shapes against the model's declarations."""
    from onnx import helper

    listing = "; ".join(_signature(value) for value in inputs)
    expected = [value.name for value in inputs]
    unknown = sorted(set(feeds) - set(expected))
    if unknown:
        raise _BadInputError(f"--input names {unknown}, which are not inputs of the model "
                             f"(its inputs: {listing})")
    missing = [name for name in expected if name not in feeds]
    if missing:
        raise _BadInputError(f"the model needs input(s) {missing}; give each with --input "
                             f"NAME=FILE.npy, or pass --random (its inputs: {listing})")
    for value in inputs:
        array, tensor = feeds[value.name], value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            continue
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        except (KeyError, TypeError, ValueError):
            continue
        given = f"{array.dtype.name}{list(array.shape)}"
        if array.dtype.newbyteorder("=") != dtype and not (
                dtype.kind == "O" and array.dtype.kind in "OUS"):
            raise _BadInputError(f"input {value.name!r} is {given}; the model declares "
                                 f"{_signature(value)} (convert the .npy with astype)")
        if tensor.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
            if len(dims) != array.ndim or any(
                    d is not None and d != n for d, n in zip(dims, array.shape, strict=False)):
                raise _BadInputError(f"input {value.name!r} is {given}; the model declares "
                                     f"{_signature(value)}")


def _describe(array: np.ndarray) -> str:
    """dtype, shape and range, numbers in the array's own precision (float32 digits)."""
    line = f"{array.dtype} {list(array.shape)}"
    if array.size and array.dtype.kind in "biuf":
        line += f", min {array.min()!s}, max {array.max()!s}"
    return line


@_guard
def _cmd_run(args: argparse.Namespace) -> int:
    from .onnx._evaluator import reference_evaluator
    from .onnx._graphs import is_upsample

    model = _load_model(args.model, "all")
    feeds = _read_inputs(args.input)
    inputs = _graph_inputs(model)
    if args.random:
        scales_inputs = {node.input[1]: 0 for node in model.graph.node
                         if is_upsample(node) and len(node.input) > 1}
        rng = np.random.default_rng(args.seed)
        for value in inputs:
            if value.name not in feeds:
                feeds[value.name] = _random_value(value, rng, scales_inputs)
    _check_feeds(inputs, feeds)
    if args.output_dir is not None and not os.path.isdir(args.output_dir):
        raise _BadInputError(f"--output-dir {args.output_dir!r} is not a directory")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UpsampleWarning)
        try:
            session = reference_evaluator(model, legacy_modes=args.legacy_modes)
            results = session.run(None, feeds)
        except UpsampleError:
            raise
        except Exception as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise _BadInputError(
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
