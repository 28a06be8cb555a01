"""tfdet locate: which op made two runs of the same program differ.

capture.py runs inside each run (an op callback fingerprinting every output);
child.py is that process; runs.py starts the runs; trace_file.py reads their
traces; align.py compares two of them; measure.py sizes a difference; api.py
puts it together (tfdet.locate, and tfdet.testing's assertions on top of it).
"""

from .api import LocateError, LocateInterrupted, LocateWriteError, locate, locate_script, locate_target
from .runs import Target

__all__ = ["LocateError", "LocateInterrupted", "LocateWriteError", "Target", "locate", "locate_script", "locate_target"]
