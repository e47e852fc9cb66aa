"""Write docs/conformance.md from real runs of every runtime installed here.

    make conformance-doc        # installs the 'conformance' extra, then runs this

Exports the default suite (checked against onnxruntime), grades each backend in its own
worker process, explains every difference, and writes the published matrix with the
versions, the date and the machine. A backend that is not installed is listed as such.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

from onnx_upsample import UpsampleError, conformance
from onnx_upsample.conformance import _report
from onnx_upsample.conformance._explain import conventions

ROOT = Path(__file__).resolve().parent.parent

INTRO = """\
# Upsample conformance: how runtimes compute ONNX `Upsample`

Made by `scripts/make_conformance_doc.py` (`make conformance-doc`) from real runs on
{date}, on {machine}. Every number below comes from that run; nothing is typed in by hand.

The suite (`onnx-upsample conformance export DIR`) holds one-node models in onnx's
backend-test layout: every version form (v1 attributes, v7 scales attribute, v9 scales
initializer, v9 scales fed at run time, v9 scales computed from the input's shape as
PyTorch's `size=` export does, v10), both modes, the 15 element types of the spec, ranks
0-6, exporters' float32 scales (1.3333334, 1.6, 2.1333334), size-1 and empty axes, scales
that change no length, NaN, infinities, -0.0, subnormals, integer extremes, and outputs
large enough for a runtime's threads. Expected outputs come from onnx-upsample's kernel,
checked against its reference and against onnxruntime 1.32 before they are written.

Grades: **exact** (bitwise; any NaN equals any NaN; -0.0 differs from +0.0), **within 1
ULP**, **wrong**, **wrong shape** (or element type), **refused** (the runtime raised an
error, at load or at run time), **crashed** (its process died), **timed out**. Each case
runs in an isolated worker process per backend. For onnxruntime, the cases that document
one of its known differences (docs/semantics.md §2: int32 wrap-around, the int8/uint8 NHWC
fixed-point path, sizes past 2**24) count as expected.

To grade a runtime yourself:

```
onnx-upsample conformance export upsample-suite
onnx-upsample conformance run --backend onnxruntime --suite upsample-suite --markdown report.md
onnx-upsample conformance run --backend mypackage.mymodule:run_model --suite upsample-suite
```
"""


def _progress(done: int, total: int, case_id: str, grade: str) -> None:
    if done % 20 == 0 or done == total:
        print(f"  {done}/{total}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "conformance.md"))
    parser.add_argument("--suite", default="build/conformance-suite",
                        help="where to export the suite (relative to the project root)")
    args = parser.parse_args()
    # relative paths: the runtimes' messages quote them, and the page should not name
    # this machine's folders
    os.chdir(ROOT)
    print(f"exporting the suite to {args.suite}", file=sys.stderr)
    suite = conformance.export(args.suite)
    runs, missing = [], []
    for backend in conformance.BACKENDS:
        print(f"grading {backend}", file=sys.stderr)
        try:
            runs.append(conformance.run(backend, suite, progress=_progress))
        except UpsampleError as error:
            missing.append(f"- {backend}: {error}")
    date = datetime.date.today().isoformat()
    machine = f"{platform.machine()} {platform.system()}, Python {platform.python_version()}"
    text = [INTRO.format(date=date, machine=machine), "## Results", "",
            _report.markdown(runs, suite.manifest)]
    if missing:
        text += ["## Not installed here", "", *missing, ""]
    text += ["## Conventions the explainer tries", "",
             "For every output that is not exact, the explainer "
             "(`onnx-upsample explain INPUT.npy THEIRS.npy --scales ... --mode ...`, or "
             "`onnx_upsample.conformance.explain`) computes the output under each of these "
             "conventions and names the simplest one that reproduces the runtime's bits:", ""]
    for mode in ("nearest", "linear"):
        listed = conventions(mode)
        # the single departures from Upsample; the explainer also tries their combinations
        single = [c.name for c in listed if len(c.departures) == 1]
        text.append(f"- {mode}: {len(listed)} conventions in all; one departure from "
                    f"Upsample each: " + "; ".join(single))
    text.append("")
    temporary = Path(args.output).with_suffix(".md.tmp")
    temporary.write_text("\n".join(text))
    temporary.replace(args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
