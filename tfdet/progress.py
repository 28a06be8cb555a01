"""What a long run tells whoever watches it: four small events a feature sends
to a progress sink, with no idea how (or whether) they are shown.

    progress(Started(total=12, text="12 cases to run", label="starting"))
    progress(Working("bincount forward: baseline"))       # what is under way now
    progress(Finished("bincount forward: baseline varies", notable=True))
    progress(Message("mode api dropped: ..."))

A sink is any callable taking one event: the command line's display
(tfdet.cli.progress.Display: a live bar on a terminal, a line per unit
otherwise, nothing with --quiet), a list's append in a test, or SILENT. This
module sits in the base layer so every feature can import it without importing
the command line, and it imports nothing of tfdet.
"""

import dataclasses
from typing import Callable, Optional, Union


@dataclasses.dataclass(frozen=True)
class Started:
    """`total` units of work begin (a new Started replaces the one before)."""

    total: int
    text: Optional[str] = None  # said once, as a message (e.g. "12 cases to run (3 already done)")
    label: str = ""  # what a bar says until the first unit is under way
    time_left: bool = False  # units of similar length: show an estimate of the time left, not only elapsed


@dataclasses.dataclass(frozen=True)
class Working:
    """What is under way now (a bar's description; nothing is printed for it)."""

    text: str


@dataclasses.dataclass(frozen=True)
class Finished:
    """One unit finished; `notable` (it varied, failed) keeps its line on screen under a live bar."""

    text: str
    notable: bool = False


@dataclasses.dataclass(frozen=True)
class Message:
    """A line worth saying in any case: a note, a mode dropped, a look's verdict."""

    text: str


Event = Union[Started, Working, Finished, Message]
Progress = Callable[[Event], None]


def SILENT(event):
    """The sink that shows nothing: a library call without a display."""
