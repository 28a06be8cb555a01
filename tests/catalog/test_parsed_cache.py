"""default_catalogue() reads the parsed shipped files from parsed_cache when an earlier
process stored them: the same objects, lines included, as full validation builds;
a record of other files, a damaged one or no cache directory is a miss, never an error."""

import datetime
import os

import pytest

from tfdet.catalog import load, load_catalogue, parsed_cache


@pytest.fixture(scope="module")
def full():
    return load_catalogue()  # validates everything


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFDET_CACHE_DIR", str(tmp_path))
    return tmp_path


def _build():
    return load.default_catalogue.__wrapped__()  # not the per-process lru_cache


def _same(a, b):
    assert a.entries == b.entries and a.switches == b.switches
    assert [e.origin for e in a] == [e.origin for e in b]
    assert [r.origin for e in a for rs in e.devices.values() for r in rs] == \
        [r.origin for e in b for rs in e.devices.values() for r in rs]
    assert [(s.op, s.origin, [r.origin for r in s.rows]) for s in a.sensitivities] == \
        [(s.op, s.origin, [r.origin for r in s.rows]) for s in b.sensitivities]


def test_a_second_process_builds_from_the_record_the_same_catalogue_as_full_validation(cache, monkeypatch, full):
    first = _build()
    records = list(cache.glob("catalogue-*.json"))
    assert len(records) == 1

    def no_parse(text):
        raise AssertionError("parsed the YAML although a record of these files was stored")

    monkeypatch.setattr(load, "_parse_trusted", no_parse)
    second = _build()
    _same(first, full)
    _same(second, full)


def test_a_changed_file_is_another_key_and_a_damaged_record_a_miss(cache, full):
    texts = [("a.yaml", "entries: []\n"), ("b.yaml", "switches: []\n")]
    assert parsed_cache.key(texts) != parsed_cache.key([texts[0], ("b.yaml", "switches: [] \n")])
    assert parsed_cache.key(texts) != parsed_cache.key(texts[:1])
    assert parsed_cache.key(texts, parser="PyYAML 6.0") != parsed_cache.key(texts, parser="PyYAML 5.4")
    record_key = parsed_cache.key(texts)
    assert parsed_cache.write(record_key, {"files": [1, 2]})
    assert parsed_cache.read(record_key)["files"] == [1, 2]
    (cache / ("catalogue-%s.json" % record_key)).write_text('{"files": [1,')  # cut short
    assert parsed_cache.read(record_key) is None
    _build()  # the shipped files' own record is written beside it
    (record,) = [p for p in cache.glob("catalogue-*.json") if record_key not in p.name]
    record.write_text('{"key": "%s", "files": "not a list"}' % record.name[len("catalogue-"):-len(".json")])
    _same(_build(), full)  # parsed again


def test_what_json_would_change_is_not_stored(cache):
    assert not parsed_cache.write("k1", {"files": [{"when": datetime.date(2026, 1, 1)}]})
    assert not parsed_cache.write("k2", {"files": [{1: "a number key"}]})
    assert parsed_cache.read("k1") is None and parsed_cache.read("k2") is None


def test_an_empty_cache_dir_setting_switches_it_off(tmp_path, monkeypatch, full):
    monkeypatch.setenv("TFDET_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    assert parsed_cache.cache_dir() is None
    assert not parsed_cache.write("k", {"files": []})
    _same(_build(), full)
    assert os.listdir(tmp_path) == []


def test_an_unwritable_cache_directory_is_a_miss(tmp_path, monkeypatch, full):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TFDET_CACHE_DIR", str(blocker / "tfdet"))  # a directory under a file: cannot be made
    _same(_build(), full)
