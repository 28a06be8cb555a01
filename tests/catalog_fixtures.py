"""A small, valid catalogue entry that tests mutate (shared by catalogue and CLI tests)."""

import yaml

GOOD_ENTRY = {
    "id": "demo-op",
    "title": "Demo op",
    "description": "An op for tests.",
    "apis": ["tf.demo.op", "tf.compat.v1.demo_op"],
    "raw_ops": ["DemoOp"],
    "direction": "forward",
    "root_cause": "atomics",
    "devices": {
        "gpu": [
            {"versions": "<2.5", "status": "nondeterministic", "patch": "demo", "sources": ["tf-issue:1"]},
            {"versions": ">=2.5,<2.8", "status": "raises_under_determinism", "switches": ["TF_DETERMINISTIC_OPS"],
             "error": {"type": "UnimplementedError", "message": "no."}, "sources": ["tf-release:2.5"]},
            {"versions": ">=2.8", "status": "deterministic_with_switch", "switches": ["enable_op_determinism"],
             "sources": ["tf-release:2.8"]},
        ],
        "cpu": [{"versions": ">=1.14", "status": "deterministic", "sources": ["tf-source:kernel.cc"]}],
    },
    "sources": ["tf-issue:1"],
}


def document(entry=None, **top):
    data = {"schema_version": 1, "entries": [entry if entry is not None else GOOD_ENTRY]}
    data.update(top)
    return yaml.safe_dump(data, sort_keys=False)
