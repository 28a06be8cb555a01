"""Paths of the report tests' fixtures (a module with a name of its own, so the
tests can import it whatever other conftest.py pytest loaded last), and the
script that makes them, whose builders make typed records in memory."""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
CATALOG = os.path.join(FIXTURES, "catalog")
RUN_A = os.path.join(FIXTURES, "run_a_tf2.21.jsonl")
RUN_B = os.path.join(FIXTURES, "run_b_tf2.6.jsonl")
PARTIAL = os.path.join(FIXTURES, "partial_tf2.21.jsonl")
HOSTILE = os.path.join(FIXTURES, "hostile.jsonl")
NOT_RESULTS = os.path.join(FIXTURES, "not_results.jsonl")
SCHEMA_V99 = os.path.join(FIXTURES, "schema_v99.jsonl")
MAKE_FIXTURES = os.path.join(FIXTURES, "make_fixtures.py")

ROOT = os.path.dirname(os.path.dirname(HERE))
REPORTS = os.path.join(ROOT, "reports")
REAL_RUN = os.path.join(REPORTS, "probe-tf2.21-cpu-2core-default.jsonl")


def make_fixtures():
    """fixtures/make_fixtures.py as a module (loaded once)."""
    module = sys.modules.get("report_make_fixtures")
    if module is None:
        spec = importlib.util.spec_from_file_location("report_make_fixtures", MAKE_FIXTURES)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["report_make_fixtures"] = module
    return module
