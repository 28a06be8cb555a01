"""A probe setting is declared once (tfdet/results/probe_settings.py): a field
added there reaches the command line, the results header, --resume and the
argv of a probe started in another process, with nothing else edited."""

import argparse
import dataclasses

import pytest

import records as make
from tfdet.results import ResultsMismatch, load, probe_settings
from tfdet.results.probe_file import ProbeResultsWriter, resume_mismatches


@dataclasses.dataclass(frozen=True)
class WithWarmup(probe_settings.ProbeSettings):
    """The settings as they would be with one more field."""

    warmup: int = probe_settings.setting(0, "--warmup", "untimed runs before timing (default {default})",
                                         parse="runs", metavar="N", resume=probe_settings.COMPARE)


@pytest.fixture
def warmup(monkeypatch):
    monkeypatch.setattr(probe_settings, "ProbeSettings", WithWarmup)


def _parser():
    from tfdet.cli import app

    return app.build_parser()


def test_a_new_setting_is_a_flag_with_its_help_type_and_default(warmup):
    parser = _parser()
    args = parser.parse_args(["probe", "--warmup", "3"])
    assert args.warmup == 3
    assert parser.parse_args(["probe"]).warmup is None  # left out: --resume may take the file's
    with pytest.raises(Exception, match="argument --warmup: must be at least 1"):  # the runs type
        parser.parse_args(["probe", "--warmup", "0"])
    from tfdet.cli import probe_cmd

    assert probe_settings.defaults()["warmup"] == 0  # what _run_claimed applies to a flag left out
    assert "--warmup" in probe_cmd._epilog()  # --resume's list of flags it compares


def test_a_new_setting_is_recorded_in_the_header_and_read_back(warmup, tmp_path):
    from tfdet.probe.runner import ProbeConfig

    config = ProbeConfig(None, str(tmp_path / "r.jsonl"), settings={"warmup": 3})
    recorded = probe_settings.header_settings(dict(vars(config), **config.settings))  # as Probe.run builds it
    assert recorded == {"settle": False, "warmup": 3}
    make.write(tmp_path / "r.jsonl", make.header(settings=recorded))
    assert load(str(tmp_path / "r.jsonl")).header.settings["warmup"] == 3


def test_resume_refuses_another_value_of_a_new_setting_and_takes_the_files(warmup, tmp_path):
    old, new = make.header(settings={"warmup": 2}), make.header(settings={"warmup": 4})
    assert resume_mismatches(old, new) == [("warmup", 2, 4)]
    path = tmp_path / "r.jsonl"
    make.write(path, old)
    writer = ProbeResultsWriter(str(path), resume=True)
    with pytest.raises(ResultsMismatch, match="warmup is 2 in the file, 4 here"):
        writer.start(new)
    writer.close()
    # the command line: a flag left out takes the file's value; another one is refused
    from tfdet.cli import probe_cmd
    from tfdet.cli.exitcodes import CommandError

    writer = ProbeResultsWriter(str(path), resume=True)
    args = _parser().parse_args(["probe", "--out", str(path)])
    args.inter_threads = args.threads
    probe_cmd._resume_defaults(args, "sha256:abc", writer)
    assert args.warmup == 2
    args = _parser().parse_args(["probe", "--out", str(path), "--warmup", "5"])
    with pytest.raises(CommandError, match="warmup is 2 in the file, 5 here"):
        probe_cmd._resume_defaults(args, "sha256:abc", writer)
    writer.close()


def test_a_new_setting_is_passed_on_to_a_fleet_machine_and_a_matrix_version(warmup):
    from tfdet.matrix.job import probe_command
    from tfdet.probe.fleet import probe_flags

    assert probe_flags({"warmup": 3, "seed": 1}) == ["--seed", "1", "--warmup", "3"]  # in field order
    assert probe_flags({"repeats": 4, "warmup": 3}) == ["--repeats", "4", "--warmup", "3"]
    assert probe_command("/venv/bin/python", "out.jsonl", ["baseline"], {"warmup": 3}, False)[-2:] == [
        "--warmup", "3"]
    args = _parser().parse_args(["probe", "--warmup", "7", "--executor", "dask"])
    flags = probe_flags({f.name: getattr(args, f.name, None) for f in probe_settings.fields()})  # as the fleet does
    assert flags == ["--warmup", "7"]


def test_settle_is_resumed_from_the_header_not_from_its_argv(tmp_path):
    """A probe run through the API (ProbeConfig(settle=True), no argv) records
    settle; --resume continues it with settle, whatever argv says."""
    from tfdet.cli import probe_cmd

    path = tmp_path / "r.jsonl"
    make.write(path, make.header(argv=[], settings={"settle": True}))
    writer = ProbeResultsWriter(str(path), resume=True)
    args = _parser().parse_args(["probe", "--out", str(path)])
    args.inter_threads = args.threads
    probe_cmd._resume_defaults(args, "sha256:abc", writer)
    writer.close()
    assert args.settle is True


def test_a_file_written_before_the_header_recorded_settings_keeps_its_settle_from_its_argv(tmp_path):
    from tfdet.results.probe_file import recorded_settings

    path = tmp_path / "r.jsonl"
    for argv, settle in ((["probe", "--settle"], True), (["probe"], False)):
        make.write(path, make.header(argv=argv))  # no settings: as every file before them
        header = load(str(path)).header
        assert header.settings is None and recorded_settings(header) == {"settle": settle}


def test_every_setting_is_a_flag_of_tfdet_probe():
    parser = _parser()
    probe = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "probe")[1]
    flags = {option for action in probe._actions for option in action.option_strings}
    assert {f.metadata["flag"] for f in probe_settings.fields()} <= flags
    assert isinstance(probe, argparse.ArgumentParser)
