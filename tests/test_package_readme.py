"""docs/pypi.md, the readme a package index shows (pyproject.toml's ``readme``): its example
runs, and it has no link or picture relative to the source tree, which an index page cannot
resolve (README.md is full of them, which is why it is not the package's readme)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from doc_examples import blocks, run_python

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "docs" / "pypi.md"


def test_pyproject_names_it_as_the_readme() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert ROOT / project["readme"] == README


def test_no_relative_links_or_pictures() -> None:
    targets = re.findall(r"\]\(([^)]*)\)", README.read_text())
    relative = [t for t in targets if not re.match(r"https?://", t)]
    assert relative == []


def test_example_runs() -> None:
    """Its one Python example runs by the rules every page's examples run by
    (tests/doc_examples.py), and says what it shows."""
    (block,) = [block for block in blocks(README) if block.language == "python"]
    namespace: dict[str, object] = {}
    run_python(block, namespace)
    # the example's last line, and its comment: (1, 3, 7, 13)
    output_shape = namespace["output_shape"]
    assert output_shape((1, 3, 5, 10), [1, 1, 1.4, 1.3]) == (1, 3, 7, 13)  # type: ignore[operator]
