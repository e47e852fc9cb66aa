"""The conformance suite's cases (2.0): what they can tell apart, the cases that must be
refused, the upgraded Resize tree, and the export's own hygiene (sampled reference, hidden
work folders).

The strongest check is that every convention the explainer knows gives another output than
Upsample's expected one on at least five default-suite cases: computed with the explainer's
own convention implementations, so that a case table edit cannot silently blind the suite.
"""

from __future__ import annotations

import collections
import functools
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnx_upsample
from onnx_upsample import UpsampleError, conformance
from onnx_upsample._spec.dtypes import element_type
from onnx_upsample.conformance import _cases, _checks, _inputs, _suite
from onnx_upsample.conformance._explain._conventions import (
    SIZE_RULES,
    Recipe,
    output_length,
    recipes,
)
from onnx_upsample.conformance._explain._search import convention_outputs, same

f32 = np.float32
ENOUGH = 5  # cases on which each convention must differ from Upsample
# The x86 conversion (a result beyond the type's range becomes its minimum) differs from
# truncation only where a linear result overflows: the suite's int32 extremes cases, three.
ENOUGH_X86 = 3
# outputs up to this size are enough to tell every convention apart, and cheap to compute
SMALL = 5000


def _default_cases() -> list[_cases.Case]:
    return [c for c in _cases.all_cases(False) if c.must_refuse is None]


def _small(case: _cases.Case) -> bool:
    shape = onnx_upsample.output_shape(case.shape, case.scales)
    return case.dtype != "string" and 0 < int(np.prod(shape)) <= SMALL and len(shape) > 0


# ------------------------------------------------------------------- what the cases catch

@pytest.mark.slow
def test_every_convention_differs_from_upsample_on_five_cases() -> None:
    counts: collections.Counter[Recipe] = collections.Counter()
    pending = {mode: {r for size in SIZE_RULES for r in recipes(mode, size, True)
                      if not r.is_upsample} for mode in ("nearest", "linear")}
    assert [len(p) for p in pending.values()] == [1439, 2879]

    def wanted(group: tuple[Recipe, ...]) -> bool:
        return any(counts[r] < _enough(r) for r in group)

    # the groups added to catch conventions first, then integer linear cases (integer
    # rounding rules): once every convention is caught often enough, the rest is skipped
    def order(case: _cases.Case) -> int:
        first = {"coordinate rules": 0, "output-size rules": 1, "element types (NCHW)": 2}
        return first.get(case.group, 3)

    for case in sorted(filter(_small, _default_cases()), key=order):
        if not pending[case.mode]:
            continue
        x = _inputs.make_input(case)
        expected = onnx_upsample.upsample(x, list(case.scales), case.mode)
        etype = element_type(x.dtype)
        scales = tuple(f32(s) for s in case.scales)
        for group, got in convention_outputs(x, scales, case.mode, etype, wanted):
            if got.shape != expected.shape or not same(got, expected, etype.is_float).all():
                counts.update(group)
        pending[case.mode] = {r for r in pending[case.mode] if counts[r] < _enough(r)}
    for mode, short in pending.items():
        names = sorted((counts[r], r.name) for r in short)
        assert names == [], f"{len(names)} {mode} conventions caught by too few cases"


@functools.cache
def _enough(recipe: Recipe) -> int:
    """How many cases must catch ``recipe``: ENOUGH, or ENOUGH_X86 where the x86 conversion
    is its only departure but for the output size."""
    others = [d for d in recipe.departures if not d.startswith("size:")]
    return ENOUGH_X86 if others == ["integers:x86"] else ENOUGH


# Size rules no default case tells apart: round half to even of the float32 product and of
# the exact one differ only where the float32 product rounds to a tie whose exact product is
# above it with an even floor (5 x f32(1.7) = 8.50000024, 8.5 in float32), which no case
# has. The explainer's own tests hold the difference (test_explain_sizes.test_size_rules).
NOT_SEPARATED = {("round_half_even", "exact_round_half_even")}


def test_output_size_rules_are_separated() -> None:
    """Each pair of size rules gives another shape on some case (but NOT_SEPARATED's, which
    must stay unseparated: a case that separates them removes the pair), and each rule
    gives another shape than Upsample's (trunc of the float32 product) on five."""
    cases = _default_cases()
    shapes = {rule: [tuple(output_length(rule, n, f32(s))
                           for n, s in zip(c.shape, c.scales, strict=True)) for c in cases]
              for rule in SIZE_RULES}
    assert shapes["trunc"] == [onnx_upsample.output_shape(c.shape, c.scales) for c in cases]
    for a in SIZE_RULES:
        for b in SIZE_RULES[SIZE_RULES.index(a) + 1:]:
            differ = sum(p != q for p, q in zip(shapes[a], shapes[b], strict=True))
            if (a, b) in NOT_SEPARATED:
                assert differ == 0, (a, b, differ)
            else:
                assert differ >= (ENOUGH if a == "trunc" else 1), (a, b, differ)
    # the separating example of the issue: 5 x f32(1.4) is 7 by trunc, 6 by exact floor
    assert any(c.shape[2:] == (5, 3) and c.scales[2] == float(f32(1.4)) for c in cases)


def test_pytorch_nearest_rule_differs_on_five_cases() -> None:
    """PyTorch's nearest index floor(o * float32(1 / s)), written out here, not taken from
    the explainer: it must read other elements than Upsample on five nearest cases."""
    caught = []
    for case in _default_cases():
        if case.mode != "nearest" or case.form == "v9-computed" or not _small(case):
            continue
        x = _inputs.make_input(case)
        expected = onnx_upsample.upsample(x, list(case.scales), "nearest")
        index = []
        for n_in, n_out, scale in zip(x.shape, expected.shape, case.scales, strict=True):
            o = np.arange(n_out, dtype=f32)
            index.append(np.minimum(np.floor(o * f32(1.0 / scale)), n_in - 1).astype(np.int64))
        if expected.shape == x.shape:  # the no-resize copy: PyTorch maps a size-kept axis 1:1
            continue
        if not np.array_equal(x[np.ix_(*index)], expected, equal_nan=x.dtype.kind in "fc"):
            caught.append(case.id)
    assert len(caught) >= ENOUGH, caught


def test_each_element_type_has_a_plain_nchw_case() -> None:
    cases = _default_cases()
    for dtype in _cases.SPEC_TYPES:
        modes = {c.mode for c in cases if c.dtype == dtype and c.form == "v9"
                 and len(c.shape) == 4 and c.scales[:2] == (1.0, 1.0)
                 and all(s > 1 for s in c.scales[2:])}
        assert modes == ({"nearest", "linear"} if dtype in _cases.NUMERIC_TYPES
                         else {"nearest"}), dtype


def test_full_suite_goes_past_2p24_in_both_modes() -> None:
    def long_modes(cases: tuple[_cases.Case, ...]) -> set[str]:
        return {c.mode for c in cases if c.must_refuse is None
                and max(onnx_upsample.output_shape(c.shape, c.scales), default=0) > 2**24}

    assert long_modes(_cases.all_cases(True)) == {"nearest", "linear"}
    assert long_modes(_cases.all_cases(False)) == set()


def test_must_refuse_cases_are_refused_by_upsample() -> None:
    refused = [c for c in _cases.all_cases(False) if c.must_refuse is not None]
    kinds = " ".join(c.id for c in refused)
    for kind in ("below_1", "nan", "inf", "too_few", "too_many", "mode", "input"):
        assert kind in kinds
    for case in refused:
        assert "must-refuse" in case.tags and case.ort == _cases.ORT_REFUSES
        x = _inputs.make_input(case)
        with pytest.raises(UpsampleError):
            onnx_upsample.upsample(x, list(case.scales), case.mode)


# --------------------------------------------------------------------------- the export

@pytest.fixture(scope="module")
def exported(exported_suite: tuple[conformance.Suite, Path]) -> tuple[conformance.Suite, Path]:
    """The run's default export, into a folder where a killed export left its work folder
    (our mark, a process that is gone) and someone left a look-alike of their own."""
    return exported_suite


def test_a_killed_exports_folder_is_removed_by_the_next(
        exported: tuple[conformance.Suite, Path]) -> None:
    _, parent = exported
    assert sorted(p.name for p in parent.iterdir()) == [".suite.onnx-upsample-xyz789.tmp",
                                                        "suite"]


def test_an_interrupted_export_leaves_nothing(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(case: _cases.Case, x: np.ndarray) -> np.ndarray:
        raise KeyboardInterrupt

    monkeypatch.setattr(_suite, "expected_output", interrupted)
    with pytest.raises(KeyboardInterrupt):
        conformance.export(tmp_path / "suite", check_ort=False)
    assert list(tmp_path.iterdir()) == []


def test_must_refuse_cases_have_the_marker_and_no_output(
        exported: tuple[conformance.Suite, Path]) -> None:
    suite, _ = exported
    refused = [c for c in suite.cases if c.must_refuse is not None]
    assert len(refused) == sum(1 for c in _cases.all_cases(False) if c.must_refuse)
    for case in refused:
        marker = json.loads((case.path / "expect_refusal.json").read_text())
        assert marker == {"expect": "refusal", "reason": case.must_refuse}
        assert not list(case.path.rglob("output_*.pb"))
        assert (case.path / "test_data_set_0" / "input_0.pb").is_file()
        onnx.checker.check_model(onnx.load(case.path / "model.onnx"))  # a loadable model
        with pytest.raises(UpsampleError, match="must be refused"):
            case.expected()
    ordinary = [c for c in suite.cases if c.must_refuse is None]
    assert all(not (c.path / "expect_refusal.json").exists() for c in ordinary)
    assert ordinary[0].expected().size > 0


def test_upgraded_tree_has_the_same_cases_as_resize_models(
        exported: tuple[conformance.Suite, Path]) -> None:
    suite, parent = exported
    upgraded = conformance.load(parent / "suite", form="upgraded")
    skipped = suite.manifest["upgraded"]["not_converted"]
    assert upgraded.form == "upgraded" and skipped and all(skipped.values())
    assert [c.id for c in upgraded.cases] == [c.id for c in suite.cases if c.id not in skipped]
    assert set(skipped) == {c.id for c in suite.cases if c.must_refuse is not None}
    originals = {c.id: c for c in suite.cases}
    for case in upgraded.cases:
        assert case.path.parent.name == "upgraded"
        ops = [n.op_type for n in onnx.load(case.path / "model.onnx").graph.node]
        # a rank-0 Upsample is a copy: upgrade writes an Identity
        assert "Upsample" not in ops
        assert ("Identity" if case.id == "rank0_v7" else "Resize") in ops, (case.id, ops)
        original = originals[case.id].path
        for name in ("input_0.pb", "input_1.pb", "output_0.pb"):
            mine = original / "test_data_set_0" / name
            if mine.exists():
                assert (case.path / "test_data_set_0" / name).read_bytes() == mine.read_bytes()


def test_upgraded_models_run_on_onnxruntime(exported: tuple[conformance.Suite, Path]) -> None:
    pytest.importorskip("onnxruntime")
    _, parent = exported
    upgraded = conformance.load(parent / "suite", form="upgraded", verify=False)
    check = _checks.OrtCheck.start(True)
    for case in upgraded.cases:
        if case.id in ("v9_nearest_frac", "v9_linear_frac", "coordinate_1p7_11x14_nearest"):
            got = check.run((case.path / "model.onnx").read_bytes(), case.inputs())
            assert np.array_equal(got, case.expected()), case.id


def test_the_hash_covers_the_upgraded_tree(exported: tuple[conformance.Suite, Path],
                                           tmp_path: Path) -> None:
    import shutil

    suite, parent = exported
    copy = tmp_path / "copy"
    shutil.copytree(parent / "suite", copy)
    model = copy / "upgraded" / "test_upsample_rank2_linear" / "model.onnx"
    model.write_bytes(model.read_bytes() + b"\0")
    with pytest.raises(UpsampleError, match=r"rank2_linear \(upgraded/.*changed since export"):
        conformance.load(copy)  # the Upsample form: the hash covers both
    assert suite.content_hash.startswith("sha256:")
    with pytest.raises(UpsampleError, match="form is 'resize'; expected one of 'upsample', "
                                            "'upgraded'"):
        conformance.load(parent / "suite", form="resize")


def test_the_suite_readme_describes_the_marker(exported: tuple[conformance.Suite, Path]) -> None:
    suite, _ = exported
    text = (suite.directory / "README.md").read_text()
    assert suite.content_hash in text and suite.version in text
    assert '{"expect": "refusal", "reason":' in text and "expect_refusal.json" in text
    assert f"opset {suite.manifest['upgraded']['opset']}" in text


# ------------------------------------------------------------------ the sampled reference

@pytest.mark.slow
def test_large_outputs_are_checked_on_a_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    case = next(c for c in _cases.all_cases(False) if c.id == "large_linear_float32")
    x = _inputs.make_input(case)
    assert int(np.prod(onnx_upsample.output_shape(case.shape, case.scales))) \
        > _checks.FULL_REFERENCE_LIMIT
    good = _checks.expected_output(case, x)
    real = onnx_upsample.upsample

    def off_by_one_ulp_in_the_last_row(*args: object, **kwargs: object) -> np.ndarray:
        out = real(*args, **kwargs)  # type: ignore[arg-type]
        out[..., -1, :] = np.nextafter(out[..., -1, :], f32(np.inf))
        return out

    monkeypatch.setattr(onnx_upsample, "upsample", off_by_one_ulp_in_the_last_row)
    with pytest.raises(UpsampleError, match="the kernel and the reference disagree at"):
        _checks.expected_output(case, x)
    assert good.shape == (1, 4, 256, 256)
