"""Shared fixtures of the report tests: the results files in fixtures/ (made
by fixtures/make_fixtures.py from typed records) and a small catalogue
(fixtures/catalog/) whose claims they were written against, so these tests do
not move when the shipped catalogue does."""

import pytest
from report_paths import CATALOG

import tfdet.results
from tfdet.catalog import load_user_catalogue
from tfdet.report import build_report


@pytest.fixture(scope="session")
def catalogue():
    return load_user_catalogue(CATALOG)


@pytest.fixture(scope="session")
def build(catalogue):
    def build_from(*paths, **kwargs):
        kwargs.setdefault("catalogue", catalogue)
        return build_report([tfdet.results.load(p) for p in paths], tfdet_version="test", **kwargs)
    return build_from
