"""The corpus table of the docs (docs/topics/corpus.md), from the results file, between its markers."""

import os

from .launch import ROOT

START, END = "<!-- corpus-table:start -->", "<!-- corpus-table:end -->"
COLUMNS = (("runs stock", "a", "runs_stock"), ("runs patched", "a", "runs_patched"),
           ("reproduces patched", "b", None), ("scan hits", "c", None), ("locate root", "d", None),
           ("assert_reproducible", "e", None), ("diverge", "f", None))
MARK = {"pass": "✅", "expected": "✅ (documented)", "fail": "❌", "error": "❌", "n/a": "–"}


def _cell(rec, flag):
    if rec is None:
        return "not run"
    if flag is not None:  # a's two facts: did it run stock, did it run patched
        ran = rec["data"].get(flag)
        return "✅" if ran else ("❌ " + _short(rec["detail"]) if ran is False else "not run")
    if rec["status"] in ("pass", "n/a"):
        detail = rec["detail"] if rec["promise"] in ("c", "d") and rec["status"] == "pass" else ""
        return (MARK[rec["status"]] + (" " + _short(detail) if detail else "")).strip()
    detail = rec["detail"]
    if " [pending fix" in detail:  # the fix another branch holds matters more than the symptom's wording
        symptom, pending = detail.split(" [", 1)
        return MARK[rec["status"]] + " " + _short(pending.rstrip("]")) + ": " + _short(symptom, 90)
    return MARK[rec["status"]] + " " + _short(detail)


def _short(text, limit=140):
    text = " ".join(text.replace("|", "/").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(latest, names):
    lines = ["| program | " + " | ".join(c[0] for c in COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name in names:
        cells = [_cell(latest.get((name, promise)), flag) for _, promise, flag in COLUMNS]
        lines.append("| `%s` | %s |" % (name, " | ".join(cells)))
    return "\n".join(lines)


README = os.path.join(ROOT, "docs", "topics", "corpus.md")  # the page that shows the table


def write(latest, names, readme=README):
    """Replace the table between the page's markers; returns the table."""
    table = render(latest, names)
    with open(readme) as handle:
        text = handle.read()
    if START not in text or END not in text:
        raise SystemExit("%s: no %s ... %s markers for the corpus table" % (readme, START, END))
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as handle:
        handle.write(head + START + "\n" + table + "\n" + END + tail)
    return table
