"""Side-by-side benchmark of onnx-upsample against onnxruntime 1.32 (a script, not a test).

For each workload of issue #3 it times, in one process: ``upsample`` into a preallocated
``out=``, ``upsample`` with a fresh result, ORT (opset-9 model, intra-op threads = cores),
the onnx reference evaluator where it runs (integer-scale nearest only), and a memory copy
of the output's size (the bandwidth bound). Each implementation runs in its own block of
repetitions with a pause between blocks, because idle worker threads that spin (numba's
OpenMP pool, ORT's intra-op pool) slow whatever runs next on a 2-core machine; the whole
sequence runs twice, in opposite orders, and the table flags any figure that moved with
the order. Peak resident memory of one fresh call is measured in a child process per
workload. Run: ``make bench`` or ``python benchmarks/bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Workload:
    name: str
    shape: tuple[int, ...]
    scales: tuple[float, ...]
    mode: str
    dtype: str
    compare_with: str = ""  # for types/ranks ORT refuses: the float32 workload to compare per byte


WORKLOADS = [
    Workload("W1 detection head", (1, 256, 13, 13), (1, 1, 2, 2), "nearest", "float32"),
    Workload("W2", (1, 64, 256, 256), (1, 1, 2, 2), "nearest", "float32"),
    Workload("W3", (1, 32, 256, 256), (1, 1, 3, 3), "nearest", "float32"),
    Workload("W4", (1, 64, 256, 256), (1, 1, 1.5, 1.5), "nearest", "float32"),
    Workload("W5 image", (1, 3, 1080, 1920), (1, 1, 2, 2), "nearest", "uint8"),
    Workload("W6", (1, 64, 256, 256), (1, 1, 2, 2), "linear", "float32"),
    Workload("W7 image", (1, 3, 540, 960), (1, 1, 2, 2), "linear", "float32"),
    Workload("W8 volume", (1, 8, 32, 64, 64), (1, 1, 2, 2, 2), "linear", "float32"),
    Workload("W9 image", (1, 3, 540, 960), (1, 1, 2, 2), "linear", "uint8"),
    # element types and ranks ORT refuses: time per output byte against the float32 workload
    # with the same mode and number of interpolated axes
    Workload("X1 float64", (1, 64, 256, 256), (1, 1, 2, 2), "nearest", "float64", "W2"),
    Workload("X2 int64", (1, 64, 256, 256), (1, 1, 2, 2), "nearest", "int64", "W2"),
    Workload("X3 complex64", (1, 64, 256, 256), (1, 1, 2, 2), "nearest", "complex64", "W2"),
    Workload("X4 rank 6", (1, 4, 16, 1, 256, 256), (1, 1, 1, 1, 2, 2), "nearest", "float32",
             "W2"),
    Workload("X5 batch x2", (2, 32, 256, 256), (2, 1, 2, 2), "nearest", "float32", "W2"),
    Workload("X6 float64", (1, 64, 256, 256), (1, 1, 2, 2), "linear", "float64", "W6"),
    Workload("X7 int64", (1, 64, 256, 256), (1, 1, 2, 2), "linear", "int64", "W6"),
    Workload("X8 complex64", (1, 64, 256, 256), (1, 1, 2, 2), "linear", "complex64", "W6"),
    Workload("X9 rank 6", (1, 4, 16, 1, 256, 256), (1, 1, 1, 1, 2, 2), "linear", "float32",
             "W6"),
    Workload("X10 batch x2", (2, 8, 32, 64, 64), (2, 1, 1, 2, 2), "linear", "float32", "W8"),
]


def make_input(w: Workload, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(w.dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 200, w.shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(w.shape) + 1j * rng.standard_normal(w.shape)).astype(dtype)
    return rng.standard_normal(w.shape).astype(dtype)


def ort_session(w: Workload) -> Callable[[np.ndarray], np.ndarray] | None:
    """An ORT session for the workload as an opset-9 model, or None where ORT refuses it."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    types = {"float32": TensorProto.FLOAT, "uint8": TensorProto.UINT8}
    if w.dtype not in types:
        return None
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=w.mode)
    graph = helper.make_graph(
        [node], "bench",
        [helper.make_tensor_value_info("X", types[w.dtype], list(w.shape))],
        [helper.make_tensor_value_info("Y", types[w.dtype], None)],
        [helper.make_tensor("scales", TensorProto.FLOAT, [len(w.scales)], list(w.scales))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
    except Exception:  # ORT refuses the rank or scales for this mode
        return None
    return lambda x: session.run(None, {"X": x})[0]


def reference_evaluator(w: Workload) -> Callable[[np.ndarray], np.ndarray] | None:
    """onnx's ReferenceEvaluator on the same model, where it runs (integer-scale nearest)."""
    if w.mode != "nearest" or any(s != int(s) for s in w.scales) or w.dtype != "float32":
        return None
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode="nearest")
    graph = helper.make_graph(
        [node], "bench", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_tensor("scales", TensorProto.FLOAT, [len(w.scales)], list(w.scales))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    evaluator = ReferenceEvaluator(model)
    return lambda x: evaluator.run(None, {"X": x})[0]


def time_block(fn: Callable[[], object], seconds: float, min_runs: int) -> list[float]:
    """Wall times of repeated calls after two warm-up calls."""
    fn()
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 2000:
            break
    return times


def measure_memory(name: str) -> float:
    """Peak resident-memory growth of one fresh call, over the output's size (child process)."""
    result = subprocess.run(
        [sys.executable, __file__, "--memory-child", name],
        capture_output=True, text=True, check=True,
    )
    return float(json.loads(result.stdout.strip().splitlines()[-1])["ratio"])


def _resident(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def memory_child(name: str) -> None:
    """Peak resident memory added by one fresh call (Linux: VmHWM reset via clear_refs)."""
    from onnx_upsample import output_shape, upsample

    w = next(w for w in WORKLOADS if w.name == name)
    x = make_input(w)
    small = x[tuple(slice(0, 2) for _ in x.shape)]
    upsample(small, w.scales, w.mode)  # load the kernels (numba, caches) before measuring
    out_bytes = int(np.prod(output_shape(x.shape, w.scales))) * x.dtype.itemsize
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak (VmHWM) to the current resident size
    before = _resident("VmRSS")
    y = upsample(x, w.scales, w.mode)
    growth = _resident("VmHWM") - before
    print(json.dumps({"ratio": growth / out_bytes, "out_bytes": out_bytes, "y": y.shape}))


def run(args: argparse.Namespace) -> None:
    from onnx_upsample import output_shape, upsample

    workloads = [w for w in WORKLOADS if not args.only or w.name.split()[0] in args.only]
    rows = {}
    for w in workloads:
        x = make_input(w)
        y = upsample(x, w.scales, w.mode)
        out = np.empty_like(y)
        src, dst = np.ones_like(y), np.empty_like(y)
        impls: dict[str, Callable[[], object]] = {
            "out=": lambda x=x, w=w, out=out: upsample(x, w.scales, w.mode, out=out),
            "fresh": lambda x=x, w=w: upsample(x, w.scales, w.mode),
            "copy": lambda src=src, dst=dst: np.copyto(dst, src),
        }
        ort_run = ort_session(w)
        exact = ""
        if ort_run is not None:
            impls["ORT"] = lambda x=x, f=ort_run: f(x)
            exact = "yes" if ort_run(x).tobytes() == y.tobytes() else "NO"
        ref = reference_evaluator(w)
        if ref is not None and not args.quick:
            impls["onnx ref"] = lambda x=x, f=ref: f(x)
        samples: dict[str, list[list[float]]] = {k: [] for k in impls}
        for order in (list(impls), list(reversed(impls))):
            for key in order:
                time.sleep(args.settle)
                samples[key].append(time_block(impls[key], args.seconds, args.min_runs))
        medians = {k: [statistics.median(v) for v in runs] for k, runs in samples.items()}
        best = {k: statistics.median([t for run in samples[k] for t in run]) for k in samples}
        drift = max(abs(a - b) / min(a, b) for a, b in medians.values())
        out_bytes = int(np.prod(output_shape(x.shape, w.scales))) * x.dtype.itemsize
        memory = measure_memory(w.name) if not args.quick else float("nan")
        rows[w.name] = (w, best, drift, out_bytes, exact, memory)
        print(f"done {w.name}", file=sys.stderr, flush=True)
        del x, y, out, src, dst
    print_table(rows)


def print_table(rows: dict) -> None:  # type: ignore[type-arg]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; medians in ms; ratios of medians.\n")
    print("| workload | output MB | copy | ours out= | ours fresh | ORT | onnx ref | "
          "out=/ORT | fresh/ORT | out=/copy | peak mem / output | exact vs ORT | order drift |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (w, best, drift, out_bytes, exact, memory) in rows.items():
        ms = {k: v * 1e3 for k, v in best.items()}
        ort_ms = ms.get("ORT")

        def ratio(a: float, b: float | None) -> str:
            return f"{a / b:.2f}" if b else "—"

        extra = ""
        if w.compare_with and w.compare_with in {r.split()[0] for r in rows}:
            base_name = next(r for r in rows if r.split()[0] == w.compare_with)
            _, base_best, _, base_bytes, _, _ = rows[base_name]
            per_byte = best["out="] / out_bytes
            base_per_byte = base_best["out="] / base_bytes
            extra = f" (per byte vs {w.compare_with}: {per_byte / base_per_byte:.2f}x)"
        print(
            f"| {name}{extra} | {out_bytes / 1e6:.1f} | {ms['copy']:.3f} | {ms['out=']:.3f} | "
            f"{ms['fresh']:.3f} | {f'{ort_ms:.3f}' if ort_ms else 'refused'} | "
            f"{ms['onnx ref']:.2f} |" if "onnx ref" in ms else
            f"| {name}{extra} | {out_bytes / 1e6:.1f} | {ms['copy']:.3f} | {ms['out=']:.3f} | "
            f"{ms['fresh']:.3f} | {f'{ort_ms:.3f}' if ort_ms else 'refused'} | — |",
            end="",
        )
        print(f" {ratio(ms['out='], ort_ms)} | {ratio(ms['fresh'], ort_ms)} | "
              f"{ms['out='] / ms['copy']:.2f} | {memory:.2f} | {exact or '—'} | "
              f"{drift * 100:.0f}% |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short blocks, no memory runs")
    parser.add_argument("--only", nargs="*", help="workload ids, e.g. W1 W6 X3")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per block")
    parser.add_argument("--min-runs", type=int, default=15)
    parser.add_argument("--settle", type=float, default=0.5, help="pause between blocks")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    if args.quick:
        args.seconds, args.min_runs, args.settle = 0.3, 7, 0.2
    run(args)


if __name__ == "__main__":
    main()
