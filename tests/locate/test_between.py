"""tfdet locate across environments: --record, --compare, --between.

The slow tests run a real Keras model (examples/locate/two_settings.py) whose
Dense MatMul changes with oneDNN on/off and whose sum of 10,000,019 floats
changes with 1 or 2 intra-op threads on this CPU, each setting bitwise stable
run to run; and two real programs whose graphs differ by one op. The fast ones
check what needs no TensorFlow: sides, malformed files, the pairing's rules."""

import json
import os
import subprocess
import sys

import pytest

from cli_runner import run_cli
from tfdet.cli.exitcodes import FINDING, INVALID_INPUT, USAGE
from tfdet.locating import crossalign
from tfdet.locating.sides import SideError, parse_side, settings_changed
from tfdet.locating.trace_file import Execution, OpInfo, Run
from tfdet.results import load
from tfdet.results.between_file import read_fingerprints

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "examples", "locate", "two_settings.py")


def tfdet(*argv, env=None, cwd=ROOT):
    environ = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
    return subprocess.run([sys.executable, "-m", "tfdet", "locate"] + list(argv), capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=1200)


# ----------------------------------------------------------------------------- sides (fast)

def test_a_side_is_settings_and_variables_separated_by_commas():
    side = parse_side("threads=1, TF_ENABLE_ONEDNN_OPTS=0,XLA_FLAGS=--xla_a --xla_b")
    assert side.settings == {"threads": "1"}
    assert side.env == {"TF_ENABLE_ONEDNN_OPTS": "0", "XLA_FLAGS": "--xla_a --xla_b"}
    assert parse_side("onednn=off").env == {"TF_ENABLE_ONEDNN_OPTS": "0"}
    assert parse_side("").items() == {}


@pytest.mark.parametrize("text, words", [
    ("threads", "expected NAME=VALUE"), ("threads=0", "positive integer"), ("execution=lazy", "eager or function"),
    ("thread=1", "neither a setting"), ("1X=2", "neither a setting"),
])
def test_a_side_that_is_not_one_is_refused_naming_the_item(text, words):
    with pytest.raises(SideError, match=words):
        parse_side(text)


def test_a_bad_side_is_a_usage_error_before_anything_runs(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("raise SystemExit('must not run')\n")
    code, out, err = run_cli("locate", "--between", "threads=0", "threads=1", str(script))
    assert code == USAGE and err.count("\n") == 1 and "threads=0" in err, err


@pytest.mark.parametrize("flags", [["--patch"], ["--repeats", "3"], ["--runs", "4"], ["--no-detail"]])
def test_flags_of_plain_locate_are_refused_across_environments_not_ignored(tmp_path, flags):
    script = tmp_path / "s.py"
    script.write_text("raise SystemExit('must not run')\n")
    code, out, err = run_cli("locate", "--between", "threads=1", "threads=2", *flags, str(script))
    assert code == USAGE and err.count("\n") == 1 and flags[0] in err, err


def test_the_environment_keeps_the_variables_that_change_kernels_and_not_logs_or_terraforms():
    from tfdet.locating.machine import relevant_environment

    environ = {"TF_ENABLE_ONEDNN_OPTS": "0", "XLA_FLAGS": "--x", "OMP_NUM_THREADS": "1", "MKL_CBWR": "COMPATIBLE",
               "TF_CPP_MIN_LOG_LEVEL": "2", "TF_CLI_CONFIG_FILE": "/root/.terraformrc", "HOME": "/root"}
    assert relevant_environment(environ) == {"MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1",
                                             "TF_ENABLE_ONEDNN_OPTS": "0", "XLA_FLAGS": "--x"}


def test_variables_are_put_in_the_settings_the_catalogue_speaks_of():
    assert settings_changed(["TF_ENABLE_ONEDNN_OPTS", "onednn_enabled", "intra_op_threads", "OMP_NUM_THREADS",
                             "tf_version", "SOMETHING_ELSE"]) == ["SOMETHING_ELSE", "onednn", "tf_version", "threads"]


# ----------------------------------------------------------------------------- malformed files (fast)

def _valid_header():
    return {"kind": "fingerprints", "schema_version": 1, "tfdet_version": "0", "record": "header",
            "created": "2026-11-26T08:00:00Z", "argv": [], "target": "t.py", "outputs": 1,
            "machine": {"tf_version": "2.21.0", "device": "cpu"}}


def _output():
    return {"record": "output", "key": ["e", 0, 0], "fingerprint": "00ff", "again": "00ff"}


@pytest.mark.parametrize("lines, words", [
    (["not json at all", "{}"], "a.jsonl:1: not a tfdet results file (line is not JSON)"),
    ([{"kind": "probe", "record": "header"}], "a.jsonl:1: not a tfdet fingerprints file"),
    ([dict(_valid_header(), schema_version=9)], "a.jsonl:1: fingerprints schema version 9"),
    ([dict(_valid_header(), machine={"device": "cpu"}), _output()], "a.jsonl:1: missing field machine.tf_version"),
    ([_valid_header(), dict(_output(), key=["x", 1])], "a.jsonl:2: field key: expected"),
    ([_valid_header(), dict(_output(), record="outptu")], 'a.jsonl:2: not a fingerprints record (record "outptu")'),
    ([_valid_header()], "a.jsonl: the header says 1 outputs, the file holds 0 (cut short?)"),
])
def test_a_malformed_fingerprints_file_is_one_line_naming_the_file_and_place(tmp_path, lines, words):
    bad = tmp_path / "a.jsonl"
    bad.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    good = tmp_path / "b.jsonl"
    good.write_text(json.dumps(_valid_header()) + "\n" + json.dumps(_output()) + "\n")
    assert read_fingerprints(str(good)).outputs[0].fingerprint == "00ff"
    code, out, err = run_cli("locate", "--compare", str(bad), str(good))
    assert code == INVALID_INPUT and err.count("\n") == 1 and str(tmp_path / words) in err, err
    assert "Traceback" not in err and out == ""


def test_two_files_with_the_same_outputs_compare_as_the_same(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(_valid_header()) + "\n" + json.dumps(dict(_output(), type="Mul")) + "\n")
    code, out, err = run_cli("locate", "--compare", str(path), str(path), "--json")
    assert code == 0, err
    assert json.loads(out)["verdict"] == "same" and json.loads(out)["outputs_compared"] == 1


def _recorded(path, onednn, matmul, matmul_again):
    """A fingerprints file of a one-function program: MatMul then Sum, recorded with TF_ENABLE_ONEDNN_OPTS=onednn."""
    header = dict(_valid_header(), outputs=2, outputs_varying=int(matmul_again not in (None, matmul)),
                  machine={"tf_version": "2.21.0", "device": "cpu", "env": {"TF_ENABLE_ONEDNN_OPTS": onednn}})
    lines = [header,
             {"record": "op", "graph": "f", "name": "m/MatMul", "type": "MatMul", "inputs": [["f", "x", 0]],
              "outputs": [["float32", [4, 4]]]},
             {"record": "op", "graph": "f", "name": "m/Sum", "type": "Sum", "inputs": [["f", "m/MatMul", 0]],
              "outputs": [["float32", []]]},
             {"record": "output", "key": ["g", "f", "m/MatMul", 0, 0], "fingerprint": matmul, "again": matmul_again,
              "step": 1},
             {"record": "output", "key": ["g", "f", "m/Sum", 0, 0], "fingerprint": matmul + "s", "again": matmul + "s",
              "step": 1}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_the_first_difference_is_expected_only_when_stable_within_each_side_and_known_sensitive(tmp_path):
    facts = _facts(tmp_path)  # MatMul: sensitive to onednn on TF 2.21 CPU
    a = _recorded(tmp_path / "a.jsonl", "0", "aa", "aa")
    b = _recorded(tmp_path / "b.jsonl", "1", "bb", "bb")
    code, out, err = run_cli("locate", "--compare", a, b, "--json", "--catalog", facts)
    result = json.loads(out)
    assert code == FINDING and result["verdict"] == "expected", result["summary"]
    first = result["first_difference"]
    assert (first["op_type"], first["stable_within"]) == ("MatMul", {"a": True, "b": True})
    assert first["sensitive_to"]["onednn"]["max_ulp"] == 12 and result["settings_changed"] == ["onednn"]
    assert result["outputs_differing"] == 2 and result["other_roots"] == []  # the Sum only spread it
    # the same difference with a catalogue that knows nothing of MatMul: unexplained
    empty = tmp_path / "empty.yaml"
    empty.write_text("schema_version: 1\nsensitivities: []\n")
    code, out, err = run_cli("locate", "--compare", a, b, "--json", "--catalog", str(empty))
    assert json.loads(out)["verdict"] == "unexplained"
    # a MatMul that varies run to run on side b: not the environment's doing
    varying = _recorded(tmp_path / "v.jsonl", "1", "bb", "cc")
    code, out, err = run_cli("locate", "--compare", a, varying, "--catalog", facts)
    assert code == FINDING and "varies run to run within side b" in out, out
    # side b without a second run of it: not measured, so not expected
    unmeasured = _recorded(tmp_path / "u.jsonl", "1", "bb", None)
    code, out, err = run_cli("locate", "--compare", a, unmeasured, "--json", "--catalog", facts)
    result = json.loads(out)
    assert result["verdict"] == "unexplained" and result["first_difference"]["stable_within"] == {"a": True, "b": None}
    assert any("not known" in note for note in result["notes"])


def test_report_refuses_a_fingerprints_file_and_a_comparison_in_one_line(tmp_path):
    a = _recorded(tmp_path / "a.jsonl", "0", "aa", "aa")
    code, out, err = run_cli("locate", "--compare", a, a, "--json")
    compared = tmp_path / "cmp.json"
    compared.write_text(out)
    assert load(str(compared)).verdict == "same"
    for path in (a, str(compared)):
        code, out, err = run_cli("report", path, "-o", str(tmp_path / "r.html"))
        assert code == INVALID_INPUT and err.count("\n") == 1 and "tfdet locate --compare" in err, err


# ----------------------------------------------------------------------------- the pairing's rules (fast)

def _graph_run(names, fingerprints):
    """A run of one tf.function whose ops are `names` [(name, type, shape)], each producing one output."""
    ops, executions = {}, []
    for (name, op_type, shape), fingerprint in zip(names, fingerprints):
        op = ops[("f", name)] = OpInfo(op_type, "f", name, outputs=[["float32", shape]])
        executions.append(Execution(("g", "f", name, 0, 0), fingerprint, op, step=1))
    return Run("r", executions, ops, status="finished")


def test_renamed_layers_pair_by_scope_and_creation_order_and_an_extra_op_stays_unpaired():
    a = _graph_run([("model/dense/MatMul", "MatMul", [4, 8]), ("model/dense_1/MatMul", "MatMul", [4, 2]),
                    ("model/Sum", "Sum", [])], ["1", "2", "3"])
    b = _graph_run([("model_1/dense_2/MatMul", "MatMul", [4, 8]), ("model_1/Sqrt", "Sqrt", [4, 8]),
                    ("model_1/dense_3/MatMul", "MatMul", [4, 2]), ("model_1/Sum", "Sum", [])], ["1", "9", "2", "3"])
    pairs, only_a, only_b = crossalign.pair(a, b)
    assert {k[2]: v.op.name for k, v in pairs.items()} == {
        "model/dense/MatMul": "model_1/dense_2/MatMul", "model/dense_1/MatMul": "model_1/dense_3/MatMul",
        "model/Sum": "model_1/Sum"}
    assert only_a == [] and [e.op.name for e in only_b] == ["model_1/Sqrt"]


def test_a_renamed_function_and_model_scope_pair_on_the_second_chance():
    a = _graph_run([("model/dense/MatMul", "MatMul", [4, 8]), ("model/Sum", "Sum", [])], ["1", "2"])
    b = _graph_run([("functional_1/dense_1/MatMul", "MatMul", [4, 8]), ("functional_1/Sum", "Sum", []),
                    ("functional_1/Cast", "Cast", [4, 8])], ["1", "3", "4"])
    for execution in b.executions:  # Keras 3 calls its predict step otherwise
        execution.key = ("g", "one_step_on_data") + execution.key[2:]
        execution.op.graph = "one_step_on_data"
    b.ops = {("one_step_on_data", name): op for (_, name), op in b.ops.items()}
    pairs, only_a, only_b = crossalign.pair(a, b)
    assert {k[2]: v.op.name for k, v in pairs.items()} == {
        "model/dense/MatMul": "functional_1/dense_1/MatMul", "model/Sum": "functional_1/Sum"}
    assert only_a == [] and [e.op.op_type for e in only_b] == ["Cast"]


def test_an_op_whose_shape_changed_is_not_paired_with_the_other():
    a = _graph_run([("m/MatMul", "MatMul", [4, 8])], ["1"])
    b = _graph_run([("m/MatMul", "MatMul", [8, 8])], ["1"])
    pairs, only_a, only_b = crossalign.pair(a, b)
    assert pairs == {} and len(only_a) == len(only_b) == 1


def test_an_op_reading_an_op_inserted_before_it_on_one_side_does_not_correspond():
    a = _graph_run([("f/MatMul", "MatMul", [4, 4]), ("f/mul", "Mul", [4, 4])], ["1", "2"])
    b = _graph_run([("f/MatMul", "MatMul", [4, 4]), ("f/Sqrt", "Sqrt", [4, 4]), ("f/add", "AddV2", [4, 4]),
                    ("f/mul", "Mul", [4, 4])], ["1", "7", "8", "9"])
    # x: the function's argument, which nothing traces (a Placeholder): compared by its name's scope
    a.ops[("f", "f/mul")].inputs = [["f", "f/MatMul", 0], ["f", "f/Const", 0], ["f", "x", 0]]
    b.ops[("f", "f/mul")].inputs = [["f", "f/add", 0], ["f", "f/Const", 0], ["f", "x", 0]]
    for run in (a, b):
        run.ops[("f", "f/Const")] = OpInfo("Const", "f", "f/Const")
    pairs, _, only_b = crossalign.pair(a, b)
    mapped = crossalign.op_map(pairs)
    mul = a.executions[1]
    assert not crossalign.inputs_correspond(mul, pairs[mul.key], mapped, a.ops, b.ops)
    b.ops[("f", "f/mul")].inputs = [["f", "f/MatMul", 0], ["f", "f/Const", 0], ["f", "x", 0]]  # as a reads
    assert crossalign.inputs_correspond(mul, pairs[mul.key], mapped, a.ops, b.ops)
    b.ops[("f", "f/mul")].inputs = [["f", "f/MatMul", 0], ["f", "f/Const", 0], ["f", "y", 0]]  # another argument
    assert not crossalign.inputs_correspond(mul, pairs[mul.key], mapped, a.ops, b.ops)


# ----------------------------------------------------------------------------- real runs (slow)

# A catalogue that knows MatMul sensitive to oneDNN on TF 2.21 (what `tfdet probe --vary` measured on this CPU,
# issue 28's table) and nothing of Sum: the answer's "expected" follows the catalogue's facts.
FACTS = """\
schema_version: 1
sensitivities:
  - op: matmul
    title: MatMul
    names: [tf.linalg.matmul, MatMul]
    facts:
      - setting: onednn
        device: cpu
        versions: "==2.21"
        changes: true
        stable_within: true
        max_ulp: 12
        sources: ["measured:issue 28"]
"""


def _facts(tmp_path):
    path = tmp_path / "facts.yaml"
    path.write_text(FACTS)
    return str(path)


def _between(*sides, traces=None, catalog=None):
    extra = (["--traces", str(traces)] if traces else []) + (["--catalog", catalog] if catalog else [])
    proc = tfdet("--between", *sides, "--json", *extra, MODEL)
    assert proc.returncode == FINDING, proc.stderr + proc.stdout
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_between_onednn_off_and_on_names_the_dense_matmul_measured_stable_within_each(tmp_path):
    result = _between("TF_ENABLE_ONEDNN_OPTS=0", "TF_ENABLE_ONEDNN_OPTS=1", traces=tmp_path, catalog=_facts(tmp_path))
    first = result["first_difference"]
    assert first["op_type"] == "MatMul" and "dense" in first["op_name"], result["summary"]
    assert first["stable_within"] == {"a": True, "b": True}
    assert first["source"].endswith("two_settings.py:%d" % _line("predict_on_batch"))  # where the graph was made
    assert "onednn" in result["settings_changed"] and result["environment_changes"]["TF_ENABLE_ONEDNN_OPTS"] == [
        "0", "1"]
    assert result["verdict"] == "expected" and list(first["sensitive_to"]) == ["onednn"], result["summary"]
    assert not result["unmatched"]
    # the sides' files were kept under --traces: compared again, the same answer
    files = sorted(str(p) for p in tmp_path.glob("side-*.fingerprints.jsonl"))
    again = tfdet("--compare", *files, "--json", "--catalog", _facts(tmp_path))
    assert again.returncode == FINDING and json.loads(again.stdout)["first_difference"]["op_name"] == first["op_name"]
    # the shipped catalogue, without that fact (until catalog update writes one): unexplained, or expected by it
    shipped = json.loads(tfdet("--compare", *files, "--json").stdout)
    assert shipped["verdict"] in ("expected", "unexplained") and shipped["first_difference"]["op_type"] == "MatMul"


@pytest.mark.slow
def test_between_one_and_two_threads_names_the_sum_and_not_the_matmul(tmp_path):
    result = _between("threads=1", "threads=2", catalog=_facts(tmp_path))
    first = result["first_difference"]
    assert first["op_type"] == "Sum" and first["stable_within"] == {"a": True, "b": True}, result["summary"]
    assert result["verdict"] == "unexplained" and first["sensitive_to"] == {}  # the catalogue knows nothing of Sum
    assert "threads" in result["settings_changed"] and "MatMul" not in " ".join(result["other_roots"])


@pytest.mark.slow
def test_record_on_each_side_and_compare_the_files_names_the_matmul(tmp_path):
    paths = [str(tmp_path / "laptop.jsonl"), str(tmp_path / "server.jsonl")]
    for path, value in zip(paths, ("0", "1")):
        proc = tfdet("--record", path, MODEL, env={"TF_ENABLE_ONEDNN_OPTS": value})
        assert proc.returncode == 0, proc.stderr
        assert "Recorded" in proc.stdout and load(path).header.machine.env["TF_ENABLE_ONEDNN_OPTS"] == value
        assert load(path).header.outputs_varying == 0
    proc = tfdet("--compare", *paths)
    assert proc.returncode == FINDING, proc.stderr
    assert proc.stdout.startswith("First difference: MatMul (functional") and "TF_ENABLE_ONEDNN_OPTS: 0 -> 1" in \
        proc.stdout, proc.stdout


EXTRA_OP = """
import sys
import tensorflow as tf

@tf.function
def step(x):
    y = tf.matmul(x, x)
    if "--extra" in sys.argv:
        y = y + tf.sqrt(tf.abs(x))      # one op more on this side
    return tf.reduce_sum(y * 2.0)

print(step(tf.reshape(tf.range(16, dtype=tf.float32), [4, 4])))
"""


@pytest.mark.slow
def test_two_graphs_that_differ_by_an_op_report_it_unmatched_and_blame_nothing_matched(tmp_path):
    script = tmp_path / "extra.py"
    script.write_text(EXTRA_OP)
    plain, extra = str(tmp_path / "plain.jsonl"), str(tmp_path / "extra.jsonl")
    assert tfdet("--record", plain, str(script)).returncode == 0
    assert tfdet("--record", extra, str(script), "--", "--extra").returncode == 0
    proc = tfdet("--compare", plain, extra, "--json")
    result = json.loads(proc.stdout)
    unmatched = {u["side"]: u for u in result["unmatched"]}
    assert set(unmatched) == {"b"} and unmatched["b"]["count"] >= 3, result  # Abs, Sqrt, AddV2
    assert any(text.startswith("Sqrt ") for text in unmatched["b"]["first"])
    # the Mul after the extra add differs, but reads an output with no counterpart: not blamed
    assert result["first_difference"] is None and result["verdict"] == "unmatched-only", result
    assert proc.returncode == FINDING


def _line(marker):
    with open(MODEL) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line:
                return number
    raise AssertionError(marker)
