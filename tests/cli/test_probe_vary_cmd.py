"""`tfdet probe --vary`: usage and input errors are one line and an exit code, before anything starts."""

import pytest

from cli_runner import run_cli


@pytest.mark.parametrize("argv, code, says", [
    (["--vary", "onednn,thread"], 2, "unknown setting 'thread'"),
    (["--vary", "precision"], 2, "precision (float64 / mixed_float16 vs float32) is not measured"),
    (["--vary", "threads", "--modes", "baseline"], 2, "--vary cannot be combined with --modes"),
    (["--vary", "threads", "--python", "/usr/bin/python3"], 2, "--vary cannot be combined with --python"),
    (["--vary", "threads", "--ops", "matmul,no-such-op"], 3, "no --vary case, API or raw op named no-such-op"),
])
def test_bad_input_is_one_line_and_an_exit_code(tmp_path, argv, code, says):
    out_file = tmp_path / "v.jsonl"
    got, out, err = run_cli("probe", *argv, "--out", str(out_file))
    assert got == code
    assert says in err and "Traceback" not in err
    assert not out_file.exists()  # nothing was started


def test_resume_of_a_missing_file_starts_nothing(tmp_path):
    code, _, err = run_cli("probe", "--vary", "threads", "--resume", "--out", str(tmp_path / "none.jsonl"))
    assert code == 2 and "does not exist" in err


def test_ops_take_case_names_apis_and_raw_ops():
    from tfdet.cli.probe_vary_cmd import resolve_cases

    assert resolve_cases(["MatMul", "tf.math.reduce_sum", "conv2d"]) == (["matmul", "conv2d", "reduce-sum"], [])


def test_help_teaches_the_settings(capsys):
    code, out, _ = run_cli("probe", "--help")
    out += capsys.readouterr().out  # argparse prints help on sys.stdout
    assert code == 0
    for word in ("TF_ENABLE_ONEDNN_OPTS=0", "jit_compile=True", "MirroredStrategy", "varies run to run",
                 "tfdet catalog update FILE"):
        assert word in out
