"""`tfdet diverge`: how much K "identical" trainings disagree, under which
conditions (fixed or random init and batch order) and modes, and at what cost.

    from tfdet.diverge import DivergeConfig, run_diverge      # what `tfdet diverge` runs
    from tfdet.diverge import diverge                         # your own train(init_seed, batch_seed)
    from tfdet.diverge import context                         # inside a --script training

Names load on first use, so the command line's parser (which lists the
workloads and conditions) does not import numpy.
"""

from .._lazy import facade

_LAZY = {
    "CONDITIONS": ".plan", "DEFAULT_MODES": ".plan", "cell_name": ".plan", "WORKLOAD_NAMES": ".workloads",
    "DivergeConfig": ".run", "DivergeError": ".run", "DivergeInputError": ".run", "run_diverge": ".run",
    "diverge": ".run", "context": ".contract", "Context": ".contract",
}
__all__ = sorted(_LAZY)
__getattr__ = facade(__name__, _LAZY, globals())
