"""The one progress display of the command line: it shows the events a feature
sends (tfdet.progress) on the command's err stream. On a terminal, a transient
`rich` bar (description, bar, done/total, time elapsed or left) with notable
lines kept above it; otherwise (logs, CI, pipes) a plain line per finished
unit, "[done/total] what (elapsed)"; nothing at all when quiet."""

import time

from ..progress import Finished, Message, Started, Working


class Display(object):
    """A progress sink for `tfdet COMMAND`: call it with events; close() (or leave
    the `with` block) removes a live bar."""

    def __init__(self, stream, command, quiet=False, tty=None):
        self.stream = stream
        self.prefix = "tfdet %s: " % command
        self.quiet = quiet
        self.tty = isatty(stream) if tty is None else tty
        self.total = self.done = 0
        self.time_left = False
        self.started = time.monotonic()
        self._console = self._bar = self._task = None
        if self.tty and not quiet:
            from rich.console import Console

            self._console = Console(file=stream, highlight=False)

    def __call__(self, event):
        if isinstance(event, Message):
            self.message(event.text)
        elif isinstance(event, Started):
            self._start(event)
        elif isinstance(event, Working):
            if self._bar is not None:
                self._bar.update(self._task, description=event.text)
        elif isinstance(event, Finished):
            self._finished(event)
        else:
            raise TypeError("not a progress event: %r" % (event,))

    def message(self, text):
        """A line prefixed with the command's name (also the plain message callback locate takes)."""
        self._line(self.prefix + text)

    def _line(self, text):
        if self.quiet:
            return
        if self._console is not None:  # above a live bar, which rich redraws below it
            self._console.print(text, markup=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _start(self, event):
        self.close()
        self.total, self.done, self.time_left = event.total, 0, event.time_left
        self.started = time.monotonic()
        if event.text:
            self.message(event.text)
        if self._console is not None and event.total:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            timing = (TextColumn("left"), TimeRemainingColumn()) if event.time_left else (TimeElapsedColumn(),)
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), *timing,
                                 console=self._console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(event.label, total=event.total)

    def _finished(self, event):
        self.done += 1
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.advance(self._task)
            if event.notable:  # what varied or failed stays on screen; the rest only passes through the bar
                self._line(event.text)
            else:
                self._bar.update(self._task, description=event.text)
            return
        elapsed = time.monotonic() - self.started
        timing = "%.0f s" % elapsed
        if self.time_left and self.total:
            timing += ", ~%.0f s left" % (elapsed / self.done * max(self.total - self.done, 0))
        self._line("[%d/%d] %s (%s)" % (self.done, self.total, event.text, timing))

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False
