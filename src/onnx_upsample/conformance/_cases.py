"""The cases of the ONNX ``Upsample`` conformance suite (numpy and onnx; no runtime).

A case is one ``Upsample`` node (version 1, 7, 9 or 10) in a one-node model, one input and
its expected output, or an invalid node that must be refused. This module holds the table
of cases; their input data is :mod:`._inputs`, their models :mod:`._models`. Case IDs are
part of the suite's contract: a released ID never changes meaning; new cases get new IDs
and a new :data:`SUITE_VERSION`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .._api import output_shape
from .._spec.dtypes import BY_NAME, ONNX_TYPES, TYPES, onnx_type_names
from .._spec.modes import MODES
from .._spec.rules import ort_linear_axes
from .._spec.versions import VERSIONS

#: Bumped whenever a case is added, removed or changes its data; IDs never change meaning.
SUITE_VERSION = "2.1"

#: The onnxruntime release whose behaviour the ``ort-*`` tags describe (docs/semantics.md §2).
ORT_MEASURED = "1.32"

# What ORT 1.32 does with a case: runs it bit-identically, runs it with a documented
# difference (docs/semantics.md §2), or refuses it (no kernel for the version, type, rank or axes).
ORT_EXACT, ORT_DIFFERS, ORT_REFUSES = "exact", "differs", "refuses"

# The spec's 15 element types of Upsample-7/9/10, in the element-type table's order (numpy
# names; "string" is ONNX STRING, which numpy holds as str, bytes or object arrays).
SPEC_TYPES = tuple(dict.fromkeys(
    "string" if t.onnx == "tensor(string)" else t.name for t in TYPES if t.onnx in ONNX_TYPES))
# The types linear mode is defined for.
NUMERIC_TYPES = tuple(t for t in SPEC_TYPES if t in BY_NAME and BY_NAME[t].linear_ok)
# Upsample-1 constrains T to these (its schema's list).
V1_TYPES = onnx_type_names(VERSIONS[1].element_types)
# The types onnxruntime 1.32 has an Upsample kernel for.
ORT_TYPES = tuple(t.name for t in TYPES if t.ort)

FORMS = ("v1", "v7", "v9", "v9-input", "v9-computed", "v10")
OPSET_OF_FORM = {"v1": 1, "v7": 7, "v9": 9, "v9-input": 9, "v9-computed": 9, "v10": 10}


@dataclass(frozen=True)
class Case:
    """One conformance case: a one-node Upsample model, its input and what it must give.

    ``scales`` are float32 values (held as Python floats, exactly); for the
    ``v9-computed`` form they are the values the graph computes at run time.
    ``ort`` is what onnxruntime 1.32 does with the case (measured when the suite is
    exported). ``data`` names the input pattern (see :func:`._inputs.make_input`).
    ``must_refuse`` is, for a case whose node is invalid, one line saying what is invalid
    and what the spec says; such a case has no expected output: a runtime must refuse it.
    """

    id: str
    group: str
    description: str
    form: str
    mode: str
    dtype: str
    shape: tuple[int, ...]
    scales: tuple[float, ...]
    data: str = "random"
    ort: str = ORT_EXACT
    full_only: bool = False
    extra_tags: tuple[str, ...] = field(default=())
    must_refuse: str | None = None

    @property
    def name(self) -> str:
        """The directory name, in onnx's backend-test convention."""
        return f"test_upsample_{self.id}"

    @property
    def opset(self) -> int:
        return OPSET_OF_FORM[self.form]

    @property
    def tags(self) -> tuple[str, ...]:
        whole = all(math.isfinite(s) and s == int(s) for s in self.scales)
        tags = [self.form, self.mode, self.dtype, f"rank{len(self.shape)}",
                "integer-scales" if whole else "fractional-scales"]
        if self.must_refuse is not None:
            tags.append("must-refuse")
        if self.ort == ORT_DIFFERS:
            tags.append("ORT-documented-difference")
        elif self.ort == ORT_REFUSES:
            tags.append("beyond-ORT")
        return tuple(tags) + self.extra_tags


def _f32(values: tuple[float, ...] | list[float]) -> tuple[float, ...]:
    return tuple(float(np.float32(v)) for v in values)


def ort_status(form: str, mode: str, dtype: str, scales: tuple[float, ...]) -> str:
    """Whether ORT 1.32 has a kernel for the case (docs/peers.md §2-§4); differences are marked
    by the case table itself."""
    # ORT registers Upsample 7 to 9 only: versions 1 and 10 fail to load
    if form in ("v1", "v10") or dtype not in ORT_TYPES:
        return ORT_REFUSES
    rank = len(scales)
    if rank == 0:
        return ORT_EXACT if mode == "nearest" and form == "v7" else ORT_REFUSES
    if mode == "nearest":
        return ORT_EXACT
    return ORT_EXACT if ort_linear_axes([np.float32(s) for s in scales]) is not None \
        else ORT_REFUSES


def _case(id: str, group: str, description: str, form: str, mode: str, dtype: str,
          shape: tuple[int, ...], scales: tuple[float, ...], data: str = "random",
          ort: str | None = None, full_only: bool = False,
          extra_tags: tuple[str, ...] = (), must_refuse: str | None = None) -> Case:
    scales = _f32(scales)
    status = ort if ort is not None else ort_status(form, mode, dtype, scales)
    return Case(id, group, description, form, mode, dtype, tuple(shape), scales, data, status,
                full_only, extra_tags, must_refuse)


def _label(value: float) -> str:
    """A scale as an ID fragment: 2 -> '2', 1.5 -> '1p5', 1.3333334 -> '1p3333334'."""
    return np.format_float_positional(np.float32(value), trim="-").replace(".", "p")


def _forms() -> Iterator[Case]:
    shape = (1, 2, 3, 4)
    for mode in MODES:
        for scales, kind in (((1, 1, 2, 3), "int"), ((1, 1, 1.5, 2.5), "frac")):
            for form in FORMS:
                case_scales = _computed_scales(shape, scales) if form == "v9-computed" \
                    else scales
                yield _case(
                    f"{form.replace('-', '_')}_{mode}_{kind}", "version forms",
                    f"Upsample as {form} writes it ({_FORM_WORDS[form]}), {mode}, "
                    f"scales {list(_f32(scales))} on float32 {list(shape)}",
                    form, mode, "float32", shape, case_scales, "ramp")


def _computed_scales(shape: tuple[int, ...], scales: tuple[float, ...]) -> tuple[float, ...]:
    """The scales a ``v9-computed`` graph computes: f32(output size) / f32(input size), as
    the float32 ``Div`` of the graph gives them (they may differ from the intended ones)."""
    sizes = np.asarray(output_shape(shape, _f32(scales)), np.float32)
    return tuple(float(v) for v in sizes / np.asarray(shape, np.float32))


_FORM_WORDS = {
    "v1": "opset 1, height_scale/width_scale attributes, mode 'bilinear' for linear",
    "v7": "opset 7, scales attribute",
    "v9": "opset 9, scales initializer",
    "v9-input": "opset 9, scales fed as a graph input at run time",
    "v9-computed": "opset 9, scales computed from the input's shape as PyTorch's size= "
                   "export does",
    "v10": "opset 10, deprecated, scales initializer",
}


def _types() -> Iterator[Case]:
    for dtype in SPEC_TYPES:
        yield _case(f"type_{dtype}_nearest", "element types",
                    f"nearest on {dtype}, fractional scales [1, 1.5, 2.5]", "v9", "nearest",
                    dtype, (2, 3, 4), (1, 1.5, 2.5), "random")
        if dtype in NUMERIC_TYPES:
            yield _case(f"type_{dtype}_linear", "element types",
                        f"linear on {dtype} with values spread over its range, scales "
                        f"[1.5, 2.5]", "v9", "linear", dtype, (3, 4), (1.5, 2.5), "random")
    for dtype in V1_TYPES:
        yield _case(f"type_{dtype}_v1_nearest", "element types",
                    f"Upsample-1 nearest on {dtype} (a type its schema lists)", "v1",
                    "nearest", dtype, (1, 1, 2, 3), (1, 1, 2, 1.5), "random")


_RANK_SCALES = {
    1: (1.5,), 2: (2.5, 1.5), 3: (1.5, 2, 1.3333334), 4: (1, 1, 2.5, 1.5),
    5: (1, 1, 1.5, 2, 2.5), 6: (1.5, 1, 2, 1, 1.5, 2),
}
_RANK_SHAPES = {1: (7,), 2: (3, 5), 3: (2, 3, 4), 4: (2, 3, 3, 4), 5: (1, 2, 2, 3, 3),
                6: (2, 1, 2, 2, 3, 2)}


def _ranks() -> Iterator[Case]:
    for rank in range(1, 7):
        for mode in MODES:
            yield _case(f"rank{rank}_{mode}", "ranks 1-6",
                        f"{mode} on rank {rank}, scales {list(_f32(_RANK_SCALES[rank]))}",
                        "v9", mode, "float32", _RANK_SHAPES[rank], _RANK_SCALES[rank])
    # the linear axis patterns ORT has kernels for, and those it refuses
    patterns = {
        "nchw": ((2, 2, 3, 4), (1, 1, 1.5, 2.5), "N and C kept, H and W scaled (ORT's NCHW "
                                                 "kernel)"),
        "nhwc": ((1, 3, 4, 2), (1, 1.5, 2.5, 1), "N and C kept, C last (ORT's NHWC "
                                                 "kernel)"),
        "batch": ((2, 2, 3, 4), (2, 1, 1.5, 2.5), "the batch axis scaled too"),
        "channel": ((1, 2, 3, 4), (1, 2, 1.5, 1.5), "the channel axis scaled"),
        "one_axis": ((1, 2, 3, 4), (1, 1, 1, 2), "only W scaled: ORT interpolates H too, "
                                                 "with weights 1 and 0, 0.5 and 0.5 on its "
                                                 "last row"),
        "rank5_hw": ((1, 1, 2, 3, 4), (1, 1, 1, 1.5, 2.5), "3-D volume with depth kept"),
        "rank5_dhw": ((1, 2, 2, 3, 3), (1, 1, 2, 1.5, 2.5), "3-D volume, trilinear"),
        "rank5_channel": ((1, 2, 2, 2, 3), (1, 2, 2, 1, 1.5), "volume with C scaled"),
    }
    for key, (shape, scales, words) in patterns.items():
        yield _case(f"linear_axes_{key}", "linear axis patterns",
                    f"linear {list(shape)} x {list(_f32(scales))}: {words}", "v9", "linear",
                    "float32", shape, scales)


# float32 values that exporters write (1.3333334 = 4/3, 1.6 = 480/300, 2.1333334 = 640/300)
_SCALE_VALUES = (2, 3, 4, 1.5, 1.3333334, 1.6, 2.1333334, 1.0000001, 1.1, 2.5, 7.9)


def _scale_values() -> Iterator[Case]:
    for value in _SCALE_VALUES:
        for mode in MODES:
            yield _case(f"scale_{_label(value)}_{mode}", "scale values",
                        f"{mode}, both spatial axes scaled by float32 {float(np.float32(value))!r}",
                        "v9", mode, "float32", (1, 1, 5, 7), (1, 1, value, value), "ramp")


def _edges() -> Iterator[Case]:
    for mode in MODES:
        yield _case(f"size1_axis_{mode}", "size-1 and empty axes",
                    f"{mode}: a length-1 axis scaled by 3 (its two taps are the same element)",
                    "v9", mode, "float32", (1, 1, 1, 4), (1, 1, 3, 1.5))
        yield _case(f"size1_all_{mode}", "size-1 and empty axes",
                    f"{mode}: a single element scaled to 3 x 2", "v9", mode, "float32",
                    (1, 1), (3, 2))
        yield _case(f"empty_input_{mode}", "size-1 and empty axes",
                    f"{mode}: an empty input axis stays empty", "v9", mode, "float32",
                    (2, 0, 3), (1, 2, 2) if mode == "nearest" else (2, 1, 2))
        yield _case(f"no_resize_{mode}", "no-resize copy",
                    f"{mode}: scales 1.2 and 1.4 change no length of a 2 x 2 plane "
                    f"(2 x 1.4 = 2.8 -> 2): the output is a copy of the input", "v9", mode,
                    "float32", (1, 1, 2, 2), (1, 1, 1.2, 1.4))
        yield _case(f"identity_{mode}", "no-resize copy",
                    f"{mode}: every scale 1", "v9", mode, "float32", (2, 3, 4), (1, 1, 1))
    yield _case("rank0_v7", "size-1 and empty axes",
                "a rank-0 input with an empty scales attribute (Upsample-7)", "v7", "nearest",
                "float32", (), ())


def _special_values() -> Iterator[Case]:
    for dtype in ("float16", "float32", "float64"):
        for mode in MODES:
            yield _case(f"special_{dtype}_{mode}", "special values",
                        f"{mode} on {dtype} with NaN, +-inf, -0.0, subnormals and the "
                        f"largest finite values among ordinary ones", "v9", mode, dtype,
                        (1, 1, 4, 6), (1, 1, 1.5, 2.5), "special")
    for dtype in ("complex64", "complex128"):
        yield _case(f"special_{dtype}_linear", "special values",
                    f"linear on {dtype} whose parts hold inf and NaN (each part computed "
                    f"on its own)", "v9", "linear", dtype, (4, 6), (1.5, 2.5), "special")
    for dtype in ("int8", "uint8", "int16", "uint16", "int64", "uint32", "uint64"):
        yield _case(f"extremes_{dtype}_linear", "integer extremes",
                    f"linear on {dtype} between the type's smallest and largest values "
                    f"(truncated toward zero, saturated)", "v9", "linear", dtype, (4, 6),
                    (1.5, 2.5), "extremes")
    yield _case("extremes_int32_linear", "integer extremes",
                "linear on int32 near its largest value: float32 rounds 2147483647 up to "
                "2**31, which Upsample saturates and ORT wraps to -2**31",
                "v9", "linear", "int32", (4, 6), (1.5, 2.5), "extremes", ort=ORT_DIFFERS)
    yield _case("extremes_bool_nearest", "integer extremes",
                "nearest on bool", "v9", "nearest", "bool", (3, 5), (2.5, 1.5), "random")


def _ort_differences() -> Iterator[Case]:
    for dtype in ("uint8", "int8"):
        yield _case(f"nhwc_fixed_point_{dtype}", "ORT-documented differences",
                    f"linear {dtype} NHWC (s0 == s3 == 1, s1 != 1): ORT takes a fixed-point "
                    f"path that differs from its float formula by 1 in about 4% of elements",
                    "v9", "linear", dtype, (1, 12, 16, 3), (1, 1.7, 2.3, 1), "random",
                    ort=ORT_DIFFERS)
    yield _case("size_beyond_2p24_nearest", "ORT-documented differences",
                "nearest 1-D uint8, 4 elements x 5592405.5: past 2**24 ORT's float32 "
                "division rounds output 16777216 up to input index 3 (exactly 2.99999991)",
                "v9", "nearest", "uint8", (4,), (5592405.5,), "ramp", ort=ORT_DIFFERS,
                full_only=True)


def _large() -> Iterator[Case]:
    yield _case("large_nearest_uint8", "large outputs (threads)",
                "nearest uint8 image [1, 3, 256, 256] x 2: large enough for a runtime's "
                "threads", "v9", "nearest", "uint8", (1, 3, 256, 256), (1, 1, 2, 2))
    yield _case("large_nearest_float32_frac", "large outputs (threads)",
                "nearest float32 [1, 8, 128, 128] x 1.5", "v9", "nearest", "float32",
                (1, 8, 128, 128), (1, 1, 1.5, 1.5))
    yield _case("large_linear_float32", "large outputs (threads)",
                "linear float32 [1, 4, 128, 128] x 2", "v9", "linear", "float32",
                (1, 4, 128, 128), (1, 1, 2, 2))
    yield _case("large_linear_float32_frac_full", "large outputs (threads)",
                "linear float32 [2, 16, 160, 160] x [1, 1, 1.3333334, 2.1333334]", "v9",
                "linear", "float32", (2, 16, 160, 160), (1, 1, 1.3333334, 2.1333334),
                full_only=True)
    yield _case("large_linear_uint8_nhwc_full", "large outputs (threads)",
                "linear uint8 channel-last image [1, 256, 256, 3] x [1, 2, 2, 1]", "v9",
                "linear", "uint8", (1, 256, 256, 3), (1, 2, 2, 1), full_only=True)
    yield _case("large_linear_volume_full", "large outputs (threads)",
                "trilinear float32 volume [1, 2, 48, 64, 64] x 2", "v9", "linear", "float32",
                (1, 2, 48, 64, 64), (1, 1, 2, 2, 2), full_only=True)


def all_cases(full: bool = False) -> tuple[Case, ...]:
    """Every case of the suite, in a stable order; ``full`` adds the large ones."""
    # suite 1.0's groups first, in their order; then those added in 2.0
    generators = (_forms, _types, _ranks, _scale_values, _edges, _special_values,
                  _ort_differences, _large, _plain_types, _size_rules, _coordinate_rules,
                  _beyond_2p24, _must_refuse)
    cases = tuple(case for make in generators for case in make()
                  if full or not case.full_only)
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):  # pragma: no cover - a table error, caught by the tests
        raise AssertionError("duplicate case IDs")
    return cases


# --------------------------------------------------------------------------- added in 2.0

# Only H and W scaled on a plain NCHW shape: what runtimes with spatial-only Resize kernels
# accept, so that their handling of the element type itself is reached.
_PLAIN_SHAPE, _PLAIN_SCALES = (1, 2, 3, 4), (1, 1, 1.5, 2.5)


def _plain_types() -> Iterator[Case]:
    for dtype in SPEC_TYPES:
        for mode in MODES if dtype in NUMERIC_TYPES else MODES[:1]:
            yield _case(f"type_{dtype}_nchw_{mode}", "element types (NCHW)",
                        f"{mode} on {dtype}, NCHW {list(_PLAIN_SHAPE)} with only H and W "
                        f"scaled {list(_f32(_PLAIN_SCALES))}", "v9", mode, dtype,
                        _PLAIN_SHAPE, _PLAIN_SCALES)


# (H, W, scale H, scale W): every case separates trunc of the float32 product n*s
# (Upsample) from floor of the exact product (f32(1.4) * 5 is 6.9999998, rounded to 7.0
# in float32), and the rounding rules on W: 4.5, 10.5, 6.5 are ties whose floor is even
# (round half to even keeps it, half away from zero does not); 6.8, 7.5 round up.
_SIZE_CASES = ((5, 3, 1.4, 1.5), (10, 7, 1.3, 1.5), (5, 5, 1.8, 1.3), (10, 4, 2.1, 1.7),
               (5, 6, 2.6, 1.25))


def _size_rules() -> Iterator[Case]:
    for h, w, s_h, s_w in _SIZE_CASES:
        exact = [int(v) for v in (np.float64(np.float32(s_h)) * h, np.float64(np.float32(s_w)) * w)]
        for mode in MODES:
            yield _case(
                f"size_{h}x{_label(s_h)}_{w}x{_label(s_w)}_{mode}", "output-size rules",
                f"{mode}, [1, 1, {h}, {w}] x [1, 1, {np.float32(s_h)!r}, {np.float32(s_w)!r}]: "
                f"output {list(output_shape((h, w), _f32((s_h, s_w))))} (trunc of the "
                f"float32 products), not the exact products' floor {exact} nor "
                "their rounding", "v9", mode, "float32", (1, 1, h, w), (1, 1, s_h, s_w))


# (H, W, scale): sizes where PyTorch's nearest index floor(o * float32(1/s)) differs from
# Upsample's floor(o / s) (the first at 1.2 is n = 16, at 1.7 n = 11); the float64
# quotient and a scale of out/in differ there too.
_COORDINATE_CASES = ((16, 20, 1.2), (11, 14, 1.7), (16, 18, 2.2), (32, 6, 2.7),
                     (31, 8, 1.1))


def _coordinate_rules() -> Iterator[Case]:
    for h, w, scale in _COORDINATE_CASES:
        for mode in MODES:
            yield _case(f"coordinate_{_label(scale)}_{h}x{w}_{mode}", "coordinate rules",
                        f"{mode}, [1, 1, {h}, {w}] x {np.float32(scale)!r} on H and W: "
                        "PyTorch's reciprocal multiply, float64 division and a scale of "
                        "out/in give other source indices than the float32 division",
                        "v9", mode, "float32", (1, 1, h, w), (1, 1, scale, scale))


def _beyond_2p24() -> Iterator[Case]:
    for mode, ort in (("nearest", ORT_DIFFERS), ("linear", None)):
        yield _case(f"size_beyond_2p24_nchw_{mode}", "beyond 2**24",
                    f"{mode} uint8 [1, 1, 1, 4] x [1, 1, 1, 5592405.5]: W becomes 22369622, "
                    "past 2**24, where float32 no longer holds every output index"
                    + (" (ORT's nearest index differs there)" if ort else ""),
                    "v9", mode, "uint8", (1, 1, 1, 4), (1, 1, 1, 5592405.5), "ramp",
                    ort=ort, full_only=True)


# Invalid nodes a runtime must refuse. Upsample-7/9/10 define scales as one value >= 1 per
# axis of X and the modes nearest and linear; Upsample-1 height_scale/width_scale >= 1 too.
_REFUSALS = (
    ("scale_below_1", "v9", "nearest", (1, 1, 0.5, 2),
     "scale 0.5 on H: Upsample's scales must be >= 1 (it only enlarges)"),
    ("scale_below_1_v7", "v7", "linear", (1, 1, 2, 0.75),
     "scale 0.75 on W: Upsample's scales must be >= 1 (it only enlarges)"),
    ("scale_nan", "v9", "nearest", (1, 1, math.nan, 2),
     "scale NaN on H: Upsample's scales must be >= 1, and NaN is not"),
    ("scale_inf", "v9", "linear", (1, 1, 2, math.inf),
     "scale inf on W: the output would be infinitely long (scales must be finite, >= 1)"),
    ("scale_zero_input", "v9-input", "nearest", (1, 1, 0, 2),
     "scale 0 on H, fed at run time: Upsample's scales must be >= 1"),
    ("scales_too_few", "v9", "nearest", (1, 2, 2),
     "3 scales for a rank-4 X: Upsample needs one scale per axis of X"),
    ("scales_too_many_v7", "v7", "nearest", (1, 1, 2, 2, 2),
     "5 scales for a rank-4 X: Upsample needs one scale per axis of X"),
    ("mode_cubic", "v9", "cubic", (1, 1, 2, 2),
     "mode 'cubic': Upsample defines only 'nearest' and 'linear' (Resize has cubic)"),
    ("mode_unknown_v7", "v7", "area", (1, 1, 2, 2),
     "mode 'area': Upsample defines only 'nearest' and 'linear'"),
    ("v1_scale_below_1", "v1", "nearest", (1, 1, 0.5, 2),
     "height_scale 0.5: Upsample-1's height_scale and width_scale must be >= 1"),
)


def _must_refuse() -> Iterator[Case]:
    for key, form, mode, scales, reason in _REFUSALS:
        yield _case(f"refuse_{key}", "must refuse", f"must be refused: {reason}", form, mode,
                    "float32", (1, 1, 2, 3), scales, ort=ORT_REFUSES, must_refuse=reason)
