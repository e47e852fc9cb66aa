"""A model's structure apart from its large tensors, which stay arrays: what a run hands to
onnxruntime without copying the weights again.

Handing onnxruntime a model held in memory serializes it whole, and cutting it into pieces
copies every tensor into the piece that reads it; for a model of hundreds of megabytes
(YOLOv3: 248 MB) each such copy costs about as much as onnxruntime's own load of the file,
and a run made of several of them takes twice or three times onnxruntime's time. Here a
model is split once into

- its *structure*: the same model, in which each large initializer of the main graph is a
  stand-in (name, element type and dimensions kept; data stored externally, at
  :data:`STAND_IN`), so that shape inference, cutting and serializing it cost little;
- its *tensors*: the stand-ins' values as numpy arrays, which onnxruntime takes as they are
  (``SessionOptions.add_external_initializers``: they stay initializers, constant as before).

:func:`map_file` reads a ``.onnx`` file so without reading its tensors at all: it walks the
protobuf encoding of the file mapped into memory, copying all but the large ``raw_data``
fields of the main graph's initializers, whose arrays are views of the mapped file. A file it
cannot read so (tensors already stored outside it, an encoding it does not expect, a
big-endian machine) gives None, and the caller loads it the ordinary way; :func:`detach`
splits a model already loaded (copying each large tensor out once). :func:`attach` puts the
values back, for a runtime that takes only whole models.
"""

from __future__ import annotations

import math
import mmap
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from ._probe import reads

__all__ = ["DETACHED_BYTES", "STAND_IN", "Detached", "attach", "detach", "given_stand_ins",
           "map_file", "stand_ins"]

# Where a stand-in says its data is: no file (onnx's and onnxruntime's readers of external
# data never open it: the values come with the structure).
STAND_IN = "*/onnx-upsample: in memory/*"
# Initializers from this size on are detached; smaller ones (scales, shapes, constants that
# inference reads) stay in the structure, where every tool sees their values.
DETACHED_BYTES = 1 << 12

# Element types whose raw_data is numpy's little-endian layout of the same dtype.
_PLAIN_TYPES = frozenset({
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT8,
    TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
    TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64, TensorProto.BOOL})

# Field numbers of onnx.proto3 (ModelProto.graph, GraphProto.initializer, TensorProto's).
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_RAW_DATA = 7, 5, 9
# TensorProto fields that hold data other than raw_data, or say where data is stored
# (segment, typed data, external_data, data_location): such a tensor is kept as it is.
_TENSOR_OTHER_DATA = frozenset({3, 4, 5, 6, 7, 10, 11, 13, 14})
_LENGTH_DELIMITED = 2


class Detached(NamedTuple):
    """A model's structure and its detached tensors.

    Attributes
    ----------
    model : onnx.ModelProto
        The structure: each detached initializer a stand-in (:data:`STAND_IN`).
    tensors : dict of str to numpy.ndarray
        The stand-ins' values, by initializer name (read-only where they view a file).
    """

    model: onnx.ModelProto
    tensors: dict[str, np.ndarray]


def _stand_in(tensor: TensorProto) -> None:
    """Make ``tensor`` (no data of its own left) a stand-in."""
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", STAND_IN


def stand_ins(model: onnx.ModelProto) -> list[str]:
    """The names of ``model``'s main-graph initializers that are stand-ins."""
    return [tensor.name for tensor in model.graph.initializer
            if tensor.data_location == TensorProto.EXTERNAL
            and any(entry.key == "location" and entry.value == STAND_IN
                    for entry in tensor.external_data)]


def given_stand_ins(model: onnx.ModelProto, tensors: Mapping[str, np.ndarray]) -> list[str]:
    """The stand-ins of ``model`` whose values a runtime is to be given from ``tensors``:
    those a node reads, or the graph lists as an input or output. onnxruntime drops an
    initializer that nothing reads before it takes the values given for it, and then
    refuses them as values of no initializer."""
    read = {name for node in model.graph.node for name in reads(node)}
    read |= {value.name for value in [*model.graph.input, *model.graph.output]}
    return [name for name in stand_ins(model) if name in tensors and name in read]


def _dtype(tensor: TensorProto) -> np.dtype | None:
    if tensor.data_type not in _PLAIN_TYPES:
        return None
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).newbyteorder("<")


def _copy_fields(source: Any, target: Any, skip: str) -> None:
    """Every field of ``source`` set in ``target`` but ``skip`` (a copy without the one
    field's cost)."""
    for field, value in source.ListFields():
        if field.name == skip:
            continue
        if isinstance(value, str | bytes | int | float):
            setattr(target, field.name, value)
        elif hasattr(value, "ListFields"):
            getattr(target, field.name).CopyFrom(value)
        else:  # a repeated field
            getattr(target, field.name).extend(value)


def detach(model: onnx.ModelProto) -> Detached:
    """``model`` split into its structure and the arrays of its large main-graph
    initializers (each copied out once); ``model`` is not modified."""
    structure = onnx.ModelProto()
    tensors: dict[str, np.ndarray] = {}
    large = {index for index, tensor in enumerate(model.graph.initializer)
             if len(tensor.raw_data) >= DETACHED_BYTES and _dtype(tensor) is not None
             and tensor.data_location != TensorProto.EXTERNAL}
    _copy_fields(model, structure, "graph")
    graph = structure.graph
    _copy_fields(model.graph, graph, "initializer")
    for index, tensor in enumerate(model.graph.initializer):
        if index not in large:
            graph.initializer.add().CopyFrom(tensor)
            continue
        stand_in = graph.initializer.add(name=tensor.name, data_type=tensor.data_type,
                                         dims=list(tensor.dims), doc_string=tensor.doc_string)
        _stand_in(stand_in)
        tensors[tensor.name] = numpy_helper.to_array(tensor)
    return Detached(structure, tensors)


def attach(model: onnx.ModelProto, tensors: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """``model`` itself where it has no stand-ins, else a copy with their values in place."""
    names = set(stand_ins(model))
    if not names:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for index, tensor in enumerate(copy.graph.initializer):
        if tensor.name in names:
            copy.graph.initializer[index].CopyFrom(
                numpy_helper.from_array(np.asarray(tensors[tensor.name]), tensor.name))
    return copy


# --------------------------------------------------------------------------- map_file


class _UnexpectedError(Exception):
    """The encoding is not what this reader walks (the caller loads the file as usual)."""


def _varint(data: memoryview, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise _UnexpectedError
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(data: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Each field between ``start`` and ``end``: its number, wire type, where its key
    starts, where its value starts (after a length) and where it ends."""
    position = start
    while position < end:
        head = position
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, position = _varint(data, position)
            body = head
        elif wire == 1:
            body, position = position, position + 8
        elif wire == _LENGTH_DELIMITED:
            length, body = _varint(data, position)
            position = body + length
        elif wire == 5:
            body, position = position, position + 4
        else:  # groups: no onnx message has them
            raise _UnexpectedError
        if position > end or number == 0:
            raise _UnexpectedError
        yield number, wire, head, body, position


def _delimited(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LENGTH_DELIMITED) + _encode_varint(len(payload)) + payload


def _initializer(data: memoryview, start: int,
                 end: int) -> tuple[bytes, tuple[int, int]] | None:
    """A TensorProto's encoding without its raw_data, and where that lies, for a plain
    tensor with a large raw_data; None for any other tensor (kept as it is)."""
    kept: list[bytes] = []
    found = None
    for number, wire, head, body, stop in _fields(data, start, end):
        if number in _TENSOR_OTHER_DATA:
            return None
        if number == _TENSOR_RAW_DATA and wire == _LENGTH_DELIMITED:
            found = (body, stop - body)
        else:
            kept.append(bytes(data[head:stop]))
    if found is None or found[1] < DETACHED_BYTES:
        return None
    return b"".join(kept), found


def _walk(data: memoryview) -> tuple[bytes, dict[int, tuple[bytes, tuple[int, int]]]]:
    """The model's encoding with the large raw_data of its main graph's initializers left
    out, and, by initializer index, each one's tensor header and where its data lies."""
    model: list[bytes] = []
    detached: dict[int, tuple[bytes, tuple[int, int]]] = {}
    graphs = 0
    for number, wire, head, body, stop in _fields(data, 0, len(data)):
        if number != _MODEL_GRAPH or wire != _LENGTH_DELIMITED:
            model.append(bytes(data[head:stop]))
            continue
        graphs += 1
        graph: list[bytes] = []
        index = 0
        for inner, inner_wire, inner_head, inner_body, inner_stop in _fields(data, body, stop):
            split = None
            if inner == _GRAPH_INITIALIZER and inner_wire == _LENGTH_DELIMITED:
                split = _initializer(data, inner_body, inner_stop)
                index += 1
            if split is None:
                graph.append(bytes(data[inner_head:inner_stop]))
            else:
                detached[index - 1] = split
                graph.append(_delimited(inner, split[0]))
        model.append(_delimited(number, b"".join(graph)))
    if graphs != 1:  # protobuf merges repeated messages: not what this reader rebuilds
        raise _UnexpectedError
    return b"".join(model), detached


def map_file(path: str) -> Detached | None:
    """The model in the ``.onnx`` file at ``path`` as its structure and, for each large
    main-graph initializer stored in it, an array viewing the file mapped into memory;
    None where the file is not read so (see the module docstring).

    The file is mapped read-only; the arrays keep the mapping open as long as they live.
    """
    if sys.byteorder != "little" or os.path.getsize(path) == 0:
        return None
    with open(path, "rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    data = memoryview(mapped)
    try:
        encoded, detached = _walk(data)
    except _UnexpectedError:
        data.release()
        return None
    try:
        structure = onnx.ModelProto.FromString(encoded)
    except Exception:  # a DecodeError: the ordinary load words it
        data.release()
        return None
    if any(tensor.data_location == TensorProto.EXTERNAL for tensor in
           onnx.external_data_helper._get_all_tensors(structure)):
        data.release()
        return None  # the ordinary load checks and reads tensors stored beside the file
    tensors: dict[str, np.ndarray] = {}
    for index, (_, (offset, length)) in detached.items():
        tensor = structure.graph.initializer[index]
        dtype = _dtype(tensor)
        count = math.prod(tensor.dims)
        if dtype is None or count * dtype.itemsize != length:
            data.release()
            return None  # a tensor onnxruntime reads otherwise (or refuses): read as usual
        tensors[tensor.name] = np.frombuffer(mapped, dtype, count, offset).reshape(
            tuple(tensor.dims))
        _stand_in(tensor)
    data.release()
    return Detached(structure, tensors)
