"""The versions table (onnx_upsample._spec.versions) against onnx's own schemas."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")

from onnx.defs import OpSchema  # noqa: E402

from onnx_upsample._spec.versions import (  # noqa: E402
    RESIZE_OPSET,
    RESIZE_OPTIONAL_ROI_OPSET,
    RESIZE_ROI_OPSET,
    RUNNABLE_VERSIONS,
    VERSIONS,
    UpsampleVersion,
    form_of_opset,
    is_resize10_opset,
    resize_scales_input,
    runnable_opset,
    takes_scales_input,
    version_for_opset,
    version_of_node,
)

_ATTRIBUTE_TYPES = {"FLOAT": OpSchema.AttrType.FLOAT, "FLOATS": OpSchema.AttrType.FLOATS,
                    "STRING": OpSchema.AttrType.STRING}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_table_matches_onnx_schema(version: int) -> None:
    info = VERSIONS[version]
    schema = onnx.defs.get_schema("Upsample", version)
    assert schema.since_version == version
    assert tuple(p.name for p in schema.inputs) == info.inputs
    assert all(p.option == OpSchema.FormalParameterOption.Single for p in schema.inputs)
    assert tuple(p.name for p in schema.outputs) == ("Y",)
    required = {name for name, a in schema.attributes.items() if a.required}
    optional = {name for name, a in schema.attributes.items() if not a.required}
    assert required == set(info.required_attributes)
    assert optional == set(info.optional_attributes)
    for name, attribute in schema.attributes.items():
        assert attribute.type == _ATTRIBUTE_TYPES[info.attribute_types[name]]
    assert schema.attributes["mode"].default_value.s == b"nearest"
    (constraint,) = schema.type_constraints
    assert constraint.type_param_str == "T"
    assert tuple(constraint.allowed_type_strs) == info.element_types
    assert schema.deprecated == info.deprecated
    experimental = schema.support_level == OpSchema.SupportType.EXPERIMENTAL
    assert experimental == info.experimental


@pytest.mark.parametrize("opset", range(1, onnx.defs.onnx_opset_version() + 1))
def test_version_for_every_opset_matches_onnx(opset: int) -> None:
    expected = onnx.defs.get_schema("Upsample", opset).since_version
    assert version_for_opset(opset).version == expected
    first, last = version_for_opset(opset).opsets
    assert first <= opset and (last is None or opset <= last)


def test_scales_sources_and_forms() -> None:
    assert VERSIONS[1].scales_from == "height_width_attributes"
    assert VERSIONS[7].scales_from == "scales_attribute"
    assert VERSIONS[9].scales_from == VERSIONS[10].scales_from == "scales_input"
    assert VERSIONS[1].rank == 4 and all(VERSIONS[v].rank is None for v in (7, 9, 10))
    assert VERSIONS[1].modes == ("nearest", "bilinear")
    assert [form_of_opset(o) for o in (1, 6, 7, 8, 9, 10, 28)] == [1, 1, 7, 7, 9, 9, 9]
    with pytest.raises(ValueError, match="opset is 0"):
        version_for_opset(0)


def test_bfloat16_is_not_an_upsample_type() -> None:
    # docs/peers.md §0: all_tensor_types has 15 types, no bfloat16 (the checker rejects it)
    assert len(VERSIONS[9].element_types) == 15
    assert "tensor(bfloat16)" not in VERSIONS[9].element_types


PACKAGE = Path(__file__).resolve().parents[1] / "src" / "onnx_upsample"


def _attributes_read() -> set[str]:
    """Every ``.name`` read anywhere in the package (the table's own helpers too)."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return names


def test_every_field_of_the_table_is_read() -> None:
    """The table is what the node logic reads: a field nothing reads is a rule that lives
    somewhere else (version numbers compared in code) and can drift from it."""
    fields = {field.name for field in dataclasses.fields(UpsampleVersion)} - {"version"}
    unread = fields - _attributes_read()
    assert not unread, f"fields of UpsampleVersion that no code reads: {sorted(unread)}"


def test_the_node_logic_compares_no_version_numbers() -> None:
    """What a version is (its form, rank, modes, inputs, deprecation) comes from the table,
    not from comparing form or version numbers in the node reader."""
    source = "".join((PACKAGE / "onnx" / name).read_text()
                     for name in ("_node.py", "_node_info.py", "_node_checks.py"))
    compared = re.findall(r"\b(?:form|version)\s*(?:==|!=|<=|>=|<|>|in)\s*\(?\d", source)
    assert not compared, compared


def test_the_model_tools_compare_no_opset_with_a_number() -> None:
    """Which opset has which Upsample (scales as attributes or an input, deprecated at 10,
    run by onnxruntime at 7-9) and which Resize (X and scales at 10, roi from 11) comes from
    the versions module, not from opsets compared with numbers in the tools."""
    names = ("_original.py", "_check.py", "_feeds.py", "_fold.py", "_node_checks.py",
             "convert/_downgrade.py", "convert/_upgrade.py", "convert/_summary.py")
    source = "".join((PACKAGE / "onnx" / name).read_text() for name in names)
    compared = re.findall(r"\b(?:opset|target|source)(?: or \w+\))?\s*(?:==|!=|<=|>=|<|>)\s*"
                          r"\d|\d\s*(?:==|!=|<=|>=|<|>)\s*\(?(?:opset|target|source)\b", source)
    assert not compared, compared


@pytest.mark.parametrize("opset", range(1, onnx.defs.onnx_opset_version() + 1))
def test_resize_at_every_opset_matches_onnx(opset: int) -> None:
    try:
        schema = onnx.defs.get_schema("Resize", opset)
    except onnx.defs.SchemaError:
        assert opset < RESIZE_OPSET and not is_resize10_opset(opset)
        return
    assert opset >= RESIZE_OPSET
    names = [p.name for p in schema.inputs]
    assert names[resize_scales_input(opset)] == "scales"
    assert is_resize10_opset(opset) == (schema.since_version == 10) == (names == ["X", "scales"])
    assert ("roi" in names) == (opset >= RESIZE_ROI_OPSET)
    if "roi" in names:
        optional = schema.inputs[1].option == OpSchema.FormalParameterOption.Optional
        assert optional == (opset >= RESIZE_OPTIONAL_ROI_OPSET)


@pytest.mark.parametrize("opset", range(1, onnx.defs.onnx_opset_version() + 1))
def test_what_each_opsets_upsample_takes_and_where_onnxruntime_runs_it(opset: int) -> None:
    schema = onnx.defs.get_schema("Upsample", opset)
    assert takes_scales_input(opset) == ("scales" in [p.name for p in schema.inputs])
    # Upsample is deprecated where Resize arrives
    assert schema.deprecated == (opset >= RESIZE_OPSET)
    runnable = version_for_opset(runnable_opset(opset))
    assert runnable in RUNNABLE_VERSIONS
    assert (runnable_opset(opset) == opset) == (version_for_opset(opset) in RUNNABLE_VERSIONS)


def test_the_nearest_runnable_opset() -> None:
    assert [runnable_opset(o) for o in (1, 6, 7, 8, 9, 10, 18)] == [7, 7, 7, 8, 9, 9, 9]


@pytest.mark.parametrize(("version", "form", "words"), [
    (1, 1, "version-1 form (attributes height_scale and width_scale)"),
    (7, 7, "version-7 form (a scales attribute)"),
    (9, 9, "version-9 form (scales as a second input)"),
    (10, 9, "version-9 form (scales as a second input)"),
])
def test_each_version_names_its_node_form(version: int, form: int, words: str) -> None:
    assert (VERSIONS[version].form, VERSIONS[version].form_words) == (form, words)


@pytest.mark.parametrize(("form", "opset", "runs_as"), [
    (9, 9, 9), (9, 10, 10), (9, 18, 10), (7, 9, 7), (9, 7, 9), (1, 9, 1), (7, 7, 7),
    (9, None, 9),
])
def test_a_node_runs_as_its_forms_version_at_the_opset(form: int, opset: int | None,
                                                      runs_as: int) -> None:
    assert version_of_node(form, opset).version == runs_as
