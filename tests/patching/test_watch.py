"""patch() talks about the user's program: one line at patch time, then one
warning (or, under strict, a TfdetError) where the program first uses a
catalogued op the patch does not cover. Real scripts in fresh interpreters;
what they print to stderr and their exit codes are the behaviour under test."""

import os
import textwrap

import fresh_python
import pytest

pytest.importorskip("tensorflow")


def run_script(tmp_path, body, name="user_script.py"):
    script = tmp_path / name
    script.write_text("import tensorflow as tf\nimport tfdet\n" + textwrap.dedent(body))
    environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for variable in list(environ):
        if variable.startswith(("TF_DETERMINISTIC", "TF_CUDNN", "PYTHONWARNINGS")):
            del environ[variable]
    done = fresh_python.run(script, environ, tmp_path, 300)  # it imports TF first: forked (tests/fresh_python.py)
    return done, str(script)


def tfdet_lines(stderr):
    """What tfdet printed: its patch-time line and its warnings, not TF's logging."""
    return [line for line in stderr.splitlines() if "tfdet" in line]


def test_clean_program_runs_under_strict_and_prints_one_line(tmp_path):
    done, _ = run_script(tmp_path, """
        import numpy as np
        import keras
        tfdet.patch(seed=0, strict=True)
        counts = tf.math.bincount([1, 2, 2], weights=[1.0, 2.0, 3.0])    # replaced: no warning
        noise = tf.random.uniform([4])                                    # seeded by patch(seed=0)
        total = tf.Variable(0.0)

        @tf.function
        def loop(n):
            for i in tf.range(n):                                         # a TF2 While, not a TF1 one
                total.assign_add(tf.cast(i, tf.float32))
            return total

        loop(tf.constant(3))
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dropout(0.5),
                                  keras.layers.Dense(1)])
        model.compile("adam", "mse")
        model.fit(np.ones((32, 4), "float32"), np.ones((32, 1), "float32"), epochs=1, verbose=0)
        print("DONE", float(tf.reduce_sum(counts)))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "DONE 6.0" in done.stdout
    (line,) = tfdet_lines(done.stderr)
    assert line.startswith("tfdet: switched on ")
    assert "replaced tf.math.bincount (" in line and "binding" in line and "seeded 0" in line
    assert "not covered" in line and "tfdet.status()" in line


def test_uncovered_op_warns_once_with_the_users_line_and_the_fix(tmp_path):
    done, script = run_script(tmp_path, """
        tfdet.patch(seed=0)
        for _ in range(3):
            tf.raw_ops.DenseBincount(input=[1, 2, 2], size=4, weights=[1.0, 2.0, 3.0])
        print("DONE")
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = tfdet_lines(done.stderr)
    assert len(lines) == 2, lines  # the patch-time line, then one warning however often the op runs
    warning = lines[1]
    assert warning.startswith("%s:6: TfdetWarning:" % script)  # the user's line, not TF's
    assert "DenseBincount" in warning and "dense-bincount" in warning and "Fix: " in warning


def test_uncovered_op_raises_under_strict_at_the_users_line(tmp_path):
    done, script = run_script(tmp_path, """
        tfdet.patch(seed=0, strict=True)
        x = tf.constant([1.0])

        tf.raw_ops.NonDeterministicInts(shape=[2])
        print("NOT REACHED")
    """)
    assert done.returncode == 1 and "NOT REACHED" not in done.stdout
    assert "TfdetError" in done.stderr and "%s:7" % script in done.stderr
    assert "NonDeterministicInts" in done.stderr and "non-deterministic-ints" in done.stderr


def test_raw_op_bypassing_a_replacement_warns_but_the_replacement_does_not(tmp_path):
    done, script = run_script(tmp_path, """
        tfdet.patch(seed=0)
        replaced = tf.math.bincount([1, 2, 2], weights=[1.0, 2.0, 3.0])

        @tf.function
        def direct(x):
            return tf.raw_ops.Bincount(arr=x, size=4, weights=[1.0, 2.0, 3.0])

        direct(tf.constant([1, 2, 2]))
        print("SEEN", [op for op, _, _ in tfdet.status().seen])
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SEEN ['Bincount']" in done.stdout
    (warning,) = [line for line in tfdet_lines(done.stderr) if "TfdetWarning" in line]
    assert warning.startswith("%s:9: TfdetWarning:" % script)  # inside the tf.function, mapped back by TF
    assert "not through tf.math.bincount" in warning


def test_unpatch_removes_the_callback_and_quiet_prints_nothing(tmp_path):
    done, _ = run_script(tmp_path, """
        import warnings
        tfdet.patch(seed=0, quiet=True)
        tfdet.unpatch()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tf.raw_ops.DenseBincount(input=[1, 2, 2], size=4, weights=[1.0, 2.0, 3.0])
        print("WARNED", len(caught))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNED 0" in done.stdout and tfdet_lines(done.stderr) == []


def test_tf_without_op_callbacks_falls_back_to_one_summary_and_strict_raises_at_patch(tmp_path):
    done, _ = run_script(tmp_path, """
        import warnings
        real = tf.__version__
        tf.__version__ = "2.1.0"  # pretend: op callbacks arrived in 2.2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status = tfdet.patch()
        tfdet.unpatch()
        print("WATCHING", status.watching)
        print("WARNINGS", len(caught), "no op callbacks" in str(caught[0].message) if caught else None)
        try:
            tfdet.patch(strict=True, quiet=True)
            print("STRICT none")
        except tfdet.TfdetError as exc:
            print("STRICT", "remain for TF 2.1.0" in str(exc))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WATCHING nothing: this TF has no op callbacks" in done.stdout
    assert "WARNINGS 1 True" in done.stdout and "STRICT True" in done.stdout


def test_strict_and_on_unsupported_warn_contradict(tmp_path):
    done, _ = run_script(tmp_path, """
        try:
            tfdet.patch(strict=True, on_unsupported="warn")
        except ValueError as exc:
            print("REFUSED", exc)
        print("PATCHED", tfdet.status().patched)
    """)
    assert "REFUSED" in done.stdout and "PATCHED False" in done.stdout


SILENCING_CATALOGUE = """\
schema_version: 1
switches:
  - id: TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS
    kind: env
    name: TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS
    value: "1"
    role: silences_errors
    versions: ">=2.0"
    devices: [cpu]
    description: A made-up escape hatch, for the test.
    sources: [doc:test]
entries:
  - id: forced-timestamp
    title: forced
    description: forced for a test
    apis: [tf.timestamp]
    raw_ops: [Timestamp]
    direction: forward
    root_cause: unknown
    devices:
      cpu:
        - versions: ">=1.14"
          status: raises_under_determinism
          switches: [enable_op_determinism]
          error: {type: FailedPreconditionError, message: Timestamp cannot be called}
          sources: [doc:test]
    sources: [doc:test]
"""


def test_on_unsupported_warn_sets_silencing_switches_only_when_asked_and_says_so(tmp_path):
    (tmp_path / "silencing.yaml").write_text(SILENCING_CATALOGUE)
    done, _ = run_script(tmp_path, """
        import os, warnings
        from tfdet.catalog import load_user_catalogue
        cat = load_user_catalogue("silencing.yaml")
        tfdet.patch(catalogue=cat, quiet=True)
        print("DEFAULT", os.environ.get("TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS"))
        tfdet.unpatch()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status = tfdet.patch(catalogue=cat, quiet=True, on_unsupported="warn")
        print("OPTED", os.environ.get("TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS"), status.silenced)
        print("NAMED", any("TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS=1" in str(w.message) for w in caught))
        print("STILL NOT COVERED", [r[0] for r in status.remaining])
        tfdet.unpatch()
        print("AFTER", os.environ.get("TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS"))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "DEFAULT None" in out and "OPTED 1 ['TF_DISABLE_TIMESTAMP_TEST_EXCEPTIONS']" in out
    assert "NAMED True" in out and "STILL NOT COVERED ['forced-timestamp']" in out and "AFTER None" in out


def test_ops_given_their_own_seed_are_not_unseeded_without_a_global_seed(tmp_path):
    done, _ = run_script(tmp_path, """
        tfdet.patch(strict=True)                                   # no global seed
        x = tf.random.uniform([3], seed=5)                         # seed attributes on the op
        ds = tf.data.Dataset.range(10).shuffle(10, seed=1)         # seed inputs to the dataset op
        print("DONE", len(list(ds.as_numpy_iterator())))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "DONE 10" in done.stdout
    assert [line for line in tfdet_lines(done.stderr) if "TfdetWarning" in line or "TfdetError" in line] == []


def test_a_callback_added_after_the_patch_still_sees_every_output(tmp_path):
    # TF hands each op callback what the previous one returned: a watcher that
    # returned None would blind tfdbg, tfdet locate or the user's own callback.
    done, _ = run_script(tmp_path, """
        from tensorflow.python.framework import op_callbacks
        tfdet.patch()
        seen = []

        def after(op_type, inputs, attrs, outputs, op_name=None, graph=None):
            seen.append((op_type.decode() if isinstance(op_type, bytes) else op_type, outputs is not None))
            return outputs

        op_callbacks.add_op_callback(after)
        tf.math.unsorted_segment_sum(tf.ones([4]), [0, 1, 1, 0], 2)    # watched (GPU-varying op) and eager
        tf.function(lambda x: tf.math.unsorted_segment_sum(x, [0, 1], 2))(tf.ones([2]))   # watched, traced
        blind = sorted({op for op, has_outputs in seen if not has_outputs})
        print("BLIND", blind, "SEEN", len(seen))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [line for line in done.stdout.splitlines() if line.startswith("BLIND")][0]
    assert line.startswith("BLIND [] SEEN "), line
    assert int(line.split()[-1]) > 2
