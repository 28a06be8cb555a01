"""tfdet compare's command line: what it refuses, with one line and the documented exit code."""

import pytest

from tests.cli_runner import run_cli


@pytest.mark.parametrize("argv, code, says", [
    (["--workload", "digits-cnn", "--a", "lr=0.1"], 2, "give --b, or --aa"),
    (["--workload", "digits-cnn", "--a", "lr=0.1", "--b", "lr=0.1"], 2, "the same setup"),
    (["--workload", "digits-cnn", "--aa", "--min-runs", "9", "--max-runs", "8"], 2, "--min-runs 9 is more"),
    (["--workload", "digits-cnn", "--aa", "--sources", "init,seeds"], 2, "unknown source seeds"),
    (["--workload", "digits-cnn", "--a", "lr=fast", "--aa"], 2, "lr=fast is not a float"),
    (["--workload", "digits-cnn", "--a", "depth=3", "--aa"], 2, "is not KEY=VALUE"),
    (["--workload", "digits-cnn", "--aa", "--gamma", "0.4"], 2, "gamma must be between 0.5 and 1"),
    (["--aa"], 2, "trains nothing"),
    (["--a", "script=/no/such/train.py", "--aa"], 3, "no such file"),
    (["--workload", "digits-cnn", "--aa", "--resume", "--overwrite"], 2, "exclude each other"),
    (["--workload", "digits-cnn", "--aa", "--sources", "init,hparams"], 2, "needs a --space"),
    (["--workload", "digits-cnn", "--aa", "--space", "lr=0.01:0.1"], 2, "only when --sources includes hparams"),
    (["--workload", "digits-cnn", "--a", "lr=0.1", "--b", "lr=0.2", "--sources", "hparams",
      "--space", "lr=0.01:0.1:log"], 2, "--a and --b sets lr"),
    (["--workload", "digits-cnn", "--lr", "0.1", "--aa", "--sources", "hparams", "--space", "lr=0.01:0.1"], 2,
     "--lr sets lr"),
    (["--workload", "digits-cnn", "--aa", "--sources", "hparams", "--space", "lr=0.1:0.01"], 2, "must be below"),
    (["--workload", "digits-cnn", "--aa", "--sources", "hparams", "--space", "depth=1:3"], 2, "KEY one of"),
    (["--workload", "digits-cnn", "--aa", "--sources", "init,augment"], 2, "no augmentation or dropout layer"),
    (["--workload", "digits-cnn", "--a", "lr=0.1", "--b", "lr=0.2", "--b", "lr=0.2"], 2, "setups B and C are the same"),
    (["--workload", "digits-cnn", "--a", "lr=0.1"] + [x for k in range(8) for x in ("--b", "lr=0.%d" % (k + 2))], 2,
     "at most 7 setups besides A"),
])
def test_refuses_with_one_line(argv, code, says):
    status, out, err = run_cli("compare", *argv)
    assert status == code
    assert says in err and "Traceback" not in err
    assert out == ""


def test_resuming_another_kind_of_file_is_invalid_input(tmp_path):
    other = tmp_path / "probe.jsonl"
    other.write_text('{"record": "header", "kind": "diverge", "schema_version": 1}\n')
    status, _, err = run_cli("compare", "--workload", "digits-cnn", "--aa", "--out", str(other), "--resume",
                             "--quiet")
    assert status == 3 and "not a tfdet compare results file" in err


def test_fixed_looks_once_at_max_runs_whatever_min_runs_says():
    """Regression: --fixed --max-runs 6 was refused because the default --min-runs (10) exceeded it."""
    from tfdet.cli.app import build_parser
    from tfdet.cli.compare_cmd import config_of

    args = build_parser().parse_args(["compare", "--workload", "digits-cnn", "--aa", "--fixed", "--max-runs", "6"])
    config = config_of(args)
    assert (config.min_runs, config.max_runs) == (6, 6)


def test_drawn_hyperparameters_are_the_space_s_not_the_setup_s():
    from tfdet.cli.app import build_parser
    from tfdet.cli.compare_cmd import config_of

    args = build_parser().parse_args(["compare", "--a", "workload=digits-cnn", "--b", "workload=digits-augment",
                                      "--sources", "init,augment,hparams", "--space", "lr=0.02:0.2:log",
                                      "--space", "batch_size=16|32"])
    config = config_of(args)
    assert config.space == {"lr": "0.02:0.2:log", "batch_size": "16|32"}
    assert (config.a.lr, config.b.lr, config.a.batch_size) == (0.0, 0.0, 0)  # 0: drawn per pair, not the setup's


def test_a_repeated_b_adds_setups_compared_with_a():
    from tfdet.cli.app import build_parser
    from tfdet.cli.compare_cmd import config_of

    args = build_parser().parse_args(["compare", "--workload", "digits-cnn", "--a", "lr=0.1", "--b", "lr=0.02",
                                      "--b", "lr=0.5"])
    config = config_of(args)
    assert (config.b.name, config.b.lr) == ("B", 0.02)
    assert [(s.name, s.lr) for s in config.others] == [("C", 0.5)]
