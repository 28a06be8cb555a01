"""Progress of a probe run: one updating line on a terminal, plain lines
otherwise, nothing when quiet."""

import sys
import time


class Progress(object):
    def __init__(self, stream=None, quiet=False, tty=None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = 0
        self.done = 0
        self.started = time.monotonic()

    def _emit(self, text, transient=False):
        if self.quiet:
            return
        if self.tty and transient:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.stream.flush()

    def message(self, text):
        self._emit("tfdet probe: " + text)

    def start(self, total, already_done):
        self.total = total
        self.started = time.monotonic()
        note = " (%d already in the results file)" % already_done if already_done else ""
        self.message("%d case%s to run%s" % (total, "" if total == 1 else "s", note))

    def step(self, planned, mode):
        if not self.tty:
            return
        self._emit("[%d/%d] %s %s: %s" % (self.done + 1, self.total, planned.case_id, planned.pass_name, mode),
                   transient=True)

    def finished(self, planned, records):
        self.done += 1
        if self.tty:
            return
        outcomes = ", ".join("%s %s" % (r["mode"], r["outcome"]) for r in records)
        self._emit("[%d/%d] %s %s: %s (%.0f s)" % (
            self.done, self.total, planned.case_id, planned.pass_name, outcomes, time.monotonic() - self.started))

    def close(self):
        if self.tty and not self.quiet:
            self.stream.write("\r\033[K")
            self.stream.flush()
