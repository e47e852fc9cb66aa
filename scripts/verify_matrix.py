"""``upgrade --verify`` over the exporters' corpus at opsets 11, 13, 18 and the default.

The nine models of ``legacy_exporters.py`` (as ``make_legacy_corpus.py`` lists them, with the
options a model needs run a second time with them) times four targets: 36 runs of the
command line, each classified by its exit status (0 verified, 1 verification failed, 2
refused) and the warnings it printed. The models are written by this checkout, so that
another checkout's code (``--src``) can be run on the very same files: the table before and
after a change.

Run: ``python scripts/verify_matrix.py [--src DIR] [--details]`` (``--src``: the ``src``
folder whose ``onnx_upsample`` runs; default this checkout's).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
TARGETS = ("11", "13", "18", "default")


def _corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_legacy_corpus",
                                                  HERE / "make_legacy_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_legacy_corpus"] = module
    spec.loader.exec_module(module)
    return module


def _run(src: Path, model: Path, target: str, options: tuple[str, ...],
         folder: Path) -> tuple[str, list[str]]:
    """One upgrade --verify: its outcome in a few words, and the lines that explain it."""
    out = folder / f"{model.parent.name}_{target}{'_opt' if options else ''}.onnx"
    argv = [sys.executable, "-m", "onnx_upsample", "upgrade", str(model), "-o", str(out),
            "--verify", *options, *([] if target == "default" else ["--opset", target])]
    env = {**os.environ, "PYTHONPATH": str(src)}
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    warnings = [line for line in lines if line.startswith("onnx-upsample: warning:")]
    if result.returncode == 0 and "verified" in result.stdout:
        outcome = "verified" + (f", {len(warnings)} warning(s)" if warnings else "")
        try:  # what the upgrade wrote must pass onnx's full check too
            onnx.checker.check_model(str(out), full_check=True)
        except Exception as error:
            outcome += ", output fails full check"
            warnings.append(f"onnx.checker.check_model(full_check=True): "
                            f"{str(error).strip().splitlines()[0]}")
        return outcome, warnings
    if result.returncode == 1:
        failed = [line for line in lines if "FAILED" in line] or lines
        return "FAILED (exit 1)", failed
    return f"refused (exit {result.returncode})", lines[-1:] or ["(no message)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE.parent / "src",
                        help="the folder holding the onnx_upsample package to run")
    parser.add_argument("--details", action="store_true",
                        help="print every line that explains an outcome, in full")
    args = parser.parse_args()
    corpus = _corpus()
    rows, explained = [], {}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        entries = [(entry, path) for entry, path in corpus.write(folder / "models")
                   if entry.group == "exporters"]
        runs = [(entry, path, ()) for entry, path in entries]
        runs += [(entry, path, entry.upgrade_options) for entry, path in entries
                 if entry.upgrade_options]
        for entry, path, options in runs:
            name = entry.name + (f" {' '.join(options)}" if options else "")
            cells = []
            for target in TARGETS:
                outcome, lines = _run(args.src, path, target, options, folder)
                cells.append(outcome)
                explained.setdefault((name, outcome), lines)
            rows.append((name, cells))
    width = max(len(name) for name, _ in rows)
    widths = [max(len(target), *(len(cells[i]) for _, cells in rows))
              for i, target in enumerate(TARGETS)]
    header = ["model".ljust(width), *(t.ljust(w) for t, w in zip(TARGETS, widths, strict=True))]
    print(" | ".join(header))
    print("-+-".join("-" * len(cell) for cell in header))
    for name, cells in rows:
        print(" | ".join([name.ljust(width),
                          *(c.ljust(w) for c, w in zip(cells, widths, strict=True))]))
    counts: dict[str, int] = {}
    for _, cells in rows[:len(rows)]:
        for cell in cells:
            kind = cell.split(",")[0].split(" (")[0]
            counts[kind] = counts.get(kind, 0) + 1
    print("\n" + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
    print()
    for (name, outcome), lines in explained.items():
        if outcome == "verified":
            continue
        print(f"{name}: {outcome}")
        for line in dict.fromkeys(lines):
            shown = line if args.details or len(line) <= 240 else line[:237] + "..."
            print(f"    {shown}")


if __name__ == "__main__":
    main()
