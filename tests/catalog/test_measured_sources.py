"""Every `measured:` citation in the catalogue points at a results file in this repo."""

import os

from tfdet.catalog import default_catalogue
from tfdet.results import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_measured_citations_are_real_results_files():
    cited = {
        source.split(":", 1)[1]
        for entry in default_catalogue()
        for ranges in entry.devices.values()
        for version_range in ranges
        for source in version_range.sources
        if source.startswith("measured:")
    }
    assert cited, "the catalogue cites no measurement"
    for path in sorted(cited):
        assert load(os.path.join(ROOT, path)).cases, path
