"""Process-level properties of the compiled layer (``onnx_upsample._kernels._native``).

Fork safety of the thread pool, Ctrl-C during a long call, thread-count changes while
other threads call, no numba anywhere, both instruction-set variants of the linear kernels
against the reference, and cold start (the kernel object's own argument checks are in
test_kernel_description.py). Whatever could hang runs in a subprocess under a timeout: a
hang is a failure, not a stuck test run.
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
from processes import outputs_of
from runners import python_process

import onnx_upsample
from onnx_upsample import _threads, set_num_threads, upsample
from onnx_upsample._kernels import _compiled, _native

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(onnx_upsample.__file__).resolve().parent


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
    result = python_process(FORK_CHILD, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    codes = result.stdout.split()
    assert codes[0] == "codes" and len(codes) == 8, result.stdout
    # 0: equal bytes; 3: different bytes; 4: no helper thread in the child; <0: signal
    assert codes[1:] == ["0"] * 7, f"children's exit codes: {codes[1:]}"


def test_fork_multiprocessing_pool_after_a_parallel_call() -> None:
    _two_cores()
    result = python_process(FORK_POOL, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["pool", "4", "4"], result.stdout


# --- 2. Ctrl-C ----------------------------------------------------------------------------

# A long linear call (uint8, three interpolated axes at scales whose weights are rarely 1 and
# 0: 0.7 s on 2 cores of a 2.0 GHz Xeon, 1.8 GiB of output written as it goes, front to
# back; at integer scales the same output takes 0.3 s, too short to interrupt reliably) into
# a preallocated out= that holds 255, a value the call never writes (x is 7 everywhere).
# Interrupted, the call must stop with the last plane of the output still unwritten: it
# stopped early, judged by what it wrote, not by a clock.
INTERRUPT = """
import sys, time
import numpy as np
import onnx_upsample as u
u.set_num_threads(int(sys.argv[1]))
scales = [1, 1, 1.9, 3.9, 3.9]
x = np.full((1, 16, 16, 512, 512), 7, np.uint8)
out = np.full(u.output_shape(x.shape, scales), 255, np.uint8)
try:
    print("ready", flush=True)
    u.upsample(x, scales, "linear", out=out)
    print("completed", flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted", bool((out[0, -1, -1] == 255).all()), flush=True)
y = u.upsample(np.ones((2, 16, 64, 64), np.float32), [1, 1, 2, 2], "linear")
print("recovered", bool((y == 1).all()), flush=True)
"""


@pytest.mark.slow
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
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report = stdout.split()
    assert report[:1] == ["interrupted"], (
        f"no KeyboardInterrupt from the call: {stdout!r} {stderr[-2000:]!r}")
    assert report[1] == "True", "interrupted only after writing the whole output"
    assert report[2:] == ["recovered", "True"], (stdout, stderr[-2000:])
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
    result = python_process(NO_NUMBA)
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
_kernels.launcher.cache_clear()
u._api._PREPARED.clear()  # the memo of checked calls holds the serial split
u.set_num_threads(2)
bad = [i for i, (x, s) in enumerate(cases) if u.upsample(x, s, "linear").tobytes() != expected[i]]
print("split", len(cases), "bad", bad)
_layout.MIN_SHARE_WORK = 1 << 22
_kernels.launcher.cache_clear()

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


def test_the_avx2_query_agrees_with_the_operating_system() -> None:
    """cpuid and xgetbv, asked by the extension itself, against the kernel's own flags: a
    build whose compiler runtime leaves the CPU table empty (zig's, which builds the Linux
    wheels) would otherwise run the baseline loops on every machine, silently."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        pytest.skip("no /proc/cpuinfo (not Linux): nothing to compare the query with")
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo, flags=re.M)
    if flags is None:
        pytest.skip("/proc/cpuinfo has no x86 'flags' line (not an x86 CPU)")
    if not _native.HAVE_AVX2_VARIANT:
        pytest.skip("this build has no AVX2 loops (a Clang or portable build): nothing to run")
    assert bool(_native.cpu_has_avx2()) == ("avx2" in flags.group(1).split())


def _isa_run(variant: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != _compiled.ISA_VAR}
    if variant is not None:
        env[_compiled.ISA_VAR] = variant
    return subprocess.Popen([sys.executable, "-c", ISA_CHECK], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
def test_instruction_set_variants_equal_the_reference_and_each_other() -> None:
    variants: dict[str | None, int] = {"baseline": 0, None: int(_native.cpu_has_avx2())}
    if _native.cpu_has_avx2():
        variants["avx2"] = 1
    procs = {v: _isa_run(v) for v in variants}  # concurrently: the reference is slow
    outputs = outputs_of(procs, timeout=180)
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
    result = python_process(code, ONNX_UPSAMPLE_ISA="sse9")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("error "), result.stdout
    assert "ONNX_UPSAMPLE_ISA" in result.stdout and "sse9" in result.stdout, result.stdout


# --- 6. cold start ------------------------------------------------------------------------

# A first call in a new process compiles nothing and caches nothing: the kernels were compiled
# at install (numba compiled them at each first call, 7-50 s, into a cache folder). The time a
# cold start takes is measured by benchmarks/bench.py (--cold-start), not tested.
COLD = """
import numpy as np
import onnx_upsample as u
y = u.upsample(np.ones((1, 3, 32, 32), np.float32), [1, 1, 2, 2], "linear")
assert y.shape == (1, 3, 64, 64) and (y == 1).all()
"""


def test_cold_start_with_an_empty_cache_writes_nothing_there(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    result = python_process(COLD, XDG_CACHE_HOME=str(cache), NUMBA_CACHE_DIR=str(cache / "numba"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert list(cache.iterdir()) == []
