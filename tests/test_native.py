"""Process-level properties of the compiled layer (``onnx_upsample._kernels._native``).

Fork safety of the thread pool, Ctrl-C during a long call, thread-count changes while
other threads call, no numba anywhere, both instruction-set variants of the linear kernels
against the reference, cold start, and the kernel object's own argument checks. Whatever
could hang runs in a subprocess under a timeout: a hang is a failure, not a stuck test run.
The argument checks only build kernels from bad tables; they never run one.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import _threads, set_num_threads, upsample
from onnx_upsample._kernels import _compiled, _native

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(onnx_upsample.__file__).resolve().parent


def _run(code: str, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a hang beyond ``timeout`` fails the test."""
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True,
            timeout=timeout, env={**os.environ, **env}, cwd=ROOT, check=False,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"subprocess hung for {timeout} s; output so far: {error.stdout!r} "
                    f"{error.stderr!r}")


def _two_cores() -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core available: the pool would not start a helper thread")


@pytest.fixture
def restore_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo set_num_threads after the test (its setting is module state)."""
    monkeypatch.setattr(_threads, "_requested", _threads._requested)


# --- 1. fork safety -----------------------------------------------------------------------

FORK_SETUP = """
import os, sys, threading
import numpy as np
import onnx_upsample as u
u.set_num_threads(2)
x = np.random.default_rng(0).standard_normal((2, 16, 128, 128)).astype(np.float32)

def work(_=None):
    return (u.upsample(x, [1, 1, 2, 2], "linear").tobytes(),
            u.upsample(x, [1, 1, 2, 1.5], "nearest").tobytes())

expected = work()  # parallel calls in the parent: the pool's helper threads exist now
"""

FORK_CHILD = FORK_SETUP + """
def child():
    ok = work() == expected and work() == expected
    tasks = len(os.listdir("/proc/self/task"))  # the child started its own helper
    os._exit(0 if ok and tasks >= 2 else 3 if not ok else 4)

def fork_and_wait():
    pid = os.fork()
    if pid == 0:
        child()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

codes = [fork_and_wait()]
# fork while another Python thread is inside parallel calls (the pool may be busy)
stop = threading.Event()
def busy():
    while not stop.is_set():
        assert work() == expected
background = threading.Thread(target=busy)
background.start()
for _ in range(6):
    codes.append(fork_and_wait())
stop.set()
background.join()
assert work() == expected  # the parent's pool still works after forking
print("codes", *codes)
"""

FORK_POOL = FORK_SETUP + """
import multiprocessing
with multiprocessing.get_context("fork").Pool(2) as pool:
    results = pool.map(work, range(4))
print("pool", sum(r == expected for r in results), len(results))
"""


def test_forked_child_runs_parallel_calls() -> None:
    _two_cores()
    result = _run(FORK_CHILD, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    codes = result.stdout.split()
    assert codes[0] == "codes" and len(codes) == 8, result.stdout
    # 0: equal bytes; 3: different bytes; 4: no helper thread in the child; <0: signal
    assert codes[1:] == ["0"] * 7, f"children's exit codes: {codes[1:]}"


def test_fork_multiprocessing_pool_after_a_parallel_call() -> None:
    _two_cores()
    result = _run(FORK_POOL, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["pool", "4", "4"], result.stdout


# --- 2. Ctrl-C ----------------------------------------------------------------------------

# A long linear call (uint8, three interpolated axes: a few seconds on 2 cores, 2 GiB of
# output written as it goes) into a preallocated out=. Its duration is estimated first
# from 1/8 of the channels.
INTERRUPT = """
import sys, time
import numpy as np
import onnx_upsample as u
u.set_num_threads(int(sys.argv[1]))
scales = [1, 1, 2, 4, 4]
x = np.full((1, 16, 16, 512, 512), 7, np.uint8)
out = np.empty(u.output_shape(x.shape, scales), np.uint8)
t0 = time.perf_counter()
u.upsample(x[:, -2:], scales, "linear", out=out[:, -2:])
print("estimate", (time.perf_counter() - t0) * 8, flush=True)
try:
    print("ready", flush=True)
    start = time.monotonic()
    u.upsample(x, scales, "linear", out=out)
    print("completed", time.monotonic() - start, flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    now = time.monotonic()
    print("interrupted", now, now - start, flush=True)
y = u.upsample(np.ones((2, 16, 64, 64), np.float32), [1, 1, 2, 2], "linear")
print("recovered", bool((y == 1).all()), flush=True)
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_interrupts_a_long_call(threads: int) -> None:
    if threads > len(os.sched_getaffinity(0)):
        pytest.skip("one core available")
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPT, str(threads)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    watchdog = threading.Timer(90, proc.kill)  # a hang ends in EOF below, not a stuck run
    watchdog.start()
    try:
        lines = []
        while not lines or lines[-1] != "ready":
            line = proc.stdout.readline()
            assert line, f"child ended before 'ready': {lines} {proc.stderr.read()[-2000:]}"
            lines.append(line.strip())
        estimate = float(lines[0].split()[1])
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report = stdout.split()
    assert report[:1] == ["interrupted"], (
        f"no KeyboardInterrupt from the call (estimated {estimate:.2f} s): {stdout!r} "
        f"{stderr[-2000:]!r}")
    latency = float(report[1]) - sent
    elapsed = float(report[2])
    assert latency < 1.0, f"Ctrl-C took {latency:.3f} s to stop the call"
    assert elapsed < 0.6 * estimate, (
        f"interrupted after {elapsed:.2f} s of a call estimated at {estimate:.2f} s: "
        "the call was too short to show anything")
    assert report[3:] == ["recovered", "True"], (stdout, stderr[-2000:])
    assert proc.returncode == 0, stderr[-2000:]


# --- 3. set_num_threads while other threads call ------------------------------------------

CONCURRENT_CASES = [
    ((2, 16, 64, 64), [1, 1, 2, 2], "linear", "float32"),
    ((1, 64, 64, 3), [1, 1.5, 2, 1], "linear", "uint8"),
    ((2, 8, 64, 64), [1, 1, 2, 2], "linear", "float16"),
    ((2, 16, 64, 64), [1, 1, 1.5, 1.7], "nearest", "uint8"),
    ((3, 50, 2000), [2, 1.3333334, 1], "nearest", "complex128"),
]


def test_thread_count_changes_during_calls_from_other_threads(restore_threads) -> None:
    rng = np.random.default_rng(5)
    work = [((rng.standard_normal(shape) * 100).astype(dtype), scales, mode)
            for shape, scales, mode, dtype in CONCURRENT_CASES]
    set_num_threads(1)
    expected = [upsample(x, s, m).tobytes() for x, s, m in work]
    done = threading.Event()
    errors: list[BaseException] = []
    mismatches: list[int] = []
    toggles = 0

    def caller(offset: int) -> None:
        try:
            for round_ in range(15):
                for i in range(len(work)):
                    k = (i + offset + round_) % len(work)
                    x, s, m = work[k]
                    if upsample(x, s, m).tobytes() != expected[k]:
                        mismatches.append(k)
        except BaseException as error:  # reported below
            errors.append(error)

    def toggler() -> None:
        nonlocal toggles
        try:
            while not done.is_set():
                set_num_threads(1 + toggles % 2)
                toggles += 1
                time.sleep(0.0005)
        except BaseException as error:  # reported below
            errors.append(error)

    callers = [threading.Thread(target=caller, args=(t,)) for t in range(3)]
    switch = threading.Thread(target=toggler)
    switch.start()
    for t in callers:
        t.start()
    for t in callers:
        t.join(timeout=120)
    done.set()
    switch.join(timeout=10)
    assert not any(t.is_alive() for t in [*callers, switch]), "a thread hung"
    assert not errors, errors
    assert not mismatches, f"cases with different bytes: {sorted(set(mismatches))}"
    assert toggles > 10


# --- 4. no numba --------------------------------------------------------------------------

NO_NUMBA = """
import sys
import numpy as np
import onnx_upsample as u
x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
u.upsample(x, [1, 2, 2], "nearest")
u.upsample(x, [1, 2, 2], "linear")
u.upsample(np.ones((2, 16, 64, 64), np.uint8), [1, 1, 2, 1.5], "linear")
print(sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite")))
"""


def test_numba_is_not_imported_by_calls() -> None:
    result = _run(NO_NUMBA)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]", result.stdout


def test_numba_is_not_a_requirement() -> None:
    requires = importlib.metadata.requires("onnx-upsample") or []
    assert requires, "no requirements found: is the package installed?"
    names = [re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0].lower() for r in requires]
    assert "numba" not in names and "llvmlite" not in names, requires


def test_no_numba_in_the_package_source() -> None:
    threads_source = Path(onnx_upsample._threads.__file__).read_text()
    assert "NUMBA" not in threads_source, "_threads.py still handles numba settings"
    imports = re.compile(r"^\s*(import|from)\s+(numba|llvmlite)\b", re.MULTILINE)
    found = [p.name for p in PACKAGE.rglob("*.py") if imports.search(p.read_text())]
    assert not found, f"modules importing numba: {found}"


# --- 5. instruction-set variants ----------------------------------------------------------

# Prints the variant in use, checks ~30 random small linear cases (and the same cases split
# over 2 threads into 1-element-threshold work items) against the reference, then prints a
# hash of each larger case, which the variants must share.
ISA_CHECK = """
import hashlib
import numpy as np
import onnx_upsample as u
from onnx_upsample import _kernels, reference
from onnx_upsample._kernels import _compiled, _layout

rng = np.random.default_rng(2024)
TYPES = ["float32", "float16", "uint8", "int8", "int32", "int64", "float64", "complex64"]
SCALES = [1.0, 1.0, 1.5, 2.0, 3.0, 1.3333334, 2.5, 1.7, 4.0]

def values(shape, dtype, special):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    v = rng.standard_normal(shape) * 100
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(shape) * 100
    v = v.astype(dtype)
    if special and v.size > 4:
        flat = v.reshape(-1)
        flat[rng.choice(v.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    return v

cases = []
for i in range(28):
    dtype = TYPES[i % len(TYPES)]
    rank = 1 + i % 5
    while True:
        shape = tuple(int(n) for n in rng.integers(1, 9 if rank > 2 else 40, rank))
        scales = [float(s) for s in rng.choice(SCALES, rank)]
        size = int(np.prod(u.output_shape(shape, scales)))
        if scales.count(1.0) < rank and 1 <= size <= 3000:
            break
    cases.append((values(shape, dtype, i % 3 == 0), scales))
for dtype in ("uint8", "float32"):
    for scales in ([2, 2, 1], [1.5, 1.5, 1]):
        cases.append((values((14, 17, 3), dtype, False), scales))

print("isa", _compiled.isa())
expected = [reference.upsample(x, s, "linear").tobytes() for x, s in cases]
bad = [i for i, (x, s) in enumerate(cases) if u.upsample(x, s, "linear").tobytes() != expected[i]]
print("serial", len(cases), "bad", bad)
_layout.MIN_SHARE_WORK = 1  # split even these small calls into work items
_kernels._launcher.cache_clear()
u._api._PREPARED.clear()  # the memo of checked calls holds the serial split
u.set_num_threads(2)
bad = [i for i, (x, s) in enumerate(cases) if u.upsample(x, s, "linear").tobytes() != expected[i]]
print("split", len(cases), "bad", bad)
_layout.MIN_SHARE_WORK = 1 << 22
_kernels._launcher.cache_clear()

LARGE = [
    ((2, 16, 64, 64), [1, 1, 2, 2], "float32"),
    ((2, 8, 64, 64), [1, 1, 1.5, 1.7], "float16"),
    ((1, 64, 64, 3), [1, 1.5, 2, 1], "uint8"),
    ((256, 256, 3), [2, 2, 1], "uint8"),
    ((256, 256, 3), [1.5, 1.5, 1], "float32"),
    ((2, 8, 64, 64), [2, 1, 1.5, 1.5], "int8"),
    ((1, 4, 16, 32, 32), [1, 1, 2, 1.5, 2], "int32"),
    ((4, 32, 100), [1, 2.5, 3], "int64"),
    ((100000,), [1.3333334], "float64"),
    ((2, 8, 64, 32), [1, 1, 2, 2], "complex64"),
]
for shape, scales, dtype in LARGE:
    y = u.upsample(values(shape, dtype, dtype in ("float32", "float64")), scales, "linear")
    print("hash", hashlib.sha256(y.tobytes()).hexdigest())
"""


def _isa_run(variant: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != _compiled.ISA_VAR}
    if variant is not None:
        env[_compiled.ISA_VAR] = variant
    return subprocess.Popen([sys.executable, "-c", ISA_CHECK], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def test_instruction_set_variants_equal_the_reference_and_each_other() -> None:
    variants: dict[str | None, int] = {"baseline": 0, None: int(_native.cpu_has_avx2())}
    if _native.cpu_has_avx2():
        variants["avx2"] = 1
    procs = {v: _isa_run(v) for v in variants}  # concurrently: the reference is slow
    outputs = {}
    try:
        for variant, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=180)
            assert proc.returncode == 0, f"{variant}: {stderr[-3000:]}"
            outputs[variant] = stdout.splitlines()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    hashes = {}
    for variant, lines in outputs.items():
        assert lines[0] == f"isa {variants[variant]}", (variant, lines[0])
        assert lines[1] == "serial 32 bad []", (variant, lines[1])
        assert lines[2] == "split 32 bad []", (variant, lines[2])
        hashes[variant] = [line for line in lines[3:] if line.startswith("hash ")]
        assert len(hashes[variant]) == 10, (variant, lines)
    for variant, found in hashes.items():
        differ = [i for i, (a, b) in enumerate(zip(found, hashes["baseline"], strict=True))
                  if a != b]
        assert not differ, f"{variant} differs from baseline in large cases {differ}"


def test_bad_instruction_set_value_is_an_error_at_the_first_linear_call() -> None:
    code = (
        "import numpy as np, onnx_upsample as u\n"
        "try:\n"
        "    u.upsample(np.ones((2, 3), np.float32), [2, 2], 'linear')\n"
        "except u.UpsampleError as e:\n"
        "    print('error', e)\n"
        "else:\n"
        "    print('no error')\n"
    )
    result = _run(code, ONNX_UPSAMPLE_ISA="sse9")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("error "), result.stdout
    assert "ONNX_UPSAMPLE_ISA" in result.stdout and "sse9" in result.stdout, result.stdout


# --- 6. cold start ------------------------------------------------------------------------

COLD = """
import time
t0 = time.perf_counter()
import numpy as np
import onnx_upsample as u
y = u.upsample(np.ones((1, 3, 32, 32), np.float32), [1, 1, 2, 2], "linear")
t1 = time.perf_counter()
assert y.shape == (1, 3, 64, 64) and (y == 1).all()
print(t1 - t0)
"""


def test_cold_start_with_an_empty_cache(tmp_path: Path) -> None:
    timings = []
    for i in range(3):  # best of three: the machine is shared
        cache = tmp_path / f"cache{i}"
        cache.mkdir()
        result = _run(COLD, XDG_CACHE_HOME=str(cache))
        assert result.returncode == 0, result.stderr[-3000:]
        timings.append(float(result.stdout))
    assert min(timings) < 1.0, f"import + first linear call took {min(timings):.3f} s"


# --- 7. the kernel object checks its arguments --------------------------------------------

def _nearest_args(**changes: object) -> list[object]:
    """A valid nearest gather of x (4, 6) uint8 into (8, 12), by 2 on both axes: one outer
    axis (rows) and a gathered row."""
    args = {
        "x_elements": 24, "unit": 1, "row_len": 12, "block": 1,
        "sizes": np.array([8], np.int64),
        "contrib": np.arange(8, dtype=np.int64) // 2 * 6,
        "starts": np.array([0], np.int64),
        "row_table": np.arange(12, dtype=np.int64) // 2,
        "row_kind": _compiled.ROW_GATHER, "repeat": 1,
        "n_blocks": 1, "n_segments": 1, "segment": 12,
    }
    args.update(changes)
    return list(args.values())


def _nearest_input() -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(24, dtype=np.uint8).reshape(4, 6)
    return x, x.repeat(2, axis=0).repeat(2, axis=1)


def test_valid_nearest_kernel_arguments() -> None:
    x, expected = _nearest_input()
    kernel = _native.nearest_kernel(*_nearest_args())
    out = np.zeros((8, 12), np.uint8)
    kernel(x, out, 1)
    assert np.array_equal(out, expected)
    repeat = _native.nearest_kernel(*_nearest_args(row_kind=_compiled.ROW_REPEAT, repeat=2))
    out[:] = 0
    repeat(x, out, 2)
    assert np.array_equal(out, expected)


BAD_TABLES = {
    "input too small": {"x_elements": 23},
    "row index beyond the row": {"row_table": np.array([0] * 11 + [6], np.int64)},
    "negative row index": {"row_table": np.array([-1] + [0] * 11, np.int64)},
    "row table too short": {"row_table": np.arange(11, dtype=np.int64) // 2},
    "offset beyond the input": {"contrib": np.array([0] * 7 + [24], np.int64)},
    "negative offset": {"contrib": np.array([-6] + [0] * 7, np.int64)},
    "outer size beyond its table": {"sizes": np.array([9], np.int64)},
    "start beyond its table": {"starts": np.array([1], np.int64)},
    "copied row longer than the input row": {"row_kind": _compiled.ROW_COPY},
    "repeat not dividing the row": {"row_kind": _compiled.ROW_REPEAT, "repeat": 5},
    "unknown row kind": {"row_kind": 7},
    "unit of 3 bytes": {"unit": 3},
    "table of 4-byte items": {"contrib": (np.arange(8) // 2 * 6).astype(np.int32)},
    "empty table": {"row_table": np.zeros(0, np.int64)},
    "too few segments": {"segment": 4},
    "zero-length row": {"row_len": 0},
    # offsets whose sums or products overflow int64: they still read beyond the input
    "outer offsets summing past 2**63": {
        "sizes": np.array([1, 1], np.int64), "contrib": np.array([1 << 62, 1 << 62], np.int64),
        "starts": np.array([0, 1], np.int64)},
    "row index 2**63 - 1": {"row_table": np.array([0] * 11 + [(1 << 63) - 1], np.int64)},
    "row index times block past 2**63": {
        "row_table": np.array([0] * 11 + [(1 << 60) + (1 << 40)], np.int64), "block": 8,
        "x_elements": 192},
    "start near 2**63 (start + size wraps)": {"starts": np.array([(1 << 63) - 1], np.int64)},
    "segment longer than the row": {"segment": 13},
    "row length times block past 2**63": {
        "row_kind": _compiled.ROW_COPY, "row_len": (1 << 62) + 1, "block": 4,
        "segment": (1 << 62) + 1, "x_elements": 4, "sizes": np.array([1], np.int64),
        "contrib": np.zeros(1, np.int64)},
}


@pytest.mark.parametrize("change", BAD_TABLES.values(), ids=BAD_TABLES.keys())
def test_nearest_kernel_rejects_inconsistent_tables(change: dict) -> None:
    with pytest.raises(ValueError, match=r"kernel table|inconsistent kernel tables"):
        _native.nearest_kernel(*_nearest_args(**change))


def test_prepared_kernels_reject_wrong_buffer_sizes() -> None:
    from onnx_upsample._dtypes import element_type
    from onnx_upsample._kernels._tables import Window, linear_tables

    x, _ = _nearest_input()
    kernel = _native.nearest_kernel(*_nearest_args())
    for bad_x, bad_out in [
        (x.reshape(-1)[:23], np.zeros((8, 12), np.uint8)),
        (np.zeros(25, np.uint8), np.zeros((8, 12), np.uint8)),
        (x.astype(np.uint16), np.zeros((8, 12), np.uint8)),
        (x, np.zeros((8, 11), np.uint8)),
        (x, np.zeros((7, 12), np.uint8)),
        (x, np.zeros((8, 12), np.uint16)),
    ]:
        with pytest.raises(ValueError, match="kernel called with"):
            kernel(bad_x, bad_out, 2)

    shape, scales = (2, 5, 6), tuple(np.float32(s) for s in (1, 2, 1.5))
    out_shape = onnx_upsample.output_shape(shape, list(scales))
    axes, _, _ = linear_tables(shape, out_shape, scales, Window.whole(out_shape))
    dtype = np.dtype(np.float32)
    launch = _compiled.prepare_linear(shape, out_shape, dtype, axes, element_type(dtype), 2)
    xf = np.arange(60, dtype=np.float32).reshape(shape)
    out = np.zeros(out_shape, np.float32)
    launch(xf, out, 2)
    assert out.tobytes() == upsample(xf, list(scales), "linear").tobytes()
    for bad_x, bad_out in [
        (xf[:, :4], out),
        (np.zeros((2, 5, 7), np.float32), out),
        (xf.astype(np.float64), out),
        (xf, np.zeros((2, 10, 10), np.float32)),
        (xf, np.zeros(out.size + 1, np.float32)),
    ]:
        with pytest.raises(ValueError, match="kernel called with"):
            launch(bad_x, bad_out, 2)



# The arguments of _native.linear_kernel, as its C source documents them (module.c).
LINEAR_ARGS = (
    "x_elements", "src", "dst", "lut", "row_len", "block", "block_in", "sizes", "interp", "lo",
    "hi", "w_lo", "w_hi", "starts", "row_blend", "row_lo", "row_hi", "row_w_lo", "row_w_hi",
    "block_blend", "blk_lo", "blk_hi", "blk_w_lo", "blk_w_hi", "n_blocks", "n_segments",
    "segment", "low_bound", "high_bound", "isa", "row_repeat",
)


def _linear_args(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...],
                 scales: list[float]) -> dict[str, object]:
    """The arguments prepare_linear passes to _native.linear_kernel for a float32 call."""
    from onnx_upsample._dtypes import element_type
    from onnx_upsample._kernels._tables import Window, linear_tables

    captured: list[tuple[object, ...]] = []

    class Spy:
        def __getattr__(self, name: str) -> object:
            return getattr(_native, name)

        def linear_kernel(self, *args: object) -> object:
            captured.append(args)
            return _native.linear_kernel(*args)

    monkeypatch.setattr(_compiled, "_native", Spy())
    f32 = tuple(np.float32(s) for s in scales)
    out_shape = onnx_upsample.output_shape(shape, scales)
    axes, _, _ = linear_tables(shape, out_shape, f32, Window.whole(out_shape))
    dtype = np.dtype(np.float32)
    _compiled.prepare_linear(shape, out_shape, dtype, axes, element_type(dtype), 1)
    assert len(captured) == 1 and len(captured[0]) == len(LINEAR_ARGS), captured
    return dict(zip(LINEAR_ARGS, captured[0], strict=True))


def _changed(args: dict[str, object], **changes: object) -> list[object]:
    args = dict(args)
    for name, change in changes.items():
        args[name] = change(args[name]) if callable(change) else change
    return list(args.values())


def _set(index: int, value: int) -> object:
    def change(table: np.ndarray) -> np.ndarray:
        table = table.copy()
        table[index] = value
        return table
    return change


def test_linear_kernel_rejects_inconsistent_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # (2, 5, 6) by (2, 1.5, 1.5): outer axis 2 -> 4, row 5 -> 7 (blended), block 6 -> 9
    args = _linear_args(monkeypatch, (2, 5, 6), [2, 1.5, 1.5])
    assert args["row_blend"] == 1 and args["row_len"] == 7, args
    _native.linear_kernel(*args.values())  # the unchanged arguments are accepted
    n_x = args["x_elements"]
    bad = {
        "input too small": {"x_elements": n_x - 1},
        "outer offset beyond the input": {"hi": _set(-1, n_x)},
        "row tap beyond the row": {"row_hi": _set(-1, 5)},
        "negative row tap": {"row_lo": _set(0, -1)},
        "block tap beyond the block": {"blk_hi": _set(-1, 6)},
        "unknown element type": {"src": 99},
        "row tap times block past 2**63": {"row_hi": _set(-1, (1 << 61) + (1 << 40))},
        # a segment longer than the row made the scratch size wrap (heap corruption)
        "segment of 2**62": {"segment": 1 << 62},
        "segment longer than the row": {"segment": args["row_len"] + 1},
        "outer start near 2**63": {"starts": _set(0, (1 << 63) - 1)},
    }
    wrong = []
    for why, change in bad.items():
        try:
            _native.linear_kernel(*_changed(args, **change))
        except ValueError:
            continue
        wrong.append(why)
    assert not wrong, f"accepted: {wrong}"


def test_linear_kernel_call_rejects_a_row_base_near_2_63(monkeypatch) -> None:
    """row_base + rows wrapped past int64 and passed the bounds check (then segfaulted)."""
    args = _linear_args(monkeypatch, (3, 64, 256), [1, 2, 2])
    kernel = _native.linear_kernel(*args.values())
    x = np.zeros((3, 64, 256), np.float32)
    rows, width = 3 * 128, 512
    out = np.zeros((200, width), np.float32)
    for row_base in ((1 << 63) - 100, (1 << 63) - 1, rows - 199):
        with pytest.raises(ValueError, match="kernel called with"):
            kernel(x, out, 1, row_base)
    kernel(x, np.zeros((rows, width), np.float32), 1, 0)  # the whole output is fine


def test_linear_kernel_rejects_outer_offsets_overflowing(monkeypatch) -> None:
    # two blended outer axes: each offset alone fits, their sum passes 2**63
    args = _linear_args(monkeypatch, (2, 3, 5, 6), [2, 2, 1.5, 1.5])
    assert list(args["sizes"]) == [4, 6], args["sizes"]
    huge = lambda table: np.full_like(table, (1 << 62) + (1 << 40))  # noqa: E731
    with pytest.raises(ValueError, match="inconsistent kernel tables"):
        _native.linear_kernel(*_changed(args, lo=huge, hi=huge))
