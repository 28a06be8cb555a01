"""The figures of a comparison from its training records. Pure: records and
the header's settings in, Look and CompareSummary records out."""

from ..results.compare_records import Comparison, CompareSummary, Estimate, Look, Share
from . import stats


def latest(records):
    return {r.key: r for r in records}


def candidates(header):
    """The arms compared with A: B, then each more setup (C, D, ...)."""
    return ["B"] + [setup.name for setup in header.others]


def complete_pairs(records, arm="B"):
    """(pairs, A's scores, the arm's scores) over the pairs where both trainings finished."""
    last = latest(records)
    pairs = sorted(p for (name, p), r in last.items() if name == "A" and r.outcome == "ok"
                   and last.get((arm, p)) is not None and last[(arm, p)].outcome == "ok")
    return pairs, [last[("A", p)].score for p in pairs], [last[(arm, p)].score for p in pairs]


def excluded_notes(records):
    """One line per training that crashed or timed out (its pair is left out)."""
    return ["%s #%d: %s%s" % (r.arm, r.pair, r.outcome, " (%s)" % r.error if r.error else "")
            for r in latest(records).values() if r.outcome != "ok"]


def estimates(header, a, b, looks=None):
    """P(A>B) and the mean difference with their intervals, at the level of one of
    the header's planned looks of one of its comparisons (Bonferroni over both)."""
    level = stats.look_level(header.level, (looks or header.looks) * len(candidates(header)))
    options = dict(paired=True, level=level, method=header.interval, resamples=header.resamples, seed=header.seed)
    if len(a) < 2:  # one pair: no interval to speak of
        p, d = stats.prob_improvement(a, b), stats.mean_difference(a, b)
        return Estimate(p, 0.0, 1.0, level), Estimate(d, d, d, level)
    p = stats.interval("p", a, b, **options)
    d = stats.interval("diff", a, b, **options)
    return Estimate(p[0], p[1], p[2], level), Estimate(d[0], d[1], d[2], level)


def look(header, records, number, arm="B"):
    pairs, a, b = complete_pairs(records, arm)
    if not pairs:
        return None
    p, _ = estimates(header, a, b)
    return Look(record="look", number=number, pairs=len(pairs), p=p, arm=arm,
                verdict=stats.verdict_at(p.value, p.lower, p.upper, len(pairs), p.level, header.gamma))


def shares(records, sources, runs):
    if not runs:
        return []
    last = latest(records)
    scores = {s: [r.score for (arm, _), r in sorted(last.items()) if arm == "share:" + s and r.outcome == "ok"]
              for s in sources}
    measured = stats.variance_shares(scores)
    return [Share(source=s, runs=len(scores[s]), variance=measured[s][0], share=measured[s][1]) for s in sources]


def additivity(share_records, a_scores):
    """A's variance over the pairs (all randomised sources at once) and how much of it the sources alone add up to."""
    if not share_records:
        return None, None
    return stats.additivity([s.variance for s in share_records], a_scores)


def _runs_to_decide(p, pairs, gamma):
    needed = stats.runs_to_decide(p.value, p.lower, p.upper, pairs, gamma)
    return None if needed is None else max(needed, stats.fewest_decisive_pairs(p.level), pairs + 1)


def comparison(header, records, arm):
    """A against one more setup: the figures the summary gives for B."""
    pairs, a, b = complete_pairs(records, arm)
    if not pairs:
        return Comparison(arm=arm, pairs=0)
    p, d = estimates(header, a, b)
    verdict = stats.verdict_at(p.value, p.lower, p.upper, len(pairs), p.level, header.gamma)
    decided = verdict in stats.DECIDED
    return Comparison(arm=arm, pairs=len(pairs), p=p, difference=d, mean=sum(b) / len(b), verdict=verdict,
                      decided=decided, significant=stats.significant(p.lower, p.upper),
                      runs_to_decide=None if decided else _runs_to_decide(p, len(pairs), header.gamma))


def summary(header, records, complete, stopped, looks_taken, seconds=None):
    pairs, a, b = complete_pairs(records)
    last = latest(records)
    measured = shares(records, header.sources, header.share_runs)
    joint_variance, additive_ratio = additivity(measured, a)
    base = dict(record="summary", complete=complete, pairs=len(pairs), notes=excluded_notes(records),
                excluded=sum(1 for r in last.values() if r.outcome != "ok"), stopped=stopped,
                looks_taken=looks_taken, shares=measured, joint_variance=joint_variance,
                additive_ratio=additive_ratio, trainings=sum(1 for r in last.values() if r.outcome == "ok"),
                seconds=seconds)
    others = [comparison(header, records, arm) for arm in candidates(header)[1:]]
    base["others"] = others
    main = comparison(header, records, "B")
    if not main.pairs:
        return CompareSummary(**base)
    return CompareSummary(
        p=main.p, difference=main.difference, mean_a=sum(a) / len(a), mean_b=main.mean, verdict=main.verdict,
        decided=main.decided, significant=main.significant, runs_to_decide=main.runs_to_decide,
        scores=dict({"A": list(a), "B": list(b)}, **{c.arm: complete_pairs(records, c.arm)[2] for c in others}),
        **base)


def every_comparison_decided(summary):
    """B's verdict and every more setup's are decided (what --gate and the sequential rule wait for)."""
    return summary.decided and all(c.decided for c in summary.others)
