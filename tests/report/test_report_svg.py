"""The report's SVG charts: pure functions, well-formed SVG, every text escaped."""

import math
import xml.etree.ElementTree as ET

import pytest

from tfdet.report import svg

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> & \'quotes\''


def parse(text):
    root = ET.fromstring(text)  # raises on anything that is not well-formed XML
    assert root.tag == NS + "svg"
    return root


def texts(root):
    return ["".join(e.itertext()) for e in root.iter(NS + "text")] + [e.text or "" for e in root.iter(NS + "title")]


def test_dot_whisker_draws_a_dot_and_whisker_per_point_and_the_reference_line():
    items = [{"label": "conv2d (gradient)", "points": [
                 {"series": "env", "value": 1.2, "low": 1.1, "high": 1.4},
                 {"series": "api", "value": 0.9, "low": 0.8, "high": 1.05}]},
             {"label": "bincount (forward)", "points": [{"series": "env", "value": 2.5, "low": 2.0, "high": 3.1}]}]
    root = parse(svg.dot_whisker_chart(items, "Cost"))
    assert len(list(root.iter(NS + "circle"))) == 3 + 2  # points + legend dots
    whiskers = [g for g in root.iter(NS + "g") if g.get("class") == "point"]
    assert len(whiskers) == 3 and all(len(list(g.iter(NS + "line"))) == 3 for g in whiskers)
    reference = [line for line in root.iter(NS + "line") if line.get("stroke") == "#444"]
    assert len(reference) == 1  # the x1 line
    words = " ".join(texts(root))
    assert "\u00d71" in words and "conv2d (gradient)" in words and "env" in words and "api" in words
    assert "[1.100\u20131.400]" in words  # the interval in the tooltip


def test_dot_whisker_skips_points_without_a_usable_value_and_handles_no_data():
    bad = [{"label": "x", "points": [{"series": "env", "value": v, "low": None, "high": None}]}
           for v in (None, 0, -1.0, float("nan"), float("inf"), True, "1.2")]
    root = parse(svg.dot_whisker_chart(bad, "Cost"))
    assert not [g for g in root.iter(NS + "g") if g.get("class") == "point"]
    assert "No cost ratios" in " ".join(texts(root))
    # a point without an interval still gets its dot
    root = parse(svg.dot_whisker_chart([{"label": "y", "points": [{"series": "env", "value": 1.5}]}], "Cost"))
    (point,) = [g for g in root.iter(NS + "g") if g.get("class") == "point"]
    assert not list(point.iter(NS + "line")) and len(list(point.iter(NS + "circle"))) == 1


def test_log_bar_chart_is_logarithmic():
    items = [{"label": "small", "bars": [{"series": "baseline", "value": 10}]},
             {"label": "huge", "bars": [{"series": "baseline", "value": 1e9}, {"series": "env", "value": 1e3}]}]
    root = parse(svg.log_bar_chart(items, "ULPs"))
    bars = [list(g.iter(NS + "rect"))[0] for g in root.iter(NS + "g") if g.get("class") == "bar"]
    widths = [float(b.get("width")) for b in bars]
    assert len(widths) == 3
    # 10, 1e9, 1e3 on a 9-decade axis: widths proportional to the exponent
    assert widths[1] == pytest.approx(9 * widths[0], rel=0.01) and widths[2] == pytest.approx(3 * widths[0], rel=0.01)
    words = texts(root)
    assert "1e9" in words and "10" in words and "1" in words


def test_log_bar_chart_can_share_a_scale():
    items = [{"label": "a", "bars": [{"series": "baseline", "value": 100}]}]
    alone = parse(svg.log_bar_chart(items, "ULPs"))
    shared = parse(svg.log_bar_chart(items, "ULPs", max_value=1e8))
    assert "1e2" in texts(alone) and "1e8" in texts(shared)

    def width(root):
        return float([list(g.iter(NS + "rect"))[0] for g in root.iter(NS + "g") if g.get("class") == "bar"][0].get("width"))

    assert width(shared) == pytest.approx(width(alone) / 4, rel=0.01)


def test_log_bar_chart_handles_no_data_and_huge_values():
    assert "Nothing varied" in " ".join(texts(parse(svg.log_bar_chart([], "ULPs"))))
    root = parse(svg.log_bar_chart([{"label": "ints", "bars": [{"series": "b", "value": 1.8e19}]}], "ULPs"))
    assert any(t.startswith("1e") for t in texts(root))
    assert not math.isnan(float(list(root.iter(NS + "rect"))[-2].get("width")))


def test_heatmap_colours_and_letters_each_cell():
    cells = {(0, 0): ("varies", "TF 1.15: varies"), (0, 1): ("deterministic", "TF 2.21: 1/10"),
             (1, 0): ("missing", "not measured"), (1, 1): ("raised", "raised")}
    root = parse(svg.heatmap(["a (forward)", "b (gradient)"], ["1.15.0", "2.21.0"], cells, "By version"))
    groups = {g.get("class"): g for g in root.iter(NS + "g") if (g.get("class") or "").startswith("cell")}
    assert set(groups) == {"cell o-varies", "cell o-deterministic", "cell o-missing", "cell o-raised"}
    assert groups["cell o-varies"].find(NS + "rect").get("fill") == svg.OUTCOME_COLOURS["varies"]
    assert groups["cell o-missing"].find(NS + "rect").get("stroke-dasharray")
    assert groups["cell o-raised"].find(NS + "text").text == "R"
    # a cell not given is drawn as absent
    root = parse(svg.heatmap(["a"], ["1", "2"], {}, "t"))
    assert len([g for g in root.iter(NS + "g") if g.get("class") == "cell o-absent"]) == 2


@pytest.mark.parametrize("draw", [
    lambda: svg.dot_whisker_chart([{"label": HOSTILE, "points": [
        {"series": HOSTILE, "value": 1.1, "low": 1.0, "high": 1.2, "note": HOSTILE}]}], HOSTILE, x_label=HOSTILE),
    lambda: svg.log_bar_chart([{"label": HOSTILE, "bars": [{"series": HOSTILE, "value": 5, "note": HOSTILE}]}],
                              HOSTILE, x_label=HOSTILE),
    lambda: svg.heatmap([HOSTILE], [HOSTILE], {(0, 0): (HOSTILE, HOSTILE)}, HOSTILE, description=HOSTILE),
])
def test_every_text_is_escaped(draw):
    text = draw()
    assert "<script" not in text and "alert(\"x\")" not in text
    assert "&lt;script&gt;" in text
    root = parse(text)
    assert not list(root.iter("script")) and not list(root.iter(NS + "script"))
    assert any(HOSTILE in t or HOSTILE[:20] in t for t in texts(root))  # shown as text, not dropped
