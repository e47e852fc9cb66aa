"""``run`` against onnxruntime's own session, on a YOLOv3-sized model (a script, not a test).

The model is YOLOv3's layout with random weights, written here with onnx.helper (no PyTorch
needed): input 1x3x416x416, the darknet-53 backbone and the three-scale head, 75 Conv (batch
normalization folded into them, as exporters write them), 72 LeakyRelu, 23 Add, 2 Concat,
and the two nearest x2 upsamplings of the head; 62 million weights, 248 MB. It is written in
three forms, the upsampling as:

- ``Upsample-9`` (opset 9), which onnxruntime runs: ``run`` runs the model whole;
- ``Resize-10`` (opset 10, what PyTorch's exporter writes at opset 10), which it runs too;
- ``Upsample-10`` (the opset-9 model importing opset 10), which onnxruntime refuses: ``run``
  runs it in pieces cut at the two Upsample nodes, those in onnx-upsample's kernel.

Each form is upgraded (``upgrade(model, opset=11)``: Resize-11) and onnxruntime's own time on
the upgraded file is the reference: ``InferenceSession(path)`` and one ``run``, what a user of
onnxruntime pays for one result. Beside it: the library call ``onnx_upsample.onnx.run(path,
inputs)`` (reading the file, onnxruntime's session, the run, the pieces where cut), and the
command ``onnx-upsample run MODEL --input images=x.npy --output-dir DIR -q`` (the same, plus
a Python process starting and importing the package, onnx and onnxruntime, and the outputs
written) against a Python process doing onnxruntime's part (import it, read the input, make
the session, run, save the outputs), and onnxruntime's inference alone (its session made
beforehand). The repetitions are
interleaved (one of each in turn), so that a neighbour's load on a shared machine falls on
all of them alike; the table gives medians and the ratios of the medians to onnxruntime's.
Each form's outputs are also compared, bit for bit, with onnxruntime's on the upgraded model
(nearest mode: ORT's Resize and Upsample copy the same elements at every level).

Run: ``python benchmarks/bench_run.py [--reps N] [--model PATH ...]``; ``--model`` times
models of your own (one input, random values of its declared shape, symbolic sizes 1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import machine

from onnx_upsample.onnx import run, upgrade

ROOT = Path(__file__).resolve().parents[1]
SIZE = 416


class _Builder:
    """A YOLOv3-like graph, node by node (conv = Conv with bias + LeakyRelu 0.1)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[TensorProto] = []
        self.count = 0

    def _name(self, op: str) -> str:
        self.count += 1
        return f"{op}_{self.count}"

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1,
             act: bool = True) -> str:
        name = self._name("conv")
        # He-scaled weights keep the activations of 75 layers finite
        w = (self.rng.standard_normal((cout, cin, k, k), np.float32)
             * np.float32(np.sqrt(2.0 / (cin * k * k)))).astype(np.float32)
        b = (self.rng.standard_normal(cout, np.float32) * np.float32(0.01)).astype(np.float32)
        self.weights += [numpy_helper.from_array(w, f"{name}.w"),
                         numpy_helper.from_array(b, f"{name}.b")]
        self.nodes.append(helper.make_node(
            "Conv", [x, f"{name}.w", f"{name}.b"], [f"{name}.y"], name=name,
            kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
        if not act:
            return f"{name}.y"
        self.nodes.append(helper.make_node("LeakyRelu", [f"{name}.y"], [f"{name}.a"],
                                           name=f"{name}.act", alpha=0.1))
        return f"{name}.a"

    def residual(self, x: str, c: int) -> str:
        y = self.conv(self.conv(x, c, c // 2, 1), c // 2, c, 3)
        name = self._name("add")
        self.nodes.append(helper.make_node("Add", [x, y], [name], name=name))
        return name

    def stage(self, x: str, cin: int, cout: int, blocks: int) -> str:
        x = self.conv(x, cin, cout, 3, 2)
        for _ in range(blocks):
            x = self.residual(x, cout)
        return x

    def five(self, x: str, cin: int, c: int) -> str:
        for k, (a, b) in zip((1, 3, 1, 3, 1), ((cin, c), (c, 2 * c), (2 * c, c), (c, 2 * c),
                                               (2 * c, c)), strict=True):
            x = self.conv(x, a, b, k)
        return x

    def upsample(self, x: str) -> str:
        name = self._name("upsample")
        self.nodes.append(helper.make_node("Constant", [], [f"{name}.scales"],
                                           name=f"{name}.const", value=numpy_helper.from_array(
                                               np.array([1, 1, 2, 2], np.float32))))
        self.nodes.append(helper.make_node("Upsample", [x, f"{name}.scales"], [name],
                                           name=name, mode="nearest"))
        return name

    def concat(self, a: str, b: str) -> str:
        name = self._name("concat")
        self.nodes.append(helper.make_node("Concat", [a, b], [name], name=name, axis=1))
        return name


def yolov3(opset: int = 9, resize: bool = False) -> onnx.ModelProto:
    """YOLOv3's layout (see the module docstring); ``resize``: Resize-10 for the Upsample."""
    g = _Builder()
    x = g.conv("images", 3, 32, 3)
    x = g.stage(x, 32, 64, 1)
    x = g.stage(x, 64, 128, 2)
    r36 = g.stage(x, 128, 256, 8)
    r61 = g.stage(r36, 256, 512, 8)
    t = g.five(g.stage(r61, 512, 1024, 4), 1024, 512)
    y1 = g.conv(g.conv(t, 512, 1024, 3), 1024, 255, 1, act=False)
    t = g.five(g.concat(g.upsample(g.conv(t, 512, 256, 1)), r61), 768, 256)
    y2 = g.conv(g.conv(t, 256, 512, 3), 512, 255, 1, act=False)
    t = g.five(g.concat(g.upsample(g.conv(t, 256, 128, 1)), r36), 384, 128)
    y3 = g.conv(g.conv(t, 128, 256, 3), 256, 255, 1, act=False)
    if resize:
        for node in g.nodes:
            if node.op_type == "Upsample":
                node.op_type = "Resize"
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
               for name in (y1, y2, y3)]
    graph = helper.make_graph(g.nodes, "yolov3", [helper.make_tensor_value_info(
        "images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])], outputs, g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="benchmarks/bench_run.py")
    model.ir_version = 4 if opset == 9 else 5
    return model


def _inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        feeds[value.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _session(path: str) -> ort.InferenceSession:
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def _contenders(path: str, upgraded: str, feeds: dict[str, np.ndarray],
                folder: str) -> dict[str, Callable[[], object]]:
    np_inputs = []
    for name, array in feeds.items():
        np.save(os.path.join(folder, f"{name}.npy"), array)
        np_inputs += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
    command = [sys.executable, "-m", "onnx_upsample", "run", path, *np_inputs,
               "--output-dir", os.path.join(folder, "out"), "-q"]
    script = (
        "import sys, numpy as np, onnxruntime as ort\n"
        "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
        "feeds = {a.split('=')[0]: np.load(a.split('=')[1]) for a in sys.argv[3:]}\n"
        "for i, y in enumerate(s.run(None, feeds)):\n"
        "    np.save(f'{sys.argv[2]}/{i}.npy', y)\n")
    ort_command = [sys.executable, "-c", script, upgraded, folder, *np_inputs[1::2]]
    held = _session(upgraded)
    return {
        "ORT": lambda: _session(upgraded).run(None, feeds),
        "run()": lambda: run(path, feeds).outputs,
        "CLI": lambda: subprocess.run(command, check=True, cwd=ROOT, stderr=subprocess.DEVNULL),
        "ORT process": lambda: subprocess.run(ort_command, check=True, cwd=ROOT),
        "ORT inference": lambda: held.run(None, feeds),
    }


def _bits(path: str, upgraded: str, feeds: dict[str, np.ndarray]) -> str:
    ours = run(path, feeds)
    theirs = _session(upgraded).run(None, feeds)
    same = all(a.tobytes() == b.tobytes() and a.shape == b.shape
               for a, b in zip(ours.outputs.values(), theirs, strict=True))
    where = "cut" if ours.cut else "whole"
    return f"{'yes' if same else 'NO'} ({where})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--model", action="append", default=[],
                        help="time this model too (repeatable)")
    args = parser.parse_args()
    ort.set_default_logger_severity(3)
    warnings.simplefilter("ignore")  # Upsample-10 is deprecated: known, and not timed
    with tempfile.TemporaryDirectory() as folder:
        models: dict[str, str] = {}
        built = {"Upsample-9 (opset 9)": yolov3(9), "Resize-10 (opset 10)": yolov3(10, True),
                 "Upsample-10 (refused: cut)": yolov3(10)}
        for index, (label, model) in enumerate(built.items()):
            models[label] = os.path.join(folder, f"yolov3_{index}.onnx")
            onnx.save(model, models[label])
        for path in args.model:
            models[os.path.basename(path)] = path
        rows = []
        for label, path in models.items():
            model = onnx.load(path)
            upgraded = os.path.join(folder, f"up_{len(rows)}.onnx")
            onnx.save(upgrade(model, opset=11), upgraded)
            feeds = _inputs(model)
            size = os.path.getsize(path) / 1e6
            del model
            work = os.path.join(folder, f"work_{len(rows)}")
            os.makedirs(work)
            contenders = _contenders(path, upgraded, feeds, work)
            times: dict[str, list[float]] = {name: [] for name in contenders}
            names = list(contenders)
            for rep in range(args.reps):
                for name in names[rep % len(names):] + names[:rep % len(names)]:
                    start = time.perf_counter()
                    contenders[name]()
                    times[name].append(time.perf_counter() - start)
            medians = {name: statistics.median(values) for name, values in times.items()}
            rows.append((label, size, medians, _bits(path, upgraded, feeds)))
            print(f"{label}: " + ", ".join(f"{n} {m * 1e3:.0f} ms" for n, m in medians.items()),
                  file=sys.stderr)
    print(f"\nMachine: {machine()}, onnxruntime {ort.__version__}; {args.reps} interleaved "
          "repetitions, medians in ms; ratios to ORT's session + run on the upgraded model.\n")
    print("| model | MB | ORT session + run (upgraded) | run() | run() / ORT | ORT process | "
          "CLI | CLI / ORT process | ORT inference alone | outputs = ORT's |")
    print("|---" * 10 + "|")
    for label, size, medians, bits in rows:
        ms = {name: value * 1e3 for name, value in medians.items()}
        print(f"| {label} | {size:.0f} | {ms['ORT']:.0f} | {ms['run()']:.0f} | "
              f"{ms['run()'] / ms['ORT']:.2f} | {ms['ORT process']:.0f} | {ms['CLI']:.0f} | "
              f"{ms['CLI'] / ms['ORT process']:.2f} | {ms['ORT inference']:.0f} | {bits} |")


if __name__ == "__main__":
    main()
