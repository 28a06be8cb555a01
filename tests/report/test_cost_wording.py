"""A cost interval too wide to say anything is "not measured precisely enough",
never "no measurable cost" (issue 25: [0.14, 10.44] was called no cost)."""

import collections

from tfdet.report.formatting import cost_label
from tfdet.report.prose import cost_phrase
from tfdet.results import stats
from tfdet.results.interpret import cost_words

Record = collections.namedtuple("Record", "ratio ratio_low ratio_high")


def test_a_wide_interval_is_not_measured_precisely_enough():
    assert cost_words(1.21, 0.14, 10.44) == "not measured precisely enough [0.14\u201310.44]"
    assert cost_words(1.21, 0.14, 10.44, ascii_only=True) == "not measured precisely enough [0.14-10.44]"
    assert cost_label(1.21, 0.14, 10.44) == "not measured precisely enough"
    assert cost_phrase([Record(1.21, 0.14, 10.44)]) == "at a cost not measured precisely enough"


def test_a_narrow_interval_around_1_is_no_measurable_cost():
    assert cost_words(1.02, 0.95, 1.08) == "no measurable cost [0.95\u20131.08]"
    assert cost_label(1.02, 0.95, 1.08) == "no measurable cost"
    assert cost_phrase([Record(1.02, 0.95, 1.08)]) == "at no measurable cost"
    assert cost_phrase([Record(1.02, 0.95, 1.08), Record(1.21, 0.14, 10.44)]) == (
        "at no measurable cost; not measured precisely enough in 1 of 2 measurements")


def test_the_bound_is_holding_both_a_20_percent_gain_and_a_25_percent_loss():
    assert stats.imprecise_cost(0.8, 1.25) and not stats.no_measurable_cost(0.8, 1.25)
    assert not stats.imprecise_cost(0.81, 1.25) and stats.no_measurable_cost(0.81, 1.25)
    assert not stats.imprecise_cost(0.8, 1.24) and stats.no_measurable_cost(0.8, 1.24)
    assert not stats.imprecise_cost(1.3, 9.0) and cost_words(2.0, 1.3, 9.0) == "\u00d72.00 [1.30\u20139.00]"
    assert not stats.imprecise_cost(None, None) and cost_label(1.5) == "\u00d71.50"
