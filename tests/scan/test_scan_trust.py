"""tfdet scan and files it should not trust: a model file whose Lambda layer
would run code is refused before Keras reads it (unless the user opts in), in
every format that can carry one; a model whose tracing fails is one line."""

import io
import os

import fresh_python
import pytest

from tfdet.cli.exitcodes import INVALID_INPUT

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tfdet.cli.app import run_main  # noqa: E402
from tfdet.scanning import ScanError, load_model, trace_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _touching(marker):
    """A function that creates `marker` when it runs, with the path in its own code
    (marshalled bytecode keeps constants, not the globals of this module)."""
    return eval("lambda t: (__import__('pathlib').Path(%r).touch(), t)[1]" % str(marker))


def _tf_keras():
    try:
        import tf_keras
    except ImportError:
        return None
    return tf_keras


def _save(fmt, folder, marker):
    """A Dense model behind a Lambda layer named 'side_effect' whose function creates `marker`."""
    if fmt == "tf_keras.h5":
        lib = _tf_keras()
        if lib is None:
            pytest.skip("tf_keras is not installed")
    else:
        lib = keras
    inputs = lib.Input((4,))
    x = lib.layers.Lambda(_touching(marker), name="side_effect")(inputs)
    model = lib.Model(inputs, lib.layers.Dense(1)(x))
    model.compile(optimizer="sgd", loss="mse")
    path = str(folder / ("model." + fmt.split(".")[-1]))
    model.save(path)
    os.remove(marker)  # building the model ran the function once: only the scan's runs count
    return path


FORMATS = ("tf_keras.h5", "keras.h5", "keras.keras")


def _cli(*argv):  # `python -m tfdet ...`, forked from a process that imported TF (tests/fresh_python.py)
    return fresh_python.run(["-m", "tfdet"] + list(argv), dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), ROOT, 600)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lambda_layer_is_refused_before_its_code_runs_and_runs_only_when_asked(tmp_path, fmt):
    marker = tmp_path / "ran"
    path = _save(fmt, tmp_path, marker)
    # the CLI: refused with one line naming the layer and the opt-in, before Keras reads the file
    done = _cli("scan", path, "--device", "cpu")
    assert done.returncode == INVALID_INPUT and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("tfdet:")]
    assert len(errors) == 1 and errors[0].startswith("tfdet: error: %s: " % path)
    assert "'side_effect'" in errors[0] and "--unsafe" in errors[0]
    assert not marker.exists()
    # Python: the same refusal; safe_mode=False (the opt-in) loads the file and its code runs
    with pytest.raises(ScanError, match="side_effect"):
        load_model(path)
    assert not marker.exists()
    trace_model(load_model(path, safe_mode=False), fresh=False)
    assert marker.exists()


@pytest.mark.slow  # a TF process (~15 s): the Python opt-in above is the same load_model call
def test_the_cli_runs_the_code_with_unsafe(tmp_path):
    marker = tmp_path / "ran"
    path = _save("keras.keras", tmp_path, marker)
    done = _cli("scan", path, "--device", "cpu", "--unsafe")
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_a_model_whose_tracing_fails_is_one_line_naming_the_file_and_the_cause(tmp_path):
    # Keras saves and loads a layer name with a space; TF rejects it as a scope name when tracing
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2, name="my layer")(inputs))
    model.compile(optimizer="sgd", loss="mse")
    path = str(tmp_path / "spaced.keras")
    model.save(path)
    out, err = io.StringIO(), io.StringIO()
    code = run_main(["scan", path, "--device", "cpu"], out, err)
    lines = err.getvalue().splitlines()
    assert code == INVALID_INPUT and "Traceback" not in err.getvalue()
    assert len(lines) == 1 and lines[0].startswith("tfdet: error: %s: cannot trace the model: ValueError: " % path)
    assert "'my layer' is not a valid scope name" in lines[0]


def test_a_file_naming_a_module_keras_does_not_own_is_refused_before_it_is_imported(tmp_path, monkeypatch):
    # Keras before 3.9 imported any module a config.json named (CVE-2025-1550); tf_keras's loader still can
    import json
    import zipfile

    marker = tmp_path / "imported"
    (tmp_path / "tfdet_marker_mod.py").write_text("import pathlib\npathlib.Path(%r).touch()\n" % str(marker))
    monkeypatch.syspath_prepend(str(tmp_path))
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(1, name="head")(inputs))
    plain = str(tmp_path / "plain.keras")
    model.save(plain)
    path = str(tmp_path / "crafted.keras")
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.namelist():
            data = source.read(item)
            if item == "config.json":
                config = json.loads(data)
                head = [layer for layer in config["config"]["layers"] if layer["config"]["name"] == "head"][0]
                head["config"]["kernel_initializer"] = {"module": "tfdet_marker_mod", "class_name": "Init",
                                                        "config": {}, "registered_name": "Init"}
                data = json.dumps(config)
            target.writestr(item, data)
    with pytest.raises(ScanError, match="layer 'head' names 'Init' from module 'tfdet_marker_mod'.*--custom-objects"):
        load_model(path)
    assert not marker.exists()
    load_model(plain)  # Keras's own modules are not refused


def test_python_builtins_named_as_functions_are_refused_and_keras_names_are_not():
    from tfdet.scanning.safety import UndefinedObject, find_code

    def activation(name):
        return {"class_name": "Dense", "config": {"name": "d", "activation": {
            "module": "builtins", "class_name": "function", "config": name, "registered_name": "function"}}}

    found = find_code(activation("exec"))
    assert isinstance(found, UndefinedObject) and found.layer == "d" and found.name == "exec"
    assert find_code(activation("relu")) is None
