"""Shared fixtures of the report tests: the handcrafted results files in
fixtures/ and a small catalogue (fixtures/catalog/) whose claims they were
written against, so these tests do not move when the shipped catalogue does."""

import pytest
from report_paths import CATALOG

from tfdet.catalog import load_user_catalogue
from tfdet.probe.results import read_results
from tfdet.report import build_report


@pytest.fixture(scope="session")
def catalogue():
    return load_user_catalogue(CATALOG)


@pytest.fixture(scope="session")
def build(catalogue):
    def build_from(*paths, **kwargs):
        results = [(p,) + read_results(p) for p in paths]
        kwargs.setdefault("catalogue", catalogue)
        return build_report(results, tfdet_version="test", **kwargs)
    return build_from
