"""Run the command sessions the guides show and keep their real output.

    python docs/_scripts/sessions.py            # every session, two at a time (about 4 minutes on 2 cores)
    python docs/_scripts/sessions.py locate     # some, by id
    python docs/_scripts/sessions.py --jobs 1   # one at a time

Each session runs as a user would type it, in a scratch directory of its own where `examples/`
and `reports/` are the checkout's, and its output goes to docs/_generated/ID.txt, which the
guides include. CI runs this before it builds the site, so a guide's output is always this
tfdet's. A session whose exit code is not the one the guide expects fails the script (exit 1).

Sessions are independent (own scratch directory, own output file), so --jobs of them run at
once, the longest first; a session whose output shows a time measured on this machine (a cost
or step-time ratio) runs `alone`, with no other session beside it. Whatever --jobs, the
outputs are the same files and the failures are listed in the order of SESSIONS.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "docs", "_generated")


@dataclass(frozen=True)
class Session:
    id: str
    commands: tuple  # shell lines as the guide shows them; `tfdet` runs this checkout's tfdet
    exit_code: int = 0  # of the last command
    timeout: int = 900
    # about how long it takes on an idle 2-core machine (the 2026-11 CI run): only the order in
    # which sessions start, longest first, so that two at a time end together
    seconds: int = 5
    # its output shows a time measured here (cost or step-time ratio): nothing runs beside it
    alone: bool = False


SESSIONS = (
    Session("status", ("tfdet status",)),
    Session("catalog-show", ("tfdet catalog show tf.math.bincount",), seconds=1),
    Session("catalog-diff", ("tfdet catalog diff 2.6 2.7 --device gpu",), seconds=1),
    Session("scan", ("python examples/scan/make_text_model.py text_model.keras",
                     "tfdet scan text_model.keras"), seconds=12),
    Session("compare", ("tfdet compare --workload digits-cnn --a lr=0.1 --b lr=0.02 --epochs 3 --fixed "
                        "--max-runs 8 --jobs 2 --out ab.jsonl",), seconds=50),
    Session("vary", ("tfdet probe --vary threads,xla,batch --ops reduce-sum,matmul,conv2d,mlp-grad --out vary.jsonl",),
            seconds=12),
    Session("locate", ("tfdet locate examples/locate/keras_cnn.py --steps 5 -- --embedding",), exit_code=1,
            seconds=69),
    Session("locate-patched", ("tfdet locate --patch examples/locate/keras_cnn.py --steps 5 -- --embedding",),
            seconds=70),
    # "my results differ between my laptop and the server": oneDNN off (TF's default off x86 Linux, as on an
    # ARM laptop) on one side, TF's x86 Linux default (on) on the other
    Session("between-record", ("TF_ENABLE_ONEDNN_OPTS=0 tfdet locate --record laptop.jsonl "
                               "examples/locate/two_settings.py",
                               "tfdet locate --record server.jsonl examples/locate/two_settings.py",
                               "tfdet locate --compare laptop.jsonl server.jsonl"), exit_code=1, seconds=25),
    Session("between-onednn", ("tfdet locate --between TF_ENABLE_ONEDNN_OPTS=0 TF_ENABLE_ONEDNN_OPTS=1 "
                               "examples/locate/two_settings.py",), exit_code=1, seconds=26),
    Session("between-threads", ("tfdet locate --between threads=1 threads=2 examples/locate/two_settings.py",),
            exit_code=1, seconds=25),
    Session("testing", ("python -m pytest -q -p no:cacheprovider examples/locate/test_steps_reproduce.py",),
            seconds=23),
    Session("batch-invariance", ("python -m pytest -q -p no:cacheprovider --tb=short "
                                 "examples/testing/test_batch_invariance.py",), exit_code=1, seconds=8),
    Session("batch-invariance-patch", ("python examples/testing/batch_invariant_patch.py",), seconds=7),
    Session("probe", ("tfdet probe --ops tf.math.bincount,unsorted-segment-sum --out probe.jsonl "
                      "--report report.html",), seconds=27, alone=True),
    Session("diverge", ("tfdet diverge --workload embedding --lr 1.0 --runs 3 --epochs 2 "
                        "--conditions fixed-fixed,random-random --modes baseline,patched --jobs 2 --out emb.jsonl",),
            seconds=40, alone=True),
    Session("diverge-dask", ("tfdet diverge --workload embedding --lr 1.0 --runs 2 --epochs 1 "
                             "--conditions fixed-fixed --modes baseline,patched --executor dask --out dask.jsonl",),
            seconds=28, alone=True),
    Session("catalog-update", ("tfdet catalog update --from reports/measured/*.jsonl",), seconds=1),
)


def _assignments(line):
    """({NAME: VALUE} a shell line starts with, the rest of its words), as a shell reads `A=1 tfdet ...`."""
    words, env = shlex.split(line), {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def _argv(words):
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
        assigned, words = _assignments(line)
        proc = subprocess.run(_expand(_argv(words), scratch), cwd=scratch, env=dict(env, **assigned),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=session.timeout)
        code = proc.returncode
        text.append("$ " + line)
        text.append(_clean(proc.stdout, scratch))
        if code:
            text.append("[exit %d]" % code)
    return "\n".join(text) + "\n", code


def _run_in_scratch(session):
    """(text, exit code) of `session` run in a scratch directory of its own."""
    scratch = tempfile.mkdtemp(prefix="tfdet-docs-%s-" % session.id)
    try:
        for name in ("examples", "reports"):
            os.symlink(os.path.join(ROOT, name), os.path.join(scratch, name))
        return run(session, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _schedule(sessions):
    """The sessions that may run beside others, longest first, then those that run alone."""
    return (sorted((s for s in sessions if not s.alone), key=lambda s: -s.seconds),
            [s for s in sessions if s.alone])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the guides' sessions into docs/_generated/.")
    parser.add_argument("ids", nargs="*", help="the sessions to run (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="sessions at once (default 2; 1: one at a time)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    wanted = set(args.ids)
    unknown = wanted - {s.id for s in SESSIONS}
    if unknown or args.jobs < 1:
        print("sessions: " + ("no session called %s" % ", ".join(sorted(unknown)) if unknown
                              else "--jobs takes 1 or more"), file=sys.stderr)
        return 2
    os.makedirs(OUT, exist_ok=True)
    chosen = [s for s in SESSIONS if not wanted or s.id in wanted]
    codes = {}

    def one(session):
        print("session %s ..." % session.id, flush=True)
        started = time.perf_counter()
        text, code = _run_in_scratch(session)
        with open(os.path.join(OUT, session.id + ".txt"), "w", encoding="utf-8") as handle:
            handle.write(text)
        codes[session.id] = code
        print("session %s: exit %d, %.0f s" % (session.id, code, time.perf_counter() - started), flush=True)

    beside, alone = _schedule(chosen)
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, beside))  # list(): a session's exception is raised here
    for session in alone:
        one(session)
    failed = ["%s exited %d, the guide expects %d" % (s.id, codes[s.id], s.exit_code)
              for s in chosen if codes[s.id] != s.exit_code]
    for line in failed:
        print("sessions: " + line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
