"""PyTorch's exports (tests/data/pytorch) through upgrade, downgrade and fold, bit for bit in
onnxruntime (issue 38, items 2 and 3).

The exports with sizes computed from the input (``F.interpolate(y, size=(x.shape[2] * 3 //
2, ...))``, dynamic axes) hold the cases: a Resize-10 whose nearest rounding depends on its
scales' side of 1, which upgrade proves from the graph, compared at every height and width
from 1 to 40; Upsample-9 and Resize-10 brought up and back down (onnx has no down adapter for
the Slice the exporter writes); the hints printed where a conversion cannot be done, run.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from onnx_models import bits_equal, make_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from runners import run_cli  # noqa: E402

from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.onnx import check, downgrade, fold_scales, infer_shapes, upgrade  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "pytorch"
INDEX = [entry for entry in json.loads((CORPUS / "index.json").read_text())["models"]
         if "refused" not in entry]
EVERY_SIZE = [(h, w) for h in range(1, 41) for w in range(1, 41)]


def _load(name: str) -> onnx.ModelProto:
    return onnx.load(str(CORPUS / name))


class _Runs:
    """One model's onnxruntime session (ORT_ENABLE_EXTENDED, as verify_upgrade runs), and
    its output at each input size, on the same random inputs for every model."""

    def __init__(self, model: onnx.ModelProto) -> None:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        self.session = ort.InferenceSession(model.SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])

    def at(self, sizes: list[tuple[int, int]]) -> list[np.ndarray | None]:
        """The output at each size; None where onnxruntime refuses the run (a computed
        size of 0 makes a scale 0, which Resize refuses)."""
        rng = np.random.default_rng(38)
        found: list[np.ndarray | None] = []
        for h, w in sizes:
            x = rng.standard_normal((1, 3, h, w), dtype=np.float32)
            try:
                found.append(self.session.run(None, {"x": x})[0])
            except Exception:
                found.append(None)
        return found


def _differing(first: list[np.ndarray | None], second: list[np.ndarray | None]) -> list[int]:
    """Where the outputs differ, or one model runs and the other does not."""
    return [i for i, (a, b) in enumerate(zip(first, second, strict=True))
            if (a is None) != (b is None) or (a is not None and not bits_equal(a, b))]


def _nearest_modes(model: onnx.ModelProto) -> list[bytes]:
    return [helper.get_attribute_value(a) for n in model.graph.node if n.op_type == "Resize"
            for a in n.attribute if a.name == "nearest_mode"]


# ------------------------------------------------------------------ item 2: Resize-10 upgraded


# (export, opset, the nearest_mode proven by hand: floor(3n/2) >= n; floor(2n/3) <= n)
EXACT = [("computed_nearest_dynamic_opset10.onnx", 11, b"floor"),
         ("computed_nearest_dynamic_opset10.onnx", 18, b"floor"),
         ("shrunk_nearest_dynamic_opset10.onnx", 13, b"ceil"),
         ("computed_bilinear_dynamic_opset10.onnx", 18, None)]


@pytest.mark.parametrize(("name", "opset", "nearest_mode"), EXACT)
def test_computed_sizes_upgrade_with_the_same_output_at_every_size(
        name: str, opset: int, nearest_mode: bytes | None) -> None:
    """Before: upgrade exited 2 ('its scales are computed at run time')."""
    original = _load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about
        upgraded = upgrade(original, opset=opset)
    assert _nearest_modes(upgraded) == ([nearest_mode] if nearest_mode else [])
    expected = _Runs(original).at(EVERY_SIZE)
    assert sum(y is not None for y in expected) >= len(EVERY_SIZE) - 80  # * 2 // 3 of 1: 0
    assert _differing(_Runs(upgraded).at(EVERY_SIZE), expected) == []
    if nearest_mode:
        # the other rounding changes the output at some sizes: the proof is what makes it exact
        for node in upgraded.graph.node:
            for attribute in node.attribute:
                if attribute.name == "nearest_mode":
                    attribute.s = b"ceil" if nearest_mode == b"floor" else b"floor"
        assert _differing(_Runs(upgraded).at(EVERY_SIZE), expected)


def test_sizes_that_enlarge_one_axis_and_shrink_the_other_are_refused_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """F.interpolate(y, size=(h * 3 // 2, w * 2 // 3)): no single nearest_mode of Resize-11
    gives the Resize-10's output at every size (each one differs somewhere, below), so
    upgrade refuses and check warns, with the same words."""
    original = _load("mixed_nearest_dynamic_opset10.onnx")
    with pytest.raises(UpsampleError, match=r"enlarge some axes and shrink others \(axis 0: "
                       r"1, axis 1: 1, axis 2: >= 1, axis 3: <= 1\)") as refused:
        upgrade(original, opset=13)
    assert refused.value.fix.actions == ()  # no command converts it
    (finding,) = check(original)
    assert (finding.severity, finding.code, finding.node) == ("warning", "resize10-rounding",
                                                              "/Resize")
    assert finding.fix == refused.value.fix.python()
    expected = _Runs(original).at(EVERY_SIZE)
    for rounding in (b"floor", b"ceil"):
        guessed = _with_rounding(original, rounding)
        assert _differing(_Runs(guessed).at(EVERY_SIZE), expected), rounding
    code, _, err = run_cli(capsys, "upgrade", CORPUS / "mixed_nearest_dynamic_opset10.onnx",
                           "-o", tmp_path / "up.onnx")
    assert code == 2 and "keep the model at opset 10" in err and "onnx-upsample " not in err


def _with_rounding(model: onnx.ModelProto, rounding: bytes) -> onnx.ModelProto:
    """``model`` (opset 10) at opset 13 by hand, its Resize-10 a Resize-13 with the given
    nearest_mode and asymmetric coordinates (what upgrade would write if it guessed)."""
    result = onnx.ModelProto()
    result.CopyFrom(model)
    result.opset_import[0].version = 13
    result.ir_version = 7
    for node in result.graph.node:
        if node.op_type == "Resize":
            node.input[:] = [node.input[0], "", node.input[1]]
            node.attribute.extend([
                helper.make_attribute("coordinate_transformation_mode", "asymmetric"),
                helper.make_attribute("nearest_mode", rounding.decode())])
        if node.op_type in ("Unsqueeze", "Squeeze"):
            axes = [a for a in node.attribute if a.name == "axes"]
            if axes:
                name = f"{node.output[0]}_axes"
                result.graph.initializer.append(numpy_helper.from_array(
                    np.array(list(axes[0].ints), np.int64), name))
                node.attribute.remove(axes[0])
                node.input.append(name)
    onnx.checker.check_model(result)
    return result


# ------------------------------------------------------------------ item 3: and back down

FEW_SIZES = [(1, 1), (2, 3), (5, 7), (10, 14), (13, 20), (31, 9)]


def _sizes(entry: dict[str, object]) -> list[tuple[int, int]]:
    return FEW_SIZES if entry["dynamic"] else [(10, 14)]


UPGRADABLE = [entry for entry in INDEX if entry["how"] != "mixed"]  # mixed: refused (above)


@pytest.mark.parametrize("entry", UPGRADABLE, ids=[str(entry["file"]) for entry in UPGRADABLE])
def test_every_export_upgraded_comes_back_down_with_the_same_outputs(
        entry: dict[str, object]) -> None:
    """upgrade (opset 13), then downgrade to the export's opset (9 for Resize-10, the
    Upsample-9 it means); before, every export with a Slice (computed sizes, the 'twice'
    head's [:, :4]) failed: 'No Adapter To Version $9 for Slice'."""
    name, opset = str(entry["file"]), int(entry["opset"])  # type: ignore[call-overload]
    original = _load(name)
    with warnings.catch_warnings():  # the size=(20, 30) exports: sizes left unknown (below)
        warnings.simplefilter("ignore", UpsampleWarning)
        upgraded = upgrade(original, opset=13)
    if entry["how"] == "shrunk":  # Upsample cannot shrink: there is no opset-9 form
        with pytest.raises(UpsampleError, match="nearest_mode is 'ceil'; Upsample rounds down"):
            downgrade(upgraded, opset=9)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", UpsampleWarning)  # computed scales proven >= 1: none
        lowered = downgrade(upgraded, opset=min(opset, 9))
    assert lowered.opset_import[0].version == min(opset, 9)
    assert {n.op_type for n in lowered.graph.node} >= {"Upsample"}
    assert "Resize" not in {n.op_type for n in lowered.graph.node}
    sizes = _sizes(entry)
    expected = _Runs(original).at(sizes)
    assert all(y is not None for y in expected)
    assert _differing(_Runs(lowered).at(sizes), expected) == []


OPSET10 = [entry for entry in UPGRADABLE if entry["opset"] == 10]
# heights 1-20, each with two widths of 1-20 (every pair is 400 runs per model: slow)
SAMPLED_SIZES = [(h, w) for h in range(1, 21) for w in (h * 7 % 20 + 1, 21 - h)]


@pytest.mark.parametrize("entry", OPSET10, ids=[str(entry["file"]) for entry in OPSET10])
def test_every_opset_10_export_upgraded_comes_back_to_opset_10(
        entry: dict[str, object]) -> None:
    """Before: downgrade refused opset 10 ('opset is 10; ... use upgrade'), so a Resize-10
    export upgraded came back only as opset 9. Now upgrade (default opset, and 11) then
    downgrade to 10 gives Resize-10 nodes, bit for bit the export's outputs; the 'shrunk'
    export's ceil comes back as the Resize-10 it was (no Upsample could shrink)."""
    original = _load(str(entry["file"]))
    sizes = SAMPLED_SIZES if entry["dynamic"] else [(10, 14)]
    expected = _Runs(original).at(sizes)
    # the shrunk export computes a size of 0 from a height or width of 1, a scale of 0 that
    # onnxruntime refuses (in both models: _differing compares that too); the rest run
    assert sum(y is not None for y in expected) >= len(sizes) - 4
    for opset in (None, 11):
        with warnings.catch_warnings():  # the size=(20, 30) exports: sizes left unknown
            warnings.simplefilter("ignore", UpsampleWarning)
            upgraded = upgrade(original) if opset is None else upgrade(original, opset=opset)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UpsampleWarning)
            lowered = downgrade(upgraded, opset=10)
        assert lowered.opset_import[0].version == 10
        resizes = [n for n in lowered.graph.node if n.op_type == "Resize"]
        assert resizes and "Upsample" not in {n.op_type for n in lowered.graph.node}
        assert all(len(n.input) == 2 and [a.name for a in n.attribute] == ["mode"]
                   for n in resizes)
        onnx.checker.check_model(lowered, full_check=True)
        assert _differing(_Runs(lowered).at(sizes), expected) == [], (entry["file"], opset)


def test_downgrade_opset_10_on_the_command_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'argument --opset: invalid choice: 10 (choose from 7, 8, 9)', exit 2."""
    upgraded = tmp_path / "up.onnx"
    onnx.save(upgrade(_load("shrunk_nearest_dynamic_opset10.onnx")), str(upgraded))
    code, out, err = run_cli(capsys, "downgrade", upgraded, "-o", tmp_path / "ten.onnx",
                             "--opset", 10)
    assert code == 0, err
    assert "(opset 18, IR" in out and "(opset 10, IR" in out
    ten = onnx.load(str(tmp_path / "ten.onnx"))
    expected = _Runs(_load("shrunk_nearest_dynamic_opset10.onnx")).at(FEW_SIZES)
    assert _differing(_Runs(ten).at(FEW_SIZES), expected) == []
    code, _, err = run_cli(capsys, "downgrade", upgraded, "-o", tmp_path / "x.onnx",
                           "--opset", 11)
    assert code == 2 and "choose from 7, 8, 9, 10" in err
    # to opset 9 it cannot (Upsample does not shrink): the fix names opset 10, which works
    code, _, err = run_cli(capsys, "downgrade", upgraded, "-o", tmp_path / "nine.onnx")
    assert code == 2 and "nearest_mode is 'ceil'" in err
    command = err.split("; or ")[1].split(", where")[0].split()
    assert command[:2] == ["onnx-upsample", "downgrade"] and command[-2:] == ["--opset", "10"]
    code, _, err = run_cli(capsys, *command[1:])
    assert code == 0, err


@pytest.mark.parametrize(("name", "opset"), [("computed_nearest_dynamic_opset9.onnx", 18),
                                             ("computed_bilinear_dynamic_opset9.onnx", 11)])
def test_computed_sizes_round_trip_at_every_size(name: str, opset: int) -> None:
    """The issue's case: an opset-9 export with computed sizes, upgraded, then downgrade
    --opset 9; its Slice-10 (starts, ends, axes inputs) comes back as the Slice-1 it was."""
    original = _load(name)
    lowered = downgrade(upgrade(original, opset=opset), opset=9)
    (slice_node,) = [n for n in lowered.graph.node if n.op_type == "Slice"]
    assert len(slice_node.input) == 1
    assert {a.name: list(a.ints) for a in slice_node.attribute} == {
        "axes": [0], "starts": [2], "ends": [2 ** 63 - 1]}
    expected = _Runs(original).at(EVERY_SIZE)
    assert _differing(_Runs(lowered).at(EVERY_SIZE), expected) == []


def test_pre_input_forms_of_slice_clip_and_pad_come_back() -> None:
    """Slice-1, Clip-6 and Pad-2 (attributes) become Slice-13, Clip-13 and Pad-13 (inputs)
    going up, which onnx's converter cannot take down: downgrade writes them back."""
    nodes = [helper.make_node("Slice", ["X"], ["s"], starts=[0, 1], ends=[1, -1], axes=[1, 3]),
             helper.make_node("Clip", ["s"], ["c"], min=-0.5, max=0.75),
             helper.make_node("Pad", ["c"], ["p"], pads=[0, 0, 1, 2, 0, 0, 2, 1], value=0.25),
             helper.make_node("Upsample", ["p", "scales"], ["Y"], mode="nearest")]
    model = make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                             [1, 3, 4, 6])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array([1, 1, 2, 1.5], np.float32),
                                                "scales")], opset=9, ir_version=4)
    upgraded = upgrade(model, opset=13)
    assert [(n.op_type, len(n.input)) for n in upgraded.graph.node
            if n.op_type in ("Slice", "Clip", "Pad")] == [("Slice", 4), ("Clip", 3), ("Pad", 3)]
    lowered = downgrade(upgraded, opset=9)
    assert [(n.op_type, len(n.input)) for n in lowered.graph.node] == [
        ("Slice", 1), ("Clip", 1), ("Pad", 1), ("Upsample", 2)]
    for before, after in zip(model.graph.node[:3], lowered.graph.node[:3], strict=True):
        assert ({a.name: helper.get_attribute_value(a) for a in after.attribute}
                == {a.name: helper.get_attribute_value(a) for a in before.attribute})
    # the constants the inputs read are gone with them
    assert [t.name for t in lowered.graph.initializer] == ["scales"]
    x = np.random.default_rng(3).standard_normal((1, 3, 4, 6)).astype(np.float32)
    outputs = [ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
               for m in (model, upgraded, lowered)]
    assert bits_equal(outputs[1], outputs[0]) and bits_equal(outputs[2], outputs[0])


def test_a_slice_with_steps_or_computed_starts_has_no_opset_9_form() -> None:
    steps = helper.make_node("Slice", ["X", "st", "en", "ax", "step"], ["s"])
    model = make_model([steps, helper.make_node("Relu", ["s"], ["Y"])],
                       [helper.make_tensor_value_info("X", TensorProto.FLOAT, [8])],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array([v], np.int64), name)
                        for name, v in (("st", 0), ("en", 8), ("ax", 0), ("step", 2))],
                       opset=13)
    with pytest.raises(UpsampleError, match=r"No Adapter To Version \$9 for Slice"):
        downgrade(model, opset=9)


def test_the_hints_of_downgrade_to_opset_7_work(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Before: downgrade --opset 7 of the upgraded export said 'fold first' (which folded
    nothing: the sizes come from symbolic dimensions) or '--opset 9' (which failed on the
    Slice). Now it names --opset 9, which works, and says in words what fold needs."""
    upgraded = tmp_path / "up.onnx"
    onnx.save(upgrade(_load("computed_nearest_dynamic_opset9.onnx")), str(upgraded))
    code, _, err = run_cli(capsys, "downgrade", upgraded, "-o", tmp_path / "seven.onnx",
                           "--opset", 7)
    assert code == 2
    assert "onnx-upsample fold" not in err and "fold's --input-shape" in err
    command = err.split("fix: ")[1].split(" (")[0].split()
    assert command[:2] == ["onnx-upsample", "downgrade"] and command[-2:] == ["--opset", "9"]
    code, out, err = run_cli(capsys, *command[1:])
    assert code == 0, err
    # and with the input's size given, fold makes the scales a constant Upsample-7 takes
    code, out, err = run_cli(capsys, "fold", upgraded, "-o", tmp_path / "folded.onnx",
                             "--input-shape", "x=1,3,13,20")
    assert code == 0 and "1 of 1 computed scales folded" in out, (out, err)
    code, out, err = run_cli(capsys, "downgrade", tmp_path / "folded.onnx", "-o",
                             tmp_path / "seven.onnx", "--opset", 7)
    assert code == 0, err
    seven = onnx.load(str(tmp_path / "seven.onnx"))
    ((y7,), (y,)) = (_Runs(m).at([(13, 20)]) for m in (seven, _load(
        "computed_nearest_dynamic_opset9.onnx")))
    assert y7 is not None and y is not None and bits_equal(y7, y)


# ------------------------------------------------- item 5: what onnx's full check rejects


def _scaled(scales: list[float], shape: list[int], mode: str, opset: int = 9,
            allow: str = "Upsample") -> onnx.ModelProto:
    """X -> Upsample-9 (or an Upsample-equivalent Resize-13) -> Relu, nothing declared
    downstream but Y's element type."""
    if allow == "Upsample":
        node = helper.make_node("Upsample", ["X", "s"], ["u"], mode=mode)
    else:
        node = helper.make_node("Resize", ["X", "", "s"], ["u"], mode=mode,
                                coordinate_transformation_mode="asymmetric",
                                **({"nearest_mode": "floor"} if mode == "nearest" else {}))
    return make_model([node, helper.make_node("Relu", ["u"], ["Y"])],
                      [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                      [numpy_helper.from_array(np.array(scales, np.float32), "s")],
                      opset=opset)


def _written() -> list[tuple[str, object]]:
    """(what, a thunk writing it): every converter's output on models whose products onnx's
    float64 rule and onnxruntime's float32 rule size differently (2.3 on 20: 45 and 46;
    0.7 on 10: 6 and 7), or the same (1.5 on odd sizes), nearest and linear, up and down."""
    cases: list[tuple[str, object]] = []
    for mode in ("nearest", "linear"):
        for scales, shape in (([1, 1, 1, 2.3], [1, 2, 4, 20]), ([1, 1, 1.5, 1.5], [1, 2, 13, 7]),
                              ([1, 1, 1.4, 1.3], [1, 2, 5, 10])):
            up9 = _scaled(scales, shape, mode)
            cases += [(f"infer_shapes {mode} {scales}", lambda m=up9: infer_shapes(m)),
                      (f"upgrade 10 {mode} {scales}", lambda m=up9: upgrade(m, opset=10)),
                      (f"upgrade 13 {mode} {scales}", lambda m=up9: upgrade(m, opset=13)),
                      (f"upgrade {mode} {scales}", lambda m=up9: upgrade(m))]
            resize = _scaled(scales, shape, mode, opset=13, allow="Resize")
            cases += [(f"downgrade {target} {mode} {scales}",
                       lambda m=resize, t=target: downgrade(m, opset=t)) for target in (9, 7)]
        down = _scaled([1, 1, 0.7, 0.3], [1, 2, 10, 10], mode)
        cases.append((f"upgrade --allow-downscale {mode}",
                      lambda m=down: upgrade(m, opset=13, allow_downscale=True)))
    # the exports: size=(20, 30) from 10 x 14 (onnx: 29, onnxruntime: 30), which the exports
    # themselves declare (and fail onnx's full check), and the computed sizes folded
    for entry in INDEX:
        name = str(entry["file"])
        if entry["how"] == "size" and entry["opset"] in (9, 10):
            cases.append((f"upgrade {name}", lambda n=name: upgrade(_load(n))))
            if entry["opset"] == 10:
                cases.append((f"downgrade {name}", lambda n=name: downgrade(_load(n))))
        if entry["how"] in ("computed", "shrunk", "scale1.5") and entry["dynamic"]:
            cases.append((f"fold {name}", lambda n=name: fold_scales(
                _load(n), input_shapes={"x": [1, 3, 13, 21]})))
    return cases


WRITTEN = _written()


@pytest.mark.parametrize("case", range(len(WRITTEN)), ids=[what for what, _ in WRITTEN])
def test_written_models_pass_onnx_full_check_and_load_without_merge_warnings(
        case: int, capfd: pytest.CaptureFixture[str]) -> None:
    """Before: an upgraded linear 2.3 on a width of 20 declared 46 (onnxruntime's), which
    onnx's full check rejects (its rule gives 45) and onnxruntime warned about at every
    load ('Error merging shape info'). Every size still declared is the one onnxruntime
    computes."""
    what, write = WRITTEN[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        model = write()  # type: ignore[operator]
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    options = ort.SessionOptions()
    options.log_severity_level = 2  # warnings and above, on this process's stderr
    capfd.readouterr()
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    assert "Error merging shape info" not in capfd.readouterr().err, what
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else 13 for d in value.shape]
        feeds[value.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    produced = dict(zip([o.name for o in session.get_outputs()],
                        session.run(None, feeds), strict=True))
    for value in model.graph.output:
        declared = value.type.tensor_type.shape.dim
        actual = produced[value.name].shape
        assert all(not d.HasField("dim_value") or d.dim_value == n
                   for d, n in zip(declared, actual, strict=True)), (what, declared, actual)


def test_the_fixed_size_exports_themselves_fail_onnx_full_check() -> None:
    """What the converters now avoid, as PyTorch writes it: size=(20, 30) from a width of 14
    is a scale of 30 / 14, whose product onnx's float64 rule floors to 29, and the export
    declares onnxruntime's 30."""
    with pytest.raises(Exception, match=r"\(29\) vs \(30\)"):  # InferenceError
        onnx.checker.check_model(_load("size_nearest_fixed_opset10.onnx"), full_check=True)
    (y,) = _Runs(_load("size_nearest_fixed_opset10.onnx")).at([(10, 14)])
    assert y is not None and y.shape == (1, 2, 20, 30)
