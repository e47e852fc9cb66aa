"""The inputs a model runs on: the arrays given, random ones for the rest, and their checks.

Used by the command line's ``run`` and by :mod:`onnx_upsample.onnx.verify` (``upgrade
--verify``): both take arrays for named graph inputs and make up the others. The messages
name the options those inputs come from (``--input``, ``--random``), since the command line
is where they are given; each is an :class:`~onnx_upsample.UpsampleError` of one line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import ValueInfoProto, helper

from .._errors import UpsampleError
from .._resources import check_bytes_fit, memory_limit
from .._spec.versions import DEFAULT_DOMAINS
from ._graphs import default_opset, is_upsample
from ._infer import infer_shapes

__all__ = [
    "FREE_DIMENSION",
    "check_feeds",
    "check_tensor_sizes",
    "declaration",
    "graph_inputs",
    "random_feeds",
    "random_value",
    "scales_inputs",
]

# Size given to symbolic dimensions of graph inputs made up at random.
FREE_DIMENSION = 8


def graph_inputs(model: onnx.ModelProto) -> list[ValueInfoProto]:
    """The main graph's inputs that are not initializers: those a run must be given."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def scales_inputs(model: onnx.ModelProto) -> dict[str, int]:
    """The names of the main graph's Upsample and Resize scales inputs (each mapped to 0,
    the rank assumed where the input declares no shape); they get scales >= 1, not random
    numbers."""
    # Resize-10 takes (X, scales), later versions (X, roi, scales, sizes)
    resize_scales = 1 if default_opset(model.opset_import) == 10 else 2
    found = {}
    for node in model.graph.node:
        if is_upsample(node) and len(node.input) > 1:
            found[node.input[1]] = 0
        elif (node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS
              and len(node.input) > resize_scales and node.input[resize_scales]):
            found[node.input[resize_scales]] = 0
    return found


def declaration(value: ValueInfoProto) -> str:
    """``X float32[1, 3, 'N', 8]``: a graph input as the model declares it."""
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type"):
        return f"{value.name} (not a tensor)"
    try:
        name = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)).name
    except (KeyError, TypeError, ValueError):
        name = f"elem_type {tensor.elem_type}"
    if not tensor.HasField("shape"):
        return f"{value.name} {name}[any shape]"
    dims = [str(d.dim_value) if d.HasField("dim_value") else repr(d.dim_param or "?")
            for d in tensor.shape.dim]
    return f"{value.name} {name}[{', '.join(dims)}]"


def random_value(value: ValueInfoProto, rng: np.random.Generator,
                 scales: Mapping[str, int], shape: Sequence[int] | None = None) -> np.ndarray:
    """A value for graph input ``value``, of its declared type and shape (or ``shape``).

    ``shape`` replaces the declared one (a verification chooses the sizes of symbolic
    dimensions); else symbolic dimensions become :data:`FREE_DIMENSION`. An Upsample or
    Resize scales input (named in ``scales``, see :func:`scales_inputs`) gets ``[1, ..., 1,
    1.5, 2.5]``: random numbers would be scales below 1, which Upsample refuses. Floats are
    standard normal, integers from 0 to 99, booleans fair coins.

    Raises
    ------
    UpsampleError
        If the input is not a tensor of a known element type, or of a type with no random
        values here (strings, complex numbers): it must be given.
    """
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor.elem_type:
        raise UpsampleError(f"input {value.name!r} is not a tensor with a known element type; "
                            "give it with --input NAME=FILE.npy")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    dims = list(shape) if shape is not None else [
        d.dim_value if d.HasField("dim_value") else FREE_DIMENSION for d in tensor.shape.dim]
    if value.name in scales:
        rank = dims[0] if dims else scales[value.name]
        pattern = [1.0] * max(rank - 2, 0) + [1.5, 2.5][: min(rank, 2)]
        return np.array(pattern, dtype=dtype).reshape(dims)
    # np.asarray: a rank-0 input must be a 0-d array, not a numpy scalar
    if dtype.kind == "f":
        return np.asarray(rng.standard_normal(dims), dtype=dtype)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0, 100, dims), dtype=dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(dims) < 0.5)
    raise UpsampleError(f"input {value.name!r} has element type {dtype}; give it with --input "
                        "NAME=FILE.npy")


def random_feeds(inputs: Iterable[ValueInfoProto], given: Mapping[str, np.ndarray],
                 scales: Mapping[str, int], seed: int,
                 shapes: Mapping[str, Sequence[int]] | None = None) -> dict[str, np.ndarray]:
    """A value for each of ``inputs``: ``given``'s, else :func:`random_value`'s (of the
    shape in ``shapes`` where it names the input).

    The random values come from one generator seeded with ``seed``, drawn in the order of
    ``inputs``: the same seed gives the same values. Names in ``given`` that are not among
    ``inputs`` are left out (the callers report them).

    Raises
    ------
    UpsampleError
        If an input without a given value cannot be made up.
    """
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in inputs:
        feeds[value.name] = given[value.name] if value.name in given else random_value(
            value, rng, scales, (shapes or {}).get(value.name))
    return feeds


def check_feeds(inputs: Iterable[ValueInfoProto], feeds: Mapping[str, np.ndarray]) -> None:
    """Input names, element types and shapes of ``feeds`` against the declarations.

    Raises
    ------
    UpsampleError
        Naming the first problem (a name that is no input, a missing input, another element
        type or shape than declared), with every declared input listed where it helps.
    """
    inputs = list(inputs)
    listing = "; ".join(declaration(value) for value in inputs)
    expected = [value.name for value in inputs]
    unknown = sorted(set(feeds) - set(expected))
    if unknown:
        raise UpsampleError(f"--input names {unknown}, which are not inputs of the model "
                            f"(its inputs: {listing})")
    missing = [name for name in expected if name not in feeds]
    if missing:
        raise UpsampleError(f"the model needs input(s) {missing}; give each with --input "
                            f"NAME=FILE.npy, or pass --random (its inputs: {listing})")
    for value in inputs:
        array, tensor = feeds[value.name], value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            continue
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        except (KeyError, TypeError, ValueError):
            continue
        given = f"{array.dtype.name}{list(array.shape)}"
        # byte order is not the type: a big-endian .npy runs as its native-order twin
        if array.dtype.newbyteorder("=") != dtype and not (
                dtype.kind == "O" and array.dtype.kind in "OUS"):
            raise UpsampleError(f"input {value.name!r} is {given}; the model declares "
                                f"{declaration(value)} (convert the .npy with astype)")
        if tensor.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
            if len(dims) != array.ndim or any(
                    d is not None and d != n for d, n in zip(dims, array.shape, strict=False)):
                raise UpsampleError(f"input {value.name!r} is {given}; the model declares "
                                    f"{declaration(value)}")


def check_tensor_sizes(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> None:
    """Refuse, before onnxruntime allocates it, a model whose largest tensor for these
    inputs cannot fit in the memory this process may use (shapes as ORT makes them).

    Raises
    ------
    UpsampleError
        Naming the tensor, its shape and size, and the limit.
    """
    if memory_limit()[0] is None:
        return
    sized = onnx.ModelProto()
    sized.CopyFrom(model)
    for value in sized.graph.input:
        if value.name in feeds and value.type.HasField("tensor_type"):
            shape = value.type.tensor_type.shape
            shape.ClearField("dim")
            for n in feeds[value.name].shape:
                shape.dim.add().dim_value = n
    try:
        typed = infer_shapes(sized)
    except Exception:  # shapes unknown: ORT will report what it cannot do
        return
    for value in [*typed.graph.value_info, *typed.graph.output]:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape") or not all(
            d.HasField("dim_value") for d in tensor.shape.dim
        ):
            continue
        dims = [int(d.dim_value) for d in tensor.shape.dim]
        try:
            itemsize = helper.tensor_dtype_to_np_dtype(tensor.elem_type).itemsize
        except (KeyError, TypeError, ValueError):
            continue
        check_bytes_fit(math.prod(dims) * itemsize,
                        f"running the model needs tensor {value.name!r} of shape "
                        f"{tuple(dims)}, which takes", "give smaller inputs with --input")
