"""Where ``onnx_upsample.dask`` spends its time, before and after issue 19, side by side.

1. **Threaded scheduler, 1 GiB output** (a (256, 256, 512) float32 volume, scales 2 2 2,
   in 2 MiB and 32 MiB input chunks): the previous ``dask.py`` (loaded from git, ``--before
   REV``) and the current one, in the same run, against the in-memory ``upsample``. For
   each: tasks, graph keys, pickled bytes per task, graph build time, the medians of
   ``da.store`` into a preallocated array and of ``compute()``, their ratios to in memory,
   and the time spent inside our task function (kernels, window assembly, output
   allocation) summed over tasks; the rest is dask's (scheduling, the store copy, the
   concatenation of ``compute()``). The current version runs once more with every output
   chunk a fresh array (``ONNX_UPSAMPLE_REUSE_OUTPUTS=0``): the share of buffer reuse.
   Versions (and in 3, schedulers) run in turns, one of each per round, so that the load
   of a shared machine falls on all alike.
2. **Per-task overhead**: 1024 tiny tasks on the synchronous scheduler, before and after:
   microseconds per task, of which inside our task function.
3. **A real cluster against the threaded scheduler**: a zarr store upsampled into a zarr
   store (``to_zarr``), 1 GiB of output, on a ``LocalCluster`` of two worker processes with
   one thread and 400 MiB each (less memory together than the output), and on the threaded
   scheduler, and (for scale) the same job without dask: read whole, upsample in memory,
   write; medians and ratios; every output byte compared with the in-memory result.
4. ``--issue``: the issue's case, which ended in ``KilledWorker`` with the previous default
   chunks: (256, 1024, 1024) float32 in (64, 512, 512) zarr chunks, linear x2 (8 GiB of
   zarr output) on ``LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="1.5GB")``
   with the default chunks: time, worker restarts, sampled chunks compared. Several minutes
   and about 9 GiB of disk.

    .venv/bin/python benchmarks/bench_dask.py [--before REV] [--repeats N] [--issue]
        [--skip-cluster] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import zarr

import onnx_upsample
import onnx_upsample.dask as oud

MiB = 2**20
GiB = 2**30
SCALES = (2.0, 2.0, 2.0)
ROOT = Path(__file__).resolve().parents[1]


def _median(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth field with a little noise: realistic for compression, not constant."""
    rng = np.random.default_rng(seed)
    i, j, k = np.ogrid[: shape[0], : shape[1], : shape[2]]
    field = (np.sin(i * 0.05) + np.cos(j * 0.07) + 0.001 * k).astype(np.float32)
    return field + rng.normal(0, 0.01, shape).astype(np.float32)


def _load_before(rev: str) -> types.ModuleType:
    """``src/onnx_upsample/dask.py`` at ``rev``, imported as ``onnx_upsample._dask_before``
    (it imports the package's other modules as they are now)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:src/onnx_upsample/dask.py"],
        capture_output=True, text=True, check=True,
    ).stdout
    spec = importlib.util.spec_from_loader("onnx_upsample._dask_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "onnx_upsample"
    sys.modules[spec.name] = module
    exec(compile(source, f"dask.py@{rev}", "exec"), module.__dict__)
    return module


class _Timed:
    """Wraps a module's task function (before the graph is built, which captures it) and
    sums the time spent inside it across threads."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module, self.original = module, module._compute_block
        self.total, self.lock = 0.0, threading.Lock()

        def timed(*args: object) -> object:
            start = time.perf_counter()
            try:
                return self.original(*args)
            finally:
                with self.lock:
                    self.total += time.perf_counter() - start

        timed.__module__ = self.original.__module__
        timed.__qualname__ = self.original.__qualname__  # pickled by name: the original
        self.timed = timed

    def __enter__(self) -> _Timed:
        self.module._compute_block = self.timed
        return self

    def __exit__(self, *exc: object) -> None:
        self.module._compute_block = self.original


def _graph_stats(lazy: da.Array) -> tuple[int, int, float]:
    """(output tasks, graph keys, pickled bytes per output task)."""
    graph = dict(lazy.__dask_graph__())
    own = {k: v for k, v in graph.items() if isinstance(k, tuple) and k[0] == lazy.name}
    return len(own), len(graph), len(pickle.dumps(own)) / max(1, len(own))


# --- 1 and 2 ---------------------------------------------------------------------------------


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median time of each function, run in turns (one of each per round), so that the load
    of a shared machine falls on all of them alike."""
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(repeats):
        for label, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[label].append(time.perf_counter() - start)
    return {label: statistics.median(t) for label, t in times.items()}


FRESH = "after, fresh outputs"


def _fresh_if(label: str, fn: Callable[[], object]) -> Callable[[], object]:
    """``fn``, run with the reuse of output buffers turned off for the FRESH variant."""
    if label != FRESH:
        return fn

    def fresh() -> object:
        os.environ["ONNX_UPSAMPLE_REUSE_OUTPUTS"] = "0"
        try:
            return fn()
        finally:
            del os.environ["ONNX_UPSAMPLE_REUSE_OUTPUTS"]

    return fresh


def overhead(versions: dict[str, types.ModuleType], repeats: int) -> None:
    shape = (256, 256, 512)
    x = _volume(shape)
    out_shape = tuple(2 * n for n in shape)
    out_mib = math.prod(shape) * 8 * 4 / MiB
    print(f"\n## 1. threaded scheduler: {shape} float32 -> x2 ({out_mib:.0f} MiB), "
          f"medians of {repeats} (versions run in turns)\n")

    def fresh() -> None:  # what any fresh 1 GiB result costs before a byte is computed
        np.empty(out_shape, np.float32).fill(0)

    floor = _median(fresh, repeats)
    print(f"A fresh {out_mib:.0f} MiB array, first write (page faults): {floor:.3f} s\n")
    print("| mode | input chunks | version | tasks | graph keys | bytes/task | build ms | "
          "store s | store / memory | compute() s | compute / memory | inside tasks s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in ("nearest", "linear"):
        onnx_upsample.upsample(x, SCALES, mode)  # load the kernels, fill the buffer pool
        t_memory = _median(lambda mode=mode: onnx_upsample.upsample(x, SCALES, mode), repeats)
        print(f"| {mode} | in memory | | | | | | {t_memory:.3f} | 1 | | | |")
        for in_chunks in ((32, 128, 128), (64, 256, 512)):
            d = da.from_array(x, chunks=in_chunks)
            # the current version once more with every output chunk a fresh array: the
            # share of the buffer reuse in the difference
            variants = {**versions, FRESH: oud}
            timers = {label: _Timed(module) for label, module in variants.items()}
            lazies, stats = {}, {}
            for label, module in variants.items():
                with timers[label]:
                    start = time.perf_counter()
                    lazies[label] = module.upsample(d, SCALES, mode)
                    stats[label] = (*_graph_stats(lazies[label]), time.perf_counter() - start)
            target = np.empty(out_shape, np.float32)  # one preallocated, touched target
            target.fill(0)

            def storer(lazy: da.Array, target: np.ndarray = target) -> Callable[[], object]:
                return lambda: da.store(lazy, target, lock=False)

            for timer in timers.values():  # the graphs hold the timed functions
                timer.total = 0.0
            t_store = _interleaved({label: _fresh_if(label, storer(lazies[label]))
                                    for label in variants}, repeats)
            inside = {label: timer.total / repeats for label, timer in timers.items()}
            t_compute = _interleaved({label: _fresh_if(label, lazies[label].compute)
                                      for label in variants}, repeats)
            mib = math.prod(in_chunks) * 4 / MiB
            for label in variants:
                tasks, keys, per_task, build = stats[label]
                print(f"| {mode} | {in_chunks} ({mib:.0f} MiB) | {label} | {tasks} | {keys} | "
                      f"{per_task:.0f} | {build * 1e3:.0f} | {t_store[label]:.3f} | "
                      f"{t_store[label] / t_memory:.1f}x | {t_compute[label]:.3f} | "
                      f"{t_compute[label] / t_memory:.1f}x | {inside[label]:.3f} |", flush=True)


def per_task(versions: dict[str, types.ModuleType], repeats: int) -> None:
    x = np.random.default_rng(0).standard_normal((64, 64, 128)).astype(np.float32)
    d = da.from_array(x, chunks=8)
    print("\n## 2. per-task overhead: 1024 tasks of 16**3 outputs, synchronous scheduler\n")
    print("| mode | version | us per task | of which inside our task function |")
    print("|---|---|---|---|")
    for mode in ("nearest", "linear"):
        for label, module in versions.items():
            with _Timed(module) as timed, dask.config.set(scheduler="synchronous"):
                lazy = module.upsample(d, SCALES, mode, chunks=16)
                assert lazy.npartitions == 1024
                timed.total = 0.0
                t = _median(lambda lazy=lazy: da.store(
                    lazy, np.empty(lazy.shape, lazy.dtype), lock=False), repeats)
                inside = timed.total / repeats
            print(f"| {mode} | {label} | {t / 1024 * 1e6:.0f} | {inside / 1024 * 1e6:.0f} |",
                  flush=True)


# --- 3 and 4 ---------------------------------------------------------------------------------


def _make_store(path: Path, shape: tuple[int, ...], chunks: tuple[int, ...]) -> None:
    z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype="f4", overwrite=True)
    for start in range(0, shape[0], chunks[0]):
        stop = min(start + chunks[0], shape[0])
        z[start:stop] = _volume((stop - start, *shape[1:]), seed=start)


def _peak_rss() -> int:
    """This process's peak resident memory in KiB: Linux's ``VmHWM`` (``ru_maxrss`` of a
    process started by fork also counts its parent's memory at the fork)."""
    import resource

    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _worker_peaks(client: object) -> str:
    peaks = client.run(_peak_rss).values()  # type: ignore[attr-defined]
    return ", ".join(f"{kib / 1024:.0f} MiB" for kib in sorted(peaks))


def cluster_vs_threaded(workdir: Path, repeats: int) -> None:
    import distributed

    shape, chunks = (128, 512, 512), (32, 256, 256)
    source = workdir / "in.zarr"
    _make_store(source, shape, chunks)
    x = zarr.open_array(str(source), mode="r")[...]
    out = workdir / "out.zarr"
    out_gib = math.prod(shape) * 8 * 4 / GiB
    print(f"\n## 3. zarr {shape} float32 in {chunks} chunks -> zarr x2 ({out_gib:.0f} GiB), "
          f"to_zarr, medians of {repeats} (schedulers run in turns)\n")
    print("| mode | scheduler | output chunks | tasks | time s | ratio | output equal |")
    print("|---|---|---|---|---|---|---|")

    def run(mode: str, scheduler: str | None) -> da.Array:
        with dask.config.set(scheduler=scheduler):  # None: the client's cluster
            lazy = oud.upsample(da.from_zarr(str(source)), SCALES, mode)
            lazy.to_zarr(str(out), overwrite=True)
        return lazy

    def equal(mode: str) -> bool:
        got = zarr.open_array(str(out), mode="r")[...]
        return got.tobytes() == onnx_upsample.upsample(x, SCALES, mode).tobytes()

    def in_memory(mode: str) -> None:  # the same job without dask, for scale
        y = onnx_upsample.upsample(zarr.open_array(str(source), mode="r")[...], SCALES, mode)
        target = zarr.create_array(str(workdir / "memory.zarr"), shape=y.shape,
                                   chunks=(64, 512, 512), dtype=y.dtype, overwrite=True)
        target[...] = y

    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 memory_limit="400MiB", dashboard_address=":0",
                                 silence_logs=40) as cluster,
        distributed.Client(cluster) as client,
    ):
        for mode in ("nearest", "linear"):
            lazies = {"threads": run(mode, "threads")}
            ok = {"threads": equal(mode)}
            lazies["cluster"] = run(mode, None)  # also the warm-up: workers import once
            ok["cluster"] = equal(mode)
            t = _interleaved({"memory": lambda mode=mode: in_memory(mode),
                              "threads": lambda mode=mode: run(mode, "threads"),
                              "cluster": lambda mode=mode: run(mode, None)}, repeats)
            print(f"| {mode} | none: read whole, upsample in memory, write | "
                  f"{lazies['threads'].chunksize} | | {t['memory']:.2f} | "
                  f"{t['memory'] / t['threads']:.2f}x | |")
            names = {"threads": "threaded (2 threads)",
                     "cluster": "LocalCluster 2 x 1 thread, 400 MiB each"}
            for label in ("threads", "cluster"):
                lazy = lazies[label]
                print(f"| {mode} | {names[label]} | {lazy.chunksize} | {lazy.npartitions} | "
                      f"{t[label]:.2f} | {t[label] / t['threads']:.2f}x | {ok[label]} |",
                      flush=True)
        print(f"\nPeak memory of the workers (all runs): {_worker_peaks(client)}")


def issue_case(workdir: Path) -> None:
    import distributed

    shape, chunks = (256, 1024, 1024), (64, 512, 512)
    source, out = workdir / "issue_in.zarr", workdir / "issue_out.zarr"
    _make_store(source, shape, chunks)
    print(f"\n## 4. the issue's case: zarr {shape} float32 in {chunks} chunks, linear x2, "
          "LocalCluster(n_workers=2, threads_per_worker=1, memory_limit='1.5GB')\n")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 memory_limit="1.5GB", dashboard_address=":0",
                                 silence_logs=40) as cluster,
        distributed.Client(cluster) as client,
    ):
        workers = set(client.scheduler_info()["workers"])
        lazy = oud.upsample(da.from_zarr(str(source)), SCALES, "linear")
        start = time.perf_counter()
        lazy.to_zarr(str(out), overwrite=True)
        elapsed = time.perf_counter() - start
        restarted = len(set(client.scheduler_info()["workers"]) ^ workers)
        peaks = _worker_peaks(client)
    written = zarr.open_array(str(out), mode="r")
    x = zarr.open_array(str(source), mode="r")
    checked = []
    for z0 in (0, 255, 511):  # output planes near the start, middle and end, whole
        lo = max(0, z0 // 2 - 2)
        crop = x[lo: min(shape[0], z0 // 2 + 3)]
        # output rows of the crop line up with the whole array's once the offset is a
        # multiple of the input rows: upsample the crop and take the matching plane
        expected = onnx_upsample.upsample(crop, SCALES, "linear")
        plane = z0 - 2 * lo
        if 0 <= plane < expected.shape[0] - 2 or z0 == 2 * shape[0] - 1:
            checked.append(written[z0].tobytes() == expected[plane].tobytes())
    print(f"- output chunks {lazy.chunksize} ({math.prod(lazy.chunksize) * 4 / MiB:.0f} MiB), "
          f"{lazy.npartitions} tasks; to_zarr {elapsed:.1f} s; workers replaced: {restarted}; "
          f"peak worker memory {peaks}; "
          f"sampled output planes equal to in memory: {sum(checked)}/{len(checked)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="bbff47d",
                        help="git revision of the previous dask.py (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--issue", action="store_true", help="also run the issue's 8 GiB case")
    parser.add_argument("--skip-cluster", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    versions = {f"before ({args.before})": _load_before(args.before), "after": oud}
    print(f"onnx_upsample.dask before/after; dask {dask.__version__}, "
          f"{len(os.sched_getaffinity(0))} cores")
    if not args.skip_overhead:
        overhead(versions, args.repeats)
        per_task(versions, args.repeats)
    if args.skip_cluster and not args.issue:
        return
    workdir = Path(tempfile.mkdtemp(prefix="bench_dask_", dir=args.workdir))
    try:
        if not args.skip_cluster:
            cluster_vs_threaded(workdir, args.repeats)
        if args.issue:
            issue_case(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
