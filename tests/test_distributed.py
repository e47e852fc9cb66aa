"""``onnx_upsample.dask.upsample`` on a real ``distributed`` cluster (worker processes).

One small ``LocalCluster`` (two worker processes, one thread each, 1 GiB ``memory_limit``)
serves every test: results bit-identical to the in-memory call, the zarr-in, zarr-out recipe
of docs/dask.md, default chunks sized for the workers' memory rather than this machine's,
and one-line refusals, before anything is submitted, of tasks a worker cannot hold.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import onnx_upsample.dask as oud  # noqa: E402
from onnx_upsample import UpsampleError, upsample  # noqa: E402

GiB = 2**30
WORKER_MEMORY = GiB


@pytest.fixture(scope="module")
def client():
    # distributed's nanny writes its pre-spawn environment (OMP_NUM_THREADS=1 and others)
    # into this process's os.environ when it starts a worker: restore it, so that the tests
    # after this module, and the subprocesses they start, see the environment they began with
    saved = dict(os.environ)
    try:
        with (
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     memory_limit=WORKER_MEMORY, dashboard_address=":0",
                                     silence_logs=40) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _volume(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 100, shape).astype(np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_bit_identical_on_worker_processes(client, mode: str) -> None:
    x = _volume((9, 8, 3), seed=5)
    lazy = oud.upsample(da.from_array(x, chunks=(4, 3, 3)), [1.5, 2, 1], mode, chunks=(5, 4, 3))
    got = client.compute(lazy).result()
    assert got.tobytes() == upsample(x, [1.5, 2, 1], mode).tobytes()


def test_zarr_in_zarr_out(client, tmp_path) -> None:
    """The docs/dask.md recipe, small: a zarr store upsampled into a zarr store by the
    workers, with the default chunks (regular, as ``to_zarr`` needs)."""
    zarr = pytest.importorskip("zarr")
    x = _volume((12, 10, 8), seed=7)
    source = zarr.create_array(str(tmp_path / "in.zarr"), shape=x.shape, chunks=(4, 5, 8),
                               dtype=x.dtype)
    source[...] = x
    lazy = oud.upsample(da.from_zarr(str(tmp_path / "in.zarr")), [2, 2, 1], "linear")
    lazy.to_zarr(str(tmp_path / "out.zarr"))  # runs on the cluster: the client is the default
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out[...].tobytes() == upsample(x, [2, 2, 1], "linear").tobytes()


def test_default_chunks_fit_the_workers_not_this_machine(client) -> None:
    """With dask's chunk size raised to 1 GiB, the workers' memory_limit decides: a task's
    output chunk plus input window stays within a quarter of a worker thread's memory
    (256 MiB): 128 MiB of output plus about 16 MiB of window, where twice that output alone
    would not fit. Without a client the same call makes 512 MiB chunks (test_dask.py)."""
    x = da.zeros((256, 1024, 1024), chunks=(64, 512, 512), dtype=np.float32)  # never computed
    with dask.config.set({"array.chunk-size": "1GiB"}):
        on_cluster = oud.upsample(x, [2, 2, 2], "linear")
    assert on_cluster.chunksize == (64, 512, 1024)
    # no buffer pool on the workers: their memory accounting cannot see one
    layer = on_cluster.__dask_graph__().layers[on_cluster.name]
    assert not any(task[1].pool for key, task in layer.items() if key[0] == on_cluster.name)


def test_tasks_a_worker_cannot_hold_are_refused_before_submitting(client) -> None:
    x = da.zeros((256, 1024, 1024), chunks=(64, 512, 512), dtype=np.float32)
    before = len(client.who_has())
    with pytest.raises(UpsampleError, match=r"chunks is -1: the largest task would hold "
                       r"10.0 GiB .*more than 60% \(the spill target\) of the 1.0 GiB a "
                       r"distributed worker thread has \(memory_limit 1.0 GiB / 1 thread\); "
                       r"pass smaller chunks="):
        oud.upsample(x, [2, 2, 2], "linear", chunks=-1)
    huge = da.zeros((1024, 1024, 1024), chunks=(512, 1024, 1024), dtype=np.float32)  # 2 GiB
    with pytest.raises(UpsampleError, match=r"array has chunks up to \(512, 1024, 1024\) "
                       r"\(2.0 GiB\), more than 60% .*; rechunk the input smaller"):
        oud.upsample(huge, [2, 2, 2])
    assert len(client.who_has()) == before  # nothing was submitted
