"""What the catalogue says about a case in a run: its entry and the claim
(VersionRange) for the run's TF version and device. None where it says nothing."""


def entry(catalogue, case):
    """The catalogue entry of a case; None without a catalogue or for a case it does not know (a fixture)."""
    if catalogue is None:
        return None
    try:
        return catalogue.get(case)
    except KeyError:
        return None


def claim_range(case_entry, run):
    """The entry's VersionRange for the run's TF version and device; None where there is none."""
    if case_entry is None or run.device is None:
        return None
    try:
        return case_entry.range_for(run.tf_version, run.device)
    except ValueError:  # not a TF version the catalogue understands
        return None
