"""The scan's note on a distribution strategy: a model trained by several replicas sums its
gradients across them, in an order the catalogue's distributed-reduction entries describe.

Found from the model's strategy (a Keras model built in a strategy's scope), its variables
(mirrored ones know their strategy), the strategy in scope while scanning, or cross-replica
reduction ops in the traced graphs (a function that calls strategy.run). The entry is found
through the catalogue's APIs and raw ops, never named here."""

_SINGLE = ("_DefaultDistributionStrategy", "_DefaultDistributionStrategyV1", "OneDeviceStrategy",
           "OneDeviceStrategyV1")  # one replica: nothing to reduce


def _several(strategy):
    return strategy is not None and type(strategy).__name__ not in _SINGLE


def _strategy_of(target, graphs):
    """The tf.distribute strategy the target trains under, or None."""
    import tensorflow as tf

    if hasattr(target, "trainable_variables") and _several(getattr(target, "distribute_strategy", None)):
        return target.distribute_strategy
    variables = list(getattr(target, "trainable_variables", None) or [])
    for graph in graphs:
        variables.extend(getattr(graph, "variables", None) or [])
    for variable in variables:
        for candidate in (variable, getattr(variable, "value", None)):  # a Keras 3 variable wraps TF's
            strategy = getattr(candidate, "_distribute_strategy", None)
            if _several(strategy):
                return strategy
    if tf.distribute.has_strategy() and _several(tf.distribute.get_strategy()):
        return tf.distribute.get_strategy()
    return None


def _by_api(catalogue, keys):
    """The first distributed-reduction entry with a public API ending in one of `keys`, tried in turn."""
    for key in keys:
        for entry in catalogue:
            if entry.root_cause == "distributed_reduction" and any(api.endswith("." + key) for api in entry.apis):
                return entry
    return None


def _entry_for(strategy, catalogue):
    """(catalogue entry or None, how it reduces): by the cross-device ops class (tf.distribute.NcclAllReduce,
    ...), the collective implementation (CommunicationImplementation.RING, ...), else the strategy's class."""
    ops = getattr(getattr(strategy, "extended", None), "_cross_device_ops", None)
    ops_name = type(ops).__name__ if ops is not None else ""
    implementation = getattr(getattr(getattr(ops, "_options", None), "implementation", None), "value", None)
    how = ops_name + (" (%s)" % implementation.lower() if implementation and implementation != "AUTO" else "")
    keys = ([ops_name] if ops_name else []) + (["CommunicationImplementation." + implementation] if implementation
                                               else []) + [type(strategy).__name__]
    return _by_api(catalogue, keys), how


def _reduction_ops(sites, catalogue):
    """{op type: catalogue entry} of the traced cross-replica reduction ops."""
    found = {}
    for entry in catalogue:
        if entry.root_cause == "distributed_reduction":
            for site in sites:
                if site.op_type in entry.raw_ops:
                    found.setdefault(site.op_type, entry)
    return found


def note(target, graphs, sites, catalogue):
    """One line naming the strategy (or the all-reduce ops) and the catalogue entry, with what
    the result depends on; None when the model trains on one replica."""
    strategy = _strategy_of(target, graphs)
    ops = _reduction_ops(sites, catalogue)
    if strategy is None and not ops:
        return None
    entry = None
    if strategy is not None:
        entry, how = _entry_for(strategy, catalogue)
        replicas = getattr(strategy, "num_replicas_in_sync", None)
        what = "%s with %s replica%s%s" % (type(strategy).__name__, replicas, "" if replicas == 1 else "s",
                                           ", cross-device ops %s" % how if how else "")
        if ops:
            what += "; all-reduce ops in the graph: %s" % ", ".join(sorted(ops))
    else:
        what = "all-reduce ops in the graph (%s): gradients summed across replicas" % ", ".join(sorted(ops))
    if entry is None and ops:
        entry = ops[sorted(ops)[0]]
    if entry is None:
        return "distribution strategy: %s: the catalogue has no entry for how it reduces" % what
    return "distribution strategy: %s: %s (catalogue: %s)" % (
        what, " ".join((entry.condition or entry.title).split()), entry.id)
