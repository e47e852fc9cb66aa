"""Benchmark of the chunked path (issue 5's three goals), side by side in one run.

1. **Chunked vs in memory**: ``onnx_upsample.dask.upsample`` stored into a numpy array, against
   ``onnx_upsample.upsample`` on the same input (3-D float32 volume, scales 2 2 2). Goal:
   within 2x for linear, within 3x for nearest. ``compute()`` (which concatenates the chunks
   once more) is shown too.
2. **Beyond memory**: a zarr store upsampled into a zarr store by the command line
   (``onnx-upsample apply in.zarr out.zarr``) in a child process; its peak resident memory
   (``VmHWM``, the process's own ``ru_maxrss``) is compared with a budget, and sampled
   output chunks with the in-memory result. Goal: an output 8x larger than the budget
   (4 GiB under 512 MiB with ``--full``). ``--distributed`` runs the same graph on a
   ``LocalCluster`` whose worker has the budget as its ``memory_limit``.
3. **Graph overhead**: building (and materialising) the graph of a 1000-chunk array.
   Goal: under a second.

The default run is small (about a minute or two on 2 cores); ``--full`` uses the goal sizes
(1 GiB in goal 1, 4 GiB of zarr output in goal 2; several minutes and about 5 GiB of disk).
Memory is measured after one small warm-up run of the same command (it loads the
libraries and touches the files once, as any real first run does).

    .venv/bin/python benchmarks/bench_chunked.py [--full] [--distributed] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
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


@dataclass
class Row:
    goal: str
    case: str
    baseline: str
    measured: str
    ratio: str
    target: str
    ok: bool | None


def _best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth field with a little noise: realistic for compression, not constant."""
    rng = np.random.default_rng(seed)
    i, j, k = np.ogrid[: shape[0], : shape[1], : shape[2]]
    field = (np.sin(i * 0.05) + np.cos(j * 0.07) + 0.001 * k).astype(np.float32)
    return field + rng.normal(0, 0.01, shape).astype(np.float32)


# --- goal 1 --------------------------------------------------------------------------------------


def goal_chunked_vs_memory(out_bytes: int, repeats: int) -> list[Row]:
    # input (a, a, 2a) float32 -> output 8x as large
    a = round((out_bytes / 4 / 8 / 2) ** (1 / 3))
    in_shape = (a, a, 2 * a)
    x = _volume(in_shape)
    # slabs along the first axis, about 32 MiB of output each (64 a**2 bytes per input row)
    in_chunks = (max(1, min(a, 32 * MiB // (64 * a * a))), a, 2 * a)
    out_size = math.prod(in_shape) * 8 * 4
    rows = []
    for mode, limit in (("linear", 2.0), ("nearest", 3.0)):
        onnx_upsample.upsample(x[:4, :4, :4], SCALES, mode)  # compile outside the timing
        t_memory = _best(lambda mode=mode: onnx_upsample.upsample(x, SCALES, mode), repeats)
        lazy = oud.upsample(da.from_array(x, chunks=in_chunks), SCALES, mode)

        def store(lazy: da.Array = lazy) -> None:
            target = np.empty(lazy.shape, lazy.dtype)
            da.store(lazy, target, lock=False)

        t_store = _best(store, repeats)
        t_compute = _best(lazy.compute, 1)
        case = (f"{mode}, {in_shape} -> {lazy.shape} float32 ({out_size / MiB:.0f} MiB), "
                f"{lazy.npartitions} chunks")
        rows.append(Row("1 chunked vs in memory", case, f"in memory {t_memory:.2f} s",
                        f"chunked {t_store:.2f} s (compute() {t_compute:.2f} s)",
                        f"{t_store / t_memory:.2f}x", f"<= {limit:g}x",
                        t_store / t_memory <= limit))
    return rows


# --- goal 2 --------------------------------------------------------------------------------------


def _make_input_store(path: Path, in_shape: tuple[int, ...], chunks: tuple[int, ...]) -> None:
    z = zarr.create_array(str(path), shape=in_shape, chunks=chunks, dtype="f4", overwrite=True)
    slab = chunks[0]
    for start in range(0, in_shape[0], slab):
        stop = min(start + slab, in_shape[0])
        block = _volume((stop - start, *in_shape[1:]), seed=start)
        z[start:stop] = block


def _sample_chunks(out: zarr.Array, in_store: zarr.Array, mode: str, limit_bytes: int) -> str:
    """Compare sampled output chunks with the in-memory result of a leading crop of the input.

    Output index ``o`` depends only on ``o`` and the input near ``o / s``: a crop
    ``x[:K]`` with ``K >= ceil(stop / s) + 2`` gives exactly the same values for outputs below
    ``stop`` (no clamping at the crop's end is reached), so a chunk can be checked without the
    whole output in memory.
    """
    grid = [range(math.ceil(n / c)) for n, c in zip(out.shape, out.chunks, strict=True)]
    last = [len(g) - 1 for g in grid]
    picks = {(0, 0, 0), (last[0], 0, 0), (0, last[1], 0), (0, 0, last[2]), (1, 1, 1)}
    rng = np.random.default_rng(1)
    for _ in range(200):
        if len(picks) >= 8:
            break
        pick = tuple(int(rng.integers(0, len(g))) for g in grid)
        crop = [min(n, math.ceil((p + 1) * c / s) + 2)
                for p, c, s, n in zip(pick, out.chunks, SCALES, in_store.shape, strict=True)]
        if math.prod(crop) * 8 * 4 <= limit_bytes:
            picks.add(pick)
    checked = 0
    for pick in sorted(picks):
        window = tuple(slice(p * c, min((p + 1) * c, n))
                       for p, c, n in zip(pick, out.chunks, out.shape, strict=True))
        crop = tuple(slice(0, min(n, math.ceil(w.stop / s) + 2))
                     for w, s, n in zip(window, SCALES, in_store.shape, strict=True))
        x = in_store[crop]
        expected = onnx_upsample.upsample(x, SCALES, mode)[window]
        got = out[window]
        if got.tobytes() != expected.tobytes():
            return f"chunk {pick} DIFFERS"
        checked += 1
    return f"{checked} sampled chunks equal"


def _peak_rss() -> int:
    """This process's peak resident memory in bytes.

    Linux's ``VmHWM`` (the high-water mark of this process's own memory map) where there is
    one: ``ru_maxrss`` of a child started by fork and exec also counts the parent's memory
    at the fork, which would charge the benchmark's own arrays to the job measured.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# a child that runs the command line in-process, then reports its own peak memory
_MEASURED_CLI = (
    "import sys, bench_chunked as b; from onnx_upsample.cli import main; "
    "code = main(sys.argv[1:]); print('PEAK', b._peak_rss(), flush=True); sys.exit(code)"
)


def _child_rss(argv: list[str]) -> tuple[float, int, int, str]:
    """Run ``argv`` (which prints ``PEAK <bytes>``); return (seconds, exit code, peak, stderr)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep)}
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    peak = [int(line.split()[1]) for line in result.stdout.splitlines()
            if line.startswith("PEAK ")]
    return elapsed, result.returncode, peak[-1] if peak else 0, result.stderr[-300:]


def goal_beyond_memory(out_bytes: int, budget: int, workdir: Path, distributed: bool,
                       mode: str = "linear") -> list[Row]:
    a = round((out_bytes / 4 / 8) ** (1 / 3))
    in_shape = (a, a, a)
    in_chunks = (64, 64, 64)
    source, target = workdir / "in.zarr", workdir / "out.zarr"
    start = time.perf_counter()
    _make_input_store(source, in_shape, in_chunks)
    t_make = time.perf_counter() - start
    out_size = math.prod(in_shape) * 8 * 4
    def command(source: Path, target: Path) -> list[str]:
        return [sys.executable, "-c", _MEASURED_CLI, "apply", str(source), str(target),
                "--scales", *map(str, SCALES), "--mode", mode, "--quiet"]

    # one small run first: it loads the libraries and warms the file system once
    warm_in, warm_out = workdir / "warm-in.zarr", workdir / "warm-out.zarr"
    _make_input_store(warm_in, tuple(2 * c for c in in_chunks), in_chunks)
    _child_rss(command(warm_in, warm_out))
    shutil.rmtree(warm_in, ignore_errors=True)
    shutil.rmtree(warm_out, ignore_errors=True)
    _, _, idle_rss, _ = _child_rss([sys.executable, "-c", _IMPORTS_ONLY
                                    + "; import bench_chunked as b; print('PEAK', b._peak_rss())"])
    elapsed, code, rss, err = _child_rss(command(source, target))
    rows = []
    in_store = zarr.open_array(str(source), mode="r")
    if code != 0:
        verdict = f"FAILED (exit {code}): {err.strip()}"
    else:
        verdict = _sample_chunks(zarr.open_array(str(target), mode="r"), in_store, mode,
                                 limit_bytes=256 * MiB)
    ok = code == 0 and rss <= budget and "equal" in verdict
    target_text = "RSS <= budget"
    if out_size >= 8 * budget:
        target_text += ", output >= 8x budget"
    rows.append(Row(
        "2 beyond memory",
        f"CLI zarr -> zarr, {mode}, {in_shape} -> {tuple(2 * n for n in in_shape)} float32 "
        f"({out_size / GiB:.2f} GiB out; input written in {t_make:.1f} s); {verdict}",
        f"budget {budget / MiB:.0f} MiB",
        f"peak RSS {rss / MiB:.0f} MiB (imports alone {idle_rss / MiB:.0f}) in {elapsed:.1f} s "
        f"({out_size / MiB / elapsed:.0f} MiB/s)",
        f"output = {out_size / rss:.1f}x peak RSS", target_text, ok,
    ))
    shutil.rmtree(target, ignore_errors=True)
    if distributed:
        rows.append(_distributed(source, target, in_store, budget, mode, out_size))
        shutil.rmtree(target, ignore_errors=True)
    return rows


# what the command line loads before any data: its peak RSS is the floor of any budget
_IMPORTS_ONLY = (
    "import numpy as np, zarr, dask.array, onnx_upsample.dask, onnx_upsample.io.apply; "
    "from onnx_upsample import upsample; "
    "upsample(np.zeros((2, 2, 2), np.float32), [2, 2, 2], 'linear')"
)


def _warm_worker() -> int:
    exec(_IMPORTS_ONLY)
    return _peak_rss()


def _distributed(source: Path, target: Path, in_store: zarr.Array, budget: int, mode: str,
                 out_size: int) -> Row:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=True, memory_limit=budget,
                     dashboard_address=None, silence_logs=40) as cluster,
        Client(cluster) as client,
    ):
        idle_rss = max(client.run(_warm_worker).values())
        lazy = oud.upsample(da.from_zarr(str(source)), SCALES, mode,
                            chunks=tuple(2 * c for c in in_store.chunks))
        out = zarr.create_array(str(target), shape=lazy.shape, dtype=lazy.dtype,
                                chunks=tuple(c[0] for c in lazy.chunks), overwrite=True)
        start = time.perf_counter()
        da.store(lazy, out, lock=False)
        elapsed = time.perf_counter() - start
        worker_rss = max(client.run(_peak_rss).values())
    verdict = _sample_chunks(zarr.open_array(str(target), mode="r"), in_store, mode,
                             limit_bytes=256 * MiB)
    ok = worker_rss <= budget and "equal" in verdict
    return Row("2 beyond memory", f"LocalCluster (1 worker, 2 threads), {mode}; {verdict}",
               f"memory_limit {budget / MiB:.0f} MiB",
               f"worker peak RSS {worker_rss / MiB:.0f} MiB (idle {idle_rss / MiB:.0f}) "
               f"in {elapsed:.1f} s",
               f"output = {out_size / worker_rss:.1f}x peak RSS", "RSS <= memory_limit", ok)


# --- goal 3 --------------------------------------------------------------------------------------


def goal_graph_overhead(repeats: int) -> list[Row]:
    x = da.zeros((1000, 1000, 1000), chunks=100, dtype=np.float32)
    rows = []
    for mode in ("nearest", "linear"):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            # one output chunk per input chunk, 1000 in all (dask's "auto" would group them
            # into fewer, larger ones)
            y = oud.upsample(x, SCALES, mode, chunks=tuple(100 * int(s) for s in SCALES))
            graph = dict(y.__dask_graph__())
            times.append(time.perf_counter() - start)
        assert y.npartitions == 1000, y.npartitions
        worst = max(times)
        # linear adds a small task per halo cut out of a neighbour: more tasks than chunks
        rows.append(Row("3 graph overhead", f"{mode}, 1000 output chunks, {len(graph)} tasks "
                        "(build + materialise)",
                        "", f"median {statistics.median(times) * 1000:.0f} ms, "
                        f"worst {worst * 1000:.0f} ms", "", "< 1 s", worst < 1.0))
    return rows


# --- main ----------------------------------------------------------------------------------------


def _table(rows: list[Row]) -> str:
    lines = []
    for row in rows:
        mark = {True: "ok", False: "MISSED", None: ""}[row.ok]
        lines.append(f"[{row.goal}] {row.case}")
        lines.append(f"    {row.baseline:<28} {row.measured:<52} {row.ratio:<26} "
                     f"target {row.target:<38} {mark}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="goal sizes: 1 GiB in goal 1, 4 GiB of zarr output in goal 2")
    parser.add_argument("--distributed", action="store_true",
                        help="also run goal 2 on a LocalCluster with memory_limit = budget")
    parser.add_argument("--budget-mib", type=int, default=512, help="memory budget (MiB)")
    parser.add_argument("--workdir", default=None, help="folder for the zarr stores")
    parser.add_argument("--json", default=None, help="also write the rows as JSON here")
    parser.add_argument("--only", choices=("1", "2", "3"), nargs="+", default=("1", "2", "3"))
    parser.add_argument("--sizes-mib", type=int, nargs=2, default=None, metavar=("G1", "G2"),
                        help="output sizes of goals 1 and 2 in MiB (overrides --full's)")
    args = parser.parse_args()
    budget = args.budget_mib * MiB
    goal1_bytes = GiB if args.full else 128 * MiB
    goal2_bytes = 8 * budget if args.full else GiB
    if args.sizes_mib:
        goal1_bytes, goal2_bytes = (n * MiB for n in args.sizes_mib)
    dask.config.set(scheduler="threads")
    print(f"onnx-upsample {onnx_upsample.__version__}, dask {dask.__version__}, "
          f"zarr {zarr.__version__}, {os.cpu_count()} cores, "
          f"{'full' if args.full else 'default (small)'} sizes", flush=True)
    rows: list[Row] = []
    if "3" in args.only:
        rows += goal_graph_overhead(repeats=5)
        print(_table(rows[-2:]), flush=True)
    if "1" in args.only:
        rows += goal_chunked_vs_memory(goal1_bytes, repeats=2 if args.full else 3)
        print(_table(rows[-2:]), flush=True)
    if "2" in args.only:
        workdir = Path(args.workdir) if args.workdir else Path(
            tempfile.mkdtemp(prefix="bench-chunked-"))
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            new = goal_beyond_memory(goal2_bytes, budget, workdir, args.distributed)
        finally:
            shutil.rmtree(workdir / "in.zarr", ignore_errors=True)
            shutil.rmtree(workdir / "out.zarr", ignore_errors=True)
            if not args.workdir:
                shutil.rmtree(workdir, ignore_errors=True)
        rows += new
        print(_table(new), flush=True)
    print("\nsummary")
    print(_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=2))
    return 0 if all(r.ok is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

