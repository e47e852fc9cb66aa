"""Instructions per output of the compiled kernels, counted by valgrind's callgrind (a script).

Wall-clock times on a shared 2-core machine move by 20-50% from run to run; the count of
instructions a kernel executes does not (repeatable to 0.01%). Each workload runs in its own
process under ``valgrind --tool=callgrind`` on one thread (``ONNX_UPSAMPLE_NUM_THREADS=1``):
one call that prepares the kernel and runs it, then ``--calls`` calls into a preallocated
``out=``. Only the instructions executed inside the compiled module (``_native``, the
kernels' own code: not numpy, not the Python layers, not the C library) are counted, from
callgrind's per-object costs, so a stripped build counts as well as one with symbols, and
divided by the outputs of every call.

The workloads are those of the image comparison (``bench_images.py``) and of ``bench.py``,
image workloads at a reduced size (instructions per output barely depend on it once rows
are long; the issue that set the goals measured these shapes).

Run: ``make bench-instructions`` or ``python benchmarks/instructions.py [--only NAME...]``
(valgrind must be installed: ``apt-get install valgrind``). ``--isa baseline`` counts the
baseline instruction set's loops.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import Workload  # noqa: E402

# The image comparison's workloads at a size callgrind runs in seconds; the goals of issue 28
# are stated for the first two
CASES = [
    Workload("channel-last uint8 linear", (1, 250, 375, 3), (1, 2, 2, 1), "linear", "uint8"),
    Workload("trilinear float32", (1, 1, 16, 64, 64), (1, 1, 2, 2, 2), "linear", "float32"),
    Workload("RGB uint8 (H, W, 3) linear", (250, 375, 3), (2, 2, 1), "linear", "uint8"),
    Workload("grey uint8 linear", (500, 750), (2, 2), "linear", "uint8"),
    Workload("RGB float32 (H, W, 3) linear", (250, 375, 3), (2, 2, 1), "linear", "float32"),
    Workload("RGB float32 (1, H, W, 3) linear", (1, 250, 375, 3), (1, 2, 2, 1), "linear",
         "float32"),
    Workload("RGB uint8 (H, W, 3) nearest", (250, 375, 3), (2, 2, 1), "nearest", "uint8"),
]


def bench_cases() -> list[Workload]:
    """bench.py's workloads, each at its own size."""
    from bench import WORKLOADS

    return list(WORKLOADS)


def make_input(case: Workload) -> np.ndarray:
    rng = np.random.default_rng(0)
    dtype = np.dtype(case.dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 200, case.shape).astype(dtype)
    if dtype.kind == "c":
        parts = rng.standard_normal((2, *case.shape))
        return (parts[0] + 1j * parts[1]).astype(dtype)
    return rng.standard_normal(case.shape).astype(dtype)


def child(name: str, calls: int) -> None:
    """Runs under callgrind: the preparing call, then ``calls`` calls into ``out=``."""
    from onnx_upsample import upsample

    case = next(c for c in CASES + bench_cases() if c.name == name)
    x = make_input(case)
    out = upsample(x, case.scales, case.mode)
    for _ in range(calls):
        upsample(x, case.scales, case.mode, out=out)
    print(f"OUTPUTS {out.size}")


def native_instructions(callgrind_out: Path) -> int:
    """The instructions executed in the `_native` object itself (self cost: the lines of its
    functions, not the calls they make into other objects)."""
    total = 0
    objects: dict[str, str] = {}
    native = skip = False
    for line in callgrind_out.read_text().splitlines():
        if line.startswith(("ob=", "cob=")):
            # an object's name is given once, with its number, where it is first named (as
            # the object or as a callee's); later lines give the number alone
            match = re.match(r"c?ob=\((\d+)\)\s*(.*)", line)
            name = line.split("=", 1)[1] if match is None else match.group(2)
            if match is not None and name:
                objects[match.group(1)] = name
            elif match is not None:
                name = objects.get(match.group(1), "")
            if line.startswith("ob="):
                native = "_native" in name
        elif line.startswith("calls="):
            skip = True  # the next cost line is the call's inclusive cost
        elif line[:1].isdigit() or line[:1] in "+-*":
            if skip:
                skip = False
            elif native:
                fields = line.split()
                if len(fields) >= 2:
                    total += int(fields[-1])
    return total


def count(case: Workload, calls: int, isa: str) -> tuple[int, int]:
    """Instructions in `_native` and outputs written, over the preparing call and ``calls``
    calls into ``out=`` (the preparing call runs the same kernel once more; what it adds to
    the module's count besides is its description, a few thousand instructions)."""
    env = dict(os.environ, ONNX_UPSAMPLE_NUM_THREADS="1")
    if isa:
        env["ONNX_UPSAMPLE_ISA"] = isa
    with tempfile.TemporaryDirectory(prefix="onnx-upsample-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             __file__, "--child", case.name, "--calls", str(calls)],
            capture_output=True, text=True, env=env, check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{case.name} under callgrind failed:\n{result.stderr[-2000:]}")
        outputs = int(result.stdout.split("OUTPUTS")[1].split()[0])
        return native_instructions(out), outputs * (calls + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="workload names (or their first word)")
    parser.add_argument("--calls", type=int, default=2, help="timed calls per workload")
    parser.add_argument("--isa", choices=("", "baseline", "avx2"), default="",
                        help="the instruction set (default: the best this CPU runs)")
    parser.add_argument("--images-only", action="store_true",
                        help="only the image workloads, not bench.py's")
    parser.add_argument("--json", metavar="FILE",
                        help="also write each workload's instructions and outputs to FILE")
    parser.add_argument("--compare", metavar="FILE",
                        help="a --json file of another build: print this build's count as a "
                             "ratio to it (a change of the C layer is held to within 1%%)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py needs valgrind: apt-get install valgrind")
    cases = CASES + ([] if args.images_only else bench_cases())
    if args.only:
        cases = [c for c in cases if c.name in args.only or c.name.split()[0] in args.only]
    before = json.loads(Path(args.compare).read_text()) if args.compare else {}
    print(f"instructions per output in the compiled module, one thread, "
          f"ISA {args.isa or 'default'}\n")
    compared = " | other build | ratio" if before else ""
    print(f"| workload | shape | scales | mode | dtype | instructions / output{compared} |")
    print("|---|---|---|---|---|---|" + ("---|---|" if before else ""))
    counts: dict[str, list[int]] = {}
    for case in cases:
        instructions, outputs = count(case, args.calls, args.isa)
        counts[case.name] = [instructions, outputs]
        scales = " ".join(f"{s:g}" for s in case.scales)
        row = (f"| {case.name} | {case.shape} | {scales} | {case.mode} | {case.dtype} | "
               f"{instructions / outputs:.3f}")
        if case.name in before:
            other = before[case.name][0] / before[case.name][1]
            row += f" | {other:.3f} | {instructions / outputs / other:.4f}"
        print(row + " |", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main()
