"""Optional dependencies of conveniences (pandas for DataFrames): imported when
first needed; missing, one clear line naming the extra that installs it."""

import importlib


def optional(module, what, extra):
    """An optional dependency, imported when first needed; missing, one clear line
    naming the extra that installs it (ModuleNotFoundError, so callers may still
    catch ImportError)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModuleNotFoundError("%s needs %s, which is not installed: pip install 'tfdet[%s]'" % (
            what, module, extra), name=module) from None
