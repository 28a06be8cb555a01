"""A small `tfdet probe --vary` results file, written through the real writer, for the
results, report and catalogue tests (the records are what the runner writes)."""

from tfdet.results.jsonl import JsonLinesWriter
from tfdet.results.vary_records import ArmInfo, VaryEnd, VaryHeader, VaryRecord


def header(cases=("matmul", "reduce-sum", "conv2d", "mlp-grad"), tf_version="2.21.0", **changes):
    fields = dict(kind="vary", schema_version=1, tfdet_version="0", record="header", created="2026-11-26T08:00:00+00:00",
                  argv=["probe", "--vary", "onednn,threads,replicas"], settings=["onednn", "threads", "replicas"],
                  cases=list(cases), repeats=2, seed=0, tf_version=tf_version, device="cpu", cpu_count=2,
                  arms={"reference": ArmInfo(env={"TF_ENABLE_ONEDNN_OPTS": "1"}, threads=2, execution="eager")},
                  titles={c: "the %s case" % c for c in cases},
                  names={"matmul": ["tf.linalg.matmul", "MatMul"], "reduce-sum": ["tf.math.reduce_sum", "Sum"]})
    fields.update(changes)
    return VaryHeader(**fields)


def record(case, setting, variant, verdict, **fields):
    if verdict in ("same", "differs"):
        fields.setdefault("reference_runs", 2)
        fields.setdefault("changed_runs", 2)
        fields.setdefault("reference_distinct", 1)
        fields.setdefault("changed_distinct", 1)
        fields.setdefault("max_ulp", 0 if verdict == "same" else 3)
    return VaryRecord(record="vary", case=case, setting=setting, variant=variant, verdict=verdict, **fields)


RECORDS = [
    record("matmul", "onednn", "TF_ENABLE_ONEDNN_OPTS=0", "differs", max_ulp=40, max_rel=1e-6, max_abs=1e-5,
           frac_differ=0.5, elements=65536),
    record("matmul", "threads", "1 thread (reference 2)", "same"),
    record("reduce-sum", "onednn", "TF_ENABLE_ONEDNN_OPTS=0", "same"),
    record("reduce-sum", "threads", "1 thread (reference 2)", "differs", max_ulp=7),
    record("conv2d", "onednn", "TF_ENABLE_ONEDNN_OPTS=0", "same"),
    record("conv2d", "threads", "1 thread (reference 2)", "varies", varies_in="changed", reference_runs=2,
           changed_runs=2, reference_distinct=1, changed_distinct=2),
    record("mlp-grad", "replicas", "2 replicas", "same"),
    record("mlp-grad", "replicas", "3 replicas", "differs", max_ulp=2),
    record("mlp-grad", "replicas", "4 replicas", "raised", error="changed arm: InternalError: <boom>"),
]


def write(path, records=RECORDS, finished=True, **header_changes):
    writer = JsonLinesWriter(str(path))
    writer.write_header(header(**header_changes))
    writer.append(records)
    if finished:
        writer.append([VaryEnd(record="end", finished="2026-11-26T08:05:00+00:00", seconds=300.0,
                               notes=["replicas: what the replicas rows are"])])
    writer.close()
    return str(path)
