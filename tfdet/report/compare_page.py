"""The HTML page of a `tfdet compare` results file: the verdict, each setup's
scores, P(A>B) with its interval at every look against 0.5 and gamma, the
variance shares, and the runs the rule took. Pure: a CompareResults in, a
page out; the charts are inline SVG (no scripts, no network)."""

from markupsafe import Markup, escape

from ..results.errors import ResultsError
from .render import environment

TEMPLATE = "compare.html.j2"
WIDTH, LEFT, RIGHT = 640, 120, 20
COLOURS = {"A": "#1f77b4", "B": "#d62728"}
SHARE_COLOURS = {"data": "#8c564b", "init": "#2ca02c", "order": "#ff7f0e", "numerics": "#9467bd"}


def _x(value, low, high):
    span = (high - low) or 1.0
    return LEFT + (WIDTH - LEFT - RIGHT) * (value - low) / span


def _text(x, y, text, anchor="start", size=12, colour="#333"):
    return '<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s">%s</text>' % (
        x, y, size, anchor, colour, escape(text))


def _svg(height, parts, label):
    return Markup('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">%s</svg>'
                  % (WIDTH, height, escape(label), "".join(parts)))


def scores_chart(scores):
    """One row of dots per arm (its trainings' scores) and a tick at its mean."""
    values = [v for arm in scores.values() for v in arm]
    if not values:
        return None
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 0.01
    low, high = low - pad, high + pad
    parts, y = [], 20
    for arm, arm_scores in scores.items():
        colour = COLOURS.get(arm, "#555")
        parts.append(_text(LEFT - 10, y + 4, arm, "end"))
        parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#ddd"/>' % (LEFT, WIDTH - RIGHT, y, y))
        for v in arm_scores:
            parts.append('<circle cx="%.1f" cy="%d" r="4" fill="%s" fill-opacity="0.55"><title>%s</title></circle>' % (
                _x(v, low, high), y, colour, escape("%s: %.4f" % (arm, v))))
        if arm_scores:
            mean = sum(arm_scores) / len(arm_scores)
            parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (
                _x(mean, low, high), _x(mean, low, high), y - 10, y + 10, colour))
        y += 30
    for tick in (low + pad, (low + high) / 2, high - pad):
        parts.append(_text(_x(tick, low, high), y + 2, "%.1f%%" % (100 * tick), "middle", 11, "#666"))
    return _svg(y + 10, parts, "test accuracy of each training, per setup; ticks: means")


def interval_chart(looks, final, gamma):
    """P(A>B) and its interval at each look (and the final one) on [0, 1], against 0.5 and gamma."""
    rows = [("look %d (%d pairs)%s" % (x.number, x.pairs, "" if x.arm == "B" else ", A>%s" % x.arm), x.p)
            for x in looks]
    if final is not None:
        rows.append(("final", final))
    if not rows:
        return None
    height = 30 + 24 * len(rows)
    parts = []
    for value, colour, name in ((1 - gamma, "#999", "1-\u03b3"), (0.5, "#333", "0.5"), (gamma, "#999", "\u03b3")):
        x = _x(value, 0.0, 1.0)
        parts.append('<line x1="%.1f" x2="%.1f" y1="8" y2="%d" stroke="%s" stroke-dasharray="4 3"/>' % (
            x, x, height - 18, colour))
        parts.append(_text(x, height - 4, "%s = %g" % (name, value) if name != "0.5" else "0.5", "middle", 11, "#555"))
    for i, (label, estimate) in enumerate(rows):
        y = 20 + 24 * i
        parts.append(_text(LEFT - 10, y + 4, label, "end", 11))
        parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#1f77b4" stroke-width="3"/>' % (
            _x(estimate.lower, 0, 1), _x(estimate.upper, 0, 1), y, y))
        parts.append('<circle cx="%.1f" cy="%d" r="5" fill="#1f77b4"><title>%s</title></circle>' % (
            _x(estimate.value, 0, 1), y, escape("P(A>B) = %.3f [%.3f, %.3f] at %g%%" % (
                estimate.value, estimate.lower, estimate.upper, 100 * estimate.level))))
    return _svg(height, parts, "P(A>B) with its interval at each look")


def shares_chart(shares):
    """One bar split by each source's share of the variance."""
    measured = [s for s in shares if s.share is not None]
    if not measured:
        return None
    parts, x = [], float(LEFT)
    span = WIDTH - LEFT - RIGHT
    for s in measured:
        width = span * s.share
        colour = SHARE_COLOURS.get(s.source, "#777")
        parts.append('<rect x="%.1f" y="10" width="%.1f" height="26" fill="%s"><title>%s</title></rect>' % (
            x, width, colour, escape("%s: %.0f%% (variance %.3g over %d runs)" % (
                s.source, 100 * s.share, s.variance, s.runs))))
        if width > 40:
            parts.append(_text(x + width / 2, 27, "%s %.0f%%" % (s.source, 100 * s.share), "middle", 11, "#fff"))
        x += width
    parts.append(_text(LEFT - 10, 27, "variance", "end", 11))
    return _svg(46, parts, "each source's share of the variance of A's accuracy")


def _setup(setup):
    what = setup.script or setup.workload
    bits = ["lr %g" % setup.lr] if setup.lr else []
    bits += ["momentum %g" % setup.momentum] if setup.momentum else []
    bits += ["%d epoch%s" % (setup.epochs, "" if setup.epochs == 1 else "s")] if setup.epochs else []
    return "%s%s" % (what, " (%s)" % ", ".join(bits) if bits else "")


def facts(results):
    h, s = results.header, results.summary
    rows = [("A", _setup(h.a)), ("B", "A again on other seeds (A/A: the noise floor)" if h.aa else _setup(h.b))]
    rows += [(other.name, _setup(other)) for other in h.others]
    rows += [("randomised", ", ".join(h.sources) or "nothing"), ("held fixed", ", ".join(h.fixed) or "nothing"),
             ("metric", "test accuracy (higher is better)")]
    if h.space:
        rows.append(("hyperparameters", "drawn per pair, the same for every setup: " + ", ".join(
            "%s=%s" % item for item in sorted(h.space.items()))))
    rows += [("interval", "%s bootstrap, %d resamples, seed %d, %g%% over all looks" % (
                 h.interval, h.resamples, h.seed, 100 * h.level)),
             ("threshold", "\u03b3 = %g (Bouthillier et al., MLSys 2021)" % h.gamma),
             ("stopping rule", "look at %d pairs, then every %d, up to %d: %d looks, each at %g%% (Bonferroni)" % (
                 h.min_runs, h.step, h.max_runs, h.looks, 100 * (1 - (1 - h.level) / h.looks)))]
    if s is not None:
        rows.append(("stopped", "%s%s" % (s.stopped, "" if s.complete else " (interrupted)")))
        rows.append(("runs", "%d complete pairs, %d trainings finished%s" % (
            s.pairs, s.trainings, ", %d excluded" % s.excluded if s.excluded else "")))
        if s.seconds is not None:
            rows.append(("wall time", "%.0f s on %s (the last run; a --resume counts its own)" % (
                s.seconds, h.executor or "?")))
    rows.append(("TensorFlow", "%s, Python %s, tfdet %s" % (h.tf_version, h.python, h.tfdet_version)))
    return rows


def verdict_lines(results):
    h, s = results.header, results.summary
    if s is None or s.p is None:
        return ["No complete pair of trainings: nothing to compare."]
    p, d = s.p, s.difference
    lines = ["%s: P(A>B) = %.3f, interval [%.3f, %.3f] at %g%%; \u03b3 = %g." % (
        s.verdict[0].upper() + s.verdict[1:], p.value, p.lower, p.upper, 100 * p.level, h.gamma),
        "Accuracy A %.2f%%, B %.2f%%: A \u2212 B = %+.2f points [%+.2f, %+.2f]." % (
        100 * s.mean_a, 100 * s.mean_b, 100 * d.value, 100 * d.lower, 100 * d.upper)]
    if h.aa:
        lines.append("A against itself: this is the noise floor. With %s randomised, two sets of A's trainings "
                     "differ by %+.2f points on average and by up to %.2f points at this interval." % (
                         ", ".join(h.sources), 100 * d.value, 100 * max(abs(d.lower), abs(d.upper))))
    if s.runs_to_decide:
        lines.append("Undecided: about %d pairs in all would likely decide, if P(A>B) stays at %.3f." % (
            s.runs_to_decide, p.value))
    for other in s.others:
        if other.p is not None:
            lines.append("A against %s: %s, P(A>%s) = %.3f [%.3f, %.3f]; accuracy %s %.2f%%, A \u2212 %s = %+.2f "
                         "points [%+.2f, %+.2f]." % (
                             other.arm, other.verdict, other.arm, other.p.value, other.p.lower, other.p.upper,
                             other.arm, 100 * other.mean, other.arm, 100 * other.difference.value,
                             100 * other.difference.lower, 100 * other.difference.upper))
    return lines


def floor_rows(floors):
    """One row per A/A file: what varied, and what the noise alone produced."""
    rows = []
    for floor in floors:
        s = floor.summary
        if s is None or s.p is None:
            continue
        rows.append({"sources": ", ".join(floor.header.sources) or "nothing",
                     "kernels": "TF as it comes" if "numerics" in floor.header.sources else "tfdet.patch()",
                     "pairs": s.pairs, "p": s.p, "difference": s.difference, "verdict": s.verdict,
                     "path": floor.path})
    return rows


def render_compare(results, generated=None, title=None, floors=()):
    """(results, the page as a string). floors: A/A results (tfdet compare --aa) shown as the noise floor."""
    if results.header is None:
        raise ResultsError("%s: no header" % results.path)
    s = results.summary
    scores = s.scores if s is not None and s.scores else {}
    charts = [("Each setup's test accuracy (one dot per training; the tick is the mean)", scores_chart(scores)),
              ("P(A>B) and its interval at each look", interval_chart(results.looks, s.p if s else None,
                                                                       results.header.gamma))]
    if s is not None and s.shares:
        charts.append(("Share of the variance of A's accuracy, one source varied at a time", shares_chart(s.shares)))
    page = environment().get_template(TEMPLATE).render(
        title=title or "tfdet compare: %s" % ("A/A noise floor" if results.header.aa else "A vs B"),
        decided=bool(s and s.decided), verdict=verdict_lines(results), facts=facts(results),
        charts=[(name, chart) for name, chart in charts if chart is not None], looks=results.looks,
        shares=s.shares if s else [], joint_variance=s.joint_variance if s else None,
        additive_ratio=s.additive_ratio if s else None, pairs=s.pairs if s else 0, notes=s.notes if s else [],
        generated=generated, floors=floor_rows(floors),
        tfdet_version=results.header.tfdet_version)
    return results, page
