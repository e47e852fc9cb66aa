"""The four versions of ONNX ``Upsample`` (1, 7, 9, 10) as data.

One table says, per version, where the scales come from, which inputs and attributes the node
has, which modes and element types the schema allows, the rank rule and whether the version is
deprecated; below it, the opsets that follow from it (which ones onnxruntime runs, which ones
``downgrade`` and ``upgrade`` write) and the inputs of ``Resize``, which replaces Upsample from
opset 10. The model tools (``onnx_upsample.onnx``) and the conformance suite read it, rather
than comparing opsets with numbers of their own; ``tests/test_onnx_versions.py`` checks it
against ``onnx.defs.get_schema``.

No onnx import here: this module is plain data and small helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .dtypes import ONNX_TYPES
from .modes import VERSION_MODE_NAMES

__all__ = [
    "DEFAULT_DOMAINS",
    "DEFAULT_DOWNGRADE_OPSET",
    "DEFAULT_UPGRADE_OPSET",
    "DOWNGRADE_OPSETS",
    "RESIZE_OPSET",
    "RESIZE_OPTIONAL_ROI_OPSET",
    "RESIZE_ROI_OPSET",
    "UPSAMPLE_OPSETS",
    "VERSIONS",
    "ScalesSource",
    "UpsampleVersion",
    "form_of_opset",
    "is_resize10_opset",
    "resize_scales_input",
    "runnable_opset",
    "takes_scales_input",
    "version_for_opset",
    "version_of_node",
]

ScalesSource = Literal["height_width_attributes", "scales_attribute", "scales_input"]

_SCALES_WORDS: dict[ScalesSource, str] = {
    "height_width_attributes": "attributes height_scale and width_scale",
    "scales_attribute": "a scales attribute",
    "scales_input": "scales as a second input",
}

#: The names of ONNX's default operator set in ``opset_import`` and ``NodeProto.domain``.
DEFAULT_DOMAINS = ("", "ai.onnx")

@dataclass(frozen=True)
class UpsampleVersion:
    """What one version of ONNX ``Upsample`` is.

    Attributes
    ----------
    version : int
        The operator's ``since_version``: 1, 7, 9 or 10.
    opsets : tuple of int
        The first and last default-domain opset (inclusive) whose ``Upsample`` is this
        version; ``None`` as the last means every later opset.
    scales_from : str
        ``"height_width_attributes"`` (v1: ``height_scale``, ``width_scale``, the scales are
        ``[1, 1, height_scale, width_scale]``), ``"scales_attribute"`` (v7) or
        ``"scales_input"`` (v9, v10: a float tensor, constant or computed at run time).
    inputs : tuple of str
        The node's inputs, in order.
    required_attributes, optional_attributes : tuple of str
        Attribute names (``mode`` is optional everywhere, default ``"nearest"``).
    attribute_types : dict
        Attribute name to ONNX attribute type name (``FLOAT``, ``FLOATS``, ``STRING``).
    modes : tuple of str
        The mode names the version's documentation defines (v1: ``nearest``, ``bilinear``).
    element_types : tuple of str
        ONNX type strings allowed for ``X`` and ``Y`` (type constraint ``T``).
    rank : int or None
        The only input rank allowed (4 for v1), or None for any rank.
    deprecated : bool
        True for v10: onnx's checker and onnxruntime reject any model using it.
    experimental : bool
        True for v1 (support level EXPERIMENTAL; no onnxruntime kernel).
    """

    version: int
    opsets: tuple[int, int | None]
    scales_from: ScalesSource
    inputs: tuple[str, ...]
    required_attributes: tuple[str, ...]
    optional_attributes: tuple[str, ...]
    attribute_types: dict[str, str]
    modes: tuple[str, ...]
    element_types: tuple[str, ...]
    rank: int | None
    deprecated: bool
    experimental: bool

    @property
    def attributes(self) -> tuple[str, ...]:
        """Every attribute name the version defines."""
        return self.required_attributes + self.optional_attributes

    @property
    def form(self) -> int:
        """The node form this version has, named by the first version that had it: 1 (the
        height and width attributes), 7 (a scales attribute) or 9 (a scales input; v10
        too)."""
        return min(v for v, info in VERSIONS.items() if info.scales_from == self.scales_from)

    @property
    def form_words(self) -> str:
        """The node form, for messages: "version-7 form (a scales attribute)"."""
        return f"version-{self.form} form ({_SCALES_WORDS[self.scales_from]})"


VERSIONS: dict[int, UpsampleVersion] = {
    1: UpsampleVersion(
        version=1,
        opsets=(1, 6),
        scales_from="height_width_attributes",
        inputs=("X",),
        required_attributes=("height_scale", "width_scale"),
        optional_attributes=("mode",),
        attribute_types={"height_scale": "FLOAT", "width_scale": "FLOAT", "mode": "STRING"},
        modes=VERSION_MODE_NAMES[1],
        element_types=("tensor(bool)", "tensor(int32)", "tensor(int64)", "tensor(float16)",
                       "tensor(float)", "tensor(double)"),
        rank=4,
        deprecated=False,
        experimental=True,
    ),
    7: UpsampleVersion(
        version=7,
        opsets=(7, 8),
        scales_from="scales_attribute",
        inputs=("X",),
        required_attributes=("scales",),
        optional_attributes=("mode",),
        attribute_types={"scales": "FLOATS", "mode": "STRING"},
        modes=VERSION_MODE_NAMES[7],
        element_types=ONNX_TYPES,
        rank=None,
        deprecated=False,
        experimental=False,
    ),
    9: UpsampleVersion(
        version=9,
        opsets=(9, 9),
        scales_from="scales_input",
        inputs=("X", "scales"),
        required_attributes=(),
        optional_attributes=("mode",),
        attribute_types={"mode": "STRING"},
        modes=VERSION_MODE_NAMES[9],
        element_types=ONNX_TYPES,
        rank=None,
        deprecated=False,
        experimental=False,
    ),
    10: UpsampleVersion(
        version=10,
        opsets=(10, None),
        scales_from="scales_input",
        inputs=("X", "scales"),
        required_attributes=(),
        optional_attributes=("mode",),
        attribute_types={"mode": "STRING"},
        modes=VERSION_MODE_NAMES[10],
        element_types=ONNX_TYPES,
        rank=None,
        deprecated=True,
        experimental=False,
    ),
}


def version_for_opset(opset: int) -> UpsampleVersion:
    """The ``Upsample`` version a model importing default-domain ``opset`` uses.

    Opsets 1-6 use v1, 7-8 v7, 9 v9, and 10 and later the deprecated v10.
    """
    for info in VERSIONS.values():
        first, last = info.opsets
        if first <= opset and (last is None or opset <= last):
            return info
    raise ValueError(f"opset is {opset}; default-domain opsets start at 1")


def form_of_opset(opset: int) -> int:
    """The node form (1, 7 or 9) that ``opset`` expects; v10 has the v9 form."""
    return version_for_opset(opset).form


def version_of_node(form: int, opset: int | None) -> UpsampleVersion:
    """The version a node of ``form`` runs as in a model importing ``opset``: the opset's
    version where that has the node's form (v10 for the v9 form at opset 10 and later),
    else the version that defined the form."""
    if opset is not None:
        at_opset = version_for_opset(opset)
        if at_opset.form == form:
            return at_opset
    return VERSIONS[form]


#: The versions onnxruntime runs (neither experimental nor deprecated), in order; the lowest
#: opset whose Upsample it runs and the newest opset that has an Upsample it runs.
RUNNABLE_VERSIONS = tuple(v for v in VERSIONS.values() if not v.experimental and not v.deprecated)
LOWEST_RUNNABLE_OPSET = min(v.opsets[0] for v in RUNNABLE_VERSIONS)
NEWEST_UPSAMPLE_OPSET = max(v.opsets[1] or v.opsets[0] for v in RUNNABLE_VERSIONS)
#: The opsets whose Upsample onnxruntime runs, which ``downgrade`` writes Upsample at
#: (Upsample-7 at 7 and 8, Upsample-9 at 9), and its default target.
UPSAMPLE_OPSETS = tuple(range(LOWEST_RUNNABLE_OPSET, NEWEST_UPSAMPLE_OPSET + 1))
DEFAULT_DOWNGRADE_OPSET = NEWEST_UPSAMPLE_OPSET
#: The default target of ``upgrade``: an opset the runtimes in use load (onnxruntime since
#: 1.14, TensorRT 8.6+, OpenVINO 2023+), not the newest one onnx knows.
DEFAULT_UPGRADE_OPSET = 18


def runnable_opset(opset: int) -> int:
    """The opset nearest to ``opset`` whose Upsample onnxruntime runs: ``opset`` itself at
    7-9, 7 below (Upsample-1 is experimental), 9 above (Upsample-10 is deprecated)."""
    return min(max(opset, LOWEST_RUNNABLE_OPSET), NEWEST_UPSAMPLE_OPSET)


def takes_scales_input(opset: int) -> bool:
    """Whether the Upsample of ``opset`` takes its scales as an input (v9, v10), which may be
    computed at run time, rather than as attributes (v1, v7)."""
    return version_for_opset(opset).scales_from == "scales_input"


#: The first opset with Resize (Resize-10), which replaces Upsample there: the opset whose
#: Upsample is deprecated, and the lowest one ``upgrade`` writes.
RESIZE_OPSET = 10
#: From this opset Resize takes X, roi, scales and sizes (Resize-11), and says its rounding
#: in attributes; Resize-10 takes X and scales, as Upsample-9 does.
RESIZE_ROI_OPSET = 11
#: From this opset Resize's roi may be left out (Resize-13).
RESIZE_OPTIONAL_ROI_OPSET = 13
#: The opsets ``downgrade`` writes: those of :data:`UPSAMPLE_OPSETS`, and the first opset
#: with Resize, where it writes Resize-10 (never the deprecated Upsample-10, which onnx's
#: checker and onnxruntime refuse).
DOWNGRADE_OPSETS = (*UPSAMPLE_OPSETS, RESIZE_OPSET)


def is_resize10_opset(opset: int | None) -> bool:
    """Whether a Resize in a model importing default-domain ``opset`` is Resize-10 (X and
    scales; asymmetric coordinates, onnxruntime's own nearest rounding)."""
    return opset is not None and RESIZE_OPSET <= opset < RESIZE_ROI_OPSET


def resize_scales_input(opset: int | None) -> int:
    """Which input of a Resize at ``opset`` holds its scales: 1 in Resize-10 (X, scales),
    2 from Resize-11 on (X, roi, scales, sizes)."""
    return 1 if is_resize10_opset(opset) else 2


#: The node forms that take any rank, for messages ("version-7/9").
ANY_RANK_FORMS = "version-" + "/".join(
    sorted({str(v.form) for v in VERSIONS.values() if v.rank is None}))
