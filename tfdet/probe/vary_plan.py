"""What `tfdet probe --vary` runs, and how two arms' outputs are judged. Pure.

An arm is one fresh TensorFlow process under one setting. The reference arm
pins every setting to its reference value (oneDNN on, threads = the CPU count,
eager, no XLA); each other arm changes exactly one. A comparison names the
setting, the variant (TF_ENABLE_ONEDNN_OPTS=0, 3 replicas, ...), and which
arm's output is compared with which. The batch setting needs no process of
its own (row 0 alone runs in the reference arm); each replica count K runs in
its own process with K logical CPU devices and computes K = 1 there too: once
with the global batch split across the replicas (data-parallel training), and
once with every replica given the whole batch and the all-reduce taking the
mean (the all-reduce's own order, apart from the smaller per-replica batches).
Each worker count K runs K processes together on localhost as one
MultiWorkerMirroredStrategy cluster (one replica each, collectives over gRPC)
and computes the same two steps; they are compared with one replica, and with
K MirroredStrategy replicas in one process.
"""

from collections import namedtuple

from ..results.vary_records import DIFFERS, FAILED, RAISED, SAME, VARIES  # the one vocabulary of verdicts

# Settings --vary knows, in the order the grid shows them.
VARY_SETTINGS = ("onednn", "threads", "execution", "xla", "batch", "replicas")
NOT_YET = {"precision": "precision (float64 / mixed_float16 vs float32) is not measured by this tfdet yet"}
REPLICA_COUNTS = (2, 3, 4)  # two replicas cannot show order (a+b = b+a); three and four can
WORKER_COUNTS = (3, 4)  # loopback MultiWorkerMirroredStrategy clusters (each a subset of REPLICA_COUNTS)

Arm = namedtuple("Arm", "name env threads execution variants replicas logical_devices workers", defaults=(0,))
# workers: K > 0 runs the arm as K processes of one loopback MultiWorkerMirroredStrategy cluster.
Comparison = namedtuple("Comparison", "setting variant reference changed slice_rows applies")
# reference/changed: (arm name, variant); slice_rows: compare row 0 of the reference's output;
# applies: "all", "batched" (forward cases with a batch dimension) or "replicas".


def parse_settings(text_or_list):
    """(settings, problems): the --vary list, checked against the known settings."""
    items = text_or_list if isinstance(text_or_list, (list, tuple)) else [p for p in text_or_list.split(",")]
    settings, problems = [], []
    for item in (i.strip() for i in items):
        if not item:
            continue
        if item in NOT_YET:
            problems.append(NOT_YET[item])
        elif item not in VARY_SETTINGS:
            problems.append("unknown setting %r (choose from %s)" % (item, ", ".join(VARY_SETTINGS)))
        elif item not in settings:
            settings.append(item)
    if not settings and not problems:
        problems.append("--vary needs at least one setting (%s)" % ", ".join(VARY_SETTINGS))
    return [s for s in VARY_SETTINGS if s in settings], problems


def plan(settings, cpu_count):
    """(arms, comparisons) for the settings."""
    reference_env = {"TF_ENABLE_ONEDNN_OPTS": "1"}
    threads = max(1, int(cpu_count or 1))
    arms = [Arm("reference", reference_env, threads, "eager", ("main", "alone") if "batch" in settings else ("main",),
                (), 0)]
    comparisons = []
    changed = {
        "onednn": (Arm("onednn", {"TF_ENABLE_ONEDNN_OPTS": "0"}, threads, "eager", ("main",), (), 0),
                   "TF_ENABLE_ONEDNN_OPTS=0"),
        "threads": (Arm("threads", reference_env, 1, "eager", ("main",), (), 0), "1 thread (reference %d)" % threads),
        "execution": (Arm("execution", reference_env, threads, "function", ("main",), (), 0), "tf.function"),
        "xla": (Arm("xla", reference_env, threads, "xla", ("main",), (), 0), "jit_compile=True"),
    }
    for setting in settings:
        if setting in changed:
            arm, variant = changed[setting]
            arms.append(arm)
            comparisons.append(Comparison(setting, variant, ("reference", "main"), (arm.name, "main"), False, "all"))
        elif setting == "batch":
            comparisons.append(Comparison("batch", "row 0 alone", ("reference", "main"), ("reference", "alone"),
                                          True, "batched"))
        elif setting == "replicas":
            for count in REPLICA_COUNTS:
                name = "replicas-%d" % count
                arms.append(Arm(name, reference_env, threads, "eager", (), (1, count), count))
                comparisons.append(Comparison("replicas", "%d replicas" % count, (name, "replicas=1"),
                                              (name, "replicas=%d" % count), False, "replicas"))
                comparisons.append(Comparison("replicas", "%d replicas, all-reduce alone" % count, (name, "replicas=1"),
                                              (name, "mirrored=%d" % count), False, "replicas"))
            for count in WORKER_COUNTS:
                name, one_process = "workers-%d" % count, "replicas-%d" % count
                arms.append(Arm(name, reference_env, threads, "eager", (), (count,), 0, count))
                comparisons.extend([
                    Comparison("replicas", "%d workers" % count, (one_process, "replicas=1"),
                               (name, "replicas=%d" % count), False, "replicas"),
                    Comparison("replicas", "%d workers, all-reduce alone" % count, (one_process, "replicas=1"),
                               (name, "mirrored=%d" % count), False, "replicas"),
                    Comparison("replicas", "%d workers vs %d replicas" % (count, count),
                               (one_process, "replicas=%d" % count), (name, "replicas=%d" % count), False, "replicas"),
                ])
    return arms, comparisons


def applies(comparison, case):
    """Whether a comparison can be made for a case (a DenseCase or anything with its attributes)."""
    if comparison.applies == "batched":
        return bool(case.batched) and not case.gradient
    if comparison.applies == "replicas":
        return bool(case.replicas)
    return True


def why_not(comparison):
    return {"batched": "no batch dimension (or a gradient summed over the batch)",
            "replicas": "not a gradient over a global batch"}.get(comparison.applies, "")


def merge_worker_answers(answers):
    """One answer for a workers arm's (case, variant) from its K processes' answers, in worker order.

    Every worker holds the all-reduced result, so all K should give the same bits.
    The merged answer is worker 0's with a note saying so; when the workers
    disagree, every worker's runs count, so the cell says the arm varies.
    """
    first = dict(answers[0])
    raised = [a["raised"] for a in answers if a.get("raised")]
    if raised:
        first["raised"] = raised[0]
        return first
    runs = [list(a.get("digests") or ()) for a in answers]
    distinct = set(d for worker in runs for d in worker)
    if len(distinct) <= len(set(runs[0])):
        first["note"] = "all %d workers gave these bits (%d runs each)" % (len(answers), len(runs[0]))
        return first
    first["digests"] = [d for worker in runs for d in worker]
    first["saved"] = {}
    for answer in answers:
        first["saved"].update(answer.get("saved") or {})
    first["note"] = "the %d workers disagree: %d distinct results among their %d runs" % (
        len(answers), len(distinct), len(first["digests"]))
    return first


# --- judging two arms --------------------------------------------------------------


def judge(reference, changed, load, slice_rows=False):
    """The VaryRecord fields comparing two arms' answers for one case.

    reference, changed: {"digests": [...], "saved": {digest: path}, "raised": error or None,
    "failed": message or None}, over every run of the arm. load(path) reads a saved array.
    "differs" is only said when each arm gave one result over all its runs: otherwise
    the case varies run to run (a different finding, named by which arm varied).
    """
    fields = {"reference_runs": len(reference.get("digests") or ()), "changed_runs": len(changed.get("digests") or ()),
              "reference_distinct": len(set(reference.get("digests") or ())),
              "changed_distinct": len(set(changed.get("digests") or ()))}
    for side, answer in (("reference", reference), ("changed", changed)):
        if answer.get("failed"):
            fields.update(verdict=FAILED, error="%s arm: %s" % (side, answer["failed"]))
            return fields
    for side, answer in (("reference", reference), ("changed", changed)):
        if answer.get("raised"):
            error = answer["raised"]
            fields.update(verdict=RAISED, error="%s arm: %s: %s" % (side, error.get("type"), error.get("message")))
            return fields
    if not fields["reference_runs"] or not fields["changed_runs"]:
        fields.update(verdict=FAILED, error="no runs")
        return fields
    unstable = [side for side in ("reference", "changed") if fields[side + "_distinct"] > 1]
    if unstable:
        fields.update(verdict=VARIES, varies_in=" and ".join(unstable))
        return fields
    a = load(reference["saved"][reference["digests"][0]])
    b = load(changed["saved"][changed["digests"][0]])
    if slice_rows:
        a = a[:1]
    fields.update(compare_arrays(a, b))
    fields["verdict"] = DIFFERS if fields["differ"] else SAME
    del fields["differ"]
    return fields


def compare_arrays(a, b):
    """{differ, max_ulp, max_abs, max_rel, frac_differ, elements} of two outputs (bitwise first)."""
    import numpy as np

    from ..results import stats

    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return {"differ": True, "elements": int(b.size), "note": "shape or dtype differs: %s %s vs %s %s" % (
            a.shape, a.dtype, b.shape, b.dtype)}
    if a.tobytes() == b.tobytes():
        return {"differ": False, "max_ulp": 0, "max_abs": 0.0, "max_rel": 0.0, "frac_differ": 0.0,
                "elements": int(a.size)}
    ulps = stats.ulp_distance(a, b)
    differ = a.reshape(-1).view(np.uint8).reshape(a.size, -1) != b.reshape(-1).view(np.uint8).reshape(b.size, -1)
    result = {"differ": True, "max_ulp": int(ulps.max()), "max_abs": stats.max_abs_diff(a, b),
              "frac_differ": float(differ.any(axis=1).mean()), "elements": int(a.size)}
    if a.dtype.kind == "f":
        x, y = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(x == y, 0.0, np.abs(x - y) / np.maximum(np.abs(x), np.finfo(a.dtype).tiny))
        rel = rel[~np.isnan(rel)]
        result["max_rel"] = float(rel.max()) if rel.size else 0.0
    return result
