"""``onnx_upsample.dask.upsample`` against the in-memory ``upsample``, bit for bit.

Chunking must not change the answer (style anchors, example 9): random shapes, scales,
input chunkings and output chunkings (the default ones under random ``array.chunk-size``
budgets), both modes and every element type, compared as raw bytes with the whole-array
call; plus the ``2**24`` rule, the no-resize copy, the graph's shape (one task per output
chunk, reading only the chunks it needs) and the default chunks' budget. Runs on a
``distributed`` cluster are in test_distributed.py.
"""

from __future__ import annotations

import itertools
import warnings
from unittest import mock

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import onnx_upsample.dask as oud  # noqa: E402
from onnx_upsample import UpsampleError, UpsampleWarning, _chunking, upsample  # noqa: E402

SCALES = [1.0, 1.04, 1.3, 1.3333334, 1.5, 2.0, 2.5, 3.0]
NUMERIC = [
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", ">f4", "<i2", ">u8",
]
NEAREST_ONLY = ["bool", "U3", "S2", "object"]


@pytest.fixture(autouse=True)
def _synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _values(shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "O":
        x = np.empty(n, dtype=object)
        x[:] = [f"s{i}" for i in rng.integers(0, 50, n)]
        return x.reshape(shape)
    if dtype.kind in "US":
        return rng.integers(0, 100, n).astype(dtype).reshape(shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype.newbyteorder("="),
                            endpoint=True).astype(dtype).reshape(shape)
    values = rng.normal(0, 100, n)
    if n >= 4:
        values[:4] = [np.inf, -np.inf, np.nan, -0.0]
    if dtype.kind == "c":
        values = values + 1j * rng.normal(0, 100, n)
    return values.astype(dtype).reshape(shape)


def _assert_same(lazy, expected: np.ndarray) -> None:
    got = lazy.compute()
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert got.flags.c_contiguous
    if expected.dtype.kind == "O":
        assert all(a is b for a, b in zip(got.ravel(), expected.ravel(), strict=True))
    else:
        assert got.tobytes() == expected.tobytes()


@st.composite
def _partition(draw, n: int, allow_empty: bool = True):
    """Random chunk sizes summing to n (a few zero-size chunks allowed)."""
    if n == 0:
        return (0,)
    cuts = draw(st.lists(st.integers(1, n - 1), max_size=min(n - 1, 5), unique=True)) if n > 1 \
        else []
    bounds = [0, *sorted(cuts), n]
    sizes = [b - a for a, b in itertools.pairwise(bounds)]
    if allow_empty and draw(st.integers(0, 9)) == 0:
        sizes.insert(draw(st.integers(0, len(sizes))), 0)
    return tuple(sizes)


@st.composite
def _case(draw, dtypes):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(0 if draw(st.integers(0, 19)) == 0 else 1, 6))
                  for _ in range(rank))
    scales = [draw(st.sampled_from(SCALES)) for _ in range(rank)]
    in_chunks = tuple(draw(_partition(n)) for n in shape)
    dtype = draw(st.sampled_from(dtypes))
    kind = draw(st.sampled_from(["default", "int", "tuple", "dict"]))
    # small budgets make the default chunks cut the followed ones, large ones group them
    budget = draw(st.sampled_from([4096, 2**16, 2**27]))
    # halo pieces (a neighbour's edge read alone) only come with chunks of 1 MiB and more:
    # lower that threshold to 0 half the time so that tiny arrays read through them too
    halo_from = draw(st.sampled_from([0, _chunking.HALO_PIECES_FROM_BYTES]))
    return shape, scales, in_chunks, dtype, kind, (budget, halo_from), draw(st.data())


def _out_chunks(kind: str, out_shape: tuple[int, ...], data):
    if kind == "default":
        return None
    if kind == "int":
        return data.draw(st.integers(1, 5))
    if kind == "tuple":
        return tuple(data.draw(_partition(n, allow_empty=False)) for n in out_shape)
    axis = data.draw(st.integers(0, len(out_shape) - 1))
    return {axis: data.draw(_partition(out_shape[axis], allow_empty=False))}


def _check_case(case, mode: str) -> None:
    shape, scales, in_chunks, dtype_name, kind, (budget, halo_from), data = case
    dtype = _dtype(dtype_name)
    x = _values(shape, dtype, seed=len(shape) * 7 + sum(shape))
    expected = upsample(x, scales, mode)
    chunks = _out_chunks(kind, expected.shape, data)
    with (dask.config.set({"array.chunk-size": budget}),
          mock.patch.object(_chunking, "HALO_PIECES_FROM_BYTES", halo_from)):
        lazy = oud.upsample(da.from_array(x, chunks=in_chunks), scales, mode, chunks=chunks)
    if chunks is not None and not isinstance(chunks, dict | int):
        assert lazy.chunks == chunks
    if chunks is None and dtype.kind != "O" and expected.size:
        # the budget holds the output chunk plus its input window, so the output alone
        # fits it, down to single elements
        largest = np.prod([max(axis) for axis in lazy.chunks]) * dtype.itemsize
        assert largest <= max(budget, dtype.itemsize)
    _assert_same(lazy, expected)


@pytest.mark.slow
@given(_case(NUMERIC + NEAREST_ONLY + ["bfloat16"]))
def test_random_chunkings_nearest(case) -> None:
    _check_case(case, "nearest")


@pytest.mark.slow
@given(_case([*NUMERIC, "bfloat16"]))
def test_random_chunkings_linear(case) -> None:
    _check_case(case, "linear")


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("dtype", [*NUMERIC, "bool", "U3", "S2", "object", "bfloat16"])
def test_every_element_type(dtype: str, mode: str) -> None:
    np_dtype = _dtype(dtype)
    if mode == "linear" and (np_dtype.kind in "bUSO"):
        with pytest.raises(UpsampleError, match="use mode='nearest'"):
            oud.upsample(da.zeros((2, 2), chunks=1, dtype=np_dtype), [2, 2], mode)
        return
    x = _values((5, 4, 3), np_dtype, seed=3)
    scales = [1.5, 1.3333334, 2.0]
    lazy = oud.upsample(da.from_array(x, chunks=(2, 3, 2)), scales, mode)
    _assert_same(lazy, upsample(x, scales, mode))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1.3, 1.04, 1.0], [1.0, 1.0, 1.0], [1.3, 1.05, 1.4]])
def test_no_resize_copy(mode: str, scales: list[float]) -> None:
    # (3, 10, 2) with these scales keeps its shape: ORT's global rule makes Y a copy of X
    x = _values((3, 10, 2), np.dtype(np.float32), seed=1)
    expected = upsample(x, scales, mode)
    assert expected.shape == x.shape
    np.testing.assert_array_equal(expected, x)
    in_chunks = ((2, 1), (3, 3, 3, 1), (1, 1))
    lazy = oud.upsample(da.from_array(x, chunks=in_chunks), scales, mode, chunks=in_chunks)
    _assert_same(lazy, expected)
    _assert_same(oud.upsample(da.from_array(x, chunks=in_chunks), scales, mode), expected)
    _assert_same(oud.upsample(da.from_array(x, chunks=(2, 3, 1)), scales, mode, chunks=4),
                 expected)


def test_rank_zero_and_empty() -> None:
    x = np.array(5.5, dtype=np.float32)
    _assert_same(oud.upsample(da.from_array(x), [], "linear"), upsample(x, [], "linear"))
    empty = np.zeros((0, 3), dtype=np.int16)
    lazy = oud.upsample(da.from_array(empty, chunks=(1, 2)), [2, 2])
    assert lazy.shape == (0, 6)
    _assert_same(lazy, upsample(empty, [2, 2]))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_axes_beyond_2_24(mode: str) -> None:
    """Indices at and past 2**24 use the exact rule; windows that straddle it agree too."""
    n = 2**24 + 37
    x = (np.arange(n, dtype=np.uint32) * 2654435761 >> 24).astype(np.uint8)
    scale = 1.5
    expected = upsample(x, [scale], mode)
    n_out = expected.shape[0]
    # output chunks whose boundaries sit just before, at and after 2**24
    edges = [0, 2**23, 2**24 - 3, 2**24, 2**24 + 5, 2**24 + 2**22 + 1, n_out]
    chunks = (tuple(b - a for a, b in itertools.pairwise(edges)),)
    lazy = oud.upsample(da.from_array(x, chunks=2**22 + 3), [scale], mode, chunks=chunks)
    _assert_same(lazy, expected)
    # input below 2**24, output beyond it
    small = x[: 2**23 + 11]
    lazy = oud.upsample(da.from_array(small, chunks=2**21), [2.5], mode)
    _assert_same(lazy, upsample(small, [2.5], mode))


def _reads(lazy) -> list[int]:
    """How many pieces (input chunks, or halo pieces of them) each output task reads."""
    deps = lazy.__dask_graph__().get_all_dependencies()
    return [len(deps[key]) for key in lazy.__dask_graph__().layers[lazy.name]
            if key[0] == lazy.name]


def test_one_task_per_output_chunk_reading_only_its_input() -> None:
    x = da.zeros((256, 192, 128), chunks=64, dtype=np.float32)  # 1 MiB chunks
    nearest = oud.upsample(x, [2, 2, 2], chunks=128)
    graph = nearest.__dask_graph__()
    assert len(graph.layers[nearest.name]) == 4 * 3 * 2
    assert set(graph.layers) == {nearest.name, x.name}  # nothing rechunked or overlapped
    assert _reads(nearest) == [1] * 24  # nearest reads exactly one input chunk
    linear = oud.upsample(x, [2, 2, 2], "linear", chunks=128)
    reads = _reads(linear)
    assert len(reads) == 24
    assert max(reads) == 8 and min(reads) == 1  # one element of halo crosses into neighbours
    # ... and only that element travels: a neighbour is read through a piece of it
    graph = dict(linear.__dask_graph__())
    deps = linear.__dask_graph__().get_all_dependencies()
    halos = [key for key in graph if isinstance(key, tuple) and key[0].startswith("upsample-h")]
    assert halos and all(len(deps[key]) == 1 for key in halos)
    assert all(min(piece.shape) == 1 for piece in dask.get(graph, halos))
    assert len(graph) == 24 + len(halos) + x.npartitions


def test_tasks_are_plain_tuples_of_public_dask() -> None:
    """The layer holds dask's documented task form, ``(function, *args)`` with input keys
    in a list, so the package needs no private dask module (``dask._task_spec``)."""
    import operator

    x = da.zeros((1024, 600), chunks=(512, 300), dtype=np.int16)  # 300 KiB chunks
    for mode in ("nearest", "linear"):
        lazy = oud.upsample(x, [2, 2], mode, chunks=400)
        layer = lazy.__dask_graph__().layers[lazy.name]
        inputs = set(dict(x.__dask_graph__()))
        for key, task in layer.items():
            assert type(task) is tuple and callable(task[0]), (key, task)
            assert key[0] == lazy.name  # whole chunks: no halo pieces below 1 MiB
            assert task[2] and all(ref in inputs for ref in task[2])
            assert task[1].pool  # no distributed client: outputs in reused buffers
    y = da.zeros((2048, 600), chunks=(1024, 600), dtype=np.int16)  # 1.2 MiB chunks
    lazy = oud.upsample(y, [2, 2], "linear", chunks=400)
    halos = {key: task for key, task in lazy.__dask_graph__().layers[lazy.name].items()
             if key[0] != lazy.name}
    assert halos and all(task[0] is operator.getitem for task in halos.values())


def test_followed_chunks_are_the_input_boundaries_mapped() -> None:
    from onnx_upsample._chunking import default_chunks
    from onnx_upsample._spec.call import describe_call

    call = describe_call([1.5, 2.0], "nearest", np.dtype(np.uint8), (10, 7))
    assert default_chunks(call, ((3, 3, 4), (5, 2))) == ((5, 4, 6), (10, 4))
    # an input chunk that no output reads (in=30, s=1.04: index 29 is never read) is dropped
    call = describe_call([1.04], "nearest", np.dtype(np.uint8), (30,))
    assert default_chunks(call, ((29, 1),)) == ((31,),)


MiB = 2**20


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_default_chunks_fit_dask_chunk_size(mode: str) -> None:
    """The issue's case (never computed): (256, 1024, 1024) float32 in 64 MiB chunks, x2.
    Following the input would make 512 MiB output chunks; the default cuts each followed
    chunk in two per axis: 64 MiB of output plus about 8 MiB of input window per task,
    within dask's default 128 MiB, and (128, 512, 512) would be 128 MiB of output alone."""
    x = da.zeros((256, 1024, 1024), chunks=(64, 512, 512), dtype=np.float32)
    assert dask.config.get("array.chunk-size") == "128MiB"
    lazy = oud.upsample(x, [2, 2, 2], mode)
    assert lazy.chunksize == (64, 512, 512) and lazy.npartitions == 128
    reads = _reads(lazy)
    # a cut never straddles an input chunk: nearest reads one, linear one more per axis
    # where its halo crosses a boundary
    assert max(reads) == (1 if mode == "nearest" else 8)
    with dask.config.set({"array.chunk-size": "16MiB"}):  # dask's own setting is obeyed
        small = oud.upsample(x, [2, 2, 2], mode)
    assert np.prod(small.chunksize) * 4 <= 16 * MiB
    # cut at the followed chunks' boundaries: each size divides (128, 1024, 1024)
    assert all(f % c == 0 for f, c in zip((128, 1024, 1024), small.chunksize, strict=True))
    assert np.prod(small.chunksize) * 4 > 4 * MiB  # ... and not cut further than needed
    # ... and regular, as to_zarr needs: equal sizes but a smaller last one, per axis
    assert all(len(set(axis[:-1])) <= 1 and axis[-1] <= axis[0] for axis in small.chunks)
    with dask.config.set({"array.chunk-size": "1GiB"}):  # no client: this size decides
        large = oud.upsample(x, [2, 2, 2], mode)
    assert large.chunksize == (128, 1024, 1024)  # 512 MiB: the followed input chunks


def test_default_chunks_group_small_input_chunks() -> None:
    """Many small input chunks give fewer, larger tasks: whole followed chunks (128 per axis
    here) grouped up to the budget, never cut."""
    x = da.zeros((512, 512, 512), chunks=64, dtype=np.float32)
    lazy = oud.upsample(x, [2, 2, 2], "linear")
    assert lazy.npartitions < 8**3
    assert all(c % 128 == 0 for axis in lazy.chunks for c in axis)
    assert np.prod(lazy.chunksize) * 4 <= 128 * MiB
    assert _reads(lazy) and max(_reads(lazy)) <= 27


def test_looking_for_a_client_never_imports_distributed(monkeypatch) -> None:
    """distributed is used only when already imported (a second of import for local users):
    with it made unimportable, building a graph still works and finds no client."""
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` would raise
    x = da.zeros((8, 8), chunks=4, dtype=np.float32)
    assert oud.client_workers() is None and oud.worker_memory(None) is None
    assert oud.upsample(x, [2, 2], "linear").chunks == ((16,), (16,))


def test_default_chunks_of_tiny_arrays_are_one_chunk() -> None:
    # dask's "auto" convention: an array far below array.chunk-size is one chunk
    x = da.zeros((10, 7), chunks=((3, 3, 4), (5, 2)), dtype=np.uint8)
    assert oud.upsample(x, [1.5, 2]).chunks == ((15,), (14,))


def test_chunks_forms() -> None:
    x = da.from_array(np.arange(60, dtype=np.int32).reshape(6, 10), chunks=(4, 5))
    expected = upsample(x.compute(), [2, 1.5])
    assert oud.upsample(x, [2, 1.5], chunks=4).chunks == ((4, 4, 4), (4, 4, 4, 3))
    assert oud.upsample(x, [2, 1.5], chunks={1: -1}).chunks == ((12,), (15,))
    assert oud.upsample(x, [2, 1.5], chunks={0: 5}).chunks == ((5, 5, 2), (15,))
    assert oud.upsample(x, [2, 1.5], chunks=(None, 5)).chunks == ((12,), (5, 5, 5))
    assert oud.upsample(x, [2, 1.5], chunks="auto").shape == (12, 15)
    for chunks in [None, 4, {1: -1}, {0: 5}, (None, 5), "auto", ((1, 11), (7, 8))]:
        _assert_same(oud.upsample(x, [2, 1.5], chunks=chunks), expected)
    with pytest.raises(UpsampleError, match="chunks"):
        oud.upsample(x, [2, 1.5], chunks=((5, 5), (15,)))
    with pytest.raises(UpsampleError, match="axis 2"):
        oud.upsample(x, [2, 1.5], chunks={2: 3})


def test_arguments_checked_before_building() -> None:
    x = da.zeros((4, 4), chunks=2, dtype=np.float32)
    with pytest.raises(UpsampleError, match="scales has 1 value"):
        oud.upsample(x, [2])
    with pytest.raises(UpsampleError, match=r"scales\[1\] is 0.5.*use Resize"):
        oud.upsample(x, [2, 0.5])
    with pytest.raises(UpsampleError, match="expected 'nearest' or 'linear'"):
        oud.upsample(x, [2, 2], "cubic")
    with pytest.raises(TypeError):
        oud.upsample(x, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # kinds are checked before values, as in memory
        oud.upsample(x, ["a", 2], "cubic")
    with pytest.raises(TypeError, match="dask array"):
        oud.upsample(None, [2, 2])
    with pytest.raises(UpsampleError, match="element type"):
        oud.upsample(da.zeros(3, dtype="M8[s]"), [2])
    unknown = x[x[:, 0] > 0]
    with pytest.raises(UpsampleError, match="compute_chunk_sizes"):
        oud.upsample(unknown, [2, 2])
    with pytest.warns(UpsampleWarning, match="legacy name"):
        y = oud.upsample(x, [2, 2], "bilinear")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _assert_same(y, upsample(np.zeros((4, 4), np.float32), [2, 2], "linear"))


def test_other_arrays_are_wrapped_and_names_are_deterministic() -> None:
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    _assert_same(oud.upsample(x, [2, 2], "linear"), upsample(x, [2, 2], "linear"))
    d = da.from_array(x, chunks=2)
    assert oud.upsample(d, [2, 2]).name == oud.upsample(d, [2, 2]).name
    assert oud.upsample(d, [2, 2]).name != oud.upsample(d, [2, 3]).name
    assert oud.upsample(d, [2, 2]).name != oud.upsample(d, [2, 2], "linear").name


def test_graph_of_1000_chunks_has_a_task_per_chunk() -> None:
    """The graph grows with the chunks, one task each plus the halo pieces (its build time is
    measured by benchmarks/bench_dask.py, not tested)."""
    x = da.zeros((1000, 1000, 1000), chunks=100, dtype=np.float32)
    y = oud.upsample(x, [2, 2, 2], "linear", chunks=200)
    graph = dict(y.__dask_graph__())
    # 1000 tasks, 1000 input chunks, and the halo pieces 4 MB chunks are read through
    halos = sum(1 for key in graph if key[0].startswith("upsample-halo"))
    assert y.npartitions == 1000 and len(graph) == 2000 + halos and halos > 0
    y = oud.upsample(x, [2, 2, 2], "linear")  # the default: dask's auto, within the budget
    assert y.npartitions <= 1000


def test_zarr_and_numpy_arrays_are_wrapped_in_their_own_chunks(tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    x = _values((9, 10), np.dtype(np.uint16), seed=2)
    z = zarr.create_array(str(tmp_path / "x.zarr"), shape=x.shape, chunks=(4, 5),
                          dtype=x.dtype)
    z[...] = x
    lazy = oud.upsample(z, [2, 1.5], "linear")
    inputs = [key for key in dict(lazy.__dask_graph__())
              if isinstance(key, tuple) and key[0] != lazy.name]
    assert len(inputs) == 3 * 2  # the store's (4, 5) chunks
    _assert_same(lazy, upsample(x, [2, 1.5], "linear"))
    strings = np.array(["a", "bc", None], dtype=object)
    _assert_same(oud.upsample(strings, [2]), upsample(strings, [2]))


def test_tasks_run_their_kernel_on_one_thread_unless_told(monkeypatch) -> None:
    """dask runs one task per worker thread: each task's kernel uses 1 thread by default
    (no dask threads x kernel threads oversubscription), ``threads=`` raises it, and the
    bits do not depend on it."""
    from onnx_upsample.dask import _graph  # the tasks' module, which binds execute

    x = np.random.default_rng(3).standard_normal((64, 96)).astype(np.float32)
    expected = upsample(x, [2, 1.5], "linear").tobytes()
    seen: list[int | None] = []
    original = _graph.execute

    def spy(*args: object, **kwargs: object) -> None:
        seen.append(args[3])  # type: ignore[arg-type]  # execute(call, x, out, threads, ...)
        original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_graph, "execute", spy)
    lazy = oud.upsample(da.from_array(x, chunks=32), [2, 1.5], "linear")
    assert lazy.compute().tobytes() == expected
    assert seen and set(seen) == {1}
    seen.clear()
    lazy = oud.upsample(da.from_array(x, chunks=32), [2, 1.5], "linear", threads=2)
    assert lazy.compute(scheduler="synchronous").tobytes() == expected
    assert seen and set(seen) == {2}
    with pytest.raises(UpsampleError, match="threads is 0"):
        oud.upsample(da.from_array(x), [2, 2], threads=0)


@pytest.mark.parametrize("chunks", [None, {0: (0,)}, ((0,), "auto", "auto")])
def test_an_empty_output_takes_auto_chunks(chunks) -> None:
    # dask's own sizing of "auto" axes divides by the largest block, 0 here
    x = np.zeros((0, 0, 0), np.int8)
    lazy = oud.upsample(da.from_array(x), [1, 2, 3], chunks=chunks)
    assert lazy.compute().shape == (0, 0, 0)


def test_an_axis_past_float64s_exact_integers_is_refused_before_any_kernel() -> None:
    """Only a lazy array can have an axis of more than 2**53 elements; its indices could not
    be computed exactly, so the call is refused with the axis named (the kernels would only
    report an inconsistent description)."""
    huge = da.zeros((2**53 + 2,), dtype=np.uint8, chunks=2**50)
    with pytest.raises(UpsampleError, match=r"axis 0 of x has 9007199254740994 elements "
                                            r"and would have 18014398509481988; .*2\*\*53"):
        oud.upsample(huge, [2])
    with pytest.raises(UpsampleError, match=r"axis 0 of x has 4503599627370497 elements "
                                            r"and would have 9007199254740994"):
        oud.upsample(da.zeros((2**52 + 1,), dtype=np.uint8, chunks=2**50), [2])


def test_the_in_memory_entry_returns_a_dask_array_lazily() -> None:
    """upsample(a dask array) is onnx_upsample.dask's lazy result: nothing is computed, so a
    64 GiB output is a graph, not a MemoryError; out= is refused (the result is lazy)."""
    x = da.from_array(np.arange(24, dtype=np.float32).reshape(4, 6), chunks=2)
    y = upsample(x, [2, 1.5], "linear")
    assert isinstance(y, da.Array)
    assert y.name == oud.upsample(x, [2, 1.5], "linear").name
    _assert_same(y, upsample(x.compute(), [2, 1.5], "linear"))
    huge = da.zeros((2**17, 2**17), dtype=np.uint8, chunks=2**15)  # 16 GiB in, 64 GiB out
    lazy = upsample(huge, [2, 2])
    assert isinstance(lazy, da.Array) and lazy.shape == (2**18, 2**18)
    with pytest.raises(UpsampleError, match=r"^out is given but x is a dask array, whose "
                                            r"result is lazy .* result.store\(out\)"):
        upsample(x, [2, 2], out=np.empty((8, 12), np.float32))
    with pytest.raises(TypeError):  # kinds first, as for any x
        upsample(x, [2, "2"])
