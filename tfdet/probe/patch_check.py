"""Run in the interpreter under test (`python -m tfdet.probe.patch_check`, via
runtime.launch): exits 0 if tfdet.patch() can run there -- the patch
and the catalogue it reads import (PyYAML, jsonschema, ... installed) -- and 1
with the reason on stderr if not. A bare TF environment has only numpy and TF:
the probe's patched mode cannot run in it."""

import sys


def main():
    try:
        import tfdet
        from tfdet import catalog

        if not callable(getattr(tfdet, "patch", None)):
            raise ImportError("this tfdet has no patch()")
        catalog.default_catalogue()
    except Exception as exc:  # whatever stops it: a missing module, a catalogue that does not load
        sys.stderr.write("%s: %s\n" % (type(exc).__name__, exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
