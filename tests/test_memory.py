"""Memory: a call's peak (the output, and next to nothing that grows with it), and what the
process can really have (the check before allocating, and a failed allocation worded alike).

The kernels compute every index from the axis' rule (no per-index tables), and float16 and
bfloat16 results are rounded from a bounded float32 piece, so a call's memory beyond its
input and output is a fixed scratch per thread: at most 0.15x the output on ordinary
outputs, whatever the shape. Each case runs in a child process that measures its own peak
resident memory (VmHWM, reset before the call); sizes are chosen so that the fixed scratch
(about 5 MiB) is within the bound.

The limits are read from files (/proc/meminfo, the cgroup's, /proc/self/statm): the tests
point the readers at files of their own, and an address-space limit (RLIMIT_AS) in a child
process makes an allocation fail at once, without touching memory. Nothing here allocates
more than a few MiB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import onnx_upsample
from onnx_upsample import UpsampleError, _api, _resources
from onnx_upsample._kernels import _compiled, _layout, _native

CHILD = """
import sys, numpy as np, ml_dtypes
import onnx_upsample as u
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
shape, scales, mode, name = eval(sys.argv[1]), eval(sys.argv[2]), sys.argv[3], sys.argv[4]
dtype = np.dtype(ml_dtypes.bfloat16) if name == 'bfloat16' else np.dtype(name)
x = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
u.upsample(np.ones((4, 4), dtype), [2, 2], mode)  # the kernels are loaded
open('/proc/self/clear_refs', 'w').write('5')  # the peak is now the current size
before = status('VmRSS')
y = u.upsample(x, scales, mode)
print((status('VmHWM') - before - y.nbytes) / y.nbytes)
"""

# (shape, scales, mode, dtype): long rows and rank 1 (where per-index tables cost 8-24
# bytes per output element, 20-40x a uint8 output), short rows under a long outer axis,
# images, and every conversion path (half types, complex parts, integers)
CASES = [
    ((20_000_000,), [2], "linear", "uint8"),
    ((20_000_000,), [2.5], "nearest", "uint8"),
    ((12_000_000,), [2], "linear", "float16"),
    ((12_000_000,), [2], "linear", "bfloat16"),
    ((4_000_000, 3), [2, 2], "nearest", "uint8"),
    ((4_000_000, 3), [2, 2], "linear", "uint8"),
    ((4_000_000, 2), [1.5, 2], "linear", "float32"),
    ((2_000_000,), [3], "linear", "complex64"),
    ((1, 3, 1080, 1920), [1, 1, 2, 2], "linear", "float16"),
    ((1080, 1920, 3), [2, 2, 1], "linear", "uint8"),
    ((1, 3, 540, 960), [1, 1, 2.5, 2.5], "nearest", "int16"),
]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), CASES,
                         ids=[f"{m}-{d}-{'x'.join(map(str, s))}" for s, _, m, d in CASES])
def test_working_memory_is_a_small_fraction_of_the_output(shape, scales, mode, dtype) -> None:
    result = subprocess.run([sys.executable, "-c", CHILD, repr(shape), repr(scales), mode,
                             dtype], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    extra = float(result.stdout)
    assert extra <= 0.15, f"peak memory beyond the output: {extra:.2f}x the output"


def test_working_memory_bounds_cover_the_kernels_scratch() -> None:
    per_thread = (_layout.LINEAR_SCRATCH_BYTES + _native.LINEAR_DIRECT_CACHE_BYTES
                  + 8 * _compiled.MAX_GATHER_SEGMENT)
    assert _resources.KERNEL_WORKING_BYTES_PER_THREAD >= per_thread
    assert _resources.KERNEL_WORKING_BYTES >= _compiled.HALF_SCRATCH_BYTES


def test_working_memory_is_counted_before_allocating(monkeypatch) -> None:
    """An output that fits alone, but not with the copy of a non-contiguous x next to it,
    is refused before anything is allocated, and the message says why."""
    x = np.ones((1024, 1024), np.float32)[:, ::2]  # strided: the kernels read a copy
    contiguous = np.ascontiguousarray(x)
    out_bytes = 2048 * 1024 * 4
    threads = onnx_upsample._threads.threads_for_call()
    limit = out_bytes + _resources.kernel_working_bytes(contiguous, threads) + x.nbytes // 2
    monkeypatch.setattr(_resources, "checked_from", lambda: 0)  # a small call is checked too
    monkeypatch.setattr(_resources, "memory_limit", lambda: (limit, "a test limit"))
    with pytest.raises(UpsampleError, match=r"plus .* of working memory, more than the "
                                            r"[\d.]+ MiB this process can take now \(a test"):
        onnx_upsample.upsample(x, [2, 2])
    assert onnx_upsample.upsample(contiguous, [2, 2]).shape == (2048, 1024)


# --- what the process can have ---------------------------------------------------------------

GiB = 1 << 30


@pytest.fixture
def limits(monkeypatch, tmp_path: Path):
    """The readers pointed at files of the test's own: no meminfo, no cgroup (each test writes
    what it needs), the gate of small requests left as it is."""
    monkeypatch.setattr(_resources, "MEMINFO", str(tmp_path / "meminfo"))
    monkeypatch.setattr(_resources, "SELF_CGROUP", str(tmp_path / "cgroup"))
    monkeypatch.setattr(_resources, "CGROUP_ROOT", str(tmp_path / "fs"))
    monkeypatch.setattr(_resources, "_address_space", lambda: None)
    _resources._cgroup_limits.cache_clear()
    _resources.checked_from.cache_clear()
    yield tmp_path
    _resources._cgroup_limits.cache_clear()  # the real ones again, for the tests that follow
    _resources.checked_from.cache_clear()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_issue_s_call_is_refused_against_the_memory_available(limits: Path) -> None:
    """The report: 22.4 GiB asked on a 23.5 GiB machine passed a check against the machine's
    size, then died (MemoryError(''), or the OOM killer in nearest mode). Against what is
    available (here 23.0 GiB, of which a request may take nine tenths) it is refused."""
    _write(limits / "meminfo", "MemTotal:       24683784 kB\nMemFree:        20000000 kB\n"
                               "MemAvailable:   24117248 kB\n")
    for mode in ("nearest", "linear"):
        with pytest.raises(UpsampleError) as error:
            onnx_upsample.upsample(np.zeros((2, 3), np.float32), [1e9, 1], mode)
        message = str(error.value)
        assert message.startswith("the output would have shape (2000000000, 3) and take 22.4 "
                                  "GiB plus ")
        assert ("more than the 20.7 GiB this process can take now (nine tenths of the 23.0 "
                "GiB this machine has available, MemAvailable); use smaller scales, or pass "
                "out= a preallocated or memory-mapped array") in message
        assert "onnx_upsample.dask.upsample" in message and "onnx-upsample apply" in message


@pytest.mark.parametrize("version", [1, 2])
def test_a_cgroup_limit_counts_what_is_left_under_it(limits: Path, version: int) -> None:
    """Limit minus use, the inactive file cache counted as free; v2's limit may sit on any
    ancestor (here the parent's is the tighter), v1's is the memory controller's."""
    _write(limits / "meminfo", "MemAvailable:   67108864 kB\n")  # 64 GiB: not the bound
    if version == 2:
        _write(limits / "cgroup", "0::/outer/inner\n")
        leaf = limits / "fs" / "outer" / "inner"
        _write(leaf / "memory.max", "max\n")
        _write(leaf / "memory.current", f"{GiB}\n")
        parent = leaf.parent
        _write(parent / "memory.max", f"{4 * GiB}\n")
        _write(parent / "memory.current", f"{3 * GiB}\n")
        _write(parent / "memory.stat", f"anon 1\ninactive_file {GiB // 2}\nfile 9\n")
    else:
        _write(limits / "cgroup", "5:cpu,cpuacct:/x\n4:memory:/job\n0::/\n")
        leaf = limits / "fs" / "memory" / "job"
        _write(leaf / "memory.limit_in_bytes", f"{4 * GiB}\n")
        _write(leaf / "memory.usage_in_bytes", f"{3 * GiB}\n")
        _write(leaf / "memory.stat", f"cache 7\ntotal_inactive_file {GiB // 2}\n")
        _write(limits / "fs" / "memory" / "memory.limit_in_bytes", "9223372036854771712\n")
    available, source = _resources.memory_limit()
    assert available == int(1.5 * GiB * 0.9)
    assert source == ("nine tenths of the 1.5 GiB left under its cgroup's memory limit of "
                      "4.0 GiB, with 3.0 GiB in use")
    with pytest.raises(UpsampleError, match=r"take 2.0 GiB, more than the 1.3 GiB this "
                                            r"process can take now \(nine tenths of the 1.5 GiB "
                                            r"left under its cgroup's"):
        _resources.check_bytes_fit(2 * GiB, "it would take", "fix it")
    assert _resources.checked_from() == _resources.CHECKED_FROM_BYTES  # 4 GiB / 16 is more


def test_nothing_known_is_no_check(limits: Path, monkeypatch) -> None:
    monkeypatch.setattr(_resources, "_machine", lambda: None)
    assert _resources.memory_limit() == (None, "")
    _resources.check_bytes_fit(1 << 60, "it would take", "fix it")


def test_small_requests_are_not_read_and_large_repeated_calls_are(monkeypatch) -> None:
    """Below the gate the limits are not read (a small call costs nothing more); a large
    output is checked again at every call, the remembered ones included, since the memory
    left changes between calls."""
    def unread() -> tuple[int, str]:
        raise AssertionError("the limits were read for a small call")

    monkeypatch.setattr(_resources, "memory_limit", unread)
    x = np.ones((3, 5), np.float32)
    assert onnx_upsample.upsample(x, [2, 2]).shape == (6, 10)
    assert _resources.checked_from() <= _resources.CHECKED_FROM_BYTES
    monkeypatch.setattr(_resources, "checked_from", lambda: 1024)  # from 1 KiB on
    monkeypatch.setattr(_api, "checked_from", lambda: 1024)
    y = np.ones((37, 41), np.uint8)  # a shape no other test remembers
    monkeypatch.setattr(_resources, "memory_limit", lambda: (1 << 40, "plenty"))
    first = onnx_upsample.upsample(y, [3, 3])
    monkeypatch.setattr(_resources, "memory_limit", lambda: (2048, "a test limit"))
    with pytest.raises(UpsampleError, match=r"shape \(111, 123\) and take 13.3 KiB plus .*"
                                            r"more than the 2.0 KiB"):
        onnx_upsample.upsample(y, [3, 3])  # remembered, and checked again
    assert onnx_upsample.upsample(y, [3, 3], out=np.empty_like(first)).shape == first.shape


# A child under RLIMIT_AS: the check names the limit; past the check (the readers silenced),
# the allocation fails at once (nothing is touched) and is worded the same way, one line on
# the command line (an image output, which is computed in memory, never chunk by chunk).
RLIMIT_CHILD = textwrap.dedent("""
    import contextlib, io, json, resource, sys
    import numpy as np
    import onnx_upsample
    from onnx_upsample import _resources, UpsampleError
    from onnx_upsample.cli import main
    onnx_upsample.upsample(np.ones((4, 4), np.float32), [2, 2], 'linear')  # kernels loaded
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
    _resources._machine = _resources._cgroup = lambda: None  # the address space alone
    found = {}
    x = np.zeros((2, 3), np.float32)
    for mode in ('nearest', 'linear'):  # 3.6e8 x 3 float32: 4.0 GiB
        try:
            onnx_upsample.upsample(x, [1.8e8, 1], mode)
        except UpsampleError as error:
            found['checked-' + mode] = str(error)
    _resources.memory_limit = lambda: (None, '')
    for mode in ('nearest', 'linear'):
        try:
            onnx_upsample.upsample(x, [1.8e8, 1], mode)
        except UpsampleError as error:
            found['failed-' + mode] = [str(error), error.__suppress_context__]
    np.save(sys.argv[1], np.zeros((1, 3), np.uint8))  # to (1.44e9, 3) uint8: 4.0 GiB
    with contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(['apply', sys.argv[1], sys.argv[2], '--scales', '1.44e9', '1'])
    found['cli'] = [code, err.getvalue()]
    print(json.dumps(found))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /proc/self/statm")
def test_an_address_space_limit_is_checked_and_a_failed_allocation_is_one_line(
        tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", RLIMIT_CHILD, str(tmp_path / "in.npy"),
                             str(tmp_path / "out.png")], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout)
    for mode in ("nearest", "linear"):
        checked = found[f"checked-{mode}"]
        assert checked.startswith("the output would have shape (360000000, 3) and take 4.0 GiB "
                                  "plus "), checked
        assert "this process can take now (its address-space limit RLIMIT_AS (ulimit -v) of " \
               "3.0 GiB, with " in checked
        message, suppressed = found[f"failed-{mode}"]
        assert message.startswith("the output would have shape (360000000, 3) and take 4.0 GiB "
                                  "plus "), message
        assert "which this process could not allocate (MemoryError); use smaller scales, or " \
               "pass out= a preallocated or memory-mapped array" in message
        assert suppressed  # raised from None: no numpy traceback chained
    code, err = found["cli"]
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    # (where the disk has less than 4 GiB free, its own check comes first)
    assert ("could not allocate (MemoryError); use smaller --scales, or a .zarr output" in err
            or "free on its disk" in err), err
    assert "out=" not in err and "onnx_upsample.dask" not in err  # the options' words alone
    assert not (tmp_path / "out.png").exists()
