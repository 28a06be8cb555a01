"""The corpus tables, from the results file, between their markers: the docs page's
(docs/topics/corpus.md, each cell with what it found) and the README's (marks only)."""

import os

from .launch import ROOT

START, END = "<!-- corpus-table:start -->", "<!-- corpus-table:end -->"
COLUMNS = (("runs stock", "a", "runs_stock"), ("runs patched", "a", "runs_patched"),
           ("reproduces patched", "b", None), ("scan hits", "c", None), ("locate root", "d", None),
           ("assert_reproducible", "e", None), ("diverge", "f", None))
MARK = {"pass": "✅", "expected": "✅ (documented)", "fail": "❌", "error": "❌", "n/a": "–"}


def _cell(rec, flag, detailed=True):
    if rec is None:
        return "not run"
    if not detailed:
        return _mark(rec, flag)
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


def _mark(rec, flag):
    if flag is not None:
        ran = rec["data"].get(flag)
        return "✅" if ran else ("❌" if ran is False else "not run")
    return MARK[rec["status"]]


def _short(text, limit=140):
    text = " ".join(text.replace("|", "/").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(latest, names, detailed=True):
    lines = ["| program | " + " | ".join(c[0] for c in COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name in names:
        cells = [_cell(latest.get((name, promise)), flag, detailed) for _, promise, flag in COLUMNS]
        lines.append("| `%s` | %s |" % (name, " | ".join(cells)))
    return "\n".join(lines)


DOCS_PAGE = os.path.join(ROOT, "docs", "topics", "corpus.md")  # the table with what each cell found
README = os.path.join(ROOT, "README.md")  # the same table, marks only


def write(latest, names, page=DOCS_PAGE, readme=README):
    """Replace both tables between their markers; returns the docs page's table."""
    table = render(latest, names)
    _replace_between_markers(page, table)
    _replace_between_markers(readme, render(latest, names, detailed=False))
    return table


def _replace_between_markers(path, table):
    with open(path) as handle:
        text = handle.read()
    if START not in text or END not in text:
        raise SystemExit("%s: no %s ... %s markers for the corpus table" % (path, START, END))
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as handle:
        handle.write(head + START + "\n" + table + "\n" + END + tail)
