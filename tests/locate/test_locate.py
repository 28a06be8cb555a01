"""tfdet locate and tfdet.testing on real training steps whose only
order-dependent op varies on this CPU (CropAndResizeGradImage,
ResourceScatterAdd), each run in its own process; and the same steps under
tfdet.patch(), where nothing differs."""

import json
import os
import subprocess
import sys

import jsonschema
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "examples", "locate"))
import steps  # noqa: E402 - examples/locate/steps.py: the training steps, as importable functions

from tfdet.locating import locate  # noqa: E402
from tfdet.results import schema  # noqa: E402
from tfdet.testing import assert_reproducible  # noqa: E402

pytest.importorskip("tensorflow")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


STEPS = steps.__file__


def line_of(marker, path=STEPS):
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line:
                return "%s:%d" % (path, number)
    raise AssertionError(marker)


def tfdet(*argv, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-m", "tfdet", "locate"] + list(argv), capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=900)


def test_a_variable_scatter_with_repeated_indices_is_named_at_its_line():
    result = locate(steps.scatter_add_step, 2, runs=2, repeats=1, detail=False)
    first = result.first_difference
    assert first is not None, result.verdict
    assert (first.op_type, first.output_slot) == ("ResourceScatterAdd", -1)  # what it wrote, read back
    assert first.source.endswith(line_of("SCATTER LINE").split(os.sep)[-1]) and first.function == "train_step"
    assert "resource-variable-scatter" in " ".join(first.catalog_entries) or first.catalog_entries
    assert result.ops_compared > 0 and result.spread_total >= 1


@pytest.mark.slow
def test_the_crop_and_resize_gradient_is_named_at_the_users_crop_line_with_its_size():
    result = locate(steps.crop_and_resize_step, 3, runs=3)
    first = result.first_difference
    assert first is not None, result.verdict
    assert first.op_type == "CropAndResizeGradImage" and first.gradient_of == "CropAndResize"
    assert first.source == line_of("CROP LINE")
    assert first.catalog_entries == ["crop-and-resize-backprop-image"] and first.fix
    assert [s.op_type for s in result.spread][:1] == ["Mul"]  # the update scaled from it: spread, not a root
    if first.values_differing is not None:  # measured by the detail runs (the op varies most of the time)
        assert first.values_differing > 0 and first.max_abs_diff > 0 and first.max_ulps > 0


@pytest.mark.slow
@pytest.mark.parametrize("step", [steps.crop_and_resize_step, steps.scatter_add_step])
def test_under_the_patch_the_same_steps_do_not_differ(step):
    result = locate(step, 3, runs=3, patch=True)
    assert result.first_difference is None, result.verdict
    assert result.verdict.startswith("No difference") and result.ops_compared > 10


@pytest.mark.slow
def test_assert_reproducible_fails_naming_the_op_and_passes_patched():
    with pytest.raises(AssertionError, match="ResourceScatterAdd") as failed:
        assert_reproducible(steps.scatter_add_step, 3)
    assert "steps.py" in str(failed.value) and "fix:" in str(failed.value)
    assert assert_reproducible(steps.scatter_add_step, 3, patch=True).first_difference is None
    assert assert_reproducible(steps.deterministic_step, 3).ops_compared > 5


@pytest.mark.slow
def test_the_cli_shows_the_op_and_line_and_its_json_follows_the_schema(tmp_path):
    script = os.path.join(ROOT, "examples", "locate", "crop_step.py")
    shown = tfdet(script, "--runs", "3", "--", "3")
    assert shown.returncode == 1, shown.stderr
    assert "CropAndResizeGradImage" in shown.stdout and "crop_step.py:" in shown.stdout
    assert "Traceback" not in shown.stderr
    out = tfdet(script, "--json", "--patch", "--no-detail", "--repeats", "2", "--traces", str(tmp_path / "traces"),
                "--", "2")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    jsonschema.validate(data, schema.locate_schema())
    assert data["first_difference"] is None and os.path.dirname(data["traces"]) == str(tmp_path / "traces")
    assert len([name for name in os.listdir(data["traces"]) if name.endswith(".trace.jsonl")]) == 4


def test_a_missing_script_is_exit_3_with_one_line(tmp_path):
    missing = tfdet(str(tmp_path / "nope.py"))
    assert missing.returncode == 3 and missing.stderr.strip().endswith("nope.py: no such file")


@pytest.mark.slow
def test_a_script_that_raises_before_any_op_is_exit_3_with_one_line_and_its_logs_kept(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise ValueError('no data at /data/train')\n")
    done = tfdet("--repeats", "1", str(broken))
    assert done.returncode == 3, done.stderr
    assert "ValueError: no data at /data/train" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    kept = done.stderr.split("kept in ")[-1].rstrip(")\n ")
    assert os.path.isdir(kept) and any(name.endswith(".log") for name in os.listdir(kept))


@pytest.mark.slow
def test_a_distributed_datasets_iterator_handle_is_not_a_difference(tmp_path):
    # found by the corpus (mirrored_strategy_loop): assert_reproducible(patch=True) failed on a
    # program whose patched runs reproduce bitwise, at MultiDeviceIteratorToStringHandle, whose
    # output names the iterator's resource (unique to each process)
    script = tmp_path / "mirrored.py"
    script.write_text(
        "import tensorflow as tf\n"
        "cpu = tf.config.list_physical_devices('CPU')[0]\n"
        "try:\n"
        "    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n"
        "except RuntimeError:  # TF is set up before the script runs under locate: the devices it has\n"
        "    pass\n"
        "strategy = tf.distribute.MirroredStrategy([d.name for d in tf.config.list_logical_devices('CPU')])\n"
        "for batch in strategy.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(4)):\n"
        "    total = strategy.run(lambda x: tf.reduce_sum(x), args=(batch,))\n"
        "    print(strategy.reduce('SUM', total, axis=None).numpy())\n")
    done = tfdet("--repeats", "1", "--json", str(script))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout)["ops_compared"] > 0


@pytest.mark.slow
def test_a_tf1_session_program_is_exit_3_naming_the_session(tmp_path):
    # found by the corpus (tf1_word2vec_session): the runs ran ops, in a Session, which locate
    # does not instrument; "ran no TensorFlow op" alone sent the user looking for a broken script
    script = tmp_path / "session.py"
    script.write_text("import tensorflow as tf\ngraph = tf.Graph()\nwith graph.as_default():\n"
                      "    total = tf.reduce_sum(tf.square(tf.constant([1.0, 2.0])))\n"
                      "with tf.compat.v1.Session(graph=graph) as session:\n    print(session.run(total))\n")
    done = tfdet("--repeats", "1", str(script))
    assert done.returncode == 3, done.stderr
    assert "nothing to compare" in done.stderr and "tf.compat.v1 Session" in done.stderr


@pytest.mark.slow
def test_a_run_that_hangs_is_stopped_and_what_it_recorded_is_compared(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text("import time\nimport tensorflow as tf\n"
                      "x = tf.square(tf.constant([1.0, 2.0]))\nprint(float(tf.reduce_sum(x)), flush=True)\n"
                      "time.sleep(600)\n")
    done = tfdet("--timeout", "60", "--repeats", "1", "--json", str(script))
    assert done.returncode == 3, done.stderr  # no two runs finished: nothing compared whole
    data = json.loads(done.stdout)
    assert [o["status"] for o in data["run_outcomes"]] == ["timed-out", "timed-out"]
    assert data["ops_compared"] >= 1 and data["traces"]  # kept: the runs did not finish


@pytest.mark.slow
def test_a_script_that_raises_after_running_ops_is_compared_up_to_there_and_exits_3(tmp_path):
    script = tmp_path / "fails_later.py"
    script.write_text("import tensorflow as tf\nx = tf.square(tf.constant([1.0, 2.0]))\n"
                      "raise RuntimeError('out of data at step 1')\n")
    done = tfdet("--no-detail", "--repeats", "1", str(script))
    assert done.returncode == 3, done.stderr
    assert "no two runs finished" in done.stdout and "RuntimeError: out of data at step 1" in done.stdout
    assert "traces kept in" in done.stdout
    hint = tfdet(str(script), "--no-detail", "--runs", "2")  # options after the script, without --
    assert "note: --no-detail --runs went to the script" in hint.stderr
