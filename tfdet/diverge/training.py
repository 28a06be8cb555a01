"""One training in its own process: `python -m tfdet.diverge.training SPEC.json OUTDIR`.

The mode's environment variables arrive in the environment (set by the parent
before TensorFlow is imported); the spec lists the API calls and whether to
call tfdet.patch(), which happen here before anything trains. What trains is
one of: a built-in workload (spec "workload"), the user's script (spec
"script": run as __main__ under the tfdet.diverge.context() contract), or the
user's function (spec "function": "path/to/module.py:name", called as
name(init_seed, batch_seed) -> (predictions, weights)).

Writes OUTDIR/result.json (figures and timings) and OUTDIR/arrays.npz
(predictions, labels when known, weights). TF's chatter goes to stderr.
"""

import json
import os
import sys
import time


def apply_mode(tf, spec):
    """The mode's API calls and patch, in this fresh process, before any op runs.
    What patch() does not cover is the probe's and scan's business: not said here."""
    from tfdet.runtime.apply import apply_mode as apply

    patch = None
    if spec.get("patch"):
        import tfdet

        patch = tfdet.patch
    apply(tf, spec.get("api_calls", []), patch, {"quiet": True})


def _builtin(tf, np, spec):
    import keras

    from tfdet.diverge.workloads import WORKLOADS, train

    return train(tf, np, keras, WORKLOADS[spec["workload"]], int(spec["init_seed"]), int(spec["batch_seed"]),
                 float(spec["lr"]), float(spec.get("momentum", 0.0)), int(spec["epochs"]), int(spec["batch_size"]),
                 spec.get("data_seed"), spec.get("augment_seed"))


def _export_compare_sources(spec):
    """tfdet compare's data, augment and hparams sources, for a script's or a
    function's tfdet.diverge.context()."""
    from tfdet.diverge import contract

    if spec.get("data_seed") is not None:
        os.environ[contract.DATA_SEED] = str(spec["data_seed"])
    if spec.get("augment_seed") is not None:
        os.environ[contract.AUGMENT_SEED] = str(spec["augment_seed"])
    if spec.get("hparams"):
        os.environ[contract.HPARAMS] = json.dumps(spec["hparams"], sort_keys=True)


def _outputs(np, predictions, weights, labels, seconds, steps):
    predictions = np.asarray(predictions)
    out = {"weights": [np.asarray(w) for w in (weights or [])], "seconds_total": seconds, "steps": steps,
           "seconds_per_step": seconds / steps if steps else None, "final_loss": None,
           "labels": None if labels is None else np.asarray(labels)}
    if predictions.ndim == 2:
        out["logits"] = predictions
    elif predictions.ndim == 1:
        out["predictions"] = predictions
    else:
        raise ValueError("predictions must be class ids [examples] or scores [examples, classes], got shape %s"
                         % (predictions.shape,))
    return out


def _script(np, spec, outdir):
    import runpy

    from tfdet.diverge import contract

    saved = os.path.join(outdir, "script-output.npz")
    os.environ.update({contract.INIT_SEED: str(spec["init_seed"]), contract.BATCH_SEED: str(spec["batch_seed"]),
                       contract.OUT: saved})
    if spec.get("lr"):
        os.environ[contract.LR] = repr(float(spec["lr"]))
    _export_compare_sources(spec)
    script = spec["script"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    sys.argv = [script] + list(spec.get("script_args", []))
    started = time.perf_counter()
    runpy.run_path(script, run_name="__main__")
    seconds = time.perf_counter() - started
    if not os.path.exists(saved):
        raise RuntimeError("%s saved no predictions: call tfdet.diverge.context().save(predictions, ...)" % script)
    with np.load(saved) as arrays:
        weights = [arrays[n] for n in sorted(n for n in arrays.files if n.startswith("w"))]
        labels = arrays["labels"] if "labels" in arrays.files else None
        steps = int(arrays["steps"]) if "steps" in arrays.files else None
        return _outputs(np, arrays["predictions"], weights, labels, seconds, steps)


def load_function(reference):
    """The function named by "path/to/module.py:name" (the module loaded from its file)."""
    import importlib.util

    path, _, name = reference.rpartition(":")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec = importlib.util.spec_from_file_location("tfdet_diverge_user_module", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module
    module_spec.loader.exec_module(module)
    function = module
    for part in name.split("."):
        function = getattr(function, part)
    return function


def _function(np, spec):
    _export_compare_sources(spec)
    train = load_function(spec["function"])
    started = time.perf_counter()
    returned = train(int(spec["init_seed"]), int(spec["batch_seed"]))
    seconds = time.perf_counter() - started
    if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
        raise TypeError("%s must return (predictions, weights), got %s" % (spec["function"], type(returned).__name__))
    predictions, weights = returned
    return _outputs(np, predictions, weights, spec.get("labels"), seconds, None)


def run(spec, outdir):
    started = time.perf_counter()
    import numpy as np
    import tensorflow as tf

    from tfdet.diverge import metrics
    from tfdet.tfinfo import op_determinism_enabled, thread_settings

    apply_mode(tf, spec)
    if spec.get("script"):
        result = _script(np, spec, outdir)
    elif spec.get("function"):
        result = _function(np, spec)
    else:
        result = _builtin(tf, np, spec)
    logits = result.get("logits")
    predictions = (np.argmax(logits, axis=1) if logits is not None else result["predictions"]).astype("int64")
    labels = result["labels"]
    arrays = {"predictions": predictions}
    if labels is not None:
        labels = np.asarray(labels).astype("int64").reshape(-1)
        if labels.shape != predictions.shape:
            raise ValueError("%d labels for %d predictions" % (labels.size, predictions.size))
        arrays["labels"] = labels
    arrays.update({"w%03d" % i: w for i, w in enumerate(result["weights"])})
    np.savez(os.path.join(outdir, "arrays.npz"), **arrays)
    meta = {
        "accuracy": float(np.mean(predictions == labels)) if labels is not None else None,
        "top5_accuracy": metrics.top_k_accuracy(logits, labels, 5) if logits is not None and labels is not None
        else None,
        "seconds_total": result["seconds_total"],
        "seconds_per_step": result["seconds_per_step"],
        "steps": result["steps"],
        "final_loss": result["final_loss"],
        "process_seconds": time.perf_counter() - started,
        "tf_version": tf.__version__,
        "op_determinism": bool(op_determinism_enabled()),
        "threads": {k: v for k, v in thread_settings(os.environ, tf).items() if v is not None},
        "pid": os.getpid(),
    }
    with open(os.path.join(outdir, "result.json"), "w", encoding="utf-8") as handle:
        json.dump(meta, handle)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    run(spec, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
