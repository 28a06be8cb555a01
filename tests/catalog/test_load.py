"""default_catalogue() builds the shipped catalogue without re-validating it;
these tests are what entitles it to: the shipped files are valid, and the
fast path builds exactly what full validation builds, lines included."""

import pytest

from tfdet.catalog import CatalogError, default_catalogue, load_catalogue, load_user_catalogue


@pytest.fixture(scope="module")
def both():
    return default_catalogue(), load_catalogue()  # load_catalogue() validates everything


def _ranges(catalogue):
    return [(e.id, d, r) for e in catalogue for d, rs in sorted(e.devices.items()) for r in rs]


def test_shipped_catalogue_builds_the_same_objects_as_full_validation(both):
    fast, full = both
    assert len(fast) == len(full) > 0
    assert fast.entries == full.entries
    assert fast.switches == full.switches


def test_shipped_catalogue_keeps_file_and_line_of_every_entry_range_and_switch(both):
    fast, full = both
    assert [e.origin for e in fast] == [e.origin for e in full]
    assert [s.origin for s in fast.switches] == [s.origin for s in full.switches]
    assert [r.origin for _, _, r in _ranges(fast)] == [r.origin for _, _, r in _ranges(full)]
    assert [str(r.specifier) for _, _, r in _ranges(fast)] == [str(r.specifier) for _, _, r in _ranges(full)]


def test_user_catalogue_is_still_fully_validated_with_file_and_line(tmp_path):
    broken = tmp_path / "mine.yaml"
    broken.write_text(
        "schema_version: 1\n"
        "entries:\n"
        "  - id: mine\n"
        "    title: t\n"
        "    colour: red\n", encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_user_catalogue(str(broken))
    text = str(caught.value)
    assert "mine.yaml:5" in text and "colour" in text
