"""The rendered page, on the golden fixtures: sections, rows, cells and their
classes, charts, interrupted runs, and escaping of everything that came from a
results file."""

import os
import re
from html.parser import HTMLParser

import pytest
from report_paths import HOSTILE, PARTIAL, RUN_A, RUN_B, make_fixtures

from tfdet.report import render_report
from tfdet.report.render import environment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Page(HTMLParser):
    """Every start tag with its attributes, and the text, of a page."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.text = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag, **wanted):
        return [a for t, a in self.tags if t == tag and all(
            (v in (a.get(k) or "").split()) if k == "class" else a.get(k) == v for k, v in wanted.items())]


@pytest.fixture(scope="module")
def page_a(build):
    return render_report(build(RUN_A), generated="2026-01-01 00:00 UTC")


def test_autoescape_is_on_for_every_template():
    env = environment()
    assert env.autoescape is True
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_sections_in_order_with_disagreements_near_the_top(page_a):
    ids = [a["id"] for t, a in Page(page_a).tags if t == "section"]
    assert ids == ["summary", "disagreements", "runs", "results", "pictures", "newly-measured"]
    assert page_a.startswith("<!DOCTYPE html>")
    assert "3 disagreements with the catalogue" in page_a


def test_rows_cells_and_classes(page_a):
    page = Page(page_a)
    rows = [a["data-case"] for a in page.all("tr", **{"class": "row"})]
    assert rows == ["argmax-ties", "bincount", "unseeded-random-ops", "timestamp", "ref-variable-scatter",
                    "data-stateful-parallel-map", "fixture-crash", "segment-sum", "while-loop-parallel-iterations",
                    "cudnn-conv-autotuning"]
    assert page.all("tr", id="row-argmax-ties-forward")
    cells = page.all("td", **{"class": "cell"})
    assert len(cells) == 9 * 3 + 1  # the skipped entry's three modes are one cell
    by = {}
    for a in cells:
        by[a["data-outcome"]] = by.get(a["data-outcome"], 0) + 1
    assert by == {"deterministic": 13, "varies": 8, "raised": 3, "failed": 3, "skipped": 1}
    flagged = page.all("td", **{"class": "disagrees"})
    assert len(flagged) == 3 and all("DISAGREES WITH THE CATALOGUE" in a["title"] for a in flagged)
    (skipped,) = page.all("td", **{"class": "o-skipped"})
    assert skipped["colspan"] == "3"
    # figures on expansion (details) and on hover (title)
    assert len(page.all("details")) >= 27
    assert any("max ULP difference" in a["title"] for a in page.all("td", **{"class": "o-varies"}))
    # the legend names every outcome
    legend = " ".join(page.text)
    for word in ("deterministic:", "varies:", "raised:", "failed:", "skipped:", "not measured (interrupted)"):
        assert word in legend


def test_disagreement_table_names_entry_claim_and_source(page_a):
    section = page_a[page_a.index('<section id="disagreements"'):page_a.index('<section id="runs"')]
    for text in ("argmax-ties", "timestamp", "ref-variable-scatter", "raises_under_determinism",
                 "deterministic_with_switch", "TF 2.8 release notes", "Claimed to vary, but did not vary here (1)"):
        assert text in section
    assert 'href="https://github.com/tensorflow/tensorflow/releases/tag/v2.8.0"' in section


def test_summary_and_what_to_do(page_a):
    assert "5 ops of 8 measured vary from run to run without determinism" in page_a
    assert "switch: enable_op_determinism. Here: reproducible under env, cost \u00d71.27" in page_a


def test_charts_are_inline_svg(page_a):
    page = Page(page_a)
    charts = page.all("svg", **{"class": "chart"})
    assert len(charts) == 2 and all(a.get("role") == "img" for a in charts)
    assert len(page.all("circle")) > 5 and len(page.all("rect")) > 5


def test_two_versions_get_column_groups_differences_and_heatmaps(build):
    html = render_report(build(RUN_A, RUN_B))
    page = Page(html)
    groups = page.all("th", scope="colgroup")
    assert [a["colspan"] for a in groups] == ["3", "2"]
    assert "The runs differ in 10 settings" in html and "eager" in html
    assert len(page.all("svg", **{"class": "chart"})) == 2 + 2 + 2  # heatmaps, variance, cost
    assert "Outcome by TF version, env mode" in html
    assert page.all("td", **{"class": "diff"})


def test_interrupted_run_is_marked(build):
    html = render_report(build(PARTIAL))
    page = Page(html)
    missing = page.all("td", **{"class": "o-missing"})
    assert len(missing) == 4 and all("not measured (interrupted)" in a["title"] for a in missing)
    assert "is incomplete:" in html and "tfdet probe --resume" in html


HOSTILE_STRINGS = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "<svg onload=alert(3)>", "<script>alert(4)</script>",
    "<iframe src=javascript:alert(5)></iframe>", '"><script>alert(6)</script>', "<script>alert(7)</script>",
    "<img src=y onerror=alert(8)>", "<script>alert(9)</script>", "<script>alert(10)</script>", "<b>Boom</b>",
    "<script>alert(11)</script>", '<a href="http://evil.example/">click</a>', "<marquee>gpu</marquee>",
    "/tmp/<script>alert('path')</script>/python", "<style>body{display:none}</style>", "<blink>535</blink>",
    "<form action=//evil.example><button>go</button></form>", "<object>float32</object>", "<span>overflow</span>",
    "<em>dirty</em>", "<i>tail</i>", "</textarea>",
]


def test_hostile_strings_render_as_text(build, tmp_path):
    """Markup, quotes, unicode and very long text, in every free-text field a valid file can hold."""
    fx = make_fixtures()
    path = tmp_path / "<img src=q onerror=alert('file')>.jsonl"  # no '/' in a file name
    path.write_text(open(HOSTILE, encoding="utf-8").read(), encoding="utf-8")
    html = render_report(build(str(path), title="<script>alert('title')</script>"))
    for raw in HOSTILE_STRINGS + ["<img src=q onerror=alert('file')>", "<script>alert('title')</script>"]:
        assert raw not in html, raw
    page = Page(html)
    tags = {t for t, _ in page.tags}
    assert not tags & {"script", "iframe", "img", "b", "object", "embed", "link", "form", "marquee", "blink", "i",
                       "u", "textarea", "button"}
    assert [t for t, _ in page.tags].count("style") == 1  # the page's own stylesheet, no other
    assert all(not k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert not [a for a in page.all("a") if "evil.example" in (a.get("href") or "")]
    # ... and they are there, as text: case names, reasons, messages, the environment, the catalogue's words
    text = "".join(page.text)
    for shown in ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "<script>alert(7)</script>",
                  "<iframe src=javascript:alert(5)></iframe>", "<img src=q onerror=alert('file')>.jsonl",
                  "/tmp/<script>alert('path')</script>/python", "<script>alert(11)</script>",
                  "<style>body{display:none}</style>", "<marquee>gpu</marquee> (compute <u>8.0</u>)",
                  "<form action=//evil.example><button>go</button></form>", fx.QUOTES, fx.UNICODE, fx.LONG_CASE,
                  "<object>float32</object>"):
        assert shown in text, shown
    assert fx.LONG.strip() in text  # a very long message is shown whole, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # in the SVG too, escaped by svg.py


def test_no_external_resources(build):
    html = render_report(build(RUN_A, RUN_B, PARTIAL))
    for tag, attrs in Page(html).tags:
        for key in ("src", "href", "srcset", "data", "poster", "action", "xlink:href"):
            value = (attrs.get(key) or "").strip().lower()
            if tag == "a" and key == "href":
                continue  # links to sources are followed only when clicked
            assert not value.startswith(("http:", "https:", "//", "ftp:")), (tag, key, value)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", html)
    assert "<script" not in html and "<link" not in html
