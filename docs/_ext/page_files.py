"""Writing generated pages into the docs' source tree."""

import os


def write_if_changed(path, text):
    """Write a page only when its text changed, so Sphinx does not reread an unchanged one."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
