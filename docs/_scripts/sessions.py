"""Run the command sessions the guides show and keep their real output.

    python docs/_scripts/sessions.py            # every session (a few minutes on 2 cores)
    python docs/_scripts/sessions.py locate     # some, by id

Each session runs as a user would type it, in a scratch directory where `examples/` and
`reports/` are the checkout's, and its output goes to docs/_generated/ID.txt, which the guides
include. CI runs this before it builds the site, so a guide's output is always this tfdet's.
A session whose exit code is not the one the guide expects fails the script (exit 1).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "docs", "_generated")


@dataclass(frozen=True)
class Session:
    id: str
    commands: tuple  # shell lines as the guide shows them; `tfdet` runs this checkout's tfdet
    exit_code: int = 0  # of the last command
    timeout: int = 900


SESSIONS = (
    Session("status", ("tfdet status",)),
    Session("catalog-show", ("tfdet catalog show tf.math.bincount",)),
    Session("catalog-diff", ("tfdet catalog diff 2.6 2.7 --device gpu",)),
    Session("scan", ("python examples/scan/make_text_model.py text_model.keras",
                     "tfdet scan text_model.keras")),
    Session("compare", ("tfdet compare --workload digits-cnn --a lr=0.1 --b lr=0.02 --epochs 3 --fixed "
                        "--max-runs 8 --jobs 2 --out ab.jsonl",)),
    Session("vary", ("tfdet probe --vary threads,xla,batch --ops reduce-sum,matmul,conv2d,mlp-grad --out vary.jsonl",)),
    Session("locate", ("tfdet locate examples/locate/keras_cnn.py --steps 5 -- --embedding",), exit_code=1),
    Session("locate-patched", ("tfdet locate --patch examples/locate/keras_cnn.py --steps 5 -- --embedding",)),
    Session("testing", ("python -m pytest -q -p no:cacheprovider examples/locate/test_steps_reproduce.py",)),
    Session("batch-invariance", ("python -m pytest -q -p no:cacheprovider --tb=short "
                                 "examples/testing/test_batch_invariance.py",), exit_code=1),
    Session("batch-invariance-patch", ("python examples/testing/batch_invariant_patch.py",)),
    Session("probe", ("tfdet probe --ops tf.math.bincount,unsorted-segment-sum --out probe.jsonl "
                      "--report report.html",)),
    Session("diverge", ("tfdet diverge --workload embedding --lr 1.0 --runs 3 --epochs 2 "
                        "--conditions fixed-fixed,random-random --modes baseline,patched --jobs 2 --out emb.jsonl",)),
    Session("diverge-dask", ("tfdet diverge --workload embedding --lr 1.0 --runs 2 --epochs 1 "
                             "--conditions fixed-fixed --modes baseline,patched --executor dask --out dask.jsonl",)),
    Session("catalog-update", ("tfdet catalog update --from reports/measured/*.jsonl",)),
)


def _argv(line):
    words = shlex.split(line)
    if words[0] == "tfdet":
        return [sys.executable, "-m", "tfdet"] + words[1:]
    if words[0] == "python":
        return [sys.executable] + words[1:]
    return words


def _expand(argv, cwd):
    """Shell-style globs, as a user's shell would expand them."""
    import glob

    out = []
    for word in argv:
        matches = sorted(glob.glob(word, root_dir=cwd)) if any(c in word for c in "*?[") else []
        out.extend(matches or [word])
    return out


# TensorFlow's own start-up log lines (absl/glog: I0000 00:00:... port.cc:153] ...) say nothing
# about tfdet and change with every run; the guides leave them out and say so.
_TF_LOG = re.compile(r"^(?:[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |WARNING: All log messages before absl)")


def _clean(text, scratch):
    text = text.replace(scratch + os.sep, "").replace(ROOT + os.sep, "")
    return "\n".join(line.rstrip() for line in text.splitlines() if not _TF_LOG.match(line)).strip("\n")


def run(session, scratch):
    env = dict(os.environ, COLUMNS="88", PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", NO_COLOR="1")
    text, code = [], 0
    for line in session.commands:
        proc = subprocess.run(_expand(_argv(line), scratch), cwd=scratch, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=session.timeout)
        code = proc.returncode
        text.append("$ " + line)
        text.append(_clean(proc.stdout, scratch))
        if code:
            text.append("[exit %d]" % code)
    return "\n".join(text) + "\n", code


def main(argv=None):
    wanted = set(argv if argv is not None else sys.argv[1:])
    unknown = wanted - {s.id for s in SESSIONS}
    if unknown:
        print("sessions: no session called %s" % ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    os.makedirs(OUT, exist_ok=True)
    failed = []
    scratch = tempfile.mkdtemp(prefix="tfdet-docs-")
    try:
        for name in ("examples", "reports"):
            os.symlink(os.path.join(ROOT, name), os.path.join(scratch, name))
        for session in SESSIONS:
            if wanted and session.id not in wanted:
                continue
            print("session %s ..." % session.id, flush=True)
            text, code = run(session, scratch)
            with open(os.path.join(OUT, session.id + ".txt"), "w", encoding="utf-8") as handle:
                handle.write(text)
            if code != session.exit_code:
                failed.append("%s exited %d, the guide expects %d" % (session.id, code, session.exit_code))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in failed:
        print("sessions: " + line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
