"""The corpus's programs: their names and what each documents about itself (EXPECT)."""

import importlib
import os

PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs")
EXPECT_KEYS = ("varies_stock", "varying_ops", "patch_reproduces")


def names():
    return sorted(f[:-3] for f in os.listdir(PROGRAMS_DIR) if f.endswith(".py") and not f.startswith("_"))


def path(name):
    return os.path.join("corpus", "programs", name + ".py")


def load(name):
    """The program's module (importing trains nothing: the contract)."""
    return importlib.import_module("corpus.programs." + name)


def expect(name):
    """The program's EXPECT with defaults: varying_ops a tuple, reason a str."""
    found = dict(load(name).EXPECT)
    missing = [k for k in EXPECT_KEYS if k not in found]
    if missing:
        raise ValueError("corpus/programs/%s.py: EXPECT lacks %s" % (name, ", ".join(missing)))
    found["varying_ops"] = tuple(found["varying_ops"])
    found.setdefault("reason", "")
    found["outcomes"] = dict(found.get("outcomes", {}))  # promise -> words of the tfdet error it gives instead
    return found
