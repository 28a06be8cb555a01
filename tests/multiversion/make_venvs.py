#!/usr/bin/env python3
"""Build the virtual environments used for multi-version TensorFlow checks.

The versions, Pythons and pins are tfdet.matrix.versions (the table `tfdet
matrix` uses); the environments are made the way `tfdet matrix --create-only`
makes them (tfdet.matrix.venvs: idempotent, an environment that already passes
the smoke test is reused). By default the representative versions the
multiversion tests run; --all for every version.

    python tests/multiversion/make_venvs.py                    # representative, into ~/.cache/tfdet/venvs
    python tests/multiversion/make_venvs.py --dir /work/venvs
    python tests/multiversion/make_venvs.py --only tf2.10-py3.10
    python tests/multiversion/make_venvs.py --all
    python tests/multiversion/make_venvs.py --list
"""

import argparse
import os
import sys

# Run as a script from a checkout: import that checkout's tfdet.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tfdet.matrix import venvs  # noqa: E402
from tfdet.matrix.versions import REPRESENTATIVE, VERSIONS, env_name  # noqa: E402


def log(msg):
    print("[make_venvs] " + msg, flush=True)


def main(argv=None):
    names = [env_name(v) for v in VERSIONS]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=None,
                    help="where to put the environments (default: $TFDET_VENVS, else %s)" % venvs.DEFAULT_VENVS)
    ap.add_argument("--only", choices=names, metavar="NAME", help="build only this one: " + ", ".join(names))
    ap.add_argument("--all", action="store_true", help="every version, not only the representative ones")
    ap.add_argument("--list", action="store_true", help="print the pins table and exit")
    args = ap.parse_args(argv)
    chosen = [v for v in VERSIONS if (env_name(v) == args.only if args.only else
                                      args.all or v.tf in REPRESENTATIVE)]
    if args.list:
        for v in chosen:
            print("%-15s python%-5s %s" % (env_name(v), v.python, " ".join(v.requirements)))
        return 0
    base = venvs.venvs_dir(args.dir)
    failed = []
    for version in chosen:
        record = venvs.ensure(version, base, log=log)
        if record["status"] == "failed":
            failed.append(env_name(version))
            log("%s: FAILED at %s:\n%s" % (env_name(version), record["failed_step"], record["error"]))
        else:
            log("%s: %s, tensorflow %s numpy %s (%.0fs)" % (env_name(version), record["status"],
                                                            record["tf_version"], record["numpy_version"],
                                                            record["seconds"]))
    log("done: %s%s" % (base, "; failed: " + ", ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
