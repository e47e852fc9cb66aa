"""The inputs a model runs on: the arrays given, random ones for the rest, and their checks.

Used by :func:`~onnx_upsample.onnx.verify.verify_upgrade`,
:func:`onnx_upsample.conformance.diff` and the commands ``upgrade --verify``, ``diff`` and
``run``: each takes arrays for named graph inputs (``inputs=``; ``--input``), shapes for
those made up at random (``input_shapes=``; ``--input-shape``) and a seed (``seed=``;
``--seed``), all checked before anything converts or starts (:func:`check_seed`,
:func:`check_input_shapes`, :func:`check_given`). Each refusal is an
:class:`~onnx_upsample.UpsampleError` of one line worded for both callers (a
``SpelledError``, made by ``_spec.spelling.spelled``): the Python API's names its
arguments, the command line's its options. A wrong kind (a seed that is no int, a shape that
is no sequence of ints) is a :class:`TypeError`, which only a Python caller can make.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import ValueInfoProto, helper

from .._errors import SpelledError, UpsampleError
from .._resources import check_bytes_fit, memory_limit
from .._spec.rules import MAX_DIM
from .._spec.spelling import PYTHON, Spelling, spelled
from .._spec.versions import DEFAULT_DOMAINS, resize_scales_input
from ._graphs import default_opset, element_name, is_upsample
from ._infer import ort_shapes

__all__ = [
    "FREE_DIMENSION",
    "check_feeds",
    "check_given",
    "check_input_shapes",
    "check_seed",
    "check_tensor_sizes",
    "checked_inputs",
    "declaration",
    "graph_inputs",
    "random_feeds",
    "random_value",
    "scales_inputs",
]

def _give(name: str, spelling: Spelling) -> str:
    """How to give input ``name`` an array: ``--input S=FILE.npy``, ``inputs={'S': array}``."""
    if spelling.options:
        return f"{spelling.argument('inputs')} {name}=FILE.npy"
    return f"inputs={{{name!r}: array}}"


def _shape_given(name: str, dims: Sequence[int], spelling: Spelling) -> str:
    """A shape asked for: ``--input-shape x=1,3,4``, ``input_shapes['x'] is [1, 3, 4]``."""
    if spelling.options:
        return f"{spelling.argument('input_shapes')} {name}={','.join(str(d) for d in dims)}"
    return f"input_shapes[{name!r}] is {list(dims)}"


def _shape_error(name: str, dims: Sequence[int], words: str) -> SpelledError:
    """A shape asked for, refused: ``input_shapes['x'] is [1, -3]`` and ``words``."""
    return spelled(lambda s: f"{_shape_given(name, dims, s)}{words}")


def _names_error(argument: str, words: str) -> SpelledError:
    """``{argument} words``, the argument named for the caller."""
    return spelled(lambda s: f"{s.argument(argument)} {words}")


def check_seed(seed: object) -> int:
    """``seed`` as the int numpy's generator takes.

    Raises
    ------
    TypeError
        If it is not an int (a bool is not one).
    UpsampleError
        If it is negative.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed is {seed!r}; expected an int >= 0")
    if seed < 0:
        raise spelled(lambda s: f"{s.argument('seed')} is {seed}; expected a whole number 0 "
                      "or above (numpy's random generators take no negative seed): use "
                      f"{s.assign('seed', 0)} or another")
    return int(seed)


def check_input_shapes(shapes: object) -> dict[str, list[int]]:
    """``shapes`` (``input_shapes=``: input name to shape) as lists of ints, each size from
    0 to the largest ONNX dimension; the model's inputs are :func:`check_given`'s.

    Raises
    ------
    TypeError
        If it is not a mapping of names to sequences of ints.
    UpsampleError
        If a size is negative or beyond int64.
    """
    if shapes is None:
        return {}
    if not isinstance(shapes, Mapping):
        raise TypeError(f"input_shapes is a {type(shapes).__name__}; expected a mapping of "
                        "input name to shape, such as {'x': [1, 3, 32, 32]}")
    checked: dict[str, list[int]] = {}
    for name, dims in shapes.items():
        if not isinstance(name, str):
            raise TypeError(f"input_shapes has the key {name!r}; expected input names (str)")
        if not isinstance(dims, list | tuple | np.ndarray) or any(
                isinstance(d, bool) or not isinstance(d, numbers.Integral) for d in dims):
            raise TypeError(f"input_shapes[{name!r}] is {dims!r}; expected a sequence of ints, "
                            "such as [1, 3, 32, 32]")
        sizes = [int(d) for d in dims]
        if any(d < 0 or d > MAX_DIM for d in sizes):
            raise _shape_error(name, sizes, "; expected sizes from 0 to 2**63 - 1 (ONNX "
                               "dimensions are int64)")
        checked[name] = sizes
    return checked


def check_given(inputs: Sequence[ValueInfoProto], given: Mapping[str, np.ndarray],
                shapes: Mapping[str, Sequence[int]]) -> None:
    """Arrays given (``given``) and shapes asked for (``shapes``) against the declared
    ``inputs``, before anything runs: names that are no input, an input given both ways,
    a shape of another rank or static size than declared, an array of another type or shape.
    """
    names = {value.name for value in inputs}
    listing = "; ".join(declaration(value) for value in inputs)
    for argument, named in (("inputs", given), ("input_shapes", shapes)):
        unknown = sorted(set(named) - names)
        if unknown:
            verb = "gives arrays for" if argument == "inputs" else "names"
            raise _names_error(argument, f"{verb} {unknown}, which are not inputs of the "
                               f"model (its inputs: {listing})")
    both = sorted(set(shapes) & set(given))
    if both:
        raise spelled(lambda s: (
            f"input(s) {both} are given both as arrays ({s.argument('inputs')}) and as shapes "
            f"({s.argument('input_shapes')}); give each one way"))
    for value in inputs:
        if value.name in given:
            _check_array(value, given[value.name])
        if value.name in shapes:
            dims = _declared_sizes(value)
            asked = shapes[value.name]
            if dims is not None and (len(dims) != len(asked) or any(
                    d is not None and d != n for d, n in zip(dims, asked, strict=False))):
                rank = f" (rank {len(asked)})" if len(asked) != len(dims) else ""
                raise _shape_error(value.name, asked, f"{rank}; the model declares "
                                   f"{declaration(value)}")


def checked_inputs(inputs: Sequence[ValueInfoProto], given: object, shapes: object,
                   seed: object) -> tuple[dict[str, np.ndarray], dict[str, list[int]], int]:
    """A run's ``inputs=``, ``input_shapes=`` and ``seed=`` checked against the declared
    ``inputs``, before anything converts or starts: the arrays, the shapes and the seed.

    Raises
    ------
    TypeError
        For arguments of the wrong kind.
    UpsampleError
        As :func:`check_seed`, :func:`check_input_shapes` and :func:`check_given`.
    """
    number = check_seed(seed)
    sizes = check_input_shapes(shapes)
    if given is not None and not isinstance(given, Mapping):
        raise TypeError(f"inputs is a {type(given).__name__}; expected a mapping of input "
                        "name to numpy array")
    arrays = {name: np.asarray(value) for name, value in (given or {}).items()}
    check_given(inputs, arrays, sizes)
    return arrays, sizes, number


def _declared_sizes(value: ValueInfoProto) -> list[int | None] | None:
    """The declared sizes (None for a symbolic one), or None where no shape is declared."""
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]


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
    resize_scales = resize_scales_input(default_opset(model.opset_import))
    found = {}
    for node in model.graph.node:
        if is_upsample(node) and len(node.input) > 1:
            found[node.input[1]] = 0
        elif (node.op_type == "Resize" and node.domain in DEFAULT_DOMAINS
              and len(node.input) > resize_scales and node.input[resize_scales]):
            found[node.input[resize_scales]] = 0
    return found


def _type_name(elem_type: int) -> str:
    """An element type as messages name it: numpy's name (``float32``), or ONNX's where numpy
    holds the type as Python objects (``string``)."""
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        dtype = None
    if dtype is not None and dtype.kind != "O":
        return dtype.name
    return element_name(elem_type)


def declaration(value: ValueInfoProto) -> str:
    """``X float32[1, 3, 'N', 8]``: a graph input as the model declares it."""
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type"):
        return f"{value.name} (not a tensor)"
    name = _type_name(tensor.elem_type)
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
        raise spelled(lambda s: f"input {value.name!r} is not a tensor with a known element "
                      f"type; give it with {_give(value.name, s)}")
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
    raise spelled(lambda s: f"input {value.name!r} is a {_type_name(tensor.elem_type)} "
                  f"tensor, which is not made up at random; give it with {_give(value.name, s)}")


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
    rng = np.random.default_rng(check_seed(seed))
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
    check_given(inputs, feeds, {})
    missing = [value.name for value in inputs if value.name not in feeds]
    if missing:
        listing = "; ".join(declaration(value) for value in inputs)
        raise spelled(lambda s: (
            f"the model needs input(s) {missing}; give each with "
            + (f"{s.argument('inputs')} NAME=FILE.npy, or pass --random" if s.options
               else "inputs={NAME: array}")
            + f" (its inputs: {listing})"))


def _check_array(value: ValueInfoProto, array: np.ndarray) -> None:
    """An array given for graph input ``value``: its element type and shape as declared."""
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type"):
        return
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    except (KeyError, TypeError, ValueError):
        return
    given = f"{array.dtype.name}{list(array.shape)}"
    # byte order is not the type: a big-endian .npy runs as its native-order twin
    if array.dtype.newbyteorder("=") != dtype and not (
            dtype.kind == "O" and array.dtype.kind in "OUS"):
        raise UpsampleError(f"input {value.name!r} is {given}; the model declares "
                            f"{declaration(value)} (convert the array with astype)")
    dims = _declared_sizes(value)
    if dims is not None and (len(dims) != array.ndim or any(
            d is not None and d != n for d, n in zip(dims, array.shape, strict=False))):
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
        typed = ort_shapes(sized)
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
        refusal = _size_refusal(value.name, dims, itemsize)
        if refusal(PYTHON):
            raise spelled(refusal)


def _size_refusal(name: str, dims: list[int], itemsize: int) -> Callable[[Spelling], str]:
    """Why tensor ``name`` cannot fit in memory, worded for a caller ("" where it fits)."""
    def words(spelling: Spelling) -> str:
        smaller = (f"give smaller inputs with {spelling.argument('inputs')} or "
                   f"{spelling.argument('input_shapes')}" if spelling.options else
                   "give smaller arrays in inputs= or shapes in input_shapes=")
        try:
            check_bytes_fit(math.prod(dims) * itemsize, f"running the model needs tensor "
                            f"{name!r} of shape {tuple(dims)}, which takes", smaller)
        except UpsampleError as error:
            return str(error)
        return ""
    return words
