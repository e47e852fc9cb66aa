"""Sphinx configuration of the documentation site (``make docs``: build/docs/html).

The pages are Markdown (myst-parser); the API reference comes from the numpy-style
docstrings (autodoc + numpydoc). The build reads nothing from the network: no intersphinx.
"""

from __future__ import annotations

import importlib.metadata

project = "onnx-upsample"
author = "the onnx-upsample developers"
copyright = "the onnx-upsample developers"
release = importlib.metadata.version("onnx-upsample")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
]

# the pages; docs/pypi.md is the package index's description, not a page of the site
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["pypi.md", "_build"]

# Markdown: headings get GitHub's anchors, so the README's in-page links and the pages'
# links to each other's sections work on GitHub and here alike
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# docstrings: numpy style, with the types in the docstrings rather than the signatures
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

html_theme = "furo"
html_title = f"onnx-upsample {release}"
html_static_path: list[str] = []
