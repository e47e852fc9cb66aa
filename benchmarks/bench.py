"""Side-by-side benchmark of onnx-upsample against onnxruntime 1.32 (a script, not a test).

For each workload of issue #3 it times, in one process: ``upsample`` into a preallocated
``out=``, ``upsample`` with a fresh result, ORT (opset-9 model, intra-op threads = cores),
the onnx reference evaluator where it runs (integer-scale nearest only), a memory copy of the
output's size (reads and writes it), and the write floor: ``out.fill(0)`` on a preallocated
output-sized array, i.e. writing the output once, which no implementation can beat on a
memory-bound workload; "vs write" is ours ``out=`` over it. Each implementation runs in its
own block of repetitions with a pause between blocks, because idle worker threads that spin
(numba's OpenMP pool, ORT's intra-op pool) slow whatever runs next on a 2-core machine; the whole
sequence runs twice, in opposite orders, and the table flags any figure that moved with
the order. Peak resident memory of one fresh call is measured in a child process per
workload. W10-W12 are channels-last images (rank 3, height x width x channels) against ORT's
rank-3 kernel.

A second table times the **cold start**: the first call in a new process of a fresh regular
(not editable) install. A wheel of the working tree is built once (``pip wheel``, with build
isolation and a C compiler) from a snapshot copy of it, and installed with ``--no-deps`` into a
new venv in a temporary folder; numpy (and onnxruntime, for the comparison) come from this
script's environment through a ``.pth`` file placed after the venv's own site-packages. Each
case runs in its own process, several times, with every cache folder (``XDG_CACHE_HOME``,
``NUMBA_CACHE_DIR``, ``PYTHONPYCACHEPREFIX``) a new empty one and ``PYTHONDONTWRITEBYTECODE=1``,
so the package's modules are compiled from source as on a first import; numpy is imported
before the timer starts. The timer covers ``import onnx_upsample`` and the first ``upsample``
call; ORT's column covers ``import onnxruntime``, creating the session for a one-node Upsample
model and running it once.

Run: ``make bench`` or ``python benchmarks/bench.py [--quick] [--only W1 W6] [--cold-start]``.
A full run (no ``--quick``, no ``--only``) prints both tables; ``--cold-start`` alone prints
only the cold-start table (with ``--only``, the listed workloads and the cold start).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
    # channels-last images (rank 3), against ORT's rank-3 kernel
    Workload("W10 image HWC", (1000, 1500, 3), (2, 2, 1), "linear", "uint8"),
    Workload("W11 image HWC", (1080, 1920, 3), (2, 2, 1), "nearest", "uint8"),
    Workload("W12 image HWC", (480, 640, 3), (1.5, 1.5, 1), "linear", "float32"),
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
    if dtype.kind == "b":
        return rng.integers(0, 2, w.shape).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 200, w.shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(w.shape) + 1j * rng.standard_normal(w.shape)).astype(dtype)
    return rng.standard_normal(w.shape).astype(dtype)


def upsample_model(w: Workload) -> bytes:
    """The workload as a one-node opset-9 ``Upsample`` model (serialized)."""
    from onnx import TensorProto, helper

    types = {"float32": TensorProto.FLOAT, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=w.mode)
    graph = helper.make_graph(
        [node], "bench",
        [helper.make_tensor_value_info("X", types[w.dtype], list(w.shape))],
        [helper.make_tensor_value_info("Y", types[w.dtype], None)],
        [helper.make_tensor("scales", TensorProto.FLOAT, [len(w.scales)], list(w.scales))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    return model.SerializeToString()


def ort_session(w: Workload) -> Callable[[np.ndarray], np.ndarray] | None:
    """An ORT session for the workload as an opset-9 model, or None where ORT refuses it."""
    import onnxruntime as ort

    if w.dtype not in ("float32", "uint8"):
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(upsample_model(w), options,
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


# Cold start: the first call of each case in a new process of a fresh install
COLD_CASES = [
    Workload("nearest float32", (1, 3, 64, 64), (1, 1, 2, 2), "nearest", "float32"),
    Workload("linear float32", (1, 3, 64, 64), (1, 1, 2, 2), "linear", "float32"),
    Workload("linear uint8", (1, 3, 64, 64), (1, 1, 2, 2), "linear", "uint8"),
    Workload("nearest bool", (1, 3, 64, 64), (1, 1, 2, 2), "nearest", "bool"),
]
COLD_GOAL_S = 0.15

# Runs in the fresh venv (python -c): only numpy is imported before the timer starts.
# argv: ours|ORT, input .npy, scales, mode, model file, output .npy
COLD_CHILD = """
import sys
import time

import numpy as np

which, data, scales, mode, model_path, out_path = sys.argv[1:7]
x = np.load(data)
scales = [float(s) for s in scales.split(",")]
if which == "ours":
    t0 = time.perf_counter()
    import onnx_upsample
    y = onnx_upsample.upsample(x, scales, mode)
    seconds = time.perf_counter() - t0
    where = onnx_upsample.__file__
else:
    with open(model_path, "rb") as f:
        model = f.read()
    t0 = time.perf_counter()
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(model, options,
                                               providers=["CPUExecutionProvider"])
    except Exception as error:
        y = None
        refused = str(error).splitlines()[0]
    else:
        y = session.run(None, {"X": x})[0]
    seconds = time.perf_counter() - t0
    where = onnxruntime.__file__
import json

if y is None:
    print(json.dumps({"refused": refused}))
else:
    np.save(out_path, y)
    print(json.dumps({"seconds": seconds, "file": where}))
"""


def snapshot_tree(root: Path, dest: Path) -> None:
    """Copies the working tree (tracked files, and untracked ones git does not ignore) to dest,
    so that the wheel build writes nothing (build/, *.egg-info) into the project."""
    try:
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], capture_output=True, check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        shutil.copytree(root, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.so", "*.pyd",
            ".*_cache", ".hypothesis", "results"))
        return
    for name in filter(None, listing.split("\0")):
        if (root / name).is_file():  # a tracked file deleted in the working tree is skipped
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, dest / name)


def fresh_install(work: Path) -> tuple[Path, Path]:
    """A wheel of the working tree, installed (regular, --no-deps) into a new venv under work;
    numpy and onnxruntime come from this script's environment, after the venv's own
    site-packages (a .pth file). Returns the venv and its python."""
    tree, wheels, venv = work / "tree", work / "wheels", work / "venv"
    snapshot_tree(Path(__file__).resolve().parent.parent, tree)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(tree)], check=True, stdout=subprocess.DEVNULL)
    wheel = next(wheels.glob("onnx_upsample-*.whl"))
    # the interpreter this script's venv was made from: same ABI as the wheel and numpy
    base = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, stdout=subprocess.DEVNULL)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    Path(site, "zz_bench_numpy.pth").write_text("\n".join(ours) + "\n")
    return venv, python


def cold_env(run_dir: Path) -> dict[str, str]:
    """The environment of one cold run: every cache folder new and empty, no bytecode written."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    for var in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR", "PYTHONPYCACHEPREFIX"):
        (run_dir / var).mkdir(parents=True)
        env[var] = str(run_dir / var)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def cold_run(python: Path, which: str, w: Workload, run_dir: Path) -> dict:  # type: ignore[type-arg]
    """One first call (``which``: "ours" or "ORT") in a new process; its seconds, the module's
    file and the result (or ORT's refusal)."""
    run_dir.mkdir(parents=True)
    data, model, out = run_dir / "x.npy", run_dir / "model.onnx", run_dir / "y.npy"
    np.save(data, make_input(w))
    if which == "ORT":
        model.write_bytes(upsample_model(w))
    result = subprocess.run(
        [str(python), "-c", COLD_CHILD, which, str(data), ",".join(map(str, w.scales)), w.mode,
         str(model), str(out)],
        cwd=run_dir, env=cold_env(run_dir), capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0:
        raise RuntimeError(f"cold start of {which} ({w.name}) failed:\n{result.stderr}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if "seconds" in report:
        report["y"] = np.load(out)
    return report


def cold_start(args: argparse.Namespace) -> None:
    """The cold-start table: each case's first call, ``args.cold_runs`` new processes each."""
    seconds: dict[tuple[str, str], list[float]] = {}
    outputs: dict[tuple[str, str], np.ndarray] = {}
    refused: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="onnx-upsample-cold-") as tmp:
        work = Path(tmp)
        print("cold start: building a wheel and a fresh venv", file=sys.stderr, flush=True)
        venv, python = fresh_install(work)
        where = ""
        for index in range(args.cold_runs):  # the cases interleaved, for drifting noise
            for number, w in enumerate(COLD_CASES):
                for which in ("ours", "ORT"):
                    if which == "ORT" and w.name in refused:
                        continue
                    report = cold_run(python, which, w, work / "runs" / f"{which}-{number}-{index}")
                    if "refused" in report:
                        refused[w.name] = report["refused"]
                        continue
                    if which == "ours":
                        where = report["file"]
                        inside = Path(where).resolve().is_relative_to(venv.resolve())
                        assert inside, f"onnx_upsample imported from {where}, not from {venv}"
                    seconds.setdefault((which, w.name), []).append(report["seconds"])
                    outputs.setdefault((which, w.name), report["y"])
            print(f"done cold-start round {index + 1}/{args.cold_runs}", file=sys.stderr,
                  flush=True)
    print(f"\nMachine: {machine()}.\n")
    print(f"Cold start: a new process per run ({args.cold_runs} runs per case), a fresh regular "
          "install of the wheel in a new venv, every cache folder empty, no bytecode cache; "
          "seconds from just before `import onnx_upsample` to the first result (numpy imported "
          "before). ORT: `import onnxruntime`, a session for the one-node Upsample model, one "
          f"run. onnx_upsample was imported from {where} (the temporary venv).")
    print(f"goal: each first call <= {COLD_GOAL_S} s\n")
    print("| first call | input | ours median | ours max | ORT median | ORT max | "
          "ours/ORT (medians) | goal met (median / max) | exact vs ORT |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w in COLD_CASES:
        ours = seconds[("ours", w.name)]
        ort_times = seconds.get(("ORT", w.name))
        ort_cells = (f"{statistics.median(ort_times):.3f} | {max(ort_times):.3f} | "
                     f"{statistics.median(ours) / statistics.median(ort_times):.2f}"
                     if ort_times else "refused | — | —")
        met = " / ".join("yes" if t <= COLD_GOAL_S else "NO"
                         for t in (statistics.median(ours), max(ours)))
        exact = "—"
        if ort_times:
            ours_y, ort_y = outputs[("ours", w.name)], outputs[("ORT", w.name)]
            exact = "yes" if ours_y.tobytes() == ort_y.tobytes() else "NO"
        scales = " ".join(f"{s:g}" for s in w.scales)
        print(f"| {w.name} | {w.shape} {w.dtype}, scales {scales} | "
              f"{statistics.median(ours):.3f} | {max(ours):.3f} | {ort_cells} | {met} | "
              f"{exact} |")
    for name, why in refused.items():
        print(f"\nORT refused {name}: {why}")


def run(args: argparse.Namespace) -> None:
    from onnx_upsample import output_shape, upsample

    workloads = [w for w in WORKLOADS if not args.only or w.name.split()[0] in args.only]
    rows = {}
    for w in workloads:
        x = make_input(w)
        y = upsample(x, w.scales, w.mode)
        out = np.empty_like(y)
        src, dst, blank = np.ones_like(y), np.empty_like(y), np.empty_like(y)
        impls: dict[str, Callable[[], object]] = {
            "out=": lambda x=x, w=w, out=out: upsample(x, w.scales, w.mode, out=out),
            "fresh": lambda x=x, w=w: upsample(x, w.scales, w.mode),
            "copy": lambda src=src, dst=dst: np.copyto(dst, src),
            "write": lambda blank=blank: blank.fill(0),  # the write floor: the output written once
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
        del x, y, out, src, dst, blank
    print_table(rows)


def machine() -> str:
    """The CPU, its cores, and the Python and numpy versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}")


def print_table(rows: dict) -> None:  # type: ignore[type-arg]
    print(f"\nMachine: {machine()}; medians in ms; ratios of medians.\n")
    print("| workload | output MB | copy | write floor | ours out= | ours fresh | ORT | onnx ref | "
          "out=/ORT | fresh/ORT | out=/copy | vs write | peak mem / output | exact vs ORT | "
          "order drift |")
    print("|---" * 15 + "|")
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
        ort = f"{ort_ms:.3f}" if ort_ms else "refused"
        ref = f"{ms['onnx ref']:.2f}" if "onnx ref" in ms else "—"
        print(f"| {name}{extra} | {out_bytes / 1e6:.1f} | {ms['copy']:.3f} | {ms['write']:.3f} | "
              f"{ms['out=']:.3f} | {ms['fresh']:.3f} | {ort} | {ref} | "
              f"{ratio(ms['out='], ort_ms)} | {ratio(ms['fresh'], ort_ms)} | "
              f"{ms['out='] / ms['copy']:.2f} | {ms['out='] / ms['write']:.2f} | {memory:.2f} | "
              f"{exact or '—'} | {drift * 100:.0f}% |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short blocks, no memory runs")
    parser.add_argument("--only", nargs="*", help="workload ids, e.g. W1 W6 X3")
    parser.add_argument("--cold-start", action="store_true",
                        help="the cold-start table: alone, or after the --only workloads "
                             "(a full run prints it after the main table)")
    parser.add_argument("--cold-runs", type=int, default=5,
                        help="new processes per cold-start case")
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
    if args.only or not args.cold_start:
        run(args)
    if args.cold_start or not (args.quick or args.only):
        cold_start(args)


if __name__ == "__main__":
    main()
