"""Progress of a probe run: a live `rich` progress bar on a terminal, plain
lines otherwise (logs, CI, pipes), nothing when quiet."""

import sys
import time


def _outcomes(records):
    return ", ".join("%s %s" % (r.mode, r.outcome) for r in records)


class Progress(object):
    def __init__(self, stream=None, quiet=False, tty=None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = 0
        self.done = 0
        self.started = time.monotonic()
        self._live = None  # rich.progress.Progress while a terminal run is under way
        self._task = None
        self._console = None
        if self.tty and not quiet:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)

    def message(self, text):
        if self.quiet:
            return
        if self._console is not None:
            self._console.print("tfdet probe: " + text, markup=False)
        else:
            self.stream.write("tfdet probe: " + text + "\n")
            self.stream.flush()

    def start(self, total, already_done):
        self.total = total
        self.started = time.monotonic()
        note = " (%d already in the results file)" % already_done if already_done else ""
        self.message("%d case%s to run%s" % (total, "" if total == 1 else "s", note))
        if self._console is not None and total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

            self._live = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                             console=self._console, transient=True)
            self._live.start()
            self._task = self._live.add_task("starting", total=total)

    def step(self, planned, mode, runs=None, budget=None):
        """A case is running in a mode; with runs/budget: repeating it (adaptive repeats)."""
        if self._live is None:
            return
        more = " (more runs: %d of up to %d)" % (runs, budget) if runs is not None else ""
        self._live.update(self._task, description="%s %s: %s%s" % (planned.case_id, planned.pass_name, mode, more))

    def finished(self, planned, records):
        self.done += 1
        if self.quiet:
            return
        if self._live is not None:
            self._live.advance(self._task)
            if any(r.outcome != "deterministic" for r in records):  # what varied, raised or failed stays on screen
                self._live.console.print("%s %s: %s" % (planned.case_id, planned.pass_name, _outcomes(records)),
                                         markup=False)
            return
        self.stream.write("[%d/%d] %s %s: %s (%.0f s)\n" % (
            self.done, self.total, planned.case_id, planned.pass_name, _outcomes(records),
            time.monotonic() - self.started))
        self.stream.flush()

    def close(self):
        if self._live is not None:
            self._live.stop()
            self._live = None
