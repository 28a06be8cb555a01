"""The documentation's generated pages: a page for every catalogue entry and TF version, and a
reference that names every command, exit code and results schema."""

import os
import sys

import pytest

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs")
sys.path.insert(0, os.path.join(DOCS, "_ext"))

import catalogue_pages  # noqa: E402
import reference_pages  # noqa: E402

from tfdet.catalog import COVERED_TF_VERSIONS, default_catalogue  # noqa: E402
from tfdet.cli import exitcodes  # noqa: E402
from tfdet.cli.app import COMMANDS, build_parser  # noqa: E402


@pytest.fixture(scope="module")
def catalogue():
    return default_catalogue()


def test_every_catalogue_entry_has_a_page_that_the_index_links(catalogue):
    pages = catalogue_pages.pages(catalogue)
    for entry in catalogue:
        assert "entries/%s.md" % entry.id in pages, entry.id
        assert "<entries/%s>" % entry.id in pages["index.md"], entry.id
        assert "entries/%s" % entry.id in pages["index.md"].split("```{toctree}")[1]


def test_an_entry_page_shows_every_range_with_its_sources(catalogue):
    entry = catalogue.get("segment-sum")
    page = catalogue_pages.entry_page(entry)
    for device, ranges in entry.devices.items():
        assert "## %s" % device.upper() in page
        for version_range in ranges:
            assert "`%s`" % version_range.versions in page
            for source in version_range.sources:
                label, url = catalogue_pages.describe_source(source)
                assert (url or label) in page


def test_the_version_strip_has_one_mark_per_covered_version(catalogue):
    entry = catalogue.get("segment-sum")
    strip = catalogue_pages._strip(entry)
    gpu_row = next(line for line in strip if line.startswith("| gpu |"))
    marks = [cell.strip() for cell in gpu_row.strip("|").split("|")[1:]]
    assert len(marks) == len(COVERED_TF_VERSIONS)
    # segment-sum on GPUs: varies before 2.5, raises under determinism in 2.5-2.6, a switch from 2.7
    assert marks[catalogue_pages.VERSIONS.index("2.4")] == "V"
    assert marks[catalogue_pages.VERSIONS.index("2.6")] == "R"
    assert marks[catalogue_pages.VERSIONS.index("2.7")] == "S"


def test_a_version_page_lists_what_changed_from_the_release_before(catalogue):
    page = catalogue_pages.version_page(catalogue, "2.7")
    assert "segment-sum <../entries/segment-sum>" in page
    assert all("version_page" not in line for line in page.splitlines())
    for version in catalogue_pages.VERSIONS:
        assert "versions/%s.md" % version in catalogue_pages.pages(catalogue)


def test_table_cells_escape_pipes_and_fold_newlines():
    assert catalogue_pages._cell("a | b\nc") == "a \\| b c"


def test_written_pages_drop_entries_that_no_longer_exist(catalogue, tmp_path):
    stale = tmp_path / "entries" / "gone-entry.md"
    stale.parent.mkdir()
    stale.write_text("old")
    written = catalogue_pages.write_pages(catalogue, str(tmp_path))
    assert not stale.exists()
    assert len(written) == 1 + len(catalogue) + len(COVERED_TF_VERSIONS)


def test_the_cli_reference_has_every_command_and_subcommand():
    page = reference_pages.cli_page()
    names = [name for name, _ in reference_pages._commands(build_parser(), "tfdet")]
    assert len(names) >= len(COMMANDS)
    for name in names:
        assert "\n## %s\n" % name in page
    assert "usage: tfdet probe" in page


def test_the_exit_code_page_has_every_code_with_its_meaning():
    page = reference_pages.exit_codes_page()
    for name, value in vars(exitcodes).items():
        if name.isupper() and isinstance(value, int):
            row = next(line for line in page.splitlines() if line.startswith("| `%d` |" % value))
            assert name in row and len(row.split("|")[3].strip()) > 10, row


def test_the_schema_page_shows_every_schema():
    page = reference_pages.schemas_page()
    for name in reference_pages.schema_files():
        assert "## %s" % name in page
