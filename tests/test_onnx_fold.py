"""``onnx_upsample.onnx.fold_scales``: computed scales become initializers, outputs unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import bits_equal, dims, make_model, ort_run, random_input, value_type

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample import UpsampleError  # noqa: E402
from onnx_upsample.onnx import check, fold_scales  # noqa: E402


def _const(name: str, values: list[float] | list[int], dtype: type) -> object:
    return helper.make_node("Constant", [], [name], name=f"{name}_constant",
                            value=numpy_helper.from_array(np.array(values, dtype=dtype)))


def _torch_size_export(x_shape: list[int | str], size: tuple[int, int],
                       mode: str = "nearest") -> object:
    """What torch's opset-9 exporter writes for ``interpolate(x, size=size)``."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"], name="shape"),
        _const("hw_index", [2, 3], np.int64),
        helper.make_node("Gather", ["shape", "hw_index"], ["hw"], axis=0, name="gather"),
        helper.make_node("Cast", ["hw"], ["hw_float"], to=TensorProto.FLOAT, name="cast"),
        _const("size", list(map(float, size)), np.float32),
        helper.make_node("Div", ["size", "hw_float"], ["ratio"], name="div"),
        _const("ones", [1.0, 1.0], np.float32),
        helper.make_node("Concat", ["ones", "ratio"], ["scales"], axis=0, name="concat"),
        helper.make_node("Upsample", ["X", "scales"], ["Y"], mode=mode, name="up"),
    ]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["a", "b", "c",
                                                                               "d"])])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(("shape", "size"), [((1, 3, 5, 7), (7, 10)), ((2, 1, 4, 4), (8, 8)),
                                             ((1, 2, 3, 9), (5, 20))])
def test_torch_size_export_folds_to_the_same_outputs(mode: str, shape: tuple[int, ...],
                                                      size: tuple[int, int]) -> None:
    model = _torch_size_export(list(shape), size, mode)
    folded = fold_scales(model)
    assert [n.name for n in folded.graph.node] == ["up"]
    (scales,) = folded.graph.initializer
    assert list(folded.graph.node[0].input) == ["X", scales.name]
    expected = np.array([1, 1], np.float32).tolist() + (
        np.array(size, np.float32) / np.array(shape[2:], np.float32)).tolist()
    assert numpy_helper.to_array(scales).tolist() == expected
    assert numpy_helper.to_array(scales).dtype == np.float32
    x = random_input(shape, np.float32)
    assert bits_equal(ort_run(folded, {"X": x})[0], ort_run(model, {"X": x})[0])
    assert not [f for f in check(folded) if f.code == "dynamic-scales"]
    assert [f for f in check(model) if f.code == "dynamic-scales"]


def test_symbolic_shapes_need_input_shapes() -> None:
    model = _torch_size_export(["N", 3, "H", "W"], (7, 10))
    unchanged = fold_scales(model)
    assert unchanged.SerializeToString() == model.SerializeToString()
    folded = fold_scales(model, input_shapes={"X": [1, 3, 5, 7]})
    assert [n.name for n in folded.graph.node] == ["up"]
    assert dims(folded.graph.input[0].type) == [1, 3, 5, 7]
    x = random_input((1, 3, 5, 7), np.float32)
    assert bits_equal(ort_run(folded, {"X": x})[0], ort_run(model, {"X": x})[0])


def test_shapes_of_upsample_outputs_are_onnxruntimes() -> None:
    # the second Upsample's scales come from the first one's output shape (5 x 1.4 = 7 in
    # onnxruntime, 6 for onnx's inference): folding must use 7
    nodes = [
        _const("s1", [1.0, 1.0, 1.4, 1.0], np.float32),
        helper.make_node("Upsample", ["X", "s1"], ["u"], name="up1"),
        helper.make_node("Shape", ["u"], ["shape"]),
        helper.make_node("Cast", ["shape"], ["shape_float"], to=TensorProto.FLOAT),
        _const("target", [1.0, 1.0, 14.0, 2.0], np.float32),
        helper.make_node("Div", ["target", "shape_float"], ["s2"]),
        helper.make_node("Upsample", ["u", "s2"], ["Y"], name="up2"),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                             [1, 1, 5, 2])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                                      ["a", "b", "c", "d"])])
    folded = fold_scales(model)
    assert [n.name for n in folded.graph.node] == ["s1_constant", "up1", "up2"]
    value = numpy_helper.to_array(folded.graph.initializer[0])
    assert value.tolist() == [1.0, 1.0, 2.0, 1.0]
    x = random_input((1, 1, 5, 2), np.float32)
    expected = ort_run(model, {"X": x}, optimization="disabled")[0]
    assert expected.shape == (1, 1, 14, 2)
    assert bits_equal(ort_run(folded, {"X": x})[0], expected)
    # With its graph optimizations on (the default), onnxruntime 1.32 folds Shape(u) into
    # onnx's inferred [1, 1, 6, 2] although u has 7 rows, and returns 16 rows
    assert ort_run(model, {"X": x})[0].shape == (1, 1, 16, 2)


def test_values_from_graph_inputs_are_not_folded() -> None:
    nodes = [helper.make_node("Mul", ["factor", "factor"], ["s"]),
             helper.make_node("Upsample", ["X", "s"], ["Y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2]),
                               helper.make_tensor_value_info("factor", TensorProto.FLOAT, [2])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["a", "b"])])
    assert fold_scales(model).SerializeToString() == model.SerializeToString()


def test_shared_subgraph_nodes_stay_when_still_used() -> None:
    model = _torch_size_export([1, 3, 4, 4], (8, 8))
    model.graph.output.append(helper.make_tensor_value_info("ratio", TensorProto.FLOAT, [2]))
    folded = fold_scales(model)
    names = [n.name for n in folded.graph.node]
    assert "div" in names and "concat" not in names and "up" in names
    x = random_input((1, 3, 4, 4), np.float32)
    for a, b in zip(ort_run(folded, {"X": x}), ort_run(model, {"X": x}), strict=True):
        assert bits_equal(a, b)


def test_errors_and_input_untouched() -> None:
    model = _torch_size_export(["N", 3, "H", "W"], (7, 10))
    before = model.SerializeToString()
    with pytest.raises(UpsampleError, match=r"input_shapes names \['Z'\], which are not inputs"):
        fold_scales(model, input_shapes={"Z": [1]})
    with pytest.raises(UpsampleError, match="rank 3"):
        fold_scales(model, input_shapes={"X": [1, 3, 5]})
    with pytest.raises(UpsampleError, match=r"expected sizes from 0"):
        fold_scales(model, input_shapes={"X": [1, 3, -5, 2]})
    with pytest.raises(TypeError, match="ModelProto"):
        fold_scales(None)  # type: ignore[arg-type]
    fold_scales(model, input_shapes={"X": [1, 3, 5, 7]})
    assert model.SerializeToString() == before
    _ = value_type


def _as_resize10(model: object) -> object:
    """The same model at opset 10, its Upsample a Resize-10 (the same inputs)."""
    result = onnx.ModelProto()
    result.CopyFrom(model)  # type: ignore[arg-type]
    result.opset_import[0].version = 10
    for node in result.graph.node:
        if node.op_type == "Upsample":
            node.op_type = "Resize"
    return result


def test_resize_scales_fold_too() -> None:
    """Before: fold --input-shape of a Resize-10 export folded '0 of 0' and yet wrote the
    input's static shape."""
    model = _as_resize10(_torch_size_export(["N", 3, "H", "W"], (20, 30)))
    folded = fold_scales(model, input_shapes={"X": [1, 3, 7, 9]})
    (resize,) = [n for n in folded.graph.node if n.op_type == "Resize"]
    (tensor,) = [t for t in folded.graph.initializer if t.name == resize.input[1]]
    expected = np.array([1, 1, np.float32(20) / np.float32(7), np.float32(30) / np.float32(9)],
                        np.float32)
    assert bits_equal(numpy_helper.to_array(tensor), expected)
    assert [n.op_type for n in folded.graph.node] == ["Resize"]
    assert dims(value_type(folded, "X")) == [1, 3, 7, 9]
    x = random_input((1, 3, 7, 9), np.float32)
    assert bits_equal(ort_run(folded, {"X": x})[0], ort_run(model, {"X": x})[0])


def test_input_shapes_change_nothing_where_nothing_folds(tmp_path: object,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    from runners import run_cli

    node = helper.make_node("Upsample", ["X", "s"], ["Y"], mode="nearest")
    model = make_model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                              ["N", 3, "H", "W"])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
    folded = fold_scales(model, input_shapes={"X": [1, 3, 4, 4]})
    assert folded.graph.input[0] == model.graph.input[0]
    path = f"{tmp_path}/m.onnx"
    onnx.save(model, path)
    code, out, _ = run_cli(capsys, "fold", path, "-o", f"{tmp_path}/f.onnx", "--input-shape",
                           "X=1,3,4,4")
    assert code == 0 and "0 of 0 computed scales folded" in out
    assert "input 'X' keeps its declaration" in out and "static shape" not in out
