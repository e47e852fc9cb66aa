"""``onnx-upsample conformance export | run`` and ``explain``: the conformance suite, the
grader of runtimes, and the explainer of another runtime's output."""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from .._errors import UpsampleError
from ._common import EXIT_BAD_INPUT, EXIT_OK, _Parser, fail


def register(subparsers: Any) -> None:
    """Add ``conformance export``, ``conformance run`` and ``explain``."""
    conformance = subparsers.add_parser(
        "conformance", help="export the Upsample conformance suite, or grade a runtime on it",
        description="The ONNX Upsample conformance suite (versions 1, 7, 9, 10; both modes; "
        "the spec's 15 element types; ranks 0-6; special values) in onnx's backend-test "
        "layout, and a grader that runs it in any runtime and explains its differences.")
    commands = conformance.add_subparsers(dest="conformance_command", required=True,
                                          parser_class=_Parser, metavar="{export,run}")
    export = commands.add_parser(
        "export", help="write the suite to a directory",
        description="Write the suite to DIR (DIR/upsample/test_upsample_<case>/model.onnx and "
        "test_data_set_0/*.pb, plus DIR/manifest.json). Every expected output is checked "
        "against onnx-upsample's reference and, when installed, onnxruntime first.")
    export.add_argument("directory", metavar="DIR", help="new or empty directory, or an "
                        "earlier export to replace")
    export.add_argument("--full", action="store_true",
                        help="add the large cases (about 55 MB in all, 3 minutes)")
    export.add_argument("--no-ort-check", action="store_true",
                        help="do not check the cases against onnxruntime")
    export.add_argument("--quiet", action="store_true", help="no progress, no summary")
    export.set_defaults(handler=_cmd_export)

    run = commands.add_parser(
        "run", help="grade one or more runtimes on the suite",
        description="Run every case in each backend, in an isolated worker process (restarted "
        "after a crash or time-out), and grade it: exact, within 1 ULP, wrong, wrong shape, "
        "refused, crashed, timed out. Outputs that are not exact are explained. Exit 0 when "
        "the grading ran, whatever the grades.")
    run.add_argument("--backend", action="append", required=True, metavar="NAME",
                     help="onnxruntime, onnx-reference, onnx-reference+onnx-upsample, "
                     "openvino, tract, tinygrad, tvm, package.module:callable, or a module "
                     "implementing onnx.backend.base.Backend; repeat for several")
    run.add_argument("--suite", metavar="DIR",
                     help="an exported suite (default: export the default suite to a "
                     "temporary directory first)")
    run.add_argument("--cases", metavar="PATTERN",
                     help="only the case IDs matching this shell pattern, e.g. 'rank*'")
    run.add_argument("--timeout", type=float, default=60.0, metavar="S",
                     help="seconds one case may take (default 60)")
    run.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    run.add_argument("--markdown", metavar="FILE", help="write a Markdown report")
    run.add_argument("--html", metavar="FILE", help="write an HTML report")
    run.add_argument("--no-explain", action="store_true",
                     help="do not explain the outputs that are not exact")
    run.add_argument("--verbose", action="store_true",
                     help="list every case that is not exact, with its explanation")
    run.set_defaults(handler=_cmd_run)

    explain = subparsers.add_parser(
        "explain", help="name the convention that reproduces another runtime's output",
        description="Given Upsample's input and another runtime's output (both .npy), try "
        "the conventions runtimes use (Resize's coordinate modes and nearest modes, "
        "reciprocal multiply, rounded or ceiled sizes, float64, accumulation order, integer "
        "rounding) and name the one that reproduces it.")
    explain.add_argument("input", metavar="INPUT.npy", help="the Upsample input")
    explain.add_argument("theirs", metavar="THEIRS.npy", help="the other runtime's output")
    explain.add_argument("--scales", type=float, nargs="+", required=True, metavar="S",
                         help="one scale per axis, space separated")
    explain.add_argument("--mode", default="nearest", help="nearest (default) or linear")
    explain.add_argument("--json", action="store_true", help="print the explanation as JSON")
    explain.set_defaults(handler=_cmd_explain)


class _Progress:
    """One progress line on stderr, rewritten in place on a terminal."""

    def __init__(self, verb: str, quiet: bool = False) -> None:
        self.verb = verb
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = -1

    def __call__(self, done: int, total: int, case_id: str, *rest: str) -> None:
        if self.quiet:
            return
        if self.tty:
            end = "\n" if done == total else ""
            print(f"\r{self.verb} {done}/{total} {case_id:<40}", end=end, file=sys.stderr,
                  flush=True)
        elif done * 10 // total != self.last or done == total:
            self.last = done * 10 // total
            print(f"{self.verb} {done}/{total}", file=sys.stderr, flush=True)


def _cmd_export(args: argparse.Namespace) -> int:
    from .. import conformance

    suite = conformance.export(args.directory, full=args.full,
                               check_ort=not args.no_ort_check,
                               progress=_Progress("exporting case", args.quiet))
    if not args.quiet:
        size = sum(p.stat().st_size for p in Path(args.directory).rglob("*") if p.is_file())
        print(f"wrote {len(suite.cases)} cases to {args.directory} (suite {suite.version}, "
              f"{suite.content_hash}, {size / 2**20:.1f} MiB), checked against "
              f"{', '.join(suite.manifest['checked_against'])}")
        for note in suite.manifest["notes"]:
            print(f"note: {note}")
    return EXIT_OK


def _writable(path: str | None) -> None:
    """Checked before the run, not after it."""
    if path is None:
        return
    if Path(path).is_dir():
        raise UpsampleError(f"report {path!r} is a directory; give a file name")
    if not Path(path).absolute().parent.is_dir():
        raise UpsampleError(f"report {path!r}: its folder does not exist; create it first")


def _cmd_run(args: argparse.Namespace) -> int:
    from .. import conformance
    from ..conformance import _report
    from ..io.atomic import atomic_path

    for path in (args.json, args.markdown, args.html):
        _writable(path)
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UpsampleError(f"--timeout is {args.timeout:g}; give a finite number of seconds "
                            "> 0")
    selected = None
    if args.cases:
        pattern = args.cases
        selected = lambda case_id: fnmatch.fnmatchcase(case_id, pattern)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="onnx-upsample-suite-") as scratch:
        if args.suite is None:
            print("exporting the default suite to a temporary directory "
                  "(use 'conformance export DIR' and --suite DIR to keep it)", file=sys.stderr)
            suite = conformance.export(Path(scratch) / "suite", check_ort=False,
                                       progress=_Progress("exporting case"))
        else:
            suite = conformance.load(args.suite)
        if selected is not None and not any(selected(c.id) for c in suite.cases):
            raise UpsampleError(f"--cases {args.cases!r} matches no case of the suite; see "
                                "the IDs in its manifest.json")
        runs, unavailable = [], []
        for backend in args.backend:
            print(f"{backend}: starting its worker", file=sys.stderr, flush=True)
            try:
                runs.append(conformance.run(backend, suite, timeout=args.timeout,
                                            cases=selected, explain=not args.no_explain,
                                            progress=_Progress(f"{backend}: case")))
            except UpsampleError as error:  # one missing runtime must not lose the others
                if not runs and len(args.backend) == 1:
                    raise
                unavailable.append(str(error))
    if not runs:
        raise UpsampleError("; ".join(unavailable))
    print(_report.terminal(runs, verbose=args.verbose))
    for path, text in ((args.json, _report.to_json(runs, suite.manifest)),
                       (args.markdown, _report.markdown(runs, suite.manifest)),
                       (args.html, _report.to_html(runs, suite.manifest))):
        if path is not None:
            with atomic_path(path) as temporary:
                Path(temporary).write_text(text)
            print(f"wrote {path}")
    for message in unavailable:  # after the reports: the runs that did work are kept
        fail(message)
    return EXIT_BAD_INPUT if unavailable else EXIT_OK


def _cmd_explain(args: argparse.Namespace) -> int:
    from ..conformance import explain
    from ..io.formats import read_npy

    x = read_npy(args.input)
    theirs = read_npy(args.theirs)
    explanation = explain(x, theirs, args.scales, args.mode)
    if args.json:
        print(json.dumps(explanation.to_dict(), indent=1))
    else:
        print(explanation.summary)
        for name in explanation.matches[1:6]:
            print(f"  also reproduced by: {name}")
    return EXIT_OK
