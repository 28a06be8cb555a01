"""What goes wrong in a catalogue file: one Problem per place, all of them in one CatalogError.

The bottom of tfdet.catalog: reading files (load.py) and checking them
(validate.py) both raise these, so both import them from here.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    path: str  # file
    line: int  # 1-based; 0 when unknown
    where: str  # the key path inside the document, e.g. entries[3].devices.gpu[1].status
    message: str

    def __str__(self):
        location = "%s:%d" % (self.path, self.line) if self.line else self.path
        return "%s: %s: %s" % (location, self.where or "(document)", self.message)


class CatalogError(ValueError):
    """A catalogue file (or set of files) is invalid. `problems` lists each one."""

    def __init__(self, problems):
        self.problems = sorted(problems, key=lambda p: (p.path, p.line, p.where))
        lines = [str(p) for p in self.problems]
        super().__init__("invalid catalogue (%d problem%s):\n  %s" % (
            len(lines), "" if len(lines) == 1 else "s", "\n  ".join(lines)))
