"""Where a model-level diff says a difference begins: every node's outputs compared, the
first node whose output differs while its inputs agree named (a Conv as much as an
Upsample), by how much (ULPs), and what it reaches; an Upsample whose input already differs
told apart by running it alone. The runtimes are tests/diff_backends.py's: onnxruntime with
one Conv's output one ULP larger, so every expectation follows from that construction."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from diff_backends import chain  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_upsample.conformance import diff  # noqa: E402
from onnx_upsample.conformance._diff_graph import origins, trace  # noqa: E402
from onnx_upsample.conformance._diff_result import ModelDiff, NodeDiff  # noqa: E402
from onnx_upsample.conformance._diff_values import compare, ulp_distance  # noqa: E402

ORT = "diff_backends:ort"
CONV_ULP = "diff_backends:conv_ulp"
CONV_ULP_HALF_PIXEL = "diff_backends:conv_ulp_half_pixel"


def test_ulp_distance_counts_the_floats_between() -> None:
    one = np.float32(1)
    after = np.nextafter(one, np.float32(2))
    assert ulp_distance(np.array([one, 3]), np.array([after, 3])) is not None
    assert ulp_distance(np.array([one], np.float32), np.array([after], np.float32)) == 1
    tiny = np.float32(1e-45)  # the smallest subnormal: 1 ULP above +0
    assert ulp_distance(np.array([0, tiny], np.float32), np.array([-0.0, 3 * tiny],
                                                                  np.float32)) == 2
    assert ulp_distance(np.array([2.0]), np.array([np.nextafter(2.0, 0)])) == 1  # float64
    assert ulp_distance(np.array([1], np.float16), np.array([1.5], np.float16)) == 512
    # no useful distance across zero, or from a NaN to a number; none for integers
    assert ulp_distance(np.array([-tiny]), np.array([tiny])) is None
    assert ulp_distance(np.array([np.nan, 1], np.float32), np.array([1, 1], np.float32)) is None
    assert ulp_distance(np.array([np.nan], np.float32), np.array([np.nan], np.float32)) == 0
    assert ulp_distance(np.array([1]), np.array([2])) is None


def test_values_of_other_shapes_say_so() -> None:
    found = compare("y", np.zeros((1, 3, 9, 9), np.float32), np.zeros((1, 3, 10, 10),
                                                                      np.float32))
    assert not found.identical and found.mismatch == "shape 1x3x9x9 vs 1x3x10x10"
    x = compare("x", np.ones((1, 3, 8, 8), np.float32), np.ones((1, 3, 8, 8), np.float32))
    row = NodeDiff("frac", "Upsample-9", "y", input_shape=(1, 3, 8, 8),
                   output_shape=(1, 3, 9, 9), scales=(1, 1, 1.2, 1.2), exercised=True,
                   input_difference=x, difference=found, inputs_identical=True)
    result = ModelDiff("m", ("a", "b"), ("1", "1"), (), 0, 1, (row,), (found,))
    lines = [text for _, text in result.lines()]
    assert row.verdict == "DIFFERS" and row.describe().startswith(
        "frac: shape 1x3x9x9 vs 1x3x10x10")
    assert sum("shape 1x3x9x9 vs 1x3x10x10" in text for text in lines) == 4, lines
    assert not any("inf" in text or "243 of" in text for text in lines), lines
    assert compare("t", np.zeros(3, np.float32), np.zeros(3)).mismatch == "float32 vs float64"


def _branches() -> onnx.ModelProto:
    """a = Relu(x), b = Neg(a), c = Abs(x), d = b + c, e = Identity(d), f = Identity(c)."""
    nodes = [helper.make_node("Relu", ["x"], ["va"], name="a"),
             helper.make_node("Neg", ["va"], ["vb"], name="b"),
             helper.make_node("Abs", ["x"], ["vc"], name="c"),
             helper.make_node("Add", ["vb", "vc"], ["vd"], name="d"),
             helper.make_node("Identity", ["vd"], ["ve"], name="e"),
             helper.make_node("Identity", ["vc"], ["vf"], name="f")]
    graph = helper.make_graph(nodes, "branches",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2])
                               for name in ("ve", "vf")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_two_independent_origins_and_where_they_go() -> None:
    """Values made up by hand: a and c differ on equal inputs (two origins), b and d inherit,
    f's output came out equal although its input differs (absorbed: it reaches nothing)."""
    same, other = np.zeros(2, np.float32), np.ones(2, np.float32)
    first = {name: same for name in ("x", "va", "vb", "vc", "vd", "ve", "vf")}
    second = {**first, "va": other, "vb": other, "vc": other, "vd": other, "ve": other}
    model = _branches()
    traces = trace(model, first, second, set())
    assert [t.inputs_identical for t in traces] == [True, False, True, False, False, False]
    found, sources = origins(traces, {}, ["ve", "vf"])
    assert [(o.node, o.op, o.behind, o.reaches, o.outputs) for o in found] == [
        ("a", "Relu", (), ("b", "d", "e"), ("ve",)),
        ("c", "Abs", (), ("d", "e"), ("ve",))]
    assert sources == {1: ("a",), 3: ("a", "c"), 4: ("a", "c"), 5: ("c",)}
    # d shown to add a difference of its own (as an Upsample run alone is): a third origin
    found, _ = origins(traces, {3: True}, ["ve", "vf"])
    assert [(o.node, o.behind, o.reaches) for o in found][2] == ("d", ("a", "c"), ("e",))
    # a refused, its output the other runtime's: not where a difference begins
    found, _ = origins(trace(model, first, second, {"va"}), {}, ["ve", "vf"])
    assert [o.node for o in found] == ["c"]


def _conv_two_upsamples() -> onnx.ModelProto:
    """x -> Conv 'conv' -> c; nearest x2 'near' and linear x2 'lin' of c, both outputs.
    Under half-pixel centres nearest x2 picks the same elements; linear blends others."""
    rng = np.random.default_rng(1)
    tensors = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
                                       "w"),
               numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Upsample", ["c", "scales"], ["yn"], name="near", mode="nearest"),
             helper.make_node("Upsample", ["c", "scales"], ["yl"], name="lin", mode="linear")]
    graph = helper.make_graph(
        nodes, "conv_up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 6])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("yn", "yl")],
        tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    return model


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_a_difference_that_begins_in_a_conv_is_located_there() -> None:
    """The Conv's output is one ULP larger everywhere: the Conv is where it begins; the
    nearest Upsample only inherits it (run alone, the same bits: no convention named); the
    linear one, computed under half-pixel centres, adds its own behind it."""
    found = diff(_conv_two_upsamples(), ORT, CONV_ULP_HALF_PIXEL)
    conv, lin = found.origins
    assert (conv.node, conv.op, conv.behind) == ("conv", "Conv", ())
    assert conv.difference.differing == conv.difference.size == 4 * 5 * 6
    assert conv.difference.max_ulp == 1
    assert conv.reaches == ("near", "lin") and conv.outputs == ("yn", "yl")
    assert (lin.node, lin.op, lin.behind, lin.reaches) == ("lin", "Upsample-9", ("conv",), ())
    near, lin_row = found.nodes
    assert near.verdict == "input differs" and near.sources == ("conv",)
    assert near.alone is not None and near.alone.identical and near.explanations == ()
    assert lin_row.verdict == "DIFFERS" and lin_row.sources == ("conv",)
    assert lin_row.explanations[0].own
    assert lin_row.explanations[1].convention.startswith("Resize half_pixel (linear)")
    lines = [text for _, text in found.lines()]
    assert any(text.startswith("a difference begins at node 'conv' (Conv), whose inputs are "
                               "the same in both runtimes: output 'c': 120 of 120 elements "
                               "differ (100%)") and "(1 ULP)" in text for text in lines), lines
    assert any("near: " in text and "a difference that begins at 'conv'" in text
               and "matches" not in text for text in lines), lines
    assert found.differs and found.to_dict()["origins"][0]["difference"]["max_ulp"] == 1


@pytest.mark.slow
@pytest.mark.usefixtures("importable_test_backends")
def test_a_100_node_model_runs_once_per_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node's outputs come from one run per runtime with every value exposed (one
    more exposes only what the Upsample rows read); only an Upsample whose input differs
    runs again, alone. The first Conv, one ULP off, is where the difference begins."""
    from onnx_upsample.conformance import _diff

    runs: list[int] = []
    real = _diff._Side.run

    def counted(self: _diff._Side, model: onnx.ModelProto,
                feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        runs.append(len(model.graph.node))
        return real(self, model, feeds)

    monkeypatch.setattr(_diff._Side, "run", counted)
    found = diff(chain(at=(1, 50, 75)), ORT, CONV_ULP)
    assert found.nodes_compared == 100
    (origin,) = found.origins
    assert origin.node == "conv0" and origin.difference.max_ulp == 1
    assert origin.reaches[0] == "up1" and found.nodes[0].sources == ("conv0",)
    assert found.nodes[0].verdict == "input differs" and not found.differs
    alone = sum(row.alone is not None for row in found.nodes)
    assert alone >= 1 and runs.count(1) == 2 * alone
    assert runs.count(100) == 4  # focused and every value exposed, in each runtime


def test_a_runtime_that_computes_otherwise_with_every_value_exposed_is_named() -> None:
    """Exposing a value keeps a runtime from fusing across it: where that changes a value
    the rows read, a line says so (and which values); a refusal keeps the first run."""
    from onnx_upsample.conformance._diff import _every, _NotRunError
    from onnx_upsample.onnx._probe import expose

    model = _branches()
    exposed = expose(model, ["ve", "vf", "va", "vb", "vc", "vd"])
    x = {"x": np.zeros(2, np.float32)}
    run = {**x, "ve": np.zeros(2, np.float32), "vf": np.zeros(2, np.float32)}

    class Side:
        name = "fused"

        def __init__(self, answer: list[np.ndarray] | None) -> None:
            self.answer = answer

        def run(self, model: onnx.ModelProto, feeds: object) -> list[np.ndarray]:
            if self.answer is None:
                raise _NotRunError("refused", "too many outputs")
            return self.answer

    changed: list[str] = []
    outputs = [np.zeros(2, np.float32) for _ in exposed.graph.output]
    every = _every(Side(outputs), exposed, x, run, changed)  # type: ignore[arg-type]
    assert changed == [] and set(every) == {"x", "ve", "vf", "va", "vb", "vc", "vd"}
    outputs[0] = np.ones(2, np.float32)
    _every(Side(outputs), exposed, x, run, changed)  # type: ignore[arg-type]
    assert len(changed) == 1 and changed[0].startswith(
        "fused computes otherwise when every value is exposed as a graph output ('ve' change")
    assert _every(Side(None), exposed, x, run, changed) is run  # type: ignore[arg-type]
    assert "refused the model with every value exposed (too many outputs)" in changed[1]
