"""The versions table (onnx_upsample.onnx._versions) against onnx's own schemas."""

from __future__ import annotations

import pytest

onnx = pytest.importorskip("onnx")

from onnx.defs import OpSchema  # noqa: E402

from onnx_upsample.onnx._versions import (  # noqa: E402
    VERSIONS,
    form_of_opset,
    version_for_opset,
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
