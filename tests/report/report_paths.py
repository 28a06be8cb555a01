"""Paths of the report tests' fixtures (a module with a name of its own, so the
tests can import it whatever other conftest.py pytest loaded last)."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
CATALOG = os.path.join(FIXTURES, "catalog")
RUN_A = os.path.join(FIXTURES, "run_a_tf2.21.jsonl")
RUN_B = os.path.join(FIXTURES, "run_b_tf2.6.jsonl")
PARTIAL = os.path.join(FIXTURES, "partial_tf2.21.jsonl")
HOSTILE = os.path.join(FIXTURES, "hostile.jsonl")
NOT_RESULTS = os.path.join(FIXTURES, "not_results.jsonl")
SCHEMA_V99 = os.path.join(FIXTURES, "schema_v99.jsonl")

