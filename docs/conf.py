"""Sphinx configuration of tfdet's documentation (tox -e docs; Read the Docs builds the same)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's tfdet, also when it is not installed
sys.path.insert(0, os.path.join(HERE, "_ext"))

from tfdet import __version__  # noqa: E402

project = "tfdet"
author = "the tfdet developers"
copyright = "2026, the tfdet developers"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "catalogue_pages",
    "reference_pages",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated/README.md"]
html_theme = "furo"
html_title = "tfdet %s" % version
# Offline: no web fonts, no CDN, nothing fetched when a page opens.
html_theme_options = {"navigation_with_keys": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
nitpicky = False


def _docstring_as_written(app, what, name, obj, options, lines):
    """tfdet's docstrings are plain text written for help(): show them as written (a literal
    block) rather than parse them as reStructuredText, which would misread `*args` or an
    indented example."""
    if lines:
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


def setup(app):
    app.connect("autodoc-process-docstring", _docstring_as_written)
