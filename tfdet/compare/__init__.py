"""`tfdet compare`: is setup A really better than setup B? Paired trainings
that randomise the sources asked for, P(A>B) with a bootstrap interval, a
verdict against a threshold, a sequential stopping rule, the A/A noise floor
and each source's share of the variance.

    from tfdet.compare import CompareConfig, run_compare    # what `tfdet compare` runs
    from tfdet.compare import compare                       # two functions of your own
    from tfdet.compare import stats                         # the statistics alone (numpy)
"""

from .._lazy import facade

_LAZY = {"CompareConfig": ".run", "CompareError": ".run", "run_compare": ".run", "compare": ".api"}
__all__ = sorted(_LAZY)
__getattr__ = facade(__name__, _LAZY, globals())
