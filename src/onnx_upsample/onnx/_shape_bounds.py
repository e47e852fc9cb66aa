"""What every value of a graph is, for every input size, as far as its input shapes tell:
which side of 1 a computed scale lies on.

:class:`ShapeBounds` walks one graph (or function) in order: each graph input's dimensions
that are not constants become symbols (``_bounds``), each node's output sizes follow from its
inputs' (``_dims``), and the elements of small integer tensors computed from shapes
(``Shape``, ``Gather``, ``Slice``, ``Concat``, ``Unsqueeze``, ``Cast``, ``Add``, ``Sub``,
``Mul``, ``Div``, ``Max``, ``Min``) are followed too, into the floats a scale is made of.
:func:`scale_sides` then says, per element of a scales tensor, whether it is >= 1 or <= 1 for
every input size. What no rule covers is unknown, never guessed.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TypeProto

from .._spec.versions import DEFAULT_DOMAINS, RESIZE_ROI_OPSET
from ._bounds import (
    FLOAT_TYPES,
    ONE,
    UNKNOWN,
    Bound,
    Elem,
    Known,
    Lin,
    Side,
    arithmetic,
    broadcast_values,
    converted,
    side_of,
    sliced,
)
from ._dims import (
    BROADCAST,
    GLOBAL_POOLS,
    POOLS,
    SAME_SHAPE,
    Dims,
    broadcast_dims,
    concat_dims,
    conv_dims,
    conv_transpose_dims,
    int_attribute,
    ints_attribute,
    pad_dims,
    pool_dims,
    resized_dims,
    squeeze_dims,
)
from ._graphs import Site

__all__ = ["ShapeBounds", "scale_sides"]

_SMALL = 64  # the most elements a tensor's values are followed for (shape arithmetic)
_VALUE_OPS = frozenset({"Cast", "CastLike", "Identity", "Floor", "Ceil", "Add", "Sub", "Mul",
                        "Div", "Max", "Min", "Gather", "Unsqueeze", "Squeeze", "Concat",
                        "Slice"})


class ShapeBounds:
    """What is known of every value of one site (graph or function), from its input shapes.

    Parameters
    ----------
    site : Site
        The graph or function.
    types : dict of str to onnx.TypeProto
        Inferred types (``_infer.site_type_maps``): static dimensions where the rules here
        know none, and element types.
    """

    def __init__(self, site: Site, types: dict[str, TypeProto]) -> None:
        self.site, self.types = site, types
        self.known: dict[str, Known] = {}
        owner = site.owner
        # the model's own inputs: their dimensions that are not constants are symbols;
        # a subgraph's or function's inputs take sizes from the caller: static ones only
        if site.path == "" and site.function is None and isinstance(owner, onnx.GraphProto):
            initializers = {tensor.name for tensor in owner.initializer}
            for value in owner.input:
                if value.name not in initializers:
                    self.known[value.name] = _symbolic(value.name, value.type)
        for node in owner.node:
            if node.domain not in DEFAULT_DOMAINS:
                continue
            try:
                outputs = self._node(node)
            except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                    OverflowError):
                outputs = []  # a malformed node: what it computes is not known
            for name, known in zip(node.output, outputs, strict=False):
                if name:
                    self.known[name] = known

    # ------------------------------------------------------------------------ lookups

    def get(self, name: str) -> Known:
        """What is known of the value ``name`` (a constant's shape and small values, else
        the static dimensions of its inferred type)."""
        if not name:
            return UNKNOWN
        if name not in self.known:
            constant = self.site.scope.constant(name)
            self.known[name] = (_of_array(np.asarray(constant)) if constant is not None
                                else Known(_static_dims(self.types.get(name))))
        return self.known[name]

    def dims(self, name: str) -> Dims:
        """The sizes of ``name``, with the static ones of its inferred type where the rules
        give none."""
        known = self.get(name).dims
        static = _static_dims(self.types.get(name))
        if known is None or static is None or len(static) != len(known):
            return known if known is not None else static
        return tuple(d if d is not None else s for d, s in zip(known, static, strict=True))

    def values(self, name: str) -> tuple[Elem, ...] | None:
        return self.get(name).values

    def constant_ints(self, name: str) -> list[int] | None:
        """The elements of ``name`` where each is a known integer."""
        values = self.values(name)
        if values is None:
            return None
        result = [value.value() if isinstance(value, Bound) else None for value in values]
        return None if any(v is None for v in result) else [int(v) for v in result if v is not None]

    def _input_ints(self, node: onnx.NodeProto, position: int) -> list[int] | None:
        if len(node.input) <= position or not node.input[position]:
            return None
        return self.constant_ints(node.input[position])

    def _constant_floats(self, name: str) -> list[float] | None:
        constant = self.site.scope.constant(name) if name else None
        if constant is None or np.asarray(constant).dtype.kind not in "fiu":
            return None
        return [float(v) for v in np.asarray(constant).reshape(-1)]

    # ------------------------------------------------------------------------ sizes

    def _node(self, node: onnx.NodeProto) -> list[Known]:
        op, inputs = node.op_type, list(node.input)
        if op == "Shape" or op in _VALUE_OPS:
            known = self._value_node(node)
            if known is not None:
                return [known]
        if op in SAME_SHAPE:
            return [Known(self.dims(inputs[0]))] if inputs else []
        if op in BROADCAST:
            return [Known(broadcast_dims([self.dims(n) for n in inputs if n]))]
        if op in ("Conv", "ConvInteger"):
            return [Known(conv_dims(node, self.dims(inputs[0]), self.dims(inputs[1])))]
        if op == "ConvTranspose":
            return [Known(conv_transpose_dims(node, self.dims(inputs[0]),
                                              self.dims(inputs[1])))]
        if op in POOLS:
            pooled = pool_dims(node, self.dims(inputs[0]))
            return [Known(pooled), Known(pooled)]
        if op in GLOBAL_POOLS:
            x = self.dims(inputs[0])
            return [Known(None if x is None else (*x[:2], *[ONE] * (len(x) - 2)))]
        if op == "Concat":
            return [Known(concat_dims(node, [self.dims(n) for n in inputs]))]
        if op in ("Upsample", "Resize"):
            return [Known(self._resized(node))]
        if op == "Transpose":
            x = self.dims(inputs[0])
            if x is None:
                return []
            perm = ints_attribute(node, "perm") or list(reversed(range(len(x))))
            return [Known(tuple(x[p] for p in perm))]
        if op == "Pad":
            pads = (ints_attribute(node, "pads") if (self.site.opset or 0) < 11
                    else self._input_ints(node, 1))
            axes_given = len(node.input) > 3 and bool(node.input[3])
            return [Known(None if axes_given else pad_dims(self.dims(inputs[0]), pads))]
        if op == "Slice":
            return [Known(self._sliced_dims(node))]
        if op in ("Unsqueeze", "Squeeze"):
            return [Known(squeeze_dims(op, self.dims(inputs[0]), self._squeeze_axes(node)))]
        return []

    def _resized(self, node: onnx.NodeProto) -> Dims:
        """Upsample or Resize with constant scales (or sizes)."""
        x = self.dims(node.input[0]) if node.input else None
        if x is None:
            return None
        scales = next(([float(v) for v in a.floats] for a in node.attribute
                       if a.name == "scales" and a.type == AttributeProto.FLOATS), None)
        if node.op_type == "Upsample" or (self.site.opset or 0) < RESIZE_ROI_OPSET:
            if scales is None and len(node.input) > 1:
                scales = self._constant_floats(node.input[1])
            return resized_dims(x, scales)
        if ints_attribute(node, "axes") is not None:
            return None
        if len(node.input) > 3 and node.input[3]:
            sizes = self._input_ints(node, 3)
            if sizes is None or len(sizes) != len(x):
                return None
            return tuple(Bound.exact(v) for v in sizes)
        return resized_dims(x, self._constant_floats(node.input[2])
                            if len(node.input) > 2 else None)

    def _slice_arguments(self, node: onnx.NodeProto, rank: int
                         ) -> list[tuple[int, int, int]] | None:
        """(axis, start, end) per sliced axis, for steps of 1 only."""
        if (self.site.opset or 0) < 10:
            starts, ends = ints_attribute(node, "starts"), ints_attribute(node, "ends")
            axes, steps = ints_attribute(node, "axes"), None
        else:
            starts, ends = self._input_ints(node, 1), self._input_ints(node, 2)
            axes, steps = self._input_ints(node, 3), self._input_ints(node, 4)
            if (len(node.input) > 3 and node.input[3] and axes is None) or (
                    len(node.input) > 4 and node.input[4] and steps is None):
                return None
        if starts is None or ends is None or len(starts) != len(ends):
            return None
        axes = list(range(len(starts))) if axes is None else axes
        if len(axes) != len(starts) or (steps is not None and any(s != 1 for s in steps)):
            return None
        if any(not -rank <= a < rank for a in axes):
            return None
        return [(a % rank, s, e) for a, s, e in zip(axes, starts, ends, strict=True)]

    def _sliced_dims(self, node: onnx.NodeProto) -> Dims:
        x = self.dims(node.input[0])
        arguments = None if x is None else self._slice_arguments(node, len(x))
        if x is None or arguments is None:
            return None
        result = list(x)
        for axis, start, end in arguments:
            result[axis] = sliced(x[axis], start, end)
        return tuple(result)

    def _squeeze_axes(self, node: onnx.NodeProto) -> list[int] | None:
        if (self.site.opset or 0) < 13:
            return ints_attribute(node, "axes")
        return self._input_ints(node, 1)

    # ------------------------------------------------------------------------ values

    def _value_node(self, node: onnx.NodeProto) -> Known | None:
        """The elements of a small tensor computed by ``node``, where the rules know them."""
        op, inputs = node.op_type, list(node.input)
        if op == "Shape":
            x = self.dims(inputs[0])
            start, end = int_attribute(node, "start", 0), int_attribute(node, "end", 2 ** 62)
            if x is None or start is None or end is None:
                return None
            part = list(x)[slice(start, end)]
            return Known((Bound.exact(len(part)),), tuple(part))
        shapes = [self.dims(name) for name in inputs if name]
        values = [self.values(name) for name in inputs if name]
        if op == "Concat":
            # an input whose elements are not known still has a known count of them
            parts = [v if v is not None else _unknowns(shape)
                     for v, shape in zip(values, shapes, strict=True)]
            if not parts or any(part is None for part in parts):
                return None
            joined = tuple(e for part in parts if part is not None for e in part)
            return Known((Bound.exact(len(joined)),), joined)
        if not values or values[0] is None:
            return None
        first = values[0]
        if op in ("Cast", "CastLike", "Identity", "Floor", "Ceil"):
            to = (int_attribute(node, "to", -1) if op == "Cast"
                  else _elem_type(self.types.get(inputs[-1])))
            return None if to is None else Known(
                shapes[0], tuple(converted(op, v, to) for v in first))
        if op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
            pairs = (broadcast_values(first, values[1])
                     if len(values) == 2 and values[1] is not None else None)
            if pairs is None:
                return None
            elem = _elem_type(self.types.get(inputs[0]))
            return Known(broadcast_dims(shapes), tuple(
                arithmetic(op, a, b, elem not in FLOAT_TYPES, elem == onnx.TensorProto.DOUBLE)
                for a, b in pairs))
        if op == "Gather":
            return self._gather(node, first, shapes)
        if op in ("Unsqueeze", "Squeeze"):
            dims = squeeze_dims(op, shapes[0], self._squeeze_axes(node))
            return None if dims is None else Known(dims, first)
        if op == "Slice" and shapes[0] is not None and len(shapes[0]) == 1:
            arguments = self._slice_arguments(node, 1)
            if arguments is None:
                return None
            picked: list[Elem] = list(first)
            for _, start, end in arguments:
                picked = picked[slice(start, end)]
            return Known((Bound.exact(len(picked)),), tuple(picked))
        return None

    def _gather(self, node: onnx.NodeProto, data: tuple[Elem, ...],
                shapes: list[Dims]) -> Known | None:
        if len(shapes) != 2 or shapes[0] is None or len(shapes[0]) != 1:
            return None
        indices, index_dims = self.constant_ints(node.input[1]), shapes[1]
        if int_attribute(node, "axis", 0) not in (0, -1) or indices is None or index_dims is None:
            return None
        size = len(data)
        if any(not -size <= i < size for i in indices):
            return None
        return Known(index_dims, tuple(data[i % size] for i in indices))


def _unknowns(dims: Dims) -> tuple[Elem, ...] | None:
    """As many unknown elements as a vector of ``dims`` holds (None where not known)."""
    length = dims[0].value() if dims is not None and len(dims) == 1 and dims[0] else None
    return None if length is None or length > _SMALL else (None,) * length


def _symbolic(name: str, value_type: TypeProto) -> Known:
    """A model input's sizes: its constants, and a symbol for each other dimension."""
    if not value_type.HasField("tensor_type") or not value_type.tensor_type.HasField("shape"):
        return UNKNOWN
    return Known(tuple(
        Bound.exact(int(dim.dim_value)) if dim.HasField("dim_value")
        else Bound.exact(Lin.symbol(f"{name}[{axis}]"))
        for axis, dim in enumerate(value_type.tensor_type.shape.dim)))


def _static_dims(value_type: TypeProto | None) -> Dims:
    if (value_type is None or not value_type.HasField("tensor_type")
            or not value_type.tensor_type.HasField("shape")):
        return None
    return tuple(Bound.exact(int(d.dim_value)) if d.HasField("dim_value") else None
                 for d in value_type.tensor_type.shape.dim)


def _elem_type(value_type: TypeProto | None) -> int:
    if value_type is None or not value_type.HasField("tensor_type"):
        return onnx.TensorProto.UNDEFINED
    return int(value_type.tensor_type.elem_type)


def _of_array(array: np.ndarray) -> Known:
    dims = tuple(Bound.exact(int(n)) for n in array.shape)
    if array.ndim > 1 or array.size > _SMALL:
        return Known(dims)
    flat = array.reshape(-1)
    if array.dtype.kind in "iub":
        return Known(dims, tuple(Bound.exact(int(v)) for v in flat))
    if array.dtype.kind == "f":
        return Known(dims, tuple(float(v) for v in flat))
    return Known(dims)


def scale_sides(bounds: ShapeBounds, name: str) -> list[Side] | None:
    """Per element of the scales ``name``: which side of 1 it lies on for every input size
    (None where not known); None where the elements are not followed at all."""
    values = bounds.values(name)
    return None if values is None else [side_of(value) for value in values]
