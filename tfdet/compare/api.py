"""compare(train_a, train_b): two Python functions instead of built-in setups or scripts."""

from ..results.compare_records import Setup
from .run import CompareConfig, run_compare


def _setup(name, train):
    from ..diverge.run import function_reference

    reference = function_reference(train)
    return Setup(name=name, workload="function:%s" % reference.rpartition(":")[2], function=reference)


def compare(train_a, train_b, labels, out, progress=None, more=(), **options):
    """Compare `train_a(init_seed, batch_seed) -> (predictions, weights)` with
    `train_b` (diverge's function contract: top-level functions of a .py file),
    scored by accuracy against `labels`. `options`: CompareConfig's (sources,
    gamma, min_runs, max_runs, step, share_runs, jobs, ...). The data source is
    not offered to functions (they get no data seed): leave it out of sources.
    space={"lr": "0.01:0.1:log", ...} with "hparams" in sources: a function reads
    its draw from tfdet.diverge.context().hparams (and context().augment_seed).
    more: further functions (setups C, D, ...), each compared with A as B is.
    Returns the CompareSummary (also written to `out`)."""
    from .space import parse_all

    options.setdefault("sources", ["init", "order", "numerics"])
    if "data" in options["sources"]:
        raise ValueError("the data source needs a built-in workload or a script (a function gets no data seed)")
    options["space"] = parse_all("%s=%s" % item for item in (options.get("space") or {}).items())
    if ("hparams" in options["sources"]) != bool(options["space"]):
        raise ValueError("the hparams source and a space go together: give both or neither")
    others = [_setup(name, train) for name, train in zip("CDEFGH", more)]
    if len(others) < len(more):
        raise ValueError("at most 7 setups besides A")
    config = CompareConfig(a=_setup("A", train_a), b=_setup("B", train_b), others=others, out=out,
                           labels=[int(x) for x in labels], **options)
    return run_compare(config, progress)[3]
