"""Every catalogue entry that can run on a CPU has a probe case, and every
probe case belongs to a catalogue entry (or is a test fixture)."""

import pytest

from tfdet.catalog import COVERED_TF_VERSIONS, default_catalogue
from tfdet.probe.cases import CASES
from tfdet.probe.plan import machine_capabilities, why_not_runnable


def cpu_runnable_somewhere(entry):
    caps = machine_capabilities("cpu")
    return any(why_not_runnable(entry, "cpu", str(v), caps) is None for v in COVERED_TF_VERSIONS)


@pytest.mark.parametrize("entry", list(default_catalogue()), ids=lambda e: e.id)
def test_cpu_runnable_entry_has_a_case(entry):
    if not cpu_runnable_somewhere(entry):
        pytest.skip("cannot run on a CPU: %s" % why_not_runnable(entry, "cpu", "2.21", machine_capabilities("cpu")))
    assert entry.id in CASES, "catalogue entry %r can run on a CPU but has no probe case" % entry.id


def test_every_case_is_a_catalogue_entry_or_fixture():
    ids = {entry.id for entry in default_catalogue()}
    orphans = sorted(case_id for case_id, spec in CASES.items() if not spec.fixture and case_id not in ids)
    assert orphans == []
