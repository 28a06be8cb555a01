"""Each promise of issue 26, checked on one program in fresh processes.

  a  patch never breaks it: what runs stock runs under tfdet.patch(), and the first
     step's loss and gradients agree with stock within TOLERANCE
  b  patch reproduces: 3 processes under patch() give bitwise-identical final weights and
     predictions (and two stock processes say whether it varies stock: EXPECT.varies_stock)
  c  scan sees what varies: tfdet.scan (stock, on this CPU) lists every op the program
     documents as varying, with the patch's fix, and (assumed patched) claims nothing will
     vary or raise where b saw patched runs reproduce
  d  locate finds it: tfdet locate names the first differing op at a line of the program,
     and "no difference" with --patch (programs that vary stock)
  e  assert_reproducible agrees with b (patched) and d (stock)
  f  diverge runs it through tfdet.diverge.context() (DIVERGE programs)

A promise that cannot hold is expected to give the program's documented outcome
(EXPECT.reason): status "expected". Every check returns one results.record.
"""

import json
import os
import time

from . import launch, programs
from .results import record

PROMISES = ("a", "b", "c", "d", "e", "f")
TITLES = {"a": "runs stock / patched", "b": "reproduces patched", "c": "scan hits", "d": "locate root",
          "e": "assert_reproducible", "f": "diverge"}
# first-step agreement, |patched - stock| <= RTOL * max|stock| + ATOL per array (float16 arrays: 1e-2)
RTOL, ATOL, RTOL16 = 1e-4, 1e-6, 1e-2
PATCHED_RUNS, STOCK_RUNS = 3, 2
PATCHED_ASSERT_REPEATS = 2  # e, patched: calls of train() in each of assert_reproducible's 2 processes
DIVERGE = ("imbalanced_bincount", "mixed_precision")
TIMEOUT = 900
# Breaks whose fix another branch already holds: the record keeps "fail" and says so.
PENDING = {}  # (program, promise) -> "pending fix on branch ...: what it fixes"


class Workspace(object):
    """Where one harness run keeps the arrays of its program runs (beside the results file),
    so promises a and b share their processes and a resumed run reuses them.

    quick=True (the default suite): PATCHED_RUNS processes a program, each a stock first step,
    then tfdet.patch(), then the patched first step and training (child job "quick"), instead
    of PATCHED_RUNS patched and STOCK_RUNS stock processes: a compares the steps of one
    process, b the trainings of all; whether it varies stock is not rerun (EXPECT says)."""

    def __init__(self, out, timeout=TIMEOUT, locate_steps=3, steps=None, jobs=2, quick=False, runner_for=None):
        self.dir = os.path.abspath(out) + ".runs"
        self.timeout, self.locate_steps, self.steps, self.jobs = timeout, locate_steps, steps, jobs
        self.quick = quick
        # how run (mode, i) of a program starts its process: a function like launch.run(argv, timeout) -> Outcome
        self.runner_for = runner_for or (lambda mode, i: launch.run)

    def runs(self, name):
        """The (mode, i) runs promises a and b of the program need."""
        if self.quick:
            return [("quick", i) for i in range(PATCHED_RUNS)]
        return [("patched", i) for i in range(PATCHED_RUNS)] + [("stock", i) for i in range(STOCK_RUNS)]

    def prepare(self, *names):
        """Start the programs' runs `jobs` at a time (they are independent)."""
        from concurrent.futures import ThreadPoolExecutor

        wanted = [(name,) + run for name in names for run in self.runs(name)]
        with ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(lambda job: self.run(*job), wanted))

    def path(self, name, what):
        os.makedirs(os.path.join(self.dir, name), exist_ok=True)
        return os.path.join(self.dir, name, what)

    def run(self, name, mode, i):
        """(arrays or None, error line or None) of run i of the program, mode stock/patched/quick."""
        out = self.path(name, "%s-%d.npz" % (mode, i))
        err = out + ".err"
        if not os.path.exists(out) and not os.path.exists(err):
            job = ["quick"] if mode == "quick" else ["run"]
            argv = ["python", "-m", "corpus.harness.child"] + job + [name, out]
            argv += ["--patch"] if mode == "patched" else []
            argv += ["--steps", str(self.steps)] if self.steps else []
            outcome = self.runner_for(mode, i)(argv, self.timeout)
            if outcome.returncode != 0 or not os.path.exists(out):
                with open(err, "w") as handle:
                    handle.write(_why(outcome))
        return _load(out, err)

    def stock_step(self, name):
        """(arrays, error) of a stock run's first step: its own process, or a quick run's first part."""
        if not self.quick:
            return self.run(name, "stock", 0)
        arrays, err = self.run(name, "quick", 0)
        if arrays is not None:
            return _load(self.path(name, "quick-0.npz.stock.npz"), None)
        stock = self.path(name, "quick-0.npz.stock.npz")
        return _load(stock, None) if os.path.exists(stock) else (None, err)

    def patched(self, name, i):
        return self.run(name, "quick" if self.quick else "patched", i)

    def stocks(self, name):
        """The stock trainings that say whether it varies stock (none in quick mode)."""
        return [] if self.quick else [self.run(name, "stock", i) for i in range(STOCK_RUNS)]


def _load(out, err):
    import numpy as np

    if os.path.exists(out):
        with np.load(out) as loaded:
            return {k: loaded[k] for k in loaded.files}, None
    with open(err) as handle:
        return None, handle.read()


def _why(outcome):
    if outcome.timed_out:
        return "timed out after %.0f s" % outcome.seconds
    lines = [line for line in outcome.stderr.strip().splitlines() if line.strip()]
    return "exit %s: %s" % (outcome.returncode, lines[-1] if lines else "(no output)")


def _same(a, b, prefix):
    keys = sorted(k for k in a if k.startswith(prefix))
    return keys == sorted(k for k in b if k.startswith(prefix)) and all(
        a[k].shape == b[k].shape and a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes() for k in keys)


def _close(stock, patched):
    """The first-step arrays that differ beyond the tolerance: [(key, max |a-b|, bound)]."""
    import numpy as np

    bad = []
    for key in sorted(k for k in stock if k.startswith("first/")):
        s, p = stock[key], patched.get(key)
        if p is None or s.shape != p.shape or s.dtype != p.dtype:
            bad.append((key, "shape/dtype %s %s vs %s %s" % (s.shape, s.dtype, getattr(p, "shape", None),
                                                              getattr(p, "dtype", None)), 0.0))
            continue
        s64, p64 = s.astype(np.float64), p.astype(np.float64)
        rtol = RTOL16 if s.dtype == np.float16 else RTOL
        bound = rtol * (float(np.max(np.abs(s64))) if s64.size else 0.0) + ATOL
        diff = float(np.max(np.abs(s64 - p64))) if s64.size else 0.0
        if not diff <= bound and not (np.isnan(s64).any() and np.array_equal(np.isnan(s64), np.isnan(p64))):
            bad.append((key, diff, bound))
    return bad


def _documented(expect, promise, output):
    """The line of `output` holding the tfdet error the program documents for `promise`
    (EXPECT.outcomes: promise -> the error's words), or None."""
    words = expect["outcomes"].get(promise)
    if not words:
        return None
    found = [line.strip() for line in output.splitlines() if words in line]
    return "documented (%s): %s" % (expect["reason"], found[-1]) if found else None


def check_a(name, ws, expect):
    started = time.perf_counter()
    stock, stock_err = ws.stock_step(name)
    patched, patched_err = ws.patched(name, 0)
    data = dict(runs_stock=stock is not None, runs_patched=patched is not None)
    if stock is None:
        return record(name, "a", "error", "the stock run failed: %s" % stock_err, time.perf_counter() - started, **data)
    if patched is None:
        return record(name, "a", "fail", "runs stock, not patched: %s" % patched_err, time.perf_counter() - started,
                      **data)
    bad = _close(stock, patched)
    if bad:
        return record(name, "a", "fail", "first step differs beyond the tolerance: " + "; ".join(
            "%s %s > %s" % b for b in bad[:3]), time.perf_counter() - started, **data)
    return record(name, "a", "pass", "first step's loss and %d gradients within rtol %g of stock" % (
        sum(1 for k in stock if k.startswith("first/g")), RTOL), time.perf_counter() - started, **data)


def check_b(name, ws, expect):
    started = time.perf_counter()
    runs = [ws.patched(name, i) for i in range(PATCHED_RUNS)]
    stocks = ws.stocks(name)
    failed = [err for arrays, err in runs if arrays is None]
    if failed:
        return record(name, "b", "fail", "a patched run failed: %s" % failed[0], time.perf_counter() - started)
    same = all(_same(runs[0][0], other, "train/") for other, _ in runs[1:])
    varies = None
    if stocks and all(arrays is not None for arrays, _ in stocks):
        varies = not _same(stocks[0][0], stocks[1][0], "train/")
    data = dict(varies_stock=varies, reproduces=same)
    notes = [] if stocks else ["stock not rerun (quick): EXPECT says it %s" % (
        "varies" if expect["varies_stock"] else "does not vary")]
    if varies is False and expect["varies_stock"]:
        notes.append("the two stock runs matched this time (EXPECT says it varies: a pair can miss it)")
    if varies and not expect["varies_stock"]:
        return record(name, "b", "fail", "varies stock, but EXPECT.varies_stock is False", time.perf_counter() - started,
                      **data)
    if same == expect["patch_reproduces"]:
        status = "pass" if same else "expected"
        detail = ("%d patched runs bitwise identical" % PATCHED_RUNS if same
                  else "patched runs differ, as documented: %s" % expect["reason"])
    else:
        status = "fail"
        detail = ("patched runs differ (EXPECT says they reproduce)" if not same
                  else "patched runs reproduce, but EXPECT says they do not: update EXPECT")
    return record(name, "b", status, "; ".join([detail] + notes), time.perf_counter() - started, **data)


def _varying(name, expect, latest):
    """The catalogued op types the program varies in (its EXPECT, and what locate found
    in d), and the others (such as IteratorGetNext, where a tf.data variation comes out)."""
    from tfdet.catalog import default_catalogue

    ops = set(expect["varying_ops"])
    located = (latest.get((name, "d")) or {}).get("data", {}).get("op_type")
    if located:
        ops.add(located)
    catalogued = {op for entry in default_catalogue().entries for op in entry.raw_ops}
    return sorted(ops & catalogued), sorted(ops - catalogued)


def check_c(name, ws, expect, latest):
    started = time.perf_counter()
    out = ws.path(name, "scan.json")
    outcome = launch.run(["python", "-m", "corpus.harness.child", "scan", name, out], ws.timeout)
    if outcome.returncode != 0:
        return record(name, "c", "error", "the scan failed: %s" % _why(outcome), time.perf_counter() - started)
    with open(out) as handle:
        report = json.load(handle)
    stock = {h["op_type"]: h for h in report["stock"]}
    patched = {h["op_type"]: h for h in report["patched"]}
    problems, found = [], []
    varying, uncatalogued = _varying(name, expect, latest)
    for op in varying:
        hit = stock.get(op)
        if hit is None or hit["outcome"] not in ("nondeterministic", "raises"):
            problems.append("%s varies but the stock scan %s" % (op, "does not list it" if hit is None
                                                                  else "says %s" % hit["outcome"]))
            continue
        after = patched.get(op)
        fixed = after is not None and after["outcome"] == "fixed" and after["fix"].startswith("tfdet.patch()")
        if expect["patch_reproduces"] and not fixed:
            problems.append("%s: the scan does not say tfdet.patch() fixes it (%s)" % (
                op, after and after["outcome"]))
        found.append("%s (%s)" % (op, after["fix"] if after else hit["fix"]))
    b = latest.get((name, "b")) or {}
    claims = sorted(op for op, h in patched.items() if h["outcome"] in ("nondeterministic", "raises"))
    if claims and b.get("data", {}).get("reproduces"):
        problems.append("assumed patched, it claims %s will vary or raise on CPU, yet the patched runs reproduce "
                        "bitwise" % ", ".join("%s (%s)" % (op, patched[op]["outcome"]) for op in claims))
    unknown = sorted(op for op, h in patched.items() if h["outcome"] == "unknown")
    data = dict(stock_hits=sorted(stock), claims=claims, unknown=unknown, uncatalogued=uncatalogued)
    if problems:
        status = "expected" if expect["reason"] and "scan" in expect["reason"] else "fail"
        return record(name, "c", status, "; ".join(problems) + ("; %s" % expect["reason"] if status == "expected"
                                                                else ""), time.perf_counter() - started, **data)
    return record(name, "c", "pass", ("lists " + ", ".join(found)) if found else
                  "nothing varies here and the scan claims nothing on CPU", time.perf_counter() - started, **data)


def _locate(name, ws, patched):
    argv = ["python", "-m", "tfdet", "locate", "--json", "--no-detail", "--timeout", str(ws.timeout)]
    steps = getattr(programs.load(name), "LOCATE_STEPS", ws.locate_steps)  # a rare variation needs more steps
    argv += (["--patch"] if patched else []) + [programs.path(name), "--", "--steps", str(steps)]
    outcome = launch.run(argv, 3 * ws.timeout)
    try:
        result = json.loads(outcome.stdout)
    except ValueError:
        result = None
    return outcome, result


def check_d(name, ws, expect, latest):
    started = time.perf_counter()
    b = (latest.get((name, "b")) or {}).get("data", {})
    if not expect["varies_stock"] and not b.get("varies_stock"):
        return record(name, "d", "n/a", "does not vary stock", 0.0)
    outcome, result = _locate(name, ws, patched=False)
    first = (result or {}).get("first_difference")
    documented = _documented(expect, "d", outcome.stdout + outcome.stderr)
    if documented:
        return record(name, "d", "expected", "%s [tfdet locate, exit %s]" % (documented, outcome.returncode),
                      time.perf_counter() - started)
    if outcome.returncode != 1 or not first:
        return record(name, "d", "fail", "tfdet locate found no difference (exit %s): %s" % (
            outcome.returncode, _why(outcome) if result is None else (result.get("verdict") or "")),
            time.perf_counter() - started)
    source = first.get("source") or ""
    data = dict(op_type=first.get("op_type"), source=source, fix=first.get("fix"))
    problems = []
    if first.get("op_type") not in expect["varying_ops"]:
        problems.append("names %s, EXPECT.varying_ops %s" % (first.get("op_type"), list(expect["varying_ops"])))
    if programs.path(name) not in source:
        problems.append("at %s, not a line of the program" % (source or "no line"))
    p_outcome, p_result = _locate(name, ws, patched=True)
    p_first = (p_result or {}).get("first_difference")
    data["patched_exit"] = p_outcome.returncode
    if expect["patch_reproduces"] and (p_outcome.returncode != 0 or p_first):
        problems.append("with --patch: %s" % ("differs at %s" % p_first.get("op_type") if p_first
                                               else _why(p_outcome)))
    where = "%s at %s; --patch: %s" % (first.get("op_type"), source, "no difference" if p_outcome.returncode == 0
                                       else "exit %s" % p_outcome.returncode)
    if problems:
        return record(name, "d", "fail", "; ".join(problems), time.perf_counter() - started, **data)
    return record(name, "d", "pass", where, time.perf_counter() - started, **data)


def _assert(name, ws, patched):
    out = ws.path(name, "assert-%s.json" % ("patched" if patched else "stock"))
    argv = ["python", "-m", "corpus.harness.child", "assert", name, out, "--runs", "2"]
    # patched: 2 calls a process (b's 3 processes at STEPS are the stronger proof of reproducing);
    # stock: assert_reproducible's default 10, to catch the variation d located
    argv += ["--assert-patched", "--repeats", str(PATCHED_ASSERT_REPEATS)] if patched else []
    outcome = launch.run(argv, 3 * ws.timeout)
    if outcome.returncode != 0 or not os.path.exists(out):
        return None, _why(outcome)
    with open(out) as handle:
        return json.load(handle), None


def check_e(name, ws, expect, latest):
    started = time.perf_counter()
    b = (latest.get((name, "b")) or {}).get("data", {})
    d = (latest.get((name, "d")) or {}).get("data", {})
    problems, said = [], []
    patched, err = _assert(name, ws, patched=True)
    documented = _documented(expect, "e", err or "")
    if documented:
        return record(name, "e", "expected", "%s [assert_reproducible]" % documented, time.perf_counter() - started)
    if patched is None:
        return record(name, "e", "error", "assert_reproducible(patch=True) failed to run: %s" % err,
                      time.perf_counter() - started)
    if b.get("reproduces") is not None and patched["reproduced"] != b["reproduces"]:
        problems.append("patch=True says %s, b says %s" % (
            "reproduced" if patched["reproduced"] else "did not", "reproduces" if b["reproduces"] else "does not"))
    said.append("patch=True: %s" % ("passes" if patched["reproduced"] else "raises"))
    if d.get("op_type"):
        stock, err = _assert(name, ws, patched=False)
        if stock is None:
            problems.append("assert_reproducible() failed to run: %s" % err)
        elif stock["reproduced"]:
            problems.append("stock: passed, but locate (d) found %s differing" % d["op_type"])
        elif d["op_type"] not in stock["message"]:
            problems.append("stock: raised without naming %s: %s" % (d["op_type"], stock["message"].splitlines()[0]))
        else:
            said.append("stock: raises naming %s" % d["op_type"])
    if problems:
        return record(name, "e", "fail", "; ".join(problems), time.perf_counter() - started)
    return record(name, "e", "pass", "; ".join(said), time.perf_counter() - started)


def check_f(name, ws, expect, latest):
    started = time.perf_counter()
    if name not in DIVERGE:
        return record(name, "f", "n/a", "not one of the diverge programs (%s)" % ", ".join(DIVERGE), 0.0)
    out = ws.path(name, "diverge.jsonl")
    if os.path.exists(out):
        os.remove(out)
    argv = ["python", "-m", "tfdet", "diverge", "--script", programs.path(name), "--runs", "2", "--conditions",
            "fixed-fixed", "--modes", "baseline,patched", "--jobs", "1", "--quiet", "--out", out]
    outcome = launch.run(argv, 4 * ws.timeout)
    cells = []
    if os.path.exists(out):
        with open(out) as handle:
            for line in handle:
                rec = json.loads(line)
                if rec.get("record") == "summary":
                    cells = rec["cells"]
    if outcome.returncode != 0 or not cells:
        return record(name, "f", "fail", "tfdet diverge: %s" % _why(outcome), time.perf_counter() - started)
    distinct = {c["mode"]: c["distinct_weights"] for c in cells}
    data = dict(distinct_weights=distinct)
    if expect["patch_reproduces"] and distinct.get("patched") != 1:
        return record(name, "f", "fail", "patched cell: %s distinct final weights" % distinct.get("patched"),
                      time.perf_counter() - started, **data)
    return record(name, "f", "pass", "2 runs a mode; distinct final weights: baseline %s, patched %s" % (
        distinct.get("baseline"), distinct.get("patched")), time.perf_counter() - started, **data)


def check(promise, name, ws, latest):
    """The record of `promise` on program `name` (latest: the records so far, for the
    promises that lean on others: c and d on b, e on b and d)."""
    expect = programs.expect(name)
    started = time.perf_counter()
    if promise in ("a", "b"):
        ws.prepare(name)  # the runs a and b share: their time is counted where they are made
    if promise == "a":
        rec = check_a(name, ws, expect)
    elif promise == "b":
        rec = check_b(name, ws, expect)
    else:
        rec = {"c": check_c, "d": check_d, "e": check_e, "f": check_f}[promise](name, ws, expect, latest)
    if promise in ("a", "b"):
        rec["seconds"] = round(time.perf_counter() - started, 1)
    if rec["status"] == "fail" and (name, promise) in PENDING:
        rec["detail"] += " [%s]" % PENDING[(name, promise)]
    return rec
