"""Models as they are stored: ``.onnx`` files with tensors beside them (external data).

Loading reads the protobuf only after checking its size, refuses external-data locations
outside the model's folder (absolute paths, ``..``) and files that are missing or too
short, and brings into memory only the tensors the tools read (small ones: scales,
constants) unless everything is asked for (to run the model). Saving writes the model
beside its output; tensors still stored outside it are copied next to the output when that
is another folder.
"""

from __future__ import annotations

import math
import os
from typing import Literal

import onnx
from onnx import ModelProto, TensorProto
from onnx.external_data_helper import (
    ExternalDataInfo,
    _get_all_tensors,
    load_external_data_for_model,
    load_external_data_for_tensor,
    uses_external_data,
)

from .._errors import UpsampleError
from ..io.atomic import copy_atomically

# protobuf cannot parse a message of 2 GiB or more: such models must use external data
PROTOBUF_LIMIT = 2**31 - 1
# tensors up to this size are loaded by every tool (scales, shapes, small constants)
SMALL_TENSOR_BYTES = 1 << 20

Which = Literal["small", "all"]


def _nbytes(tensor: TensorProto, info: ExternalDataInfo) -> int:
    if info.length:
        return int(info.length)
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        itemsize = 8
    return math.prod(tensor.dims) * itemsize


def external_tensors(model: ModelProto) -> list[TensorProto]:
    """Every tensor (initializers, Constant attributes, subgraphs) stored outside the file."""
    return [tensor for tensor in _get_all_tensors(model) if uses_external_data(tensor)]


def without_data(model: ModelProto) -> ModelProto:
    """``model``, or a copy whose external tensors are empty stand-ins: onnx's checker looks
    for external files relative to the working directory, which says nothing about a model
    read from elsewhere (its files were checked when it was read)."""
    if not external_tensors(model):
        return model
    copy = ModelProto()
    copy.CopyFrom(model)
    for tensor in external_tensors(copy):
        del tensor.external_data[:]
        tensor.data_location = TensorProto.DEFAULT
        del tensor.dims[:]
        tensor.dims.append(0)
    return copy


def check_locations(model: ModelProto, base: str) -> int:
    """Refuse external data outside ``base`` or beyond its files; returns the total bytes."""
    total = 0
    root = os.path.realpath(base)
    for tensor in external_tensors(model):
        info = ExternalDataInfo(tensor)
        location = info.location
        if not location or os.path.isabs(location) or ".." in location.replace(
                "\\", "/").split("/"):
            raise UpsampleError(
                f"tensor {tensor.name!r} stores its data at {location!r}, outside the model's "
                "folder; external data must be a relative path inside it (a file given to "
                "you may point anywhere, so it is not read)")
        path = os.path.realpath(os.path.join(root, location))
        if os.path.commonpath([root, path]) != root:
            raise UpsampleError(f"tensor {tensor.name!r} stores its data at {location!r}, "
                                "which leads outside the model's folder (a link); not read")
        if not os.path.isfile(path):
            raise UpsampleError(f"tensor {tensor.name!r} stores its data in {location!r}, "
                                f"which is missing beside the model ({root})")
        size = _nbytes(tensor, info)
        if (info.offset or 0) + size > os.path.getsize(path):
            raise UpsampleError(f"tensor {tensor.name!r} needs bytes {info.offset or 0} to "
                                f"{(info.offset or 0) + size} of {location!r}, which is "
                                f"{os.path.getsize(path)} bytes long")
        total += size
    return total


def with_all_data(model: ModelProto, base: str) -> ModelProto:
    """A copy of ``model`` with every external tensor (relative to the folder ``base``, whose
    files :func:`check_locations` has checked) loaded into it, to run it from memory."""
    copy = ModelProto()
    copy.CopyFrom(model)
    load_external_data_for_model(copy, base)
    return copy


def loaded_from(model: ModelProto, source: str, fix: str) -> ModelProto:
    """``model`` with every external tensor (relative to the folder of the model file
    ``source``) loaded, to run it from memory (itself where it has none); refused, with
    ``fix``, when the whole would pass protobuf's 2 GiB, which runtimes cannot take from
    memory."""
    if not external_tensors(model):
        return model
    base = os.path.dirname(os.path.abspath(source))
    if check_locations(model, base) + model.ByteSize() > PROTOBUF_LIMIT:
        raise UpsampleError("the model with its external data passes protobuf's 2 GiB, which "
                            f"onnxruntime cannot take from memory: {fix}")
    return with_all_data(model, base)


# Where a model cannot be read or run in this process' memory.
_ELSEWHERE = "run it on a machine with more memory"


def check_file(path: str) -> None:
    """Refuse a model path that names no file, or a file too large to read here, before
    anything is read."""
    from .._resources import check_bytes_fit, format_bytes

    if not os.path.exists(path):
        raise UpsampleError(f"model file {path!r} does not exist")
    if os.path.isdir(path):
        raise UpsampleError(f"model {path!r} is a directory; give the .onnx file")
    size = os.path.getsize(path)
    if size > PROTOBUF_LIMIT:
        raise UpsampleError(f"{path!r} is {format_bytes(size)}, beyond protobuf's 2 GiB: an "
                            "ONNX file that large must keep its tensors as external data")
    check_bytes_fit(size, f"{path!r} is", f"it cannot be read here: {_ELSEWHERE}")


def check_model(model: ModelProto, path: str) -> None:
    """Refuse what parsed as a ModelProto but holds no model (protobuf reads most short
    files as an empty message)."""
    if not model.graph.node and not model.graph.input and not model.opset_import:
        raise UpsampleError(f"{path!r} is not an ONNX model (it holds no graph and no "
                            "opset); give a .onnx file")


def read(path: str, which: Which = "small") -> ModelProto:
    """:func:`load`, every problem of the file an UpsampleError of one line: no such file,
    a folder, bytes that are no ONNX model, an unreadable file."""
    try:
        model = load(path, which)
    except UpsampleError:
        raise
    except Exception as error:  # protobuf DecodeError, unreadable files, ...
        if type(error).__name__ == "DecodeError":
            raise UpsampleError(f"{path!r} is not an ONNX model (its bytes are not an ONNX "
                                 "ModelProto); give a .onnx file") from None
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UpsampleError(f"cannot read {path!r} as an ONNX model: "
                            f"{type(error).__name__} {first}".rstrip()) from None
    check_model(model, path)
    return model


def load(path: str, which: Which = "small") -> ModelProto:
    """Read the model at ``path`` safely; load its small external tensors, or all of them."""
    from .._resources import check_bytes_fit

    check_file(path)
    model = onnx.load(path, load_external_data=False)
    base = os.path.dirname(os.path.abspath(path))
    total = check_locations(model, base)
    if which == "all":
        check_bytes_fit(total, f"{path!r} stores its tensors beside it, in",
                        f"it cannot be run in memory here: {_ELSEWHERE}")
    for tensor in external_tensors(model):
        if which == "all" or _nbytes(tensor, ExternalDataInfo(tensor)) <= SMALL_TENSOR_BYTES:
            load_external_data_for_tensor(tensor, base)
            tensor.data_location = TensorProto.DEFAULT
            del tensor.external_data[:]
    return model


def save(model: ModelProto, path: str, source_base: str | None) -> None:
    """Write ``model`` to ``path``; tensors it still keeps outside (relative to
    ``source_base``) are copied beside ``path`` when that is another folder, each through
    the package's one atomic writer (io.atomic)."""
    target_base = os.path.dirname(os.path.abspath(path))
    files = sorted({ExternalDataInfo(tensor).location for tensor in external_tensors(model)})
    if files and source_base is None:
        raise UpsampleError("the model refers to external data but its folder is unknown")
    if files and source_base is not None and not os.path.samefile(source_base, target_base):
        for name in files:
            source = os.path.join(source_base, name)
            target = os.path.join(target_base, name)
            if os.path.exists(target) and not os.path.samefile(source, target):
                raise UpsampleError(
                    f"the model's external data {name!r} would replace the file of that name "
                    f"in {target_base!r}; write the model to another folder")
        for name in files:
            copy_atomically(os.path.join(source_base, name), os.path.join(target_base, name))
    if model.ByteSize() > PROTOBUF_LIMIT:
        raise UpsampleError("the model is beyond protobuf's 2 GiB in memory; keep its large "
                            "tensors as external data")
    onnx.save(model, path)

