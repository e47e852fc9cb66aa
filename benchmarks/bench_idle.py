"""Small calls after the thread pools have gone idle: ours against onnxruntime (a script).

A call that finds every helper thread asleep must not wait for one to wake (40-200 us on a
virtual machine): the YOLO head (1, 256, 13, 13) nearest x2 is about 40 us of work. Each
measurement sleeps ``--idle`` milliseconds before every call, long past the pools' spinning
(50 us for ours, ORT's own), then times one call; the implementations take turns call by
call; medians over ``--runs`` calls each. Ours runs
with one thread and with the cores this process may use, fresh and into ``out=``; ORT with
``intra_op_num_threads`` = cores. The same is repeated with no sleep (pools awake).

Run: ``python benchmarks/bench_idle.py [--idle 2] [--runs 300]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import onnx_upsample as ou
from onnx_upsample._threads import available_cores

CASES = [
    ("yolo head nearest x2", (1, 256, 13, 13), [1, 1, 2, 2], "nearest"),
    ("yolo head linear x2", (1, 256, 13, 13), [1, 1, 2, 2], "linear"),
    ("small image nearest x2", (1, 3, 120, 160), [1, 1, 2, 2], "nearest"),
]


def ort_run(shape: tuple[int, ...], scales: list[float], mode: str,
            threads: int) -> Callable[[np.ndarray], object]:
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(scales, np.float32), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {"x": x})


def measure(shape: tuple[int, ...], scales: list[float], mode: str, cores: int,
            idle_s: float, runs: int) -> tuple[float, float, float, float]:
    """Medians of ours on one thread and on ``cores`` (out= and fresh), and of ORT.

    After an idle pause the four take turns call by call, in an order that rotates every
    round, so that each meets the same machine (a virtual CPU's state after a sleep drifts
    over seconds, and whichever block ran first paid for it). With no pause each runs its
    own block: ORT's workers spin after a run, and would slow whatever ran next."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.empty(ou.output_shape(shape, scales), np.float32)
    ort_call = ort_run(shape, scales, mode, cores)

    def ours(threads: int, into: np.ndarray | None) -> Callable[[], object]:
        def call() -> object:
            ou.set_num_threads(threads)  # outside the timed call
            start = time.perf_counter()
            ou.upsample(x, scales, mode, out=into)
            return time.perf_counter() - start
        return call

    def theirs() -> object:
        start = time.perf_counter()
        ort_call(x)
        return time.perf_counter() - start

    timed = [ours(1, out), ours(cores, out), ours(cores, None), theirs]
    for fn in timed:  # warm-up: prepared kernels, ORT's session
        fn()
    if idle_s:
        times: list[list[float]] = [[] for _ in timed]
        for r in range(runs):
            for k in range(len(timed)):
                which = (r + k) % len(timed)
                time.sleep(idle_s)
                times[which].append(float(timed[which]()))  # type: ignore[arg-type]
        one, into, fresh, ort_time = (statistics.median(t) * 1e6 for t in times)
        return one, into, fresh, ort_time
    one, into, fresh, ort_time = (
        statistics.median(float(fn()) for _ in range(runs)) * 1e6  # type: ignore[arg-type]
        for fn in timed)
    return one, into, fresh, ort_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=2.0, help="sleep before each call, ms")
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    cores = available_cores()
    print(f"{cores} cores; medians in us over {args.runs} calls\n")
    print("| case | idle | ours 1 thread out= | ours out= | ours fresh | ORT | out=/ORT | "
          "fresh/ORT | out= / 1 thread |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, shape, scales, mode in CASES:
        for idle in (args.idle / 1e3, 0.0):
            one, into, fresh, theirs = measure(shape, scales, mode, cores, idle, args.runs)
            print(f"| {name} | {idle * 1e3:.0f} ms | {one:.1f} | {into:.1f} | {fresh:.1f} | "
                  f"{theirs:.1f} | {into / theirs:.2f} | {fresh / theirs:.2f} | "
                  f"{into / one:.2f} |")


if __name__ == "__main__":
    main()
