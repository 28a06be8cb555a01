"""Run a user's script (or a function) once with op capture on: the process
`tfdet locate` starts for each run.

    python -m tfdet.locating.child --trace T.trace.jsonl [--repeats K] [--steps N] [--max-bytes B]
        [--save REFS.json --save-dir D] [--no-fold] [--patch] [--settings JSON] [--describe OUT.json]
        (--script S | --function module:name) -- ARGS

Whatever happens to the script, the trace keeps what was recorded and ends
with an "end" record saying how the script ended; a script that raises
ends with status "raised" and its exception, never a traceback on stderr only.

--repeats K calls the program K times in this one process (no new TensorFlow
start-up), each call with its own trace (trace_file.repeat_path): the function
is simply called again, as a training loop calls its step, and a script is run
again from the top (runpy, fresh globals). What outlives a call (a module's
variables, TF's global seed and name counters) is not reset, so a call is only
compared with the call at the same position in another process, which went
through the same history. A repeat stops the loop early when the program
raised (a script may refuse to run twice in one process) or a write failed.

--settings applies a side's probe settings (sides.apply_settings: threads,
execution, xla) before anything runs; --describe writes the environment the
process ran in (machine.describe) once the program has ended.

Exit status: 0, or 5 when the trace could not be written (the reason is the
last line on stderr).
"""

import argparse
import importlib
import json
import os
import pickle
import runpy
import signal
import sys
import time
import traceback

from ..graph.frames import user_frame
from .capture import Recorder, install, uninstall
from .trace_file import repeat_path

WRITE_FAILED = 5  # tfdet.cli.exitcodes.WRITE_FAILED, which this process does not import


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m tfdet.locating.child")
    parser.add_argument("--trace", required=True)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--max-bytes", type=int)
    parser.add_argument("--repeats", type=int, default=1, help="calls of the program in this process")
    parser.add_argument("--save", help="a JSON file listing the refs whose full tensors to save")
    parser.add_argument("--save-dir")
    parser.add_argument("--method", choices=("fingerprint", "checksum"))
    parser.add_argument("--no-fold", dest="fold", action="store_false",
                        help="hash an output whose one reader is elementwise too (capture.CHAIN_READERS)")
    parser.add_argument("--patch", action="store_true", help="apply tfdet.patch() before the program runs")
    parser.add_argument("--settings", help="a JSON object of probe settings to apply first (sides.py)")
    parser.add_argument("--describe", help="write the environment the first call ran in to this JSON file")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--script")
    target.add_argument("--function", help="module:qualified.name, called with the pickled --call-args")
    parser.add_argument("--call-args", help="a pickle file holding (args, kwargs) for --function")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    if options.args[:1] == ["--"]:
        options.args = options.args[1:]
    return options


def _resolve(spec):
    module_name, _, qualname = spec.partition(":")
    target = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _failure(error):
    frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)]
    where = user_frame(frames) or (("%s:%d" % frames[-1]) if frames else "")
    return "%s: %s%s" % (type(error).__name__, error, (" (at %s)" % where) if where else "")


def _call(options):
    """Run the program once: (status, detail)."""
    try:
        if options.script:
            sys.argv = [options.script] + list(options.args)
            runpy.run_path(options.script, run_name="__main__")
        else:
            with open(options.call_args, "rb") as handle:
                args, kwargs = pickle.load(handle)
            _resolve(options.function)(*args, **kwargs)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            return "raised", "the script exited with %s" % (stop.code,)
    except KeyboardInterrupt:
        return "interrupted", "stopped by a signal"
    except BaseException as error:  # noqa: BLE001 - any failure of the user's code is evidence to keep
        return "raised", _failure(error)
    return "finished", ""


def _describe(tf, path, environ):
    """Write the environment the program ran in (after capture: describing it is not the program's work).
    environ: the variables as the process started, before TensorFlow set its own (KMP_* on import)."""
    import numpy as np

    from .machine import describe

    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(describe(tf, np, environ), handle, sort_keys=True)
    except Exception as error:  # noqa: BLE001 - the trace is kept either way; the parent says what is missing
        sys.stderr.write("tfdet locate: the environment could not be described: %s\n" % error)


def main(argv=None):
    options = _arguments(sys.argv[1:] if argv is None else argv)
    if hasattr(signal, "SIGXFSZ"):  # a file-size limit makes a write fail with EFBIG, said below, not kill us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    save = []
    if options.save:
        with open(options.save, encoding="utf-8") as handle:
            save = [tuple(ref) for ref in json.load(handle)]
    environ = dict(os.environ)  # as given, before TensorFlow's import adds its own variables
    import tensorflow as tf  # noqa: F401 - TF must be imported before the callback is installed

    if options.patch:
        import tfdet

        from ..runtime.apply import apply_mode

        for warning in apply_mode(tf, patch=tfdet.patch):  # said in the run's log, as patch() says them
            sys.stderr.write("%s\n" % warning)

    if options.settings:  # before the Recorder: it asks for devices, which starts TF's runtime
        from .sides import apply_settings

        apply_settings(tf, json.loads(options.settings))
    recorder = Recorder(options.trace, steps=options.steps, max_bytes=options.max_bytes, save=save,
                        save_dir=options.save_dir, method=options.method, fold=options.fold)
    if options.script:
        sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
    install(recorder)
    status, detail, seconds = "unfinished", "", None
    try:
        for repeat in range(options.repeats):
            if repeat:
                recorder.restart(repeat_path(options.trace, repeat), status, detail, seconds)
            started = time.monotonic()
            status, detail = _call(options)
            seconds = round(time.monotonic() - started, 3)
            if status != "finished" or recorder.write_error:
                break
    finally:
        uninstall(recorder)
        recorder.close(status, detail, seconds)
        if options.describe:
            _describe(tf, options.describe, environ)
    if recorder.write_error:
        sys.stderr.write("tfdet locate: the trace could not be written: %s\n" % recorder.write_error)
        return WRITE_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
