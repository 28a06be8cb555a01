"""tfdet: find, measure and fix nondeterminism in TensorFlow.

The public facade; everything here is re-exported from private modules.
"""

from ._version import __version__

__all__ = ["__version__"]
