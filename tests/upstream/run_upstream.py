"""TensorFlow's own kernel tests of the replaced ops, run stock and patched (issue 14).

The TF wheel ships some kernel test classes as importable modules (the thin
upstream *_test.py files only subclass them and call test.main()). Each
(module, configuration) runs in its own process, because op determinism and
the patch are process-wide and the patch must be applied before the module is
imported:

  stock         TensorFlow as installed
  determinism   stock + tf.config.experimental.enable_op_determinism()
  patched       tfdet.patch() (this machine's plan)
  patched-gpu   tfdet.patch(device="gpu") (the plan for a GPU, installed on this CPU)
  patched-gpu-2.0  tfdet.patch(device="gpu") with tf.__version__ faked as 2.0.0: the
                plan that installs every replacement (bias_add, both xents, ...)

A test that passes in a patched configuration's baseline (determinism when the
plan turns op determinism on, else stock) and fails patched is a replacement
bug, unless it fails under TF's determinism mode alone too (the replacement
then behaves as TF's own deterministic path: inherited) or is in ACCEPTED (a
check of how the stock op's graph is built, with the reason). A test that
passes stock and fails under determinism alone is inherited from TF's
determinism mode.

    python tests/upstream/run_upstream.py [--json OUT] [--only MODULE_SUBSTRING]
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

MODULES = (
    "tensorflow.python.kernel_tests.nn_ops.bias_op_base",
    "tensorflow.python.kernel_tests.nn_ops.xent_op_test_base",
    "tensorflow.python.kernel_tests.nn_ops.depthwise_conv_op_base",
    "tensorflow.python.kernel_tests.nn_ops.cudnn_deterministic_base",
    "tensorflow.python.kernel_tests.sparse_ops.sparse_xent_op_test_base",
)
CONFIGS = ("stock", "determinism", "patched", "patched-gpu", "patched-gpu-2.0")

# Runs inside the child: argv = [config, module]; prints one JSON line per test.
CHILD = r'''
import importlib, inspect, json, sys, unittest, warnings
warnings.simplefilter("ignore")
config, module_name = sys.argv[1], sys.argv[2]
import tensorflow as tf
from absl import flags
flags.FLAGS(["upstream"], known_only=True)
if config == "determinism":
    tf.config.experimental.enable_op_determinism()
elif config.startswith("patched"):
    import tfdet
    if config == "patched-gpu-2.0":
        tf.__version__ = "2.0.0"
    tfdet.patch(device="gpu" if "gpu" in config else None, quiet=True)
from tensorflow.python.framework import config as tf_config
determinism_on = bool(tf_config.is_op_determinism_enabled())
try:
    module = importlib.import_module(module_name)
except Exception as exc:
    print("UPSTREAM " + json.dumps({"import_error": "%s: %s" % (type(exc).__name__, exc)}))
    sys.exit(0)
classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
           if issubclass(c, unittest.TestCase) and c.__module__ == module.__name__]


class Result(unittest.TestResult):
    def _emit(self, test, outcome, detail=""):
        print("UPSTREAM " + json.dumps({"test": test.id().split(".", 4)[-1], "outcome": outcome,
                                        "detail": detail[-600:], "determinism": determinism_on}), flush=True)

    def addSuccess(self, test):
        self._emit(test, "pass")

    def addFailure(self, test, err):
        self._emit(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        self._emit(test, "fail", self._exc_info_to_string(err, test))

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._emit(test, "fail", "%s: %s" % (subtest.id().split(".")[-1], self._exc_info_to_string(err, test)))

    def addSkip(self, test, reason):
        self._emit(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        self._emit(test, "pass")

    def addUnexpectedSuccess(self, test):
        self._emit(test, "fail", "unexpected success")


loader = unittest.TestLoader()
suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in classes)
suite.run(Result())
'''


def run_one(config, module, timeout=1800):
    """{test id: (outcome, detail)} for one module in one configuration, in a fresh process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in list(env):
        if name.startswith(("TF_DETERMINISTIC", "TF_CUDNN", "TFDET_")):
            del env[name]
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, config, module], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=REPO)
        stdout, crashed = done.stdout, done.returncode != 0 and "exit %d: %s" % (done.returncode, done.stderr[-800:])
    except subprocess.TimeoutExpired as exc:
        stdout, crashed = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or ""), \
            "timeout after %ds" % timeout
    results, determinism = {}, None
    for line in stdout.splitlines():
        if not line.startswith("UPSTREAM "):
            continue
        record = json.loads(line[len("UPSTREAM "):])
        if "import_error" in record:
            crashed = "import error: " + record["import_error"]
            continue
        results[record["test"]] = (record["outcome"], record["detail"])
        determinism = record["determinism"]
    return {"results": results, "crashed": crashed or "", "determinism": determinism}


# Upstream tests that check how the stock op is built, not what it computes: TF itself skips the
# check once op determinism is on, and the replacement is TF's own deterministic composite.
ACCEPTED = {
    "XentOpTestBase.testSecondGradient": "asserts BatchMatMulV2 in the fused kernel's second-gradient graph; "
                                         "TF skips that assertion under op determinism, whose composite the "
                                         "replacement is (its numeric check passes)",
    "SparseXentOpTestBase.testSecondGradient": "same as XentOpTestBase.testSecondGradient",
}


def accepted(test):
    return next((why for name, why in ACCEPTED.items() if test.endswith(name)), None)


def compare(runs):
    """Regressions: (module, config, test, cause, detail). cause is 'replacement' (passes in the
    config's baseline, fails patched) or 'determinism' (passes stock, fails under determinism alone)."""
    found = []
    for module, by_config in runs.items():
        stock = by_config.get("stock", {}).get("results", {})
        det = by_config.get("determinism", {}).get("results", {})
        for test, (outcome, detail) in sorted(det.items()):
            if outcome == "fail" and stock.get(test, ("",))[0] == "pass":
                found.append((module, "determinism", test, "determinism", detail))
        for config, run in by_config.items():
            if not config.startswith("patched"):
                continue
            base = det if run["determinism"] else stock
            for test, (outcome, detail) in sorted(run["results"].items()):
                if outcome != "fail" or base.get(test, ("",))[0] != "pass":
                    continue
                if det.get(test, ("",))[0] == "fail":  # what TF's own deterministic path does too
                    found.append((module, config, test, "determinism", detail))
                elif accepted(test):
                    found.append((module, config, test, "accepted", accepted(test)))
                else:
                    found.append((module, config, test, "replacement", detail))
    return found


def table(runs):
    configs = [c for c in CONFIGS if any(c in by for by in runs.values())]
    lines = ["| file | " + " | ".join(configs) + " |", "|---" * (len(configs) + 1) + "|"]
    for module, by_config in runs.items():
        cells = []
        for config in configs:
            run = by_config.get(config)
            if run is None:
                cells.append("-")
                continue
            outcomes = [o for o, _ in run["results"].values()]
            cell = "%d/%d" % (outcomes.count("pass"), outcomes.count("pass") + outcomes.count("fail"))
            if outcomes.count("skip"):
                cell += " (%d skipped)" % outcomes.count("skip")
            if run["crashed"]:
                cell += " CRASH"
            cells.append(cell)
        lines.append("| %s | %s |" % (module.rsplit(".", 1)[-1] + ".py", " | ".join(cells)))
    return "\n".join(lines)


def run_all(modules=MODULES, configs=CONFIGS, log=None):
    runs = {}
    for module in modules:
        runs[module] = {}
        for config in configs:
            start = time.time()
            runs[module][config] = run_one(config, module)
            if log:
                run = runs[module][config]
                log("%s %s: %d tests, %.0fs%s" % (module.rsplit(".", 1)[-1], config, len(run["results"]),
                                                  time.time() - start, " CRASH " + run["crashed"][:200]
                                                  if run["crashed"] else ""))
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write every outcome here")
    parser.add_argument("--only", help="run the modules whose name contains this")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    args = parser.parse_args(argv)
    modules = [m for m in MODULES if not args.only or args.only in m]
    runs = run_all(modules, args.configs.split(","), log=lambda s: print(s, file=sys.stderr, flush=True))
    print("tests passed/(passed+failed) per configuration\n")
    print(table(runs))
    found = compare(runs)
    print()
    for _module, config, test, cause, detail in found:
        last = [line for line in detail.strip().splitlines() if line.strip()][-1:] or [""]
        label = {"replacement": "REPLACEMENT BUG", "determinism": "as TF's determinism mode",
                 "accepted": "accepted (implementation check)"}[cause]
        print("%-32s %-16s %-60s %s" % (label, config, test.split(".", 1)[-1], last[0][:160]))
    if not found:
        print("no test that passes in its baseline fails patched")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({m: {c: r for c, r in by.items()} for m, by in runs.items()}, f, indent=1)
    return 1 if any(cause == "replacement" for *_, cause, _ in found) else 0


if __name__ == "__main__":
    sys.exit(main())
