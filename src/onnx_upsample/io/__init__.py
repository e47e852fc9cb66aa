"""Files: ``.npy``, images and zarr stores, the one atomic writer, and the ``apply`` job.

- :mod:`.atomic`: every file the package writes goes through it (a hidden temporary name
  beside the target, renamed only on success).
- :mod:`.formats`: npy, image and zarr readers and writers.
- :mod:`.apply`: the ``apply`` job (file in, file out, chunked when large).

Nothing is imported here, so that ``onnx_upsample.io.atomic`` loads neither the readers
nor their optional dependencies (Pillow, zarr, dask).
"""
