"""The compiled kernels: thread counts, concurrent calls, streaming stores.

Exactness of the kernels against the reference is covered by test_fast_vs_reference.py
(hypothesis, every element type) and against ORT by test_ort.py; here the properties
that belong to the compiled layer itself.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from runners import python_process

import onnx_upsample
from onnx_upsample import UpsampleError, set_num_threads, upsample
from onnx_upsample._kernels import _compiled

ROOT = Path(__file__).resolve().parents[1]

# Cases split across threads (the fixture below lowers _kernels._layout.MIN_SHARE_WORK so
# that they are, whatever they are worth), covering the kernel's row kinds: repeat, gather,
# copy rows, blocks, and 1-3 blended axes.
CASES = [
    ((2, 16, 64, 64), [1, 1, 2, 2], "nearest", "float32"),
    ((2, 16, 64, 64), [1, 1, 1.5, 1.7], "nearest", "uint8"),
    ((1, 64, 64, 3), [1, 2, 2, 1], "nearest", "int16"),
    ((3, 50, 2000), [2, 1.3333334, 1], "nearest", "complex128"),
    ((2, 16, 64, 64), [1, 1, 2, 2], "linear", "float32"),
    ((1, 64, 64, 3), [1, 1.5, 2, 1], "linear", "uint8"),
    ((1, 4, 16, 32, 32), [1, 1, 2, 1.5, 2], "linear", "float64"),
    ((2, 8, 64, 64), [2, 1, 1.5, 1.5], "linear", "int32"),
    ((2, 8, 64, 64), [1, 1, 2, 2], "linear", "float16"),
]


def _input(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape) * 1000
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


@pytest.fixture
def restore_threads(monkeypatch: pytest.MonkeyPatch) -> object:
    """Split every call over the threads it may use (at least two, even on one core), and
    restore the thread count after the test."""
    from onnx_upsample import _kernels
    from onnx_upsample._kernels import _layout

    monkeypatch.setattr(_layout, "MIN_SHARE_WORK", 1)
    cores = onnx_upsample._threads.available_cores()
    monkeypatch.setattr(onnx_upsample._threads, "available_cores", lambda: max(2, cores))
    _kernels.launcher.cache_clear()
    onnx_upsample._api._PREPARED.clear()
    yield
    onnx_upsample._threads._requested = None
    _kernels.launcher.cache_clear()
    onnx_upsample._api._PREPARED.clear()


@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), CASES)
def test_thread_count_does_not_change_bits(shape, scales, mode, dtype, restore_threads) -> None:
    x = _input(shape, dtype)
    results = []
    for threads in sorted({1, 2, onnx_upsample._threads.available_cores()}):
        set_num_threads(threads)
        results.append(upsample(x, scales, mode).tobytes())
    assert all(r == results[0] for r in results)


@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), CASES)
def test_parallel_kernels_equal_the_serial_ones(shape, scales, mode, dtype, monkeypatch,
                                                restore_threads) -> None:
    """Work split over threads gives the serial kernel's bits (which the small cases of
    test_fast_vs_reference.py check against the reference)."""
    from onnx_upsample import _kernels
    from onnx_upsample._kernels import _layout

    x = _input(shape, dtype)
    set_num_threads(2)
    parallel = upsample(x, scales, mode).tobytes()
    monkeypatch.setattr(_layout, "MIN_SHARE_WORK", 1 << 62)
    # both caches of prepared calls hold the parallel split: forget them
    _kernels.launcher.cache_clear()
    onnx_upsample._api._PREPARED.clear()
    try:
        serial = upsample(x, scales, mode).tobytes()
    finally:
        _kernels.launcher.cache_clear()
        onnx_upsample._api._PREPARED.clear()
    assert parallel == serial


def test_concurrent_calls_from_python_threads() -> None:
    """Calls from several Python threads at once are safe and give identical results."""
    work = [(_input(shape, dtype, seed=i), scales, mode)
            for i, (shape, scales, mode, dtype) in enumerate(CASES)]
    expected = [upsample(x, s, m).tobytes() for x, s, m in work]
    errors: list[BaseException] = []
    mismatches: list[int] = []

    def worker(offset: int) -> None:
        try:
            for round_ in range(3):
                for i in range(len(work)):
                    k = (i + offset + round_) % len(work)
                    x, s, m = work[k]
                    if upsample(x, s, m).tobytes() != expected[k]:
                        mismatches.append(k)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert not mismatches


@pytest.mark.parametrize("bad", [0, -1, np.int64(-3)])
def test_set_num_threads_rejects_out_of_range(bad: int) -> None:
    with pytest.raises(UpsampleError, match=rf"n is {bad}; expected a number of threads >= 1"):
        set_num_threads(bad)


def test_set_num_threads_takes_any_integer_kind_and_count(restore_threads) -> None:
    """numpy integers are integers; more threads than cores only oversubscribe."""
    x = _input((2, 16, 64, 64), "float32")
    expected = upsample(x, [1, 1, 2, 2], "linear").tobytes()
    for n in (np.int64(2), np.uint8(3), 1000):
        set_num_threads(n)
        assert onnx_upsample._threads.num_threads() == int(n)
        assert upsample(x, [1, 1, 2, 2], "linear").tobytes() == expected


@pytest.mark.parametrize("bad", [1.5, "2", None, True])
def test_set_num_threads_rejects_wrong_kinds(bad: object) -> None:
    with pytest.raises(TypeError, match="expected a whole number of threads"):
        set_num_threads(bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_environment_variable_sets_threads_and_bad_values_are_errors() -> None:
    imports = "import numpy as np, onnx_upsample as u; from onnx_upsample import _threads;"
    call = "u.upsample(np.zeros((64, 64, 64), np.float32), [2, 2, 2]);"
    ok = python_process(f"{imports} print(_threads.num_threads())",
                        ONNX_UPSAMPLE_NUM_THREADS="1")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "1"
    bad = python_process(f"{imports} {call}", ONNX_UPSAMPLE_NUM_THREADS="many")
    assert bad.returncode != 0
    assert "ONNX_UPSAMPLE_NUM_THREADS is 'many'" in bad.stderr
    # empty means unset; a count above the cores is accepted
    for value, expected in (("", str(onnx_upsample._threads.available_cores())), ("3", "3")):
        result = python_process(f"{imports} {call} print(_threads.num_threads())",
                                ONNX_UPSAMPLE_NUM_THREADS=value, OMP_NUM_THREADS="")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == expected
    # read once, at import, as OMP_NUM_THREADS: a later change of the environment is not seen
    late = python_process(f"{imports} import os;"
                          "os.environ['ONNX_UPSAMPLE_NUM_THREADS'] = '1'; "
                          "print(_threads.num_threads())",
                          ONNX_UPSAMPLE_NUM_THREADS="3", OMP_NUM_THREADS="")
    assert late.returncode == 0, late.stderr
    assert late.stdout.strip() == "3"


def test_default_thread_count_follows_affinity() -> None:
    """The default is the cores this process may use (affinity), not os.cpu_count()."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))});"
            "from onnx_upsample import _threads; print(_threads.num_threads())")
    result = python_process(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


# Streaming stores (outputs of 16 MiB and more by default) write the same bits as ordinary
# ones, on every way a row is written: repeated, gathered in one piece or in several (rows
# longer than the kernel's 16 KiB buffer), copied, with blocks (channels last), rows that
# share cache lines with their neighbours, and linear rows written directly or converted.
STREAM_CASES = [
    ((1, 8, 256, 256), [1, 1, 2, 2], "nearest", "float32"),
    ((1, 8, 256, 256), [1, 1, 1.7, 2.3], "nearest", "float32"),
    ((4, 2, 5000), [1, 3, 2.5], "nearest", "float64"),
    ((64, 3, 4096), [2, 3, 1], "nearest", "uint8"),
    ((512, 512, 3), [2, 1.5, 1], "nearest", "uint8"),
    ((1, 8, 256, 255), [1, 1, 2, 1.5], "linear", "float32"),
    ((1, 8, 256, 256), [1, 1, 2, 2], "linear", "uint8"),
    ((2, 3000, 3), [2, 2.5, 1], "linear", "int16"),
]


@pytest.mark.parametrize(("shape", "scales", "mode", "dtype"), STREAM_CASES)
def test_streaming_stores_write_the_same_bits(shape, scales, mode, dtype, monkeypatch) -> None:
    x = _input(shape, dtype)
    results = {}
    for choice in ("never", "always"):
        # what ONNX_UPSAMPLE_STREAMING_STORES sets when the package is imported
        monkeypatch.setattr(_compiled, "_stream_choice", choice)
        results[choice] = upsample(x, scales, mode).tobytes()
    assert results["never"] == results["always"]


def test_streaming_choice_is_read_when_the_kernels_load_and_checked_at_each_call() -> None:
    code = ("import os, sys, numpy as np, onnx_upsample as u\n"
            "for scales in ([2, 2], [2, 2], [2, 3]):\n"
            "    try:\n"
            "        print(u.upsample(np.ones((4, 4), np.float32), scales).shape)\n"
            "    except u.UpsampleError as error:\n"
            "        print(error)\n"
            "    os.environ['ONNX_UPSAMPLE_STREAMING_STORES'] = sys.argv[1]\n")
    bad = python_process(code, "never", ONNX_UPSAMPLE_STREAMING_STORES="sometimes")
    assert bad.returncode == 0, bad.stderr
    first, second, third = bad.stdout.splitlines()
    assert "ONNX_UPSAMPLE_STREAMING_STORES is 'sometimes'" in first  # every call, not once
    assert "ONNX_UPSAMPLE_STREAMING_STORES is 'sometimes'" in second
    assert "ONNX_UPSAMPLE_STREAMING_STORES is 'sometimes'" in third  # a later change unseen
    late = python_process(code, "sometimes", ONNX_UPSAMPLE_STREAMING_STORES="")
    assert late.returncode == 0, late.stderr
    assert late.stdout.splitlines() == ["(8, 8)"] * 2 + ["(8, 12)"]  # read when they loaded
