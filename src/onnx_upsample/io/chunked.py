"""Writers of dask arrays, chunk by chunk: a memory-mapped ``.npy`` file or a zarr store,
each written atomically, on a pool of threads of the write's own (``computing``)."""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, TextIO

import numpy as np

from .._errors import UpsampleError
from .atomic import atomic_path, reason
from .formats import XARRAY_DIMENSIONS, io_errors

if TYPE_CHECKING:
    import dask.array as da

__all__ = ["computing", "store_npy", "store_zarr"]

@contextlib.contextmanager
def computing(out: TextIO | None) -> Iterator[None]:
    """Where dask computes a file's chunks: its threaded scheduler on a pool of this block's
    own, with dask's progress bar on ``out`` for work that lasts more than a second (None:
    quiet).

    The pool is shut down when the block ends, waiting for the chunks being computed and
    cancelling the others. When an exception (Ctrl-C included) leaves the scheduler, the
    tasks it had handed to a pool go on running, and with dask's shared default pool they
    went on writing chunks into a temporary output after its clean-up had removed it (1 run
    in 12 left one behind). A ``distributed`` client, where one is active, runs the tasks
    instead and the pool stays unused.
    """
    import dask

    from .._threads import available_cores

    pool = concurrent.futures.ThreadPoolExecutor(available_cores(),
                                                 thread_name_prefix="onnx-upsample-io")
    try:
        with dask.config.set(pool=pool):
            if out is None:
                yield
                return
            from dask.diagnostics import ProgressBar

            with ProgressBar(minimum=1.0, dt=0.25, out=out):
                yield
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def store_npy(path: str, lazy: da.Array, progress: TextIO | None) -> None:
    """Compute ``lazy`` chunk by chunk into a memory-mapped ``.npy`` file, atomically.

    Raises
    ------
    UpsampleError
        ``lazy`` holds objects, or the file cannot be created.
    """
    import dask.array as da

    if lazy.dtype.hasobject:
        raise UpsampleError(
            f"output {path!r}: .npy files cannot hold object arrays without pickle; "
            "write a zarr store instead"
        )
    with atomic_path(path) as temporary:
        with io_errors(path):
            target = np.lib.format.open_memmap(
                temporary, mode="w+", dtype=lazy.dtype, shape=lazy.shape
            )
        with computing(progress):
            da.store(lazy, target, lock=False)
        with io_errors(path):
            target.flush()
            del target


def store_zarr(
    path: str,
    lazy: da.Array,
    attrs: dict[str, Any],
    zarr_format: int,
    progress: TextIO | None,
    dimension_names: tuple[str | None, ...] | None = None,
) -> None:
    """Compute ``lazy`` chunk by chunk into a new zarr store, atomically.

    The store's chunks are ``lazy``'s first chunk per axis (zarr chunks are regular: irregular
    dask chunks are rechunked first); ``attrs`` are kept where they are plain JSON, and
    ``dimension_names`` as a v3 array's ``dimension_names`` (in v2, where all are named, as
    xarray's ``_ARRAY_DIMENSIONS`` attribute).

    Raises
    ------
    UpsampleError
        ``zarr_format`` is not 2 or 3, or zarr cannot store the element type.
    """
    import dask.array as da
    import zarr

    if zarr_format not in (2, 3):
        raise UpsampleError(f"zarr format is {zarr_format}; expected 2 or 3")
    version: Literal[2, 3] = 2 if zarr_format == 2 else 3
    chunks = tuple(max(1, c[0]) if c else 1 for c in lazy.chunks)
    regular = all(
        all(size == axis[0] for size in axis[:-1]) and axis[-1] <= axis[0]
        for axis in lazy.chunks if axis
    )
    if not regular:
        lazy = lazy.rechunk(chunks)
    attributes = _json_attrs(attrs)
    names = dimension_names if version == 3 else None
    if version == 2 and dimension_names and all(isinstance(n, str) for n in dimension_names):
        attributes[XARRAY_DIMENSIONS] = list(dimension_names)
    with atomic_path(path, directory=True) as temporary:
        try:
            target = zarr.create_array(
                store=temporary, shape=lazy.shape, chunks=chunks, dtype=lazy.dtype,
                zarr_format=version, attributes=attributes, overwrite=True,
                dimension_names=names,
            )
        except Exception as error:  # zarr raises many kinds for a type it cannot store
            raise UpsampleError(
                f"cannot write {path!r} as a zarr v{zarr_format} store: {reason(error)}"
            ) from None
        with computing(progress):
            da.store(lazy, target, lock=False)  # type: ignore[arg-type]


def _json_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """The input store's attributes, kept where they are plain JSON."""
    import json

    kept = {}
    for key, value in attrs.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept
