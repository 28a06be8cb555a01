"""Values as the report shows them: text, seconds, ratios, large numbers,
labels, and the orders runs and modes are shown in. Pure; no report types."""

from ..results import stats
from ..results.interpret import NOT_PRECISE
from ..results.vocabulary import MODES

DASH = "\u2014"
TIMES = "\u00d7"


def text(value, none=DASH):
    """A value as display text: None and "" as `none`, booleans as yes/no, floats
    by %g, lists joined by commas, dicts as sorted k=v pairs."""
    if value is None or value == "":
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "%g" % value
    if isinstance(value, (list, tuple)):
        return ", ".join(text(v) for v in value) or none
    if isinstance(value, dict):
        return ", ".join("%s=%s" % (k, text(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) or none
    return str(value)


def seconds(value):
    """'2.10 ms', '850.0 µs', '1.20 s'."""
    if value is None:
        return DASH
    if value < 1e-3:
        return "%.1f \u00b5s" % (value * 1e6)
    if value < 1:
        return "%.2f ms" % (value * 1e3)
    return "%.2f s" % value


def big(value):
    """A count or difference: integers with thousands separators, the rest to 3 digits."""
    if value is None:
        return DASH
    if isinstance(value, int) or float(value).is_integer():
        return "{:,}".format(int(value)) if abs(value) < 1e18 else "%.3g" % value
    return "%.3g" % value


def percent(fraction):
    return DASH if fraction is None else "%.3g%%" % (fraction * 100)


def ratio_text(ratio, low=None, high=None):
    """'×1.27 [1.14–1.42]', or '×1.27' without an interval, or '' without a ratio."""
    if ratio is None:
        return ""
    if low is None or high is None:
        return "%s%.2f" % (TIMES, ratio)
    return "%s%.2f [%.2f\u2013%.2f]" % (TIMES, ratio, low, high)


def cost_label(ratio, low=None, high=None):
    """The cost shown in a cell: in words where its 95% interval includes 1."""
    if ratio is None:
        return ""
    if stats.imprecise_cost(low, high):
        return NOT_PRECISE
    if stats.no_measurable_cost(low, high):
        return "no measurable cost"
    return "%s%.2f" % (TIMES, ratio)


def plural(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else (many or one + "s"))


def row_label(case, pass_name):
    return case if not pass_name else "%s (%s)" % (case, pass_name)


def file_name(path):
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def version_key(version):
    """A TF version for sorting: '2.6.4' before '2.21.0'."""
    parts = []
    for piece in str(version).replace("-", ".").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def mode_key(mode):
    """Modes in the order they run (tfdet.results.vocabulary.MODES), unknown ones last."""
    return (MODES.index(mode) if mode in MODES else len(MODES), str(mode))
