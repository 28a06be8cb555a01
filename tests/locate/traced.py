"""Capture a function in this process and read the trace back (the capture and
folding tests share it)."""

import os

from tfdet.locating import capture
from tfdet.locating.trace_file import read_trace


def captured(tmp_path, function, **options):
    """The trace of one call of `function` under a Recorder(**options); each call its own file."""
    path = str(tmp_path / ("trace-%d.jsonl" % len(os.listdir(tmp_path))))
    recorder = capture.Recorder(path, **options)
    capture.install(recorder)
    try:
        function()
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    return read_trace(path)
