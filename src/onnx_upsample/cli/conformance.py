"""``onnx-upsample conformance export | run`` and ``explain``: the conformance suite, the
grader of runtimes, and the explainer of another runtime's output."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import UpsampleError
from ._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    _Parser,
    add_output_options,
    fail,
    note,
    print_json,
    progress,
    shell_command,
)
from ._run_options import (
    DEFAULT_TIMEOUT,
    DEFAULT_WORD,
    NONE_WORD,
    backend_options,
    backend_shares,
    default_fail_on,
    default_memory,
    failures_dir_usable,
    ort_versions,
    parse_fail_on,
    replay_words,
)

#: --form choices: the Upsample models, the upgraded Resize models, or both in turn.
FORM_CHOICES = ("upsample", "upgraded", "both")


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
                        help="add the large cases (about 200 MB in all, under a minute)")
    export.add_argument("--no-ort-check", action="store_true",
                        help="do not check the cases against onnxruntime")
    add_output_options(export, json_help="print the summary (directory, version, content "
                       "hash, number of cases, notes) as one JSON object on stdout")
    export.set_defaults(handler=_cmd_export)

    run = commands.add_parser(
        "run", help="grade one or more runtimes on the suite",
        fields=lambda: {"default_fail_on": default_fail_on(),
                        "default_memory": default_memory(),
                        "ort_versions": ort_versions()},
        description="Run every case in each backend, in an isolated worker process (restarted "
        "after a crash, time-out or its memory limit), and grade it: exact, within tolerance "
        "(with --tolerance), within 1 ULP, wrong, wrong dtype, wrong shape, refused (the "
        "runtime's explicit not-supported error), error (any other exception), adapter "
        "error, crashed (also after answering), timed out, out of memory; invalid models "
        "must be refused (refused-as-required, or accepted-invalid). A failure named in "
        "--expected-failures (or, for onnxruntime {ort_versions}, one of its documented "
        "differences) is waived. Outputs that are not exact are explained. Exit status, as a "
        "test runner's: 1 when a case has a failing verdict (by default every verdict but "
        "exact, within tolerance, refused-as-required, waived and unexpected-pass; "
        "--fail-on changes which), 0 when none has, 2 on bad arguments or a backend that "
        "cannot be loaded.")
    run.add_argument("--backend", action="append", required=True, metavar="NAME",
                     help="onnxruntime, onnx-reference, onnx-reference+onnx-upsample, "
                     "openvino, tract, tinygrad, tvm, pytorch, package.module:callable, or a "
                     "module with onnx's backend API (prepare or run_model, e.g. "
                     "onnxruntime.backend); repeat for several")
    run.add_argument("--suite", metavar="DIR",
                     help="an exported suite (default: export the default suite to a "
                     "temporary directory first)")
    run.add_argument("--cases", metavar="PATTERN",
                     help="only the case IDs matching this shell pattern, e.g. 'rank*'")
    run.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                     help="a setting of the backend, recorded in the report; repeat for "
                     "several. onnxruntime: graph_optimization_level=disable|basic|extended|"
                     "layout|all (default all), execution_provider=NAME, "
                     "intra_op_num_threads=N, inter_op_num_threads=N; openvino: device=CPU, "
                     "inference_precision=f32|f16|bf16, num_threads=N; tinygrad: "
                     "device=CPU; tvm: target=llvm; a custom backend takes any KEY, as a "
                     "keyword argument (device is prepare()'s device)")
    run.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                     help=f"seconds one case may take (default {DEFAULT_TIMEOUT:g})")
    run.add_argument("--memory-limit", metavar="SIZE", default=None,
                     help="resident memory a backend's worker may hold, e.g. 2G or 512M, or "
                     "none (default {default_memory}); past it the case is graded "
                     "out-of-memory and the worker restarted")
    run.add_argument("--tolerance", metavar="T", default=None,
                     help="grade outputs within T as close, a pass: N ulp (e.g. 2ulp), "
                     "atol=X, rtol=Y, or a comma list of them (default: only exact outputs "
                     "pass; one within 1 ULP fails as 1-ulp)")
    run.add_argument("--expected-failures", metavar="FILE", default=None,
                     help="cases the backend is expected to fail, one 'PATTERN "
                     "[grades=KIND,..] [backend=NAME] REASON' a line (# comments): their "
                     "failures are graded waived; one that passes, unexpected-pass")
    run.add_argument("--form", choices=FORM_CHOICES, default="upsample",
                     help="grade the Upsample models (default), the Resize models "
                     "onnx_upsample.onnx.upgrade wrote for them, or both (then the report "
                     "says which differences the upgrade fixes)")
    run.add_argument("--fail-on", metavar="KINDS", default=None,
                     help="exit 1 when a verdict of these kinds occurs (default: "
                     "{default_fail_on}): a comma list of verdict kinds or unique "
                     f"prefixes of them, '{DEFAULT_WORD}' for the default ones (e.g. "
                     f"'{DEFAULT_WORD},waived' fails waived cases too), or '{NONE_WORD}' to "
                     "exit 0 whatever the verdicts (a kind that does not exist is an error "
                     "that lists them all)")
    add_output_options(run, json_help="print the full results as one JSON object on stdout "
                       "(the report files are --json-file, --markdown and --html)")
    run.add_argument("--json-file", metavar="FILE", help="write the full results as JSON")
    run.add_argument("--junit", metavar="FILE", help="write the results as JUnit XML, "
                     "for CI (a failing verdict is a failure or an error, a waived one "
                     "skipped)")
    run.add_argument("--failures-dir", metavar="DIR",
                     help="write each failing case to DIR/BACKEND/CASE/: its model, inputs, "
                     "expected and actual outputs, result.json and replay.txt, the command "
                     "that runs it again (DIR: new, empty, or an earlier --failures-dir)")
    run.add_argument("--markdown", metavar="FILE", help="write a Markdown report")
    run.add_argument("--html", metavar="FILE", help="write an HTML report")
    run.add_argument("--no-explain", action="store_true",
                     help="do not explain the outputs that are not exact")
    run.add_argument("--verbose", action="store_true",
                     help="list refusals and errors case by case, each with its whole "
                     "message (the report groups them by message, with every case ID)")
    run.set_defaults(handler=_cmd_run)

    explain = subparsers.add_parser(
        "explain", help="name the convention that reproduces another runtime's output",
        description="Given Upsample's input and another runtime's output (both .npy), try "
        "the conventions runtimes use (Resize's coordinate modes and nearest modes, "
        "reciprocal multiply, output sizes rounded or ceiled, float64, accumulation order, "
        "fused multiply-add (onnxruntime's aarch64 build), integer rounding and x86's "
        "conversion of overflowing integers, swapped or reversed scales) and name the one "
        "that reproduces it. A convention is named only where the output departs from "
        "Upsample in at least ten independent places; with fewer, it only coincides with "
        "it.")
    explain.add_argument("input", metavar="INPUT.npy", help="the Upsample input")
    explain.add_argument("theirs", metavar="THEIRS.npy", help="the other runtime's output")
    explain.add_argument("--scales", type=float, nargs="+", required=True, metavar="S",
                         help="one scale per axis, space separated")
    explain.add_argument("--mode", default="nearest", help="nearest (default) or linear")
    add_output_options(explain, json_help="print the explanation as one JSON object")
    explain.set_defaults(handler=_cmd_explain)


class _Progress:
    """One progress line on stderr, rewritten in place on a terminal; none under ``-q``."""

    def __init__(self, verb: str, args: argparse.Namespace) -> None:
        self.verb = verb
        self.args = args
        self.tty = sys.stderr.isatty()
        self.last = -1

    def __call__(self, done: int, total: int, case_id: str, *rest: str) -> None:
        if self.tty:
            progress(self.args, f"\r{self.verb} {done}/{total} {case_id:<40}",
                     end="\n" if done == total else "")
        elif done * 10 // total != self.last or done == total:
            self.last = done * 10 // total
            progress(self.args, f"{self.verb} {done}/{total}")


def _cmd_export(args: argparse.Namespace) -> int:
    from .. import conformance

    suite = conformance.export(args.directory, full=args.full,
                               check_ort=not args.no_ort_check,
                               progress=_Progress("exporting case", args))
    size = sum(p.stat().st_size for p in Path(args.directory).rglob("*") if p.is_file())
    if args.json:
        print_json({"command": "conformance export", "directory": str(args.directory),
                    "full": args.full, "cases": len(suite.cases), "version": suite.version,
                    "content_hash": suite.content_hash, "bytes": size,
                    "checked_against": suite.manifest["checked_against"],
                    "notes": suite.manifest["notes"], "warnings": []})
        return EXIT_OK
    note(args, f"wrote {len(suite.cases)} cases to {args.directory} (suite {suite.version}, "
               f"{suite.content_hash}, {size / 2**20:.1f} MiB), checked against "
               f"{', '.join(suite.manifest['checked_against'])}")
    for line in suite.manifest["notes"]:
        note(args, f"note: {line}")
    return EXIT_OK


def _not_a_file(path: str) -> bool:
    """Whether a report goes straight into ``path``, not through a temporary renamed onto
    it: a device, a pipe or a terminal (``/dev/null``, ``/dev/stdout``), which a rename
    would replace with a plain file (where the user may rename in /dev: as root, a CI
    container's usual user)."""
    try:
        if os.path.islink(path) and os.readlink(path).startswith("/proc/"):
            return True  # /dev/stdout, whatever it leads to
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # not there yet: a new file
        return False


def _writable(path: str | None) -> None:
    """Checked before the run, not after it."""
    if path is None:
        return
    if Path(path).is_dir():
        raise UpsampleError(f"report {path!r} is a directory; give a file name")
    if not Path(path).absolute().parent.is_dir():
        raise UpsampleError(f"report {path!r}: its folder does not exist; create it first")


def _load_forms(suite: Any, form: str) -> list[Any]:
    """The suite in each form to grade, in order: the Upsample models first."""
    from .. import conformance

    forms = ["upsample", "upgraded"] if form == "both" else [form]
    # loading the suite checked the files of both trees against their hashes already
    return [suite if f == suite.form else conformance.load(suite.directory, form=f,
                                                           verify=False)
            for f in forms]


def _cmd_run(args: argparse.Namespace) -> int:
    from .. import conformance
    from ..conformance import _report
    from ..conformance._grade import parse_tolerance
    from ..conformance._junit import junit
    from ..conformance._process import DEFAULT_MEMORY_LIMIT, parse_memory_limit
    from ..conformance._replay import FailureWriter, replaceable
    from ..conformance._runner import check_timeout, grade_backend, select_cases
    from ..conformance._waivers import check_backends, read_waivers
    from ..io.atomic import atomic_path, reason

    for path in (args.json_file, args.markdown, args.html, args.junit):
        _writable(path)
    check_timeout(args.timeout)
    fail_on = parse_fail_on(args.fail_on)
    options = backend_shares(args.backend, backend_options(args.backend_option))
    tolerance = parse_tolerance(args.tolerance)
    memory_limit = (DEFAULT_MEMORY_LIMIT if args.memory_limit is None
                    else parse_memory_limit(args.memory_limit))
    failures_dir = args.failures_dir
    if failures_dir is not None:
        failures_dir_usable(failures_dir, replaceable)
    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="onnx-upsample-suite-"))
        if args.suite is None:
            progress(args, "exporting the default suite to a temporary directory (use "
                     f"'{shell_command('conformance', 'export', 'DIR')}' and --suite DIR "
                     "to keep it)")
            suite = conformance.export(Path(scratch) / "suite", check_ort=False,
                                       progress=_Progress("exporting case", args))
        else:
            suite = conformance.load(args.suite)
        selected = select_cases(args.cases, suite)
        waivers = ([] if args.expected_failures is None else
                   read_waivers(args.expected_failures, [case.id for case in suite.cases]))
        check_backends(waivers, args.backend)
        forms = _load_forms(suite, args.form)
        writer = None
        if failures_dir is not None:
            folder = stack.enter_context(atomic_path(
                failures_dir, directory=True, replaces=replaceable,
                replaces_what="an earlier --failures-dir"))
            writer = FailureWriter(folder, fail_on, {
                (backend if form.form == "upsample" else f"{backend} ({form.form})"):
                replay_words(args, backend, form.form, options[backend], memory_limit)
                for backend in args.backend for form in forms})
        runs, unavailable = [], []
        for backend in args.backend:
            for form in forms:
                label = backend if form.form == "upsample" else f"{backend} ({form.form})"
                progress(args, f"{label}: starting its worker")
                try:
                    runs.append(grade_backend(
                        backend, form, timeout=args.timeout, select_ids=selected,
                        explain=not args.no_explain, options=options[backend],
                        tolerance=tolerance, waivers=waivers, memory_limit=memory_limit,
                        on_case=writer,
                        progress=_Progress(f"{label}: case", args)))
                except UpsampleError as error:  # one missing runtime must not lose the others
                    if not runs and len(args.backend) == 1:
                        raise
                    unavailable.append(str(error))
                    break
        if writer is not None and runs:
            writer.finish(runs)
    if not runs:
        raise UpsampleError("; ".join(unavailable))
    found = _report.findings(runs, set(fail_on))
    replays = {} if writer is None else {key: entry["replay"]
                                         for key, entry in writer.written.items()}
    written = []
    for path, text in ((args.json_file, _report.to_json(runs, suite.manifest)),
                       (args.markdown, _report.markdown(runs, suite.manifest)),
                       (args.html, _report.to_html(runs, suite.manifest)),
                       (args.junit, junit(runs, suite.manifest, fail_on, replays))):
        if path is None:
            continue
        if _not_a_file(path):
            try:
                with open(path, "w") as stream:
                    stream.write(text)
            except OSError as error:  # /dev/full, a pipe whose reader left
                raise UpsampleError(f"cannot write {path!r}: {reason(error)}") from None
        else:
            with atomic_path(path) as temporary:
                Path(temporary).write_text(text)
        written.append(path)
    if writer is not None and runs:
        written.append(failures_dir)
    if args.json:
        print_json({"command": "conformance run", "backends": args.backend,
                    "suite": {"directory": None if args.suite is None else str(args.suite),
                              "version": suite.version, "content_hash": suite.content_hash},
                    "form": args.form, "cases": args.cases, "fail_on": fail_on,
                    "options": options, "tolerance": args.tolerance,
                    "runs": [run.to_dict() for run in runs],
                    "failed": [{"backend": run.label, "id": r.id,
                                "verdict": r.verdict, "words": _report.verdict(r),
                                **({"replay": replays[(run.label, r.id)]}
                                   if (run.label, r.id) in replays else {})}
                               for run, r in found],
                    "reports": written, "unavailable": unavailable, "warnings": []})
    else:
        note(args, _report.terminal(runs, verbose=args.verbose))
        for path in written:
            note(args, f"wrote {path}")
        if found:
            # why the exit status is 1, every failing case by ID: under -q too (on stderr)
            which = "" if args.fail_on is None else f"--fail-on {','.join(fail_on)}: "
            note(args, f"{which}{len(found)} case(s) failed: "
                 + "; ".join(f"{label}: {', '.join(ids)}"
                             for label, ids in _ids_by_run(found).items()), failing=True)
        elif fail_on:
            note(args, "no case failed")
    if unavailable:  # after the reports: the runs that did work are kept; one error line
        return fail("; ".join(unavailable))
    return EXIT_FINDINGS if found else EXIT_OK


def _ids_by_run(found: Sequence[tuple[Any, Any]]) -> dict[str, list[str]]:
    """The failing case IDs of each run (backend and form), in order."""
    ids: dict[str, list[str]] = {}
    for run, result in found:
        ids.setdefault(run.label, []).append(result.id)
    return ids


def _cmd_explain(args: argparse.Namespace) -> int:
    from .._spec.call import check_described
    from .._spec.spelling import command_line
    from ..conformance import explain
    from ..io.formats import read_npy

    x = read_npy(args.input)
    theirs = read_npy(args.theirs)
    # the call's checks worded for the command line (--scales, --mode) before explain's own
    check_described(x.shape, x.dtype, args.scales, args.mode, command_line(args.input))
    explanation = explain(x, theirs, args.scales, args.mode)
    if args.json:
        print_json({"command": "explain", "input": args.input, "theirs": args.theirs,
                    "scales": args.scales, "mode": args.mode, **explanation.to_dict(),
                    "warnings": []})
        return EXIT_OK
    note(args, explanation.summary)
    for name in explanation.matches[1:6]:
        note(args, f"  also reproduced by: {name}")
    return EXIT_OK
