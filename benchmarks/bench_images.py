"""Images side by side: onnx-upsample, OpenCV, onnxruntime and torch in one run (a script).

Image users compare with OpenCV, so the workloads are images at the sizes issue 28 judged:
RGB uint8 as ``(H, W, 3)`` and as ``(1, H, W, 3)`` (the same result), grey uint8, RGB
float32, and nearest. Every library runs on 2 threads (``set_num_threads``,
``cv2.setNumThreads``, ``torch.set_num_threads``, ORT's ``intra_op_num_threads``) and makes
a fresh result each call. The repetitions are interleaved (one call of each library in turn,
the order rotated each round), so a neighbour's load on a shared machine falls on all of
them alike; the table gives each one's median and the ratios of the medians.

The values differ: OpenCV samples at half-pixel centres with fixed-point weights
(``INTER_LINEAR_EXACT`` rounds exactly, ``INTER_LINEAR`` is its faster approximation), torch
samples at half-pixel centres too; onnx-upsample gives onnxruntime's bits. For
``(1, H, W, 3)`` uint8, ORT runs a fixed-point path of its own (other values than its rank-3
kernel and ours; README: "Where we differ from ORT 1.32, on purpose").

OpenCV (``opencv-python-headless``, the ``bench`` extra, which ``make bench`` installs) and
torch are optional: a missing one is one line, and its columns are empty.

Run: ``make bench`` (after bench.py) or ``python benchmarks/bench_images.py [--reps N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import Workload, machine, make_input, upsample_model

THREADS = 2


CASES = [
    Workload("RGB uint8 (H, W, 3) linear", (2000, 3000, 3), (2, 2, 1), "linear", "uint8"),
    Workload("RGB uint8 (1, H, W, 3) linear", (1, 2000, 3000, 3), (1, 2, 2, 1), "linear",
              "uint8"),
    Workload("grey uint8 linear", (4000, 6000), (2, 2), "linear", "uint8"),
    Workload("RGB float32 (H, W, 3) linear", (1000, 1500, 3), (2, 2, 1), "linear", "float32"),
    Workload("RGB uint8 (H, W, 3) nearest", (1000, 1500, 3), (2, 2, 1), "nearest", "uint8"),
]
# the columns, in order; each case fills those its libraries run
COLUMNS = ("ours", "cv2 exact", "cv2", "ORT", "torch")


def _optional(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        return None


def contenders(case: Workload, x: np.ndarray) -> dict[str, Callable[[], object]]:
    """Each library's call for the case (those installed and able to run it)."""
    import onnxruntime as ort

    from onnx_upsample import set_num_threads, upsample

    set_num_threads(THREADS)
    fns: dict[str, Callable[[], object]] = {
        "ours": lambda: upsample(x, case.scales, case.mode)}
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    w = Workload(case.name, case.shape, case.scales, case.mode, case.dtype)
    session = ort.InferenceSession(upsample_model(w), options,
                                   providers=["CPUExecutionProvider"])
    fns["ORT"] = lambda: session.run(None, {"X": x})[0]
    image = x.reshape(x.shape[-3:] if x.ndim > 2 and x.shape[-1] <= 4 else x.shape)
    height, width = image.shape[:2]
    size = (int(width * case.scales[-2 if image.ndim == 3 else -1]),
            int(height * case.scales[-3 if image.ndim == 3 else -2]))
    cv2 = _optional("cv2")
    if cv2 is not None:
        cv2.setNumThreads(THREADS)
        if case.mode == "linear":
            if case.dtype == "uint8":
                fns["cv2 exact"] = lambda: cv2.resize(
                    image, size, interpolation=cv2.INTER_LINEAR_EXACT)
            fns["cv2"] = lambda: cv2.resize(
                image, size, interpolation=cv2.INTER_LINEAR)
        else:
            fns["cv2"] = lambda: cv2.resize(
                image, size, interpolation=cv2.INTER_NEAREST)
    torch = _optional("torch")
    if torch is not None:
        torch.set_num_threads(THREADS)
        planes = image if image.ndim == 3 else image[:, :, None]
        # (1, C, H, W) over the image's memory: channels last, no copy
        t = torch.from_numpy(planes).permute(2, 0, 1)[None]
        mode = "bilinear" if case.mode == "linear" else "nearest"
        interpolate = torch.nn.functional.interpolate

        def run_torch() -> object:
            return interpolate(t, size=(size[1], size[0]), mode=mode,
                               **({"align_corners": False} if mode == "bilinear" else {}))

        try:
            run_torch()
            fns["torch"] = run_torch
        except RuntimeError as error:  # e.g. no uint8 bilinear in this torch
            print(f"torch skipped for {case.name}: {error}")
    return fns


def interleaved(fns: dict[str, Callable[[], object]], reps: int) -> dict[str, list[float]]:
    """Seconds per call of each function, one call of each per round, the order rotated."""
    names = list(fns)
    for name in names:  # warm: first-call set-up out of the timings
        fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15, help="rounds of interleaved calls")
    parser.add_argument("--only", nargs="*", help="case names (or their first word)")
    args = parser.parse_args()
    for module, why in (("cv2", "pip install opencv-python-headless (or make bench)"),
                        ("torch", "pip install torch")):
        if _optional(module) is None:
            print(f"{module} is not installed: its columns are skipped ({why})")
    cases = [c for c in CASES if not args.only or c.name in args.only
             or c.name.split()[0] in args.only]
    print(f"\nMachine: {machine()}; {THREADS} threads each; medians of {args.reps} "
          "interleaved calls in ms; ratios: ours / theirs.\n")
    print("| workload | " + " | ".join(COLUMNS) + " | " +
          " | ".join(f"ours/{c}" for c in COLUMNS[1:]) + " |")
    print("|---" * (2 * len(COLUMNS)) + "|")
    for case in cases:
        x = make_input(Workload(case.name, case.shape, case.scales, case.mode, case.dtype))
        times = interleaved(contenders(case, x), args.reps)
        ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
        cells = [f"{ms[c]:.1f}" if c in ms else "—" for c in COLUMNS]
        ratios = [f"{ms['ours'] / ms[c]:.2f}" if c in ms else "—" for c in COLUMNS[1:]]
        print(f"| {case.name} {case.shape} | " + " | ".join(cells + ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
