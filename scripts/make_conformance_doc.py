"""Write docs/conformance.md from real runs of every runtime installed here.

    make conformance-doc        # installs the 'conformance' extra, then runs this
    python scripts/make_conformance_doc.py --cases 'v9*' -o build/conformance-check.md

Exports the suite (checked against onnxruntime), grades each backend on the Upsample models
and on the Resize models ``onnx_upsample.onnx.upgrade`` wrote for them (each case in its own
worker process), explains every difference, and writes both matrices with the versions, the
date and the machine, and, per runtime, which Upsample cases it gets wrong and whether the
upgrade fixes them. For a runtime that is wrong on the upgraded models too, it re-runs a few
of those cases as the other ``coordinate_transformation_mode`` / ``nearest_mode`` forms of
the same Resize (expected outputs from onnxruntime) to find the forms it computes exactly.
A backend that is not installed is listed as such.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_upsample import UpsampleError, conformance
from onnx_upsample.conformance import _report
from onnx_upsample.conformance._backends import REFUSALS
from onnx_upsample.conformance._explain import conventions
from onnx_upsample.conformance._grade import PASSES, ULP1, WRONG, WRONG_DTYPE, WRONG_SHAPE
from onnx_upsample.conformance._runner import select_cases
from onnx_upsample.conformance._suite import DATA_SET, Suite, SuiteCase
from onnx_upsample.conformance._waivers import UNEXPECTED_PASS, WAIVED

ROOT = Path(__file__).resolve().parent.parent

# The Resize forms tried on a runtime's failing upgraded cases: every coordinate mode with
# every nearest rounding (nearest), every coordinate mode (linear); tf_half_pixel_for_nn is
# deprecated since opset 13 and left out.
COORDINATES = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners")
ROUNDINGS = ("floor", "round_prefer_floor", "round_prefer_ceil", "ceil")
VARIANTS: dict[str, list[tuple[str, str | None]]] = {
    "nearest": [(c, r) for c in COORDINATES for r in ROUNDINGS],
    "linear": [(c, None) for c in COORDINATES],
}
DIFFERS = (WRONG, ULP1, WRONG_SHAPE, WRONG_DTYPE)
# the differences another coordinate form could explain (not a shape or a type)
PROBED = (WRONG, ULP1)

INTRO = """\
# Upsample conformance: how runtimes compute ONNX `Upsample`

Made by `scripts/make_conformance_doc.py` (`make conformance-doc`) from real runs on
{date}, on {machine}. Every number below comes from that run; nothing is typed in by hand.

The suite (`onnx-upsample conformance export DIR`, version {version}) holds one-node models
in onnx's backend-test layout: every version form (v1 attributes, v7 scales attribute, v9
scales initializer, v9 scales fed at run time, v9 scales computed from the input's shape as
PyTorch's `size=` export does, v10), both modes, the 15 element types of the spec, ranks
0-6, exporters' float32 scales (1.3333334, 1.6, 2.1333334), size-1 and empty axes, scales
that change no length, NaN, infinities, -0.0, subnormals, integer extremes, outputs large
enough for a runtime's threads, and invalid models that a runtime must refuse. Expected
outputs come from onnx-upsample's kernel, checked against its reference and against
onnxruntime 1.32 before they are written. Beside each Upsample model the suite holds the
Resize model `onnx_upsample.onnx.upgrade` writes for it (opset 18, same inputs, same
expected output): the **upgraded** form, graded the same way, tells whether a model
upgraded with onnx-upsample is portable to a runtime whose Upsample is not.

Grades: **exact** (bitwise; any NaN equals any NaN; -0.0 differs from +0.0; values are
compared in native byte order), **within 1 ULP**, **wrong**, **wrong dtype** (another
element type; the report says whether the values are right once converted), **wrong
shape**, **refused** (the runtime's own explicit not-implemented or not-supported error, at
load or at run time; how each runtime's is recognised is below), **error** (any other
exception), **adapter error** (the backend adapter broke its contract), **crashed** (its
process died, while running the case or after answering it), **timed out**, **out of
memory** (over the worker's memory limit). An invalid model passes when the runtime refuses
it (**refused, as required**: any error of its own) and fails as **accepted invalid input**
when it returns outputs. Each case runs in an isolated worker process per backend, with each
runtime's default settings (onnxruntime at `graph_optimization_level=all` on the CPU
provider; OpenVINO on the CPU in float32), recorded in the first table. No tolerance is
given: only exact outputs pass. For onnxruntime 1.32, the cases that document one of its
known differences (semantics.md §2: int32 wrap-around, the int8/uint8 NHWC fixed-point path,
sizes past 2**24, mode `cubic` accepted) and its missing kernels are **waived** by the
grader's built-in waiver, and listed with their reasons.

The `pytorch` column is not an ONNX runtime: it is the mapping a hand port or a model
converter uses, `torch.nn.functional.interpolate(x, scale_factor=<spatial scales>,
mode='nearest' or 'linear'/'bilinear'/'trilinear', align_corners=False)` on the CPU, with
the scales and mode read from the model's attributes and initializers; it refuses what such
a converter cannot map (ranks other than 3-5, scales on N or C, integer types, scales given
at run time).

To grade a runtime yourself, in CI:

```
onnx-upsample conformance export upsample-suite
onnx-upsample conformance run --backend onnxruntime --suite upsample-suite --form both \\
    --markdown report.md
onnx-upsample conformance run --backend mypackage.mymodule:run_model --suite upsample-suite
onnx-upsample conformance run --backend onnxruntime.backend --suite upsample-suite --json
```

`conformance run` exits 1 when a case's verdict is anything but {passing}, as a test runner
does (`--fail-on` names the failing verdicts instead: `--fail-on wrong,crashed` only those,
`--fail-on none` never fails), 0 when none is, 2 on bad arguments or a backend that cannot be
loaded. For CI: `--expected-failures FILE`, `--tolerance`, `--backend-option KEY=VALUE`,
`--junit FILE`, `--failures-dir DIR` (see suite.md). `-q`
prints only the failing case IDs, on stderr. `--json` prints the results as one JSON object
on stdout (every other line goes to stderr); `--json-file FILE`, `--markdown FILE` and
`--html FILE` write report files.
"""


def _progress(done: int, total: int, case_id: str, grade: str) -> None:
    if done % 40 == 0 or done == total:
        print(f"  {done}/{total}", file=sys.stderr, flush=True)


def _refusal_table() -> list[str]:
    lines = ["## How each runtime's refusals are recognised", "",
             "An exception is graded **refused** when `ExceptionType: message` matches the "
             "runtime's pattern (Python's `NotImplementedError` counts for every backend, "
             "custom ones included), else **error**:", "",
             "| backend | refusal pattern |", "| --- | --- |"]
    lines += [f"| {name} | `{pattern.replace('|', ' or ')}` |"
              for name, pattern in REFUSALS.items()]
    return [*lines, ""]


# ------------------------------------------------------------------ Resize forms, by hand

def _variant_model(path: Path, coordinates: str, rounding: str | None) -> onnx.ModelProto:
    model = onnx.load(str(path))
    for node in model.graph.node:
        if node.op_type != "Resize":
            continue
        kept = [a for a in node.attribute
                if a.name not in ("coordinate_transformation_mode", "nearest_mode")]
        del node.attribute[:]
        node.attribute.extend(kept)
        node.attribute.append(helper.make_attribute("coordinate_transformation_mode",
                                                    coordinates))
        if rounding is not None:
            node.attribute.append(helper.make_attribute("nearest_mode", rounding))
    return model


def _onnxruntime(model: onnx.ModelProto, case: SuiteCase) -> np.ndarray | None:
    """ORT's output for a Resize form: the expected output of that form (None: it refuses)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    try:
        session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return np.asarray(session.run(None, dict(zip(names, case.inputs(), strict=True)))[0])
    except Exception:  # a form ORT does not run is not tried
        return None


def _variant_suite(cases: list[SuiteCase], scratch: Path) -> tuple[Suite, dict[str, str]]:
    """Every Resize form of ``cases``, as a suite whose expected outputs are ORT's."""
    made: list[SuiteCase] = []
    forms: dict[str, str] = {}
    for case in cases:
        for coordinates, rounding in VARIANTS[case.mode]:
            model = _variant_model(case.path / "model.onnx", coordinates, rounding)
            expected = _onnxruntime(model, case)
            if expected is None:
                continue
            name = f"{coordinates}" + (f" + {rounding}" if rounding else "")
            variant_id = f"{case.id}__{coordinates}__{rounding or 'linear'}"
            target = scratch / variant_id
            shutil.copytree(case.path, target)
            onnx.save(model, str(target / "model.onnx"))
            (target / DATA_SET / "output_0.pb").write_bytes(
                numpy_helper.from_array(expected, "Y").SerializeToString())
            made.append(SuiteCase(variant_id, target, {**case.info, "ort": "exact",
                                                       "must_refuse": None}))
            forms[variant_id] = name
    manifest = {"version": "resize-forms", "content_hash": "sha256:not-hashed", "cases": []}
    return Suite(scratch, manifest, tuple(made)), forms


def _resize_forms(backend: str, upgraded: conformance.BackendResult, suite: Suite,
                  per_mode: int) -> list[str]:
    """Which Resize forms ``backend`` computes exactly, on a few cases it gets wrong in the
    upgraded (asymmetric) form."""
    by_id = {case.id: case for case in suite.cases}
    lines = []
    for mode in VARIANTS:
        failing: list[SuiteCase] = []
        seen_scales: set[tuple[float, ...]] = set()
        for result in upgraded.results:
            case = by_id.get(result.id)
            # float32 (every runtime runs it), one case per scale vector: a spread of scales
            # tells the coordinate forms apart, where one scale often cannot
            if (case is None or result.mode != mode or result.grade.kind not in PROBED
                    or case.info.get("dtype") != "float32"
                    or tuple(case.scales) in seen_scales or len(failing) >= per_mode):
                continue
            seen_scales.add(tuple(case.scales))
            failing.append(case)
        if not failing:
            continue
        with tempfile.TemporaryDirectory(prefix="resize-forms-") as scratch:
            variants, forms = _variant_suite(failing, Path(scratch))
            if not variants.cases:
                continue
            run = conformance.run(backend, variants, explain=False)
        exact: dict[str, int] = {}
        close: dict[str, int] = {}
        tried: dict[str, int] = {}
        for result in run.results:
            form = forms[result.id]
            tried[form] = tried.get(form, 0) + 1
            exact[form] = exact.get(form, 0) + (result.grade.kind == "exact")
            close[form] = close.get(form, 0) + (result.grade.kind in ("exact", ULP1))
        ids = ", ".join(f"`{c.id}`" for c in failing)
        good = [f for f in tried if exact[f] == tried[f]]
        near = [f for f in tried if close[f] == tried[f] and f not in good]
        head = f"- **{backend}**, {mode}, {len(failing)} case(s) ({ids}), {len(tried)} forms: "
        words = []
        if good:
            words.append("exact in every case as " + "; ".join(good))
        if near:
            words.append("within 1 ULP in every case as " + "; ".join(near))
        if not words:
            best = max(tried, key=lambda f: (exact[f], close[f]))
            words.append(f"no form is exact or within 1 ULP in every case; closest: {best}, "
                         f"exact in {exact[best]}/{tried[best]}")
        lines.append(head + "; ".join(words))
    return lines


# ---------------------------------------------------------------------------------- main

def _grade_all(backends: list[str], suites: list[Suite], select: Callable[[str], bool] | None,
               timeout: float) -> tuple[list[conformance.BackendResult], list[str]]:
    runs, missing = [], []
    for backend in backends:
        for suite in suites:
            print(f"grading {backend} on the {suite.form} models", file=sys.stderr)
            try:
                runs.append(conformance.run(backend, suite, timeout=timeout, cases=select,
                                            progress=_progress))
            except UpsampleError as error:
                missing.append(f"- {backend}: {error}")
                break
    return runs, missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "conformance.md"))
    parser.add_argument("--suite", default="build/conformance-suite",
                        help="where to export the suite (relative to the project root)")
    parser.add_argument("--cases", metavar="PATTERN",
                        help="only the case IDs matching this shell pattern (a quick check)")
    parser.add_argument("--backends", default=",".join(conformance.BACKENDS),
                        help="comma list (default: every built-in backend)")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--probe-cases", type=int, default=3, metavar="N",
                        help="failing upgraded cases per mode re-run as other Resize forms")
    args = parser.parse_args()
    output = Path(args.output).absolute()
    # relative paths: the runtimes' messages quote them, and the page should not name
    # this machine's folders
    os.chdir(ROOT)
    print(f"exporting the suite to {args.suite}", file=sys.stderr)
    upsample = conformance.export(args.suite)
    upgraded = conformance.load(args.suite, form="upgraded", verify=False)
    pattern = args.cases
    select = select_cases(pattern, upsample)  # before any runtime starts
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    runs, missing = _grade_all(backends, [upsample, upgraded], select, args.timeout)
    forms = []
    for run in runs:
        if run.form == "upgraded" and any(r.grade.kind in DIFFERS for r in run.results):
            print(f"trying other Resize forms on {run.backend}", file=sys.stderr)
            forms += _resize_forms(run.backend, run, upgraded, args.probe_cases)
    date = datetime.date.today().isoformat()
    machine = f"{platform.machine()} {platform.system()}, Python {platform.python_version()}"
    kinds = [f"`{kind}`" for kind in (*PASSES, WAIVED, UNEXPECTED_PASS)]
    passing = ", ".join(kinds[:-1]) + f" or {kinds[-1]}"
    text = [INTRO.format(date=date, machine=machine, version=upsample.version,
                         passing=passing)]
    if pattern is not None:
        text += [f"**Partial run: only the cases matching `{pattern}`.**", ""]
    by_form = {form: [r for r in runs if r.form == form] for form in ("upsample", "upgraded")}
    text += ["## Results on the Upsample models", "",
             _report.markdown(by_form["upsample"], upsample.manifest),
             "## Results on the upgraded (Resize) models", "",
             _report.markdown(by_form["upgraded"], upgraded.manifest),
             "## Is the upgraded model portable?", "",
             "For each runtime, the Upsample cases it does not pass, and its verdict on the "
             "same case upgraded to Resize by `onnx-upsample upgrade`:", "",
             *_report.upgrade_table(runs), ""]
    if forms:
        text += ["Where a runtime is wrong on the upgraded model too, the same Resize was run "
                 "again in every other `coordinate_transformation_mode` (and `nearest_mode`) "
                 "on a few of those cases (float32, one per scale vector), with "
                 "onnxruntime's output for that form as the expected one: the forms below "
                 "are those it computes exactly, or within 1 ULP, on every case tried (the "
                 "upgrade writes asymmetric + floor for nearest, asymmetric for linear). A "
                 "form that works here is a way to port the model to that runtime only where "
                 "it equals Upsample for the model's scales and sizes.", "", *forms, ""]
    text += _refusal_table()
    if missing:
        text += ["## Not installed here", "", *missing, ""]
    text += ["## Conventions the explainer tries", "",
             "For every output that is not exact, the explainer "
             "(`onnx-upsample explain INPUT.npy THEIRS.npy --scales ... --mode ...`, or "
             "`onnx_upsample.conformance.explain`) computes the output under each of these "
             "conventions and names the simplest one that reproduces the runtime's bits, "
             "where the output departs from Upsample in ten places or more (fewer cannot "
             "tell a convention from chance: it then says the output coincides with it):",
             ""]
    for mode in ("nearest", "linear"):
        listed = conventions(mode)
        # the single departures from Upsample; the explainer also tries their combinations
        single = [c.name for c in listed if len(c.departures) == 1]
        text.append(f"- {mode}: {len(listed)} conventions in all; one departure from "
                    f"Upsample each: " + "; ".join(single))
    text.append("")
    temporary = output.with_suffix(".md.tmp")
    temporary.write_text("\n".join(text))
    temporary.replace(output)
    print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
