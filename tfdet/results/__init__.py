"""The results layer: what the probe (and later scan, locate and diverge) write and
the report reads. Standard library only at import time (the worker imports
tfdet.results.stats under Python 3.7)."""
