"""Export the PyTorch models of tests/data/pytorch/: real exports of functional.interpolate by
PyTorch's legacy (TorchScript) exporter, the route by which most Upsample nodes in the wild
were written.

Each model is a small convolution net around one or two interpolations, exported at opsets
7-10 (Upsample-7, Upsample-9, Resize-10), with fixed and dynamic axes, scale factors and sizes
(fixed, and computed from the input's shape as ``x.shape[2] * 3 // 2``, which the exporter
writes as Shape, Gather, arithmetic and Concat nodes; for nearest at opset 10 also
``* 2 // 3``, below the input's size, and the two mixed, one per axis). The files are
committed so that the tests need no PyTorch; this script says how they were made and makes
them again:

    pip install torch==2.13.0 onnx onnxscript
    python scripts/export_pytorch_models.py tests/data/pytorch

The weights are seeded, so a re-export differs only where the exporter itself changed.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import torch
from torch import nn
from torch.nn import functional

OPSETS = (7, 8, 9, 10)


class Net(nn.Module):
    """conv -> interpolate -> conv; ``how`` says what the interpolation is given."""

    def __init__(self, how: str, mode: str) -> None:
        super().__init__()
        torch.manual_seed(len(how) * 7 + len(mode))
        self.how = how
        self.mode = mode
        self.head = nn.Conv2d(3, 4, 3, padding=1)
        self.tail = nn.Conv2d(4, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.head(x))
        options = {"align_corners": False} if self.mode == "bilinear" else {}
        if self.how == "scale2":
            y = functional.interpolate(y, scale_factor=2, mode=self.mode, **options)
        elif self.how == "scale1.5":
            y = functional.interpolate(y, scale_factor=1.5, mode=self.mode, **options)
        elif self.how == "size":
            y = functional.interpolate(y, size=(20, 30), mode=self.mode, **options)
        elif self.how == "computed":
            y = functional.interpolate(y, size=(x.shape[2] * 3 // 2, x.shape[3] * 3 // 2),
                              mode=self.mode, **options)
        elif self.how == "shrunk":  # computed sizes below the input's
            y = functional.interpolate(y, size=(x.shape[2] * 2 // 3, x.shape[3] * 2 // 3),
                              mode=self.mode, **options)
        elif self.how == "mixed":  # computed sizes above the input's on one axis, below on one
            y = functional.interpolate(y, size=(x.shape[2] * 3 // 2, x.shape[3] * 2 // 3),
                              mode=self.mode, **options)
        elif self.how == "twice":  # a YOLO-style head: two upsamples and a concat between
            z = functional.interpolate(y, scale_factor=2, mode=self.mode, **options)
            y = functional.interpolate(torch.cat([z, z * 0.5], 1), scale_factor=2, mode=self.mode,
                              **options)[:, :4]
        return self.tail(y)


CASES = [(how, mode) for how in ("scale2", "scale1.5", "size", "computed", "twice")
         for mode in ("nearest", "bilinear")] + [("shrunk", "nearest"), ("mixed", "nearest")]
COMPUTED = ("computed", "shrunk", "mixed")  # sizes computed from the input's


def export(directory: str) -> list[dict[str, object]]:
    os.makedirs(directory, exist_ok=True)
    made = []
    for opset in OPSETS:
        for how, mode in CASES:
            for dynamic in (False, True):
                if how in COMPUTED and not dynamic:
                    continue  # with fixed axes the exporter folds the sizes to constants
                if how in ("shrunk", "mixed") and opset != 10:
                    continue  # Resize-10's rounding is what they are for (Upsample-9 refuses
                    # scales below 1)
                name = f"{how}_{mode}_{'dynamic' if dynamic else 'fixed'}_opset{opset}.onnx"
                model = Net(how, mode).eval()
                args = (torch.randn(1, 3, 10, 14),)
                axes = {"x": {0: "batch", 2: "height", 3: "width"}, "y": {0: "batch"}}
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        torch.onnx.export(model, args, os.path.join(directory, name),
                                          opset_version=opset, dynamo=False,
                                          input_names=["x"], output_names=["y"],
                                          dynamic_axes=axes if dynamic else None)
                except Exception as error:  # the exporter refusing is data too
                    made.append({"file": name, "refused": f"{type(error).__name__}: "
                                 f"{str(error).splitlines()[0]}"})
                    continue
                made.append({"file": name, "opset": opset, "how": how, "mode": mode,
                             "dynamic": dynamic})
    with open(os.path.join(directory, "index.json"), "w") as handle:
        json.dump({"torch": torch.__version__, "models": made}, handle, indent=1)
        handle.write("\n")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    made = export(parser.parse_args().directory)
    print(f"{sum('refused' not in m for m in made)} exported, "
          f"{sum('refused' in m for m in made)} refused by the exporter")


if __name__ == "__main__":
    main()
