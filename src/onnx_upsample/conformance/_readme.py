"""The README.md an export writes at the top of the suite: its layout, for people who get the
folder without onnx-upsample."""

from __future__ import annotations

from typing import Any

from ._checks import FULL_REFERENCE_LIMIT

__all__ = ["readme"]

_TEXT = """\
# {suite} {version}

Content hash `{content_hash}`; {count} cases ({refusals} must be refused, {upgraded}
also as a Resize model). `manifest.json` lists every case: its ID, group, description,
form, opset, mode, element type, shapes, scales, tags, what onnxruntime {ort} does with it,
and the sha256 of its files.

## Layout (onnx's backend-test data layout)

    upsample/test_upsample_<id>/model.onnx              a one-node Upsample model
    upsample/test_upsample_<id>/test_data_set_0/input_0.pb   X
    upsample/test_upsample_<id>/test_data_set_0/input_1.pb   scales (v9-input form only)
    upsample/test_upsample_<id>/test_data_set_0/output_0.pb  Y, the expected output
    upgraded/test_upsample_<id>/...                      the same case as a Resize model

Run them with onnxruntime's `onnx_test_runner upsample` or
`onnx.backend.test.loader.load_model_tests(data_dir=".", kind="upsample")`.

## Cases that must be refused

A case whose node is invalid (scales below 1, NaN or infinite, one scale too few or too
many, an unknown mode) has no `output_0.pb` and, beside `model.onnx`, the marker
`{marker}`:

    {{"expect": "refusal", "reason": "<what is invalid and what the spec says>"}}

A runtime passes such a case by refusing the model or the run; running it is a failure.
Loaders that do not know the marker ignore the file (and find no expected output).

## Upgraded models

`upgraded/` holds, for each case that `onnx_upsample.onnx.upgrade` converts, the Resize
model it writes (opset {opset}, `coordinate_transformation_mode="asymmetric"`, nearest_mode
`floor`) with the same inputs and expected output, under the same case ID. The manifest's
`upgraded.not_converted` says why the other cases are not there.

## Expected outputs

Each is onnx-upsample's kernel, checked bit for bit against its slow spec-literal
reference (every element of outputs up to {limit} elements; beyond, a fixed sample with
every axis' edges and the indices around 2**24), against the model run by onnx's
ReferenceEvaluator with onnx-upsample's operator (every element), and against
onnxruntime where it was installed. Equality is bitwise; any NaN equals any NaN; -0.0 and
+0.0 differ.
"""


def readme(manifest: dict[str, Any]) -> str:
    """The suite's README.md, from its manifest."""
    records = manifest["cases"]
    return _TEXT.format(
        suite=manifest["suite"], version=manifest["version"],
        content_hash=manifest["content_hash"], count=len(records),
        refusals=sum(1 for r in records if r.get("must_refuse")),
        upgraded=sum(1 for r in records if r.get("upgraded")),
        ort=manifest["ort_tags_measured_with"].split()[-1], marker=manifest["must_refuse_marker"],
        opset=manifest["upgraded"]["opset"], limit=f"{FULL_REFERENCE_LIMIT:,}")
