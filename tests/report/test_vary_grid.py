"""The op x setting grid of --vary results: cells, text, JSON, and the escaped, offline HTML page."""

from tfdet.report import report_from_files
from tfdet.report.vary_grid import build_grid, grid_json, grid_text, sensitive_by_setting
from tfdet.results import load

from vary_fixture import header, record, write


def test_grid_has_a_row_per_case_and_a_column_per_setting_variant(tmp_path):
    grid = build_grid(load(write(tmp_path / "v.jsonl")))
    assert [r.case for r in grid.rows] == ["matmul", "reduce-sum", "conv2d", "mlp-grad"]
    assert [(c.setting, c.variant) for c in grid.columns] == [
        ("onednn", "TF_ENABLE_ONEDNN_OPTS=0"), ("threads", "1 thread (reference 2)"),
        ("replicas", "2 replicas"), ("replicas", "3 replicas"), ("replicas", "4 replicas")]
    cells = {(r.case, c.setting, c.variant): cell for r in grid.rows for c, cell in zip(grid.columns, r.cells)}
    assert cells[("matmul", "onednn", "TF_ENABLE_ONEDNN_OPTS=0")].text == "differs (40 ulp)"
    assert cells[("conv2d", "threads", "1 thread (reference 2)")].text == "varies run to run (changed)"
    assert cells[("matmul", "replicas", "2 replicas")].verdict == "n/a"
    assert grid.counts["differs"] == 3
    assert sensitive_by_setting(grid) == {"onednn": ["matmul"], "threads": ["reduce-sum"], "replicas": ["mlp-grad"]}
    data = grid_json(grid)
    assert data["sensitive"]["threads"] == ["reduce-sum"]
    assert data["rows"][0]["cells"][0] == {"verdict": "differs", "text": "differs (40 ulp)", "max_ulp": 40,
                                           "max_rel": 1e-6, "max_abs": 1e-5, "frac_differ": 0.5,
                                           "reference_distinct": 1, "changed_distinct": 1}
    text = grid_text(grid)
    assert text.splitlines()[0].split()[0] == "op" and "differs (7 ulp)" in text


def test_replica_columns_sort_by_count_then_worker_columns(tmp_path):
    variants = ["4 workers", "%d replicas" % 4, "3 workers vs 3 replicas", "10 replicas", "2 replicas",
                "3 workers", "3 replicas, all-reduce alone", "3 replicas"]
    records = [record("mlp-grad", "replicas", v, "same") for v in variants]
    grid = build_grid(load(write(tmp_path / "v.jsonl", records)))
    assert [c.variant for c in grid.columns] == [
        "2 replicas", "3 replicas", "3 replicas, all-reduce alone", "4 replicas", "10 replicas",
        "3 workers", "3 workers vs 3 replicas", "4 workers"]


def test_page_is_escaped_and_offline(tmp_path):
    records = [record("matmul", "onednn", "TF_ENABLE_ONEDNN_OPTS=0", "raised", error="<script>alert(1)</script>")]
    path = write(tmp_path / "v.jsonl", records, titles={"matmul": "<b>MatMul</b>"}, cases=["matmul"])
    grid, page = report_from_files([path])
    assert grid.kind == "vary"
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>MatMul</b>" not in page and "&lt;b&gt;MatMul&lt;/b&gt;" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert "<td class=\"raised\"" in page


def test_an_unfinished_run_says_so(tmp_path):
    _, page = report_from_files([write(tmp_path / "v.jsonl", finished=False)])
    assert "did not finish" in page


def test_header_fixture_is_a_real_header():
    assert header().kind == "vary"
