"""tfdet.patch(), unpatch(), status() and deterministic() on the installed TF.

Each scenario runs in a fresh interpreter: patching changes process-wide TF
state (op determinism cannot be fully undone for traced functions), and the
pytest process must stay stock for the other tests."""

import json
import os
import textwrap

import fresh_python  # tests/ is on sys.path under pytest
import pytest
import yaml

pytest.importorskip("tensorflow")

PRELUDE = """
import json, os, sys, warnings
warnings.simplefilter("always")
import numpy as np
import tensorflow as tf
import tfdet
def report(**values):
    print("RESULT " + json.dumps(values))
"""


def run_python(code, timeout=240):
    environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for name in list(environ):
        if name.startswith(("TF_DETERMINISTIC", "TF_CUDNN")):
            del environ[name]
    # PRELUDE imports TF first: forked from a process that imported it (tests/fresh_python.py)
    done = fresh_python.run(["-c", PRELUDE + textwrap.dedent(code)], environ, os.getcwd(), timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def forced_catalogue(tmp_path):
    """Entries that make patch() install replacements on this CPU, as it would on an old GPU TF."""
    def entry(entry_id, raw_op, patch, direction="forward"):
        data = {
            "id": entry_id, "title": entry_id, "description": "forced for a test", "apis": [], "raw_ops": [raw_op],
            "direction": direction, "root_cause": "atomics",
            "devices": {"cpu": [{"versions": ">=1.14", "status": "nondeterministic", "patch": patch,
                                 "sources": ["doc:test"]}]},
            "sources": ["doc:test"],
        }
        if direction == "gradient":
            data["gradient_wrt"] = ["input"]
        return data
    raising = entry("forced-timestamp", "Timestamp", "unused")
    raising["devices"]["cpu"] = [
        {"versions": "<2.8", "status": "nondeterministic", "sources": ["doc:test"]},
        {"versions": ">=2.8", "status": "raises_under_determinism", "switches": ["enable_op_determinism"],
         "error": {"type": "FailedPreconditionError", "message": "Timestamp cannot be called"},
         "sources": ["doc:test"]}]
    doc = {"schema_version": 1, "entries": [
        entry("forced-unsorted-segment-sum", "UnsortedSegmentSum", "unsorted_segment_sum"),
        entry("forced-gather-backprop", "GatherV2", "indexed_slices_to_dense", "gradient"),
        entry("forced-resize-nearest", "ResizeNearestNeighborGrad", "resize_nearest_neighbor_grad", "gradient"),
        entry("forced-crop", "CropAndResizeGradImage", "crop_and_resize_grad", "gradient"),
        raising,
    ]}
    path = tmp_path / "forced.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_patch_status_and_unpatch_on_this_machine():
    result = run_python("""
        stock = tf.math.bincount
        with warnings.catch_warnings(record=True) as caught:
            status = tfdet.patch(seed=0)
        from tensorflow.python.framework import config
        patched = dict(env=os.environ.get("TF_DETERMINISTIC_OPS"), determinism=config.is_op_determinism_enabled(),
                       rebound=tf.math.bincount is not stock, text=str(tfdet.status()),
                       warned=[str(w.message) for w in caught if w.category is tfdet.TfdetWarning])
        again = tfdet.patch(seed=0)
        tfdet.unpatch()
        report(patched=patched, replaced=status.replacements, places=status.replaced_places,
               again_places=again.replaced_places, restored=tf.math.bincount is stock,
               env_after=os.environ.get("TF_DETERMINISTIC_OPS"), determinism_after=config.is_op_determinism_enabled(),
               after=str(tfdet.status()))
    """)
    patched = result["patched"]
    assert patched["env"] == "1" and patched["determinism"] is True and patched["rebound"] is True
    assert "bincount" in result["replaced"] and result["places"] == result["again_places"]
    assert "TF_DETERMINISTIC_OPS=1" in patched["text"] and "seeds:         0" in patched["text"]
    assert "NOT covered:" in patched["text"] and "non-deterministic-ints" in patched["text"]
    assert patched["warned"] == []  # not-covered sources warn when the program uses one, not at patch time
    assert result["restored"] is True and result["env_after"] is None and result["determinism_after"] is False
    assert result["after"].startswith("tfdet: not patched")


def test_strict_patches_and_raises_only_where_an_uncovered_op_is_used():
    result = run_python("""
        stock = tf.math.bincount
        tfdet.patch(seed=0, strict=True, quiet=True)
        clean = float(tf.reduce_sum(tf.math.bincount([1, 2, 2], weights=[1.0, 2.0, 3.0])))
        try:
            tf.raw_ops.NonDeterministicInts(shape=[2])
            raised = None
        except tfdet.TfdetError as exc:
            raised = str(exc)
        report(raised=raised, clean=clean, patched=tfdet.status().patched, rebound=tf.math.bincount is not stock)
    """)
    assert result["clean"] == 6.0 and result["patched"] is True and result["rebound"] is True
    assert "NonDeterministicInts" in result["raised"] and "non-deterministic-ints" in result["raised"]
    assert "<string>:" in result["raised"]  # the user's line (a -c script here), not TF's


def test_patch_after_the_first_op_warns_what_to_do():
    result = run_python("""
        tf.constant(1.0) + 1.0
        with warnings.catch_warnings(record=True) as caught:
            tfdet.patch(seed=1, quiet=False)
        report(warnings=[str(w.message) for w in caught], status=tfdet.status().warnings)
    """)
    assert any("after TensorFlow ran its first op" in w for w in result["status"])
    assert any("after TensorFlow ran its first op" in w for w in result["warnings"])


def test_patch_is_idempotent_across_threads():
    result = run_python("""
        import threading
        stock = tf.math.bincount
        results = []
        threads = [threading.Thread(target=lambda: results.append(tfdet.patch(seed=3, quiet=True))) for _ in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        from tfdet.patching import install
        changes = len(install._state["applied"].changes)
        tfdet.unpatch()
        report(n=len(results), places={str(r.replaced_places) for r in results}.__len__(), changes=changes,
               restored=tf.math.bincount is stock)
    """)
    assert result["n"] == 8 and result["places"] == 1 and result["restored"] is True
    assert result["changes"] >= 1


def test_replacements_bind_every_alias_and_gradient_and_undo(tmp_path):
    result = run_python("""
        from tfdet.catalog import load_user_catalogue
        from tensorflow.python.ops import gen_math_ops, math_ops
        cat = load_user_catalogue(%r)
        aliases = ["tf.math.unsorted_segment_sum", "tf.compat.v1.unsorted_segment_sum",
                   "tf.compat.v1.math.unsorted_segment_sum"]
        def lookup(name):
            obj = tf
            for part in name.split(".")[1:]:
                obj = getattr(obj, part)
            return obj
        stock = {a: lookup(a) for a in aliases}
        rng = np.random.RandomState(0)
        data = tf.constant(rng.standard_normal((1000, 3)).astype(np.float32))
        ids = tf.constant(rng.randint(0, 50, 1000).astype(np.int32))
        expected = tf.math.unsorted_segment_sum(data, ids, 50).numpy()

        def grad_ops(fn, x):
            @tf.function
            def g(x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = fn(x)
                return tf.convert_to_tensor(tape.gradient(y, x))  # IndexedSlices densify here
            graph = g.get_concrete_function(tf.TensorSpec(x.shape, x.dtype)).graph
            return sorted({op.type for op in graph.get_operations()})

        images = tf.constant(rng.standard_normal((2, 8, 8, 3)).astype(np.float32))
        resize = lambda x: tf.compat.v1.image.resize_nearest_neighbor(x, [13, 13])
        crop = lambda x: tf.image.crop_and_resize(x, [[0.1, 0.1, 0.8, 0.9]], [0], [5, 5])
        table = tf.constant(rng.standard_normal((20, 4)).astype(np.float32))
        gather = lambda t: tf.convert_to_tensor(tf.gather(t, ids[:100] %% 20))
        before = dict(resize=grad_ops(resize, images), crop=grad_ops(crop, images), gather=grad_ops(gather, table))

        with warnings.catch_warnings(record=True):
            status = tfdet.patch(catalogue=cat)
        via = {a: float(np.max(np.abs(lookup(a)(data, ids, 50).numpy() - expected))) for a in aliases}
        internal = gen_math_ops.unsorted_segment_sum is not stock[aliases[0]]
        during = dict(resize=grad_ops(resize, images), crop=grad_ops(crop, images), gather=grad_ops(gather, table))
        timestamp_error = None
        try:
            tf.timestamp()
        except Exception as exc:
            timestamp_error = type(exc).__name__
        remaining = [r[0] for r in status.remaining]
        tfdet.unpatch()
        after = dict(resize=grad_ops(resize, images), crop=grad_ops(crop, images))
        report(via=via, internal=internal, rebound_before_undo=True, before=before, during=during, after=after,
               restored=all(lookup(a) is stock[a] for a in aliases), timestamp_error=timestamp_error,
               remaining=remaining, replaced=status.replacements)
    """ % forced_catalogue(tmp_path))
    assert all(diff < 1e-4 for diff in result["via"].values()), result["via"]
    assert result["internal"] is True
    assert "ResizeNearestNeighborGrad" in result["before"]["resize"]
    assert "ResizeNearestNeighborGrad" not in result["during"]["resize"]
    assert "CropAndResizeGradImage" in result["before"]["crop"]
    assert "CropAndResizeGradImage" not in result["during"]["crop"]
    assert "UnsortedSegmentSum" in result["before"]["gather"]
    assert "UnsortedSegmentSum" not in result["during"]["gather"]
    assert "ResizeNearestNeighborGrad" in result["after"]["resize"] and result["restored"] is True
    # TF's own determinism error is kept for an op tfdet does not replace
    assert result["timestamp_error"] == "FailedPreconditionError"
    assert "forced-timestamp" in result["remaining"]


def test_deterministic_scope():
    result = run_python("""
        stock = tf.math.bincount
        with warnings.catch_warnings(record=True):
            with tfdet.deterministic(seed=0) as status:
                inside = tf.math.bincount is not stock
        report(inside=inside, outside=tf.math.bincount is stock, patched=tfdet.status().patched)
    """)
    assert result == {"inside": True, "outside": True, "patched": False}


def test_unsupported_tf_version_is_a_warned_no_op():
    result = run_python("""
        tf.__version__ = "1.13.1"  # pretend: the catalogue starts at 1.14
        stock = tf.math.bincount
        with warnings.catch_warnings(record=True) as caught:
            status = tfdet.patch(seed=0)
        report(warnings=[str(w.message) for w in caught], supported=status.supported, patched=status.patched,
               held=tfdet.status().warnings, env=os.environ.get("TF_DETERMINISTIC_OPS"),
               untouched=tf.math.bincount is stock, text=str(status))
    """)
    assert result["supported"] is False and result["patched"] is False  # nothing was changed
    assert result["env"] is None and result["untouched"] is True
    assert any("older than any version tfdet knows" in w for w in result["warnings"])
    assert all(any(text in w for w in result["warnings"]) for text in result["held"]) and result["held"]
    assert "unsupported TF version" in result["text"] and "not patched" in result["text"]


@pytest.mark.parametrize("quiet", [False, True])
def test_newer_tf_than_the_catalogue_is_warned_and_every_held_warning_was_issued(quiet):
    result = run_python("""
        tf.__version__ = "2.99.0"  # pretend: newer than the catalogue
        with warnings.catch_warnings(record=True) as caught:
            status = tfdet.patch(quiet=%s)
        report(warnings=[(str(w.message), w.category.__name__, os.path.basename(w.filename)) for w in caught],
               held=status.warnings, patched=status.patched)
    """ % quiet)
    assert result["patched"] is True
    newer = [w for w in result["warnings"] if "newer than the catalogue" in w[0]]
    assert len(newer) == 1, newer  # said once, by patch(), not again by the catalogue's StaleVersionWarning
    assert newer[0][1] == "TfdetWarning" and newer[0][2] == "<string>"  # at the user's line
    assert result["held"] and all(any(text in w[0] for w in result["warnings"]) for text in result["held"])


def test_unpatch_restores_the_injected_environ_not_os_environ():
    result = run_python("""
        mine = {"TF_CUDNN_USE_AUTOTUNE": "1"}
        tfdet.patch(environ=mine, quiet=True)
        during = dict(mine)
        leaked = os.environ.get("TF_DETERMINISTIC_OPS")
        tfdet.unpatch()
        after = dict(mine)
        theirs = {"TF_DETERMINISTIC_OPS": "0"}
        with tfdet.deterministic(environ=theirs, quiet=True):
            inside = dict(theirs)
        report(during=during, leaked=leaked, after=after, inside=inside, block_after=theirs,
               os_after=os.environ.get("TF_DETERMINISTIC_OPS"))
    """)
    assert result["during"]["TF_DETERMINISTIC_OPS"] == "1" and result["leaked"] is None
    assert result["after"] == {"TF_CUDNN_USE_AUTOTUNE": "1"}  # exactly as before patch()
    assert result["inside"]["TF_DETERMINISTIC_OPS"] == "1" and result["block_after"] == {"TF_DETERMINISTIC_OPS": "0"}
    assert result["os_after"] is None


def test_blocks_nest_and_never_undo_a_patch_someone_else_asked_for():
    result = run_python("""
        import threading
        stock = tf.math.bincount
        replaced = lambda: tf.math.bincount is not stock and tfdet.status().patched
        seen = {}
        warnings.simplefilter("ignore")

        # nested blocks: the inner exit keeps the patch, the outer exit undoes it
        with tfdet.deterministic(quiet=True):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with tfdet.deterministic(quiet=True, strict=True):
                    pass
            seen["nested_inner_exit"] = replaced()
            seen["stricter_inner_warned"] = any("already patched without strict" in str(w.message) for w in caught)
        seen["nested_outer_exit"] = replaced()

        # patch() inside a block outlives the block
        with tfdet.deterministic(quiet=True):
            tfdet.patch(quiet=True)
        seen["patch_inside_block"] = replaced()
        tfdet.unpatch()

        # a block in one thread, patch() in another: the other keeps its patch
        entered, patched, leave = threading.Event(), threading.Event(), threading.Event()
        def block():
            with tfdet.deterministic(quiet=True):
                entered.set()
                leave.wait(60)
        worker = threading.Thread(target=block)
        worker.start()
        entered.wait(60)
        tfdet.patch(quiet=True)
        leave.set()
        worker.join()
        seen["other_thread_patch_kept"] = replaced()
        tfdet.unpatch()
        seen["unpatched"] = not replaced() and tf.math.bincount is stock

        # blocks in two threads: the patch lasts until the last one exits
        gates = [threading.Event(), threading.Event()]
        inside = threading.Barrier(3)
        def hold(gate):
            with tfdet.deterministic(quiet=True):
                inside.wait(60)
                gate.wait(60)
        workers = [threading.Thread(target=hold, args=(g,)) for g in gates]
        [w.start() for w in workers]
        inside.wait(60)
        gates[0].set()
        workers[0].join()
        seen["one_of_two_blocks_left"] = replaced()
        gates[1].set()
        workers[1].join()
        seen["both_blocks_left"] = not replaced()

        # an explicit unpatch() inside a block: warned, undone now, the block's exit does nothing
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with tfdet.deterministic(quiet=True):
                tfdet.unpatch()
                seen["unpatch_in_block"] = not replaced()
                tfdet.patch(quiet=True)  # patched again, explicitly: the block's exit leaves it
        seen["unpatch_warned"] = any("block" in str(w.message) and "unpatch" in str(w.message) for w in caught)
        seen["repatch_kept"] = replaced()
        tfdet.unpatch()
        seen["final"] = tf.math.bincount is stock and not tfdet.status().patched
        report(**seen)
    """)
    assert result == {"nested_inner_exit": True, "stricter_inner_warned": True, "nested_outer_exit": False, "patch_inside_block": True,
                      "other_thread_patch_kept": True, "unpatched": True, "one_of_two_blocks_left": True,
                      "both_blocks_left": True, "unpatch_in_block": True, "unpatch_warned": True,
                      "repatch_kept": True, "final": True}


def test_a_broken_user_catalogue_is_one_clean_error_naming_file_and_line(tmp_path):
    from catalog_fixtures import GOOD_ENTRY, document

    import tfdet
    from tfdet.patching import install

    entry = dict(GOOD_ENTRY, colour="red")
    path = tmp_path / "broken.yaml"
    path.write_text(document(entry))
    with pytest.raises(tfdet.TfdetError) as raised:
        tfdet.patch(catalogue=str(path))
    message = str(raised.value)
    assert "\n" not in message and "broken.yaml:" in message and "colour" in message
    line = int(message.split("broken.yaml:")[1].split(":")[0])
    assert "colour" in path.read_text().splitlines()[line - 1]
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert install._state["applied"] is None and not tfdet.status().patched  # nothing was changed
    path.write_text("entries: [\n  {id: x\n")  # not even YAML
    with pytest.raises(tfdet.TfdetError, match="broken.yaml:[0-9]+"):
        tfdet.patch(catalogue=path)


def test_a_broken_shipped_catalogue_is_the_same_clean_error(tmp_path, monkeypatch):
    """A YAML error in a shipped file (a broken install) reads as file:line too, not a traceback."""
    import tfdet
    import tfdet.catalog as catalog

    path = tmp_path / "image.yaml"
    path.write_text("entries:\n  - id: x\n    title: [unclosed\n")

    def broken():
        with open(path) as handle:
            yaml.safe_load(handle)  # the real parser's error, with its real mark

    monkeypatch.setattr(catalog, "default_catalogue", broken)
    with pytest.raises(tfdet.TfdetError) as raised:
        tfdet.patch()
    message = str(raised.value)
    assert message.startswith("invalid catalogue: ") and "image.yaml:" in message and "\n" not in message


def test_a_function_traced_while_patched_keeps_the_replacement_after_unpatch():
    """As patch() and unpatch() document: TF caches the traced graph."""
    result = run_python("""
        ids = tf.constant([1, 2, 2, 5])
        weights = tf.constant([1.0, 2.0, 3.0, 4.0])
        def op_types(fn):
            return sorted({op.type for op in fn.get_concrete_function().graph.get_operations()})
        tfdet.patch(quiet=True)
        traced_while_patched = tf.function(lambda: tf.math.bincount(ids, weights=weights))
        during = op_types(traced_while_patched)
        tfdet.unpatch()
        report(during=during, after=op_types(traced_while_patched),
               fresh=op_types(tf.function(lambda: tf.math.bincount(ids, weights=weights))))
    """)
    stock_ops = {"Bincount", "DenseBincount"}
    assert stock_ops & set(result["fresh"])  # traced after unpatch(): the stock kernel
    assert not stock_ops & set(result["during"]) and result["after"] == result["during"]
