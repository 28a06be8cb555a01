"""What runs inside one fresh process: `python -m corpus.harness.child JOB NAME OUT [--patch]`.

JOB: "run" (first_step then train, both saved to OUT as .npz), "quick" (stock first_step,
then tfdet.patch(), then first_step and train: a and b's arrays of one stock and one patched
run from one process; OUT + ".stock.npz" holds the stock step, written before the patch), "scan" (tfdet.scan of
scan_target(), with dataset=scan_dataset() where the program defines one, stock and assumed patched, on this machine's CPU, to OUT as JSON),
"assert" (tfdet.testing.assert_reproducible(train), result to OUT as JSON).
With --patch, tfdet.patch() is applied before the program is imported.
"""

import json
import sys


def main(argv):
    job, name, out = argv[:3]
    patched = "--patch" in argv
    if patched and job != "quick":
        import tensorflow  # noqa: F401  (the README's order: TensorFlow, then patch)

        import tfdet

        tfdet.patch()
    import importlib

    program = importlib.import_module("corpus.programs." + name)
    if job == "quick":
        import numpy as np

        # stock first: a patch is undone by unpatch(), but a stock run after it in the same
        # process would not be stock (functions traced while patched keep the replacements)
        np.savez(out + ".stock.npz", **{"first/" + k: v for k, v in program.first_step(seed=0).items()})
        import tfdet

        tfdet.patch()
        job = "run"
    if job == "run":
        import numpy as np

        arrays = {"first/" + k: v for k, v in program.first_step(seed=0).items()}
        steps = {"steps": int(argv[argv.index("--steps") + 1])} if "--steps" in argv else {}
        arrays.update({"train/" + k: v for k, v in program.train(seed=0, **steps).items()})
        np.savez(out, **arrays)
    elif job == "scan":
        import tfdet

        target, inputs = program.scan_target()
        # a program whose variation is in its input pipeline offers it (a model file cannot hold it)
        dataset = program.scan_dataset() if hasattr(program, "scan_dataset") else None
        report = {}
        for assume_patched in (False, True):
            scanned = tfdet.scan(target, inputs, device="cpu", assume_patched=assume_patched, dataset=dataset)
            report["patched" if assume_patched else "stock"] = [
                dict(op_type=h.op_type, outcome=h.outcome, status=h.status, fix=h.fix, entries=list(h.entries))
                for h in scanned.hits]
        with open(out, "w") as handle:
            json.dump(report, handle)
    elif job == "assert":
        from tfdet.testing import assert_reproducible

        runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 2
        repeats = {"repeats": int(argv[argv.index("--repeats") + 1])} if "--repeats" in argv else {}
        try:
            result = assert_reproducible(program.train, runs=runs, processes=2, patch="--assert-patched" in argv,
                                         timeout=900, **repeats)
            record = {"reproduced": True, "message": result.verdict}
        except AssertionError as exc:
            record = {"reproduced": False, "message": str(exc)}
        with open(out, "w") as handle:
            json.dump(record, handle)
    else:
        raise SystemExit("unknown job %r" % job)


if __name__ == "__main__":
    main(sys.argv[1:])
